// @ts-check
/**
 * Optional answers from a local OpenAI-compatible LLM server (llama.cpp, Ollama /v1, vLLM).
 *
 * Mirrors sphinx_rag/llm.py: the same prompt template rules (the template itself comes
 * from the site's settings, made by `browser_settings()` in Python), the same passage
 * numbering "[n] Title (URL)\ntext", the same token estimate (ceil(code points / 4)),
 * the same fitting (drop lowest-ranked first, cut the top passage only after a whole
 * sentence) and the same failure modes. No DOM access except the `doc` passed to
 * renderMarkdown, which builds nodes with createElement/createTextNode only.
 *
 * @module llm
 */

/**
 * The default prompt template, the same text as Python's `DEFAULT_PROMPT` (checked by
 * js/test/llm.test.js): used when the site configures no LLM and a reader sets their own.
 */
export const DEFAULT_PROMPT = `You are an expert of the {project} project. You answer questions about {project} \
using only the numbered excerpts of its documentation given below.

Rules:
- Answer only from the provided content; do not use other knowledge and do not invent \
APIs, parameters or values.
- Be succinct.
- Use backticks for code names: classes, functions, methods, parameters, values and \
anything containing underscores.
- Cite the excerpts that support each statement as [n], e.g. [1] or [2][3].
- If the content does not contain the answer, say so plainly instead of guessing.
---
Documentation excerpts:

{passages}

Question: {question}`;

/** Python's `DEFAULTS` (timeout in seconds), without endpoint and model. */
export const DEFAULTS = Object.freeze({ max_context_tokens: 4096, temperature: 0.1, timeout: 60, prompt: DEFAULT_PROMPT });

export const ANSWER_RESERVE_TOKENS = 512;
export const MESSAGE_OVERHEAD_TOKENS = 16;
export const PLACEHOLDERS = ['project', 'passages', 'question'];
const SEPARATOR = '---';
const ABBREVIATIONS = ['e.g.', 'i.e.', 'cf.', 'vs.', 'resp.'];

/**
 * @typedef {{title: string, url: string, text: string}} Passage  a search result (extra fields kept)
 * @typedef {{role: 'system'|'user'|'assistant', content: string}} Message
 * @typedef {{endpoint: string, model: string, max_context_tokens: number, temperature: number,
 *            timeout: number, prompt: string, project: string}} LLMSettings
 *   what Python's `browser_settings()` emits (timeout in seconds)
 * @typedef {'unreachable'|'cors'|'http'|'incomplete'|'timeout'|'aborted'|'invalid'} LLMErrorKind
 */

// -- prompt ---------------------------------------------------------------------------

/**
 * Approximate token count: ceil(Unicode code points / 4), like Python's len(text) / 4.
 * @param {string} text
 */
export function estimateTokens(text) {
  let n = 0;
  for (const _ of text) n++; // eslint-disable-line no-unused-vars
  return Math.ceil(n / 4);
}

/**
 * An error message for a bad template (same rules as Python's validate_prompt), or null.
 * @param {unknown} prompt
 * @returns {string|null}
 */
export function validatePrompt(prompt) {
  if (typeof prompt !== 'string' || !prompt.trim()) return 'must be a non-empty string';
  const fields = new Set();
  for (const m of prompt.matchAll(/\{\{|\}\}|\{([^{}]*)\}|[{}]/g)) {
    if (m[0] === '{{' || m[0] === '}}') continue;
    if (m[1] === undefined) return "is not a valid template (single brace); write literal braces as '{{' and '}}'";
    if (!PLACEHOLDERS.includes(m[1])) {
      return `has an unknown placeholder {${m[1]}}; allowed: {project}, {passages}, {question} ` +
        "(write literal braces as '{{' and '}}')";
    }
    fields.add(m[1]);
  }
  for (const name of ['question', 'passages']) {
    if (!fields.has(name)) return `must contain the placeholder {${name}}`;
  }
  return null;
}

/**
 * Python's str.format for a validated template.
 * @param {string} template @param {Record<string, string>} values
 */
function fill(template, values) {
  return template.replace(/\{\{|\}\}|\{(\w+)\}/g, (m, name) => (name ? values[name] : m[0]));
}

/** @param {number} n @param {Passage} p */
function formatPassage(n, p) {
  return `[${n}] ${p.title} (${p.url})\n${p.text.trim()}`;
}

/**
 * "[n] Title (URL)\ntext" numbered from 1, separated by a blank line.
 * @param {Passage[]} passages
 */
export function formatPassages(passages) {
  return passages.map((p, i) => formatPassage(i + 1, p)).join('\n\n');
}

/**
 * Offsets just after each sentence (or line) end of `text`: ".", "!" or "?" followed by
 * whitespace (not after e.g./i.e./cf./vs./resp.), or a line break. Same as Python.
 * @param {string} text
 * @returns {number[]}
 */
