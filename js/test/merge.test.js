// @ts-check
// js/src/search/merge.js gives the order of Python's sphinx_rag.merge.merge_ranked
// (tests/fixtures/merge.json, written by tests/fixtures/generate.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { mergeRanked, mergedWeak } from "../src/search/merge.js";
import { fixture } from "./helpers.js";

test("mergeRanked gives Python's order for every case", () => {
  const { cases } = fixture("merge.json");
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    const merged = mergeRanked(c.rankings, (/** @type {string} */ x) => x, c.k);
    assert.deepEqual(merged, c.expected, c.name);
  }
});

test("home first on ties, then rank; a passage two sites give sums its ranks", () => {
  assert.deepEqual(mergeRanked([["a1", "a2"], ["b1", "b2"]], (x) => x), [[0, "a1"], [1, "b1"], [0, "a2"], [1, "b2"]]);
  // a2 is also b's first: 1/62 + 1/61 beats a1's 1/61
  assert.deepEqual(mergeRanked([["a1", "a2"], ["a2"]], (x) => x).map(([, r]) => r), ["a2", "a1"]);
  assert.deepEqual(mergeRanked([["a1"], ["b1"], ["c1"]], (x) => x, 2), [[0, "a1"], [1, "b1"]]);
});

test("mergedWeak: only when every site that answered is weak", () => {
  for (const { weak, expected } of fixture("merge.json").weak) assert.equal(mergedWeak(weak), expected);
});
