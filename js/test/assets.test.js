// @ts-check
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";

import { AssetLoader, checkFormat, littleEndian, sha256Hex } from "../src/worker/loader.js";
import { fileFetch } from "./helpers.js";

/** A Cache Storage in memory (the subset assets.js uses). */
class MemoryCaches {
  constructor() {
    /** @type {Map<string, Map<string, {body: Uint8Array, headers: Headers}>>} */
    this.stores = new Map();
  }
  /** @param {string} name */
  async open(name) {
    if (!this.stores.has(name)) this.stores.set(name, new Map());
    const store = /** @type {Map<string, {body: Uint8Array, headers: Headers}>} */ (this.stores.get(name));
    const url = (/** @type {any} */ r) => (typeof r === "string" ? r : r.url);
    return {
      async match(/** @type {any} */ r) {
        const e = store.get(url(r));
        return e ? new Response(e.body.slice(), { headers: e.headers }) : undefined;
      },
      async put(/** @type {any} */ r, /** @type {Response} */ response) {
        store.set(url(r), { body: new Uint8Array(await response.arrayBuffer()), headers: response.headers });
      },
      async keys() {
        return [...store.keys()].map((u) => new Request(u));
      },
      async delete(/** @type {any} */ r) {
        return store.delete(url(r));
      },
    };
  }
}

/** A tiny keyword-only index on disk. @param {Record<string, Uint8Array | string>} overrides */
function writeIndex(overrides = {}) {
  const dir = mkdtempSync(join(tmpdir(), "sphinx-rag-assets-"));
  const u32 = (/** @type {number[]} */ xs) => new Uint8Array(Uint32Array.from(xs).buffer);
  /** @type {Record<string, Uint8Array | string>} */
  const files = {
    "chunks.json": JSON.stringify([
      { id: "a:0", doc: "a", url: "a.html", title: "A", headings: ["A"], kind: "guide", order: 0, weight: 1, text: "fit the scaler" },
      { id: "b:0", doc: "b", url: "b.html", title: "B", headings: ["B"], kind: "api", order: 0, weight: 0.5, text: "scaler" },
    ]),
    "bm25.json": JSON.stringify({ vocab: ["fit", "scaler"], n_docs: 2, avgdl: 1.5, k1: 1.5, b: 0.75, epsilon: 0.25 }),
    "bm25_offsets.u32": u32([0, 1, 3]),
    "bm25_docs.u32": u32([0, 0, 1]),
    "bm25_impacts.f32": new Uint8Array(Float32Array.from([0.5, 0.25, 0.75]).buffer),
  };
  const manifestFiles = /** @type {Record<string, {sha256: string, bytes: number}>} */ ({});
  for (const [name, content] of Object.entries(files)) {
    const bytes = typeof content === "string" ? Buffer.from(content) : content;
    manifestFiles[name] = { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.byteLength };
    writeFileSync(join(dir, name), overrides[name] ?? bytes);
  }
  const manifest = { format_version: 1, files: manifestFiles, counts: { chunks: 2, dim: 0 }, model: null, settings: { fusion: "rrf", rrf_k: 60 } };
  writeFileSync(join(dir, "manifest.json"), overrides["manifest.json"] ?? JSON.stringify(manifest));
  return pathToFileURL(dir + "/").href;
}

test("format_version mismatch says to rebuild the docs", async () => {
  assert.throws(() => checkFormat({ format_version: 2 }), { message: "sphinx-rag: index format 2, this client reads 1: rebuild the docs" });
  const base = writeIndex({ "manifest.json": JSON.stringify({ format_version: 0, files: {} }) });
  const loader = new AssetLoader(base, { fetch: fileFetch(), caches: null });
  await assert.rejects(loader.keyword(), /index format 0, this client reads 1: rebuild the docs/);
});

test("keyword assets load, without the model, into a working Searcher", async () => {
  const log = { calls: /** @type {string[]} */ ([]) };
  const loader = new AssetLoader(writeIndex(), { fetch: fileFetch(log), caches: null });
  const { chunks, bm25 } = await loader.keyword();
  assert.equal(chunks.length, 2);
  assert.deepEqual(Array.from(bm25.scores(["scaler"])), [0.25, 0.75]);
  assert.equal(await loader.vectors(), null);
  assert.equal(await loader.model(), null);
  assert.ok(log.calls.every((u) => !u.includes("model/") && !u.includes("embeddings")));
});

test("a file that does not match its sha256 is refused", async () => {
  const loader = new AssetLoader(writeIndex({ "bm25.json": '{"vocab":["fit","scalar"],"n_docs":2,"avgdl":1.5,"k1":1.5,"b":0.75,"epsilon":0.25}' }),
    { fetch: fileFetch(), caches: null });
  await assert.rejects(loader.keyword(), /sphinx-rag: bm25.json does not match manifest.json/);
});

test("files are cached by sha256: a second visit downloads only the manifest", async () => {
  const caches = new MemoryCaches();
  const base = writeIndex();
  const first = { calls: /** @type {string[]} */ ([]) };
  const firstLoader = new AssetLoader(base, { fetch: fileFetch(first), caches: /** @type {any} */ (caches) });
  await firstLoader.keyword();
  await firstLoader.stored(); // cache writes run in the background
  assert.equal(first.calls.length, 6);
  const second = { calls: /** @type {string[]} */ ([]) };
  const loader = new AssetLoader(base, { fetch: fileFetch(second), caches: /** @type {any} */ (caches) });
  const { bm25 } = await loader.keyword();
  assert.deepEqual(second.calls.map((u) => u.split("/").pop()), ["manifest.json"]);
  assert.deepEqual(Array.from(bm25.scores(["fit"])), [0.5, 0]);
  assert.equal(await loader.prune(), 0);
});

test("sha256Hex and little-endian arrays", async () => {
  assert.equal(await sha256Hex(new TextEncoder().encode("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.deepEqual(Array.from(littleEndian(Uint8Array.of(1, 0, 0, 0, 0, 1, 0, 0), Uint32Array)), [1, 256]);
  const odd = new Uint8Array(9).subarray(1); // unaligned view: copied
  odd.set([0, 0, 128, 63, 0, 0, 0, 64]);
  assert.deepEqual(Array.from(littleEndian(odd, Float32Array)), [1, 2]);
});
