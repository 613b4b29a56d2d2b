// @ts-check
// The worker's HTTP source (js/src/worker/loader.js) and the script source of file://
// pages (js/src/ui/script_source.js) over a tiny index written here the way
// sphinx_rag/search/shards.py writes one.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

import { FORMAT_VERSION, IndexReader, checkFormat } from "../src/search/index.js";
import { Searcher } from "../src/search/retrieve.js";
import { compareCodePoints, littleEndian, sha256Hex } from "../src/search/shards.js";
import { HttpSource } from "../src/worker/loader.js";
import { fileFetch } from "./helpers.js";

/** A Cache Storage in memory (the subset loader.js uses). */
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
      store,
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

/** @param {string} kind @param {Uint8Array} payload @returns {[string, string]} file name, file text */
function scriptShard(kind, payload) {
  const stream = gzipSync(payload);
  const name = `${kind}-${createHash("sha256").update(stream).digest("hex").slice(0, 16)}`;
  return [`${name}.js`, `sphinxRagShard("${name}","${stream.toString("base64")}");\n`];
}

/** @param {any} header @param {Uint8Array} body */
function pack(header, body) {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(4 + head.length + body.length);
  new DataView(out.buffer).setUint32(0, head.length, true);
  out.set(head, 4);
  out.set(body, 4 + head.length);
  return out;
}

const json = (/** @type {any} */ x) => new TextEncoder().encode(JSON.stringify(x));

/** The directories writeIndex made, removed when the file's tests end. */
const written = /** @type {string[]} */ ([]);
after(() => { for (const dir of written) rmSync(dir, { recursive: true, force: true }); });

/** A tiny keyword-only index: "fit" in chunk 0, "scaler" in chunks 0 and 1. */
function writeIndex(version = FORMAT_VERSION) {
  const dir = mkdtempSync(join(tmpdir(), "sphinx-rag-index-"));
  written.push(dir);
  const [terms, termsText] = scriptShard("terms", pack(
    { terms: ["fit", "scaler"], df: [1, 2], count: [1, 2], scale: [0.5, 0.25] },
    Uint8Array.of(0, 0, 1, 1, 1, 3))); // gaps 0 | 0 1; impact bytes 1 | 1 3
  const [texts, textsText] = scriptShard("texts", json({ first: 0, chunks: [
    { id: "a#:0", doc: "a", url: "a.html", headings: ["A"], kind: "guide", text: "fit the scaler" },
    { id: "b#:0", doc: "b", url: "b.html", headings: ["B", "Scaling"], kind: "api", text: "scaler" },
  ] }));
  const [near, nearText] = scriptShard("near", json({ terms: ["fit", "scaler"], df: [1, 2] }));
  const [dir_, dirText] = scriptShard("dir", json({ terms: [["fit", terms]], texts: [texts], clusters: [], weights: [[1, 2, 0.5]] }));
  for (const [name, text] of [[terms, termsText], [texts, textsText], [near, nearText], [dir_, dirText]]) {
    writeFileSync(join(dir, name), text);
  }
  const manifest = {
    format_version: version, counts: { chunks: 2, dim: 0, vocab: 2 }, model: null, dense: null, model_files: null,
    layout: { texts_per_shard: 64, probe: 4096 }, dir: dir_, near: [[3, 6, near]], settings: { fusion: "rrf", rrf_k: 60 },
  };
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest));
  return { dir, base: pathToFileURL(dir + "/").href, files: { terms, texts, near, dir: dir_ } };
}

test("format_version mismatch says to rebuild the docs", async () => {
  const older = FORMAT_VERSION - 1;
  assert.throws(() => checkFormat({ format_version: older }),
    { message: `sphinx-rag: index format ${older}, this client reads ${FORMAT_VERSION}: rebuild the docs` });
  const source = new HttpSource(writeIndex(older).base, { fetch: fileFetch(), caches: null });
  await assert.rejects(source.manifest(), new RegExp(`index format ${older}, this client reads ${FORMAT_VERSION}: rebuild the docs`));
});

test("a keyword query fetches only the manifest, the directory and its own shards", async () => {
  const log = { calls: /** @type {string[]} */ ([]) };
  const { base, files } = writeIndex();
  const source = new HttpSource(base, { fetch: fileFetch(log), caches: null });
  const index = new IndexReader(await source.manifest(), source);
  const results = await new Searcher(index).keywordSearch("scaler", 5);
  assert.deepEqual(results.map((r) => [r.id, r.score, r.title]), [["a#:0", 0.25, "A"], ["b#:0", 0.375, "B > Scaling"]]
    .sort((x, y) => Number(y[1]) - Number(x[1])));
  assert.deepEqual(log.calls.map((u) => u.split("/").pop()), ["manifest.json", files.dir, files.terms, files.texts]);
  // weights from the directory: chunk 1 is down-weighted by 0.5 (3 * 0.25 * 0.5)
  assert.equal(results[0].score, 0.375);
});

