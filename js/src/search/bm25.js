// @ts-check
/**
 * BM25 over precomputed impacts, identical to sphinx_rag/search/keyword_scoring.py: a query sums
 * the postings of its terms (float64, in query-token order) read from term shards; a token
 * missing from the vocabulary is matched to near vocabulary terms (typo tolerance),
 * weighted down, found in the near shards of the lengths a typo can reach. The shards
 * are decoded as sphinx_rag/search/keyword_shards.py writes them (readTermShard, nearLengths).
 * @module bm25
 */

import { compareCodePoints, json, readVarints, unpack } from "./shards.js";

export const MAX_TYPO_EXPANSIONS = 3;

/**
 * @typedef {object} Postings  one term's postings as a query reads them
 * @property {string} term
 * @property {number} df  chunks that contain the term (all of them, also when the head is cut)
 * @property {Float64Array} docs  chunk ids, ascending
 * @property {Float64Array} impacts  BM25 contribution to each of those chunks
 *
 * @typedef {Array<[Postings, number]>} Expansion  [postings, weight] of one query token
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

/**
 * Up to MAX_TYPO_EXPANSIONS [distance, term] near `term` among `vocab` ([term, df]):
 * nearest first, then the most frequent, then by term (Python's typo_candidates).
 * @param {string} term
 * @param {Array<[string, number]>} vocab
 * @returns {Array<[number, string]>}
 */
export function typoCandidates(term, vocab) {
  const cps = codePoints(term);
  const limit = maxTypoDistance(cps.length);
  if (limit === 0) return [];
  /** @type {Array<[number, number, string]>} */
  const found = [];
  for (const [cand, df] of vocab) {
    const cc = codePoints(cand);
    if (Math.abs(cc.length - cps.length) > limit || cc.length < 4) continue;
    const dist = editDistance(cps, cc, limit);
    if (dist <= limit) found.push([dist, -df, cand]);
  }
  found.sort((x, y) => x[0] - y[0] || x[1] - y[1] || compareCodePoints(x[2], y[2]));
  return found.slice(0, MAX_TYPO_EXPANSIONS).map(([dist, , cand]) => [dist, cand]);
}

/**
 * The term lengths a typo lookup of `term` reads, or null (no typo matching).
 * @param {string} term
 * @returns {[number, number] | null}
 */
export function nearLengths(term) {
  const length = codePoints(term).length;
  const limit = maxTypoDistance(length);
  return limit === 0 ? null : [Math.max(4, length - limit), length + limit];
}

/**
 * Each distinct token -> its postings, or those of near terms if it is unknown
 * (Python's expand_tokens). Shards are fetched by `lookup` and `near`.
 * @param {string[]} tokens
 * @param {(term: string) => Promise<Postings | null>} lookup
 * @param {(term: string) => Promise<Array<[string, number]>>} near
 * @returns {Promise<Map<string, Expansion>>}
 */
export async function expandTokens(tokens, lookup, near) {
  const distinct = [...new Set(tokens)];
  const found = await Promise.all(distinct.map(lookup)); // term shards in parallel
  /** @type {Map<string, Expansion>} */
  const out = new Map();
  for (let i = 0; i < distinct.length; i++) {
    const postings = found[i];
    if (postings) {
      out.set(distinct[i], [[postings, 1.0]]);
      continue;
    }
    const candidates = typoCandidates(distinct[i], await near(distinct[i]));
    const nearPostings = await Promise.all(candidates.map(([, term]) => lookup(term)));
    out.set(distinct[i], candidates.map(([dist], j) => [/** @type {Postings} */ (nearPostings[j]), 1.0 / (1.0 + dist)]));
  }
  return out;
}

/**
 * Per-chunk work arrays of one index, reused by every query: scoring touches only the
 * chunks a query's postings reach, not all n (and no 200,000-entry array is allocated
 * per query). Every function that uses them leaves them zeroed before it returns
 * (synchronously), so concurrent searches may share them.
 */
