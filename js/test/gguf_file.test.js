// @ts-check
// Tests of js/src/llm/gguf_file.js: the in-browser model's file from its URL only, checked
// (size, GGUF magic, sha256) and kept by its hash; and of js/src/ui/ask_local.js's pure
// parts (which backend answers, the reader's stored choices, the consent's words). The real
// download, in Chromium with SmolLM2, is tests/browser/test_ask_local.py's.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import {
  GGUF_CACHE, cacheKey, cachedBlob, loadModelFile, megabytes, readerModel, removeCached, siteModel,
} from "../src/llm/gguf_file.js";
import {
  LOCAL_KEY, chooseBackend, consentText, downloadHold, ggufSupport, readLocal, siteLocal, writeLocal,
} from "../src/ui/ask_local.js";

const ROOT = new URL("https://docs.example.org/en/");
const FILE = new Uint8Array([..."GGUF"].map((c) => c.charCodeAt(0)).concat(Array.from({ length: 5000 }, (_, i) => i % 251)));
const SHA = createHash("sha256").update(FILE).digest("hex");
const MODEL = { url: "https://models.example.org/m.gguf", sha256: SHA, bytes: FILE.length, name: "Tiny", contextTokens: 2048,
  source: /** @type {const} */ ("site") };

/** Cache Storage in memory (one cache per name), counting what is stored. */
function fakeCaches() {
  /** @type {Map<string, Map<string, Blob>>} */
  const caches = new Map();
  return {
    caches,
    /** @param {string} name */
    async open(name) {
      if (!caches.has(name)) caches.set(name, new Map());
      const c = /** @type {Map<string, Blob>} */ (caches.get(name));
      return {
        match: async (/** @type {string} */ k) => (c.has(k) ? new Response(c.get(k)) : undefined),
        put: async (/** @type {string} */ k, /** @type {Response} */ r) => { c.set(k, await r.blob()); },
        delete: async (/** @type {string} */ k) => c.delete(k),
      };
    },
  };
}

/** A fetch answering `body` (in chunks of 1000 bytes) with `status`, recording each request. */
function fakeFetch(body = FILE, status = 200, headers = {}) {
  /** @type {{url: string, init: any}[]} */
  const calls = [];
  const fn = async (/** @type {any} */ url, /** @type {any} */ init) => {
    calls.push({ url: String(url), init });
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < body.length; i += 1000) c.enqueue(body.slice(i, i + 1000));
        c.close();
      },
    });
    return new Response(status >= 300 && status < 400 ? null : stream, {
      status, headers: { "content-length": String(body.length), ...headers },
    });
  };
  return { fn: /** @type {typeof fetch} */ (/** @type {unknown} */ (fn)), calls };
}

test("the file comes from its URL with no redirect followed, is checked, kept by its hash, then read from there", async () => {
  const store = fakeCaches();
  const net = fakeFetch();
  const progress = [];
  const first = await loadModelFile(MODEL, { fetch: net.fn, caches: /** @type {any} */ (store),
    onProgress: (done, total) => progress.push([done, total]) });
  assert.equal(first.cached, false);
  assert.equal(first.kept, true);
  assert.equal(first.sha256, SHA);
  assert.equal(first.blob.size, FILE.length);
  assert.deepEqual(net.calls.map((c) => [c.url, c.init.redirect, c.init.credentials]), [[MODEL.url, "manual", "omit"]]);
  assert.deepEqual(progress.at(-1), [FILE.length, FILE.length]);
  assert.ok(progress.length >= 5, "progress as the bytes come");
  assert.ok(store.caches.get(GGUF_CACHE)?.has(cacheKey(SHA)));
  const second = await loadModelFile(MODEL, { fetch: net.fn, caches: /** @type {any} */ (store) });
  assert.equal(second.cached, true);
  assert.equal(net.calls.length, 1, "a second visit fetches nothing");
  assert.ok(await removeCached(SHA, /** @type {any} */ (store)));
  assert.equal(await cachedBlob(SHA, FILE.length, /** @type {any} */ (store)), null);
});

