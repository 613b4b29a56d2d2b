// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";

import { CANDIDATES, DENSE_VOTE, MAX_QUERY_CHARS, Searcher, clipQuery, correctSpelling, modelWords, rrfFuse, topK }
  from "../src/search/retrieve.js";
import { RERANK_DEPTH, asksForObject, rerank } from "../src/search/rerank.js";
import { SKIP_DEMO, SKIP_LONG, SKIP_SMALL, demoIndexDir, fixture, longPages, openIndex, readFixture, smallIndexDir } from "./helpers.js";

test("clipQuery keeps the first MAX_QUERY_CHARS code points, as retrieve.py's clip_query", () => {
  assert.equal(MAX_QUERY_CHARS, fixture("rankings.json").settings.max_query_chars); // Python's
  assert.equal(clipQuery("short query"), "short query");
  const astral = "\u{1F600}".repeat(MAX_QUERY_CHARS + 5); // two UTF-16 units each: cut by code points
  assert.equal([...clipQuery(astral)].length, MAX_QUERY_CHARS);
  assert.equal(clipQuery("word ".repeat(30000)).length, MAX_QUERY_CHARS);
});

test("topK keeps positive scores, ties to the lower index", () => {
  assert.deepEqual(topK([0, 2, -1, 2, 3, 0.5], 3), [4, 1, 3]);
  assert.deepEqual(topK([0, -1], 5), []);
});

test("rrfFuse sums 1/(k + rank) in ranking order, times the weight", () => {
  const fused = rrfFuse([[2, 0], [0, 1]], 60, [1, 0.5, 1]);
  assert.equal(fused.get(2), 1 / 61);
  assert.equal(fused.get(0), (1 / 62 + 1 / 61) * 1);
  assert.equal(fused.get(1), (1 / 62) * 0.5);
  // each ranking's vote (the static encoder's dense ranking: DENSE_VOTE.static)
  const voted = rrfFuse([[2, 0], [0, 1]], 60, [1, 0.5, 1], [1.0, DENSE_VOTE.static]);
  assert.equal(voted.get(0), (1 / 62 + DENSE_VOTE.static / 61) * 1);
  assert.equal(voted.get(1), (DENSE_VOTE.static / 62) * 0.5);
});

/**
 * Every query's top-10 (ids, chunk indices, scores bit for bit, passage expansions) and
 * dense top-100 for each fusion, over the index in `dir`, against Python's `data`.
 * @param {string} dir
 * @param {any} data
 */
async function compareRankings(dir, data) {
  const { index } = await openIndex(dir);
  assert.equal(index.nChunks, data.n_chunks, "the index differs from the one of the fixtures: regenerate them");
  assert.deepEqual(index.manifest.layout, data.settings.layout);
  assert.equal(data.settings.candidates, CANDIDATES);
  const searchers = Object.fromEntries(["rrf", "bm25", "dense"].map((f) => [f, new Searcher(index, { fusion: f })]));
  assert.equal(searchers.rrf.rrfK, data.settings.rrf_k);
  assert.ok(data.queries.length >= 50);
  /** @type {string[]} */
  const failures = [];
  for (const q of data.queries) {
    for (const fusion of ["rrf", "bm25", "dense"]) {
      const got = await searchers[fusion].search(q.query, q.vector, 10);
      const want = q[fusion];
      const same = got.length === want.length && got.every((r, i) =>
        r.id === want[i][0] && r.index === want[i][1] && r.score === want[i][2]);
      const sameExpansion = JSON.stringify(got.map((r) => r.also)) === JSON.stringify(q[`${fusion}_also`]);
      if (!(same && sameExpansion)) failures.push(`${fusion} ${JSON.stringify(q.query)}`);
      const weak = await searchers[fusion].weakMatch(q.query, fusion === "bm25" ? null : q.vector);
      if (weak !== q[`${fusion}_weak`]) failures.push(`weak ${fusion} ${JSON.stringify(q.query)}`);
      if (fusion === "rrf" && q.rrf_similarity) { // each hit's cosine (merge.js compares it across sites)
        const similar = got.every((r, i) => Math.abs(/** @type {number} */ (r.similarity) - q.rrf_similarity[i]) < 2e-6);
        if (!similar) failures.push(`similarity ${JSON.stringify(q.query)}`);
      }
      if (fusion === "bm25" && got.some((r) => r.similarity !== null)) failures.push(`bm25 similarity ${q.query}`);
    }
    if (q.rrf_budget) { // passages sized to a budget (expand.js)
      const sized = (await searchers.rrf.searchWithMatch(q.query, q.vector, 10, "rrf", "model", data.settings.budget)).results;
      if (JSON.stringify(sized.map((r) => [r.index, r.also])) !== JSON.stringify(q.rrf_budget)) {
        failures.push(`rrf with a budget ${JSON.stringify(q.query)}`);
      }
    }
    const dense = topK(await searchers.rrf.denseScores(q.vector), CANDIDATES);
    if (JSON.stringify(dense) !== JSON.stringify(q.dense_top100)) failures.push(`dense top-100 ${JSON.stringify(q.query)}`);
    const hits = topK(await searchers.rrf.bm25Scores(q.query), CANDIDATES);
    const guided = topK(searchers.rrf.spread(await searchers.rrf.denseCandidates(q.vector, hits)), CANDIDATES);
    if (JSON.stringify(guided) !== JSON.stringify(q.guided_dense_top100)) failures.push(`guided dense top-100 ${JSON.stringify(q.query)}`);
  }
  assert.deepEqual(failures, []);
  return index;
}