export class Scratch {
  /** @param {number} nDocs */
  constructor(nDocs) {
    this.nDocs = nDocs;
    this.sum = new Float64Array(nDocs);
    this.count = new Uint32Array(nDocs);
    this.mark = new Uint32Array(nDocs);
    this.stamp = 0;
    /** chunk ids reached, in first-reached order */
    this.ids = new Uint32Array(nDocs);
  }

  /** A stamp no chunk's mark holds yet (one per postings union). */
  nextStamp() {
    if (this.stamp === 0xffffffff) {
      this.mark.fill(0);
      this.stamp = 0;
    }
    return ++this.stamp;
  }
}

/**
 * @typedef {object} Candidates  scores of the chunks a ranking reaches (every other chunk: 0)
 * @property {Uint32Array} ids  chunk ids (no repeats, in no particular order)
 * @property {Float64Array} scores  the score of ids[r] at r
 */

/**
 * Count, for every chunk, the expansions of `known` whose postings hold it (a chunk in two
 * typo candidates of one token counts once); returns how many chunks were reached, their
 * ids in scratch.ids[0..n), their counts in scratch.count.
 * @param {Expansion[]} known
 * @param {Scratch} scratch
 */
function countHits(known, scratch) {
  const { count, mark, ids } = scratch;
  let n = 0;
  for (const expansion of known) {
    const stamp = scratch.nextStamp();
    for (const [{ docs }] of expansion) {
      for (let j = 0; j < docs.length; j++) {
        const d = docs[j];
        if (mark[d] === stamp) continue;
        mark[d] = stamp;
        if (count[d]++ === 0) ids[n++] = d;
      }
    }
  }
  return n;
}

/**
 * keywordScores over only the chunks the query's postings reach: the same float64
 * operations in the same order per chunk, so the same values bit for bit.
 * @param {string[]} tokens
 * @param {Map<string, Expansion>} expansions
 * @param {Scratch} scratch
 * @returns {Candidates}
 */
export function keywordCandidates(tokens, expansions, scratch) {
  const known = [...new Set(tokens)].map((t) => /** @type {Expansion} */ (expansions.get(t))).filter((e) => e.length > 0);
  if (known.length === 0) return { ids: new Uint32Array(0), scores: new Float64Array(0) };
  const n = countHits(known, scratch);
  const { sum, count } = scratch;
  for (const token of tokens) { // plain BM25: every token, repeats too, in query order
    for (const [{ docs, impacts }, weight] of /** @type {Expansion} */ (expansions.get(token))) {
      for (let j = 0; j < docs.length; j++) sum[docs[j]] += weight * impacts[j];
    }
  }
  const ids = scratch.ids.slice(0, n);
  const scores = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    const d = ids[r];
    scores[r] = sum[d] * (count[d] / known.length); // BM25 times coverage
    sum[d] = 0;
    count[d] = 0;
  }
  return { ids, scores };
}

/**
 * The most distinct query tokens any one chunk holds exactly (typo matches do not count).
 * @param {string[]} distinct  distinct query tokens
 * @param {Map<string, Expansion>} expansions
 * @param {Scratch} scratch
 */
export function mostExactTokens(distinct, expansions, scratch) {
  const exact = [];
  for (const t of distinct) {
    const ex = /** @type {Expansion} */ (expansions.get(t));
    if (ex.length === 1 && ex[0][1] === 1.0) exact.push(ex);
  }
  const n = countHits(exact, scratch);
  const { count, ids } = scratch;
  let best = 0;
  for (let r = 0; r < n; r++) {
    const d = ids[r];
    if (count[d] > best) best = count[d];
    count[d] = 0;
  }
  return best;
}

/**
 * Plain BM25: for each query token (repeats count), the weighted impacts of its terms.
 * @param {number} nDocs
 * @param {string[]} tokens
 * @param {Map<string, Expansion>} expansions
 * @returns {Float64Array}
 */
export function bm25Scores(nDocs, tokens, expansions) {
  const out = new Float64Array(nDocs);
  for (const token of tokens) {
    for (const [{ docs, impacts }, weight] of /** @type {Expansion} */ (expansions.get(token))) {
      for (let j = 0; j < docs.length; j++) out[docs[j]] += weight * impacts[j];
    }
  }
  return out;
}

