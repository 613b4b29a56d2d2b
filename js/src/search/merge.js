// @ts-check
/**
 * Several sites' answers merged into one ranking by how well each hit matches the query, a
 * mirror of sphinx_rag/search/merge.py (see its docstring): a site whose verdict is weak comes
 * after every site with a good match; each hit's match is the share of the query's
 * distinct words its passage holds plus its cosine to the query (KEYWORD_SIMILARITY for a
 * site searched by keywords alone), the cosine (another site's claim) counted within [-1, 1]
 * and at most UNBACKED_SIMILARITY above the share of words backing it; each site's order is kept, the best next hit taken,
 * ties to the hit whose title holds more query words, then the smaller key, then the
 * smaller site name: never to the site listed first. tests/fixtures/merge.json (written
 * by Python) pins the order.
 * @module merge
 */

import { tokenize } from "./lexical.js";
import { clipQuery } from "./retrieve.js";

/** The cosine a hit found by keywords alone is taken to have (Python's KEYWORD_SIMILARITY). */
export const KEYWORD_SIMILARITY = 0.5;
/** The most a hit's cosine counts beyond the share of the query's words its passage holds (Python's UNBACKED_SIMILARITY). */
export const UNBACKED_SIMILARITY = 0.25;

/**
 * What a hit's cosine counts in its match (Python's _credit): KEYWORD_SIMILARITY without
 * one, else the cosine within [-1, 1] (NaN: 0) and at most share + UNBACKED_SIMILARITY.
 * @param {number | null | undefined} similarity @param {number} share
 */
function credit(similarity, share) {
  let cosine;
  if (similarity == null) cosine = KEYWORD_SIMILARITY;
  else if (Number.isNaN(similarity)) cosine = 0;
  else cosine = Math.min(Math.max(similarity, -1), 1);
  return Math.min(cosine, share + UNBACKED_SIMILARITY);
}

/**
 * @typedef {{key: string, text: string, title?: string, similarity?: number | null}} Entry
 *   key: absolute URL and chunk id; similarity: the hit's cosine to the query (null: keywords alone)
 * @typedef {{hits: Entry[], weak: boolean}} SiteAnswer
 */

/** The query's distinct words as the merge counts them. @param {string} query */
export function matchWords(query) {
  return [...new Set(tokenize(clipQuery(query)))];
}

/** @param {string[]} words @param {string} text */
function share(words, text) {
  if (!words.length) return 0;
  const have = new Set(tokenize(text));
  let n = 0;
  for (const w of words) if (have.has(w)) n++;
  return n / words.length;
}

/**
 * Python's string order (by code point, not UTF-16 unit).
 * @param {string} a @param {string} b
 */
function compareStrings(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return /** @type {number} */ (x[i].codePointAt(0)) - /** @type {number} */ (y[i].codePointAt(0));
  }
  return x.length - y.length;
}

/**
 * @typedef {{weak: boolean, match: number, title: number, key: string, name: string, i: number}} Row
 */

/** @param {Row} a @param {Row} b */
function before(a, b) {
  if (a.weak !== b.weak) return !a.weak;
  if (a.match !== b.match) return a.match > b.match;
  if (a.title !== b.title) return a.title > b.title;
  if (a.key !== b.key) return compareStrings(a.key, b.key) < 0;
  return compareStrings(a.name, b.name) < 0;
}

/**
 * @param {string} query
 * @param {SiteAnswer[]} answers  answers[n]: site n's hits, best first, and whether its verdict is weak
 * @param {string[]} names  names[n]: site n's name (distinct)
 * @param {number | null} [k]  at most this many (null: all)
 * @returns {Array<[number, number]>} [site, position in its hits] pairs, best first
 */
export function mergeAnswers(query, answers, names, k = null) {
  const words = matchWords(query);
  const keyed = answers.map(({ hits, weak }, n) => hits.map((e, i) => {
    const held = share(words, e.text);
    return { weak: Boolean(weak), match: held + credit(e.similarity, held), title: share(words, e.title ?? ""),
      key: e.key, name: names[n], i };
  }));
  const heads = keyed.map(() => 0);
  const seen = new Set();
  /** @type {Array<[number, number]>} */
  const out = [];
  while (k === null || out.length < k) {
    let best = -1;
    keyed.forEach((rows, n) => {
      if (heads[n] < rows.length && (best < 0 || before(rows[heads[n]], keyed[best][heads[best]]))) best = n;
    });
    if (best < 0) break;
    const row = keyed[best][heads[best]++];
    if (!seen.has(row.key)) {
      seen.add(row.key);
      out.push([best, row.i]);
    }
  }
  return out;
}

/**
 * Only the nearest passages, no good match, when every site that answered says so.
 * @param {boolean[]} weak
 */
export function mergedWeak(weak) {
  return weak.length > 0 && weak.every(Boolean);
}
