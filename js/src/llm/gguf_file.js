// @ts-check
/**
 * The file of Ask's in-browser GGUF model: fetched from its URL and nowhere else, checked,
 * kept in the browser by its hash. No DOM access (the consent and the progress are
 * ask_local.js's).
 *
 * - From its URL only: no redirect is followed (`redirect: "manual"`; a redirect, even to
 *   the same host, is refused before a byte of another address is asked for), no cookie
 *   is sent (`credentials: "omit"`).
 * - Checked before use: its size against the one configured (a longer body is cut off as
 *   it comes), its first bytes are GGUF's magic, and its sha256 against the one configured
 *   (or, for a file a reader named without one, the hash it is kept under). A file that
 *   fails is dropped, never kept, never run.
 * - Kept by its sha256 in Cache Storage (GGUF_CACHE): a second visit reads it from there
 *   and fetches nothing; removeCached frees it. A hit is checked for its size and magic
 *   (it was hashed before it was stored).
 *
 * Needs a secure context (https, or http on localhost / 127.0.0.1): Cache Storage and
 * SubtleCrypto exist only there. The check holds the file in memory (about twice its size
 * while it is hashed), hence wllama's own limit of 2 GB a file.
 *
 * @module gguf_file
 */

import { LLMError } from "./llm.js";

/** The Cache Storage cache holding the model files (one entry per sha256). */
export const GGUF_CACHE = "sphinx-rag-gguf-v1";
/** "GGUF": the first 4 bytes of every GGUF file. */
const MAGIC = "GGUF";

/**
 * @typedef {{url: string, sha256: string, bytes: number, name: string, contextTokens: number,
 *            source: "site" | "reader"}} ModelFile
 *   url: absolute; sha256: "" when a reader named the file without one (learned at its first
 *   download); bytes: 0 when unknown (a reader's file)
 * @typedef {{blob: Blob, sha256: string, cached: boolean, kept: boolean}} Loaded
 *   cached: read from Cache Storage (nothing fetched); kept: now stored there
 */

/** The Cache Storage key of a model file (a URL never fetched). @param {string} sha256 */
export const cacheKey = (sha256) => `https://sphinx-rag.invalid/gguf/sha256/${sha256}`;

/** @param {unknown} v */
const isHash = (v) => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);

/**
 * The site's model (manifest settings.llm_browser.model) as a ModelFile, its URL resolved
 * against the site root; null when it is missing or malformed (the build validated it).
 * @param {unknown} model @param {URL} siteRoot
 * @returns {ModelFile | null}
 */
export function siteModel(model, siteRoot) {
  const m = /** @type {any} */ (model);
  if (!m || typeof m !== "object" || typeof m.url !== "string" || !isHash(m.sha256)) return null;
  if (!Number.isInteger(m.bytes) || m.bytes <= 0) return null;
  let url;
  try {
    url = new URL(m.url, siteRoot);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(url.protocol)) return null;
  const ctx = Number.isInteger(m.context_tokens) && m.context_tokens >= 1024 ? m.context_tokens : 2048;
  return { url: url.href, sha256: m.sha256, bytes: m.bytes, name: typeof m.name === "string" && m.name ? m.name : fileName(url),
    contextTokens: ctx, source: "site" };
}

/**
 * A model a reader named in the settings: its URL (http(s)) and, optionally, its sha256.
 * Throws an Error with the line the settings panel shows.
 * @param {string} url @param {string} sha256 @param {URL} siteRoot
 * @returns {ModelFile}
 */
export function readerModel(url, sha256, siteRoot) {
  const text = url.trim();
  let parsed;
  try {
    parsed = new URL(text, siteRoot);
  } catch {
    parsed = null;
  }
  if (!text || !parsed || !/^https?:$/.test(parsed.protocol) || /\s/.test(text)) {
    throw new Error("The model URL must be the http(s) URL of a .gguf file.");
  }
  const hash = sha256.trim().toLowerCase();
  if (hash && !isHash(hash)) throw new Error("The sha256 must be 64 hex digits (sha256sum FILE), or left empty.");
  return { url: parsed.href, sha256: hash, bytes: 0, name: fileName(parsed), contextTokens: 2048, source: "reader" };
}

