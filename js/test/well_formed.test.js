// Tests of js/src/ui/well_formed.js and of the recent-searches list it guards: lone surrogates
// (an emoji cut in half) become U+FFFD, so encodeURIComponent, postMessage and storage take them.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { wellFormed, wellFormedFallback } from '../src/ui/well_formed.js';
import { remember } from '../src/ui/recent.js';

const CASES = [
  ['emoji cut \uD83D', 'emoji cut \uFFFD'],
  ['\uDE00 low half first', '\uFFFD low half first'],
  ['reversed \uDE00\uD83D pair', 'reversed \uFFFD\uFFFD pair'],
  ['whole 🎉 emoji', 'whole 🎉 emoji'],
  ['\uD83D\uD83D\uDE00', '\uFFFD\uD83D\uDE00'],
  ['', ''],
];

test('wellFormed replaces lone surrogates only, natively and by the fallback', () => {
  for (const [given, expected] of CASES) {
    assert.equal(wellFormed(given), expected, JSON.stringify(given));
    assert.equal(wellFormedFallback(given), expected, JSON.stringify(given));
    assert.doesNotThrow(() => encodeURIComponent(wellFormed(given)));
  }
  assert.throws(() => encodeURIComponent('emoji cut \uD83D'), URIError); // what the dialog met
  assert.equal(wellFormed(undefined), '');
});

test('recent searches keep a well-formed query', () => {
  assert.deepEqual(remember(['older'], ' cut \uD83D '), ['cut \uFFFD', 'older']);
  assert.doesNotThrow(() => encodeURIComponent(remember([], 'x\uDC00')[0]));
});
