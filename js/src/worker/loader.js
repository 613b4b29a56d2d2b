// @ts-check
/**
 * The HTTP shard source of the worker: fetches the index written by sphinx_rag/index/write.py,
 * the home site's and each federated site's (federation.js), every read through one
 * guarded fetch (`guardedFetch`): a redirect to another origin is refused before anything
 * is sent there (search/redirects.js: in a browser, this site's files follow redirects
 * within its origin only, another site's files none); a body is read at most up to the
 * bytes its file may hold (the manifest MANIFEST_BYTES, a shard what index.js asks for
 * from the manifest's counts, a model file its declared size; a script shard is inflated
 * up to its cap too: shards.js gunzip), and a federated site's reads of one query up to
 * a total; a deadline, when given (federated sites: federation.js REMOTE_TIMEOUT_MS),
 * covers the whole request, its body included. The home site's reads have no deadline
 * (its model is 23 MB on whatever connection the reader has).
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
import { RedirectRefused, fetchWithinOrigin } from "../search/redirects.js";
import {
  FILE_CEILING, ShardError, TooLarge, checkHash, concat, decodeBase64, gunzip, megabytes, parseScriptShard, scriptPayload,
  sha256Hex,
} from "../search/shards.js";

export const CACHE_NAME = "sphinx-rag-v2";
const BASE_HEADER = "x-sphinx-rag-base";
/** manifest.json's most bytes (an honest one: 3 KB; its settings may hold suggestions and an LLM prompt). */
export const MANIFEST_BYTES = 4 << 20;

export { RedirectRefused };

/**
 * @typedef {{name: string, loaded: number, total: number}} Progress
 * @typedef {object} LoaderOptions
 * @property {typeof fetch} [fetch]  defaults to globalThis.fetch
 * @property {CacheStorage | null} [caches]  defaults to globalThis.caches; null: no caching
 * @property {boolean} [verify]  check hashes (default true; skipped without SubtleCrypto)
 * @property {(p: Progress) => void} [onProgress]  download progress of large files (the model)
 * @property {number | null} [deadlineMs]  each request (its body too) gives up after this long (null: never)
 * @property {number | null} [queryBytes]  at most this many bytes read (inflated ones too) between two
 *   newQuery() calls (null: no total)
 *
 * @typedef {{left: number, limit: number, site: string}} Budget  the bytes a query may still read from a site
 * @typedef {object} GuardedOptions
 * @property {RequestInit} [init]  cache, priority, signal (redirects: search/redirects.js's)
 * @property {number} maxBytes  the most bytes the body may hold (decoded): more is TooLarge
 * @property {number | null} [deadlineMs]  the whole request, body included (a TimeoutError)
 * @property {Budget | null} [budget]  charged with every byte read
 * @property {(p: Progress) => void} [onProgress]
 * @property {string} [name]  the file, in messages
 */

/**
 * `promise`, or the signal's reason as soon as it aborts (a fetch or a read that ignores
 * its signal still ends at the deadline).
 * @template T
 * @param {Promise<T>} promise @param {AbortSignal | undefined} signal
 * @returns {Promise<T>}
 */
function untilAborted(promise, signal) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** @param {string} name @param {number} maxBytes */
function tooLarge(name, maxBytes) {
  return new TooLarge(`sphinx-rag: ${name} is larger than its index allows (over ${megabytes(maxBytes)}): refused`);
}

/**
 * Charge a query's budget with `n` bytes (TooLarge once it is spent).
 * @param {Budget | null | undefined} budget @param {number} n
 */
export function charge(budget, n) {
  if (!budget) return;
  budget.left -= n;
  if (budget.left < 0) {
    throw new TooLarge(`sphinx-rag: ${budget.site} sent more than ${megabytes(budget.limit)} for one query: refused`);
  }
}

/**
 * The one fetch of every read of an index. Follows a redirect only within the origin asked,
 * refusing any other before it is requested (`RedirectRefused`: search/redirects.js); reads the body
 * up to `maxBytes` (a Content-Length over it is refused before reading; a body that runs
 * over, an endless one, is cancelled there) charging `budget`; ends at `deadlineMs` with a
 * TimeoutError, headers and body alike (a server trickling a byte a second is given up).
 * @param {typeof fetch} fetchFn
 * @param {string} url
 * @param {GuardedOptions} options
 * @returns {Promise<{status: number, bytes: Uint8Array | null}>}  bytes: null when the status is not 2xx
 */
