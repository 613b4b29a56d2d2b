// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  BINARY_CANDIDATES, BINARY_FIRST_ABOVE, BINARY_FRACTION, CANDIDATES, Searcher, binaryCandidateCount,
  correctSpelling, denseCandidateScores, denseScores, hammingCandidates, modelWords, packSigns, rrfFuse, topK,
  useBinaryFirst,
} from "../src/search/retrieve.js";
import { SKIP_DEMO, demoAssetDir, fixture, localLoader } from "./helpers.js";

/** @param {number} a @param {number} b */
const close = (a, b) => Math.abs(a - b) <= 1e-6 * Math.max(Math.abs(a), Math.abs(b), 1e-12);

test("topK keeps positive scores, ties to the lower index", () => {
  assert.deepEqual(topK([0, 2, -1, 2, 3, 0.5], 3), [4, 1, 3]);
  assert.deepEqual(topK([0, -1], 5), []);
});

test("rrfFuse sums 1/(k + rank) in ranking order, times the weight", () => {
  const fused = rrfFuse([[2, 0], [0, 1]], 60, [1, 0.5, 1]);
  assert.equal(fused.get(2), 1 / 61);
  assert.equal(fused.get(0), (1 / 62 + 1 / 61) * 1);
  assert.equal(fused.get(1), (1 / 62) * 0.5);
});

test("binary pass: Hamming candidates equal a brute-force count", () => {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
  const dim = 70; // not a multiple of 32
  const n = 300;
  const vectors = Int8Array.from({ length: n * dim }, () => Math.round(rand() * 254));
  const query = Float32Array.from({ length: dim }, rand);
  const signs = packSigns(vectors, dim);
  const distance = (/** @type {number} */ i) => {
    let d = 0;
    for (let j = 0; j < dim; j++) d += (vectors[i * dim + j] > 0) !== (query[j] > 0) ? 1 : 0;
    return d;
  };
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => distance(a) - distance(b) || a - b);
  const want = order.slice(0, 50).sort((a, b) => a - b);
  assert.deepEqual(Array.from(hammingCandidates(query, signs, dim, 50)), want);
  assert.equal(binaryCandidateCount(100), 100);
  assert.equal(binaryCandidateCount(30000), Math.max(BINARY_CANDIDATES, Math.ceil(30000 / BINARY_FRACTION)));
  assert.deepEqual([useBinaryFirst(BINARY_FIRST_ABOVE), useBinaryFirst(BINARY_FIRST_ABOVE + 1)], [false, true]);
});

/** @type {Promise<any> | null} */
let demo = null;
function loadDemo() {
  demo ??= localLoader(/** @type {string} */ (demoAssetDir())).searchAssets();
  return demo;
}

test("rankings (rrf, bm25, dense) equal Python's on the demo docs", { skip: SKIP_DEMO }, async () => {
  const data = fixture("rankings.json");
  const assets = await loadDemo();
  assert.equal(assets.chunks.length, data.n_chunks, "the demo build differs from the one of the fixtures: regenerate them");
  assert.equal(data.settings.candidates, CANDIDATES);
  assert.equal(data.settings.binary_candidates, BINARY_CANDIDATES);
  assert.equal(data.settings.binary_fraction, BINARY_FRACTION);
  assert.equal(data.settings.binary_first_above, BINARY_FIRST_ABOVE);
  const searchers = Object.fromEntries(["rrf", "bm25", "dense"].map((f) => [f, new Searcher(assets, { fusion: f })]));
  assert.equal(searchers.rrf.rrfK, data.settings.rrf_k);
  assert.ok(data.queries.length >= 50);
  /** @type {string[]} */
  const failures = [];
  let identical = 0;
  let total = 0;
  for (const q of data.queries) {
    for (const fusion of ["rrf", "bm25", "dense"]) {
      total++;
      const got = searchers[fusion].search(q.query, q.vector, 10);
      const want = q[fusion];
      const sameIds = JSON.stringify(got.map((r) => r.id)) === JSON.stringify(want.map((/** @type {any} */ w) => w[0]));
      const sameIndex = got.every((r, i) => r.index === want[i][1]);
      const closeScores = got.every((r, i) => close(r.score, want[i][2]));
      const sameExpansion = JSON.stringify(got.map((r) => r.also)) === JSON.stringify(q[`${fusion}_also`]);
      if (!(sameIds && sameIndex && closeScores && sameExpansion)) failures.push(`${fusion} ${JSON.stringify(q.query)}`);
      else if (got.every((r, i) => r.score === want[i][2])) identical++;
    }
  }
  console.log(`rankings: ${total - failures.length}/${total} top-10 lists (and passage expansions) equal, ` +
    `${identical} with bit-identical scores`);
  const expanded = data.queries.filter((/** @type {any} */ q) => q.rrf_also.some((/** @type {string[]} */ a) => a.length > 0));
  assert.ok(expanded.length >= 10, `only ${expanded.length} fixture queries exercise passage expansion`);
  assert.deepEqual(failures, []);
});

test("dense: exact top-100, and binary-first gives the same candidates", { skip: SKIP_DEMO }, async () => {
  const data = fixture("rankings.json");
  const { vectors, scales, manifest } = await loadDemo();
  const dim = manifest.counts.dim;
  const signs = packSigns(vectors, dim);
  const small = data.settings.small_binary_candidates;
  for (const q of data.queries) {
    const exact = topK(denseScores(q.vector, vectors, scales, dim), CANDIDATES);
    assert.deepEqual(exact, q.dense_top100, q.query);
    const binary = topK(denseCandidateScores(q.vector, vectors, scales, dim, { binaryFirst: true, signs }), CANDIDATES);
    assert.deepEqual(binary, exact, `binary-first (default candidates) differs from exact: ${q.query}`);
    const coarse = denseCandidateScores(q.vector, vectors, scales, dim, { binaryFirst: true, signs, binaryCandidates: small });
    assert.deepEqual(topK(coarse, CANDIDATES), q.binary_top100, `binary-first with ${small} candidates: ${q.query}`);
  }
});

test("keywordSearch needs no vectors; hybridSearch falls back to it", { skip: SKIP_DEMO }, async () => {
  const { manifest, chunks, bm25 } = await localLoader(/** @type {string} */ (demoAssetDir())).keyword();
  const searcher = new Searcher({ manifest, chunks, bm25 });
  const results = searcher.keywordSearch("SimpleImputer fill_value", 5);
  assert.equal(results.length, 5);
  assert.deepEqual(Object.keys(results[0]).sort(), ["also", "id", "index", "kind", "rank", "score", "text", "title", "url"]);
  assert.deepEqual(results.map((r) => r.rank), [1, 2, 3, 4, 5]);
  assert.deepEqual(searcher.hybridSearch("SimpleImputer fill_value", null, 5), results);
  assert.throws(() => new Searcher({ manifest, chunks, bm25 }, { fusion: "hybrid" }), /sphinx-rag: fusion must be one of/);
});

test("spelling correction of the embedded query equals Python's", { skip: SKIP_DEMO }, async () => {
  const data = fixture("rankings.json");
  const assets = await loadDemo();
  const { readFileSync } = await import("node:fs");
  const { join } = await import("node:path");
  const words = modelWords(readFileSync(join(/** @type {string} */ (demoAssetDir()), "model", "vocab.txt"), "utf8"));
  let corrected = 0;
  for (const c of data.queries) {
    const got = correctSpelling(c.query, assets.bm25, words);
    assert.equal(got, c.embedding_query, c.query);
    if (got !== c.query) corrected++;
  }
  assert.ok(corrected >= 3, `only ${corrected} fixture queries exercise the correction`);
});
