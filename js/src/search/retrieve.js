// @ts-check
/**
 * The browser search, a mirror of sphinx_rag/search/retrieve.py function for function:
 * keyword and dense rankings over the shards an IndexReader loads, fused (reciprocal-rank
 * fusion by default), chunk weights applied, reranked (rerank.js), expanded into passages. The shards a query
 * needs are fetched first (in parallel), then the scores are computed exactly as in
 * Python: tests/fixtures/rankings.json (computed by Python) holds rankings the JS tests
 * reproduce with bit-identical scores.
 * @module retrieve
 */

import { Scratch, expandTokens, keywordCandidates, mostExactTokens, typoCandidates } from "./bm25.js";
import { clusterScores, probeOrder } from "./dense.js";
import { joinDisplays, recordDisplay } from "./display.js";
import { OBJECT_RANKS, expand } from "./expand.js";
import { IndexReader } from "./index.js";
import { fold, identifierTokens, splitWords, tokenize } from "./lexical.js";
import { asksForObject, rerank, rerankCandidates } from "./rerank.js";
import { rerankScores } from "./cross_encoder.js";

export const CANDIDATES = 100; // depth of each ranking before fusion
export const FUSIONS = ["rrf", "bm25", "dense"];
/** The dense ranking's vote in the fusion per query encoder (Python's DENSE_VOTE). */
export const DENSE_VOTE = { model: 1.0, static: 0.2 };
/** Below this cosine the nearest chunk is no good match (Python's RELEVANCE_FLOOR). */
export const RELEVANCE_FLOOR = 0.3;
/**
 * A frugal reader's static-encoder queries (Save-Data or a slow connection:
 * ui/model_policy.js) probe this share of the layout's vectors (Python's FRUGAL_PROBE_SHARE).
 */
export const FRUGAL_PROBE_SHARE = 4;

/** The probe of a frugal reader's queries, for a layout's `probe` (Python's frugal_probe). @param {number} probe */
export function frugalProbe(probe) {
  return Math.max(1, Math.floor(probe / FRUGAL_PROBE_SHARE));
}

/** A query token in at most this many chunks may name them (Python's RARE_DF). */
export const RARE_DF = 2;

/** Code points of a query that are searched (retrieve.py MAX_QUERY_CHARS): the model reads
 * 256 tokens, and a pasted page of 30,000 words otherwise holds the worker for minutes. */
export const MAX_QUERY_CHARS = 1000;

/**
 * The part of a query that is searched (its first MAX_QUERY_CHARS code points).
 * @param {string} query
 */
export function clipQuery(query) {
  return query.length <= MAX_QUERY_CHARS ? query : [...query].slice(0, MAX_QUERY_CHARS).join("");
}

/**
 * @typedef {object} Result
 * @property {number} rank  from 1
 * @property {number} score
 * @property {string} url
 * @property {string} title
 * @property {string} kind
 * @property {string} text  the chunks' embedded texts (what was indexed)
 * @property {import("./display.js").Display} display  the passage as a reader sees it (display.js)
 * @property {string} id
 * @property {number} index  the chunk's position in the index
 * @property {string[]} also  URLs of the passage's other chunks, in page order (expand.js)
 * @property {number | null} [similarity]  the hit chunk's cosine to the query (0: its cluster
 *   was not probed; null: keywords alone), what merge.js compares across sites
 */

/**
 * The k-th largest positive value (Number.MIN_VALUE when there are at most k): a min-heap
 * of the k largest seen so far.
 * @param {ArrayLike<number>} values
 * @param {number} k
 */
function kthLargest(values, k) {
  const heap = new Float64Array(k);
  let size = 0;
  for (let r = 0; r < values.length; r++) {
    const v = values[r];
    if (!(v > 0)) continue;
    if (size < k) { // sift up
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent] <= v) break;
        heap[i] = heap[parent];
        i = parent;
      }
      heap[i] = v;
    } else if (v > heap[0]) { // replace the smallest, sift down
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= k) break;
        if (child + 1 < k && heap[child + 1] < heap[child]) child++;
        if (heap[child] >= v) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = v;
    }
  }
  return size < k ? Number.MIN_VALUE : heap[0];
}

