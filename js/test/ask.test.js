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
