// @ts-check
/**
 * Expand ranked chunks into passages (Python's sphinx_rag/expand.py, same rules):
 * a narrative or example chunk shorter than MIN_CHARS also takes the chunks that
 * follow it on the same page, up to MAX_CHARS; API chunks stand alone; a later
 * result already inside an earlier passage is dropped, and no passage repeats a
 * chunk another one shows. Lengths are in code
 * points, as Python's len().
 */

import { cpLength } from "./lexical.js";

export const MIN_CHARS = 400;
export const MAX_CHARS = 1600;

/**
 * Up to k passages, each the chunk indices it covers (the first is the hit).
 * `chunk(i)` gives a chunk's record (loading its text shard); only the ranked hits
 * and the chunks after them are asked for.
 * @param {number[]} ranked  chunk indices, best first
 * @param {(i: number) => Promise<{text: string, doc: string, kind: string}>} chunk
 * @param {number} nChunks
 * @param {number} k
 * @returns {Promise<number[][]>}
 */
export async function expand(ranked, chunk, nChunks, k) {
  const covered = new Set();
  /** @type {number[][]} */
  const passages = [];
  for (const i of ranked) {
    if (passages.length === k) break;
    if (covered.has(i)) continue;
    const hit = await chunk(i);
    const span = [i];
    let length = cpLength(hit.text);
    for (let j = i + 1; hit.kind !== "api" && length < MIN_CHARS && j < nChunks && !covered.has(j); j++) {
      const next = await chunk(j);
      const size = cpLength(next.text);
      if (next.doc !== hit.doc || length + size > MAX_CHARS) break;
      span.push(j);
      length += size;
    }
    for (const j of span) covered.add(j);
    passages.push(span);
  }
  return passages;
}