/**
 * Positions of the k best positive values, best first; ties to the lower key. Only the
 * values from the k-th largest up are sorted: the order is total, so these are the first
 * k of a full sort.
 * @param {ArrayLike<number>} values
 * @param {ArrayLike<number> | null} keys  tie-breaks (chunk ids); null: the positions
 * @param {number} k
 * @returns {number[]}
 */
function bestPositions(values, keys, k) {
  const floor = k > 0 ? kthLargest(values, k) : Number.MIN_VALUE; // MIN_VALUE: the smallest positive double
  const keep = [];
  for (let r = 0; r < values.length; r++) if (values[r] >= floor) keep.push(r);
  const tie = keys ? (/** @type {number} */ a, /** @type {number} */ b) => keys[a] - keys[b]
    : (/** @type {number} */ a, /** @type {number} */ b) => a - b;
  keep.sort((a, b) => (values[a] > values[b] ? -1 : values[a] < values[b] ? 1 : tie(a, b)));
  return keep.slice(0, k);
}

/**
 * Indices of the k best positive scores; ties go to the lower index.
 * @param {ArrayLike<number>} scores
 * @param {number} k
 * @returns {number[]}
 */
export function topK(scores, k) {
  return bestPositions(scores, null, k);
}

/**
 * topK over candidates: the ids of the k best positive scores, ties to the lower id.
 * @param {import("./bm25.js").Candidates} candidates
 * @param {number} k
 * @returns {number[]}
 */
export function topCandidates({ ids, scores }, k) {
  return bestPositions(scores, ids, k).map((r) => ids[r]);
}

/**
 * The chunks that decisive query tokens name (Python's decisive_hits). Decisive: matched
 * exactly (not a typo's near terms) and in at most RARE_DF chunks. Written as an identifier
 * or a code (identifierTokens), it names every chunk that holds it; a plain word, only a
 * chunk that also holds every other query word the index knows.
 * @param {string} query
 * @param {Map<string, import("./bm25.js").Expansion>} expansions
 * @returns {Set<number>}
 */
export function decisiveHits(query, expansions) {
  const names = new Set(identifierTokens(query));
  const known = [...expansions.values()].filter((ex) => ex.length > 0);
  /** @type {Set<number>} */
  const out = new Set();
  for (const [token, ex] of expansions) {
    if (ex.length === 1 && ex[0][1] === 1.0 && ex[0][0].df <= RARE_DF) {
      for (const d of ex[0][0].docs) if (names.has(token) || known.every((other) => holds(other, d))) out.add(d);
    }
  }
  return out;
}

/**
 * Whether one of a token's expansions (its postings, or its near terms') has the chunk.
 * @param {import("./bm25.js").Expansion} expansion @param {number} chunk
 */
function holds(expansion, chunk) {
  for (const [{ docs }] of expansion) {
    let lo = 0;
    let hi = docs.length;
    while (lo < hi) { // the first position whose id is >= chunk
      const mid = (lo + hi) >> 1;
      if (docs[mid] < chunk) lo = mid + 1;
      else hi = mid;
    }
    if (lo < docs.length && docs[lo] === chunk) return true;
  }
  return false;
}

/**
 * The fused (or keyword) scores with the chunks that decisive tokens name above every other
 * chunk, in their own order: when one of them does not score above all the others already,
 * each gets twice the best score added (Python's pin_decisive).
 * @param {Map<number, number>} fused  changed in place
 * @param {Set<number>} decisive  decisiveHits
 */
export function pinDecisive(fused, decisive) {
  if (!decisive.size || !fused.size) return fused;
  let rest = 0.0;
  let top = -Infinity;
  for (const [i, s] of fused) {
    if (s > top) top = s;
    if (!decisive.has(i) && s > rest) rest = s;
  }
  let first = true;
  for (const i of decisive) if (!((fused.get(i) ?? 0.0) > rest)) first = false;
  if (first) return fused;
  for (const i of decisive) fused.set(i, (fused.get(i) ?? 0.0) + 2 * top);
  return fused;
}