test("a wrong file is refused in one line and never kept", async () => {
  const cases = [
    ["a corrupt file", fakeFetch(Uint8Array.from(FILE, (b, i) => (i === 4000 ? b ^ 1 : b))), "does not match its sha256"],
    ["a redirect", fakeFetch(FILE, 302, { location: "https://elsewhere.example/m.gguf" }), "redirects it elsewhere (not followed)"],
    ["an error", fakeFetch(FILE, 404), "HTTP 404 from models.example.org"],
    ["a longer file", fakeFetch(new Uint8Array([...FILE, 1, 2, 3])), "larger than the 5,004 bytes configured"],
    ["a shorter file", fakeFetch(FILE.slice(0, 4000)), "4,000 bytes, not the 5,004 configured"],
    ["not a GGUF file", fakeFetch(Uint8Array.from(FILE, (b, i) => (i === 0 ? 0 : b))), "it is not a GGUF file"],
  ];
  for (const [what, net, words] of cases) {
    const store = fakeCaches();
    await assert.rejects(loadModelFile(MODEL, { fetch: /** @type {any} */ (net).fn, caches: /** @type {any} */ (store) }),
      (/** @type {any} */ e) => e.kind === "download" && e.message.startsWith("Tiny ") && e.message.includes(/** @type {string} */ (words))
        && !e.message.includes("\n"), /** @type {string} */ (what));
    assert.equal(store.caches.get(GGUF_CACHE)?.size ?? 0, 0, `${what}: nothing kept`);
  }
  const offline = /** @type {typeof fetch} */ (async () => { throw new TypeError("Failed to fetch"); });
  await assert.rejects(loadModelFile(MODEL, { fetch: offline, caches: null }),
    (/** @type {any} */ e) => e.kind === "download" && /could not be downloaded from models\.example\.org/.test(e.message));
  const stop = new AbortController();
  stop.abort();
  const aborting = /** @type {typeof fetch} */ (async () => { throw new DOMException("aborted", "AbortError"); });
  await assert.rejects(loadModelFile(MODEL, { fetch: aborting, caches: null, signal: stop.signal }),
    (/** @type {any} */ e) => e.kind === "aborted");
});

test("a reader's file without a hash is kept under the hash it has; a kept copy of the wrong size is dropped", async () => {
  const store = fakeCaches();
  const reader = readerModel(" https://models.example.org/m.gguf ", "", ROOT);
  assert.deepEqual(reader, { url: MODEL.url, sha256: "", bytes: 0, name: "m.gguf", contextTokens: 2048, source: "reader" });
  const got = await loadModelFile(reader, { fetch: fakeFetch().fn, caches: /** @type {any} */ (store) });
  assert.equal(got.sha256, SHA);
  assert.equal(await cachedBlob(SHA, FILE.length + 1, /** @type {any} */ (store)), null);
  assert.equal(store.caches.get(GGUF_CACHE)?.size, 0);
  assert.throws(() => readerModel("ftp://x/m.gguf", "", ROOT), /http\(s\) URL of a \.gguf file/);
  assert.throws(() => readerModel("https://x/m.gguf", "abc", ROOT), /64 hex digits/);
});

test("the site's model: its path resolved from the site root, malformed ones ignored", () => {
  const model = { url: "_static/models/SmolLM2.gguf", sha256: SHA, bytes: 98362432, name: "SmolLM2 135M", context_tokens: 2048 };
  assert.deepEqual(siteModel(model, ROOT), { url: "https://docs.example.org/en/_static/models/SmolLM2.gguf", sha256: SHA,
    bytes: 98362432, name: "SmolLM2 135M", contextTokens: 2048, source: "site" });
  assert.equal(siteModel({ ...model, sha256: "x" }, ROOT), null);
  assert.equal(siteModel({ ...model, bytes: 0 }, ROOT), null);
  assert.equal(siteModel({ ...model, url: "javascript:alert(1)" }, ROOT), null);
  assert.equal(siteModel(null, ROOT), null);
  assert.equal(megabytes(98362432), "98 MB");
  assert.equal(megabytes(1_500_000_000), "1.5 GB");
});

