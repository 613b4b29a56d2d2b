// @ts-check
/**
 * The dense tier, as sphinx_rag/search/dense.py: the clusters of the query's best keyword hits are
 * read first, then those whose int8 centroids are nearest the query, until `probe` vectors
 * are covered; their vectors are scored exactly (float64, dimensions summed in order:
 * bit-identical to Python), then clamped to [-1, 1], what a cosine of unit vectors can be:
 * no scale another site claims reaches past it (a scale that is not a finite number >= 0
 * is refused with its shard, as Python refuses it).
 * @module dense
 */

import { littleEndian } from "./shards.js";

/** A score as a cosine: within [-1, 1] (Python's np.clip). @param {number} x */
function cosine(x) {
  return x > 1 ? 1 : x < -1 ? -1 : x;
}

/**
 * What is wrong with a shard's scales (null: each a finite number >= 0, as Python's
 * quantize_vectors writes them; Python's scales_problem): Infinity or NaN would make every
 * score one.
 * @param {Float32Array} scales
 * @returns {string | null}
 */
export function scalesProblem(scales) {
  for (let r = 0; r < scales.length; r++) {
    if (!Number.isFinite(scales[r])) return "scales that are not finite numbers";
    if (scales[r] < 0) return "negative scales";
  }
  return null;
}

/**
 * The query as float32 values in a Float64Array (Python: query.astype(float32).astype(float64)).
 * @param {ArrayLike<number>} query
 */
export function asFloat32Values(query) {
  const q = new Float64Array(query.length);
  for (let j = 0; j < q.length; j++) q[j] = Math.fround(query[j]);
  return q;
}

/**
 * Rows `vectors[r]` dotted with `q` times `scales[r]`, clamped to [-1, 1], into `out[at + r]`. Each row's sum
 * runs over the dimensions in order, as Python sums them (each int8 x float32 product is
 * exact, the float64 additions are the same sequence); four rows at a time, so that four
 * independent sums keep the CPU busy instead of one chain of dependent additions.
 * @param {Float64Array} q  the query as float32 values (asFloat32Values)
 * @param {Int8Array} vectors  rows x dim
 * @param {Float32Array} scales  rows
 * @param {number} dim
 * @param {Float64Array} out
 * @param {number} at
 */
function scoreRows(q, vectors, scales, dim, out, at) {
  const rows = scales.length;
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const o = r * dim;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let j = 0; j < dim; j++) {
      const x = q[j];
      s0 += vectors[o + j] * x;
      s1 += vectors[o + dim + j] * x;
      s2 += vectors[o + 2 * dim + j] * x;
      s3 += vectors[o + 3 * dim + j] * x;
    }
    out[at + r] = cosine(s0 * scales[r]);
    out[at + r + 1] = cosine(s1 * scales[r + 1]);
    out[at + r + 2] = cosine(s2 * scales[r + 2]);
    out[at + r + 3] = cosine(s3 * scales[r + 3]);
  }
  for (; r < rows; r++) {
    let s = 0;
    for (let j = 0, o = r * dim; j < dim; j++, o++) s += vectors[o] * q[j];
    out[at + r] = cosine(s * scales[r]);
  }
}

/**
 * Cosine of the (normalized) query with each int8 vector times its scale, clamped to
 * [-1, 1] (Python's dense_scores); written to `out[ids[r]]` when ids are given, else returned in order.
 * @param {ArrayLike<number>} query
 * @param {Int8Array} vectors  rows x dim
 * @param {Float32Array} scales  rows
 * @param {number} dim
 * @param {{out: Float64Array, ids: ArrayLike<number>}} [into]
 * @returns {Float64Array}
 */
export function denseScores(query, vectors, scales, dim, into) {
  const rows = new Float64Array(scales.length);
  scoreRows(asFloat32Values(query), vectors, scales, dim, rows, 0);
  if (!into) return rows;
  for (let r = 0; r < rows.length; r++) into.out[into.ids[r]] = rows[r];
  return into.out;
}

