// @ts-check
/**
 * The HTTP shard source of the worker: fetches the index written by sphinx_rag/assets.py.
 *
 * `manifest.json` is revalidated on every load. Every other file is named by the hash of
 * its content: it is verified against that hash (when SubtleCrypto exists: secure
 * contexts and localhost) and kept in Cache Storage under its name, so a second visit
 * downloads only the manifest and a rebuilt site only the shards that changed. The
 * model files are checked against their sha256 in the manifest and cached by it (one
 * copy for every site of the origin).
 * @module loader
 */

import { checkFormat } from "../search/index.js";
import { ShardError, checkHash, decodeBase64, gunzip, parseScriptShard, scriptPayload, sha256Hex } from "../search/shards.js";

export const CACHE_NAME = "sphinx-rag-v2";
const BASE_HEADER = "x-sphinx-rag-base";

/**
 * @typedef {{name: string, loaded: number, total: number}} Progress
 * @typedef {object} LoaderOptions
 * @property {typeof fetch} [fetch]  defaults to globalThis.fetch
 * @property {CacheStorage | null} [caches]  defaults to globalThis.caches; null: no caching
 * @property {boolean} [verify]  check hashes (default true; skipped without SubtleCrypto)
 * @property {(p: Progress) => void} [onProgress]  download progress of large files (the model)
 */

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

export class HttpSource {
  /**
   * @param {string | URL} baseUrl  the index directory (`.../_static/sphinx_rag/index/`)
   * @param {LoaderOptions} [options]
   */
  constructor(baseUrl, options = {}) {
    const base = String(baseUrl);
    this.baseUrl = base.endsWith("/") ? base : base + "/";
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.caches = options.caches === undefined ? globalThis.caches ?? null : options.caches;
    this.verify = options.verify ?? true;
    this.onProgress = options.onProgress;
    /** @type {Promise<void>[]} pending Cache Storage writes */
    this._writes = [];
    /** @type {Promise<unknown>} Cache Storage writes wait for this (deferWrites) */
    this._writesAfter = Promise.resolve();
    /** @type {Promise<any> | null} */
    this._manifest = null;
    /** @type {Promise<Cache | null> | null} */
    this._cache = null;
  }

  /** @param {string} name */
  url(name) {
    return new URL(name, this.baseUrl).href;
  }

  /** @returns {Promise<any>} manifest.json, format checked (fetched once per source) */
  manifest() {
    if (!this._manifest) {
      this._manifest = (async () => {
        const response = await this.fetch(this.url("manifest.json"), { cache: "no-cache" });
        if (!response.ok) {
          throw new Error(`sphinx-rag: no search index at ${this.url("manifest.json")} (HTTP ${response.status}): ` +
            `build the docs with "sphinx_rag" in extensions`);
        }
        let manifest;
        try {
          manifest = await response.json();
        } catch {
          throw new Error(`sphinx-rag: ${this.url("manifest.json")} is damaged: rebuild the docs`);
        }
        return checkFormat(manifest);
      })();
      this._manifest.catch(() => { this._manifest = null; });
    }
    return this._manifest;
  }

  /** @returns {Promise<Cache | null>} */
  cache() {
    if (!this._cache) {
      const storage = this.caches;
      storage?.delete?.("sphinx-rag-v1").catch(() => false); // format 1's files, keyed by sha256
      this._cache = storage ? storage.open(CACHE_NAME).catch(() => /** @type {Cache | null} */ (null)) : Promise.resolve(null);
    }
    return this._cache;
  }

  /** @param {string} key */
  cacheKey(key) {
    return new URL(`/__sphinx-rag-cache__/${key}`, this.baseUrl).href;
  }

  /**
   * Cached bytes that still pass `check`, else null (a bad entry is dropped).
   * @param {string} key
   * @param {(data: Uint8Array) => Promise<boolean>} check
   */
  async cached(key, check) {
    const cache = await this.cache();
    if (!cache) return null;
    const hit = await cache.match(this.cacheKey(key)).catch(() => /** @type {Response | undefined} */ (undefined));
    if (!hit) return null;
    const data = new Uint8Array(await hit.arrayBuffer());
    if (await check(data)) return data;
    await cache.delete(this.cacheKey(key)).catch(() => false);
    return null;
  }

  /**
   * Hold Cache Storage writes until `until` settles: the writes of a cold visit's first
   * shards (IPC and disk) then do not compete with its first query.
   * @param {Promise<unknown>} until
   */
  deferWrites(until) {
    this._writesAfter = until.catch(() => {});
  }

  /**
   * Keep bytes in Cache Storage, in the background (waiting for it delayed first results).
   * @param {string} key
   * @param {Uint8Array} data
   */
  async store(key, data) {
    const body = /** @type {BodyInit} */ (/** @type {unknown} */ (data.slice()));
    const write = this._writesAfter.then(async () => {
      const cache = await this.cache();
      if (!cache) return;
      const headers = { "content-type": "application/octet-stream", [BASE_HEADER]: this.baseUrl };
      await cache.put(this.cacheKey(key), new Response(body, { headers }));
    });
    this._writes.push(write.catch(() => {}));
  }

  /** Resolves when every file downloaded so far is in Cache Storage. */
  async stored() {
    await Promise.all(this._writes);
  }