/**
 * Reciprocal-rank fusion: sum of vote / (k + rank) (rank from 1; each ranking's vote 1
 * unless given), times the chunk weight.
 * @param {number[][]} rankings
 * @param {number} k
 * @param {ArrayLike<number>} weights
 * @param {number[]} [votes]
 * @returns {Map<number, number>} chunk index -> fused score
 */
export function rrfFuse(rankings, k, weights, votes) {
  /** @type {Map<number, number>} */
  const fused = new Map();
  rankings.forEach((ranking, n) => {
    const vote = votes ? votes[n] : 1.0;
    ranking.forEach((idx, r) => fused.set(idx, (fused.get(idx) ?? 0.0) + vote / (k + r + 1)));
  });
  for (const [i, s] of fused) fused.set(i, s * weights[i]);
  return fused;
}

/**
 * True when no chunk holds at least half of the query's words exactly (typo matches do
 * not count) and, with semantic search, no chunk is nearer the query than `floor`
 * (Python's weak_match).
 * @param {string[]} tokens
 * @param {Map<string, import("./bm25.js").Expansion>} expansions
 * @param {number | null} denseBest  the best dense score, null without semantic search
 * @param {number} floor
 * @param {Scratch} scratch  the index's work arrays
 */
export function weakMatch(tokens, expansions, denseBest, floor, scratch) {
  const distinct = [...new Set(tokens)];
  const best = mostExactTokens(distinct, expansions, scratch);
  const covered = best > 0 && 2 * best >= distinct.length;
  return !covered && (denseBest === null || denseBest < floor);
}

/**
 * The query with misspelt words replaced by their nearest corpus term, for embedding
 * (Python's retrieve.correct_spelling): only words that neither the corpus nor the
 * model's vocabulary knows are corrected.
 * @param {string} query
 * @param {IndexReader} index
 * @param {Set<string>} modelWords  whole words of the model's WordPiece vocabulary
 * @returns {Promise<string>}
 */
