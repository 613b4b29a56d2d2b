// Tests of js/src/llm/llm_settings.js: the settings merge rule gives what Python's
// merge_settings gives (tests/fixtures/llm_settings.json, made by tests/fixtures/generate.py
// and checked against Python by tests/test_llm.py), and the defaults are Python's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

import { DEFAULTS, DEFAULT_PROJECT, mergeSettings } from '../src/llm/llm_settings.js';
import { fixture, REPO } from './helpers.js';

const PYTHON = process.env.PYTHON || 'python3';

test('mergeSettings gives the fixture\'s settings for every case', () => {
  const { cases } = fixture('llm_settings.json');
  assert.ok(cases.length >= 10);
  assert.ok(cases.some((c) => c.expected === null) && cases.some((c) => c.expected !== null));
  for (const c of cases) assert.deepEqual(mergeSettings(c.layers), c.expected, c.name);
});

test('DEFAULTS and DEFAULT_PROJECT are Python\'s', () => {
  const code = 'import json, sys\nfrom sphinx_rag.config import LLM_DEFAULTS\n' +
    'from sphinx_rag.llm.settings import DEFAULT_PROJECT\n' +
    'json.dump({"defaults": LLM_DEFAULTS, "project": DEFAULT_PROJECT}, sys.stdout)';
  const proc = spawnSync(PYTHON, ['-c', code], { cwd: REPO, encoding: 'utf8' });
  assert.equal(proc.status, 0, proc.stderr);
  const py = JSON.parse(proc.stdout);
  const { endpoint, model, ...rest } = py.defaults;
  assert.deepEqual({ endpoint, model }, { endpoint: '', model: '' });
  assert.deepEqual({ ...DEFAULTS }, rest);
  assert.equal(DEFAULT_PROJECT, py.project);
});
