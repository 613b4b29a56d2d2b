// @ts-check
/**
 * Turn ranked chunks into passages: relevant segment extraction (Python's
 * sphinx_rag/expand.py, same rules and the same float operations in the same order).
 * A chunk's value is DECAY / (DECAY + rank - 1) (0 if unranked) minus PENALTY; taking
 * the hits in rank order, each hit's passage is the contiguous run of chunks around it
 * (same page, none shown already, at most MAX_CHARS code points together, API chunks
 * never merged) with the largest total value. A later hit already inside an earlier
 * passage is dropped. Lengths are in code points, as Python's len().
 *
 * API objects: a hit on an object card takes its object's parts ranked within
 * OBJECT_RANKS, and a hit on such a part whose card ranks that high takes the card and
 * those parts (objectPassage): one passage, in page order, parts taken in rank order
 * while they fit in MAX_CHARS; a method's card brings its class's card.
 */

import { cpLength } from "./lexical.js";

export const DECAY = 20;
export const PENALTY = 0.2;
export const MAX_CHARS = 2400;
export const MAX_CHUNKS = 16;
export const OBJECT_RANKS = 20;

/**
 * `members`: on an object card, how many chunks after it are its object's;
 * `card`: on such a chunk, how many chunks before it the card is.
 * @typedef {{text: string, doc: string, kind: string, members?: number, card?: number}} ChunkRecord
 */

/**
 * Up to k passages: the hit, and the chunk indices of its passage in page order.
 * `chunk(i)` gives a chunk's record (loading its text shard); only the ranked hits
 * and their neighbours on the same page are asked for.
 * @param {number[]} ranked  chunk indices, best first
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number} nChunks
 * @param {number} k
 * @returns {Promise<{hit: number, span: number[]}[]>}
 */
export async function expand(ranked, chunk, nChunks, k) {
  /** @type {Map<number, number>} */
  const rankOf = new Map();
  ranked.forEach((i, r) => { if (!rankOf.has(i)) rankOf.set(i, r + 1); });
  const value = (/** @type {number} */ j) => {
    const r = rankOf.get(j);
    return (r !== undefined ? DECAY / (DECAY + r - 1) : 0.0) - PENALTY;
  };
  /** @type {Set<number>} */
  const covered = new Set();
  /** @type {{hit: number, span: number[]}[]} */
  const passages = [];
  for (const hit of ranked) {
    if (passages.length === k) break;
    if (covered.has(hit)) continue;
    const span = (await objectPassage(hit, chunk, ranked, rankOf, covered))
      ?? await segment(hit, chunk, nChunks, covered, value);
    for (const j of span) covered.add(j);
    passages.push({ hit, span });
  }
  return passages;
}

/**
 * An object's card and its parts ranked within OBJECT_RANKS, taken in rank order while
 * they fit in MAX_CHARS (card and hit always in), in page order; null unless `hit` is a
 * card, or a part whose card ranks within OBJECT_RANKS and is not shown yet. The object of
 * a card is its own, or its owner's for a nested card (a method's card names its class).
 * @param {number} hit
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number[]} ranked
 * @param {Map<number, number>} rankOf
 * @param {Set<number>} covered
 * @returns {Promise<number[] | null>}
 */
async function objectPassage(hit, chunk, ranked, rankOf, covered) {
  const record = await chunk(hit);
  const owner = hit - (record.card ?? 0); // the nearest enclosing card (=== hit: none)
  let card;
  if (record.members) { // a card; a method's card brings its class's card, unless shown already
    card = owner !== hit && !covered.has(owner) ? owner : hit;
  } else if (owner !== hit && (rankOf.get(owner) ?? OBJECT_RANKS + 1) <= OBJECT_RANKS && !covered.has(owner)) {
    card = owner;
  } else {
    return null;
  }
  const members = (await chunk(card)).members ?? 0;
  const span = card === hit ? [card] : [card, hit];
  let total = 0;
  for (const j of span) total += cpLength((await chunk(j)).text);
  for (const j of ranked.slice(0, OBJECT_RANKS)) {
    if (card < j && j <= card + members && j !== hit && !covered.has(j)) {
      const length = cpLength((await chunk(j)).text);
      if (total + length > MAX_CHARS) break; // the next best part is shown on its own
      span.push(j);
      total += length;
    }
  }
  return span.sort((a, b) => a - b);
}

/**
 * [index, length] of the chunks a passage around `hit` may take on one side.
 * @param {number} hit
 * @param {number} step  -1 or 1
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number} nChunks
 * @param {Set<number>} covered
 * @returns {Promise<[number, number][]>}
 */
async function neighbours(hit, step, chunk, nChunks, covered) {
  const record = await chunk(hit);
  /** @type {[number, number][]} */
  const out = [];
  if (record.kind === "api") return out;
  let total = cpLength(record.text);
  for (let j = hit + step; j >= 0 && j < nChunks && out.length < MAX_CHUNKS - 1 && !covered.has(j); j += step) {
    const next = await chunk(j);
    const size = cpLength(next.text);
    total += size;
    if (next.doc !== record.doc || next.kind === "api" || total > MAX_CHARS) break;
    out.push([j, size]);
  }
  return out;
}

/**
 * The run around `hit` with the largest total value (ties: the earliest, shortest).
 * @param {number} hit
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number} nChunks
 * @param {Set<number>} covered
 * @param {(j: number) => number} value
 * @returns {Promise<number[]>}
 */
async function segment(hit, chunk, nChunks, covered, value) {
  const left = (await neighbours(hit, -1, chunk, nChunks, covered)).reverse(); // page order
  const right = await neighbours(hit, 1, chunk, nChunks, covered);
  /** @type {[number, number][]} */
  const run = [...left, [hit, cpLength((await chunk(hit)).text)], ...right];
  const h = left.length;
  let bestA = h;
  let bestB = h;
  let bestValue = value(hit);
  for (let a = 0; a <= h; a++) {
    let total = 0.0;
    let length = 0;
    for (let j = a; j < h; j++) {
      total += value(run[j][0]);
      length += run[j][1];
    }
    for (let b = h; b < run.length; b++) {
      total += value(run[b][0]);
      length += run[b][1];
      if (b > a && (length > MAX_CHARS || b - a + 1 > MAX_CHUNKS)) break;
      if (total > bestValue) {
        bestA = a;
        bestB = b;
        bestValue = total;
      }
    }
  }
  return run.slice(bestA, bestB + 1).map(([j]) => j);
}
