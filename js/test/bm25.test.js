// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  editDistance, expandTokens, keywordScores, maxTypoDistance, nearLengths, readTermShard, typoCandidates,
} from "../src/search/bm25.js";
import { tokenize } from "../src/search/lexical.js";
import { topK } from "../src/search/retrieve.js";
import { SKIP_DEMO, demoIndexDir, fixture, openIndex } from "./helpers.js";

test("tokens, expansions (typos) and top-20 keyword scores equal Python's, bit for bit", { skip: SKIP_DEMO }, async () => {
  const data = fixture("bm25.json");
  const { index } = await openIndex(/** @type {string} */ (demoIndexDir()));
  assert.equal(index.nChunks, data.n_docs, "the demo build differs from the one of the fixtures: regenerate them");
  assert.equal(index.manifest.counts.vocab, data.vocab_size);
  for (const c of data.queries) {
    const tokens = tokenize(c.query);
    assert.deepEqual(tokens, c.tokens, c.query);
    const expansions = await expandTokens(tokens, (t) => index.postings(t), (t) => index.near(t));
    assert.deepEqual([...expansions].map(([t, ex]) => [t, ex.map(([p, w]) => [p.term, w])]), c.expansions, c.query);
    const scores = keywordScores(index.nChunks, tokens, expansions);
    assert.deepEqual(topK(scores, 20), c.top.map((/** @type {number[]} */ x) => x[0]), c.query);
    c.top.forEach((/** @type {[number, number]} */ [i, s]) => assert.equal(scores[i], s, c.query));
  }
  const typos = data.queries.filter((/** @type {any} */ c) => c.expansions.some((/** @type {any} */ e) => e[1].some((/** @type {any} */ t) => t[1] < 1)));
  assert.ok(typos.length >= 5, "too few typo cases");
});

test("edit distance: optimal string alignment, capped", () => {
  assert.equal(editDistance("imputr", "imputer", 1), 1);
  assert.equal(editDistance("scalre", "scaler", 1), 1); // transposition
  assert.equal(editDistance("abcdef", "badcfe", 2), 3); // capped at limit + 1
  assert.equal(editDistance("kitten", "sitting", 3), 3);
  assert.equal(editDistance("😀abc", "😀abd", 1), 1); // code points, not UTF-16 units
  assert.deepEqual([3, 4, 7, 8].map((n) => maxTypoDistance(n)), [0, 1, 1, 2]);
  assert.equal(maxTypoDistance("😀😀😀😀"), 1);
  assert.deepEqual([nearLengths("abc"), nearLengths("scalex"), nearLengths("classifer")], [null, [5, 7], [7, 11]]);
});

test("typo candidates: nearest, then most frequent, then term order", () => {
  const vocab = /** @type {Array<[string, number]>} */ ([["scales", 2], ["scaler", 2], ["scalar", 1], ["scale", 3]]);
  assert.deepEqual(typoCandidates("scalex", vocab), [[1, "scale"], [1, "scaler"], [1, "scales"]]);
  assert.deepEqual(typoCandidates("sca", vocab), []);
});

test("a term shard decodes its varint gaps and one-byte impacts", () => {
  const header = new TextEncoder().encode(JSON.stringify({ terms: ["a", "b"], df: [9, 1], count: [2, 1], scale: [0.5, 2] }));
  const payload = new Uint8Array(4 + header.length + 7);
  new DataView(payload.buffer).setUint32(0, header.length, true);
  payload.set(header, 4);
  // gaps of "a": 3, then 200 (varint [0xc8, 0x01]): chunks 3 and 203; of "b": 5; then the impact bytes
  payload.set([3, 0xc8, 0x01, 5, 10, 20, 30], 4 + header.length);
  const table = readTermShard(payload);
  assert.deepEqual(Array.from(/** @type {any} */ (table.get("a")).docs), [3, 203]);
  assert.deepEqual(Array.from(/** @type {any} */ (table.get("a")).impacts), [5, 10]);
  assert.deepEqual(Array.from(/** @type {any} */ (table.get("b")).docs), [5]);
  assert.deepEqual(Array.from(/** @type {any} */ (table.get("b")).impacts), [60]);
  assert.equal(/** @type {any} */ (table.get("b")).df, 1);
});
