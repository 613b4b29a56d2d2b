// @ts-check
/**
 * The HTTP/SSE client of an OpenAI-compatible LLM server (llama.cpp, Ollama /v1, vLLM).
 *
 * Mirrors sphinx_rag/llm/client.py (same request, same failure modes) and
 * sphinx_rag/llm/endpoint.py (normalizeEndpoint), plus what only a browser needs: telling
 * a CORS refusal from a stopped server, and the Stop button (an AbortSignal). No DOM access.
 *
 * Nothing is sent to a host other than the endpoint's: no request follows a redirect
 * (`redirect: "manual"`); a 3xx answer is the error kind "redirect". A browser hides
 * where an opaque redirect points; Node and other runtimes show the Location, and the
 * message names its host. An answer longer than `maxChars` ends with the kind "limit".
 *
 * @module llm
 */

import { ANSWER_RESERVE_TOKENS } from './prompt.js';

/**
 * @typedef {import('./prompt.js').Message} Message
 * @typedef {'unreachable'|'cors'|'csp'|'http'|'incomplete'|'timeout'|'aborted'|'invalid'|'redirect'|'limit'|
 *   'model'|'download'|'declined'} LLMErrorKind  model: an in-browser model failed; download: its file
 *   was refused; declined: the reader did not agree to download it
 */

// -- endpoint and errors ------------------------------------------------------------------

/**
 * The API base URL ending in /v1 (or another /vN), without trailing slash; accepts a base
 * URL with or without /v1, a pasted .../chat/completions, and a missing scheme.
 * @param {string} endpoint
 */
export function normalizeEndpoint(endpoint) {
  let url = (endpoint || '').trim();
  if (!url) throw new Error('the LLM endpoint is empty');
  const bad = new Error(`the LLM endpoint must be an http(s) URL like http://127.0.0.1:8080/v1, got ${JSON.stringify(endpoint)}`);
  if (!url.includes('://')) {
    if (/^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)/.test(url)) throw bad; // "javascript:...": not "localhost:8080"
    url = 'http://' + url;
  }
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || !parsed.hostname || /\s/.test(url)) throw bad;
  let path = parsed.pathname.replace(/\/+$/, '');
  for (const suffix of ['/chat/completions', '/completions', '/models']) {
    if (path.endsWith(suffix)) {
      path = path.slice(0, -suffix.length);
      break;
    }
  }
  if (!/\/v\d+$/.test(path)) path += '/v1';
  return `${parsed.protocol}//${parsed.host}${path}`;
}

/** A failure of the LLM step, with a user-facing message and the text received so far. */
export class LLMError extends Error {
  /**
   * @param {LLMErrorKind} kind @param {string} message
   * @param {{partial?: string, status?: number, serverMessage?: string, cause?: unknown}} [extra]
   */
  constructor(kind, message, extra = {}) {
    super(message);
    this.name = 'LLMError';
    /** @type {LLMErrorKind} */
    this.kind = kind;
    this.partial = extra.partial ?? '';
    this.status = extra.status ?? 0;
    this.serverMessage = extra.serverMessage ?? '';
    if (extra.cause !== undefined) this.cause = extra.cause;
  }
}

const START_HINT = 'Is the server running? For example `llama-server -m model.gguf --port 8080` ' +
  '(endpoint http://127.0.0.1:8080/v1) or `ollama serve` (endpoint http://127.0.0.1:11434/v1).';

function siteOrigin() {
  const loc = /** @type {any} */ (globalThis).location;
  return loc && /^https?:$/.test(loc.protocol) ? loc.origin : 'https://your.docs.site';
}

/** How to let the docs site's origin call the server (shown with CORS failures). */
export function corsHint(origin = siteOrigin()) {
  return `To allow this site (${origin}): Ollama: \`OLLAMA_ORIGINS=${origin} ollama serve\`; ` +
    `vLLM: \`vllm serve MODEL --allowed-origins '["${origin}"]'\`; llama.cpp's \`llama-server\` ` +
    'allows any origin by default (no --api-key needed). A page served over https can only call an ' +
    'http:// server on localhost/127.0.0.1.';
}

