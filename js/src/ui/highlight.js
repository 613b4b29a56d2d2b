// @ts-check
/**
 * Pure helpers for displaying a result: the passage snippet around the query
 * terms, split into plain/highlighted segments. The UI turns segments into text
 * nodes and <mark> elements (never HTML), so document text can not inject markup.
 * @module highlight
 */

import { CAMEL, fold, stem, stripInvisible, tokenize } from "../search/lexical.js";

/** @typedef {{text: string, hit: boolean}} Segment */

const WORD = /[\p{L}\p{N}_]+/gu;

/**
 * The chunk text as shown: without the leading heading line (the title path is
 * displayed separately), without reST inline-literal backquotes, whitespace collapsed,
 * without bidi controls or zero-width characters (a right-to-left override in a
 * document must not reverse what follows it on screen).
 * @param {string} text
 * @param {string} title
 * @returns {string}
 */
export function displayText(text, title) {
  let body = text;
  const firstBreak = body.indexOf("\n");
  if (title && firstBreak > 0 && body.slice(0, firstBreak).trim() === title.trim()) {
    body = body.slice(firstBreak + 1);
  }
  return stripInvisible(body).replace(/``/g, "").replace(/\s+/g, " ").trim();
}

/**
 * The parts of a title path as shown (bidi controls and zero-width characters removed).
 * @param {string} title
 * @returns {string[]}
 */
export function titleParts(title) {
  return stripInvisible(title).split(" > ");
}

/** tokenize() of the words met so far: passages repeat their words, and a results list
 * shows ten passages at once (the first render of a visit runs before the tokenizer is
 * optimized). Bounded: cleared when full. */
const WORD_TOKENS = new Map();
const WORD_TOKENS_MAX = 20000;

/** @param {string} word @returns {string[]} */
function wordTokens(word) {
  let tokens = WORD_TOKENS.get(word);
  if (!tokens) {
    if (WORD_TOKENS.size >= WORD_TOKENS_MAX) WORD_TOKENS.clear();
    tokens = tokenize(word);
    WORD_TOKENS.set(word, tokens);
  }
  return tokens;
}

/** A part of a word shorter than this (in code points) is no word of its own: "re" of "reST". */
export const MIN_PART = 3;

/**
 * The parts of a word as offsets into it: its "_"-separated pieces split at camelCase
 * boundaries (lexical.js wordParts, positions kept). Empty parts are left out.
 * @param {string} word
 * @returns {{start: number, end: number}[]}
 */
export function wordPieces(word) {
  /** @type {{start: number, end: number}[]} */
  const out = [];
  let at = 0;
  for (const piece of word.split("_")) {
    let from = at;
    for (const part of piece.split(CAMEL)) {
      if (part) out.push({ start: from, end: from + part.length });
      from += part.length;
    }
    at += piece.length + 1;
  }
  return out;
}

/**
 * Positions of the words of `text` that match a query token (same tokenizer as BM25,
 * so "strategies" matches the query word "strategy"). A word made of parts
 * (`init_video_stream`, `KNeighborsClassifier`, `reST`) is a hit as a whole only when its
 * whole form is a query token; else only the parts that are (`video`, `Classifier`), and
 * never a part shorter than MIN_PART: the query word "read" marks nothing of "reST", nor
 * "re" all of it (Python's window._hits).
 * @param {string} text
 * @param {Set<string>} queryTokens
 * @returns {{start: number, end: number, tokens: string[]}[]}
 */
