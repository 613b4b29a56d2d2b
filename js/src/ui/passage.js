// @ts-check
/**
 * One result's passage in the dialog, from its display form (search/display.js): prose as
 * paragraphs, code in <pre><code> with its newlines, a numpydoc entry's term and section
 * label apart, the query terms in <mark>. Only text nodes are created: document text
 * (a federated site's too) never becomes HTML, and a block that is not two strings is
 * skipped.
 *
 * A passage can be 1,600 characters; the dialog shows about `maxChars` of it
 * (`passageView`): from the numpydoc entry the query names ("index : int" for "what does
 * `index` of `imread` do?"), else the block with the most distinct query terms (with the label and
 * term above it), whole blocks while they fit, then the next prose block cut at a word
 * boundary with "…" and a code block cut after a whole line (the block the view starts at
 * from the line before its best line, when that is further down). A prose block longer than
 * the room left is windowed around its hits (highlight.js's snippet, word boundaries).
 * An API passage (its display opens with the object's term and summary: an object card
 * or a signature) that is shown from further down keeps that summary as its first line,
 * so that a reader sees what the object is before the part that matched. A passage that
 * runs over several sections (expand.py) has a "heading" block where its section changes;
 * shown from further down, it keeps the heading of the section it is in, and it ends where the
 * next section begins (that section's text belongs to another hit). Text left out above
 * is a "…" at the start of the first block shown after it (prose, a term, code: never a line
 * of its own, none before a heading or label: they start something new); a heading or label
 * with nothing under it is not shown, nor is a block that is only "…". sphinx_rag/search/window.py
 * is the same window in Python (the CLI, the MCP server; tests/fixtures/passages.json).
 * @module passage
 */

import { sectionName } from "../search/display.js";
import { stripInvisible, tokenize } from "../search/lexical.js";
import { findHits, noSplit, snippet } from "./highlight.js";
import { h } from "./dom.js";

const PREFIX = "sphinx-rag";
export const SHOWN_CHARS = 260;
export const CODE_LINES = 5;
/** At most this many characters of an API passage's summary line (passageView). */
export const SUMMARY_CHARS = 100;
const ELLIPSIS = "…";

/** @typedef {import("../search/display.js").Display} Display */
/** @typedef {import("./highlight.js").Segment} Segment */
/** @typedef {{kind: string, segments: Segment[]}} ViewBlock */

/**
 * Distinct query tokens in a text.
 * @param {string} text @param {Set<string>} tokens
 */
function distinctHits(text, tokens) {
  const seen = new Set();
  for (const hit of findHits(text, tokens)) hit.tokens.forEach((t) => seen.add(t));
  return seen.size;
}

/** What a numpydoc entry the query names counts for above any number of query words (window.py NAMED). */
export const NAMED = 1000;

/**
 * An entry's term ("index : int") whose name is all query words: the window of "what does
 * `index` of `imread` do?" starts there, not at the signature that holds both words.
 * @param {{kind: string, text: string}} block @param {Set<string>} tokens
 */
function named(block, tokens) {
  if (block.kind !== "term") return false;
  const name = tokenize(block.text.split(" : ")[0]);
  return name.length > 0 && name.every((t) => tokens.has(t));
}

/**
 * The first line of a code block to show: its top, or the line before the first line with
 * the most distinct query terms when that one is below the first CODE_LINES (the 19,999th
 * line of a listing is what a query for its name wants to see).
 * @param {string[]} lines @param {Set<string>} tokens
 */
function firstLine(lines, tokens) {
  let best = 0;
  let at = 0;
  lines.forEach((line, j) => {
    const n = distinctHits(line, tokens);
    if (n > best) [best, at] = [n, j];
  });
  return at < CODE_LINES ? 0 : at - 1;
}

/**
 * `text` cut to at most `max` code units at a word boundary (inside a word only when the
 * first word is longer), "…" appended when cut.
 * @param {string} text @param {number} max
 */
export function cutWords(text, max) {
  if (text.length <= max) return text;
  const head = text.slice(0, max + 1);
  const space = Math.max(head.lastIndexOf(" "), head.lastIndexOf("\n"));
  const cut = space > 0 ? head.slice(0, space) : text.slice(0, noSplit(text, max));
  return `${cut.replace(/[\s,;:]+$/, "")} ${ELLIPSIS}`;
}

/**
 * What of a passage the dialog shows, as blocks of highlighted segments.
 * @param {Display} display
 * @param {Set<string>} tokens  the query's BM25 tokens (highlight.js queryTokens)
 * @param {number} [maxChars]
 * @param {string} [title]  the result's title, shown above the passage: its own section's
 *   heading is not repeated at the top of the view
 * @returns {ViewBlock[]}
 */
