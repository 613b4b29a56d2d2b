// @ts-check
// The allocation-free scoring paths (sparse candidates, top-k selection, blocked dot
// products) against the plain definitions they replace: same values, bit for bit.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Scratch, keywordCandidates, keywordScores, mostExactTokens } from "../src/search/bm25.js";
import { clusterScores, denseScores } from "../src/search/dense.js";
import { topCandidates, topK } from "../src/search/retrieve.js";

/** A deterministic pseudo-random generator (mulberry32). @param {number} seed */
function random(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** topK by its definition: every positive score sorted by (-score, index). @param {number[]} s @param {number} k */
function plainTopK(s, k) {
  const c = s.map((_, i) => i).filter((i) => s[i] > 0);
  c.sort((a, b) => (s[a] > s[b] ? -1 : s[a] < s[b] ? 1 : a - b));
  return c.slice(0, k);
}

test("topK selects exactly the first k of a full sort (ties, negatives, k past the positives)", () => {
  const rand = random(7);
  for (let trial = 0; trial < 200; trial++) {
    const n = Math.floor(rand() * 400);
    // few distinct values: many ties at the k-th place
    const scores = Array.from({ length: n }, () => Math.floor(rand() * 12) - 3 + (rand() < 0.1 ? 0.5 : 0));
    for (const k of [0, 1, 5, 100, n, n + 3]) assert.deepEqual(topK(scores, k), plainTopK(scores, k), `n=${n} k=${k}`);
  }
  assert.deepEqual(topK([Number.MIN_VALUE, 0, -0, NaN, 1], 5), [4, 0]);
});

test("topCandidates ranks candidate ids as topK ranks the spread-out scores", () => {
  const rand = random(11);
  for (let trial = 0; trial < 100; trial++) {
    const n = 300;
    const dense = new Array(n).fill(0);
    const ids = [...new Set(Array.from({ length: 120 }, () => Math.floor(rand() * n)))].sort(() => rand() - 0.5);
    const scores = new Float64Array(ids.length);
    ids.forEach((id, r) => { scores[r] = dense[id] = Math.floor(rand() * 6) - 1; });
    const candidates = { ids: Uint32Array.from(ids), scores };
    for (const k of [1, 10, 100, 200]) assert.deepEqual(topCandidates(candidates, k), topK(dense, k));
  }
});

test("keyword candidates: Python's keyword_scores over the chunks reached; the scratch is left clean", () => {
  const nDocs = 50;
  /** @param {string} term @param {number[]} docs @param {number[]} impacts */
  const postings = (term, docs, impacts) => ({ term, df: docs.length, docs: Float64Array.from(docs), impacts: Float64Array.from(impacts) });
  const a = postings("a", [1, 4, 9], [0.5, 1.25, 2]);
  const b = postings("b", [4, 7], [0.1, 3]);
  const c1 = postings("c1", [7, 9, 20], [1, 1, 1]);
  const c2 = postings("c2", [9, 30], [2, 0.3]);
  /** @type {Map<string, import("../src/search/bm25.js").Expansion>} */
  const expansions = new Map([["a", [[a, 1]]], ["b", [[b, 1]]], ["c", [[c1, 0.5], [c2, 1 / 3]]], ["zz", []]]);
  const tokens = ["a", "b", "a", "c", "zz"];
  const scratch = new Scratch(nDocs);
  // the definition: BM25 (every token, repeats too) times the share of known distinct tokens held
  const want = new Float64Array(nDocs);
  const hits = new Float64Array(nDocs);
  for (const t of tokens) for (const [p, w] of /** @type {any} */ (expansions.get(t))) p.docs.forEach((d, j) => { want[d] += w * p.impacts[j]; });
  for (const t of ["a", "b", "c"]) {
    const has = new Set();
    for (const [p] of /** @type {any} */ (expansions.get(t))) p.docs.forEach((d) => has.add(d));
    for (const d of has) hits[d] += 1;
  }
  for (let i = 0; i < nDocs; i++) want[i] *= hits[i] / 3;
  for (let round = 0; round < 3; round++) { // the same scratch again: the same answer
    const { ids, scores } = keywordCandidates(tokens, expansions, scratch);
    assert.deepEqual([...ids].sort((x, y) => x - y), [1, 4, 7, 9, 20, 30]);
    ids.forEach((d, r) => assert.equal(scores[r], want[d]));
    assert.deepEqual(keywordScores(nDocs, tokens, expansions, scratch), want);
  }
  assert.ok(scratch.sum.every((x) => x === 0) && scratch.count.every((x) => x === 0));
  assert.equal(mostExactTokens(["a", "b", "c", "zz"], expansions, scratch), 2); // chunk 4 has a and b; c is a typo match
  assert.ok(scratch.count.every((x) => x === 0));
  assert.deepEqual(keywordCandidates(["zz"], expansions, scratch).ids.length, 0);
});

test("dense scores: each row summed over the dimensions in order, whatever the row count", () => {
  const rand = random(3);
  for (const [rows, dim] of [[1, 5], [4, 8], [7, 13], [9, 384]]) {
    const vectors = Int8Array.from({ length: rows * dim }, () => Math.floor(rand() * 255) - 127);
    const scales = Float32Array.from({ length: rows }, () => rand() / 50);
    const query = Array.from({ length: dim }, () => rand() - 0.5);
    const want = new Float64Array(rows);
    for (let r = 0; r < rows; r++) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += vectors[r * dim + j] * Math.fround(query[j]);
      want[r] = Math.min(1, Math.max(-1, s * scales[r])); // a cosine: clamped to [-1, 1] (these vectors are not unit)
    }
    assert.deepEqual(denseScores(query, vectors, scales, dim), want);
    const ids = Uint32Array.from({ length: rows }, (_, r) => 100 + r);
    const half = Math.floor(rows / 2);
    const clusters = [
      { ids: ids.subarray(0, half), scales: scales.subarray(0, half), vectors: vectors.subarray(0, half * dim) },
      { ids: ids.subarray(half), scales: scales.subarray(half), vectors: vectors.subarray(half * dim) },
    ];
    const got = clusterScores(query, clusters, dim);
    assert.deepEqual([...got.ids], [...ids]);
    assert.deepEqual(got.scores, want);
  }
});
