// @ts-check
// The guarded reads of an index (js/src/worker/loader.js guardedFetch, shards.js gunzip) and
// the checks of its files (js/src/search/validate.js), with fetches written here that
// redirect, trickle, send endless bodies and gzip bombs under a matching hash.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

import { FORMAT_VERSION, IndexReader, checkFormat } from "../src/search/index.js";
import { FILE_CEILING, ShardError, TooLarge, gunzip, readVarints } from "../src/search/shards.js";
import {
  IndexInvalid, JSON_CEILING, MAX_CHUNKS, checkDenseDirectory, checkDirectory, checkTextShard, shardLimit,
} from "../src/search/validate.js";
import { HttpSource, MANIFEST_BYTES, RedirectRefused, guardedFetch } from "../src/worker/loader.js";

const HASH = "0123456789abcdef";

/** A well-formed keyword-only manifest, with `edit` applied. @param {(m: any) => void} [edit] */
function manifest(edit = () => {}) {
  const m = {
    format_version: FORMAT_VERSION, counts: { chunks: 3, dim: 0, vocab: 2 }, model: null, dense: null, model_files: null,
    encoder: null, layout: { texts_per_shard: 2, probe: 4096 }, dir: `dir-${HASH}.js`, near: [[2, 5, `near-${HASH}.js`]],
    settings: { fusion: "rrf", rrf_k: 60 },
  };
  edit(m);
  return m;
}

/**
 * A Response as fetch gives it, `url` being where it came from (after redirects).
 * @param {BodyInit | null} body @param {{url?: string, status?: number, headers?: Record<string, string>}} [how]
 */
function response(body, { url = "", status = 200, headers = {} } = {}) {
  const r = new Response(body, { status, headers });
  Object.defineProperty(r, "url", { value: url });
  Object.defineProperty(r, "redirected", { value: url !== "" });
  return r;
}

/** A body that sends `chunk` every `ms` milliseconds, forever or `times` times; `cancelled` says whether the reader gave up. */
function trickle(chunk, ms, times = Infinity) {
  const state = { cancelled: false, sent: 0 };
  const stream = new ReadableStream({
    async pull(controller) {
      if (state.sent >= times) return controller.close();
      await new Promise((r) => setTimeout(r, ms));
      state.sent++;
      controller.enqueue(chunk);
    },
    cancel() { state.cancelled = true; },
  });
  return { stream, state };
}

/** gzip of `n` zero bytes, streamed (a bomb: 1 KB per MB). @param {number} n */
function bomb(n) {
  return gzipSync(Buffer.alloc(n), { level: 9 });
}

test("a response from another origin (a redirect) is refused, naming that origin; the same origin is fine", async () => {
  const asked = "https://docs.example/_static/sphinx_rag/index/manifest.json";
  const away = /** @type {any} */ (async () => response("{}", { url: "http://127.0.0.1:9/manifest.json" }));
  await assert.rejects(guardedFetch(away, asked, { maxBytes: 100 }),
    (err) => err instanceof RedirectRefused && err.message === `sphinx-rag: ${asked} redirects to http://127.0.0.1:9, another origin: refused`);
  const port = /** @type {any} */ (async () => response("{}", { url: "https://docs.example:8443/x.json" }));
  await assert.rejects(guardedFetch(port, asked, { maxBytes: 100 }), RedirectRefused); // another port: another origin
  const same = /** @type {any} */ (async () => response("{}", { url: "https://docs.example/elsewhere/manifest.json" }));
  assert.deepEqual((await guardedFetch(same, asked, { maxBytes: 100 })).bytes, new TextEncoder().encode("{}"));
  // the manifest of a site that redirects is refused too (not read from the other origin)
  const source = new HttpSource("https://docs.example/_static/sphinx_rag/index/", { fetch: away, caches: null });
  await assert.rejects(source.manifest(), /redirects to http:\/\/127\.0\.0\.1:9, another origin: refused/);
});

test("a body over its cap is refused: by its Content-Length, and an endless one while it streams", async () => {
  const declared = /** @type {any} */ (async () => response("x".repeat(10), { headers: { "content-length": "200000000" } }));
  await assert.rejects(guardedFetch(declared, "https://a.test/f.bin", { maxBytes: 1000 }),
    (err) => err instanceof TooLarge && /f\.bin is larger than its index allows \(over 1 KB\): refused/.test(err.message));
  const endless = trickle(new Uint8Array(64 << 10), 0);
  const fetchFn = /** @type {any} */ (async () => response(endless.stream));
  await assert.rejects(guardedFetch(fetchFn, "https://a.test/f.bin", { maxBytes: 1 << 20 }), TooLarge);
  assert.ok(endless.state.cancelled, "the stream is cancelled");
  assert.ok(endless.state.sent <= 18, `read ${endless.state.sent} chunks of 64 KB for a cap of 1 MB`);
});