export function passageView(display, tokens, maxChars = SHOWN_CHARS, title = "") {
  const blocks = display
    .map(([kind, text]) => ({ kind: kind === "lead" ? "p" : kind, text: stripInvisible(text) }))
    .filter((b) => b.text.trim() && b.text.trim() !== ELLIPSIS); // "…" alone says nothing
  // start at the block with the most distinct query terms, with the label/term above it
  let start = 0;
  let best = 0;
  blocks.forEach((b, i) => {
    const n = b.kind === "label" || b.kind === "heading" ? 0 : distinctHits(b.text, tokens) + (named(b, tokens) ? NAMED : 0);
    if (n > best) [best, start] = [n, i];
  });
  const ahead = blocks.slice(0, start).reduce((n, b) => n + b.text.length, 0);
  if (ahead + (blocks[start]?.text.length ?? 0) <= maxChars
    && !blocks.slice(1, start + 1).some((b) => b.kind === "heading")) start = 0; // it fits from the top (same section)
  while (start > 0 && ["label", "term", "heading"].includes(blocks[start - 1].kind)) start--;
  /** @type {ViewBlock[]} */
  const out = [];
  let left = maxChars;
  let skipped = false; // text left out above the next block shown: "…" at its start
  const push = (/** @type {string} */ kind, /** @type {Segment[]} */ segments) => {
    if (skipped && !["heading", "label"].includes(kind) && !segments[0]?.text.startsWith(ELLIPSIS)) {
      segments.unshift({ text: kind === "code" ? `${ELLIPSIS}\n` : `${ELLIPSIS} `, hit: false });
    }
    skipped = false;
    out.push({ kind, segments });
  };
  if (start > 1 && blocks[0].kind === "term" && blocks[1].kind === "p") { // what the object is
    const summary = cutWords(blocks[1].text, SUMMARY_CHARS);
    push("p", segmentsOf(summary, tokens));
    left -= summary.length;
  }
  const own = title ? sectionName(title) : null; // the hit's section, named above the passage
  if (blocks[start]?.kind === "heading" && blocks[start].text === own && start + 1 < blocks.length) start++;
  let section = -1; // shown from further down a passage of several sections: the section it is in
  for (let i = start - 1; i >= 0 && blocks[start].kind !== "heading"; i--) {
    if (blocks[i].kind === "heading") {
      section = blocks[i].text === own ? -1 : i;
      break;
    }
  }
  if (section >= 0) {
    push("heading", segmentsOf(blocks[section].text, tokens));
    left -= blocks[section].text.length;
    skipped = start > section + 1;
  } else skipped = start > 0 && (start > 2 || !out.length);
  let more = false; // the room ends before the passage does
  for (let i = start; i < blocks.length; i++) {
    const { kind, text } = blocks[i];
    if (left <= 0) {
      more = true;
      break;
    }
    if (kind === "heading" && out.some((b) => !["label", "heading"].includes(b.kind))) {
      more = blocks.slice(i).some((b) => !["label", "heading"].includes(b.kind)); // the next section is another hit's
      break;
    }
    if (kind === "code") {
      const lines = text.split("\n");
      const from = i === start ? firstLine(lines, tokens) : 0;
      const keep = [];
      for (const line of lines.slice(from, from + CODE_LINES)) {
        if (keep.length && [...keep, line].join("\n").length > Math.max(left, 80)) break;
        keep.push(line);
      }
      const shown = (from > 0 ? `${ELLIPSIS}\n` : "") + keep.join("\n")
        + (from + keep.length < lines.length ? `\n${ELLIPSIS}` : "");
      push(kind, segmentsOf(shown, tokens));
      left -= keep.join("\n").length;
    } else if (text.length <= left || kind === "label" || kind === "term" || kind === "heading") {
      push(kind, segmentsOf(text, tokens));
      left -= text.length;
    } else if (i === start && distinctHits(text, tokens)) {
      push(kind, snippet(text, tokens, Math.max(left, 120))); // around its hits
      left = 0;
    } else {
      push(kind, segmentsOf(cutWords(text, Math.max(left, 40)), tokens));
      left = 0;
    }
  }
  while (out.length && ["label", "heading"].includes(out[out.length - 1].kind)) out.pop(); // nothing under it
  if (!out.some((b) => !["label", "heading"].includes(b.kind))) return []; // no text at all: nothing, not a heading
  const last = out[out.length - 1].segments.at(-1)?.text ?? "";
  if (more && !last.endsWith(ELLIPSIS)) out.push({ kind: "p", segments: [{ text: ELLIPSIS, hit: false }] }); // more follows
  return out;
}

/**
 * @param {string} text @param {Set<string>} tokens
 * @returns {Segment[]}
 */
function segmentsOf(text, tokens) {
  return snippet(text, tokens, text.length);
}

/**
 * The passage element of one result (class sphinx-rag-snippet).
 * @param {{display?: Display, text: string, title?: string}} result
 * @param {Set<string>} tokens
 * @param {number} [maxChars]
 * @returns {HTMLElement}
 */
export function renderPassage(result, tokens, maxChars = SHOWN_CHARS) {
  const display = Array.isArray(result.display)
    ? result.display.filter((b) => Array.isArray(b) && typeof b[0] === "string" && typeof b[1] === "string") // strings only, ever
    : [["p", String(result.text ?? "")]];
  const box = h("div", { class: `${PREFIX}-snippet` });
  for (const block of passageView(/** @type {Display} */ (display), tokens, maxChars, result.title ?? "")) {
    const marked = block.segments.map((s) => (s.hit ? h("mark", {}, [s.text]) : s.text));
    if (block.kind === "code") {
      box.append(h("pre", { class: `${PREFIX}-code` }, [h("code", {}, marked)]));
    } else {
      box.append(h("p", { class: `${PREFIX}-block ${PREFIX}-block--${block.kind}` }, marked));
    }
  }
  return box;
}