  /**
   * @param {string} name
   * @param {RequestCache} mode
   * @param {RequestPriority} [priority]  "low" for the model: a query's shards go first
   * @param {AbortSignal} [signal]  stops the download (the reader turned the model off)
   */
  async download(name, mode, priority = /** @type {RequestPriority} */ ("auto"), signal = undefined) {
    const response = await this.fetch(this.url(name), { cache: mode, priority, signal });
    if (!response.ok) {
      throw new Error(`sphinx-rag: cannot load ${this.url(name)} (HTTP ${response.status})` +
        (response.status === 404 ? ": the docs were rebuilt meanwhile; reload the page" : ""));
    }
    return readBody(response, name, this.onProgress);
  }

  /**
   * Download, check, and once more bypassing the HTTP cache if the check fails.
   * @template T
   * @param {string} name
   * @param {(data: Uint8Array) => Promise<T>} check  throws ShardError when the data is wrong
   * @param {RequestPriority} [priority]
   * @param {AbortSignal} [signal]
   * @returns {Promise<T>}
   */
  async fetchChecked(name, check, priority = /** @type {RequestPriority} */ ("auto"), signal = undefined) {
    try {
      return await check(await this.download(name, "default", priority, signal));
    } catch (err) {
      if (!(err instanceof ShardError)) throw err;
    }
    try {
      return await check(await this.download(name, "reload", priority, signal)); // a stale copy in the HTTP cache?
    } catch (err) {
      if (!(err instanceof ShardError)) throw err;
      throw new Error(`sphinx-rag: the search index on the server is damaged (${err.message}): rebuild the docs`);
    }
  }

  /**
   * Whether bytes hash to the hash in `name` (always true when verification is off).
   * @param {string} name @param {Uint8Array} data
   */
  async hashMatches(name, data) {
    if (!this.verify) return true;
    try {
      await checkHash(name, data);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The verified payload of a script shard (cached as its verified gzip stream).
   * @param {string} file  e.g. "terms-0123456789abcdef.js"
   * @returns {Promise<Uint8Array>}
   */
  async script(file) {
    const name = file.replace(/\.js$/, "");
    const hit = await this.cached(file, (stream) => this.hashMatches(name, stream));
    if (hit) return gunzip(hit);
    return this.fetchChecked(file, async (data) => {
      const parsed = parseScriptShard(new TextDecoder().decode(data));
      if (!parsed || parsed.name !== name) throw new ShardError(`${file} is not a sphinx-rag shard (truncated or replaced)`);
      const payload = await scriptPayload(name, parsed.base64, this.verify);
      this.store(file, decodeBase64(parsed.base64));
      return payload;
    });
  }

  /**
   * The verified bytes of a binary shard.
   * @param {string} name  e.g. "cluster-0123456789abcdef.bin"
   * @returns {Promise<Uint8Array>}
   */
  async binary(name) {
    const hit = await this.cached(name, (data) => this.hashMatches(name, data));
    if (hit) return hit;
    return this.fetchChecked(name, async (data) => {
      if (this.verify) await checkHash(name, data);
      this.store(name, data);
      return data;
    });
  }

  /**
   * The model files for embed.js, or null for a keyword-only index.
   * @param {AbortSignal} [signal]  stops the downloads
   * @returns {Promise<{model: Uint8Array, vocab: string, info: any} | null>}
   */
  async model(signal = undefined) {
    const entry = (await this.manifest()).model_files;
    if (!entry) return null;
    const file = async (/** @type {string} */ name) => {
      const meta = entry.files[name];
      const key = `sha256/${meta.sha256}`;
      const hit = await this.cached(key, async (d) => d.byteLength === meta.bytes);
      if (hit) return hit;
      const path = `${entry.dir}/${name}`;
      const data = await this.fetchChecked(path, async (d) => {
        const sha = this.verify ? await sha256Hex(d) : null;
        if (d.byteLength !== meta.bytes || (sha !== null && sha !== meta.sha256)) {
          throw new ShardError(`${path} does not match manifest.json`);
        }
        return d;
      }, "low", signal); // 23 MB: after the shards of the query being typed
      this.store(key, data);
      return data;
    };
    const [model, vocab, info] = await Promise.all([file("model.onnx"), file("vocab.txt"), file("model_info.json")]);
    const text = (/** @type {Uint8Array} */ b) => new TextDecoder().decode(b);
    return { model, vocab: text(vocab), info: JSON.parse(text(info)) };
  }

  /**
   * Drop cached files this site stored that its current index no longer names.
   * @param {string[]} names  every shard name of the current index (IndexReader.shardNames)
   * @returns {Promise<number>} entries deleted
   */
  async prune(names) {
    const cache = await this.cache();
    if (!cache) return 0;
    const manifest = await this.manifest();
    const keys = [...names];
    if (manifest.model_files) keys.push(...Object.values(manifest.model_files.files).map((m) => `sha256/${/** @type {any} */ (m).sha256}`));
    const wanted = new Set(keys.map((k) => this.cacheKey(k)));
    let deleted = 0;
    for (const request of await cache.keys()) {
      if (wanted.has(request.url)) continue;
      const response = await cache.match(request);
      if (response?.headers.get(BASE_HEADER) === this.baseUrl && (await cache.delete(request))) deleted++;
    }
    return deleted;
  }
}
