// @ts-check
/**
 * Ask as a conversation (Python's sphinx_rag/llm/thread.py, rule for rule;
 * tests/fixtures/ask_thread.json pins both): the earlier turns a follow-up is asked with,
 * what it is searched as, and the follow-up questions a model suggests after its answer.
 *
 * - history: at most MAX_THREAD_TURNS earlier turns, newest first, within MAX_THREAD_CHARS
 *   (and a quarter of the window after the answer's room); each earlier answer without its
 *   follow-ups and [n] citations, cut after a whole sentence within MAX_TURN_ANSWER_CHARS.
 * - threadQuery: the last THREAD_QUERY_TURNS earlier questions joined to the new one; the
 *   search fuses its ranking with the question's own.
 * - parseFollowUps: the last "Follow-up questions:" heading followed only by list items or
 *   question lines; anything else means none, and the text is kept whole.
 * - FollowUpHold (the browser only): how much of a streamed answer may be shown before the
 *   follow-up list, so the list never flashes into the answer.
 *
 * Lengths are counted in code points, as Python's len.
 *
 * @module thread
 */

import { sentenceEnds } from "./prompt.js";

export const MAX_THREAD_TURNS = 3;
export const MAX_THREAD_CHARS = 3000;
export const MAX_TURN_ANSWER_CHARS = 1000;
export const THREAD_QUERY_TURNS = 2;
export const MAX_FOLLOW_UPS = 3;
export const MAX_FOLLOW_UP_CHARS = 200;
const ANSWER_RESERVE_TOKENS = 512; // prompt.js's (which imports this module)

/**
 * @typedef {{question: string, answer: string}} Turn  a turn of the thread (other fields ignored)
 * @typedef {import("./prompt.js").Message} Message
 */

const CITATION = / ?\[[0-9]{1,3}(?: *, *[0-9]{1,3})*\]/g;
const HEADING = new RegExp("^[ \\t]*(?:#{1,6}[ \\t]*)?(?:\\*\\*|__)?[ \\t]*" +
  "(?:(?:suggested |related |possible )?follow[- ]?up(?: questions?)?|(?:suggested|related) questions)" +
  "[ \\t]*:?[ \\t]*(?:\\*\\*|__)?[ \\t]*:?[ \\t]*$", "i");
const ITEM = /^[ \t]*(?:[-*+]|[0-9]{1,2}[.)])[ \t]+([^\n]*)$/;
const EMPHASIS = /^(\*\*|__|\*|_)([^\n]+)\1$/;
const QUOTES = "\"'`\u201c\u201d\u2018\u2019";
const BLANKS = " \t";
/** The letters of every heading HEADING accepts (a prefix of one may still become one). */
const HEADING_LETTERS = ["suggestedfollowupquestions", "relatedfollowupquestions", "possiblefollowupquestions",
  "followupquestions", "suggestedquestions", "relatedquestions"];

/** @param {string} s */
const length = (s) => {
  let n = 0;
  for (const _ of s) n++; // eslint-disable-line no-unused-vars
  return n;
};

/** The first `n` code points of `s`. @param {string} s @param {number} n */
const head = (s, n) => Array.from(s).slice(0, n).join("");

