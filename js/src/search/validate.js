// @ts-check
/**
 * Checks of an index's files before their content is used: a federated site's index is
 * untrusted input (worker/federation.js), and the home site's is checked the same way.
 * Each check throws IndexInvalid naming the file and what is wrong, in one line; the
 * caller leaves that site out. What they guarantee: types as index.js and retrieve.js use
 * them, numbers in range, counts consistent with each other (the directory's text shards
 * with counts.chunks, a cluster's size with the dense directory), chunk and cluster ids in
 * range, shard names of the kind expected (never a path), and no allocation that the
 * file's own size does not back (a count of 10^12 is refused, not allocated).
 *
 * `shardLimit` sizes the cap of each shard from the manifest's counts and layout (within
 * JSON_CEILING, FILE_CEILING for the binary encoder): a gzip bomb under a matching hash is refused at its cap, and an honest
 * shard is far below it (texts 70 KB for a cap of 2.6 MB at the default layout).
 * @module validate
 */

import { FILE_CEILING } from "./shards.js";

/** Chunks an index may hold: per-chunk arrays (index.js weights, bm25.js Scratch) are 28 bytes each. */
export const MAX_CHUNKS = 1 << 22;
/** Dimensions of a vector (the default model: 384). */
export const MAX_DIM = 4096;
/** Clusters (a cluster map stores a cluster as u16). */
export const MAX_CLUSTERS = 1 << 16;
/** A model file's declared size (the default model.onnx: 23 MB). */
export const MAX_MODEL_FILE = 1 << 30;
/** The most bytes of a shard parsed as JSON (a parsed string costs several times its bytes; an honest dir shard of 200k chunks: 0.3 MB). */
export const JSON_CEILING = 16 << 20;
/** Bytes of one text record that a text shard's cap allows for (honest: 2 KB on average, 3.2 KB at most in the demo). */
const RECORD_BYTES = 64 << 10;
const SLACK = 64 << 10;

export class IndexInvalid extends Error {}

/** @param {string} file @param {string} what */
function invalid(file, what) {
  return new IndexInvalid(`sphinx-rag: ${file} is not a well-formed sphinx-rag index file (${what})`);
}

/** @param {unknown} x @param {number} lo @param {number} hi */
export function intIn(x, lo, hi) {
  return typeof x === "number" && Number.isInteger(x) && x >= lo && x <= hi;
}

/** @param {unknown} x */
function finite(x) {
  return typeof x === "number" && Number.isFinite(x);
}

