// @ts-check
/**
 * A built index (format 3) as sphinx_rag/search/index.py's IndexReader reads it: the manifest
 * at once, every shard on first use. Where the bytes come from is the `source`'s job:
 * worker/loader.js fetches over HTTP (verified, cached by name), ui/script_source.js
 * runs script shards from file://, the Node tests read files.
 *
 * Every file is checked before use (validate.js: a federated site's index is untrusted
 * input) and asked for with the most bytes it may hold (validate.js shardLimit, or the
 * exact size the manifest and dense directory give a binary shard): the source refuses
 * more. A chunk record that fails its checks is DROPPED (no URL: callers leave it out) and
 * counted (`dropped` of `recordsRead`), as Python's reader does.
 * @module index
 */

import { nearLengths, readTermShard } from "./bm25.js";
import { readCentroidShard, readClusterMapShard, readClusterShard } from "./dense.js";
import { ShardError, compareCodePoints, json } from "./shards.js";
import { StaticEncoder } from "./static_encoder.js";
import {
  HOME_ROOT, IndexInvalid, MAX_CLUSTERS, checkChunkIds, checkClusterMap, checkDenseDirectory, checkDirectory, checkManifest,
  checkNearShard, checkTermShard, checkTextShard, intIn, invalidRecords, shardLimit,
} from "./validate.js";

export const FORMAT_VERSION = 3;

/**
 * @typedef {object} ShardSource
 * @property {(name: string, maxBytes?: number) => Promise<Uint8Array>} script  verified payload of a
 *   script shard (maxBytes: the most its payload may inflate to)
 * @property {(name: string, maxBytes?: number) => Promise<Uint8Array>} binary  verified bytes of a binary shard
 *
 * @typedef {"terms" | "near" | "texts" | "cmap" | "cluster"} QueryShard  the shards a query reads
 *
 * @typedef {object} ChunkRecord  one record of a text shard (title added on reading)
 * @property {string} id
 * @property {string} doc
 * @property {string} url
 * @property {string[]} headings
 * @property {string} title
 * @property {string} kind
 * @property {string} text  what was embedded and indexed
 * @property {import("./display.js").Display} [display]  what a reader sees (display.js)
 * @property {boolean} [dropped]  it failed its checks (validate.js DROPPED: no text, no URL)
 * @property {string} [problem]  why (validate.js recordProblem)
 */

/** Manifests checked already (HttpSource.manifest and IndexReader both check). */
const checked = new WeakSet();

/**
 * Throw a clear error unless the manifest is in the format this client reads and
 * well-formed (validate.js checkManifest).
 * @param {any} manifest
 */
export function checkFormat(manifest) {
  const version = manifest?.format_version;
  if (version !== FORMAT_VERSION) {
    throw new Error(`sphinx-rag: index format ${String(version).slice(0, 20)}, this client reads ${FORMAT_VERSION}: rebuild the docs`);
  }
  if (!checked.has(manifest)) {
    checkManifest(manifest);
    checked.add(manifest);
  }
  return manifest;
}

/**
 * JSON of a shard's payload (IndexInvalid when it is not).
 * @param {Uint8Array} payload @param {string} name
 */
function parsed(payload, name) {
  try {
    return json(payload);
  } catch {
    throw new IndexInvalid(`sphinx-rag: ${name} is not a well-formed sphinx-rag index file (not JSON)`);
  }
}

/**
 * A decoder's result, its errors (a number past the end, a view past the bytes) as IndexInvalid.
 * @template T
 * @param {string} name @param {() => T} decode
 * @returns {T}
 */
function decoded(name, decode) {
  try {
    return decode();
  } catch (err) {
    if (err instanceof IndexInvalid) throw err;
    const why = err instanceof ShardError || err instanceof RangeError || err instanceof TypeError || err instanceof SyntaxError
      ? err.message : String(err);
    throw new IndexInvalid(`sphinx-rag: ${name} is not a well-formed sphinx-rag index file (${why})`);
  }
}

