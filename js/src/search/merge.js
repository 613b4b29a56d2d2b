// @ts-check
/**
 * Several sites' rankings merged into one, a mirror of sphinx_rag/merge.py: the scores of
 * two indexes are not comparable, their ranks are. A passage scores 1 / (rrfK + rank) in
 * each site's ranking, summed when the same passage (the same key: absolute URL and chunk
 * id) comes from two sites; ties go to the site listed first (the home site), then to the
 * better rank there. tests/fixtures/merge.json (written by Python) pins the order.
 * @module merge
 */

export const RRF_K = 60;

/**
 * @template T
 * @param {T[][]} rankings  rankings[n]: site n's results, best first (the home site first)
 * @param {(result: T) => string} key
 * @param {number | null} [k]  at most this many (null: all)
 * @param {number} [rrfK]
 * @returns {Array<[number, T]>} [site, result] pairs, best first
 */
export function mergeRanked(rankings, key, k = null, rrfK = RRF_K) {
  /** @type {Map<string, {score: number, site: number, rank: number, result: T}>} */
  const merged = new Map();
  rankings.forEach((ranking, site) => {
    ranking.forEach((result, r) => {
      const name = key(result);
      const rank = r + 1;
      const seen = merged.get(name);
      if (seen) seen.score += 1.0 / (rrfK + rank);
      else merged.set(name, { score: 1.0 / (rrfK + rank), site, rank, result });
    });
  });
  const order = [...merged.values()].sort((a, b) =>
    (a.score > b.score ? -1 : a.score < b.score ? 1 : a.site - b.site || a.rank - b.rank));
  return (k === null ? order : order.slice(0, k)).map((m) => /** @type {[number, T]} */ ([m.site, m.result]));
}

/**
 * Only the nearest passages, no good match, when every site that answered says so.
 * @param {boolean[]} weak
 */
export function mergedWeak(weak) {
  return weak.length > 0 && weak.every(Boolean);
}
