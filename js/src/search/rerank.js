// @ts-check
/**
 * The reranking stage, a mirror of sphinx_rag/search/rerank.py: a question that asks which API
 * object (class, function, method, exception...) does something gives every API chunk
 * among the fused top RERANK_DEPTH one more reciprocal-rank vote, 1 / (rrfK + 1), times
 * the chunk's weight. Same pattern, same float operations in the same order as Python:
 * the parity fixtures pin the rankings bit for bit.
 * @module rerank
 */

/** Fused candidates the reranking stage reads (Python's RERANK_DEPTH). */
export const RERANK_DEPTH = 30;

/** Python's _OBJECT_QUESTION: ASCII classes only, so that both runtimes match alike. */
const OBJECT_QUESTION = new RegExp(
  "(?<![A-Za-z0-9_])(?:which|what)[ \\t\\r\\n]+(?:[A-Za-z-]+[ \\t\\r\\n]+){0,2}?"
  + "(?:class|function|method|exception|decorator|type|object|attribute|property|module|estimator|model|"
  + "transformer|helper|callable|enum|constant)(?:es|s)?(?![A-Za-z0-9_])", "i");

/**
 * Whether `query` asks which API object (class, function, ...) does something.
 * @param {string} query
 */
export function asksForObject(query) {
  return OBJECT_QUESTION.test(query);
}

/**
 * The first RERANK_DEPTH candidates by (-score, index).
 * @param {Map<number, number>} fused
 * @returns {number[]}
 */
export function rerankCandidates(fused) {
  const ids = [...fused.keys()];
  ids.sort((a, b) => {
    const sa = /** @type {number} */ (fused.get(a));
    const sb = /** @type {number} */ (fused.get(b));
    return sa > sb ? -1 : sa < sb ? 1 : a - b;
  });
  return ids.slice(0, RERANK_DEPTH);
}

/**
 * The fused scores after the reranking stage (`fused` itself when nothing changes).
 * `kinds` gives the kind of each of rerankCandidates(fused) (their text records'), read
 * only for a question that asksForObject.
 * @param {string} query
 * @param {Map<number, number>} fused
 * @param {(i: number) => Promise<string>} kind
 * @param {ArrayLike<number>} weights
 * @param {number} rrfK
 * @returns {Promise<Map<number, number>>}
 */
export async function rerank(query, fused, kind, weights, rrfK) {
  if (fused.size === 0 || !asksForObject(query)) return fused;
  const vote = 1.0 / (rrfK + 1);
  const top = rerankCandidates(fused);
  const kinds = await Promise.all(top.map(kind));
  const out = new Map(fused);
  top.forEach((i, n) => {
    if (kinds[n] === "api") out.set(i, /** @type {number} */ (fused.get(i)) + vote * weights[i]);
  });
  return out;
}