/** @param {string} text */
function serverMessage(text) {
  const raw = (text || '').trim();
  let data;
  try {
    data = JSON.parse(raw);
  } catch {
    return raw.slice(0, 500);
  }
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    let err = data.error ?? data.detail ?? data.message;
    if (err && typeof err === 'object' && !Array.isArray(err)) err = err.message || JSON.stringify(err);
    if (Array.isArray(err)) err = err.map((e) => (e && typeof e === 'object' && 'msg' in e ? e.msg : String(e))).join('; ');
    if (err) return String(err).slice(0, 500);
  }
  return raw.slice(0, 500);
}

/**
 * @param {unknown} obj @param {'delta'|'message'} key
 * @returns {[string, unknown]} text and finish_reason; throws on other shapes
 */
function contentOf(obj, key) {
  const o = /** @type {any} */ (obj);
  if (!o || typeof o !== 'object' || !Array.isArray(o.choices)) throw new Error('not a chat completion');
  if (!o.choices.length) return ['', null];
  const part = o.choices[0][key];
  const content = part && typeof part === 'object' ? part.content : null;
  return [typeof content === 'string' ? content : '', o.choices[0].finish_reason];
}

/** Incremental Server-Sent Events parser: `data` payloads, one string per event. */
export class SSEParser {
  constructor() {
    this.buffer = '';
    /** @type {string[]} */
    this.data = [];
  }

  /** @param {string} text  the next piece of the stream @returns {string[]} completed events */
  push(text) {
    if (!text.includes('\n')) { // a line still arriving: not split again with each piece
      this.buffer += text;
      return [];
    }
    this.buffer += text;
    const lines = this.buffer.split('\n');
    this.buffer = /** @type {string} */ (lines.pop());
    /** @type {string[]} */
    const out = [];
    for (const raw of lines) this.line(raw.replace(/\r$/, ''), out);
    return out;
  }

  /** @returns {string[]} the events still pending at the end of the stream */
  end() {
    /** @type {string[]} */
    const out = [];
    if (this.buffer) this.line(this.buffer.replace(/\r$/, ''), out);
    this.buffer = '';
    if (this.data.length) out.push(this.data.join('\n'));
    this.data = [];
    return out;
  }

  /** @param {string} line @param {string[]} out */
  line(line, out) {
    if (line.startsWith('data:')) {
      this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    } else if (!line && this.data.length) {
      out.push(this.data.join('\n'));
      this.data = [];
    }
  }
}

const NETWORK_CODES = {
  ECONNREFUSED: 'connection refused', ENOTFOUND: 'unknown host', EAI_AGAIN: 'unknown host',
  EHOSTUNREACH: 'host unreachable', ENETUNREACH: 'network unreachable', ECONNRESET: 'connection reset',
};

/** What to do about a redirect. @param {string} base */
const redirectAdvice = (base) => 'Ask follows no redirect, so nothing was sent there. Set the endpoint to the ' +
  `server's own address if you trust it (\`curl -si ${base}/models\` shows where it points).`;

/**
 * The error for a 3xx answer: its status and target when the runtime shows them (Node), an
 * opaque redirect when it does not (a browser).
 * @param {string} base @param {Response} response @param {object} [extra]
 */
function redirectError(base, response, extra = {}) {
  const location = response.type === 'opaqueredirect' ? '' : (response.headers.get('location') || '');
  let where = 'a redirect to an address the browser does not show';
  if (location) {
    let target = null;
    try {
      target = new URL(location, `${base}/`);
    } catch {
      target = null;
    }
    where = target && target.host !== new URL(base).host ? `a redirect to another host, ${target.host} (${target.href})`
      : `a redirect to ${target ? target.href : JSON.stringify(location)}`;
  }
  const status = response.status ? `HTTP ${response.status} ${response.statusText}`.trimEnd() : 'HTTP 3xx';
  return new LLMError('redirect', `The LLM server at ${base} answered ${status}, ${where}: ${redirectAdvice(base)}`,
    { status: response.status, ...extra });
}