test("rankings (rrf, bm25, dense) equal Python's on the demo, bit for bit", { skip: SKIP_DEMO }, async () => {
  const data = fixture("rankings.json");
  await compareRankings(/** @type {string} */ (demoIndexDir()), data);
  assert.ok(data.queries.some((/** @type {any} */ q) => q.rrf_weak) && data.queries.some((/** @type {any} */ q) => !q.rrf_weak));
  const expanded = data.queries.filter((/** @type {any} */ q) => q.rrf_also.some((/** @type {string[]} */ a) => a.length > 0));
  assert.ok(expanded.length >= 10, `only ${expanded.length} fixture queries exercise passage expansion`);
  // API chunks join a passage only as an object's card and parts (expand.js objectPassage)
  const objects = data.queries.filter((/** @type {any} */ q) => q.rrf.some(
    (/** @type {any[]} */ [id], /** @type {number} */ n) => id.includes("#mlkit.") && q.rrf_also[n].length > 0));
  assert.ok(objects.length >= 5, `only ${objects.length} fixture queries exercise object passages`);
  const sized = data.queries.filter((/** @type {any} */ q) => q.rrf_budget &&
    JSON.stringify(q.rrf_budget.map((/** @type {any[]} */ [, also]) => also)) !== JSON.stringify(q.rrf_also));
  assert.ok(sized.length >= 10, `only ${sized.length} fixture queries have passages the budget changes`);
});

test("the same on the demo cut into many small shards (head cuts, probed clusters)", { skip: SKIP_SMALL }, async () => {
  const dir = /** @type {string} */ (smallIndexDir());
  const data = readFixture(join(dirname(dir), "rankings.json"));
  const index = await compareRankings(dir, data);
  assert.ok(index.clusterSizes.length > 10);
  const approximate = data.queries.filter((/** @type {any} */ q) => JSON.stringify(q.dense_top100) !== JSON.stringify(q.exact_dense_top100));
  assert.ok(approximate.length > 0, "no query where probing changes the dense candidates");
  const guided = data.queries.filter((/** @type {any} */ q) => JSON.stringify(q.guided_dense_top100) !== JSON.stringify(q.dense_top100));
  assert.ok(guided.length > 0, "no query where the keyword hits change the probed clusters");
  // a guided cluster that would take the probe past its budget is skipped
  const hits = topK(await new Searcher(index).bm25Scores(data.queries[0].query), CANDIDATES);
  const own = /** @type {number} */ (await index.clusterOf(hits[0]));
  const tight = new Searcher(index, { fusion: "rrf", probe: index.clusterSizes[own] });
  assert.deepEqual(await tight.guidedClusters(hits), [own]);
});

test("keywordSearch needs no vectors; hybridSearch falls back to it", { skip: SKIP_DEMO }, async () => {
  const { index } = await openIndex(/** @type {string} */ (demoIndexDir()));
  const searcher = new Searcher(index);
  const results = await searcher.keywordSearch("SimpleImputer fill_value", 5);
  assert.equal(results.length, 5);
  assert.deepEqual(Object.keys(results[0]).sort(), ["also", "display", "id", "index", "kind", "rank", "score", "similarity", "text", "title", "url"]);
  assert.ok(results.every((r) => r.similarity === null)); // keywords alone: no cosine
  assert.deepEqual(results.map((r) => r.rank), [1, 2, 3, 4, 5]);
  assert.deepEqual(await searcher.hybridSearch("SimpleImputer fill_value", null, 5), results);
  assert.throws(() => new Searcher(index, { fusion: "hybrid" }), /sphinx-rag: fusion must be one of/);
});

