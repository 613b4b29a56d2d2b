// Tests of the pure parts of js/src/ui/ask.js: the reader's stored settings and how they
// combine with the site's (the DOM behaviour is tested in tests/browser/test_ask_e2e.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { ASK_PASSAGES, STORAGE_KEY, effectiveSettings, readReaderSettings, siteLLM } from '../src/ui/ask.js';
import { DEFAULT_PROMPT } from '../src/llm/prompt.js';

/** A Map-backed Storage. @param {Record<string, string>} [init] */
function storage(init = {}) {
  const m = new Map(Object.entries(init));
  return /** @type {Storage} */ (/** @type {unknown} */ ({
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
  }));
}

const SITE = {
  endpoint: 'http://127.0.0.1:8080/v1', model: 'gemma3', max_context_tokens: 8192, temperature: 0.3,
  timeout: 30, max_answer_chars: 30000, multi_query: false, filter_passages: true,
  prompt: 'P {project}\n---\n{passages}\n{question}', project: 'mlkit',
};

test('readReaderSettings: valid JSON with an endpoint, else null', () => {
  assert.equal(readReaderSettings(null), null);
  assert.equal(readReaderSettings(storage()), null);
  assert.equal(readReaderSettings(storage({ [STORAGE_KEY]: 'not json' })), null);
  assert.equal(readReaderSettings(storage({ [STORAGE_KEY]: '{"model": "m"}' })), null);
  assert.equal(readReaderSettings(storage({ [STORAGE_KEY]: '{"endpoint": "  "}' })), null);
  assert.deepEqual(readReaderSettings(storage({ [STORAGE_KEY]: '{"endpoint": " http://x/v1 ", "model": " m "}' })),
    { endpoint: 'http://x/v1', model: 'm' });
  assert.deepEqual(readReaderSettings(storage({ [STORAGE_KEY]: '{"endpoint": "e", "model": "m", "timeout": 5}' })),
    { endpoint: 'e', model: 'm', timeout: 5 });
  for (const bad of [0, -1, '5', null]) {
    assert.deepEqual(readReaderSettings(storage({ [STORAGE_KEY]: JSON.stringify({ endpoint: 'e', timeout: bad }) })),
      { endpoint: 'e', model: '' });
  }
  // the extra steps: booleans only
  assert.deepEqual(readReaderSettings(storage({ [STORAGE_KEY]: JSON.stringify({ endpoint: 'e', multi_query: true,
    filter_passages: 'yes' }) })), { endpoint: 'e', model: '', multi_query: true });
  const throwing = /** @type {Storage} */ (/** @type {unknown} */ ({ getItem() { throw new Error('denied'); } }));
  assert.equal(readReaderSettings(throwing), null);
});

test('effectiveSettings: off without endpoint; the site config alone', () => {
  assert.equal(effectiveSettings({}, null, 'p'), null);
  assert.equal(effectiveSettings(undefined, null), null);
  assert.equal(siteLLM({ endpoint: '' }), null);
  assert.deepEqual(effectiveSettings(SITE, null, 'ignored'), { ...SITE, source: 'site' });
});

test('effectiveSettings: the reader overrides endpoint, model, timeout and the extra steps only', () => {
  const reader = { endpoint: 'http://127.0.0.1:11434/v1', model: 'llama3', timeout: 120 };
  assert.deepEqual(effectiveSettings(SITE, reader), { ...SITE, ...reader, source: 'reader' });
  assert.equal(effectiveSettings(SITE, { endpoint: 'e', model: 'm' })?.timeout, 30); // the site's
  const extra = /** @type {any} */ ({ ...reader, prompt: '{passages} {question}', temperature: 2, project: 'x' });
  assert.deepEqual(effectiveSettings(SITE, extra), { ...SITE, ...reader, source: 'reader' }); // nothing else
  const steps = { ...reader, multi_query: true, filter_passages: false };
  assert.deepEqual(effectiveSettings(SITE, steps), { ...SITE, ...steps, source: 'reader' });
});