export class IndexReader {
  /**
   * @param {any} manifest  manifest.json (checked)
   * @param {ShardSource} source
   * @param {string} [root]  the site root its records' URLs must stay under (a federated
   *   site's; the home index's URLs are relative: validate.js HOME_ROOT)
   */
  constructor(manifest, source, root = HOME_ROOT) {
    this.manifest = checkFormat(manifest);
    this.source = source;
    this.root = root;
    /** Chunk records read (text shards decoded), dropped or not; dropped: those that failed their checks. */
    this.recordsRead = 0;
    this.dropped = 0;
    /** @type {string | null} why the first record dropped was (validate.js recordProblem) */
    this.recordProblem = null;
    this.nChunks = manifest.counts.chunks;
    this.dim = manifest.counts.dim;
    /** @type {Map<string, Promise<any>>} */
    this._memo = new Map();
    /** @type {any} */
    this.dir = null;
    /** @type {{clusters: Array<[string, number]>, cluster_map: string[]} | null} */
    this.denseDir = null;
    /** @type {Float64Array | null} */
    this.weights = null;
    /**
     * Awaited before a query's shard that is not in memory is requested (kind: "terms",
     * "near", "texts", "cmap" or "cluster"): it may wait, or throw to cancel the query that
     * asked (worker.js lets a typed query settle first). The directory, centroids and
     * encoder, read once per visit, do not pass through it.
     * @type {((kind: QueryShard, name: string) => Promise<void>) | null}
     */
    this.beforeFetch = null;
  }

  /**
   * _once for the shards of a query, through beforeFetch.
   * @template T
   * @param {QueryShard} kind
   * @param {string} name
   * @param {(name: string) => Promise<T>} load
   * @returns {Promise<T>}
   */
  async _queryShard(kind, name, load) {
    if (this.beforeFetch && !this._memo.has(name)) await this.beforeFetch(kind, name);
    return this._once(name, load);
  }

  /**
   * @template T
   * @param {string} name
   * @param {(name: string) => Promise<T>} load
   * @returns {Promise<T>}
   */
  _once(name, load) {
    let p = this._memo.get(name);
    if (!p) {
      p = load(name);
      this._memo.set(name, p);
      p.catch(() => this._memo.delete(name)); // a failed load may be tried again
    }
    return p;
  }

  /** The directory shard (term shard boundaries, text shards, weights): what a keyword query needs. */
  async directory() {
    if (!this.dir) {
      const dir = await this._once(this.manifest.dir,
        async (n) => checkDirectory(parsed(await this.source.script(n, shardLimit(this.manifest, "dir")), n), this.manifest, n));
      const weights = new Float64Array(this.nChunks).fill(1);
      for (const [start, end, w] of dir.weights) weights.fill(w, start, end);
      this.weights = weights;
      this.dir = dir;
    }
    return this.dir;
  }