/** @param {unknown} x */
function isObject(x) {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/** @param {string} kind @param {"js" | "bin"} ext */
function shardName(kind, ext) {
  return new RegExp(`^${kind}-[0-9a-f]{16}\\.${ext}$`);
}

const NAMES = {
  dir: shardName("dir", "js"), near: shardName("near", "js"), terms: shardName("terms", "js"),
  texts: shardName("texts", "js"), centroids: shardName("centroids", "bin"), ddir: shardName("ddir", "bin"),
  cluster: shardName("cluster", "bin"), cmap: shardName("cmap", "bin"), encoder: shardName("encoder", "bin"),
};
const MODEL_DIR = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const MODEL_FILES = ["model.onnx", "vocab.txt", "model_info.json"];
/** What cross_encoder.js reads of the reranker (the manifest lists its tokenizer.json too). */
const RERANKER_FILES = ["reranker.onnx", "vocab.txt", "reranker_info.json"];

/**
 * Throw unless `value` passes `ok`.
 * @param {string} file @param {boolean} ok @param {string} what
 */
function need(file, ok, what) {
  if (!ok) throw invalid(file, what);
}

/**
 * The manifest's fields that the client reads, checked (format_version is index.js's).
 * @param {any} m
 */
export function checkManifest(m) {
  const f = "manifest.json";
  need(f, isObject(m.counts), "counts must be an object");
  need(f, intIn(m.counts.chunks, 0, MAX_CHUNKS), `counts.chunks must be an integer from 0 to ${MAX_CHUNKS}`);
  need(f, intIn(m.counts.dim ?? 0, 0, MAX_DIM), `counts.dim must be an integer from 0 to ${MAX_DIM}`);
  for (const key of ["vocab", "postings", "clusters"]) {
    need(f, m.counts[key] == null || intIn(m.counts[key], 0, Number.MAX_SAFE_INTEGER), `counts.${key} must be a count`);
  }
  need(f, isObject(m.layout), "layout must be an object");
  need(f, intIn(m.layout.texts_per_shard, 1, 1 << 16), "layout.texts_per_shard must be an integer from 1 to 65536");
  need(f, intIn(m.layout.probe, 1, Number.MAX_SAFE_INTEGER), "layout.probe must be a positive integer");
  for (const key of ["guide_hits", "guide_clusters", "term_shard_bytes", "head_postings", "near_shard_terms",
    "cluster_size", "max_clusters", "exact_up_to"]) {
    need(f, m.layout[key] == null || intIn(m.layout[key], 0, Number.MAX_SAFE_INTEGER), `layout.${key} must be a count`);
  }
  need(f, typeof m.dir === "string" && NAMES.dir.test(m.dir), "dir must name a dir-<hash>.js shard");
  need(f, Array.isArray(m.near) && m.near.every((/** @type {any} */ n) => Array.isArray(n) && n.length === 3
    && intIn(n[0], 0, 1 << 16) && intIn(n[1], n[0], 1 << 16) && typeof n[2] === "string" && NAMES.near.test(n[2])),
  "near must list [shortest, longest, near-<hash>.js]");
  if (m.dense != null) {
    need(f, isObject(m.dense) && typeof m.dense.centroids === "string" && NAMES.centroids.test(m.dense.centroids)
      && typeof m.dense.directory === "string" && NAMES.ddir.test(m.dense.directory),
    "dense must name its centroids-<hash>.bin and ddir-<hash>.bin shards");
    need(f, m.counts.dim >= 1, "an index with vectors needs counts.dim");
    need(f, intIn(m.layout.cluster_map_chunks ?? 1, 1, MAX_CHUNKS), "layout.cluster_map_chunks must be a positive integer");
  }
  if (m.encoder != null) {
    need(f, isObject(m.encoder) && typeof m.encoder.file === "string" && NAMES.encoder.test(m.encoder.file),
      "encoder must name an encoder-<hash>.bin shard");
  }
  for (const [key, names] of /** @type {[string, string[]][]} */ ([["model_files", MODEL_FILES], ["reranker_files", RERANKER_FILES]])) {
    if (m[key] == null) continue;
    const entry = m[key];
    need(f, isObject(entry) && typeof entry.dir === "string" && MODEL_DIR.test(entry.dir) && !/^\.+$/.test(entry.dir)
      && isObject(entry.files), `${key} must name a directory and its files`);
    need(f, names.every((name) => isObject(entry.files[name])), `${key} must list ${names.join(", ")}`);
    for (const [name, meta] of Object.entries(entry.files)) {
      need(f, isObject(meta) && intIn(meta.bytes, 0, MAX_MODEL_FILE) && typeof meta.sha256 === "string"
        && /^[0-9a-f]{64}$/.test(meta.sha256), `${key}.files[${JSON.stringify(name).slice(0, 40)}] needs bytes and sha256`);
    }
  }
  need(f, m.model == null || isObject(m.model), "model must be an object");
  need(f, m.settings == null || isObject(m.settings), "settings must be an object");
  const s = m.settings ?? {};
  need(f, s.fusion == null || typeof s.fusion === "string", "settings.fusion must be a string");
  need(f, s.rrf_k == null || (finite(s.rrf_k) && s.rrf_k > 0), "settings.rrf_k must be a positive number");
  need(f, s.relevance_floor == null || finite(s.relevance_floor), "settings.relevance_floor must be a number");
  return m;
}

/**
 * Bytes a shard may hold (inflated, for a script shard), from the manifest's counts and
 * layout, at least SLACK and at most JSON_CEILING (the encoder, binary: FILE_CEILING).
 * Generous: a cap stops a bomb, it does not judge an honest index (whose shards are 10 to
 * 100 times below it).
 * @param {any} m  a checked manifest
 * @param {"dir" | "terms" | "near" | "texts" | "ddir" | "encoder"} kind
 * @param {number} [longest]  a near shard's longest term (code points)
 */
export function shardLimit(m, kind, longest = 64) {
  const chunks = m.counts.chunks;
  const vocab = m.counts.vocab ?? chunks * 64;
  const layout = m.layout;
  const bytes = {
    dir: 96 * Math.ceil(chunks / layout.texts_per_shard) + 64 * chunks + 16 * vocab,
    terms: 2 * (layout.term_shard_bytes ?? 12_000) + 8 * (layout.head_postings ?? 4096) + 8 * chunks,
    near: vocab * (16 + 4 * longest),
    texts: layout.texts_per_shard * RECORD_BYTES,
    ddir: 96 * ((m.counts.clusters ?? MAX_CLUSTERS) + Math.ceil(chunks / (layout.cluster_map_chunks ?? 1))),
    encoder: 16 << 20,
  }[kind];
  return Math.min(kind === "encoder" ? FILE_CEILING : JSON_CEILING, SLACK + bytes);
}

/**
 * The directory shard: term shards by first term, text shards (as many as counts.chunks
 * and layout.texts_per_shard make), weight ranges over chunk ids.
 * @param {any} dir @param {any} m @param {string} file
 */
export function checkDirectory(dir, m, file) {
  need(file, isObject(dir), "not an object");
  need(file, Array.isArray(dir.terms) && dir.terms.every((/** @type {any} */ t) => Array.isArray(t)
    && typeof t[0] === "string" && typeof t[1] === "string" && NAMES.terms.test(t[1])), "terms must list [term, terms-<hash>.js]");
  const expected = Math.ceil(m.counts.chunks / m.layout.texts_per_shard);
  need(file, Array.isArray(dir.texts) && dir.texts.length === expected,
    `texts must list ${expected} shards for ${m.counts.chunks} chunks`);
  need(file, dir.texts.every((/** @type {unknown} */ t) => typeof t === "string" && NAMES.texts.test(t)), "texts must name texts-<hash>.js shards");
  need(file, Array.isArray(dir.weights) && dir.weights.every((/** @type {any} */ w) => Array.isArray(w)
    && intIn(w[0], 0, m.counts.chunks) && intIn(w[1], w[0], m.counts.chunks) && finite(w[2]) && w[2] >= 0),
  "weights must list [start, end, weight] within the chunks");
  return dir;
}

/**
 * A display: blocks [type, text] or [type, text, language], all strings.
 * @param {unknown} display
 */
export function wellFormedDisplay(display) {
  return Array.isArray(display) && display.every((b) => Array.isArray(b) && (b.length === 2 || b.length === 3)
    && b.every((x) => typeof x === "string"));
}

/** The site root a home index's record URLs are checked under (they are relative): Python's IndexReader.url_root. */
export const HOME_ROOT = "https://index.invalid/";
const BLOCK_TYPES = new Set(["p", "code", "term", "label", "lead", "heading"]);
const LANGUAGE = /^[A-Za-z0-9_+.#-]{0,40}$/;
const KIND = /^[a-z]{1,20}$/;
const URL_FORBIDDEN = /[\x00-\x1f\x7f\\]/;
/** Python's str.strip() whitespace (not JS trim()'s: U+0085 in, U+FEFF out). */
const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const EDGE_SPACE = new RegExp(`^[${PY_SPACE}]|[${PY_SPACE}]$`);
/** What a record that fails its checks becomes (Python's checks.DROPPED): no text, no URL. */
export const DROPPED = Object.freeze({ id: "", doc: "", url: "", headings: [], kind: "", text: "", display: [], title: "",
  members: 0, dropped: true });

/**
 * Whether `url` (relative to `root`, or absolute) stays on the site at `root`: http(s), its
 * origin, a path under the root's, no `.` or `..` segment that the URL spells with percent
 * escapes (Python resolves only the literal ones of a relative URL), no backslash, control
 * character or space at either end (Python's checks.url_under; tests/fixtures/records.json).
 * @param {unknown} url @param {string} root
 */
export function urlUnder(url, root) {
  if (typeof url !== "string" || url.length > 4096 || URL_FORBIDDEN.test(url) || EDGE_SPACE.test(url)) return false;
  let resolved;
  let base;
  try {
    resolved = new URL(url, root);
    base = new URL(root);
  } catch {
    return false;
  }
  if (!/^https?:$/.test(resolved.protocol) || resolved.protocol !== base.protocol || resolved.hostname !== base.hostname
    || resolved.port !== base.port || resolved.username || resolved.password) return false;
  // the dot segments Python sees: all of an absolute URL's, the percent-escaped ones of a relative URL's
  const absolute = /^([A-Za-z][A-Za-z0-9+.-]*:)?\/\//.test(url); // "http:a/../b" is relative to Python too
  const path = url.replace(/^([A-Za-z][A-Za-z0-9+.-]*:)?\/\/[^/?#]*|^[A-Za-z][A-Za-z0-9+.-]*:/, "").split(/[?#]/)[0];
  for (const segment of path.split("/")) {
    if (!absolute && (segment === "." || segment === "..")) continue;
    // only %2e and %2f can make a dot segment once unescaped (Python's unquote)
    const unescaped = segment.replace(/%2e/gi, ".").replace(/%2f/gi, "/");
    if (unescaped.split("/").some((part) => part === "." || part === "..")) return false;
  }
  return resolved.pathname.startsWith(base.pathname);
}

/** @param {unknown} display */
function displayOk(display) {
  if (!Array.isArray(display) || display.length > 256) return false;
  return display.every((b) => Array.isArray(b) && (b.length === 2 || b.length === 3) && b.every((x) => typeof x === "string")
    && BLOCK_TYPES.has(b[0]) && (b.length === 2 || (b[0] === "code" && LANGUAGE.test(b[2]))));
}

/**
 * What is wrong with chunk record `i` of `n` (null: nothing), the words Python's
 * checks.record_problem uses (tests/fixtures/records.json pins both).
 * @param {any} r @param {number} i @param {number} n @param {string} root  the site root its URL must stay under
 * @returns {string | null}
 */
export function recordProblem(r, i, n, root) {
  if (!isObject(r)) return "a record is not an object";
  if (!["id", "doc", "url", "text", "kind"].every((k) => typeof r[k] === "string")) {
    return "a record's id, doc, url, kind and text must be strings";
  }
  if (!KIND.test(r.kind)) return "a record's kind must be a short lowercase word";
  if (!(Array.isArray(r.headings) && r.headings.length <= 64 && r.headings.every((/** @type {unknown} */ h) => typeof h === "string"))) {
    return "a record's headings must be a list of at most 64 strings";
  }
  if ("display" in r && !displayOk(r.display)) return "a record's display blocks must be [type, text] strings";
  // a card: how many chunks after it are its object's; an API part's card: how far back its object's card is
  if (!intIn("members" in r ? r.members : 0, 0, n - 1 - i) || !intIn("card" in r ? r.card : 0, 0, i)) {
    return "a record's card and members must point within the chunks";
  }
  if (!urlUnder(r.url, root)) return "a record's url must be a page of the site";
  return null;
}

/**
 * How many of the records read were invalid, as a site's one line says it (Python's
 * checks.invalid_records).
 * @param {number} dropped @param {number} read @param {number} total
 */
export function invalidRecords(dropped, read, total) {
  const n = (/** @type {number} */ x) => x.toLocaleString("en-US");
  return read >= total ? `${n(dropped)} of ${n(total)} records invalid` : `${n(dropped)} of the ${n(read)} records read invalid`;
}

/**
 * A text shard's records: as many as its place in the index says (else IndexInvalid); each
 * record that fails its checks (recordProblem) becomes DROPPED with its `problem`, as
 * Python's checks.text_records does, and the rest of the site answers.
 * @param {any} data @param {number} count  records expected @param {number} first  chunk id of the first
 * @param {number} nChunks @param {string} file @param {string} [root]  the site root (HOME_ROOT: a home index)
 * @returns {{records: any[], dropped: number}}
 */
export function checkTextShard(data, count, first, nChunks, file, root = HOME_ROOT) {
  need(file, isObject(data) && Array.isArray(data.chunks), "no chunks");
  need(file, data.chunks.length === count, `${data.chunks.length} records where ${count} belong`);
  need(file, data.first == null || data.first === first, `first is ${data.first}, expected ${first}`);
  let dropped = 0;
  const records = data.chunks.map((/** @type {any} */ r, /** @type {number} */ j) => {
    const problem = recordProblem(r, first + j, nChunks, root);
    if (problem === null) return r;
    dropped++;
    return { ...DROPPED, headings: [], display: [], problem };
  });
  return { records, dropped };
}

/**
 * A term shard's header before its body is decoded: parallel arrays, and counts that its
 * body can hold (each posting takes at least one byte of it), so that nothing is allocated
 * past the shard's size.
 * @param {Uint8Array} payload @param {string} file
 */
export function checkTermShard(payload, file) {
  need(file, payload.byteLength >= 4, "too short");
  const length = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0, true);
  need(file, length <= payload.byteLength - 4, "its header runs past its end");
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(payload.subarray(4, 4 + length)));
  } catch {
    throw invalid(file, "its header is not JSON");
  }
  const body = payload.byteLength - 4 - length;
  need(file, isObject(header) && Array.isArray(header.terms) && header.terms.every((/** @type {unknown} */ t) => typeof t === "string"),
    "terms must be strings");
  const n = header.terms.length;
  for (const key of ["df", "count", "scale"]) {
    need(file, Array.isArray(header[key]) && header[key].length === n && header[key].every(finite), `${key} must hold a number per term`);
  }
  need(file, header.count.every((/** @type {number} */ c) => intIn(c, 0, body)), "count must hold counts");
  const total = header.count.reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0);
  const tails = header.tails ?? [];
  need(file, Array.isArray(tails) && tails.every((/** @type {any} */ t) => Array.isArray(t) && intIn(t[0], 0, n - 1)
    && intIn(t[1], 0, body) && t.length <= 2 + 256 && t.slice(2).every(finite)), "tails must list [term, count, levels]");
  const tailTotal = tails.reduce((/** @type {number} */ a, /** @type {any[]} */ t) => a + t[1], 0);
  need(file, 2 * total + tailTotal <= body, `${total + tailTotal} postings cannot fit in ${body} bytes`);
}