test('effectiveSettings: reader only gets Python defaults and the page project name', () => {
  const s = effectiveSettings({}, { endpoint: 'e', model: 'm' }, 'mlkit');
  assert.deepEqual(s, {
    endpoint: 'e', model: 'm', max_context_tokens: 4096, temperature: 0.1, timeout: 60, max_answer_chars: 20000,
    multi_query: false, filter_passages: false, prompt: DEFAULT_PROMPT, project: 'mlkit', source: 'reader',
  });
  assert.equal(effectiveSettings({}, { endpoint: 'e', model: 'm' })?.project, 'documented'); // as the CLI
});

test('as many passages as `sphinx-rag ask` retrieves by default', () => {
  assert.equal(ASK_PASSAGES, 8);
});

test('errorSummary: a long message is one short line and details; a short one its own line', async () => {
  const { errorSummary, SHORT_ERROR_CHARS } = await import('../src/ui/ask.js');
  const long = 'Could not reach the LLM server at http://127.0.0.1:9/v1. Is the server running? For example ' +
    '`llama-server -m model.gguf --port 8080` (endpoint http://127.0.0.1:8080/v1).';
  assert.deepEqual(errorSummary('unreachable', long), { line: 'Could not reach the LLM server.', details: long });
  assert.deepEqual(errorSummary('aborted', 'Stopped: the answer is incomplete.'),
    { line: 'Stopped: the answer is incomplete.', details: '' });
  const http = `The LLM server at http://h/v1 answered HTTP 500 Internal Server Error: ${'x'.repeat(80)}`;
  assert.equal(errorSummary('http', http, 500).line, 'The LLM server answered with an error (HTTP 500).');
  // short, but with Markdown in it: details, so that the line never shows a backtick
  assert.equal(errorSummary('csp', 'Allow it: `connect-src x`').line, "This site’s Content-Security-Policy blocks the LLM server.");
  assert.equal(errorSummary('strange', 'y'.repeat(SHORT_ERROR_CHARS + 1)).line, 'Ask failed.');
  for (const kind of ['unreachable', 'cors', 'csp', 'http', 'incomplete', 'timeout', 'invalid', 'redirect', 'limit']) {
    const { line } = errorSummary(kind, 'z'.repeat(200));
    assert.ok(line.length <= 70 && !line.includes('`'), line);
  }
});

test('readThread / writeThread: the conversation in the tab, malformed parts dropped', async () => {
  const { readThread, writeThread, STORED_TURNS } = await import('../src/ui/ask.js');
  const s = storage();
  const turn = { question: 'How?', answer: 'So [1].', sources: [{ title: 'T', url: 'https://x.org/p.html#a' }], followUps: ['Why?'] };
  assert.deepEqual(readThread(s, 'k'), []);
  assert.ok(writeThread(s, 'k', [turn]));
  assert.deepEqual(readThread(s, 'k'), [turn]);
  const hostile = { turns: [null, 'x', { question: ' ', answer: 'a' }, { question: 'q', answer: '' },
    { question: 'Q?', answer: 'A.', sources: [{ title: 'evil', url: 'javascript:alert(1)' }, { title: 5, url: 'u' }, 'x'],
      followUps: ['ok?', 7, '', 'two?', 'three?', 'four?'] }] };
  s.setItem('k', JSON.stringify(hostile));
  assert.deepEqual(readThread(s, 'k'), [{ question: 'Q?', answer: 'A.', sources: [], followUps: ['ok?', 'two?', 'three?'] }]);
  s.setItem('k', '{not json');
  assert.deepEqual(readThread(s, 'k'), []);
  const many = Array.from({ length: STORED_TURNS + 4 }, (_, i) => ({ ...turn, question: `Q${i}?` }));
  writeThread(s, 'k', many);
  assert.deepEqual(readThread(s, 'k').map((t) => t.question), many.slice(-STORED_TURNS).map((t) => t.question));
  writeThread(s, 'k', []);
  assert.equal(s.getItem('k'), null);
  const full = /** @type {Storage} */ (/** @type {unknown} */ ({ setItem() { throw new Error('quota'); } }));
  assert.equal(writeThread(full, 'k', [turn]), false);
  assert.equal(writeThread(null, 'k', [turn]), false);
});