export async function guardedFetch(fetchFn, url, { init = {}, maxBytes, deadlineMs = null, budget = null, onProgress, name = url }) {
  const signals = [init.signal, deadlineMs != null ? AbortSignal.timeout(deadlineMs) : null].filter((x) => x != null);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0] ?? undefined;
  const response = await untilAborted(fetchWithinOrigin(fetchFn, url, { ...init, signal }), signal);
  const cancel = () => { response.body?.cancel().catch(() => {}); };
  if (!response.ok) {
    cancel();
    return { status: response.status, bytes: null };
  }
  const total = Number(response.headers.get("content-length")) || 0;
  if (total > maxBytes) {
    cancel();
    throw tooLarge(name, maxBytes);
  }
  if (!response.body) return { status: response.status, bytes: new Uint8Array(0) };
  const reader = response.body.getReader();
  /** @type {Uint8Array[]} */
  const parts = [];
  let loaded = 0;
  try {
    for (;;) {
      const { done, value } = await untilAborted(reader.read(), signal);
      if (done) break;
      loaded += value.byteLength;
      if (loaded > maxBytes) throw tooLarge(name, maxBytes);
      charge(budget, value.byteLength);
      parts.push(value);
      onProgress?.({ name, loaded, total });
    }
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
  return { status: response.status, bytes: concat(parts, loaded) };
}

/**
 * The most bytes of a script shard file whose payload inflates to at most `payload` bytes
 * (base64 of a gzip stream: 4/3 of at most the payload and its framing).
 * @param {number} payload
 */
