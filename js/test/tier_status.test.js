// Tests of js/src/worker/tier_status.js: the worker's status line for each state of the
// static encoder and the full model.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { downloadSize, megabytes, modelBytes, tierStatus } from '../src/worker/tier_status.js';

const MODEL = 23_231_223; // model.onnx + vocab.txt + model_info.json of all-MiniLM-L6-v2 (int8)
const size = downloadSize(MODEL);

test('sizes: the three files the client fetches, in MB; the runtime when the build knows it', () => {
  assert.equal(megabytes(23_231_223), '23 MB');
  assert.equal(megabytes(530_000), '0.5 MB');
  assert.equal(downloadSize(MODEL, 14_264_278), '23 MB + 14 MB runtime');
  assert.equal(downloadSize(MODEL, 0), '23 MB');
  const entry = { files: { 'model.onnx': { bytes: 22_999_403 }, 'vocab.txt': { bytes: 231_508 },
    'model_info.json': { bytes: 312 }, 'tokenizer.json': { bytes: 466_247 } } };
  assert.equal(modelBytes(entry), 23_231_223);
  assert.equal(modelBytes(null), 0);
});

test('both tiers: waiting, on demand, downloading, held, ready, failed', () => {
  const base = { encoder: 'ready', modelBytes: MODEL };
  assert.deepEqual(tierStatus({ ...base, model: 'ondemand' }), {
    mode: 'static',
    message: `Hybrid search: keyword + semantic (fast encoder). The semantic model (${size}) loads when a question needs it.`,
  });
  assert.deepEqual(tierStatus({ ...base, model: 'waiting' }),
    { mode: 'static', message: `Hybrid search: keyword + semantic (fast encoder; the semantic model, ${size}, loads next)` });
  assert.deepEqual(tierStatus({ ...base, model: 'downloading' }),
    { mode: 'static', message: `Downloading the semantic model (${size})… keyword and quick semantic results meanwhile` });
  assert.deepEqual(tierStatus({ ...base, model: 'held', why: 'data saver on' }), {
    mode: 'static',
    message: "Semantic model not downloaded (data saver on): quick semantic results from the site's encoder. Change in settings.",
  });
  assert.deepEqual(tierStatus({ ...base, model: 'ready' }), { mode: 'hybrid', message: 'Hybrid search: keyword + semantic (full model)' });
  assert.deepEqual(tierStatus({ ...base, model: 'failed', modelError: 'HTTP 404' }),
    { mode: 'static', message: 'Fast encoder only: the semantic model failed to load (HTTP 404)' });
  // the encoder still loading: keyword results, whatever the model does
  assert.equal(tierStatus({ ...base, encoder: 'loading', model: 'held', why: 'x' }).mode, 'keyword');
  assert.equal(tierStatus({ ...base, encoder: 'loading', model: 'waiting' }).message, 'Keyword results — semantic search loading…');
  assert.deepEqual(tierStatus({ ...base, encoder: 'loading', model: 'ondemand' }),
    { mode: 'keyword', message: 'Keyword results — semantic search loading…' });
  assert.deepEqual(tierStatus({ ...base, encoder: 'failed', encoderError: 'damaged', model: 'downloading' }),
    { mode: 'keyword', message: 'Keyword only: the query encoder failed to load (damaged)' });
  assert.deepEqual(tierStatus({ ...base, encoder: 'failed', model: 'failed', modelError: 'HTTP 404' }),
    { mode: 'keyword', message: 'Keyword only: the semantic model failed to load (HTTP 404)' });
});

test('a site without a static encoder (too few chunks): keyword results until the model is in', () => {
  const base = { encoder: 'none', modelBytes: MODEL };
  assert.deepEqual(tierStatus({ ...base, model: 'waiting' }), { mode: 'keyword', message: 'Keyword results — semantic search loading…' });
  assert.deepEqual(tierStatus({ ...base, model: 'ondemand' }),
    { mode: 'keyword', message: `Keyword results. The semantic model (${size}) loads when a question needs it.` });
  assert.deepEqual(tierStatus({ ...base, model: 'downloading' }),
    { mode: 'keyword', message: `Downloading the semantic model (${size})… keyword results meanwhile` });
  assert.deepEqual(tierStatus({ ...base, model: 'held', why: 'off in settings' }),
    { mode: 'keyword', message: 'Keyword results only: semantic model not downloaded (off in settings). Change in settings.' });
  assert.equal(tierStatus({ ...base, model: 'ready' }).mode, 'hybrid');
});

test('a site without the model: the encoder, or keyword search only', () => {
  assert.deepEqual(tierStatus({ encoder: 'ready', model: null }),
    { mode: 'static', message: "Hybrid search: keyword + semantic (this site's fast query encoder)" });
  assert.deepEqual(tierStatus({ encoder: 'none', model: null }),
    { mode: 'keyword', message: "Keyword search: this site's index has no semantic embeddings" });
  assert.equal(tierStatus({ encoder: 'loading', model: null }).message, 'Keyword results — semantic search loading…');
});
