// Tests of js/src/ui/model_policy.js: when the full model may download, and the reader's
// choice kept per site (the browser behaviour is tested in tests/browser/test_model_policy.py).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  LOW_MEMORY_GB, ModelChoiceStore, frugal, holdReason, isQuestion, modelPlan, proseWords, wantsModel,
} from '../src/ui/model_policy.js';

/** A Map-backed Storage. */
function storage() {
  const m = new Map();
  return /** @type {Storage} */ (/** @type {unknown} */ ({
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => m.set(k, String(v)),
    removeItem: (k) => m.delete(k),
    map: m,
  }));
}

const FAST = { connection: { saveData: false, effectiveType: '4g' }, deviceMemory: 8 };

test('holdReason: Save-Data, a slow connection, little memory; nothing on a fast device or without the APIs', () => {
  assert.equal(holdReason(FAST), '');
  assert.equal(holdReason({}), ''); // Firefox, Safari: no navigator.connection, no deviceMemory
  assert.equal(holdReason({ connection: null }), '');
  assert.equal(holdReason({ connection: { saveData: true, effectiveType: '4g' }, deviceMemory: 8 }), 'data saver on');
  for (const slow of ['slow-2g', '2g', '3g']) {
    assert.equal(holdReason({ connection: { effectiveType: slow }, deviceMemory: 8 }), `slow connection: ${slow}`);
  }
  for (const gb of [0.25, 0.5, 1]) assert.equal(holdReason({ ...FAST, deviceMemory: gb }), `little memory: ${gb} GB`);
  for (const gb of [LOW_MEMORY_GB, 4, 8]) assert.equal(holdReason({ ...FAST, deviceMemory: gb }), '');
  // Save-Data is named first when several hold
  assert.equal(holdReason({ connection: { saveData: true, effectiveType: '2g' }, deviceMemory: 0.5 }), 'data saver on');
});

test('frugal: Save-Data or a slow connection, not little memory', () => {
  assert.equal(frugal(FAST), false);
  assert.equal(frugal({}), false);
  assert.equal(frugal({ connection: { saveData: true } }), true);
  assert.equal(frugal({ connection: { effectiveType: '3g' } }), true);
  assert.equal(frugal({ ...FAST, deviceMemory: 0.5 }), false);
});

test('modelPlan: automatic follows the browser and waits for a query that wants it; always and never do not', () => {
  const saving = { connection: { saveData: true, effectiveType: '4g' }, deviceMemory: 8 };
  assert.deepEqual(modelPlan('auto', FAST), { load: true, drop: false, why: '', onDemand: true });
  assert.deepEqual(modelPlan('auto', saving), { load: false, drop: false, why: 'data saver on', onDemand: true });
  assert.deepEqual(modelPlan('always', saving), { load: true, drop: false, why: '', onDemand: false });
  assert.deepEqual(modelPlan('never', FAST), { load: false, drop: true, why: 'off in settings', onDemand: false });
});

test('isQuestion: a question mark, or a question word first', () => {
  for (const q of ['How do I impute missing values', 'what is a pipeline', 'Why? ', 'imputer strategy?', 'Can I use sparse input',
    "What's the default", 'DOES fit return self', 'is it thread safe', '缺失值怎么处理？']) {
    assert.equal(isQuestion(q), true, q);
  }
  for (const q of ['SimpleImputer', 'imputer strategy', 'is_fitted', 'whatever', 'howto guide', 'random_state']) {
    assert.equal(isQuestion(q), false, q);
  }
});

test('proseWords: words that are neither stop words nor code', () => {
  assert.deepEqual(proseWords('SimpleImputer'), []);
  assert.deepEqual(proseWords('train_test_split random_state'), []);
  assert.deepEqual(proseWords('sklearn.impute.SimpleImputer fit()'), ['fit']);
  assert.deepEqual(proseWords('KNeighborsClassifier kneighbors return_distance n_neighbors'), ['kneighbors']);
  assert.deepEqual(proseWords('imputer strategy'), ['imputer', 'strategy']);
  assert.deepEqual(proseWords('impute the missing values of a column'), ['impute', 'missing', 'values', 'column']);
  assert.deepEqual(proseWords('SN0421 codes 507'), ['codes']);
  assert.equal(proseWords('缺失值处理').length, 3); // CJK: one word per two characters
});

