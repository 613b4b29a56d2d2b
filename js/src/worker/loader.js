// @ts-check
/**
 * Load the static index written by sphinx_rag/assets.py (layout: ARCHITECTURE.md).
 *
 * `manifest.json` is revalidated on every load; every other file is checked against
 * its sha256 in the manifest (when SubtleCrypto exists: secure contexts and localhost)
 * and kept in Cache Storage under that hash, so a second visit downloads nothing and a
 * rebuilt site downloads only the files that changed. The keyword files load without
 * the model files.
 * @module assets
 */

import { BM25Index } from "../search/bm25.js";

export const FORMAT_VERSION = 1;
export const CACHE_NAME = "sphinx-rag-v1";
export const KEYWORD_FILES = ["chunks.json", "bm25.json", "bm25_offsets.u32", "bm25_docs.u32", "bm25_impacts.f32"];
export const VECTOR_FILES = ["embeddings.i8", "embeddings_scale.f32"];
export const MODEL_FILES = ["model/model.onnx", "model/vocab.txt", "model/model_info.json"];
const BASE_HEADER = "x-sphinx-rag-base";

/**
 * @typedef {{sha256: string, bytes: number}} FileEntry
 * @typedef {{format_version: number, files: Record<string, FileEntry>, counts: any,
 *            model: any, settings: any}} Manifest
 * @typedef {{name: string, loaded: number, total: number}} Progress
 * @typedef {object} LoaderOptions
 * @property {typeof fetch} [fetch]  defaults to globalThis.fetch
 * @property {CacheStorage | null} [caches]  defaults to globalThis.caches; null: no caching
 * @property {boolean} [verify]  check sha256 (default true; skipped without SubtleCrypto)
 * @property {(p: Progress) => void} [onProgress]  download progress of each file
 */

/**
 * Throw a clear error unless the manifest is in the format this client reads.
 * @param {any} manifest
 * @returns {Manifest}
 */
export function checkFormat(manifest) {
  const version = manifest?.format_version;
  if (version !== FORMAT_VERSION) {
    throw new Error(`sphinx-rag: index format ${version}, this client reads ${FORMAT_VERSION}: rebuild the docs`);
  }
  return manifest;
}

/**
 * Hex sha256 of bytes, or null when SubtleCrypto is unavailable (non-secure contexts).
 * @param {Uint8Array} bytes
 * @returns {Promise<string | null>}
 */