/** Python's str.strip(chars). @param {string} s @param {string} chars */
function strip(s, chars) {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a])) a++;
  while (b > a && chars.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

/** @param {string} s */
const rstrip = (s, /** @type {string} */ chars) => {
  let b = s.length;
  while (b > 0 && chars.includes(s[b - 1])) b--;
  return s.slice(0, b);
};

/** @param {string} text */
const lines = (text) => text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n");

/** The text without its [n] / [1, 2] citations. @param {string} text */
export function stripCitations(text) {
  return text.replace(CITATION, "");
}

/**
 * What an answer cites, against the passages it was given (Python's citation_check):
 * `cited` every number of its [n] / [1, 2] citations, once each, ascending; `unknown` those
 * that name no passage sent (0, or above `sent`). An answer that cites nothing, or a
 * passage it was not given, is shown as such.
 * @param {string} text @param {number} sent  how many passages the model was given
 * @returns {{cited: number[], unknown: number[]}}
 */
export function citationCheck(text, sent) {
  const numbers = new Set();
  for (const m of text.matchAll(CITATION)) {
    for (const n of m[0].match(/[0-9]+/g) ?? []) numbers.add(Number(n));
  }
  const cited = [...numbers].sort((a, b) => a - b);
  return { cited, unknown: cited.filter((n) => n < 1 || n > sent) };
}

/** The text, or its first `limit` code points cut after their last whole sentence, then " …". @param {string} text @param {number} limit */
function cut(text, limit) {
  if (length(text) <= limit) return text;
  const h = head(text, limit);
  const ends = sentenceEnds(h);
  return rstrip(ends.length ? h.slice(0, ends[ends.length - 1]) : h, " \t\n\r\f\v") + " …";
}

/** @param {unknown} turn @returns {[string, string] | null} */
function readTurn(turn) {
  if (!turn || typeof turn !== "object" || Array.isArray(turn)) return null;
  const t = /** @type {any} */ (turn);
  if (typeof t.question !== "string" || typeof t.answer !== "string") return null;
  const question = strip(t.question, BLANKS + "\n");
  const answer = strip(stripCitations(parseFollowUps(t.answer).answer), BLANKS + "\n");
  if (!question || !answer) return null;
  return [head(question, MAX_FOLLOW_UP_CHARS * 2), cut(answer, MAX_TURN_ANSWER_CHARS)];
}

/**
 * The earlier turns the model reads, oldest first, as [question, answer].
 * @param {unknown[] | null | undefined} thread @param {number} maxContextTokens
 * @returns {[string, string][]}
 */
export function history(thread, maxContextTokens) {
  const turns = /** @type {[string, string][]} */ ((thread ?? []).map(readTurn).filter((t) => t))
    .slice(-MAX_THREAD_TURNS);
  const room = Math.min(MAX_THREAD_CHARS, Math.max(0, maxContextTokens - ANSWER_RESERVE_TOKENS));
  /** @type {[string, string][]} */
  const kept = [];
  let total = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    total += length(turns[i][0]) + length(turns[i][1]);
    if (total > room) break;
    kept.unshift(turns[i]);
  }
  return kept;
}

/** The earlier turns as chat messages. @param {[string, string][]} turns @returns {Message[]} */
export function historyMessages(turns) {
  return turns.flatMap(([question, answer]) => [
    { role: /** @type {const} */ ("user"), content: question },
    { role: /** @type {const} */ ("assistant"), content: answer },
  ]);
}

/** The last THREAD_QUERY_TURNS questions of the thread, oldest first. @param {unknown[] | null | undefined} thread */
export function earlierQuestions(thread) {
  return (thread ?? [])
    .map((t) => (t && typeof t === "object" && typeof (/** @type {any} */ (t)).question === "string"
      ? strip(/** @type {any} */ (t).question, BLANKS + "\n") : ""))
    .filter((q) => q)
    .map((q) => head(q, MAX_FOLLOW_UP_CHARS * 2))
    .slice(-THREAD_QUERY_TURNS);
}

/**
 * What a follow-up is also searched as: the earlier questions, then it (null without any).
 * @param {unknown[] | null | undefined} thread @param {string} question
 */
export function threadQuery(thread, question) {
  const earlier = earlierQuestions(thread);
  return earlier.length ? [...earlier, question].join(" ") : null;
}

/** A list item as a follow-up question, or null. @param {string} item */
function followUp(item) {
  let text = strip(item, BLANKS);
  for (let n = 0; n < 3; n++) {
    const before = text;
    const m = EMPHASIS.exec(text);
    if (m) text = m[2];
    text = strip(strip(text, BLANKS), QUOTES + BLANKS);
    text = strip(stripCitations(text), BLANKS);
    if (text === before) break;
  }
  const n = length(text);
  return n >= 3 && n <= MAX_FOLLOW_UP_CHARS && text.endsWith("?") ? text : null;
}

/**
 * The answer without its follow-up list, and up to MAX_FOLLOW_UPS questions; the text as
 * given and [] when there is no well-formed list.
 * @param {string} text
 * @returns {{answer: string, questions: string[]}}
 */
export function parseFollowUps(text) {
  const t = text || "";
  const ls = lines(t);
  let at = -1;
  for (let i = ls.length - 1; i >= 0; i--) {
    if (HEADING.test(ls[i])) {
      at = i;
      break;
    }
  }
  if (at < 0) return { answer: t, questions: [] };
  /** @type {string[]} */
  const questions = [];
  const seen = new Set();
  for (const line of ls.slice(at + 1)) {
    if (!strip(line, BLANKS)) continue;
    const item = ITEM.exec(line);
    let body;
    if (item) body = item[1];
    else if (rstrip(line, BLANKS).endsWith("?") && length(line) <= MAX_FOLLOW_UP_CHARS) body = line;
    else return { answer: t, questions: [] }; // prose after the heading
    const question = followUp(body);
    if (question && !seen.has(question.toLowerCase()) && questions.length < MAX_FOLLOW_UPS) {
      seen.add(question.toLowerCase());
      questions.push(question);
    }
  }
  return { answer: rstrip(ls.slice(0, at).join("\n"), BLANKS + "\n"), questions };
}