export function findHits(text, queryTokens) {
  /** @type {{start: number, end: number, tokens: string[]}[]} */
  const hits = [];
  if (!queryTokens.size) return hits;
  for (const m of text.matchAll(WORD)) {
    const word = m[0];
    const at = m.index ?? 0;
    const tokens = wordTokens(word).filter((t) => queryTokens.has(t));
    if (!tokens.length) continue;
    const pieces = wordPieces(word);
    if (pieces.length < 2 || queryTokens.has(stem(fold(word).toLowerCase().replace(/^_+|_+$/g, "")))) {
      hits.push({ start: at, end: at + word.length, tokens });
      continue;
    }
    for (const { start, end } of pieces) {
      const part = word.slice(start, end);
      if ([...part].length < MIN_PART) continue;
      const own = wordTokens(part).filter((t) => queryTokens.has(t));
      if (own.length) hits.push({ start: at + start, end: at + end, tokens: own });
    }
  }
  return hits;
}

/**
 * Split `text` into segments, marking the query hits.
 * @param {string} text
 * @param {Set<string>} queryTokens
 * @returns {Segment[]}
 */
export function highlight(text, queryTokens) {
  return segmentsOf(text, findHits(text, queryTokens), 0, text.length);
}

/**
 * @param {string} text
 * @param {{start: number, end: number}[]} hits
 * @param {number} from
 * @param {number} to
 * @returns {Segment[]}
 */
function segmentsOf(text, hits, from, to) {
  /** @type {Segment[]} */
  const out = [];
  let pos = from;
  for (const h of hits) {
    if (h.start < from || h.end > to) continue;
    if (h.start > pos) out.push({ text: text.slice(pos, h.start), hit: false });
    out.push({ text: text.slice(h.start, h.end), hit: true });
    pos = h.end;
  }
  if (pos < to) out.push({ text: text.slice(pos, to), hit: false });
  return out;
}

/**
 * A window of about `maxChars` characters of `text` covering the most distinct
 * query tokens (ties: the most hits, then the earliest), cut at word boundaries,
 * with "…" where text was cut.
 * @param {string} text  already cleaned by displayText
 * @param {Set<string>} queryTokens
 * @param {number} [maxChars]
 * @returns {Segment[]}
 */
export function snippet(text, queryTokens, maxChars = 240) {
  const hits = findHits(text, queryTokens);
  let start = 0;
  if (text.length > maxChars && hits.length) {
    let best = { distinct: -1, count: -1, start: 0 };
    for (let i = 0; i < hits.length; i++) {
      const from = Math.max(0, hits[i].start - 40);
      const seen = new Set();
      let count = 0;
      for (let j = i; j < hits.length && hits[j].end <= from + maxChars; j++) {
        hits[j].tokens.forEach((t) => seen.add(t));
        count++;
      }
      if (seen.size > best.distinct || (seen.size === best.distinct && count > best.count)) {
        best = { distinct: seen.size, count, start: from };
      }
    }
    start = Math.min(best.start, Math.max(0, text.length - maxChars));
  }
  let end = Math.min(text.length, start + maxChars);
  if (start > 0 && !/\s/.test(text[start - 1])) { // never begin inside a word
    const space = text.slice(start).search(/\s/);
    if (space >= 0 && space < maxChars / 2) start += space + 1;
  }
  if (end < text.length && !/\s/.test(text[end])) { // nor end inside one
    const space = Math.max(text.lastIndexOf(" ", end), text.lastIndexOf("\n", end));
    if (space > start) end = space;
  }
  start = noSplit(text, start);
  end = noSplit(text, end);
  const segments = segmentsOf(text, hits, start, end);
  if (start > 0) segments.unshift({ text: "… ", hit: false });
  if (end < text.length) segments.push({ text: " …", hit: false });
  return segments;
}

/**
 * A cut at `at` moved back off the middle of a surrogate pair (an emoji is never halved).
 * @param {string} text @param {number} at
 */
export function noSplit(text, at) {
  const code = text.charCodeAt(at);
  const before = text.charCodeAt(at - 1);
  return at > 0 && code >= 0xdc00 && code < 0xe000 && before >= 0xd800 && before < 0xdc00 ? at - 1 : at;
}

/**
 * The set of BM25 tokens of the query.
 * @param {string} query
 * @returns {Set<string>}
 */
export function queryTokens(query) {
  return new Set(tokenize(query));
}
