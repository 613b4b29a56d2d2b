// @ts-check
// The cross-encoder stage (js/src/search/cross_encoder.js) against Python's
// (tests/fixtures/cross_encoder.json): the prior, the cut, a pair's ids and the reordering.
// No reranker ships yet (issue 43): the model's logits and the demo's reranked order join
// this file and the fixture when one does (test_js_tests_pass allows no skipped test).
import assert from "node:assert/strict";
import { test } from "node:test";

import { clipText, combined, focusText, modelText, pairIds, readInfo, rerankScores } from "../src/search/cross_encoder.js";
import { fixture } from "./helpers.js";

test("the stage's pure parts are Python's: the prior, the cut, a pair's ids, the reordering", async () => {
  const data = fixture("cross_encoder.json");
  const info = readInfo(data.info);
  // within 1e-12, not bit for bit: V8's Math.log and numpy's log may differ in the last bit
  const near = (/** @type {number[]} */ got, /** @type {number[]} */ want) => {
    assert.equal(got.length, want.length);
    got.forEach((x, k) => assert.ok(Math.abs(x - want[k]) <= 1e-12, `${x} vs ${want[k]}`));
  };
  for (const [logits, weight, want] of data.combined) near(Array.from(combined(logits, weight)), want);
  for (const [text, want] of data.clipped) assert.equal(clipText(text, info.max_tokens), want);
  assert.equal(clipText("\u{1F600}".repeat(20), 1), "\u{1F600}".repeat(8)); // code points, not UTF-16 units
  for (const [query, text, n, want] of data.focused) assert.equal(focusText(query, text, n), want, `${query} / ${n}`);
  for (const [query, text, ids, types] of data.pairs) {
    assert.deepEqual(pairIds(query, text, { cls: 101, sep: 102, info }), { ids, types });
  }
  const fused = new Map(data.reordered.fused.map((/** @type {number[]} */ [i, s]) => [i, s]));
  /** @type {number[][]} */
  const asked = [];
  const out = await rerankScores(fused, async (top) => { asked.push(top); return data.reordered.logits; }, info);
  assert.deepEqual(asked, [[10, 11, 12]]); // the first depth=3 by fused score
  const entries = [...out.entries()].sort((a, b) => a[0] - b[0]);
  assert.deepEqual(entries.map(([i]) => i), data.reordered.scores.map((/** @type {number[]} */ [i]) => i));
  near(entries.map(([, s]) => s), data.reordered.scores.map((/** @type {number[]} */ [, s]) => s));
  const order = [...out.keys()].sort((a, b) => /** @type {number} */ (out.get(b)) - /** @type {number} */ (out.get(a)) || a - b);
  assert.deepEqual(order, [12, 10, 11, 13, 14]);
  assert.equal((await rerankScores(new Map([[3, 1]]), async () => assert.fail("no model call for one candidate"), info)).get(3), 1);
});

test("the focus cut reads a hostile chunk's first 20,000 code points only, and each cut as the info says", () => {
  const huge = `Head\n${"filler words here. ".repeat(5000)}the asked word.`;
  assert.equal(focusText("asked word", huge, 64), clipText(`Head${"\nfiller words here.".repeat(100)}`, 64));
  const info = readInfo({ max_query_tokens: 4, max_tokens: 12, depth: 3, rank_weight: 0.5, text_cut: "focus" });
  assert.equal(modelText("stop", "H\nGo on. Stop here.", info), "H\nStop here.\nGo on.");
  assert.equal(modelText("stop", "H\nGo on. Stop here.", { ...info, text_cut: "head" }), "H\nGo on. Stop here.");
});

test("reranker_info.json out of range or mistyped is refused in one line", () => {
  assert.throws(() => readInfo({ max_query_tokens: 4, max_tokens: 64, depth: 20, rank_weight: 1, text_cut: "tail" }), /out of range/);
  assert.throws(() => readInfo({ max_query_tokens: 40, max_tokens: 32, depth: 20, rank_weight: 1 }), /out of range/);
  assert.throws(() => readInfo({ max_query_tokens: 8, max_tokens: 64, depth: 20, rank_weight: Infinity }), /reranker_info.json/);
  assert.throws(() => readInfo({}), /reranker_info.json/);
});
