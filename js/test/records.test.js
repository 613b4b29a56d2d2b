// @ts-check
// js/src/search/validate.js drops the records Python's sphinx_rag.search.checks drops, for the
// same reason, and counts them in the same words (tests/fixtures/records.json, written by
// tests/fixtures/generate.py); dense.js refuses the scales Python refuses and clamps scores
// to [-1, 1] as Python does (issue 42).
import assert from "node:assert/strict";
import { test } from "node:test";

import { clusterScores, denseScores, readCentroidShard, readClusterShard, scalesProblem } from "../src/search/dense.js";
import { checkTextShard, invalidRecords, recordProblem, urlUnder } from "../src/search/validate.js";
import { fixture } from "./helpers.js";

test("recordProblem gives Python's verdict and words for every record", () => {
  const { records } = fixture("records.json");
  assert.ok(records.length >= 25 && records.some((/** @type {any} */ c) => c.problem === null));
  for (const c of records) assert.equal(recordProblem(c.record, c.i, c.n, c.root), c.problem, c.name);
});

test("urlUnder gives Python's url_under for every URL", () => {
  const { urls } = fixture("records.json");
  assert.ok(urls.length >= 100 && urls.some((/** @type {any} */ c) => c.under) && urls.some((/** @type {any} */ c) => !c.under));
  for (const c of urls) assert.equal(urlUnder(c.url, c.root), c.under, `${JSON.stringify(c.url)} under ${c.root}`);
});

test("invalidRecords counts as Python's invalid_records", () => {
  for (const c of fixture("records.json").lines) assert.equal(invalidRecords(c.dropped, c.read, c.total), c.line);
});

test("a text shard's bad records are dropped with their problem, the others kept", () => {
  const { records } = fixture("records.json");
  // every record checked as chunk 1 of 4, as the fixture did: a shard holding only it
  for (const c of records) {
    const { records: out, dropped } = checkTextShard({ first: 1, chunks: [c.record] }, 1, 1, 4, "texts-x.js", c.root);
    assert.equal(dropped, c.problem === null ? 0 : 1, c.name);
    assert.equal(out[0].problem, c.problem ?? undefined, c.name);
    if (c.problem !== null) assert.equal(out[0].url, "", c.name);
  }
});

/** A cluster shard of count vectors of dim 2: u32 count | u32 ids | f32 scales | int8 vectors. @param {number[]} scales */
function clusterShard(scales) {
  const count = scales.length;
  const bytes = new Uint8Array(4 + 8 * count + 2 * count);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, count, true);
  scales.forEach((s, r) => {
    view.setUint32(4 + 4 * r, r, true);
    view.setFloat32(4 + 4 * count + 4 * r, s, true);
    view.setInt8(4 + 8 * count + 2 * r, 64);
  });
  return bytes;
}

test("scales that are not finite numbers >= 0 are refused with their shard; scores are cosines", () => {
  assert.equal(scalesProblem(new Float32Array([0.01, 0, 1e-3])), null);
  for (const bad of [Infinity, -Infinity, NaN]) {
    assert.equal(scalesProblem(new Float32Array([0.01, bad])), "scales that are not finite numbers");
    assert.throws(() => readClusterShard(clusterShard([0.01, bad]), 2), /a cluster shard with scales that are not finite numbers/);
  }
  assert.throws(() => readClusterShard(clusterShard([-0.01]), 2), /negative scales/);
  const centroids = new Uint8Array(4 + 4 + 2);
  new DataView(centroids.buffer).setUint32(0, 1, true);
  new DataView(centroids.buffer).setFloat32(4, Infinity, true);
  assert.throws(() => readCentroidShard(centroids, 2), /a centroid shard with scales that are not finite numbers/);
  // a scale that claims a cosine of a million scores 1 (a unit vector's cosine is at most 1)
  const cluster = readClusterShard(clusterShard([1e6 / 64, 2 ** -6, 2 ** -7]), 2); // 64 x scale: 1e6, 1, 0.5
  assert.deepEqual([...denseScores([1, 0], cluster.vectors, cluster.scales, 2)], [1, 1, 0.5]);
  assert.deepEqual([...denseScores([-1, 0], cluster.vectors, cluster.scales, 2)], [-1, -1, -0.5]);
  assert.deepEqual([...clusterScores([1, 0], [cluster], 2).scores], [1, 1, 0.5]);
});