test("spelling correction of the embedded query equals Python's", { skip: SKIP_DEMO }, async () => {
  const data = fixture("rankings.json");
  const dir = /** @type {string} */ (demoIndexDir());
  const { index } = await openIndex(dir);
  const words = modelWords(readFileSync(join(dir, index.manifest.model_files.dir, "vocab.txt"), "utf8"));
  let corrected = 0;
  for (const c of data.queries) {
    const got = await correctSpelling(c.query, index, words);
    assert.equal(got, c.embedding_query, c.query);
    if (got !== c.query) corrected++;
  }
  assert.ok(corrected >= 3, `only ${corrected} fixture queries exercise the correction`);
});

test("the reranking stage reads the question's form as Python does", () => {
  const data = fixture("rankings.json");
  const wrong = data.asks_for_object.filter((/** @type {[string, boolean]} */ [q, want]) => asksForObject(q) !== want);
  assert.deepEqual(wrong, []);
  assert.ok(data.asks_for_object.filter((/** @type {[string, boolean]} */ [, want]) => want).length >= 10);
});

test("rerank gives the API candidates of the fused top one more vote", async () => {
  const fused = new Map([[0, 0.04], [1, 0.03], [2, 0.02], [3, 0.01]]);
  const kinds = ["guide", "api", "guide", "api"];
  const out = await rerank("Which class does it?", fused, async (i) => kinds[i], [1, 1, 1, 0.5], 60);
  assert.equal(out.get(1), 0.03 + (1.0 / 61) * 1);
  assert.equal(out.get(3), 0.01 + (1.0 / 61) * 0.5);
  assert.equal(out.get(0), 0.04);
  assert.equal(await rerank("how does it work", fused, async () => "api", [1, 1, 1, 1], 60), fused);
  const many = new Map(Array.from({ length: RERANK_DEPTH + 5 }, (_, i) => [i, 1 / (10 + i)]));
  const deep = await rerank("which function", many, async () => "api", new Array(many.size).fill(1), 60);
  assert.equal([...many.keys()].filter((i) => deep.get(i) !== many.get(i)).length, RERANK_DEPTH);
});

test("frugalProbe: a quarter of the layout's probe, as Python's frugal_probe", async () => {
  const { FRUGAL_PROBE_SHARE, frugalProbe } = await import("../src/search/retrieve.js");
  assert.equal(FRUGAL_PROBE_SHARE, 4);
  assert.deepEqual([4096, 150, 3].map(frugalProbe), [1024, 37, 1]);
});

test("a name written once on long pages ranks first, as in Python, bit for bit", { skip: SKIP_LONG }, async () => {
  // tests/roots/test-longpages: lines of a 20,000-line code block, keys of a 5,000-row table,
  // code names in 2,000 sections; alone and in a sentence, with the model's vector, the static
  // encoder's and keywords alone (Python's decisive_hits: an identifier in at most two chunks
  // comes first)
  const { dir, rankings } = /** @type {{dir: string, rankings: string}} */ (longPages());
  const data = readFixture(rankings);
  const { index } = await openIndex(dir);
  assert.equal(index.nChunks, data.n_chunks);
  const searcher = new Searcher(index, { fusion: "rrf" });
  assert.equal(data.queries.length, 80);
  /** @type {string[]} */
  const failures = [];
  for (const q of data.queries) {
    for (const [key, vector, encoder] of /** @type {const} */ ([["rrf", q.vector, "model"], ["rrf_static", q.static_vector, "static"], ["bm25", null, "model"]])) {
      const got = await searcher.search(q.query, vector, 10, key === "bm25" ? "bm25" : "rrf", encoder);
      const same = got.length === q[key].length && got.every((r, i) =>
        r.id === q[key][i][0] && r.index === q[key][i][1] && r.score === q[key][i][2]);
      if (!same) failures.push(`${key} differs from Python: ${q.query}`);
      if (!new RegExp(`\\b${q.name}\\b`).test(got[0]?.text ?? "")) failures.push(`${key} first passage lacks ${q.name}: ${q.query}`);
    }
  }
  assert.deepEqual(failures, []);
});
