// Tests of js/src/llm/llm.js: endpoint normalisation, SSE parsing, every error kind against
// tests/fake_llm_server.py (a real HTTP server process), and a hostile answer from it
// rendered safely by js/src/llm/markdown.js. Nothing here measures time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import { normalizeEndpoint, SSEParser, streamChat, LLMError } from '../src/llm/llm.js';
import { renderMarkdown } from '../src/llm/markdown.js';
import { buildMessages, ANSWER_RESERVE_TOKENS } from '../src/llm/prompt.js';
import { fakeDocument } from './fake_dom.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = process.env.PYTHON || 'python3';

// -- the fake server process ------------------------------------------------------------------

/** @type {import('node:child_process').ChildProcess} */
let server;
let BASE = '';

before(async () => {
  server = spawn(PYTHON, [path.join(REPO, 'tests', 'fake_llm_server.py'), '--idle-minutes', '5'],
    { stdio: ['ignore', 'pipe', 'inherit'] });
  const rl = createInterface({ input: server.stdout });
  const port = await new Promise((resolve, reject) => {
    rl.once('line', (line) => resolve(Number(line)));
    server.once('exit', (code) => reject(new Error(`fake server exited (${code})`)));
  });
  rl.close();
  BASE = `http://127.0.0.1:${port}`;
});

after(() => {
  server?.kill('SIGTERM');
});

async function lastRequest() {
  return (await fetch(`${BASE}/_last_request`)).json();
}

