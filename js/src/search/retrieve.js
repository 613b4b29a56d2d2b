// @ts-check
/**
 * The browser search, a mirror of sphinx_rag/retrieve.py function for function:
 * BM25 + dense scores, fused (reciprocal-rank fusion by default), chunk weights applied
 * exactly as in Python. tests/fixtures/rankings.json (computed by Python) holds
 * rankings the JS tests reproduce. All scoring is float64 over the stored arrays.
 * @module retrieve
 */

import { BM25Index } from "./bm25.js";
import { expand } from "./expand.js";
import { fold, splitWords, tokenize } from "./lexical.js";

export const CANDIDATES = 100; // depth of each ranking before fusion
export const FUSIONS = ["rrf", "bm25", "dense"];
/** Above this many chunks the dense pass is binary-first (sign bits, Hamming), then exact. */
export const BINARY_FIRST_ABOVE = 5000;
/**
 * Chunks kept by the binary pass for exact int8 rescoring: at least this many, and at
 * least 1/BINARY_FRACTION of the chunks (sign bits rank coarsely; see retrieve.py).
 */
export const BINARY_CANDIDATES = 2000;
export const BINARY_FRACTION = 8;

/**
 * @typedef {object} Chunk  one record of chunks.json
 * @property {string} id
 * @property {string} doc
 * @property {string} url
 * @property {string} title
 * @property {string[]} headings
 * @property {string} kind
 * @property {number} order
 * @property {number} weight
 * @property {string} text
 *
 * @typedef {object} Result
 * @property {number} rank  from 1
 * @property {number} score
 * @property {string} url
 * @property {string} title
 * @property {string} kind
 * @property {string} text
 * @property {string} id
 * @property {number} index  position in chunks.json
 * @property {string[]} also  URLs of the chunks the passage took in after the hit (expand.js)
 *
 * @typedef {object} SearchAssets  what assets.js loads
 * @property {any} manifest
 * @property {Chunk[]} chunks
 * @property {BM25Index} bm25
 * @property {Int8Array | null} [vectors]  N x dim, row-major
 * @property {Float32Array | null} [scales]
 */

/**
 * Indices of the k best positive scores; ties go to the lower index.
 * @param {ArrayLike<number>} scores
 * @param {number} k
 * @returns {number[]}
 */
export function topK(scores, k) {
  const candidates = [];
  for (let i = 0; i < scores.length; i++) if (scores[i] > 0) candidates.push(i);
  candidates.sort((a, b) => (scores[a] > scores[b] ? -1 : scores[a] < scores[b] ? 1 : a - b));
  return candidates.slice(0, k);
}

/**
 * The query as float32 values in a Float64Array (Python: query.astype(float32).astype(float64)).
 * @param {ArrayLike<number>} query
 */
function asFloat32Values(query) {
  const q = new Float64Array(query.length);
  for (let j = 0; j < q.length; j++) q[j] = Math.fround(query[j]);
  return q;
}

/**
 * Cosine of the (normalized) query with each int8 vector times its scale, in float64,
 * summed over the dimensions in order (bit-identical to Python's dense_scores).
 * @param {ArrayLike<number>} query  dim values (a Float32Array from the embedder)
 * @param {Int8Array} vectorsI8  N x dim
 * @param {Float32Array} scales  N
 * @param {number} dim
 * @param {ArrayLike<number>} [rows]  score only these rows (others stay 0)
 * @returns {Float64Array} N scores
 */
export function denseScores(query, vectorsI8, scales, dim, rows) {
  const q = asFloat32Values(query);
  const n = scales.length;
  const out = new Float64Array(n);
  const score = (/** @type {number} */ i) => {
    let s = 0;
    for (let j = 0, o = i * dim; j < dim; j++, o++) s += vectorsI8[o] * q[j];
    out[i] = s * scales[i];
  };
  if (rows) for (let r = 0; r < rows.length; r++) score(rows[r]);
  else for (let i = 0; i < n; i++) score(i);
  return out;
}

/** The default dense strategy (same rule in Python): exact up to BINARY_FIRST_ABOVE chunks. */
export function useBinaryFirst(/** @type {number} */ nChunks) {
  return nChunks > BINARY_FIRST_ABOVE;
}

/**
 * How many chunks the binary pass keeps by default (same rule in Python).
 * @param {number} nChunks
 * @param {number} [minimum]
 */
export function binaryCandidateCount(nChunks, minimum = BINARY_CANDIDATES) {
  return Math.min(nChunks, Math.max(minimum, Math.ceil(nChunks / BINARY_FRACTION)));
}

/**
 * Sign bits (value > 0) of vectors packed into 32-bit words, `words` per row.
 * @param {ArrayLike<number>} vectors  N x dim (one vector: N = 1)
 * @param {number} dim
 * @returns {{bits: Uint32Array, words: number}}
 */