test("which backend answers: the reader's choice when it can, else an endpoint, the built-in model, a GGUF model", () => {
  const none = { choice: /** @type {const} */ ("auto"), endpoint: false, builtin: /** @type {const} */ ("unavailable"), gguf: false };
  assert.equal(chooseBackend(none), null);
  assert.equal(chooseBackend({ ...none, endpoint: true, builtin: "available", gguf: true }), "endpoint");
  assert.equal(chooseBackend({ ...none, builtin: "downloadable", gguf: true }), "builtin");
  assert.equal(chooseBackend({ ...none, gguf: true }), "gguf");
  assert.equal(chooseBackend({ ...none, choice: "gguf", endpoint: true, builtin: "available", gguf: true }), "gguf");
  assert.equal(chooseBackend({ ...none, choice: "builtin", endpoint: true }), "endpoint"); // not there: the order
});

test("the reader's choices in storage, and the site's part of the manifest", () => {
  const m = new Map();
  const storage = /** @type {Storage} */ (/** @type {unknown} */ ({
    getItem: (/** @type {string} */ k) => m.get(k) ?? null, setItem: (/** @type {string} */ k, /** @type {string} */ v) => m.set(k, v),
    removeItem: (/** @type {string} */ k) => m.delete(k),
  }));
  assert.deepEqual(readLocal(storage), { choice: "auto", url: "", sha256: "", learned: false, agreed: [] });
  writeLocal(storage, { choice: "gguf", url: "https://x/m.gguf", sha256: SHA, learned: true, agreed: [SHA] });
  assert.deepEqual(readLocal(storage), { choice: "gguf", url: "https://x/m.gguf", sha256: SHA, learned: true, agreed: [SHA] });
  m.set(LOCAL_KEY, JSON.stringify({ choice: "cloud", sha256: "nope", learned: true, agreed: [1, "k"] }));
  assert.deepEqual(readLocal(storage), { choice: "auto", url: "", sha256: "", learned: false, agreed: ["k"] });
  m.set(LOCAL_KEY, "{broken");
  assert.equal(readLocal(storage).choice, "auto");
  writeLocal(storage, { choice: "auto", url: "", sha256: "", learned: false, agreed: [] });
  assert.equal(m.has(LOCAL_KEY), false, "nothing kept when nothing is chosen");
  assert.deepEqual(siteLocal(undefined), { builtin: true, gguf: true, model: null }); // an older manifest
  assert.deepEqual(siteLocal({ builtin: false, gguf: false, model: { url: "x" } }), { builtin: false, gguf: false, model: null });
});

test("the consent says what downloads, from where, and why it asks again", () => {
  const text = consentText(MODEL, false, "");
  assert.equal(text, "Answer with Tiny, run in this browser? It downloads 5 KB once, from models.example.org, and keeps " +
    "it in this browser (Remove it in the settings); your question stays on this device.");
  assert.match(consentText({ ...MODEL, bytes: 0 }, false, "data saver on"), /a file of unknown size .* Your browser reports data saver on\.$/);
  assert.equal(downloadHold({ connection: { saveData: true } }), "data saver on");
  assert.equal(downloadHold({ connection: { effectiveType: "4g", type: "cellular" } }), "cellular connection");
  assert.equal(downloadHold({ connection: { effectiveType: "4g", type: "wifi" }, deviceMemory: 8 }), "");
  assert.equal(downloadHold({ deviceMemory: 1 }), "little memory: 1 GB");
});

test("an in-browser model needs a secure context and WebAssembly Memory64", () => {
  const secure = { isSecureContext: true, caches: {}, crypto: globalThis.crypto, WebAssembly };
  const memory64 = ggufSupport(secure);
  assert.ok(memory64 === "" || /Memory64/.test(memory64), memory64); // Node 20 may lack it
  assert.match(ggufSupport({ ...secure, isSecureContext: false }), /https/);
  const noMemory64 = { ...secure, WebAssembly: { Memory: function () { throw new TypeError("i64"); } } };
  assert.match(ggufSupport(noMemory64), /Memory64/);
});
