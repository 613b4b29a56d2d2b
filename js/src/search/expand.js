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
 * @param {number[]} ranked  chunk indices, best first
 * @param {Array<{text: string, doc: string, kind: string}>} chunks
 * @param {number} k
 * @returns {number[][]}
 */
export function expand(ranked, chunks, k) {
  const covered = new Set();
  /** @type {number[][]} */
  const passages = [];
  for (const i of ranked) {
    if (passages.length === k) break;
    if (covered.has(i)) continue;
    const span = [i];
    let length = cpLength(chunks[i].text);
    for (let j = i + 1; chunks[i].kind !== "api" && length < MIN_CHARS && j < chunks.length
      && !covered.has(j) && chunks[j].doc === chunks[i].doc; j++) {
      const next = cpLength(chunks[j].text);
      if (length + next > MAX_CHARS) break;
      span.push(j);
      length += next;
    }
    for (const j of span) covered.add(j);
    passages.push(span);
  }
  return passages;
}