/** The last part of a URL's path, decoded. @param {URL} url */
function fileName(url) {
  const last = url.pathname.split("/").filter(Boolean).pop() ?? url.host;
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** "98 MB", "1.2 GB", "850 KB". @param {number} bytes */
export function megabytes(bytes) {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(1)} GB`;
  if (bytes >= 1e6) return `${Math.round(bytes / 1e6)} MB`;
  return `${Math.max(1, Math.round(bytes / 1e3))} KB`;
}

/** Hex sha256 of a blob (SubtleCrypto: a secure context). @param {Blob} blob */
export async function sha256Of(blob) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", await blob.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Whether a blob starts with GGUF's magic. @param {Blob} blob */
async function isGguf(blob) {
  const head = new Uint8Array(await blob.slice(0, 4).arrayBuffer());
  return String.fromCharCode(...head) === MAGIC;
}

/** Cache Storage, or null (not a secure context). @param {CacheStorage | null | undefined} storage */
async function openCache(storage) {
  try {
    return storage ? await storage.open(GGUF_CACHE) : null;
  } catch {
    return null;
  }
}

/**
 * The kept file of `sha256`, or null (none, or not whole: then it is dropped).
 * @param {string} sha256 @param {number} bytes  0: any size
 * @param {CacheStorage | null} [storage]
 * @returns {Promise<Blob | null>}
 */
export async function cachedBlob(sha256, bytes, storage = globalThis.caches ?? null) {
  if (!isHash(sha256)) return null;
  const cache = await openCache(storage);
  const response = await cache?.match(cacheKey(sha256)).catch(() => /** @type {undefined} */ (undefined));
  if (!cache || !response) return null;
  const blob = await response.blob();
  if ((bytes && blob.size !== bytes) || !(await isGguf(blob))) {
    await cache.delete(cacheKey(sha256)).catch(() => false);
    return null;
  }
  return blob;
}

/**
 * Drop the kept file of `sha256`; true if there was one.
 * @param {string} sha256 @param {CacheStorage | null} [storage]
 */
export async function removeCached(sha256, storage = globalThis.caches ?? null) {
  const cache = await openCache(storage);
  return Boolean(cache && isHash(sha256) && (await cache.delete(cacheKey(sha256)).catch(() => false)));
}

/**
 * The model's file: the kept copy, else downloaded from `model.url` (onProgress(loaded,
 * total) as it comes; total 0 when unknown), checked and kept. Rejects with an LLMError of
 * kind "download" (one line: what was refused and why) or "aborted" (the signal).
 * @param {ModelFile} model
 * @param {{signal?: AbortSignal, onProgress?: (loaded: number, total: number) => void,
 *          fetch?: typeof fetch, caches?: CacheStorage | null}} [options]
 * @returns {Promise<Loaded>}
 */
export async function loadModelFile(model, { signal, onProgress = () => {}, fetch: fetchFn, caches: storage } = {}) {
  const store = storage === undefined ? globalThis.caches ?? null : storage;
  const doFetch = fetchFn ?? globalThis.fetch.bind(globalThis);
  const { name, url } = model;
  const host = new URL(url).host;
  const kept = await cachedBlob(model.sha256, model.bytes, store);
  if (kept) return { blob: kept, sha256: model.sha256, cached: true, kept: true };
  const refuse = (/** @type {string} */ why) => new LLMError("download", `${name} ${why}`);
  const stopped = () => new LLMError("aborted", "Stopped: the model was not downloaded.");
  let response;
  try {
    response = await doFetch(url, { redirect: "manual", credentials: "omit", mode: "cors", signal });
  } catch (err) {
    if (signal?.aborted) throw stopped();
    throw refuse(`could not be downloaded from ${host} (no answer, or no CORS header).`);
  }
  if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) {
    response.body?.cancel().catch(() => {});
    throw refuse(`was refused: ${host} redirects it elsewhere (not followed).`);
  }
  if (!response.ok || !response.body) {
    response.body?.cancel().catch(() => {});
    throw refuse(`could not be downloaded: HTTP ${response.status} from ${host}.`);
  }
  const declared = Number(response.headers.get("content-length")) || 0;
  const total = model.bytes || (response.headers.get("content-encoding") ? 0 : declared);
  /** @type {Uint8Array[]} */
  const chunks = [];
  let loaded = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      loaded += value.byteLength;
      if (model.bytes && loaded > model.bytes) {
        reader.cancel().catch(() => {});
        throw refuse(`was refused: it is larger than the ${model.bytes.toLocaleString("en-US")} bytes configured.`);
      }
      chunks.push(value);
      onProgress(loaded, total);
    }
  } catch (err) {
    if (err instanceof LLMError) throw err;
    if (signal?.aborted) throw stopped();
    throw refuse(`broke off after ${megabytes(loaded)}: not kept.`);
  }
  if (model.bytes && loaded !== model.bytes) {
    throw refuse(`was refused: ${loaded.toLocaleString("en-US")} bytes, not the ${model.bytes.toLocaleString("en-US")} configured.`);
  }
  const blob = new Blob(/** @type {BlobPart[]} */ (chunks), { type: "application/octet-stream" });
  chunks.length = 0;
  if (!(await isGguf(blob))) throw refuse("was refused: it is not a GGUF file.");
  const sha256 = await sha256Of(blob);
  if (model.sha256 && sha256 !== model.sha256) throw refuse("was refused: it does not match its sha256 (not kept, not run).");
  if (signal?.aborted) throw stopped();
  let stored = false;
  const cache = await openCache(store);
  if (cache) {
    try {
      await cache.put(cacheKey(sha256), new Response(blob, { headers: { "Content-Type": "application/octet-stream" } }));
      stored = true;
    } catch {
      stored = false; // over the quota: it runs in this page, and downloads again next time
    }
  }
  return { blob, sha256, cached: false, kept: stored };
}