export async function sha256Hex(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null;
  const digest = new Uint8Array(await subtle.digest("SHA-256", /** @type {BufferSource} */ (bytes)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * A little-endian array file as a typed array (a view when the platform is little-endian).
 * @template {Uint32ArrayConstructor | Float32ArrayConstructor} T
 * @param {Uint8Array} bytes
 * @param {T} Type
 * @returns {InstanceType<T>}
 */
export function littleEndian(bytes, Type) {
  const size = Type.BYTES_PER_ELEMENT;
  if (bytes.byteLength % size) throw new Error(`sphinx-rag: ${bytes.byteLength} bytes is not a whole number of ${Type.name} items`);
  const n = bytes.byteLength / size;
  if (LITTLE_ENDIAN && bytes.byteOffset % size === 0) {
    return /** @type {InstanceType<T>} */ (new Type(/** @type {ArrayBuffer} */ (bytes.buffer), bytes.byteOffset, n));
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Type(n);
  for (let i = 0; i < n; i++) out[i] = Type === Float32Array ? view.getFloat32(i * 4, true) : view.getUint32(i * 4, true);
  return /** @type {InstanceType<T>} */ (out);
}

/**
 * @param {Response} response
 * @param {string} name
 * @param {((p: Progress) => void) | undefined} onProgress
 * @returns {Promise<Uint8Array>}
 */
async function readBody(response, name, onProgress) {
  const total = Number(response.headers.get("content-length")) || 0;
  if (!onProgress || !response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  /** @type {Uint8Array[]} */
  const parts = [];
  let loaded = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.byteLength;
    onProgress({ name, loaded, total });
  }
  const out = new Uint8Array(loaded);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export class AssetLoader {
  /**
   * @param {string | URL} baseUrl  the asset directory (`.../_static/sphinx_rag/`)
   * @param {LoaderOptions} [options]
   */
  constructor(baseUrl, options = {}) {
    const base = String(baseUrl);
    this.baseUrl = base.endsWith("/") ? base : base + "/";
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.caches = options.caches === undefined ? globalThis.caches ?? null : options.caches;
    /** @type {Promise<void>[]} pending Cache Storage writes */
    this._writes = [];
    this.verify = options.verify ?? true;
    this.onProgress = options.onProgress;
    /** @type {Promise<Manifest> | null} */
    this._manifest = null;
    /** @type {Promise<Cache | null> | null} */
    this._cache = null;
  }

  /** @param {string} name */
  url(name) {
    return new URL(name, this.baseUrl).href;
  }

  /** @returns {Promise<Manifest>} manifest.json, format checked (fetched once per loader) */
  manifest() {
    if (!this._manifest) {
      this._manifest = (async () => {
        const response = await this.fetch(this.url("manifest.json"), { cache: "no-cache" });
        if (!response.ok) {
          throw new Error(`sphinx-rag: no search index at ${this.url("manifest.json")} (HTTP ${response.status}): ` +
            `build the docs with "sphinx_rag" in extensions`);
        }
        return checkFormat(await response.json());
      })();
      this._manifest.catch(() => { this._manifest = null; });
    }
    return this._manifest;
  }

  /** @returns {Promise<Cache | null>} */
  cache() {
    if (!this._cache) {
      const storage = this.caches;
      this._cache = storage ? storage.open(CACHE_NAME).catch(() => /** @type {Cache | null} */ (null)) : Promise.resolve(null);
    }
    return this._cache;
  }

  /** Cache key of a file: its hash, shared by every site of the origin (one model copy). @param {string} sha */
  cacheKey(sha) {
    return new URL(`/__sphinx-rag-cache__/sha256/${sha}`, this.baseUrl).href;
  }

  /**
   * Whether `name` is in this index.
   * @param {string} name
   */
  async has(name) {
    return name in (await this.manifest()).files;
  }

  /**
   * The verified bytes of one file of the manifest.
   * @param {string} name  e.g. "chunks.json" or "model/model.onnx"
   * @returns {Promise<Uint8Array>}
   */
  async bytes(name) {
    const entry = (await this.manifest()).files[name];
    if (!entry) throw new Error(`sphinx-rag: ${name} is not in this index's manifest.json`);
    const cache = await this.cache();
    const key = this.cacheKey(entry.sha256);
    if (cache) {
      const hit = await cache.match(key).catch(() => /** @type {Response | undefined} */ (undefined));
      if (hit) {
        const data = new Uint8Array(await hit.arrayBuffer());
        if (data.byteLength === entry.bytes) return data;
      }
    }
    let data = await this.download(name, entry, "default");
    if (!(await this.matches(data, entry))) {
      data = await this.download(name, entry, "reload"); // a stale HTTP cache copy?
      if (!(await this.matches(data, entry))) {
        throw new Error(`sphinx-rag: ${name} does not match manifest.json (sha256 ${entry.sha256}): ` +
          `the docs were probably rebuilt while loading; reload the page`);
      }
    }
    if (cache) {
      // Stored in the background: on a 20 MB index, waiting for Cache Storage added
      // 100-160 ms before the first keyword results. `stored()` waits for it.
      const headers = { "content-type": "application/octet-stream", [BASE_HEADER]: this.baseUrl };
      const body = /** @type {BodyInit} */ (/** @type {unknown} */ (data.slice()));
      this._writes.push(cache.put(key, new Response(body, { headers })).catch(() => {})); // quota: just don't cache
    }
    return data;
  }

  /** Resolves when every file downloaded so far is in Cache Storage. */
  async stored() {
    await Promise.all(this._writes);
  }

  /**
   * @param {string} name
   * @param {FileEntry} entry
   * @param {RequestCache} mode
   */
  async download(name, entry, mode) {
    const response = await this.fetch(this.url(name), { cache: mode });
    if (!response.ok) throw new Error(`sphinx-rag: cannot load ${this.url(name)} (HTTP ${response.status})`);
    const data = await readBody(response, name, this.onProgress);
    this.onProgress?.({ name, loaded: data.byteLength, total: entry.bytes });
    return data;
  }

  /** @param {Uint8Array} data @param {FileEntry} entry */
  async matches(data, entry) {
    if (data.byteLength !== entry.bytes) return false;
    if (!this.verify) return true;
    const sha = await sha256Hex(data);
    return sha === null || sha === entry.sha256;
  }

  /** @param {string} name */
  async text(name) {
    return new TextDecoder().decode(await this.bytes(name));
  }

  /** @param {string} name */
  async json(name) {
    return JSON.parse(await this.text(name));
  }

  /**
   * What keyword search needs: manifest, chunks and the BM25 index (no model files).
   * @returns {Promise<{manifest: Manifest, chunks: any[], bm25: BM25Index}>}
   */
  async keyword() {
    const manifest = await this.manifest();
    const [chunks, meta, offsets, docs, impacts] = await Promise.all([
      this.json("chunks.json"),
      this.json("bm25.json"),
      this.bytes("bm25_offsets.u32"),
      this.bytes("bm25_docs.u32"),
      this.bytes("bm25_impacts.f32"),
    ]);
    const bm25 = new BM25Index(
      meta,
      littleEndian(offsets, Uint32Array),
      littleEndian(docs, Uint32Array),
      littleEndian(impacts, Float32Array),
    );
    return { manifest, chunks, bm25 };
  }

  /**
   * The chunk embeddings, or null for a keyword-only index.
   * @returns {Promise<{vectors: Int8Array, scales: Float32Array, dim: number} | null>}
   */
  async vectors() {
    const manifest = await this.manifest();
    if (!("embeddings.i8" in manifest.files)) return null;
    const [v, s] = await Promise.all(VECTOR_FILES.map((n) => this.bytes(n)));
    const vectors = new Int8Array(v.buffer, v.byteOffset, v.byteLength);
    const scales = littleEndian(s, Float32Array);
    const dim = manifest.counts.dim;
    if (vectors.length !== scales.length * dim) {
      throw new Error(`sphinx-rag: embeddings.i8 holds ${vectors.length} values, expected ${scales.length} x ${dim}: rebuild the docs`);
    }
    return { vectors, scales, dim };
  }

  /**
   * The model files for embed.js, or null for a keyword-only index.
   * @returns {Promise<{model: Uint8Array, vocab: string, info: any} | null>}
   */
  async model() {
    const manifest = await this.manifest();
    if (!MODEL_FILES.every((n) => n in manifest.files)) return null;
    const [model, vocab, info] = await Promise.all([
      this.bytes("model/model.onnx"),
      this.text("model/vocab.txt"),
      this.json("model/model_info.json"),
    ]);
    return { model, vocab, info };
  }

  /**
   * Everything a Searcher needs (vectors are null on a keyword-only index).
   */
  async searchAssets() {
    const [keyword, dense] = await Promise.all([this.keyword(), this.vectors()]);
    return { ...keyword, vectors: dense?.vectors ?? null, scales: dense?.scales ?? null };
  }

  /**
   * Drop cached files this site stored that its current manifest no longer lists.
   * @returns {Promise<number>} entries deleted
   */
  async prune() {
    const cache = await this.cache();
    if (!cache) return 0;
    const wanted = new Set(Object.values((await this.manifest()).files).map((e) => this.cacheKey(e.sha256)));
    let deleted = 0;
    for (const request of await cache.keys()) {
      if (wanted.has(request.url)) continue;
      const response = await cache.match(request);
      if (response?.headers.get(BASE_HEADER) === this.baseUrl && (await cache.delete(request))) deleted++;
    }
    return deleted;
  }
}
