// @ts-check
/**
 * Turn ranked chunks into passages: relevant segment extraction (Python's
 * sphinx_rag/search/expand.py, same rules and the same float operations in the same order).
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
 *
 * With a budget (the characters the passages may take together), a chunk also costs its
 * length, the more the fuller the budget: cost x length is taken from its value, cost =
 * c x k / budget x used / budget (used: what the passages before its own take; for the
 * first passage 0, or the whole budget when it alone is longer); c = 0 first, then each
 * of LENGTH_COSTS until the passages fit (Python's expand, same order).
 */

import { cpLength } from "./lexical.js";

export const DECAY = 20;
export const PENALTY = 0.2;
export const MAX_CHARS = 2400;
export const MAX_CHUNKS = 16;
export const OBJECT_RANKS = 20;
/** With a budget: the length costs tried in turn, until the passages fit (the smallest that does). */
export const LENGTH_COSTS = [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1];

/**
 * `members`: on an object card, how many chunks after it are its object's;
 * `card`: on such a chunk, how many chunks before it the card is.
 * @typedef {{text: string, doc: string, kind: string, members?: number, card?: number}} ChunkRecord
 */

/**
 * Up to k passages: the hit, and the chunk indices of its passage in page order; with a
 * `budget` (characters), sized so that more of them fit in it.
 * `chunk(i)` gives a chunk's record (loading its text shard); only the ranked hits
 * and their neighbours on the same page are asked for.
 * @param {number[]} ranked  chunk indices, best first
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number} nChunks
 * @param {number} k
 * @param {number | null} [budget]
 * @returns {Promise<{hit: number, span: number[]}[]>}
 */
export async function expand(ranked, chunk, nChunks, k, budget = null) {
  let passages = await expandAt(ranked, chunk, nChunks, k, 0.0, 1);
  if (budget !== null && budget !== undefined) {
    const over = passages.length > 0 && await passagesLength(passages.slice(0, 1), chunk) > budget; // the first alone
    for (const c of LENGTH_COSTS) {
      if (await passagesLength(passages, chunk) <= budget) break;
      passages = await expandAt(ranked, chunk, nChunks, k, c * k / budget, budget, over);
    }
  }
  return passages;
}

/**
 * Characters (code points) of the passages' texts, a passage's chunks joined by a blank line.
 * @param {{hit: number, span: number[]}[]} passages
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 */
export async function passagesLength(passages, chunk) {
  let total = 0;
  for (const { span } of passages) {
    for (const j of span) total += cpLength((await chunk(j)).text);
    total += 2 * (span.length - 1);
  }
  return total;
}

/**
 * The passages, each chunk valued by its rank less `base x used / budget` per character
 * (used: the characters of the passages before its own; for the first passage, with
 * `firstFull`, the whole budget).
 * @param {number[]} ranked
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number} nChunks
 * @param {number} k
 * @param {number} base
 * @param {number} budget
 * @param {boolean} [firstFull]
 * @returns {Promise<{hit: number, span: number[]}[]>}
 */
async function expandAt(ranked, chunk, nChunks, k, base, budget, firstFull = false) {
  /** @type {Map<number, number>} */
  const rankOf = new Map();
  ranked.forEach((i, r) => { if (!rankOf.has(i)) rankOf.set(i, r + 1); });
  let used = 0;
  /** @type {Set<number>} */
  const covered = new Set();
  /** @type {{hit: number, span: number[]}[]} */
  const passages = [];
  for (const hit of ranked) {
    if (passages.length === k) break;
    if (covered.has(hit)) continue;
    const cost = base * ((firstFull && !passages.length ? budget : used) / budget);
    const value = (/** @type {number} */ j, /** @type {number} */ length) => {
      const r = rankOf.get(j);
      return (r !== undefined ? DECAY / (DECAY + r - 1) : 0.0) - PENALTY - cost * length;
    };
    const span = (await objectPassage(hit, chunk, ranked, rankOf, covered, value))
      ?? await segment(hit, chunk, nChunks, covered, value);
    for (const j of span) covered.add(j);
    passages.push({ hit, span });
    used += await passagesLength([{ hit, span }], chunk);
  }
  return passages;
}

/**
 * An object's card and its parts ranked within OBJECT_RANKS and worth their length
 * (value > 0), taken in rank order while they fit in MAX_CHARS (card and hit always in),
 * in page order; null unless `hit` is a card, or a part whose card ranks within
 * OBJECT_RANKS and is not shown yet. The object of a card is its own, or its owner's for
 * a nested card (a method's card names its class).
 * @param {number} hit
 * @param {(i: number) => Promise<ChunkRecord>} chunk
 * @param {number[]} ranked
 * @param {Map<number, number>} rankOf
 * @param {Set<number>} covered
 * @param {(j: number, length: number) => number} value
 * @returns {Promise<number[] | null>}
 */
async function objectPassage(hit, chunk, ranked, rankOf, covered, value) {
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
      if (value(j, length) <= 0) continue; // not worth its length (only with a budget)
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
 * @param {(j: number, length: number) => number} value
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
  let bestValue = value(...run[h]);
  for (let a = 0; a <= h; a++) {
    let total = 0.0;
    let length = 0;
    for (let j = a; j < h; j++) {
      total += value(...run[j]);
      length += run[j][1];
    }
    for (let b = h; b < run.length; b++) {
      total += value(...run[b]);
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