export function sentenceEnds(text) {
  const ends = new Set();
  for (let i = 0; i < text.length - 1; i++) {
    const ch = text[i];
    if (ch === '\n') {
      ends.add(i);
    } else if ((ch === '.' || ch === '!' || ch === '?') && /\s/.test(text[i + 1])) {
      const start = Math.max(text.lastIndexOf(' ', i - 1), text.lastIndexOf('\n', i - 1)) + 1;
      if (i === 0 || !ABBREVIATIONS.includes(text.slice(start, i + 1).toLowerCase())) ends.add(i + 1);
    }
  }
  return [...ends].filter((e) => text.slice(0, e).trim() !== '').sort((a, b) => a - b);
}

/**
 * The passages that fit in `maxContextTokens - reserveTokens` estimated tokens: kept in
 * rank order, lowest-ranked dropped first; if even the first does not fit, its text is cut
 * after the last whole sentence that fits; if not even one sentence fits, none.
 * @template {Passage} P
 * @param {P[]} passages @param {number} maxContextTokens @param {number} reserveTokens
 * @returns {P[]}
 */
export function fitPassages(passages, maxContextTokens, reserveTokens) {
  const budget = maxContextTokens - reserveTokens;
  /** @type {P[]} */
  const kept = [];
  for (const p of passages) {
    if (estimateTokens(formatPassages([...kept, p])) > budget) break;
    kept.push(p);
  }
  if (kept.length || !passages.length) return kept;
  const top = passages[0];
  const text = top.text.trim();
  const ends = sentenceEnds(text);
  for (let j = ends.length - 1; j >= 0; j--) {
    const cut = { ...top, text: text.slice(0, ends[j]).trimEnd() };
    if (estimateTokens(formatPassages([cut])) <= budget) return [cut];
  }
  return [];
}

/**
 * @param {string} prompt @param {Record<string, string>} values
 * @returns {Message[]}
 */
function render(prompt, values) {
  const lines = fill(prompt, values).split('\n');
  const at = lines.indexOf(SEPARATOR);
  if (at >= 0) {
    return [
      { role: 'system', content: lines.slice(0, at).join('\n').trim() },
      { role: 'user', content: lines.slice(at + 1).join('\n').trim() },
    ];
  }
  return [{ role: 'user', content: lines.join('\n').trim() }];
}

/**
 * Chat messages asking `question` about the passages that fit in the context window
 * (same as Python's build_messages). `passages` of the result are those sent, in citation
 * order: "[n]" refers to passages[n - 1].
 * @template {Passage} P
 * @param {string} question @param {P[]} passages
 * @param {Pick<LLMSettings, 'prompt'|'project'|'max_context_tokens'>} settings
 * @returns {{messages: Message[], passages: P[]}}
 */
export function buildMessages(question, passages, settings) {
  const { prompt, project = '', max_context_tokens: maxTokens = 4096 } = settings;
  const error = validatePrompt(prompt);
  if (error) throw new Error(`[sphinx-rag] the LLM prompt ${error}`);
  const empty = render(prompt, { project, passages: '', question });
  const reserve = empty.reduce((s, m) => s + estimateTokens(m.content), 0) +
    ANSWER_RESERVE_TOKENS + MESSAGE_OVERHEAD_TOKENS;
  const kept = fitPassages(passages, maxTokens, reserve);
  const text = kept.length ? formatPassages(kept) : '(no documentation excerpt was found)';
  return { messages: render(prompt, { project, passages: text, question }), passages: kept };
}

// -- endpoint and errors ------------------------------------------------------------------

/**
 * The API base URL ending in /v1 (or another /vN), without trailing slash; accepts a base
 * URL with or without /v1, a pasted .../chat/completions, and a missing scheme.
 * @param {string} endpoint
 */
export function normalizeEndpoint(endpoint) {
  let url = (endpoint || '').trim();
  if (!url) throw new Error('the LLM endpoint is empty');
  if (!url.includes('://')) url = 'http://' + url;
  let parsed;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || !parsed.hostname) {
    throw new Error(`the LLM endpoint must be an http(s) URL like http://127.0.0.1:8080/v1, got ${JSON.stringify(endpoint)}`);
  }
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

/**
 * Classify a fetch() rejection. Node reports the cause; browsers only say "TypeError:
 * Failed to fetch" for both a stopped server and a CORS refusal, so a `no-cors` probe (whose
 * response is opaque and not subject to CORS) tells them apart: it succeeds if the server
 * answers at all.
 * @param {string} base @param {unknown} err @param {typeof fetch} fetchFn
 */
