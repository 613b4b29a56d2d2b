// The reranking stage's own cost in the browser's code (js/src/search/rerank.js), apart
// from the index: a fused map of 200 candidates (two top-100 rankings, the most a query
// fuses at any corpus size) whose kinds are in memory (their text shards are loaded: the
// passages need those of the top 20 anyway). Prints the median and p95 per query, for a
// question that asks for an object (the stage runs) and one that does not (a regex test).
//
//     node benchmarks/bench_rerank.mjs
import { performance } from "node:perf_hooks";

import { rerank } from "../js/src/search/rerank.js";

const fused = new Map();
for (let i = 0; i < 200; i++) fused.set(i * 997 % 200003, 1 / (61 + (i % 100)) + (i < 100 ? 1 / (61 + i) : 0));
const weights = new Float64Array(200003).fill(1);
const kind = async (/** @type {number} */ i) => (i % 3 === 0 ? "api" : "guide");

/** @param {string} query */
async function time(query, runs = 2000) {
  const ms = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    await rerank(query, fused, kind, weights, 60);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(runs / 2)], p95: ms[Math.floor(runs * 0.95)] };
}

for (const q of ["Which class rescales features to zero mean?", "How do I rescale features to zero mean?"]) {
  const { p50, p95 } = await time(q);
  console.log(`${JSON.stringify(q)}: p50 ${(p50 * 1000).toFixed(1)} us, p95 ${(p95 * 1000).toFixed(1)} us`);
}