/**
 * Chunk ids decoded from a shard: integers below counts.chunks.
 * @param {ArrayLike<number>} ids @param {number} nChunks @param {string} file
 */
export function checkChunkIds(ids, nChunks, file) {
  for (let i = 0; i < ids.length; i++) {
    if (!(ids[i] >= 0 && ids[i] < nChunks && Number.isInteger(ids[i]))) throw invalid(file, `chunk id ${ids[i]} of ${nChunks} chunks`);
  }
}

/**
 * A near shard: terms and their df, in step.
 * @param {any} data @param {string} file
 */
export function checkNearShard(data, file) {
  need(file, isObject(data) && Array.isArray(data.terms) && Array.isArray(data.df) && data.terms.length === data.df.length
    && data.terms.every((/** @type {unknown} */ t) => typeof t === "string") && data.df.every(finite), "terms and df must be in step");
  return data;
}

/**
 * The dense directory: [cluster-<hash>.bin, size] per cluster (as many as counts.clusters
 * says, sizes summing to at most counts.chunks), and the cluster map's shards (none, or as
 * many as layout.cluster_map_chunks makes).
 * @param {any} ddir @param {any} m @param {string} file
 */
export function checkDenseDirectory(ddir, m, file) {
  need(file, isObject(ddir) && Array.isArray(ddir.clusters) && ddir.clusters.length <= MAX_CLUSTERS
    && ddir.clusters.every((/** @type {any} */ c) => Array.isArray(c) && typeof c[0] === "string" && NAMES.cluster.test(c[0])
      && intIn(c[1], 0, m.counts.chunks)), "clusters must list [cluster-<hash>.bin, size]");
  need(file, m.counts.clusters == null || ddir.clusters.length === m.counts.clusters,
    `${ddir.clusters.length} clusters where counts.clusters says ${m.counts.clusters}`);
  const sum = ddir.clusters.reduce((/** @type {number} */ a, /** @type {any[]} */ c) => a + c[1], 0);
  need(file, sum <= m.counts.chunks, `clusters hold ${sum} vectors for ${m.counts.chunks} chunks`);
  const maps = Math.ceil(m.counts.chunks / (m.layout.cluster_map_chunks ?? 1));
  need(file, Array.isArray(ddir.cluster_map) && (ddir.cluster_map.length === 0 || ddir.cluster_map.length === maps)
    && ddir.cluster_map.every((/** @type {unknown} */ c) => typeof c === "string" && NAMES.cmap.test(c)),
  `cluster_map must name none or ${maps} cmap-<hash>.bin shards`);
  return ddir;
}

/**
 * Cluster ids of a cluster map shard: below the number of clusters.
 * @param {ArrayLike<number>} map @param {number} clusters @param {number} count  entries expected @param {string} file
 */
export function checkClusterMap(map, clusters, count, file) {
  need(file, map.length === count, `${map.length} entries where ${count} belong`);
  for (let i = 0; i < map.length; i++) if (map[i] >= clusters) throw invalid(file, `cluster ${map[i]} of ${clusters}`);
}