  /**
   * A term's postings (its term shard is loaded), or null if it is not in the vocabulary.
   * @param {string} term
   * @returns {Promise<import("./bm25.js").Postings | null>}
   */
  async postings(term) {
    const shards = (await this.directory()).terms;
    if (shards.length === 0) return null;
    let lo = 0;
    let hi = shards.length; // the last shard whose first term <= term
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (compareCodePoints(shards[mid][0], term) <= 0) lo = mid;
      else hi = mid;
    }
    const table = await this._queryShard("terms", shards[lo][1], async (n) => {
      const payload = await this.source.script(n, shardLimit(this.manifest, "terms"));
      checkTermShard(payload, n);
      const read = decoded(n, () => readTermShard(payload));
      for (const postings of read.values()) checkChunkIds(postings.docs, this.nChunks, n);
      return read;
    });
    return table.get(term) ?? null;
  }

  /**
   * Vocabulary terms (with df) of the lengths a typo lookup of `term` reads.
   * @param {string} term
   * @returns {Promise<Array<[string, number]>>}
   */
  async near(term) {
    const lengths = nearLengths(term);
    if (!lengths) return [];
    const [lo, hi] = lengths;
    const parts = await Promise.all(
      this.manifest.near
        .filter((/** @type {[number, number, string]} */ [first, last]) => last >= lo && first <= hi)
        .map((/** @type {[number, number, string]} */ [, longest, name]) => this._queryShard("near", name, async (n) => {
          const data = checkNearShard(parsed(await this.source.script(n, shardLimit(this.manifest, "near", longest)), n), n);
          return /** @type {Array<[string, number]>} */ (data.terms.map((/** @type {string} */ t, /** @type {number} */ j) => [t, data.df[j]]));
        })),
    );
    /** @type {Array<[string, number]>} */
    const out = [];
    for (const part of parts) {
      for (const entry of part) {
        const length = [...entry[0]].length;
        if (length >= lo && length <= hi) out.push(entry);
      }
    }
    return out;
  }

  /**
   * The record of chunk i (its text shard is loaded).
   * @param {number} i
   * @returns {Promise<ChunkRecord>}
   */
  async chunk(i) {
    if (!intIn(i, 0, this.nChunks - 1)) throw new IndexInvalid(`sphinx-rag: chunk ${i} of an index of ${this.nChunks} chunks`);
    const per = this.manifest.layout.texts_per_shard;
    const s = Math.floor(i / per);
    const name = (await this.directory()).texts[s];
    const shard = await this._queryShard("texts", name, async (n) => {
      const data = parsed(await this.source.script(n, shardLimit(this.manifest, "texts")), n);
      const { records, dropped } = checkTextShard(data, Math.min(per, this.nChunks - s * per), s * per, this.nChunks, n, this.root);
      for (const r of records) if (!r.dropped) r.title = r.headings.filter(Boolean).join(" > ");
      this.recordsRead += records.length;
      this.dropped += dropped;
      this.recordProblem ??= records.find((r) => r.dropped)?.problem ?? null;
      return records;
    });
    return shard[i - Math.floor(i / per) * per];
  }

  /**
   * How many of the records read were invalid and why the first was (null: none was):
   * Python's IndexReader.invalid_records.
   * @returns {string | null}
   */
  invalidRecords() {
    if (!this.dropped) return null;
    return `${invalidRecords(this.dropped, this.recordsRead, this.nChunks)} (${this.recordProblem})`;
  }

  /** Every record read failed its checks: nothing of the index can be shown. */
  get everyRecordInvalid() {
    return this.recordsRead > 0 && this.dropped === this.recordsRead;
  }

  /**
   * Start loading the text shards of these chunks (and of the chunk after each, which
   * passage expansion may take in), all at once.
   * @param {number[]} indices
   */
  async prefetchChunks(indices) {
    const per = this.manifest.layout.texts_per_shard;
    const shards = new Set();
    for (const i of indices) {
      shards.add(Math.floor(i / per));
      if (i + 1 < this.nChunks) shards.add(Math.floor((i + 1) / per));
    }
    await Promise.all([...shards].map((s) => this.chunk(s * per)));
  }

  get hasVectors() {
    return this.manifest.dense != null && this.dim > 0;
  }

  /**
   * The centroids, one per cluster of the dense directory (read at the same time).
   * @returns {Promise<{vectors: Int8Array, scales: Float32Array}>}
   */
  centroids() {
    return this._once(this.manifest.dense.centroids, async (n) => {
      const most = 4 + (this.manifest.counts.clusters ?? MAX_CLUSTERS) * (4 + this.dim);
      const [bytes, ddir] = await Promise.all([this.source.binary(n, most), this.denseDirectory()]);
      const count = ddir.clusters.length;
      if (bytes.byteLength !== 4 + count * (4 + this.dim) || decoded(n, () => new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true)) !== count) {
        throw new IndexInvalid(`sphinx-rag: ${n} is not a well-formed sphinx-rag index file (not ${count} centroids of ${this.dim} dimensions)`);
      }
      return decoded(n, () => readCentroidShard(bytes, this.dim));
    });
  }

  /**
   * The static query encoder, or null when the index has none (sphinx_rag_query_encoder = "model").
   * @returns {Promise<StaticEncoder | null>}
   */
  encoder() {
    const entry = this.manifest.encoder;
    if (!entry) return Promise.resolve(null);
    return this._once(entry.file, async (n) => {
      const bytes = await this.source.binary(n, shardLimit(this.manifest, "encoder"));
      const encoder = decoded(n, () => StaticEncoder.fromBytes(bytes));
      if (encoder.dim !== this.dim) {
        throw new IndexInvalid(`sphinx-rag: ${n} is not a well-formed sphinx-rag index file (${encoder.dim} dimensions, the index ${this.dim})`);
      }
      return encoder;
    });
  }

  /**
   * The dense directory (cluster shard names and sizes, cluster map names), out of the
   * keyword directory that every first query reads (Python's dense_directory).
   */
  async denseDirectory() {
    if (!this.denseDir) {
      this.denseDir = await this._once(this.manifest.dense.directory,
        async (n) => checkDenseDirectory(parsed(await this.source.binary(n, shardLimit(this.manifest, "ddir")), n), this.manifest, n));
    }
    return /** @type {{clusters: Array<[string, number]>, cluster_map: string[]}} */ (this.denseDir);
  }

  /** @param {number} c */
  async cluster(c) {
    const clusters = (await this.denseDirectory()).clusters;
    if (!intIn(c, 0, clusters.length - 1)) throw new IndexInvalid(`sphinx-rag: cluster ${c} of an index of ${clusters.length} clusters`);
    const [name, size] = clusters[c];
    return this._queryShard("cluster", name, async (n) => {
      const bytes = await this.source.binary(n, 4 + size * (8 + this.dim));
      const cluster = decoded(n, () => readClusterShard(bytes, this.dim));
      if (cluster.ids.length !== size) {
        throw new IndexInvalid(`sphinx-rag: ${n} is not a well-formed sphinx-rag index file (${cluster.ids.length} vectors, the dense directory says ${size})`);
      }
      checkChunkIds(cluster.ids, this.nChunks, n);
      return cluster;
    });
  }

  /**
   * The cluster holding chunk `i`, or null when the index has no cluster map (Python's cluster_of).
   * @param {number} i
   * @returns {Promise<number | null>}
   */
  async clusterOf(i) {
    const names = (await this.denseDirectory()).cluster_map;
    if (!names.length) return null;
    if (!intIn(i, 0, this.nChunks - 1)) throw new IndexInvalid(`sphinx-rag: chunk ${i} of an index of ${this.nChunks} chunks`);
    const per = this.manifest.layout.cluster_map_chunks;
    const s = Math.floor(i / per);
    const count = Math.min(per, this.nChunks - s * per);
    const map = await this._queryShard("cmap", names[s], async (n) => {
      const bytes = await this.source.binary(n, 4 + 2 * count);
      const read = decoded(n, () => readClusterMapShard(bytes));
      checkClusterMap(read, this.clusterSizes.length, count, n);
      return read;
    });
    return map[i % per];
  }

  /** Vectors per cluster (after denseDirectory()). @returns {number[]} */
  get clusterSizes() {
    return /** @type {any} */ (this.denseDir).clusters.map((/** @type {[string, number]} */ [, size]) => size);
  }

  /** Names of every shard the manifest and directory refer to (for cache pruning). */
  async shardNames() {
    const dir = await this.directory();
    const names = [this.manifest.dir, ...this.manifest.near.map((/** @type {any[]} */ n) => n[2]),
      ...dir.terms.map((/** @type {any[]} */ t) => t[1]), ...dir.texts];
    if (this.manifest.dense) {
      const dense = await this.denseDirectory();
      names.push(this.manifest.dense.centroids, this.manifest.dense.directory,
        ...dense.clusters.map(([name]) => name), ...dense.cluster_map);
    }
    if (this.manifest.encoder) names.push(this.manifest.encoder.file);
    return names;
  }
}