async function connectionError(base, err, fetchFn) {
  const e = /** @type {any} */ (err);
  const code = e?.cause?.code ?? e?.code;
  if (code && code in NETWORK_CODES) {
    return new LLMError('unreachable', `Could not connect to the LLM server at ${base} ` +
      `(${NETWORK_CODES[/** @type {keyof typeof NETWORK_CODES} */ (code)]}). ${START_HINT}`, { cause: err });
  }
  let reachable = false;
  if (!code) {
    try {
      const probe = new AbortController();
      const t = setTimeout(() => probe.abort(), 5000);
      try {
        await fetchFn(`${base}/models`, { mode: 'no-cors', signal: probe.signal });
        reachable = true;
      } finally {
        clearTimeout(t);
      }
    } catch {
      reachable = false;
    }
  }
  if (reachable) {
    return new LLMError('cors', `The LLM server at ${base} is running but does not allow requests ` +
      `from this site (CORS). ${corsHint()}`, { cause: err });
  }
  return new LLMError('unreachable', `Could not reach the LLM server at ${base}. ${START_HINT} ` +
    `If it is running, it may refuse requests from this site (CORS). ${corsHint()}`, { cause: err });
}

// -- streaming ------------------------------------------------------------------------------------

/**
 * POST `{endpoint}/chat/completions` with `stream: true` and resolve with the whole answer.
 *
 * `onToken` gets each piece of text as it arrives. `timeoutMs` is an inactivity limit
 * (waiting for the server to respond, and between two pieces of the stream), like the Python
 * `timeout`. Rejects with an LLMError of kind: unreachable | cors | http | incomplete |
 * timeout | aborted (the `signal` fired) | invalid; `error.partial` holds the text received.
 * @param {{endpoint: string, model: string, messages: Message[], temperature?: number,
 *          timeoutMs?: number, signal?: AbortSignal, onToken?: (text: string) => void,
 *          fetch?: typeof fetch}} options
 * @returns {Promise<string>}
 */
