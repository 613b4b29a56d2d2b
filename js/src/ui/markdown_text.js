// @ts-check
/**
 * Page text as Markdown for agents (WebMCP's answers): sphinx_rag/agents/markdown_text.py
 * (the escaping of page text and titles in the twins, llms.txt and the MCP answers) and
 * markdown.py's display_markdown (a passage), the same function in both runtimes, pinned by
 * tests/fixtures/agent_markdown.json. Page text is data, never Markdown: nothing written
 * in it (`<script>`, `![x](https://...)`, `<https://...>`, `&lt;`, `__init__`, `**kwargs`)
 * becomes HTML, a link, an image or emphasis; code stays verbatim in fences and spans
 * longer than any backtick run it holds.
 *
 * The regular expressions mean the same as Python's: ASCII classes, no multiline flag,
 * whitespace written out (Python's `str.split()` takes characters JavaScript's `\s` does
 * not, and the reverse).
 * @module markdown_text
 */

import { wellFormed } from "./well_formed.js";

/** @typedef {import("../search/display.js").Display} Display */

/** What Python's str.isspace takes for whitespace (markdown_text.WHITESPACE). */
const WHITESPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const WS = new RegExp(`[${WHITESPACE}]+`, "g");

const INLINE = new RegExp([
  "\\\\(?=[!-\\/:-@\\[-`{-~\\n]|$)", // a backslash that would escape what follows (or a line break)
  "[<\\[\\]`*~]", // a tag, an autolink, a comment; a link or an image; a code span; emphasis; strikethrough
  "&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};|$)", // an entity (or its start)
  "!(?=\\[|$)|(?<=\\])\\(", // an image's !, a link's (
  "(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])", // _ that may open or close emphasis: not inside a word (a_b)
].join("|"), "g");
/** @type {Record<string, string>} */
const INLINE_ESCAPES = { "<": "&lt;", "&": "&amp;" };
const LINE_START = /(^|\n)([ \t]*)([#>|=+]|[0-9]+[.)](?=[^ \t\n]))/g;
const DASHES = /(^|\n)([ \t]*)-(?=[- \t]*(?:\n|$))/g;

/** Whitespace runs as one space, none at the ends (markdown_text.collapse). @param {string} text */
export function collapse(text) {
  return text.replace(WS, " ").replace(/^ | $/g, "");
}

/**
 * Page text inside a line, escaped: a backslash before punctuation doubled; `<` always and an
 * entity's `&` as entities; `[`, `]`, backticks, `*`, `~`, an image's `!`, a link's `(` and
 * an `_` not between two letters or digits with a backslash (markdown_text.escape_inline).
 * @param {string} text
 */
export function escapeInline(text) {
  return wellFormed(text).replace(INLINE, (m) => INLINE_ESCAPES[m] ?? `\\${m}`);
}

/**
 * Prose: inline escapes, and what would start a heading, a quote, a table, a rule or a setext
 * underline escaped; list lines stay lists (markdown_text.escape_prose).
 * @param {string} text
 */
export function escapeProse(text) {
  const inline = escapeInline(text.replace(/\r\n/g, "\n").replace(/\r/g, "\n"));
  return inline.replace(LINE_START, (_, a, b, c) => `${a}${b}\\${c}`).replace(DASHES, (_, a, b) => `${a}${b}\\-`);
}

/** Text on one line (a title), escaped (markdown_text.escape_line). @param {string} text */
export function escapeLine(text) {
  return escapeInline(collapse(text));
}

/** @param {string} text @param {RegExp} runs */
function longest(text, runs) {
  let most = 0;
  for (const m of text.matchAll(runs)) most = Math.max(most, m[0].length);
  return most;
}

/** Inline code (markdown_text.code_span). @param {string} text */
export function codeSpan(text) {
  const code = collapse(wellFormed(text));
  const ticks = "`".repeat(longest(code, /`+/g) + 1);
  const pad = code.startsWith("`") || code.endsWith("`") ? " " : "";
  return `${ticks}${pad}${code}${pad}${ticks}`;
}

/** A fenced code block (markdown_text.code_fence). @param {string} text @param {string} [language] */
export function codeFence(text, language = "") {
  const code = wellFormed(text).replace(/\r\n/g, "\n").replace(/\r/g, "\n");
  const ticks = "`".repeat(Math.max(3, longest(code, /`{3,}/g) + 1));
  const info = String(language).replace(/[^A-Za-z0-9_+.#-]/g, "");
  return `${ticks}${info}\n${code}\n${ticks}`;
}

/** An ATX heading, its text escaped (markdown_text.atx_heading). @param {number} level @param {string} text */
export function atxHeading(level, text) {
  const escaped = escapeLine(text).replace(/(^| )(#+)$/, "$1\\$2");
  return `${"#".repeat(Math.min(Math.max(level, 1), 6))} ${escaped.startsWith("#") ? `\\${escaped}` : escaped}`;
}

const URL_UNSAFE = /[^A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]/gu;

/**
 * A URL written as text in an answer, percent-encoded where Markdown or HTML would read it
 * (markdown_text.markdown_url).
 * @param {string} url
 */
export function markdownUrl(url) {
  return wellFormed(url).replace(URL_UNSAFE, (c) => encodeURIComponent(c));
}

/**
 * One passage's display as Markdown (markdown.py's display_markdown): labels and section
 * headings bold, a signature fenced (an entry line after a label: inline code), code
 * fenced with its language, prose escaped.
 * @param {Display} display
 */
export function displayMarkdown(display) {
  /** @type {string[]} */
  const parts = [];
  let afterLabel = false;
  for (const [kind, text, language] of display) {
    if (kind === "label") parts.push(`**${escapeProse(text)}**`);
    else if (kind === "code") parts.push(codeFence(text, language ?? ""));
    else if (kind === "term") parts.push(!afterLabel && text.includes("(") ? codeFence(text, "python") : codeSpan(text));
    else if (kind === "heading") parts.push(`**${escapeProse(collapse(text))}**`);
    else parts.push(escapeProse(text));
    afterLabel = kind === "label";
  }
  return parts.filter((p) => collapse(p)).join("\n\n");
}