/** A line longer than this is no heading (the longest HEADING accepts is far shorter). */
const HEADING_LINE_CHARS = 200;

/**
 * A streamed answer and the part of it that may be shown before its follow-up list: all of
 * it, or up to its first complete heading line, or up to the start of an incomplete last
 * line that may still become one ("**Follo"). Time and memory linear in the answer's
 * length however it is cut into pieces: the pieces are kept as they come (joined once, by
 * `text`), and only the line being written is looked at, up to HEADING_LINE_CHARS.
 */
export class FollowUpHold {
  constructor() {
    /** @type {string[]} every piece, "\n" line ends */
    this.parts = [];
    /** @type {string | null} the parts joined (until the next piece) */
    this.joined = null;
    /** Characters so far. */
    this.length = 0;
    /** A "\r" at the end of the last piece, waiting to see whether a "\n" follows. */
    this.heldCR = false;
    /** Where the line being written starts. */
    this.lineStart = 0;
    /** @type {string[] | null} its pieces; null once it is too long to be a heading */
    this.line = [];
    this.lineLength = 0;
    /** Where the first heading line starts (-1: none yet). */
    this.heading = -1;
    /** Characters handed out by take(). */
    this.shown = 0;
    /** @type {string[]} the pieces after them */
    this.unshown = [];
  }

  /** The whole text so far. */
  get text() {
    if (this.joined === null) {
      this.joined = this.parts.join("");
      this.parts = [this.joined];
    }
    return this.joined;
  }

  /** @param {string} piece  the next piece of the answer */
  push(piece) {
    let s = (this.heldCR ? "\r" : "") + piece;
    this.heldCR = s.endsWith("\r");
    if (this.heldCR) s = s.slice(0, -1);
    this.add(s.replace(/\r\n?/g, "\n"));
  }

  /** The answer is complete (a "\r" at its end is a line end). */
  end() {
    if (this.heldCR) this.add("\n");
    this.heldCR = false;
  }

  /** @param {string} s  a piece with "\n" line ends */
  add(s) {
    if (!s) return;
    this.parts.push(s);
    this.joined = null;
    this.unshown.push(s);
    const before = this.length;
    this.length += s.length;
    if (this.heading >= 0) return;
    let from = 0;
    for (let j = s.indexOf("\n"); j >= 0; j = s.indexOf("\n", from)) {
      const rest = s.slice(from, j);
      if (this.line && this.lineLength + rest.length <= HEADING_LINE_CHARS && HEADING.test(this.line.join("") + rest)) {
        this.heading = this.lineStart;
        return;
      }
      this.lineStart = before + j + 1;
      this.line = [];
      this.lineLength = 0;
      from = j + 1;
    }
    const rest = s.slice(from);
    this.lineLength += rest.length;
    if (this.line && this.lineLength <= HEADING_LINE_CHARS) this.line.push(rest);
    else this.line = null;
  }

  /** How many characters may be shown (never fewer than before, until a heading). */
  visible() {
    if (this.heading >= 0) return this.heading;
    if (!this.line) return this.length;
    const letters = this.line.join("").toLowerCase().replace(/[^a-z]/g, "");
    return HEADING_LETTERS.some((h) => h.startsWith(letters) || letters.startsWith(h)) ? this.lineStart : this.length;
  }

  /** The text from the last take() up to `end` characters (nothing if it is not past them). @param {number} end */
  takeUpTo(end) {
    if (end <= this.shown) return "";
    const pending = this.unshown.join("");
    const out = pending.slice(0, end - this.shown);
    this.unshown = [pending.slice(end - this.shown)];
    this.shown += out.length;
    return out;
  }

  /** The text that may be shown since the last take(). */
  take() {
    return this.takeUpTo(this.visible());
  }
}

/** How much of `text` (a streamed answer so far) may be shown: FollowUpHold's visible(). @param {string} text */
export function followUpCut(text) {
  const hold = new FollowUpHold();
  hold.push(text);
  return hold.visible();
}