export async function streamChat(options) {
  const { model, messages, temperature = 0.1, timeoutMs = 60000, signal, onToken = () => {} } = options;
  const base = normalizeEndpoint(options.endpoint);
  const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
  const controller = new AbortController();
  let partial = '';
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
    if (text) {
      partial += text;
      onToken(text);
    }
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
    /** @type {Response} */
    let response;
    try {
      response = await fetchFn(`${base}/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' },
        // max_tokens: the answer room fitPassages reserved; small models may never stop otherwise
        body: JSON.stringify({ model, messages, temperature, stream: true, max_tokens: ANSWER_RESERVE_TOKENS }),
        signal: controller.signal,
      });
    } catch (err) {
      if (controller.signal.aborted) throw stopped();
      throw await connectionError(base, err, fetchFn);
    }
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
        read: for (;;) {
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

// -- safe Markdown ----------------------------------------------------------------------------------

/**
 * The URL if it is http(s) or relative, else null (javascript:, data:, vbscript:, ...).
 * @param {unknown} url
 * @returns {string|null}
 */
export function safeUrl(url) {
  if (typeof url !== 'string') return null;
  const u = url.trim();
  if (!u || /[\u0000-\u0020\u007f-\u009f\\]/.test(u)) return null;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(u);
  if (scheme) return /^https?$/i.test(scheme[1]) ? u : null;
  return u;
}

/**
 * @typedef {{citationUrl?: (n: number) => (string|null|undefined), doc: Document}} RenderOptions
 */

/**
 * Render an LLM answer as DOM nodes, safely: only createElement/createTextNode/setAttribute
 * (never innerHTML), so HTML in the answer shows as text. Supports paragraphs, headings (as
 * bold paragraphs), **bold**, *em*, `code`, fenced code blocks, bullet and numbered lists,
 * [text](url) links with http(s) or relative URLs only (others render as their text), and
 * [n] / [1, 2] citations linked to citationUrl(n) (class "sphinx-rag-cite").
 * @param {string} text @param {RenderOptions} options
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text, options) {
  const { doc } = options;
  const citationUrl = options.citationUrl ?? (() => null);
  const frag = doc.createDocumentFragment();
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+.#-]*)[^`]*$/;
  const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;

  /** @param {string} tag @param {Record<string, string>} [attrs] */
  const el = (tag, attrs = {}) => {
    const node = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };

  /**
   * Inline Markdown into `parent`.
   * @param {Node} parent @param {string} s @param {boolean} inLink
   */
  const inline = (parent, s, inLink = false) => {
    let buf = '';
    const flush = () => {
      if (buf) parent.appendChild(doc.createTextNode(buf));
      buf = '';
    };
    let i = 0;
    while (i < s.length) {
      const ch = s[i];
      if (ch === '\\' && i + 1 < s.length && /[!-/:-@[-`{-~]/.test(s[i + 1])) {
        buf += s[i + 1];
        i += 2;
        continue;
      }
      if (ch === '\n') {
        flush();
        parent.appendChild(el('br'));
        i++;
        continue;
      }
      if (ch === '`') {
        let run = '`';
        while (s[i + run.length] === '`') run += '`';
        const close = s.indexOf(run, i + run.length);
        if (close > 0) {
          flush();
          const code = el('code');
          let content = s.slice(i + run.length, close);
          if (/^ .*\S.* $/.test(content)) content = content.slice(1, -1);
          code.appendChild(doc.createTextNode(content));
          parent.appendChild(code);
          i = close + run.length;
          continue;
        }
        buf += run;
        i += run.length;
        continue;
      }
      if (ch === '*' && s[i + 1] === '*') {
        const close = s.indexOf('**', i + 2);
        if (close > i + 2 && !/\s/.test(s[i + 2]) && !/\s/.test(s[close - 1])) {
          flush();
          const strong = el('strong');
          inline(strong, s.slice(i + 2, close), inLink);
          parent.appendChild(strong);
          i = close + 2;
          continue;
        }
        buf += '**';
        i += 2;
        continue;
      }
      if (ch === '*') {
        const close = s.indexOf('*', i + 1);
        if (close > i + 1 && s[close + 1] !== '*' && !/\s/.test(s[i + 1]) && !/\s/.test(s[close - 1])) {
          flush();
          const em = el('em');
          inline(em, s.slice(i + 1, close), inLink);
          parent.appendChild(em);
          i = close + 1;
          continue;
        }
        buf += ch;
        i++;
        continue;
      }
      if (ch === '[') {
        const rest = s.slice(i);
        const link = inLink ? null : /^\[([^\[\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))*)(?:\s+"[^"]*")?\)/.exec(rest);
        if (link) {
          flush();
          const href = safeUrl(link[2]);
          if (href) {
            const a = el('a', { href, rel: 'noopener noreferrer' });
            inline(a, link[1], true);
            parent.appendChild(a);
          } else {
            inline(parent, link[1], true); // unsafe URL: the text only
          }
          i += link[0].length;
          continue;
        }
        const cite = /^\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/.exec(rest);
        if (cite) {
          const numbers = cite[1].split(',').map((x) => Number(x.trim()));
          const urls = numbers.map((n) => safeUrl(citationUrl(n)));
          if (!inLink && urls.every((u) => u)) {
            flush();
            numbers.forEach((n, k) => {
              const a = el('a', { href: /** @type {string} */ (urls[k]), class: 'sphinx-rag-cite' });
              a.appendChild(doc.createTextNode(`[${n}]`));
              parent.appendChild(a);
            });
          } else {
            buf += cite[0];
          }
          i += cite[0].length;
          continue;
        }
      }
      buf += ch;
      i++;
    }
    flush();
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      while (i < lines.length && !(lines[i].trim().startsWith(marker[0].repeat(marker.length)) &&
        /^ {0,3}(`{3,}|~{3,})\s*$/.test(lines[i]))) {
        body.push(lines[i]);
        i++;
      }
      i++; // the closing fence (or the end)
      const pre = el('pre');
      const code = el('code', fence[2] ? { class: `language-${fence[2]}` } : {});
      code.appendChild(doc.createTextNode(body.join('\n')));
      pre.appendChild(code);
      frag.appendChild(pre);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const p = el('p');
      const strong = el('strong');
      inline(strong, heading[2]);
      p.appendChild(strong);
      frag.appendChild(p);
      i++;
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]);
      const list = el(ordered ? 'ol' : 'ul');
      if (ordered && parseInt(item[2], 10) !== 1) list.setAttribute('start', String(parseInt(item[2], 10)));
      while (i < lines.length) {
        const m = ITEM.exec(lines[i]);
        if (!m || /\d/.test(m[2]) !== ordered) break;
        const parts = [m[3]];
        i++;
        while (i < lines.length && lines[i].trim() && !ITEM.exec(lines[i]) && !FENCE.exec(lines[i]) &&
          /^\s/.test(lines[i])) {
          parts.push(lines[i].trim());
          i++;
        }
        const li = el('li');
        inline(li, parts.join(' '));
        list.appendChild(li);
        while (i < lines.length && !lines[i].trim() && i + 1 < lines.length && ITEM.exec(lines[i + 1]) &&
          /\d/.test(/** @type {RegExpExecArray} */ (ITEM.exec(lines[i + 1]))[2]) === ordered) i++; // loose list
      }
      frag.appendChild(list);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !FENCE.exec(lines[i]) && !HEADING.exec(lines[i]) &&
      !(para.length && ITEM.exec(lines[i]))) {
      para.push(lines[i].trim());
      i++;
    }
    const p = el('p');
    inline(p, para.join('\n'));
    frag.appendChild(p);
  }
  return frag;
}