test("a shard that does not match its name is refused with the cause", async () => {
  const { dir, base, files } = writeIndex();
  writeFileSync(join(dir, files.terms), scriptShard("terms", Uint8Array.of(9, 9))[1].replace(/terms-[0-9a-f]{16}/, files.terms.slice(0, -3)));
  const source = new HttpSource(base, { fetch: fileFetch(), caches: null });
  const index = new IndexReader(await source.manifest(), source);
  await assert.rejects(index.postings("fit"), /search index on the server is damaged .*does not match its hash.*rebuild the docs/);
  writeFileSync(join(dir, files.texts), "sphinxRagShard(\"texts-0\",\"trunc");
  await assert.rejects(index.chunk(0), /damaged .*not a sphinx-rag shard/);
});

test("a missing shard: the docs were rebuilt meanwhile", async () => {
  const { base } = writeIndex();
  const source = new HttpSource(base, { fetch: fileFetch(), caches: null });
  await assert.rejects(source.script("terms-0123456789abcdef.js"), /HTTP 404\): the docs were rebuilt meanwhile; reload the page/);
});

test("shards are cached by name: a second visit downloads only the manifest; a bad cache entry is refetched", async () => {
  const caches = new MemoryCaches();
  const { base, files } = writeIndex();
  const visit = async () => {
    const log = { calls: /** @type {string[]} */ ([]) };
    const source = new HttpSource(base, { fetch: fileFetch(log), caches: /** @type {any} */ (caches) });
    const index = new IndexReader(await source.manifest(), source);
    const results = await new Searcher(index).keywordSearch("fit", 5);
    await source.stored(); // cache writes run in the background
    return { log: log.calls.map((u) => u.split("/").pop()), results, source, index };
  };
  const first = await visit();
  assert.equal(first.log.length, 4);
  const second = await visit();
  assert.deepEqual(second.log, ["manifest.json"]);
  assert.deepEqual(second.results, first.results);
  // a cached entry that no longer matches its name (a corrupted or foreign cache) is dropped and refetched
  const store = (await caches.open("sphinx-rag-v2")).store;
  const key = [...store.keys()].find((k) => k.endsWith(files.terms));
  /** @type {any} */ (store.get(/** @type {string} */ (key))).body = Uint8Array.of(1, 2, 3);
  const third = await visit();
  assert.deepEqual(third.log, ["manifest.json", files.terms]);
  assert.deepEqual(third.results, first.results);
  assert.equal(await third.source.prune(await third.index.shardNames()), 0);
});

test("sha256Hex, little-endian arrays and code point order", async () => {
  assert.equal(await sha256Hex(new TextEncoder().encode("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.deepEqual(Array.from(littleEndian(Uint8Array.of(1, 0, 0, 0, 0, 1, 0, 0), Uint32Array, 0, 2)), [1, 256]);
  const odd = new Uint8Array(9);
  odd.set([0, 0, 128, 63, 0, 0, 0, 64], 1); // unaligned: copied
  assert.deepEqual(Array.from(littleEndian(odd, Float32Array, 1, 2)), [1, 2]);
  // Python sorts by code point: U+FB01 (a BMP char above the surrogates) before U+1F600
  assert.ok(compareCodePoints("\ufb01", "\u{1F600}") < 0 && "\ufb01" > "\u{1F600}");
  assert.equal(compareCodePoints("ab", "ab"), 0);
  assert.ok(compareCodePoints("a", "ab") < 0);
});

test("Cache Storage writes wait for deferWrites' promise (a cold visit's first query goes first)", async () => {
  const caches = new MemoryCaches();
  const { base, files } = writeIndex();
  const source = new HttpSource(base, { fetch: fileFetch(), caches: /** @type {any} */ (caches) });
  /** @type {() => void} */
  let release = () => {};
  source.deferWrites(new Promise((resolve) => { release = () => resolve(undefined); }));
  const index = new IndexReader(await source.manifest(), source);
  assert.equal((await new Searcher(index).keywordSearch("fit", 5)).length, 1);
  await new Promise((r) => setTimeout(r, 20));
  const store = (await caches.open("sphinx-rag-v2")).store;
  assert.equal(store.size, 0, "written before the first answer");
  release();
  await source.stored();
  assert.deepEqual([...store.keys()].map((k) => k.split("/").pop()).sort(), [files.dir, files.terms, files.texts].sort());
});
