// @ts-check
/**
 * BM25 over precomputed impacts, identical to sphinx_rag/bm25.py: a query sums the
 * posting lists of its terms (float64, in query-token order); a token missing from the
 * vocabulary is matched to near vocabulary terms (typo tolerance), weighted down.
 * @module bm25
 */

export const MAX_TYPO_EXPANSIONS = 3;

/**
 * @typedef {object} BM25Meta  bm25.json
 * @property {string[]} vocab  sorted by code point (Python's sorted())
 * @property {number} n_docs
 * @property {number} avgdl
 * @property {number} k1
 * @property {number} b
 * @property {number} epsilon
 */

/**
 * Code points of a string (Python indexes strings by code point).
 * @param {string} s
 * @returns {number[]}
 */
function codePoints(s) {
  const out = [];
  for (const ch of s) out.push(/** @type {number} */ (ch.codePointAt(0)));
  return out;
}

/**
 * Short terms get no typo matching (too many false friends).
 * @param {string | number} term the term, or its length in code points
 */
export function maxTypoDistance(term) {
  const length = typeof term === "number" ? term : codePoints(term).length;
  if (length < 4) return 0;
  return length < 8 ? 1 : 2;
}

/**
 * Optimal-string-alignment distance (transpositions cost 1), capped at limit + 1.
 * @param {ArrayLike<number>|string} a code points (or a string)
 * @param {ArrayLike<number>|string} b
 * @param {number} limit
 * @returns {number}
 */
export function editDistance(a, b, limit) {
  if (typeof a === "string") a = codePoints(a);
  if (typeof b === "string") b = codePoints(b);
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > limit) return limit + 1;
  /** @type {number[]} */
  let prev2 = [];
  let prev = Array.from({ length: lb + 1 }, (_, j) => j);
  for (let i = 1; i <= la; i++) {
    const cur = new Array(lb + 1).fill(0);
    cur[0] = i;
    let best = cur[0];
    for (let j = 1; j <= lb; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2] + 1);
      cur[j] = v;
      best = Math.min(best, v);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[lb];
}

export class BM25Index {
  /**
   * @param {BM25Meta} meta bm25.json
   * @param {Uint32Array} offsets bm25_offsets.u32 (vocab.length + 1)
   * @param {Uint32Array} docs bm25_docs.u32
   * @param {Float32Array} impacts bm25_impacts.f32
   */
  constructor(meta, offsets, docs, impacts) {
    if (offsets.length !== meta.vocab.length + 1 || docs.length !== impacts.length) {
      throw new Error(
        `sphinx-rag: inconsistent BM25 index (${meta.vocab.length} terms, ${offsets.length} offsets, ` +
          `${docs.length} postings, ${impacts.length} impacts): rebuild the docs`,
      );
    }
    this.vocab = meta.vocab;
    this.nDocs = meta.n_docs;
    this.avgdl = meta.avgdl;
    this.k1 = meta.k1;
    this.b = meta.b;
    this.epsilon = meta.epsilon;
    this.offsets = offsets;
    this.docs = docs;
    this.impacts = impacts;
    /** @type {Map<string, number>} */
    this.termIds = new Map(meta.vocab.map((t, i) => [t, i]));
    /** @type {number[][] | null} code points of each term, built on the first typo lookup */
    this._vocabCodePoints = null;
  }

  /** @param {string} term @returns {number | undefined} */
  termId(term) {
    return this.termIds.get(term);
  }

  /** Number of chunks containing term `tid`. @param {number} tid */
  docFreq(tid) {
    return this.offsets[tid + 1] - this.offsets[tid];
  }

  /**
   * Up to MAX_TYPO_EXPANSIONS [distance, term id] near `term`: nearest first, then the
   * most frequent, then by term (vocab is sorted by code point, so by term id).
   * @param {string} term
   * @returns {Array<[number, number]>}
   */
  typoCandidates(term) {
    const cps = codePoints(term);
    const limit = maxTypoDistance(cps.length);
    if (limit === 0) return [];
    if (this._vocabCodePoints === null) this._vocabCodePoints = this.vocab.map(codePoints);
    /** @type {Array<[number, number, number]>} */
    const found = [];
    this._vocabCodePoints.forEach((cand, tid) => {
      if (Math.abs(cand.length - cps.length) > limit || cand.length < 4) return;
      const dist = editDistance(cps, cand, limit);
      if (dist <= limit) found.push([dist, -this.docFreq(tid), tid]);
    });
    found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2]);
    return found.slice(0, MAX_TYPO_EXPANSIONS).map(([dist, , tid]) => [dist, tid]);
  }

  /**
   * [term id, weight] for each query token; typos map to near terms with weight 1/(1+d).
   * @param {string[]} tokens
   * @returns {Array<[number, number]>}
   */
  queryTerms(tokens) {
    /** @type {Array<[number, number]>} */
    const weighted = [];
    for (const token of tokens) {
      const tid = this.termIds.get(token);
      if (tid !== undefined) {
        weighted.push([tid, 1.0]);
        continue;
      }
      for (const [dist, cand] of this.typoCandidates(token)) weighted.push([cand, 1.0 / (1.0 + dist)]);
    }
    return weighted;
  }

  /**
   * BM25 score of every chunk for the (already tokenized) query.
   * @param {string[]} tokens
   * @returns {Float64Array}
   */
  scores(tokens) {
    return this._scores(tokens, this._termsByToken(tokens));
  }

  /**
   * Query terms of each distinct token (typo expansion computed once per token).
   * @param {string[]} tokens
   * @returns {Map<string, Array<[number, number]>>}
   */
  _termsByToken(tokens) {
    /** @type {Map<string, Array<[number, number]>>} */
    const terms = new Map();
    for (const token of tokens) if (!terms.has(token)) terms.set(token, this.queryTerms([token]));
    return terms;
  }

  /**
   * @param {string[]} tokens
   * @param {Map<string, Array<[number, number]>>} terms
   * @returns {Float64Array}
   */
  _scores(tokens, terms) {
    const out = new Float64Array(this.nDocs);
    const { offsets, docs, impacts } = this;
    for (const token of tokens) {
      for (const [tid, weight] of /** @type {Array<[number, number]>} */ (terms.get(token))) {
        for (let j = offsets[tid], hi = offsets[tid + 1]; j < hi; j++) out[docs[j]] += weight * impacts[j];
      }
    }
    return out;
  }

  /**
   * BM25 times coverage (share of the query's distinct known terms a chunk has),
   * exactly as Python's BM25Index.keyword_scores.
   * @param {string[]} tokens
   * @returns {Float64Array}
   */
  keywordScores(tokens) {
    const terms = this._termsByToken(tokens);
    const known = [...terms.values()].filter((ids) => ids.length > 0);
    const hits = new Float64Array(this.nDocs);
    if (known.length === 0) return hits;
    const { offsets, docs } = this;
    const has = new Uint8Array(this.nDocs);
    for (const ids of known) {
      has.fill(0);
      for (const [tid] of ids) for (let j = offsets[tid], hi = offsets[tid + 1]; j < hi; j++) has[docs[j]] = 1;
      for (let i = 0; i < has.length; i++) hits[i] += has[i];
    }
    const out = this._scores(tokens, terms);
    for (let i = 0; i < out.length; i++) out[i] *= hits[i] / known.length;
    return out;
  }
}