/**
 * The scores of the chunks of some clusters (every other chunk: 0), as candidates.
 * @param {ArrayLike<number>} query
 * @param {{ids: Uint32Array, scales: Float32Array, vectors: Int8Array}[]} clusters
 * @param {number} dim
 * @returns {import("./bm25.js").Candidates}
 */
export function clusterScores(query, clusters, dim) {
  let n = 0;
  for (const c of clusters) n += c.scales.length;
  const ids = new Uint32Array(n);
  const scores = new Float64Array(n);
  const q = asFloat32Values(query);
  let at = 0;
  for (const c of clusters) {
    ids.set(c.ids, at);
    scoreRows(q, c.vectors, c.scales, dim, scores, at);
    at += c.scales.length;
  }
  return { ids, scores };
}

/**
 * The clusters to read: `first` (the clusters of the best keyword hits), then the nearest
 * centroid first (ties to the lower cluster), until `probe` vectors are covered (Python's
 * probe_order).
 * @param {ArrayLike<number>} query
 * @param {{vectors: Int8Array, scales: Float32Array}} centroids
 * @param {number} dim
 * @param {number[]} sizes  vectors per cluster
 * @param {number} probe
 * @param {number[]} [first]
 * @returns {number[]}
 */
export function probeOrder(query, centroids, dim, sizes, probe, first = []) {
  const chosen = [...first];
  let covered = 0;
  for (const c of first) covered += sizes[c];
  const scores = denseScores(query, centroids.vectors, centroids.scales, dim);
  const order = sizes.map((_, c) => c).sort((a, b) => (scores[a] > scores[b] ? -1 : scores[a] < scores[b] ? 1 : a - b));
  for (const c of order) {
    if (covered >= probe) break;
    if (first.includes(c)) continue;
    chosen.push(c);
    covered += sizes[c];
  }
  return chosen;
}

/**
 * `u32 count | u16 cluster of each chunk` (Python's read_cluster_map_shard).
 * @param {Uint8Array} bytes
 * @returns {Uint16Array}
 */
export function readClusterMapShard(bytes) {
  const count = littleEndian(bytes, Uint32Array, 0, 1)[0];
  if (bytes.byteLength !== 4 + 2 * count) {
    throw new Error(`sphinx-rag: a cluster map shard of ${bytes.byteLength} bytes, expected ${4 + 2 * count}`);
  }
  return littleEndian(bytes, Uint16Array, 4, count);
}

/**
 * `u32 count | u32 chunk ids | f32 scales | int8 vectors`.
 * @param {Uint8Array} bytes
 * @param {number} dim
 * @returns {{ids: Uint32Array, scales: Float32Array, vectors: Int8Array}}
 */
export function readClusterShard(bytes, dim) {
  const count = littleEndian(bytes, Uint32Array, 0, 1)[0];
  if (bytes.byteLength !== 4 + 8 * count + count * dim) {
    throw new Error(`sphinx-rag: a cluster shard of ${bytes.byteLength} bytes, expected ${4 + 8 * count + count * dim}`);
  }
  const scales = littleEndian(bytes, Float32Array, 4 + 4 * count, count);
  const problem = scalesProblem(scales);
  if (problem) throw new RangeError(`a cluster shard with ${problem}`);
  return {
    ids: littleEndian(bytes, Uint32Array, 4, count),
    scales,
    vectors: new Int8Array(bytes.buffer, bytes.byteOffset + 4 + 8 * count, count * dim),
  };
}

/**
 * `u32 count | f32 scales | int8 centroids`.
 * @param {Uint8Array} bytes
 * @param {number} dim
 * @returns {{scales: Float32Array, vectors: Int8Array}}
 */
export function readCentroidShard(bytes, dim) {
  const count = littleEndian(bytes, Uint32Array, 0, 1)[0];
  const scales = littleEndian(bytes, Float32Array, 4, count);
  const problem = scalesProblem(scales);
  if (problem) throw new RangeError(`a centroid shard with ${problem}`);
  return {
    scales,
    vectors: new Int8Array(bytes.buffer, bytes.byteOffset + 4 + 4 * count, count * dim),
  };
}