test("the deadline covers the body: a server trickling a byte at a time is given up, whatever fetch does with the signal", async () => {
  const slow = trickle(Uint8Array.of(32), 50);
  const deaf = /** @type {any} */ (async () => response(slow.stream)); // headers at once, then a byte every 50 ms
  const started = Date.now();
  await assert.rejects(guardedFetch(deaf, "https://a.test/manifest.json", { maxBytes: 1 << 20, deadlineMs: 300 }),
    (err) => /** @type {any} */ (err).name === "TimeoutError");
  assert.ok(Date.now() - started < 5000);
  assert.ok(slow.state.cancelled);
  // a federated site's manifest that trickles is "no answer", not "damaged"
  const again = trickle(Uint8Array.of(32), 50);
  const source = new HttpSource("https://a.test/i/", { fetch: /** @type {any} */ (async () => response(again.stream)), caches: null, deadlineMs: 300 });
  await assert.rejects(source.manifest(), (err) => /** @type {any} */ (err).name === "TimeoutError");
});

test("a query's total: a site's reads between two newQuery() calls stop at queryBytes", async () => {
  const body = new Uint8Array(600 << 10);
  const fetchFn = /** @type {any} */ (async () => response(body));
  const budget = { left: 1 << 20, limit: 1 << 20, site: "https://a.test" };
  await guardedFetch(fetchFn, "https://a.test/1.bin", { maxBytes: 1 << 20, budget });
  await assert.rejects(guardedFetch(fetchFn, "https://a.test/2.bin", { maxBytes: 1 << 20, budget }),
    /https:\/\/a\.test sent more than 1 MB for one query: refused/);
});

test("gunzip stops at its cap: a gzip bomb is refused near the cap, an honest stream inflates", async () => {
  const zeros = bomb(256 << 20); // 256 MB of zeros: 250 KB
  const before = process.memoryUsage().arrayBuffers;
  let peak = before;
  const watch = setInterval(() => { peak = Math.max(peak, process.memoryUsage().arrayBuffers); }, 1);
  await assert.rejects(gunzip(zeros, 4 << 20, "texts-x"), (err) => err instanceof TooLarge
    && err.message === "sphinx-rag: texts-x inflates to more than 4 MB, more than its index allows: refused");
  clearInterval(watch);
  assert.ok(peak - before < 64 << 20, `${(peak - before) >> 20} MB held for a cap of 4 MB`);
  const text = new TextEncoder().encode("honest ".repeat(1000));
  assert.deepEqual(await gunzip(gzipSync(text), text.length), text);
  await assert.rejects(gunzip(gzipSync(text), text.length - 1), TooLarge);
  await assert.rejects(gunzip(Uint8Array.of(1, 2, 3)), (err) => !(err instanceof TooLarge)); // not gzip: the caller says corrupted
});

test("a script shard that is a gzip bomb under its matching hash is refused once, never retried", async () => {
  const stream = bomb(64 << 20);
  const name = `texts-${createHash("sha256").update(stream).digest("hex").slice(0, 16)}`;
  const file = `sphinxRagShard("${name}","${stream.toString("base64")}");\n`;
  const calls = /** @type {string[]} */ ([]);
  const fetchFn = /** @type {any} */ (async (/** @type {string} */ url) => { calls.push(url); return response(file); });
  const source = new HttpSource("https://a.test/i/", { fetch: fetchFn, caches: null });
  await assert.rejects(source.script(`${name}.js`, 2 << 20), /inflates to more than 2 MB, more than its index allows: refused/);
  assert.equal(calls.length, 1);
  // the file itself may not be larger than a payload of the cap could make
  const big = `sphinxRagShard("${name}","${"A".repeat(4 << 20)}");\n`;
  const large = new HttpSource("https://a.test/i/", { fetch: /** @type {any} */ (async () => response(big)), caches: null });
  await assert.rejects(large.script(`${name}.js`, 1 << 20), /is larger than its index allows/);
});

test("manifest.json over MANIFEST_BYTES is refused", async () => {
  const huge = JSON.stringify({ ...manifest(), pad: "x".repeat(MANIFEST_BYTES) });
  const source = new HttpSource("https://a.test/i/", { fetch: /** @type {any} */ (async () => response(huge)), caches: null });
  await assert.rejects(source.manifest(), /manifest\.json is larger than its index allows \(over 4 MB\)/);
});

