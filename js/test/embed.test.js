// @ts-check
// onnxruntime-web runs in Node too: embed the rankings queries and compare with the
// vectors Python's Embedder produced (tests/fixtures/rankings.json).
import assert from "node:assert/strict";
import { test } from "node:test";

import { Embedder } from "../src/search/embed.js";
import { Searcher } from "../src/search/retrieve.js";
import { SKIP_DEMO, demoIndexDir, fixture, openIndex } from "./helpers.js";

/** @param {ArrayLike<number>} a @param {ArrayLike<number>} b */
function cosine(a, b) {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return ab / Math.sqrt(aa * bb);
}

test("query vectors equal the Python Embedder's (cosine >= 0.99999)", { skip: SKIP_DEMO, timeout: 300_000 }, async () => {
  const ort = await import("onnxruntime-web");
  const { index, source } = await openIndex(/** @type {string} */ (demoIndexDir()));
  const files = /** @type {NonNullable<Awaited<ReturnType<typeof source.model>>>} */ (await source.model());
  const embedder = await Embedder.create(ort, { ...files, numThreads: 1 });
  const data = fixture("rankings.json");
  const searcher = new Searcher(index);
  let worst = 1;
  let sameTop10 = 0;
  const started = performance.now();
  for (const q of data.queries) {
    const vector = await embedder.embed(q.embedding_query); // the spelling-corrected query, as the worker embeds
    assert.equal(vector.length, data.dim);
    const cos = cosine(vector, q.vector);
    worst = Math.min(worst, cos);
    assert.ok(cos >= 0.99999, `${JSON.stringify(q.query)}: cosine ${cos}`);
    const ids = (await searcher.hybridSearch(q.query, vector, 10)).map((r) => r.id);
    if (JSON.stringify(ids) === JSON.stringify(q.rrf.map((/** @type {any} */ r) => r[0]))) sameTop10++;
  }
  const ms = (performance.now() - started) / data.queries.length;
  console.log(`embed: ${data.queries.length} queries, min cosine ${worst.toFixed(8)}, ${ms.toFixed(1)} ms/query; ` +
    `end to end (JS vector) rrf top-10 equal to Python's: ${sameTop10}/${data.queries.length}`);
  await embedder.release();
});
