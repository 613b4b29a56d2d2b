// Tests of js/src/worker/settle.js: how long a typed query waits before fetching.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FRUGAL_SETTLE, PAUSE_MS, SETTLE, settleDelay } from '../src/worker/settle.js';

/** Arrival times of keys typed `gap` ms apart. */
const typed = (n, gap, start = 1000) => Array.from({ length: n }, (_, i) => start + i * gap);

test('settleDelay: twice the reader\'s median gap, within bounds', () => {
  assert.equal(settleDelay([1000], SETTLE), SETTLE.first); // the first key: no rhythm yet
  assert.equal(settleDelay(typed(6, 150), SETTLE), 300); // a fast typist
  assert.equal(settleDelay(typed(6, 300), SETTLE), 600); // a phone
  assert.equal(settleDelay(typed(6, 40), SETTLE), SETTLE.min);
  assert.equal(settleDelay(typed(6, 900), SETTLE), SETTLE.max);
  assert.equal(settleDelay(typed(6, 150), FRUGAL_SETTLE), FRUGAL_SETTLE.min); // three times, at least 500
  assert.equal(settleDelay(typed(6, 300), FRUGAL_SETTLE), 900);
  assert.equal(settleDelay(typed(6, 600), FRUGAL_SETTLE), FRUGAL_SETTLE.max);
});

test('settleDelay: a pause is not the rhythm, one slow key does not move the median', () => {
  const paused = [...typed(4, 150), 1450 + PAUSE_MS + 500, 1450 + PAUSE_MS + 650];
  assert.equal(settleDelay(paused, SETTLE), 300);
  assert.equal(settleDelay([1000, 1000 + PAUSE_MS + 1], SETTLE), SETTLE.first);
  const oneSlow = [1000, 1150, 1300, 1900, 2050, 2200];
  assert.equal(settleDelay(oneSlow, SETTLE), 300);
  // only the last keys count: an old rhythm is forgotten
  const changed = [...typed(10, 100), ...typed(6, 300, 2000)];
  assert.equal(settleDelay(changed, SETTLE), 600);
});