/** @param {Response} response */
const isRedirect = (response) => response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);

/**
 * POST a chat request to `{base}/chat/completions` and nowhere else: a redirect is refused
 * with its target named (the question and the passages go to the endpoint or nowhere), a
 * failed connection explained (connectionError), a stop or timeout reported by `stopped`.
 * @param {string} base @param {Record<string, unknown>} payload @param {string} accept
 * @param {AbortSignal} signal @param {() => Error} stopped @param {typeof fetch} fetchFn
 * @returns {Promise<Response>}
 */
async function postChat(base, payload, accept, signal, stopped, fetchFn) {
  let response;
  try {
    response = await fetchFn(`${base}/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: accept },
      body: JSON.stringify(payload),
      redirect: 'manual',
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw stopped();
    throw await connectionError(base, err, fetchFn);
  }
  if (isRedirect(response)) {
    response.body?.cancel().catch(() => {});
    throw redirectError(base, response);
  }
  return response;
}

/**
 * Classify a fetch() rejection. Node reports the cause; a browser only says "TypeError:
 * Failed to fetch" for a stopped server, a CORS refusal and a redirect without CORS headers.
 * A probe tells some of them apart: `GET /models` in cors mode, following no redirect (a
 * `no-cors` probe would see more, but the Fetch standard only allows it to follow
 * redirects, to any host). An answer means the server runs and allows this site for simple
 * requests: the POST was refused (CORS); an opaque redirect means it redirects; no answer
 * leaves all three possible, and the message says so.
 * @param {string} base @param {unknown} err @param {typeof fetch} fetchFn
 */
async function connectionError(base, err, fetchFn) {
  const e = /** @type {any} */ (err);
  const code = e?.cause?.code ?? e?.code;
  if (code && code in NETWORK_CODES) {
    return new LLMError('unreachable', `Could not connect to the LLM server at ${base} ` +
      `(${NETWORK_CODES[/** @type {keyof typeof NETWORK_CODES} */ (code)]}). ${START_HINT}`, { cause: err });
  }
  /** @type {Response | null} */
  let probe = null;
  if (!code) {
    const stop = new AbortController();
    const t = setTimeout(() => stop.abort(), 5000);
    try {
      probe = await fetchFn(`${base}/models`, { mode: 'cors', redirect: 'manual', signal: stop.signal });
      probe.body?.cancel().catch(() => {});
    } catch {
      probe = null;
    } finally {
      clearTimeout(t);
    }
  }
  if (probe && isRedirect(probe)) return redirectError(base, probe, { cause: err });
  if (probe) {
    return new LLMError('cors', `The LLM server at ${base} is running but does not allow requests ` +
      `from this site (CORS). ${corsHint()}`, { cause: err });
  }
  return new LLMError('unreachable', `Could not reach the LLM server at ${base}. ${START_HINT} ` +
    'If it is running, it refuses requests from this site (CORS) or redirects them elsewhere (Ask follows no ' +
    `redirect): the browser does not tell which. ${corsHint()}`, { cause: err });
}

// -- streaming ------------------------------------------------------------------------------------

/** The default answer cap (Python's LLM_DEFAULTS["max_answer_chars"]). */
export const MAX_ANSWER_CHARS = 20000;

/** Milliseconds of stream reading after which the page gets the main thread back. */
const BUSY_MS = 8;

/**
 * A task boundary: input, rendering and other tasks run before the stream goes on. Awaiting
 * reader.read() does not give one when data is already buffered (it resolves as a
 * microtask), so a fast server would otherwise hold the page until its answer ends.
 * @returns {Promise<void>}
 */
function yieldToPage() {
  const scheduler = /** @type {any} */ (globalThis).scheduler;
  if (typeof scheduler?.yield === 'function') return scheduler.yield();
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Characters as Python counts them (code points). @param {string} text */
function codePoints(text) {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The first `n` code points of `text`. @param {string} text @param {number} n */
function firstCodePoints(text, n) {
  let i = 0;
  for (let k = 0; k < n && i < text.length; k++) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return text.slice(0, i);
}

/**
 * POST `{endpoint}/chat/completions` with `stream: true` and resolve with the whole answer.
 *
 * `onToken` gets each piece of text as it arrives. `timeoutMs` is an inactivity limit
 * (waiting for the server to respond, and between two pieces of the stream), like the Python
 * `timeout`. Rejects with an LLMError of kind: unreachable | cors | http | incomplete |
 * timeout | aborted (the `signal` fired) | invalid | redirect (a 3xx answer: not followed) |
 * limit (the answer reached `maxChars` characters: the request is aborted, `error.partial`
 * holds them); `error.partial` holds the text received.
 * @param {{endpoint: string, model: string, messages: Message[], temperature?: number,
 *          timeoutMs?: number, maxChars?: number, signal?: AbortSignal,
 *          onToken?: (text: string) => void, fetch?: typeof fetch}} options
 * @returns {Promise<string>}
 */
export async function streamChat(options) {
  const { model, messages, temperature = 0.1, timeoutMs = 60000, maxChars = MAX_ANSWER_CHARS, signal,
    onToken = () => {} } = options;
  const base = normalizeEndpoint(options.endpoint);
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const controller = new AbortController();
  let partial = '';
  let chars = 0; // of partial, in code points (Python's len)
  let timedOut = false;
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let timer;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { timedOut = true; controller.abort(); }, timeoutMs);
  };
  const onAbort = () => controller.abort();
  /** @param {LLMErrorKind} kind @param {string} message @param {object} [extra] */
  const fail = (kind, message, extra = {}) => new LLMError(kind, message, { partial, ...extra });
  const stopped = () => (timedOut
    ? fail('timeout', partial
      ? `The LLM server at ${base} sent nothing for ${timeoutMs / 1000} s (the timeout setting; ` +
        'raise it for slow models); the answer is incomplete.'
      : `The LLM server at ${base} did not answer within ${timeoutMs / 1000} s (the timeout ` +
        'setting; raise it for slow models).')
    : fail('aborted', 'Stopped: the answer is incomplete.'));
  /** @param {string} text */
  const emit = (text) => {
    if (!text) return;
    const n = codePoints(text);
    if (chars + n > maxChars) {
      const head = firstCodePoints(text, maxChars - chars);
      if (head) {
        partial += head;
        onToken(head);
      }
      controller.abort(); // the rest is not read
      throw fail('limit', `The answer was cut at ${maxChars.toLocaleString('en-US')} characters (the ` +
        'max_answer_chars setting): the server did not end it.');
    }
    chars += n;
    partial += text;
    onToken(text);
  };
  /** Handle one SSE payload; true when the answer is complete. @param {string} payload */
  const handle = (payload) => {
    if (payload.trim() === '[DONE]') return true;
    let chunk;
    try {
      chunk = JSON.parse(payload);
    } catch {
      throw fail('invalid', `The LLM server at ${base} sent invalid JSON in its stream; the answer is incomplete.`);
    }
    if (chunk && typeof chunk === 'object' && chunk.error) {
      const msg = serverMessage(payload);
      throw fail('http', `The LLM server at ${base} reported an error while answering: ${msg}`, { serverMessage: msg });
    }
    let text, reason;
    try {
      [text, reason] = contentOf(chunk, 'delta');
    } catch {
      throw fail('invalid', `The LLM server at ${base} sent a stream event that is not a ` +
        'chat.completion.chunk; the answer is incomplete.');
    }
    emit(text);
    return Boolean(reason);
  };

  if (signal?.aborted) throw fail('aborted', 'Stopped: the answer is incomplete.');
  signal?.addEventListener('abort', onAbort, { once: true });
  arm();
  try {
    // max_tokens: the answer room fitPassages reserved; small models may never stop otherwise
    const response = await postChat(base, { model, messages, temperature, stream: true, max_tokens: ANSWER_RESERVE_TOKENS },
      'text/event-stream, application/json', controller.signal, stopped, fetchFn);
    try {
      if (!response.ok) {
        const msg = serverMessage(await response.text());
        let text = `The LLM server at ${base} answered HTTP ${response.status} ${response.statusText}`.trimEnd();
        text += msg ? `: ${msg}` : '.';
        if (response.status === 404) {
          text += ' Check that the endpoint is the OpenAI-compatible API base (ending in /v1) and that ' +
            `the server has a model named ${JSON.stringify(model)}.`;
        } else if (response.status === 401 || response.status === 403) {
          text += ' sphinx-rag sends no API key: use a local server without authentication.';
        }
        throw fail('http', text, { status: response.status, serverMessage: msg });
      }
      const parser = new SSEParser();
      let finished = false;
      const ctype = (response.headers.get('content-type') || '').toLowerCase();
      if (!ctype.includes('text/event-stream') || !response.body) {
        const raw = await response.text();
        if (!raw.trimStart().startsWith('data:')) { // a server that ignores "stream": one JSON body
          let obj;
          try {
            obj = JSON.parse(raw);
          } catch {
            throw fail('invalid', `The LLM server at ${base} sent a response that is not a chat completion (invalid JSON).`);
          }
          if (obj && typeof obj === 'object' && obj.error) {
            const msg = serverMessage(raw);
            throw fail('http', `The LLM server at ${base} reported an error: ${msg}`, { status: response.status, serverMessage: msg });
          }
          try {
            emit(contentOf(obj, 'message')[0]);
          } catch {
            throw fail('invalid', `The LLM server at ${base} sent a response that is not a chat completion.`);
          }
          return partial;
        }
        for (const payload of [...parser.push(raw), ...parser.end()]) {
          if (handle(payload)) { finished = true; break; }
        }
      } else {
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        let busySince = performance.now();
        read: for (;;) {
          if (performance.now() - busySince > BUSY_MS) {
            await yieldToPage();
            busySince = performance.now();
            if (controller.signal.aborted) throw stopped();
          }
          const { done, value } = await reader.read();
          arm();
          const events = done ? [...parser.push(decoder.decode()), ...parser.end()]
            : parser.push(decoder.decode(value, { stream: true }));
          for (const payload of events) {
            if (handle(payload)) finished = true;
            if (payload.trim() === '[DONE]') break read;
          }
          if (done) break;
        }
        reader.cancel().catch(() => {});
      }
      if (!finished) {
        throw fail('incomplete', `The LLM server at ${base} closed the connection before the end of ` +
          'the answer: the answer is incomplete.');
      }
      return partial;
    } catch (err) {
      if (err instanceof LLMError) throw err;
      if (controller.signal.aborted) throw stopped();
      throw fail('incomplete', `The connection to the LLM server at ${base} broke before the end of ` +
        'the answer: the answer is incomplete.', { cause: err });
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

// -- short completions: Ask's extra calls ----------------------------------------------------------

/** A short completion's body at most (bytes); more is a broken or hostile server. */
export const MAX_COMPLETION_BYTES = 1_000_000;

/**
 * The body of a response as text, at most `limit` bytes (then null).
 * @param {Response} response @param {number} limit
 * @returns {Promise<string | null>}
 */
async function cappedText(response, limit) {
  if (!response.body) return response.text();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    bytes += value.byteLength;
    if (bytes > limit) {
      reader.cancel().catch(() => {});
      return null;
    }
    text += decoder.decode(value, { stream: true });
  }
}

/**
 * POST `{endpoint}/chat/completions` without streaming, for a short reply (Ask's rewrite
 * and judge calls), as Python's complete_chat: resolves with the reply and the server's
 * `usage` object (null without one). A server that streams anyway is read as a stream.
 * Rejects with the LLMError kinds of streamChat (`timeoutMs`: the whole reply's time).
 * @param {{endpoint: string, model: string, messages: Message[], maxTokens: number,
 *          temperature?: number, timeoutMs?: number, signal?: AbortSignal, fetch?: typeof fetch}} options
 * @returns {Promise<{text: string, usage: Record<string, unknown> | null}>}
 */
export async function completeChat(options) {
  const { model, messages, maxTokens, temperature = 0, timeoutMs = 60000, signal } = options;
  const base = normalizeEndpoint(options.endpoint);
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; controller.abort(); }, timeoutMs);
  const onAbort = () => controller.abort();
  const stopped = () => (timedOut
    ? new LLMError('timeout', `The LLM server at ${base} did not answer within ${timeoutMs / 1000} s (the timeout ` +
      'setting; raise it for slow models).')
    : new LLMError('aborted', 'Stopped.'));
  /** @param {unknown} obj */
  const usageOf = (obj) => {
    const usage = obj && typeof obj === 'object' ? /** @type {any} */ (obj).usage : null;
    return usage && typeof usage === 'object' && !Array.isArray(usage) ? usage : null;
  };
  if (signal?.aborted) throw stopped();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await postChat(base, { model, messages, temperature, stream: false, max_tokens: maxTokens },
      'application/json', controller.signal, stopped, fetchFn);
    try {
      const raw = await cappedText(response, MAX_COMPLETION_BYTES);
      if (raw === null) {
        throw new LLMError('invalid', `The LLM server at ${base} sent more than ` +
          `${MAX_COMPLETION_BYTES.toLocaleString('en-US')} bytes for a short completion.`);
      }
      if (!response.ok) {
        const msg = serverMessage(raw);
        let text = `The LLM server at ${base} answered HTTP ${response.status} ${response.statusText}`.trimEnd();
        text += msg ? `: ${msg}` : '.';
        throw new LLMError('http', text, { status: response.status, serverMessage: msg });
      }
      if (raw.trimStart().startsWith('data:')) { // streamed anyway
        const parser = new SSEParser();
        let text = '';
        /** @type {Record<string, unknown> | null} */
        let usage = null;
        for (const payload of [...parser.push(raw), ...parser.end()]) {
          if (payload.trim() === '[DONE]') break;
          let chunk;
          try {
            chunk = JSON.parse(payload);
            text += contentOf(chunk, 'delta')[0];
          } catch {
            throw new LLMError('invalid', `The LLM server at ${base} sent invalid JSON in its stream.`);
          }
          usage = usageOf(chunk) ?? usage;
        }
        return { text, usage };
      }
      let obj;
      try {
        obj = JSON.parse(raw);
      } catch {
        throw new LLMError('invalid', `The LLM server at ${base} sent a response that is not a chat completion (invalid JSON).`);
      }
      if (obj && typeof obj === 'object' && obj.error) {
        const msg = serverMessage(raw);
        throw new LLMError('http', `The LLM server at ${base} reported an error: ${msg}`, { status: response.status, serverMessage: msg });
      }
      try {
        return { text: contentOf(obj, 'message')[0], usage: usageOf(obj) };
      } catch {
        throw new LLMError('invalid', `The LLM server at ${base} sent a response that is not a chat completion.`);
      }
    } catch (err) {
      if (err instanceof LLMError) throw err;
      if (controller.signal.aborted) throw stopped();
      throw new LLMError('incomplete', `The connection to the LLM server at ${base} broke before the end of the reply.`,
        { cause: err });
    }
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
