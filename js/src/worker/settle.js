// @ts-check
/**
 * When a typed query has settled: the worker fetches what a typed query's dense pass
 * needs (for a frugal reader, anything the query needs) only once no newer keystroke came
 * for twice the reader's own typical gap between keystrokes (three times for a frugal
 * reader). Each prefix of a word ("i",
 * "im", "imp", ...) would otherwise probe clusters of its own: 5-7 MB for one query on
 * the 25k preset (benchmarks/bench_typed.py). A fixed wait would either let a phone's
 * slower keystrokes through (about 300 ms apart) or hold a fast typist's semantic results
 * back; the reader's rhythm does neither.
 * @module settle
 */

/**
 * @typedef {{factor: number, first: number, min: number, max: number}} SettleRule
 *   factor: times the median gap; first: the wait with no gap known yet; min/max: bounds (ms)
 */

/** @type {SettleRule} */
export const SETTLE = { factor: 2, first: 300, min: 200, max: 700 };
/**
 * A frugal reader (Save-Data, slow connection) waits three gaps: with a human rhythm
 * (bench_typed.py --jitter: log-normal gaps, twice as long after a space) two gaps let a
 * pause between words through, and each such prefix fetched 0.3-0.5 MB more.
 * @type {SettleRule}
 */
export const FRUGAL_SETTLE = { factor: 3, first: 600, min: 500, max: 1200 };
/** Gaps at least this long are pauses, not the typing rhythm (ms). */
export const PAUSE_MS = 1000;
/** Keystrokes remembered for the rhythm. */
export const RHYTHM_KEYS = 6;

/**
 * How long the typed query that arrived last waits to settle, in ms after its keystroke.
 * @param {number[]} arrivals  performance.now() of the last typed queries, oldest first (this one last)
 * @param {SettleRule} rule
 */
export function settleDelay(arrivals, rule) {
  /** @type {number[]} */
  const gaps = [];
  for (let i = Math.max(1, arrivals.length - RHYTHM_KEYS + 1); i < arrivals.length; i++) {
    const gap = arrivals[i] - arrivals[i - 1];
    if (gap < PAUSE_MS) gaps.push(gap);
  }
  if (!gaps.length) return rule.first;
  gaps.sort((a, b) => a - b);
  const median = gaps[gaps.length >> 1];
  return Math.min(rule.max, Math.max(rule.min, rule.factor * median));
}