test("checkManifest: types, ranges, names; a count of 10^12 is refused before anything is allocated", () => {
  assert.doesNotThrow(() => checkFormat(manifest()));
  /** @type {Array<[(m: any) => void, RegExp]>} */
  const bad = [
    [(m) => { m.counts.chunks = 1e12; }, /counts\.chunks must be an integer from 0 to 4194304/],
    [(m) => { m.counts.chunks = "3"; }, /counts\.chunks/],
    [(m) => { m.counts.dim = -1; }, /counts\.dim/],
    [(m) => { m.counts = null; }, /counts must be an object/],
    [(m) => { delete m.layout; }, /layout must be an object/],
    [(m) => { m.layout.texts_per_shard = 0; }, /texts_per_shard/],
    [(m) => { m.layout.probe = 1.5; }, /layout\.probe/],
    [(m) => { m.dir = "../../../secret.js"; }, /dir must name a dir-<hash>\.js shard/],
    [(m) => { m.near = [[2, 1, `near-${HASH}.js`]]; }, /near must list/],
    [(m) => { m.near = [[2, 5, "https://evil.test/near.js"]]; }, /near must list/],
    [(m) => { m.dense = { centroids: `centroids-${HASH}.bin`, directory: "x" }; m.counts.dim = 384; }, /dense must name/],
    [(m) => { m.encoder = { file: "encoder.bin" }; }, /encoder must name/],
    [(m) => { m.model_files = { dir: "..", files: {} }; }, /model_files must name a directory/],
    [(m) => {
      const f = { bytes: 10, sha256: "a".repeat(64) };
      m.model_files = { dir: "model-x", files: { "model.onnx": { bytes: 2 ** 40, sha256: "a".repeat(64) }, "vocab.txt": f, "model_info.json": f } };
    }, /needs bytes and sha256/],
    [(m) => { m.settings = "rrf"; }, /settings must be an object/],
    [(m) => { m.settings.rrf_k = "60"; }, /rrf_k/],
  ];
  for (const [edit, message] of bad) {
    assert.throws(() => checkFormat(manifest(edit)), (err) => err instanceof IndexInvalid && message.test(err.message)
      && /^sphinx-rag: manifest\.json is not a well-formed sphinx-rag index file \(/.test(err.message) && !err.message.includes("\n"));
  }
  assert.equal(MAX_CHUNKS, 4194304);
});

test("shardLimit: sized from the manifest, within JSON_CEILING (FILE_CEILING for the encoder)", () => {
  const m = checkFormat(manifest());
  assert.equal(shardLimit(m, "texts"), (64 << 10) + 2 * (64 << 10));
  const huge = checkFormat(manifest((x) => { x.layout.texts_per_shard = 65536; }));
  assert.equal(shardLimit(huge, "texts"), JSON_CEILING);
  for (const kind of /** @type {const} */ (["dir", "terms", "near", "texts", "ddir", "encoder"])) {
    assert.ok(shardLimit(m, kind) >= 64 << 10 && shardLimit(m, kind) <= FILE_CEILING, kind);
  }
});

test("checkDirectory: text shards as many as the chunks make, weights within them", () => {
  const m = checkFormat(manifest());
  const texts = [`texts-${HASH}.js`, `texts-${HASH}.js`];
  const dir = { terms: [["a", `terms-${HASH}.js`]], texts, weights: [[0, 3, 0.5]] };
  assert.equal(checkDirectory(dir, m, "dir-x.js"), dir);
  assert.throws(() => checkDirectory({ ...dir, texts: texts.slice(1) }, m, "dir-x.js"), /texts must list 2 shards for 3 chunks/);
  assert.throws(() => checkDirectory({ ...dir, weights: [[0, 4, 1]] }, m, "dir-x.js"), /weights/);
  assert.throws(() => checkDirectory({ ...dir, terms: [["a", "../x.js"]] }, m, "dir-x.js"), /terms must list/);
  assert.throws(() => checkDirectory({ ...dir, texts: ["javascript:alert(1)", texts[0]] }, m, "dir-x.js"), /texts must name/);
});

test("checkTextShard: a shard of the wrong shape is refused; a record that fails its checks is dropped, with why", () => {
  const record = (/** @type {any} */ over = {}) => ({ id: "a#:0", doc: "a", url: "a.html", headings: ["A"], kind: "guide",
    text: "t", display: [["p", "t"], ["code", "x = 1", "python"]], ...over });
  assert.deepEqual(checkTextShard({ first: 2, chunks: [record()] }, 1, 2, 3, "texts-x.js"), { records: [record()], dropped: 0 });
  /** @type {Array<[any, RegExp]>} */
  const refused = [
    [{ first: 2, chunks: [record(), record()] }, /2 records where 1 belong/],
    [{ first: 0, chunks: [record()] }, /first is 0, expected 2/],
    [{ chunks: "x" }, /no chunks/],
  ];
  for (const [data, message] of refused) assert.throws(() => checkTextShard(data, 1, 2, 3, "texts-x.js"), message);
  /** @type {Array<[any, RegExp]>} */
  const dropped = [
    [record({ display: [["p", 42]] }), /display blocks must be \[type, text\] strings/],
    [record({ display: [["p", { toString: 1 }]] }), /display blocks/],
    [record({ display: "p" }), /display blocks/],
    [record({ url: 7 }), /must be strings/],
    [record({ headings: [null] }), /headings/],
    [record({ card: 3 }), /card/],
    [record({ members: 1 }), /members/],
    [record({ url: "javascript:alert(1)" }), /url must be a page of the site/],
  ];
  for (const [r, problem] of dropped) {
    const { records, dropped: n } = checkTextShard({ first: 2, chunks: [r] }, 1, 2, 3, "texts-x.js");
    assert.equal(n, 1);
    assert.equal(records[0].dropped, true);
    assert.equal(records[0].url, "");
    assert.match(records[0].problem, problem);
  }
});

test("checkDenseDirectory: clusters as counts.clusters says, sizes within the chunks, cluster maps as many as the layout makes", () => {
  const m = checkFormat(manifest((x) => {
    x.counts = { chunks: 10, dim: 4, clusters: 2 };
    x.dense = { centroids: `centroids-${HASH}.bin`, directory: `ddir-${HASH}.bin` };
    x.layout.cluster_map_chunks = 4;
  }));
  const ddir = { clusters: [[`cluster-${HASH}.bin`, 6], [`cluster-${HASH}.bin`, 4]], cluster_map: [] };
  assert.equal(checkDenseDirectory(ddir, m, "ddir-x.bin"), ddir);
  assert.doesNotThrow(() => checkDenseDirectory({ ...ddir, cluster_map: Array(3).fill(`cmap-${HASH}.bin`) }, m, "d"));
  assert.throws(() => checkDenseDirectory({ ...ddir, cluster_map: [`cmap-${HASH}.bin`] }, m, "d"), /none or 3/);
  assert.throws(() => checkDenseDirectory({ ...ddir, clusters: ddir.clusters.slice(1) }, m, "d"), /1 clusters where counts\.clusters says 2/);
  assert.throws(() => checkDenseDirectory({ ...ddir, clusters: [[`cluster-${HASH}.bin`, 1e12], ddir.clusters[1]] }, m, "d"), /clusters must list/);
});

test("readVarints never reads past its bytes (a shard whose numbers run off its end used to loop forever)", () => {
  assert.deepEqual(Array.from(readVarints(Uint8Array.of(1, 0x81, 1), 2).values), [1, 129]);
  assert.throws(() => readVarints(Uint8Array.of(0x80, 0x80), 1), ShardError);
  assert.throws(() => readVarints(Uint8Array.of(1), 1e12), ShardError); // nothing allocated
});

test("an IndexReader refuses chunk and cluster ids out of range, from its shards and its callers", async () => {
  const m = checkFormat(manifest((x) => {
    x.counts = { chunks: 2, dim: 2, clusters: 1 };
    x.dense = { centroids: `centroids-${HASH}.bin`, directory: `ddir-${HASH}.bin` };
    x.layout.cluster_map_chunks = 4;
  }));
  const cluster = new Uint8Array(4 + 8 * 2 + 2 * 2);
  const view = new DataView(cluster.buffer);
  view.setUint32(0, 2, true);
  view.setUint32(4, 0, true);
  view.setUint32(8, 7, true); // chunk 7 of 2
  const files = /** @type {Record<string, Uint8Array>} */ ({
    [`ddir-${HASH}.bin`]: new TextEncoder().encode(JSON.stringify({ clusters: [[`cluster-${HASH}.bin`, 2]], cluster_map: [] })),
    [`cluster-${HASH}.bin`]: cluster,
  });
  const source = {
    script: async () => { throw new Error("not asked"); },
    binary: async (/** @type {string} */ name, /** @type {number} */ most) => {
      assert.ok(files[name].byteLength <= most, `${name} within ${most}`);
      return files[name];
    },
  };
  const index = new IndexReader(m, source);
  await assert.rejects(index.cluster(0), /chunk id 7 of 2 chunks/);
  await assert.rejects(index.cluster(1), /cluster 1 of an index of 1 clusters/);
  await assert.rejects(index.chunk(5), /chunk 5 of an index of 2 chunks/);
});