async function closedPort() {
  const s = createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** Run a streamChat that must fail; return the LLMError. */
async function failure(options) {
  try {
    await streamChat(options);
  } catch (err) {
    assert.ok(err instanceof LLMError, `not an LLMError: ${err}`);
    return err;
  }
  assert.fail('streamChat did not fail');
}

// -- endpoint ------------------------------------------------------------------------------------------

test('normalizeEndpoint accepts base URLs with or without /v1', () => {
  const cases = {
    'http://127.0.0.1:8080': 'http://127.0.0.1:8080/v1',
    'http://127.0.0.1:8080/v1/': 'http://127.0.0.1:8080/v1',
    'http://localhost:11434/v1/chat/completions': 'http://localhost:11434/v1',
    'localhost:11434': 'http://localhost:11434/v1',
    'https://llm.example.org/openai': 'https://llm.example.org/openai/v1',
    'http://host:8000/v2/': 'http://host:8000/v2',
  };
  for (const [given, expected] of Object.entries(cases)) assert.equal(normalizeEndpoint(given), expected);
  for (const bad of ['', 'ftp://host/v1', 'http://', 'javascript:alert(1)', 'not a url', 'mailto:a@b',
    'http://host:99999', 'http://a b']) assert.throws(() => normalizeEndpoint(bad), /must be an http\(s\) URL|is empty/);
  assert.equal(normalizeEndpoint('HTTP://Host.Local:80/v1/'), 'http://host.local/v1'); // as Python's
});

// -- SSE ---------------------------------------------------------------------------------------------------

test('SSEParser handles split chunks, CRLF, comments, multi-line data and a missing last blank line', () => {
  const stream = ': keep-alive\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\ndata:[DONE]';
  for (let size = 1; size <= stream.length; size++) {
    const parser = new SSEParser();
    const out = [];
    for (let i = 0; i < stream.length; i += size) out.push(...parser.push(stream.slice(i, i + size)));
    out.push(...parser.end());
    assert.deepEqual(out, ['{"a":\n1}', '[DONE]'], `chunk size ${size}`);
  }
});

/** A fetch returning a fixed body (for protocol edge cases). */
const fixedFetch = (body, headers = { 'content-type': 'text/event-stream' }, status = 200) =>
  async () => new Response(body, { status, headers });

const chunk = (content, finish = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: content ? { content } : {}, finish_reason: finish }] })}\n\n`;

test('streamChat: finish_reason without [DONE] completes; no end is incomplete; bad JSON is invalid', async () => {
  const base = { endpoint: 'http://127.0.0.1:9', model: 'm', messages: [] };
  assert.equal(await streamChat({ ...base, fetch: fixedFetch(chunk('Hi') + chunk(' there', 'stop')) }), 'Hi there');
  const inc = await failure({ ...base, fetch: fixedFetch(chunk('Hi') + chunk(' there')) });
  assert.equal(inc.kind, 'incomplete');
  assert.equal(inc.partial, 'Hi there');
  const bad = await failure({ ...base, fetch: fixedFetch(chunk('Hi') + 'data: {oops\n\n') });
  assert.equal(bad.kind, 'invalid');
  assert.equal(bad.partial, 'Hi');
  const sse = await streamChat({ ...base, fetch: fixedFetch(chunk('plain') + 'data: [DONE]\n\n', { 'content-type': 'text/plain' }) });
  assert.equal(sse, 'plain');
  const inStream = await failure({ ...base, fetch: fixedFetch('data: {"error": {"message": "context too long"}}\n\n') });
  assert.equal(inStream.kind, 'http');
  assert.match(inStream.message, /context too long/);
});

// -- against the fake server ---------------------------------------------------------------------------

const PASSAGES = [
  { title: 'Dummy estimators > Baselines', url: 'user_guide/dummy.html#baselines', text: 'Use DummyClassifier. It predicts the prior.' },
  { title: 'DummyClassifier', url: 'api/dummy.html#DummyClassifier', text: 'strategy: "prior" or "uniform".' },
];
const SETTINGS = {
  prompt: 'Expert of {project}.\n---\n{passages}\n\nQuestion: {question}', project: 'mlkit', max_context_tokens: 4096,
};

function ask(model, extra = {}) {
  const { messages } = buildMessages('What strategies exist?', PASSAGES, SETTINGS);
  return { endpoint: BASE, model, messages, temperature: 0.1, timeoutMs: 30000, ...extra };
}

test('normal: tokens stream, the passages were sent', async () => {
  const tokens = [];
  const answer = await streamChat(ask('normal', { onToken: (t) => tokens.push(t) }));
  assert.ok(tokens.length > 5);
  assert.equal(tokens.join(''), answer);
  assert.match(answer, /"Dummy estimators > Baselines" answers this \[1\]/);
  assert.match(answer, /\[2\]/);
  const body = await lastRequest();
  assert.equal(body.stream, true);
  assert.equal(body.max_tokens, ANSWER_RESERVE_TOKENS); // the answer room the context fit reserved
  assert.equal(body.model, 'normal');
  assert.equal(body.messages[0].content, 'Expert of mlkit.');
  assert.ok(body.messages[1].content.includes('[1] Dummy estimators > Baselines (user_guide/dummy.html#baselines)\nUse DummyClassifier.'));
  assert.ok(body.messages[1].content.includes('[2] DummyClassifier (api/dummy.html#DummyClassifier)'));
});

test('json: a server ignoring stream answers with one JSON body', async () => {
  const tokens = [];
  const answer = await streamChat(ask('json', { onToken: (t) => tokens.push(t), endpoint: `${BASE}/v1/` }));
  assert.deepEqual(tokens, [answer]);
  assert.match(answer, /answers this \[1\]/);
});

test('http: error500 carries the server message', async () => {
  const err = await failure(ask('error500'));
  assert.equal(err.kind, 'http');
  assert.equal(err.status, 500);
  assert.equal(err.serverMessage, 'model crashed: out of memory');
  assert.match(err.message, /HTTP 500.*model crashed: out of memory/);
});

test('incomplete: disconnect keeps the partial answer', async () => {
  const err = await failure(ask('disconnect'));
  assert.equal(err.kind, 'incomplete');
  assert.match(err.message, /incomplete/);
  assert.match(err.partial, /^According to the documentation,/);
});

test('timeout: slow with a short timeout', async () => {
  const err = await failure(ask('slow', { timeoutMs: 300 }));
  assert.equal(err.kind, 'timeout');
  assert.match(err.message, /did not answer within 0\.3 s/);
});

test('aborted: the Stop button (signal) keeps the partial answer', async () => {
  const stop = new AbortController();
  const err = await failure(ask('slow', { signal: stop.signal, onToken: (t) => { if (t.trim()) stop.abort(); } }));
  assert.equal(err.kind, 'aborted');
  assert.ok(err.partial.trim().length > 0);
  const already = await failure(ask('normal', { signal: AbortSignal.abort() }));
  assert.equal(already.kind, 'aborted');
});

test('unreachable: nothing listens on the port', async () => {
  const err = await failure(ask('normal', { endpoint: `http://127.0.0.1:${await closedPort()}` }));
  assert.equal(err.kind, 'unreachable');
  assert.match(err.message, /connection refused/);
});

