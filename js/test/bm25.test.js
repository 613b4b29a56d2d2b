// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { BM25Index, editDistance, maxTypoDistance } from "../src/search/bm25.js";
import { tokenize } from "../src/search/lexical.js";
import { topK } from "../src/search/retrieve.js";
import { SKIP_DEMO, demoAssetDir, fixture, localLoader } from "./helpers.js";

/** @param {number} a @param {number} b */
const close = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(Math.abs(a), Math.abs(b), 1e-12);

test("BM25 tokens, query terms (typos) and top-20 scores equal Python's", { skip: SKIP_DEMO }, async () => {
  const data = fixture("bm25.json");
  const { bm25 } = await localLoader(/** @type {string} */ (demoAssetDir())).keyword();
  assert.equal(bm25.nDocs, data.n_docs, "the demo build differs from the one of the fixtures: regenerate them");
  assert.equal(bm25.vocab.length, data.vocab_size);
  let exact = 0;
  for (const c of data.queries) {
    const tokens = tokenize(c.query);
    assert.deepEqual(tokens, c.tokens, c.query);
    assert.deepEqual(bm25.queryTerms(tokens).map(([t, w]) => [bm25.vocab[t], w]), c.query_terms, c.query);
    const scores = bm25.scores(tokens);
    const top = topK(scores, 20);
    assert.deepEqual(top, c.top.map((/** @type {number[]} */ x) => x[0]), c.query);
    c.top.forEach((/** @type {[number, number]} */ [i, s], /** @type {number} */ r) => {
      assert.ok(close(scores[i], s), `${c.query}: rank ${r + 1} ${scores[i]} != ${s}`);
      if (scores[i] === s) exact++;
    });
  }
  assert.ok(data.queries.some((/** @type {any} */ c) => c.query_terms.some((/** @type {any} */ t) => t[1] < 1)), "no typo case");
  console.log(`bm25: ${data.queries.length} queries, ${exact} scores bit-identical`);
});

test("edit distance: optimal string alignment, capped", () => {
  assert.equal(editDistance("imputr", "imputer", 1), 1);
  assert.equal(editDistance("scalre", "scaler", 1), 1); // transposition
  assert.equal(editDistance("abcdef", "badcfe", 2), 3); // capped at limit + 1
  assert.equal(editDistance("kitten", "sitting", 3), 3);
  assert.equal(editDistance("😀abc", "😀abd", 1), 1); // code points, not UTF-16 units
  assert.deepEqual([3, 4, 7, 8].map((n) => maxTypoDistance(n)), [0, 1, 1, 2]);
  assert.equal(maxTypoDistance("😀😀😀😀"), 1);
});

test("typo candidates: nearest, then most frequent, then term order", () => {
  const vocab = ["scalar", "scale", "scaler", "scales"];
  // postings: scalar 1 doc, scale 3 docs, scaler 2 docs, scales 2 docs
  const offsets = Uint32Array.from([0, 1, 4, 6, 8]);
  const docs = Uint32Array.from([0, 0, 1, 2, 1, 2, 0, 2]);
  const impacts = Float32Array.from([1, 1, 1, 1, 1, 1, 1, 1]);
  const bm25 = new BM25Index({ vocab, n_docs: 3, avgdl: 1, k1: 1.5, b: 0.75, epsilon: 0.25 }, offsets, docs, impacts);
  assert.deepEqual(bm25.typoCandidates("scalex"), [[1, 1], [1, 2], [1, 3]]);
  assert.deepEqual(bm25.queryTerms(["scale", "sca"]), [[1, 1]]);
  assert.deepEqual(Array.from(bm25.scores(["scalex"])), [1, 1, 1.5]); // 3 near terms, weight 1/2
});