function scriptFileBytes(payload) {
  return Math.ceil((payload * 1.001 + 1024) / 3) * 4 + 64;
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
    this.deadlineMs = options.deadlineMs ?? null;
    this.queryBytes = options.queryBytes ?? null;
    /** @type {Budget | null} */
    this.budget = null;
    this.newQuery();
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

  /** A query starts: its reads get a total of their own (queryBytes). */
  newQuery() {
    const limit = this.queryBytes;
    this.budget = limit == null ? null : { left: limit, limit, site: new URL(this.baseUrl).origin };
  }

  /**
   * The guarded fetch of a file of this index.
   * @param {string} name @param {number} maxBytes @param {RequestInit} init
   */
  get(name, maxBytes, init) {
    return guardedFetch(this.fetch, this.url(name), {
      init, maxBytes, deadlineMs: this.deadlineMs, budget: this.budget, onProgress: this.onProgress, name,
    });
  }

  /** @returns {Promise<any>} manifest.json, format checked (fetched once per source) */
  manifest() {
    if (!this._manifest) {
      this._manifest = (async () => {
        const { status, bytes } = await this.get("manifest.json", MANIFEST_BYTES, { cache: "no-cache" });
        if (!bytes) {
          throw new Error(`sphinx-rag: no search index at ${this.url("manifest.json")} (HTTP ${status}): ` +
            `build the docs with "sphinx_rag" in extensions`);
        }
        let manifest;
        try {
          manifest = JSON.parse(new TextDecoder().decode(bytes)); // read whole: a slow answer is a TimeoutError above
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
   * @param {number} [maxBytes]  a larger entry is dropped
   */
  async cached(key, check, maxBytes = FILE_CEILING) {
    const cache = await this.cache();
    if (!cache) return null;
    const hit = await cache.match(this.cacheKey(key)).catch(() => /** @type {Response | undefined} */ (undefined));
    if (!hit) return null;
    const data = new Uint8Array(await hit.arrayBuffer());
    if (data.byteLength <= maxBytes && (await check(data))) return data;
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
   * @param {number} maxBytes  the most bytes the file may hold
   * @param {RequestCache} mode
   * @param {RequestPriority} [priority]  "low" for the model: a query's shards go first
   * @param {AbortSignal} [signal]  stops the download (the reader turned the model off)
   */
  async download(name, maxBytes, mode, priority = /** @type {RequestPriority} */ ("auto"), signal = undefined) {
    const { status, bytes } = await this.get(name, maxBytes, { cache: mode, priority, signal });
    if (!bytes) {
      throw new Error(`sphinx-rag: cannot load ${this.url(name)} (HTTP ${status})` +
        (status === 404 ? ": the docs were rebuilt meanwhile; reload the page" : ""));
    }
    return bytes;
  }

  /**
   * Download, check, and once more bypassing the HTTP cache if the check fails.
   * @template T
   * @param {string} name
   * @param {number} maxBytes
   * @param {(data: Uint8Array) => Promise<T>} check  throws ShardError when the data is wrong
   * @param {RequestPriority} [priority]
   * @param {AbortSignal} [signal]
   * @returns {Promise<T>}
   */
  async fetchChecked(name, maxBytes, check, priority = /** @type {RequestPriority} */ ("auto"), signal = undefined) {
    try {
      return await check(await this.download(name, maxBytes, "default", priority, signal));
    } catch (err) {
      if (!(err instanceof ShardError)) throw err;
    }
    try {
      return await check(await this.download(name, maxBytes, "reload", priority, signal)); // a stale copy in the HTTP cache?
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
   * @param {number} [maxBytes]  the most its payload may inflate to (index.js asks; within FILE_CEILING)
   * @returns {Promise<Uint8Array>}
   */
  async script(file, maxBytes = FILE_CEILING) {
    const name = file.replace(/\.js$/, "");
    const most = Math.min(maxBytes, FILE_CEILING);
    const hit = await this.cached(file, (stream) => this.hashMatches(name, stream), scriptFileBytes(most));
    if (hit) return gunzip(hit, most, name);
    return this.fetchChecked(file, scriptFileBytes(most), async (data) => {
      const parsed = parseScriptShard(new TextDecoder().decode(data));
      if (!parsed || parsed.name !== name) throw new ShardError(`${file} is not a sphinx-rag shard (truncated or replaced)`);
      const payload = await scriptPayload(name, parsed.base64, this.verify, most);
      charge(this.budget, payload.byteLength); // inflated bytes count towards the query's total too
      this.store(file, decodeBase64(parsed.base64));
      return payload;
    });
  }

  /**
   * The verified bytes of a binary shard.
   * @param {string} name  e.g. "cluster-0123456789abcdef.bin"
   * @param {number} [maxBytes]  the most it may hold (index.js asks; within FILE_CEILING)
   * @returns {Promise<Uint8Array>}
   */
  async binary(name, maxBytes = FILE_CEILING) {
    const most = Math.min(maxBytes, FILE_CEILING);
    const hit = await this.cached(name, (data) => this.hashMatches(name, data), most);
    if (hit) return hit;
    return this.fetchChecked(name, most, async (data) => {
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
    const files = await this.modelFiles("model_files", ["model.onnx", "vocab.txt", "model_info.json"], signal);
    return files && { model: files["model.onnx"], vocab: files["vocab.txt"], info: files["model_info.json"] };
  }

  /**
   * The reranker's files for cross_encoder.js (they come with the model's tier), or null
   * when the site ships none.
   * @param {AbortSignal} [signal]  stops the downloads
   * @returns {Promise<{model: Uint8Array, vocab: string, info: any} | null>}
   */
  async reranker(signal = undefined) {
    const files = await this.modelFiles("reranker_files", ["reranker.onnx", "vocab.txt", "reranker_info.json"], signal);
    return files && { model: files["reranker.onnx"], vocab: files["vocab.txt"], info: files["reranker_info.json"] };
  }

  /**
   * A manifest entry's files (model_files, reranker_files), each checked against its size
   * and sha256 and cached by its hash: .onnx as bytes, .txt as text, .json parsed.
   * @param {string} key
   * @param {string[]} names
   * @param {AbortSignal} [signal]
   * @returns {Promise<Record<string, any> | null>}
   */
  async modelFiles(key, names, signal = undefined) {
    const entry = (await this.manifest())[key];
    if (!entry) return null;
    const file = async (/** @type {string} */ name) => {
      const meta = entry.files[name];
      const cacheKey = `sha256/${meta.sha256}`;
      const hit = await this.cached(cacheKey, async (d) => d.byteLength === meta.bytes, meta.bytes);
      if (hit) return hit;
      const path = `${entry.dir}/${name}`;
      const data = await this.fetchChecked(path, meta.bytes, async (d) => {
        const sha = this.verify ? await sha256Hex(d) : null;
        if (d.byteLength !== meta.bytes || (sha !== null && sha !== meta.sha256)) {
          throw new ShardError(`${path} does not match manifest.json (sha256 ${sha ?? "unchecked"}, expected ${meta.sha256})`);
        }
        return d;
      }, "low", signal); // megabytes: after the shards of the query being typed
      this.store(cacheKey, data);
      return data;
    };
    const bytes = await Promise.all(names.map(file));
    const text = (/** @type {Uint8Array} */ b) => new TextDecoder().decode(b);
    /** @type {Record<string, any>} */
    const out = {};
    names.forEach((name, i) => {
      out[name] = name.endsWith(".json") ? JSON.parse(text(bytes[i])) : name.endsWith(".txt") ? text(bytes[i]) : bytes[i];
    });
    return out;
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
    for (const entry of [manifest.model_files, manifest.reranker_files]) {
      if (entry) keys.push(...Object.values(entry.files).map((m) => `sha256/${/** @type {any} */ (m).sha256}`));
    }
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
