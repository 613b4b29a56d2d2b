// @ts-check
// The cross-encoder stage in onnxruntime-web (js/src/search/cross_encoder.js) against
// Python's (tests/fixtures/cross_encoder.json): the same pieces, ids and prior, the same
// logits within the fixture's rounding, the same reranked top 10 through the Searcher.
import assert from "node:assert/strict";
import { test } from "node:test";

import { CrossEncoder, clipText, combined, pairIds, readInfo, rerankScores } from "../src/search/cross_encoder.js";
import { Searcher } from "../src/search/retrieve.js";
import { SKIP_DEMO, demoIndexDir, fixture, openIndex } from "./helpers.js";

const TOLERANCE = 1e-3; // generate.py CROSS_ENCODER_TOLERANCE: another CPU's kernels

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

test("reranker_info.json out of range or mistyped is refused in one line", () => {
  assert.throws(() => readInfo({ max_query_tokens: 40, max_tokens: 32, depth: 20, rank_weight: 1 }), /out of range/);
  assert.throws(() => readInfo({ max_query_tokens: 8, max_tokens: 64, depth: 20, rank_weight: Infinity }), /reranker_info.json/);
  assert.throws(() => readInfo({}), /reranker_info.json/);
});

// Once the default model's package ships a reranker (issue 43) the demo publishes it and the
// fixture holds its queries; until then there is no model to compare.
const SKIP_MODEL = SKIP_DEMO || (!fixture("cross_encoder.json").queries && "the demo publishes no reranker yet");

test("the demo's reranker gives Python's pieces, logits and reranked order", { skip: SKIP_MODEL, timeout: 600_000 }, async () => {
  const ort = await import("onnxruntime-web");
  const { index, source } = await openIndex(/** @type {string} */ (demoIndexDir()));
  const files = await source.reranker();
  assert.ok(files, "the demo build publishes no reranker");
  const model = await CrossEncoder.create(ort, files);
  const data = fixture("cross_encoder.json");
  assert.deepEqual({ ...model.info, do_lower_case: undefined }, { ...data.model_info, do_lower_case: undefined });
  data.texts.forEach((/** @type {any} */ t, /** @type {number} */ k) => {
    assert.deepEqual(model.pieces(t.text), t.pieces, JSON.stringify(t.text).slice(0, 60));
    const query = model.pieces(data.texts[k ? 0 : 1].text);
    const pair = pairIds(query, t.pieces, { cls: model.tokenizer.clsId, sep: model.tokenizer.sepId, info: model.info });
    assert.deepEqual([pair.ids, pair.types], t.pair);
  });
  const searcher = new Searcher(index);
  const rankings = new Map(fixture("rankings.json").queries.map((/** @type {any} */ q) => [q.query, q.vector]));
  let worst = 0;
  for (const q of data.queries) {
    const texts = await Promise.all(q.candidates.map(async (/** @type {number} */ i) => (await index.chunk(i)).text));
    const logits = await model.logits(q.query, texts);
    q.logits.forEach((/** @type {number} */ want, /** @type {number} */ k) => {
      worst = Math.max(worst, Math.abs(logits[k] - want));
      assert.ok(Math.abs(logits[k] - want) <= TOLERANCE, `${q.query}: logit ${k} ${logits[k]} vs ${want}`);
    });
    // the whole stage, from the Python query vector: the same top 10 as Searcher(rerank=True)
    const ranked = await searcher.ranking(q.query, rankings.get(q.query));
    const scored = await searcher.rerankedScores(q.query, ranked, model);
    const top = [...scored.keys()].sort((a, b) => {
      const sa = /** @type {number} */ (scored.get(a));
      const sb = /** @type {number} */ (scored.get(b));
      return sa > sb ? -1 : sa < sb ? 1 : a - b;
    }).slice(0, 10);
    assert.deepEqual(top, q.reranked, q.query);
  }
  console.log(`cross-encoder: ${data.queries.length} queries, logits within ${worst.toExponential(2)} of Python's`);
  // hostile inputs: finite scores, no exception (the text is cut before it is tokenized)
  for (const [query, text] of [["", ""], ["x".repeat(200_000), "y"], ["a [SEP] b [CLS]", "[PAD] [MASK] [UNK]"],
    ["\u0000\u001b[2J\u2028", "\ud800 lone"], ["ok", "word ".repeat(50_000)], ["日本語の質問", "🙂".repeat(10_000)]]) {
    const out = await model.logits(query, [text, "plain text"]);
    assert.equal(out.length, 2);
    assert.ok(Number.isFinite(out[0]) && Number.isFinite(out[1]), JSON.stringify(query).slice(0, 40));
  }
  await model.release();
});