/**
 * BM25 times coverage (the share of the query's distinct known terms a chunk has),
 * exactly as Python's keyword_scores, for every chunk (keywordCandidates spread out).
 * @param {number} nDocs
 * @param {string[]} tokens
 * @param {Map<string, Expansion>} expansions
 * @param {Scratch} [scratch]
 * @returns {Float64Array}
 */
export function keywordScores(nDocs, tokens, expansions, scratch = new Scratch(nDocs)) {
  const { ids, scores } = keywordCandidates(tokens, expansions, scratch);
  const out = new Float64Array(nDocs);
  for (let r = 0; r < ids.length; r++) out[ids[r]] = scores[r];
  return out;
}

/**
 * Bits of one tail level code when there are `levels` levels (Python's code_bits).
 * @param {number} levels
 */
export function codeBits(levels) {
  let bits = 1;
  while (1 << bits < levels) bits++;
  return bits;
}

/**
 * A term shard's postings by term (Python's read_term_shard): a term's head (impact
 * bytes times its scale) merged with its tail, if any (a level code per posting: a
 * little-endian bit stream of codeBits(levels) bits each, Python's pack_codes).
 * @param {Uint8Array} payload
 * @returns {Map<string, Postings>}
 */
export function readTermShard(payload) {
  const { header, body } = unpack(payload);
  const counts = /** @type {number[]} */ (header.count);
  const total = counts.reduce((a, b) => a + b, 0);
  const { values: gaps, offset } = readVarints(body, total);
  /** @type {Map<string, Postings>} */
  const out = new Map();
  let start = 0;
  header.terms.forEach((/** @type {string} */ term, /** @type {number} */ t) => {
    const count = counts[t];
    const scale = header.scale[t];
    const docs = new Float64Array(count);
    const impacts = new Float64Array(count);
    let doc = 0;
    for (let j = 0; j < count; j++) {
      doc += gaps[start + j];
      docs[j] = doc;
      impacts[j] = body[offset + start + j] * scale;
    }
    out.set(term, { term, df: header.df[t], docs, impacts });
    start += count;
  });
  const tails = /** @type {number[][]} */ (header.tails ?? []);
  const tailTotal = tails.reduce((a, t) => a + t[1], 0);
  const { values: tailGaps, offset: codesAt } = readVarints(body, tailTotal, offset + total);
  let at = codesAt;
  start = 0;
  for (const [position, count, ...values] of tails) {
    const bits = codeBits(values.length);
    const mask = (1 << bits) - 1;
    const head = /** @type {Postings} */ (out.get(header.terms[position]));
    const docs = new Float64Array(head.docs.length + count);
    const impacts = new Float64Array(docs.length);
    // merge the head and the tail (both in chunk-id order, disjoint)
    let h = 0;
    let j = 0;
    let doc = count > 0 ? tailGaps[start] : 0;
    for (let k = 0; k < docs.length; k++) {
      if (h < head.docs.length && (j >= count || head.docs[h] < doc)) {
        docs[k] = head.docs[h];
        impacts[k] = head.impacts[h++];
      } else {
        docs[k] = doc;
        const bit = j * bits;
        const pair = body[at + (bit >> 3)] | ((body[at + (bit >> 3) + 1] ?? 0) << 8);
        impacts[k] = values[(pair >> (bit & 7)) & mask];
        if (++j < count) doc += tailGaps[start + j];
      }
    }
    at += (count * bits + 7) >> 3;
    start += count;
    out.set(head.term, { term: head.term, df: head.df, docs, impacts });
  }
  return out;
}

/**
 * A near shard: [term, df] sorted by (length, term).
 * @param {Uint8Array} payload
 * @returns {Array<[string, number]>}
 */
export function readNearShard(payload) {
  const data = json(payload);
  return data.terms.map((/** @type {string} */ t, /** @type {number} */ i) => [t, data.df[i]]);
}
