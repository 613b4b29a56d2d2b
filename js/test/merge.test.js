// @ts-check
// js/src/search/merge.js gives the order of Python's sphinx_rag.search.merge.merge_answers
// (tests/fixtures/merge.json, written by tests/fixtures/generate.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { KEYWORD_SIMILARITY, mergeAnswers, mergedWeak } from "../src/search/merge.js";
import { fixture } from "./helpers.js";

test("mergeAnswers gives Python's order for every case", () => {
  const { cases } = fixture("merge.json");
  assert.ok(cases.length >= 20);
  for (const c of cases) assert.deepEqual(mergeAnswers(c.query, c.answers, c.names, c.k), c.expected, c.name);
});

/** The merged keys, whatever the sites' order. @param {any} c @param {number[]} order */
function keys(c, order) {
  const answers = order.map((n) => c.answers[n]);
  return mergeAnswers(c.query, answers, order.map((n) => c.names[n]), c.k).map(([n, i]) => answers[n].hits[i].key);
}

test("the same merged list whatever the order the sites are listed in", () => {
  for (const c of fixture("merge.json").cases) {
    const order = c.answers.map((/** @type {any} */ _, /** @type {number} */ n) => n);
    assert.deepEqual(keys(c, [...order].reverse()), keys(c, order), c.name);
    if (order.length > 2) assert.deepEqual(keys(c, [order[1], order[0], ...order.slice(2)]), keys(c, order), c.name);
  }
});

test("a weak site's first hit never comes before another site's good match", () => {
  const good = { hits: [{ key: "good", text: "nothing in common", similarity: 0.05 }], weak: false };
  const weak = { hits: [{ key: "weak", text: "simpleimputer strategy", similarity: 0.9 }], weak: true };
  for (const answers of [[weak, good], [good, weak]]) {
    const merged = mergeAnswers("SimpleImputer strategy", answers, answers.map((a) => a.hits[0].key));
    assert.deepEqual(merged.map(([n, i]) => answers[n].hits[i].key), ["good", "weak"]);
  }
  const keyword = { hits: [{ key: "k", text: "alpha" }], weak: false };
  const semantic = { hits: [{ key: "s", text: "alpha", similarity: KEYWORD_SIMILARITY + 0.01 }], weak: false };
  assert.deepEqual(mergeAnswers("alpha", [keyword, semantic], ["k", "s"]), [[1, 0], [0, 0]]);
});

test("mergedWeak: only when every site that answered is weak", () => {
  for (const { weak, expected } of fixture("merge.json").weak) assert.equal(mergedWeak(weak), expected);
});

test("a cosine claimed as Infinity counts 1, NaN 0, and neither buys a rank over a hit holding every word", () => {
  const home = { hits: [{ key: "home", text: "alpha beta", similarity: 0 }], weak: false };
  for (const claim of [Infinity, 1e6, Number.MAX_VALUE]) {
    const evil = { hits: [{ key: "evil", text: "nothing", similarity: claim }], weak: false };
    for (const answers of [[evil, home], [home, evil]]) {
      const merged = mergeAnswers("alpha beta", answers, answers.map((a) => a.hits[0].key));
      assert.deepEqual(merged.map(([n, i]) => answers[n].hits[i].key), ["home", "evil"], String(claim));
    }
  }
  // NaN counts 0 (every comparison with NaN is false: the order would depend on the sites' order)
  const nan = { hits: [{ key: "nan", text: "nothing", similarity: NaN }], weak: false };
  const low = { hits: [{ key: "low", text: "nothing", similarity: 0.1 }], weak: false };
  const negative = { hits: [{ key: "neg", text: "nothing", similarity: -0.1 }], weak: false };
  const orders = [[nan, low, negative], [negative, nan, low], [low, negative, nan]];
  for (const answers of orders) {
    const merged = mergeAnswers("alpha", answers, answers.map((a) => a.hits[0].key));
    assert.deepEqual(merged.map(([n, i]) => answers[n].hits[i].key), ["low", "nan", "neg"]);
  }
});