export async function correctSpelling(query, index, modelWords) {
  let out = "";
  for (const [piece, isWord] of splitWords(query)) {
    if (isWord) {
      const tokens = tokenize(piece);
      if (tokens.length === 1 && !modelWords.has(fold(piece).toLowerCase()) && !(await index.postings(tokens[0]))) {
        const candidates = typoCandidates(tokens[0], await index.near(tokens[0]));
        if (candidates.length > 0) {
          out += candidates[0][1];
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
   * @param {IndexReader} index
   * @param {{fusion?: string, rrfK?: number, probe?: number}} [options]
   *   default to the manifest's settings and layout
   */
  constructor(index, options = {}) {
    const settings = index.manifest.settings ?? {};
    this.index = index;
    this.fusion = options.fusion || settings.fusion || "rrf";
    if (!FUSIONS.includes(this.fusion)) {
      throw new Error(`sphinx-rag: fusion must be one of ${FUSIONS.join(", ")}, got ${JSON.stringify(this.fusion)}`);
    }
    this.rrfK = options.rrfK || settings.rrf_k || 60;
    this.probe = options.probe || index.manifest.layout.probe;
    this.floor = settings.relevance_floor ?? RELEVANCE_FLOOR;
    /** @type {Scratch | null} */
    this._scratch = null;
  }

  /**
   * Whether the results of `query` are only the nearest, not a good match (weakMatch).
   * @param {string} query
   * @param {ArrayLike<number> | null} vector  null in keyword mode
   */
  async weakMatch(query, vector) {
    return (await this.ranking(query, vector, vector ? this.fusion : "bm25")).weak;
  }

  /** Per-chunk work arrays, made on first use. */
  get scratch() {
    if (!this._scratch) this._scratch = new Scratch(this.index.nChunks);
    return this._scratch;
  }

  /** @param {import("./bm25.js").Candidates} candidates */
  spread({ ids, scores }) {
    const out = new Float64Array(this.index.nChunks);
    for (let r = 0; r < ids.length; r++) out[ids[r]] = scores[r];
    return out;
  }

  /** The keyword ranking: BM25 times query-term coverage. @param {string} query */
  async bm25Scores(query) {
    return this.spread(await this.keywordCandidates(query));
  }

  /** bm25Scores of the chunks the query's terms reach. @param {string} query */
  async keywordCandidates(query) {
    const tokens = tokenize(query);
    const expansions = await expandTokens(tokens, (t) => this.index.postings(t), (t) => this.index.near(t));
    return keywordCandidates(tokens, expansions, this.scratch);
  }

  /**
   * Exact int8 scores of the chunks in the probed clusters, 0 elsewhere.
   * @param {ArrayLike<number>} vector the query's embedding
   */
  async denseScores(vector) {
    return this.spread(await this.denseCandidates(vector));
  }

  /**
   * denseScores of the chunks in the probed clusters only: those of the best keyword
   * `hits` first (guidedClusters), then the nearest.
   * @param {ArrayLike<number>} vector the query's embedding
   * @param {number[]} [hits]  the keyword ranking
   */
  async denseCandidates(vector, hits = []) {
    if (!this.index.hasVectors) throw new Error("sphinx-rag: this index has no embeddings (keyword-only build)");
    const [centroids, first] = await Promise.all([this.index.centroids(), this.guidedClusters(hits)]);
    const probed = probeOrder(vector, centroids, this.index.dim, this.index.clusterSizes, this.probe, first);
    const clusters = await Promise.all(probed.map((c) => this.index.cluster(c)));
    return clusterScores(vector, clusters, this.index.dim);
  }

  /**
   * The clusters of the first `guide_hits` keyword hits, in their order, at most
   * `guide_clusters` (the manifest's layout; none when the index has one cluster), and no
   * cluster that would take them past the probe's budget of vectors (Python's
   * Searcher.guided_clusters).
   * @param {number[]} hits
   * @returns {Promise<number[]>}
   */
  async guidedClusters(hits) {
    const layout = this.index.manifest.layout;
    const limit = layout.guide_clusters ?? 0;
    await this.index.denseDirectory();
    const clusters = await Promise.all(hits.slice(0, layout.guide_hits ?? 0).map((i) => this.index.clusterOf(i)));
    const sizes = this.index.clusterSizes;
    /** @type {number[]} */
    const out = [];
    let covered = 0;
    for (const c of clusters) {
      if (c === null) return [];
      if (out.length >= limit) break;
      if (!out.includes(c) && covered + sizes[c] <= this.probe) {
        out.push(c);
        covered += sizes[c];
      }
    }
    return out;
  }

  /**
   * Final score of every candidate chunk, and whether they are only a weak match
   * (weakMatch, from the same keyword and dense passes): Python's Searcher.ranking.
   * Only the chunks the query's terms or probed clusters reach are scored (every other
   * chunk's score is 0 in Python too, and only positive scores rank).
   * @param {string} query
   * @param {ArrayLike<number> | null} vector  the query embedding (unused for "bm25")
   * @param {string} [fusion]  defaults to this.fusion
   * @param {"model" | "static"} [encoder]  which encoder made the vector (its DENSE_VOTE)
   * @returns {Promise<{scored: Map<number, number>, weak: boolean, dense?: import("./bm25.js").Candidates | null,
   *   fused?: Map<number, number>, decisive?: Set<number>}>}
   *   dense: the probed chunks' scores (null: keywords alone); fused, decisive (rrf only): the
   *   scores before the decisive names are pinned, and those names (rerankedScores reads them)
   */
  async ranking(query, vector, fusion = this.fusion, encoder = "model") {
    await this.index.directory();
    if (fusion !== "bm25" && !vector) throw new Error(`sphinx-rag: fusion "${fusion}" needs the query vector`);
    const tokens = tokenize(query);
    if (fusion !== "bm25" && this.index.hasVectors) { // read while the terms are
      this.index.centroids().catch(() => {});
      this.index.denseDirectory().catch(() => {});
    }
    const expansions = await expandTokens(tokens, (t) => this.index.postings(t), (t) => this.index.near(t));
    const hits = fusion === "rrf" ? topCandidates(keywordCandidates(tokens, expansions, this.scratch), CANDIDATES) : [];
    const dense = fusion === "bm25" ? null : await this.denseCandidates(/** @type {ArrayLike<number>} */ (vector), hits);
    let best = null;
    if (dense) {
      best = 0; // the chunks no probed cluster holds score 0
      for (const s of dense.scores) if (s > best) best = s;
    }
    const weak = weakMatch(tokens, expansions, best, this.floor, this.scratch);
    const weights = /** @type {Float64Array} */ (this.index.weights);
    /** @type {Map<number, number>} */
    const scored = new Map();
    if (fusion === "bm25" || fusion === "dense") {
      const cosines = dense && { ids: dense.ids, scores: Float64Array.from(dense.scores) }; // before the weights
      const { ids, scores } = dense ?? keywordCandidates(tokens, expansions, this.scratch);
      for (let r = 0; r < ids.length; r++) if (fusion === "bm25" || scores[r] > 0) scores[r] *= weights[ids[r]];
      for (const r of bestPositions(scores, ids, CANDIDATES)) scored.set(ids[r], scores[r]);
      return { scored: fusion === "bm25" ? pinDecisive(scored, decisiveHits(query, expansions)) : scored, weak, dense: cosines };
    }
    const fused = rrfFuse([hits, topCandidates(/** @type {import("./bm25.js").Candidates} */ (dense), CANDIDATES)], this.rrfK, weights, [1.0, DENSE_VOTE[encoder]]);
    // the reranking stage (rerank.js) reads the kinds of the top candidates: their text shards first, in parallel
    if (asksForObject(query)) await this.index.prefetchChunks(rerankCandidates(fused));
    const reranked = await rerank(query, fused, async (i) => (await this.index.chunk(i)).kind, weights, this.rrfK);
    const decisive = decisiveHits(query, expansions);
    return { scored: pinDecisive(reranked, decisive), weak, dense, fused: reranked, decisive };
  }

  /**
   * The cross-encoder stage after `ranking` (Python's Searcher with rerank=True): the fused
   * top candidates reordered by the reranker (cross_encoder.js), then the decisive names
   * pinned as `ranking` pins them. `ranking` must be an rrf ranking (it has `fused`).
   * @param {string} query  as `ranking` was given it
   * @param {{fused?: Map<number, number>, decisive?: Set<number>, scored: Map<number, number>}} ranked
   * @param {import("./cross_encoder.js").CrossEncoder} crossEncoder
   * @returns {Promise<Map<number, number>>}
   */
  async rerankedScores(query, ranked, crossEncoder) {
    if (!ranked.fused || !ranked.decisive) return ranked.scored; // not fused: nothing to reorder
    const logitsOf = async (/** @type {number[]} */ top) => {
      await this.index.prefetchChunks(top);
      const texts = await Promise.all(top.map(async (i) => (await this.index.chunk(i)).text));
      return crossEncoder.logits(query, texts);
    };
    return pinDecisive(await rerankScores(ranked.fused, logitsOf, crossEncoder.info), ranked.decisive);
  }

  /**
   * Final score of every candidate chunk (Python's Searcher.scores).
   * @param {string} query
   * @param {ArrayLike<number> | null} vector  the query embedding (unused for "bm25")
   * @param {string} [fusion]  defaults to this.fusion
   * @param {"model" | "static"} [encoder]  which encoder made the vector (its DENSE_VOTE)
   * @returns {Promise<Map<number, number>>}
   */
  async scores(query, vector, fusion = this.fusion, encoder = "model") {
    return (await this.ranking(query, vector, fusion, encoder)).scored;
  }

  /**
   * The k best passages: hits sorted by (-score, index), each with its relevant
   * neighbours (expand.js).
   * @param {string} query
   * @param {ArrayLike<number> | null} vector
   * @param {number} [k]
   * @param {string} [fusion]
   * @param {"model" | "static"} [encoder]  which encoder made the vector (its DENSE_VOTE)
   * @returns {Promise<Result[]>}
   */
  async search(query, vector, k = 10, fusion = this.fusion, encoder = "model") {
    return (await this.searchWithMatch(query, vector, k, fusion, encoder)).results;
  }

  /**
   * `search` and `weakMatch` from one pass over the index (Python's search_with_match).
   * @param {string} query
   * @param {ArrayLike<number> | null} vector
   * @param {number} [k]
   * @param {string} [fusion]
   * @param {"model" | "static"} [encoder]  which encoder made the vector (its DENSE_VOTE)
   * @param {number | null} [budget]  characters the passages may take together (expand.js)
   * @returns {Promise<{results: Result[], weak: boolean, ranked: Awaited<ReturnType<Searcher["ranking"]>>}>}
   *   ranked: the ranking the results come from (rerankedScores reorders it)
   */
  async searchWithMatch(query, vector, k = 10, fusion = this.fusion, encoder = "model", budget = null) {
    const ranked = await this.ranking(query, vector, fusion, encoder);
    const { scored, weak, dense } = ranked;
    const results = await this.passages(scored, k, budget);
    /** @type {Map<number, number> | null} */
    const cosine = dense ? new Map() : null;
    if (dense && cosine) {
      const hits = new Set(results.map((r) => r.index));
      for (let r = 0; r < dense.ids.length; r++) if (hits.has(dense.ids[r])) cosine.set(dense.ids[r], dense.scores[r]);
    }
    for (const r of results) r.similarity = cosine ? cosine.get(r.index) ?? 0 : null;
    return { results, weak, ranked };
  }

  /**
   * The k best passages of a ranking (chunk -> score: `ranking`'s, or several fused):
   * Python's Searcher.passages.
   * @param {Map<number, number>} scored
   * @param {number} [k]
   * @param {number | null} [budget]  characters the passages may take together (expand.js)
   * @returns {Promise<Result[]>}
   */
  async passages(scored, k = 10, budget = null) {
    const ranked = [...scored.keys()].sort((a, b) => {
      const sa = /** @type {number} */ (scored.get(a));
      const sb = /** @type {number} */ (scored.get(b));
      return sa > sb ? -1 : sa < sb ? 1 : a - b;
    });
    // text shards in parallel: the hits, and the ranked parts an object passage may take
    await this.index.prefetchChunks(ranked.slice(0, Math.max(k + 5, OBJECT_RANKS)));
    const chunk = (/** @type {number} */ i) => this.index.chunk(i);
    const passages = await expand(ranked, chunk, this.index.nChunks, k, budget);
    return Promise.all(passages.map(async ({ hit, span }, r) => {
      const records = await Promise.all(span.map(chunk));
      const c = await chunk(hit);
      return {
        rank: r + 1,
        score: /** @type {number} */ (scored.get(hit)),
        url: c.url,
        title: c.title,
        kind: c.kind,
        text: records.map((x) => x.text).join("\n\n"),
        display: joinDisplays(records.map(recordDisplay), records.map((x) => (x.kind === "api" ? null : x.title)), c.title),
        id: c.id,
        index: hit,
        also: span.flatMap((j, n) => (j === hit ? [] : [records[n].url])), // the passage's other chunks
      };
    }));
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
   * hybridSearch's results and whether they are only a weak match (one pass).
   * @param {string} query
   * @param {ArrayLike<number> | null} queryVector
   * @param {number} [k]
   * @param {"model" | "static"} [encoder]  which encoder made the vector (its DENSE_VOTE)
   */
  hybridAnswer(query, queryVector, k = 10, encoder = "model") {
    if (!queryVector || !this.index.hasVectors || this.fusion === "bm25") return this.searchWithMatch(query, null, k, "bm25");
    return this.searchWithMatch(query, queryVector, k, this.fusion, encoder);
  }

  /**
   * The configured fusion (manifest settings: "rrf" by default) with the query's
   * embedding; without a vector, or on a keyword-only index, falls back to keywordSearch.
   * @param {string} query
   * @param {ArrayLike<number> | null} queryVector
   * @param {number} [k]
   * @param {"model" | "static"} [encoder]  which encoder made the vector (its DENSE_VOTE)
   */
  async hybridSearch(query, queryVector, k = 10, encoder = "model") {
    return (await this.hybridAnswer(query, queryVector, k, encoder)).results;
  }
}