export function packSigns(vectors, dim) {
  const words = Math.ceil(dim / 32);
  const n = Math.floor(vectors.length / dim);
  const bits = new Uint32Array(n * words);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < dim; j++) {
      if (vectors[i * dim + j] > 0) bits[i * words + (j >>> 5)] |= 1 << (j & 31);
    }
  }
  return { bits, words };
}

/** @param {number} x */
function popcount(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/**
 * The m rows whose sign bits are nearest the query's (Hamming), ties to the lower index;
 * returned in index order.
 * @param {ArrayLike<number>} query
 * @param {{bits: Uint32Array, words: number}} signs  from packSigns
 * @param {number} dim
 * @param {number} m
 * @returns {Uint32Array}
 */
export function hammingCandidates(query, signs, dim, m) {
  const { bits, words } = signs;
  const n = bits.length / words;
  const qbits = packSigns(query, dim).bits;
  const distance = new Uint16Array(n);
  const histogram = new Uint32Array(dim + 2);
  for (let i = 0; i < n; i++) {
    let d = 0;
    for (let w = 0, o = i * words; w < words; w++, o++) d += popcount(bits[o] ^ qbits[w]);
    distance[i] = d;
    histogram[d]++;
  }
  m = Math.min(m, n);
  // The cut: every row nearer than `cut`, then rows at distance `cut` in index order.
  let cut = 0;
  let below = 0;
  while (below + histogram[cut] < m) below += histogram[cut++];
  let atCut = m - below;
  const out = new Uint32Array(m);
  let k = 0;
  for (let i = 0; i < n; i++) {
    const d = distance[i];
    if (d < cut || (d === cut && atCut-- > 0)) out[k++] = i;
  }
  return out;
}

/**
 * Dense scores of every chunk; binary-first leaves 0 outside the Hamming candidates
 * (a candidate's score equals its exact denseScores value). binaryCandidates: how many
 * the binary pass keeps (default binaryCandidateCount(n)).
 * @param {ArrayLike<number>} query
 * @param {Int8Array} vectorsI8
 * @param {Float32Array} scales
 * @param {number} dim
 * @param {{binaryFirst: boolean, signs?: {bits: Uint32Array, words: number},
 *          binaryCandidates?: number}} options
 * @returns {Float64Array}
 */
export function denseCandidateScores(query, vectorsI8, scales, dim, options) {
  if (!options.binaryFirst) return denseScores(query, vectorsI8, scales, dim);
  const signs = options.signs ?? packSigns(vectorsI8, dim);
  const m = options.binaryCandidates ?? binaryCandidateCount(scales.length);
  const rows = hammingCandidates(query, signs, dim, m);
  return denseScores(query, vectorsI8, scales, dim, rows);
}

/**
 * Reciprocal-rank fusion: sum of 1 / (k + rank) (rank from 1), times the chunk weight.
 * @param {number[][]} rankings
 * @param {number} k
 * @param {ArrayLike<number>} weights
 * @returns {Map<number, number>} chunk index -> fused score
 */
export function rrfFuse(rankings, k, weights) {
  /** @type {Map<number, number>} */
  const fused = new Map();
  for (const ranking of rankings) {
    ranking.forEach((idx, r) => fused.set(idx, (fused.get(idx) ?? 0.0) + 1.0 / (k + r + 1)));
  }
  for (const [i, s] of fused) fused.set(i, s * weights[i]);
  return fused;
}

/**
 * The query with misspelt words replaced by their nearest corpus term, for embedding
 * (Python's retrieve.correct_spelling): only words that neither the corpus nor the
 * model's vocabulary knows are corrected.
 * @param {string} query
 * @param {BM25Index} bm25
 * @param {Set<string>} modelWords  whole words of the model's WordPiece vocabulary
 * @returns {string}
 */
export function correctSpelling(query, bm25, modelWords) {
  let out = "";
  for (const [piece, isWord] of splitWords(query)) {
    if (isWord) {
      const tokens = tokenize(piece);
      if (tokens.length === 1 && bm25.termId(tokens[0]) === undefined && !modelWords.has(fold(piece).toLowerCase())) {
        const candidates = bm25.typoCandidates(tokens[0]);
        if (candidates.length > 0) {
          out += bm25.vocab[candidates[0][1]];
          continue;
        }
      }
    }
    out += piece;
  }
  return out;
}

/** Whole words of a WordPiece vocab.txt (continuation pieces "##..." left out). @param {string} vocabText */
export function modelWords(vocabText) {
  return new Set(vocabText.split("\n").filter((w) => w && !w.startsWith("##")));
}

export class Searcher {
  /**
   * @param {SearchAssets} assets
   * @param {{fusion?: string, rrfK?: number, binaryFirst?: boolean,
   *          binaryCandidates?: number}} [options]
   *   fusion / rrfK default to the manifest's settings; binaryFirst defaults to
   *   useBinaryFirst(number of chunks), binaryCandidates to binaryCandidateCount(n).
   */
  constructor(assets, options = {}) {
    const settings = assets.manifest?.settings ?? {};
    this.chunks = assets.chunks;
    this.bm25 = assets.bm25;
    this.vectors = assets.vectors ?? null;
    this.scales = assets.scales ?? null;
    this.dim = assets.manifest?.counts?.dim ?? 0;
    this.fusion = options.fusion || settings.fusion || "rrf";
    if (!FUSIONS.includes(this.fusion)) {
      throw new Error(`sphinx-rag: fusion must be one of ${FUSIONS.join(", ")}, got ${JSON.stringify(this.fusion)}`);
    }
    this.rrfK = options.rrfK || settings.rrf_k || 60;
    this.weights = Float64Array.from(this.chunks, (c) => c.weight);
    this.binaryFirst = options.binaryFirst ?? useBinaryFirst(this.chunks.length);
    /** @type {number | undefined} */
    this.binaryCandidates = options.binaryCandidates;
    /** @type {{bits: Uint32Array, words: number} | null} */
    this._signs = null;
  }

  /** Whether dense (semantic) scoring is possible: the index has vectors. */
  get hasVectors() {
    return this.vectors !== null && this.scales !== null && this.dim > 0;
  }

  /** The keyword ranking: BM25 times query-term coverage (Python's Searcher.bm25_scores). @param {string} query */
  bm25Scores(query) {
    return this.bm25.keywordScores(tokenize(query));
  }

  /** @param {ArrayLike<number>} vector the query's embedding */
  denseScores(vector) {
    if (!this.hasVectors) throw new Error("sphinx-rag: this index has no embeddings (keyword-only build)");
    const vectors = /** @type {Int8Array} */ (this.vectors);
    if (this.binaryFirst && this._signs === null) this._signs = packSigns(vectors, this.dim);
    return denseCandidateScores(vector, vectors, /** @type {Float32Array} */ (this.scales), this.dim, {
      binaryFirst: this.binaryFirst,
      signs: this._signs ?? undefined,
      binaryCandidates: this.binaryCandidates,
    });
  }

  /**
   * Final score of every candidate chunk (Python's Searcher.scores).
   * @param {string} query
   * @param {ArrayLike<number> | null} vector  the query embedding (unused for "bm25")
   * @param {string} [fusion]  defaults to this.fusion
   * @returns {Map<number, number>}
   */
  scores(query, vector, fusion = this.fusion) {
    /** @type {Map<number, number>} */
    const out = new Map();
    if (fusion === "bm25") {
      const s = this.bm25Scores(query);
      for (let i = 0; i < s.length; i++) s[i] *= this.weights[i];
      for (const i of topK(s, CANDIDATES)) out.set(i, s[i]);
      return out;
    }
    if (!vector) throw new Error(`sphinx-rag: fusion "${fusion}" needs the query vector`);
    if (fusion === "dense") {
      const s = this.denseScores(vector);
      for (let i = 0; i < s.length; i++) if (s[i] > 0) s[i] *= this.weights[i];
      for (const i of topK(s, CANDIDATES)) out.set(i, s[i]);
      return out;
    }
    const rankings = [topK(this.bm25Scores(query), CANDIDATES), topK(this.denseScores(vector), CANDIDATES)];
    return rrfFuse(rankings, this.rrfK, this.weights);
  }

  /**
   * The k best passages: hits sorted by (-score, index), expanded by expand.js.
   * @param {string} query
   * @param {ArrayLike<number> | null} vector
   * @param {number} [k]
   * @param {string} [fusion]
   * @returns {Result[]}
   */
  search(query, vector, k = 10, fusion = this.fusion) {
    const scored = this.scores(query, vector, fusion);
    const ranked = [...scored.keys()].sort((a, b) => {
      const sa = /** @type {number} */ (scored.get(a));
      const sb = /** @type {number} */ (scored.get(b));
      return sa > sb ? -1 : sa < sb ? 1 : a - b;
    });
    return expand(ranked, this.chunks, k).map((span, r) => {
      const c = this.chunks[span[0]];
      return {
        rank: r + 1,
        score: /** @type {number} */ (scored.get(span[0])),
        url: c.url,
        title: c.title,
        kind: c.kind,
        text: span.map((j) => this.chunks[j].text).join("\n\n"),
        id: c.id,
        index: span[0],
        also: span.slice(1).map((j) => this.chunks[j].url), // chunks the passage took in (expand.js)
      };
    });
  }


  /**
   * Keyword-only search (BM25 times chunk weights); needs no model.
   * @param {string} query
   * @param {number} [k]
   */
  keywordSearch(query, k = 10) {
    return this.search(query, null, k, "bm25");
  }

  /**
   * The configured fusion (manifest settings: "rrf" by default) with the query's
   * embedding; without a vector, or on a keyword-only index, falls back to keywordSearch.
   * @param {string} query
   * @param {ArrayLike<number> | null} queryVector
   * @param {number} [k]
   */
  hybridSearch(query, queryVector, k = 10) {
    if (!queryVector || !this.hasVectors || this.fusion === "bm25") return this.keywordSearch(query, k);
    return this.search(query, queryVector, k);
  }
}