test('wantsModel: questions, sentences and weak answers; not names keyword search found', () => {
  const good = { found: 10, weak: false, unread: false };
  // names and short lookups that the fast tier matched
  for (const q of ['SimpleImputer', 'imputer strategy', 'DummyClassifier strategy', 'train_test_split random_state',
    'KNeighborsClassifier kneighbors return_distance n_neighbors', 'cross validation', 'sklearn.impute.SimpleImputer']) {
    assert.equal(wantsModel(q, good), false, q);
  }
  // questions and sentences
  for (const q of ['How do I impute missing values?', 'What are the values of the strategy parameter in a dummy classifier?',
    'impute missing values column', 'banana smoothie recipe', 'DummyClassifier strategy?']) {
    assert.equal(wantsModel(q, good), true, q);
  }
  // the fast tier found nothing good: the model may find the nearest
  assert.equal(wantsModel('SimpleImputr', { ...good, weak: true }), true);
  assert.equal(wantsModel('quokka', { found: 0, weak: true, unread: true }), true);
  assert.equal(wantsModel('quokka', { found: 3, weak: false, unread: true }), true);
  assert.equal(wantsModel('zzz', { found: 0, weak: false, unread: false }), true);
});

test('ModelChoiceStore: per site root, "auto" by default and when unreadable', () => {
  const store = storage();
  const a = new ModelChoiceStore(new URL('https://x.org/docs/a/'), store);
  const b = new ModelChoiceStore(new URL('https://x.org/docs/b/'), store);
  assert.equal(a.get(), 'auto');
  assert.equal(a.set('never'), true);
  assert.equal(a.get(), 'never');
  assert.equal(b.get(), 'auto'); // another site on the host keeps its own
  assert.equal(/** @type {any} */ (store).map.get('sphinx-rag-model:/docs/a/'), 'never');
  a.set('auto');
  assert.equal(/** @type {any} */ (store).map.has('sphinx-rag-model:/docs/a/'), false); // the default is not stored
  store.setItem('sphinx-rag-model:/docs/a/', 'sometimes');
  assert.equal(a.get(), 'auto');
  const refusing = /** @type {Storage} */ (/** @type {unknown} */ ({
    getItem() { throw new Error('denied'); }, setItem() { throw new Error('denied'); }, removeItem() { throw new Error('denied'); },
  }));
  const c = new ModelChoiceStore(new URL('https://x.org/'), refusing);
  assert.equal(c.get(), 'auto');
  assert.equal(c.set('always'), false);
  assert.equal(new ModelChoiceStore(new URL('https://x.org/'), null).set('always'), false);
});

test('choiceNote: what each choice gives here, and what readers get without the model', async () => {
  const { choiceNote } = await import('../src/ui/model_setting.js');
  const on = { load: true, drop: false, why: '' };
  const held = { load: false, drop: false, why: 'data saver on' };
  const size = '23 MB + 14 MB runtime';
  const auto = choiceNote('auto', held, size, true, true);
  assert.match(auto, /^Automatic: the semantic model \(23 MB \+ 14 MB runtime\) ranks questions best/);
  assert.match(auto, /when a question or a query without a good match needs it \(not for a name the keyword search finds\)/);
  assert.match(auto, /\(then: keyword and quick semantic results from the site's encoder\)\./);
  assert.match(auto, /Now: off \(data saver on\)\. Kept for this site in this browser\.$/);
  assert.match(choiceNote('auto', on, size, false, true), /\(then: keyword results only\)\. Now: on\./);
  assert.equal(choiceNote('never', { load: false, drop: true, why: 'off in settings' }, size, false, false),
    'Never: no download; keyword results only. This browser does not let the page keep it.');
  assert.match(choiceNote('always', on, size, true, true), /^Always: .* as soon as the search opens, even when the browser asks to save data\./);
});