test('nocors: the server sends no CORS header (Node fetch is not subject to CORS)', async () => {
  const res = await fetch(`${BASE}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'nocors', stream: true, messages: [] }),
  });
  assert.equal(res.headers.get('access-control-allow-origin'), null);
  await res.text();
  const normal = await fetch(`${BASE}/v1/models`);
  assert.equal(normal.headers.get('access-control-allow-origin'), '*');
  const preflight = await fetch(`${BASE}/nocors/v1/chat/completions`, { method: 'OPTIONS' });
  assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  assert.match(await streamChat(ask('nocors')), /answers this \[1\]/);
});

test('cors vs unreachable in a browser: a cors-mode probe that follows no redirect', async () => {
  /** @type {string[][]} */
  const calls = [];
  /** A browser's fetch: the POST fails as a CORS refusal does; the probe answers `probe()`. */
  const browserLike = (probe) => async (url, init) => {
    calls.push([init?.method ?? 'GET', init?.mode ?? 'cors', init?.redirect ?? 'follow']);
    if (init?.method !== 'POST' && probe) return probe();
    throw new TypeError('Failed to fetch');
  };
  const cors = await failure(ask('normal', { fetch: browserLike(() => new Response('{"data": []}')) }));
  assert.equal(cors.kind, 'cors');
  assert.match(cors.message, /is running but does not allow requests from this site \(CORS\)/);
  assert.match(cors.message, /OLLAMA_ORIGINS=/);
  assert.deepEqual(calls, [['POST', 'cors', 'manual'], ['GET', 'cors', 'manual']]); // no no-cors probe: it would follow
  const down = await failure(ask('normal', { fetch: browserLike(null) }));
  assert.equal(down.kind, 'unreachable');
  assert.match(down.message, /Is the server running/);
  assert.match(down.message, /refuses requests from this site \(CORS\) or redirects them elsewhere/);
  assert.match(down.message, /OLLAMA_ORIGINS=/);
  const opaque = () => /** @type {Response} */ (/** @type {unknown} */ ({
    type: 'opaqueredirect', status: 0, statusText: '', ok: false, body: null, headers: new Headers() }));
  const moved = await failure(ask('normal', { fetch: browserLike(opaque) }));
  assert.equal(moved.kind, 'redirect');
  assert.match(moved.message, /answered HTTP 3xx, a redirect to an address the browser does not show: Ask follows no redirect/);
  assert.ok(calls.every(([, mode, redirect]) => mode === 'cors' && redirect === 'manual'));
});

test('redirect: an opaque redirect to the POST (a browser) is refused', async () => {
  const fetchOpaque = async () => /** @type {Response} */ (/** @type {unknown} */ ({
    type: 'opaqueredirect', status: 0, statusText: '', ok: false, body: null, headers: new Headers() }));
  const err = await failure(ask('normal', { fetch: fetchOpaque }));
  assert.equal(err.kind, 'redirect');
  assert.match(err.message, /^The LLM server at http:\/\/127\.0\.0\.1:\d+\/v1 answered HTTP 3xx, a redirect to an address /);
  assert.match(err.message, /`curl -si http:\/\/127\.0\.0\.1:\d+\/v1\/models` shows where it points/);
});

async function otherRequests() {
  return (await fetch(`${BASE}/_other_requests`)).json();
}

for (const status of [307, 302]) {
  test(`redirect: a ${status} is not followed, and names the other host`, async () => {
    const before = await otherRequests();
    const err = await failure(ask('normal', { endpoint: `${BASE}/redirect${status}/v1` }));
    assert.equal(err.kind, 'redirect');
    assert.equal(err.status, status);
    const other = /a redirect to another host, (127\.0\.0\.1:\d+) \(http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\)/
      .exec(err.message);
    assert.ok(other && !BASE.endsWith(other[1]), err.message);
    assert.match(err.message, new RegExp(`answered HTTP ${status} \\w`));
    assert.deepEqual(await otherRequests(), before); // nothing reached the other host
  });
}

test('limit: a 50 MB answer ends at maxChars, the request aborted', async () => {
  const tokens = [];
  const err = await failure(ask('huge', { maxChars: 2500, onToken: (t) => tokens.push(t) }));
  assert.equal(err.kind, 'limit');
  assert.equal(err.partial.length, 2500);
  assert.equal(tokens.join(''), err.partial);
  assert.match(err.message, /cut at 2,500 characters \(the max_answer_chars setting\)/);
  let stream;
  for (let i = 0; i < 100; i++) { // the server notices the closed connection at its next write
    stream = await (await fetch(`${BASE}/_last_stream`)).json();
    if (stream.disconnected) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(stream.mode, 'huge');
  assert.ok(stream.disconnected && stream.sent < 10_000_000, JSON.stringify(stream));
  assert.equal((await streamChat(ask('md3000', { maxChars: 3000 }))).length, 3000); // exactly the cap: whole
  const emoji = await failure({ endpoint: 'http://127.0.0.1:9', model: 'm', messages: [], maxChars: 3,
    fetch: fixedFetch(chunk('a🎉b🎉c', 'stop')) });
  assert.equal(emoji.partial, 'a🎉b'); // characters as Python counts them; no pair cut in half
});

test('SSEParser: a long line arriving in pieces is one event', () => {
  const parser = new SSEParser();
  const pieces = ['data: ', 'x'.repeat(1000), 'y'.repeat(1000), '\n', '\n'];
  const events = pieces.flatMap((p) => parser.push(p));
  assert.deepEqual(events, ['x'.repeat(1000) + 'y'.repeat(1000)]);
});

// -- a hostile answer, rendered with a tiny fake DOM ---------------------------------------------

const cites = { 1: 'user_guide/dummy.html#baselines', 2: 'api/dummy.html#DummyClassifier' };
const render = (text) => /** @type {import('./fake_dom.js').FakeNode} */ (/** @type {unknown} */ (renderMarkdown(text, {
  doc: /** @type {any} */ (fakeDocument), citationUrl: (n) => cites[n] ?? null,
})));

test('xss answer from the server renders as inert text', async () => {
  const answer = await streamChat(ask('xss'));
  assert.match(answer, /<script>alert\(1\)<\/script>/);
  const frag = render(answer);
  const elements = frag.elements();
  const allowed = new Set(['p', 'strong', 'em', 'code', 'pre', 'ul', 'ol', 'li', 'a', 'br']);
  for (const e of elements) assert.ok(allowed.has(e.nodeName), `unexpected <${e.nodeName}>`);
  assert.ok(!elements.some((e) => ['script', 'img', 'iframe'].includes(e.nodeName)));
  for (const e of elements) {
    for (const [name, value] of e.attributes) {
      assert.ok(!name.startsWith('on'), `event handler attribute ${name}`);
      if (name === 'href') assert.match(value, /^(https?:|[^:]*$)/, `unsafe href ${value}`);
    }
  }
  const text = frag.textContent;
  assert.ok(text.includes('<script>alert(1)</script>'), 'the HTML is shown as text');
  assert.ok(text.includes('<img src=x onerror=alert(1)>'));
  assert.ok(text.includes('a click link') && !text.includes('javascript:'), 'javascript: link shows its text only');
  assert.ok(text.includes('a data link and') && !text.includes('data:text'), 'data: link shows its text only');
  const strong = elements.find((e) => e.nodeName === 'strong');
  assert.equal(strong?.textContent, 'bold');
  const links = elements.filter((e) => e.nodeName === 'a');
  assert.deepEqual(links.map((a) => a.getAttribute('href')),
    ['user_guide/dummy.html#baselines', 'https://example.org/page', 'api/dummy.html#DummyClassifier']);
});

// -- short completions (Ask's extra calls) --------------------------------------------------------------

test('completeChat: the reply and the server usage, not streamed; its failures as streamChat', async () => {
  const { completeChat } = await import('../src/llm/llm.js');
  const { rewriteMessages, parseQueries } = await import('../src/llm/multi_query.js');
  const { judgeMessages } = await import('../src/llm/judge.js');
  const question = 'How do I impute missing values with the median?';
  const { text, usage } = await completeChat({ endpoint: BASE, model: 'normal', messages: rewriteMessages(question, 'mlkit'), maxTokens: 128 });
  assert.deepEqual(parseQueries(text, question), ['impute missing values', 'median values missing']);
  assert.equal(/** @type {any} */ (usage).completion_tokens, text.split(/\s+/).filter(Boolean).length);
  const body = await lastRequest();
  assert.equal(body.stream, false);
  assert.equal(body.max_tokens, 128);
  assert.equal(body.temperature, 0);
  const judged = await completeChat({ endpoint: BASE, model: 'nousage', maxTokens: 8,
    messages: judgeMessages(question, 'Imputation of missing values', 'The median of each column.', 'mlkit') });
  assert.deepEqual(judged, { text: 'Yes.', usage: null });
  /** @param {object} options */
  const kindOf = async (options) => {
    try {
      await completeChat({ endpoint: BASE, model: 'normal', messages: rewriteMessages(question, 'p'), maxTokens: 8, ...options });
    } catch (err) {
      assert.ok(err instanceof LLMError);
      return err.kind;
    }
    return 'none';
  };
  assert.equal(await kindOf({ model: 'error500' }), 'http');
  assert.equal(await kindOf({ model: 'redirect307' }), 'redirect');
  assert.equal(await kindOf({ endpoint: `http://127.0.0.1:${await closedPort()}` }), 'unreachable');
  const stop = new AbortController();
  stop.abort();
  assert.equal(await kindOf({ signal: stop.signal }), 'aborted');
});
