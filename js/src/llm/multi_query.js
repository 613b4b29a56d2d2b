// @ts-check
/**
 * Multi-query retrieval for Ask (Python's sphinx_rag/llm/multi_query.py, the same prompt,
 * the same reading of a sloppy answer, the same fusion; tests/fixtures/multi_query.json
 * pins both): the LLM rewrites the question into up to MAX_QUERIES search queries, each is
 * ranked like the question, and the rankings are fused by reciprocal rank with the
 * question's own.
 *
 * @module multi_query
 */

export const MAX_QUERIES = 3;
export const REWRITE_MAX_TOKENS = 128;
export const RRF_K = 60;
const MAX_QUERY_CHARS = 160;
const MAX_QUERY_WORDS = 20;

const SYSTEM = "You write search queries for the documentation of {project}. You never answer the question " +
  "yourself.";
const USER = "Write 3 short search queries that would find the parts of the documentation that answer the question " +
  "below. Use the words the documentation would use: names of functions, classes, parameters and " +
  "options, and plain keywords. Write one query per line and nothing else.\n\nQuestion: {question}";

const FENCE = /^\s*(```|~~~)/;
const FIRST_ITEM = /^\s*\(?1[.)]\s/;
const NEXT_ITEM = /\s\(?[0-9]{1,2}[.)]\s/g;
const SEPARATOR = /\s*[|;]\s*/;
const LABEL = /^(?:(?:search\s+)?(?:query|queries|q)\s*[0-9]{0,2}\s*[:.)]|\(?[0-9]{1,2}[.):]|[-*+\u2022>#]+)\s*/i;
const QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb";
const EMPHASIS = /(\*\*|__|\*|_)(.+?)\1/g;
const WORD = /[\p{L}\p{N}_]+/gu; // Python's \w
const CHATTER = /^(?:here (?:are|is)|sure|certainly|of course|okay|i hope|hope this|let me know|note)(?![\p{L}\p{N}_])/iu;
/** A line that starts as a chat turn ("Question: ...", "User: ...") repeats the prompt. */
const ECHO_LABEL = /^[*_\s]*(?:question|user|system|assistant)[*_\s]*:/i;
const PY_SPACE = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const SPACE = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, "g"); // str.isspace()

/** @param {string} s  Python's str.strip() (whitespace as Python counts it) */
const strip = (s) => s.replace(SPACE, "");

/** @param {string} s @param {string} chars  Python's str.strip(chars) */
function stripChars(s, chars) {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a])) a++;
  while (b > a && chars.includes(s[b - 1])) b--;
  return s.slice(a, b);
}

/** @param {string} s  Python's str.rstrip(",;") */
const rstripSeparators = (s) => s.replace(/[,;]+$/, "");

const THREAD = "\n\nThe question follows earlier questions of a conversation: write queries that make sense " +
  "on their own.\n\nEarlier questions:\n{earlier}";

/**
 * The chat messages asking for the search queries of `question`; `earlier`: the
 * conversation's earlier questions (thread.js's earlierQuestions), oldest first.
 * @param {string} question @param {string} project @param {string[]} [earlier]
 * @returns {import("./prompt.js").Message[]}
 */
export function rewriteMessages(question, project, earlier = []) {
  let user = USER.replace("{question}", () => question);
  if (earlier.length) {
    const at = user.lastIndexOf("\n\nQuestion: ");
    const listed = earlier.map((q) => `- ${q}`).join("\n");
    user = user.slice(0, at) + THREAD.replace("{earlier}", () => listed) + user.slice(at);
  }
  return [
    { role: "system", content: SYSTEM.replace("{project}", () => project) },
    { role: "user", content: user },
  ];
}

/** A line without list markers, labels, emphasis and the quotes around it. @param {string} line */
function clean(line) {
  let text = strip(line);
  for (let n = 0; n < 3; n++) {
    const before = text;
    text = strip(text.replace(LABEL, ""));
    text = strip(text.replace(EMPHASIS, "$2"));
    text = strip(stripChars(text, QUOTES));
    text = strip(rstripSeparators(text));
    if (text === before) break;
  }
  return text;
}

/** What two queries share when they are the same query. @param {string} text */
function key(text) {
  return (pyCasefold(text).match(WORD) ?? []).join(" ");
}

/** Python's str.casefold() for the characters queries use (ß -> ss, final sigma...). @param {string} s */
function pyCasefold(s) {
  return s.toLowerCase().replace(/ß/g, "ss").replace(/ς/g, "σ");
}

/** The words of the instructions (the prompt without the project and the question). */
const PROMPT_WORDS = new Set(key(SYSTEM.replace("{project}", "") + " " + USER.replace("{question}", "")).split(" "));

/**
 * Three or more words, three quarters of them the instructions': a small model that
 * repeats its prompt (Gemma 3 270M echoes it whole, cut anywhere) is not writing queries.
 * @param {string} k  a query's key()
 */
function echoesPrompt(k) {
  const words = k.split(" ");
  return words.length >= 3 && 4 * words.filter((w) => PROMPT_WORDS.has(w)).length >= 3 * words.length;
}

/**
 * The answer's lines; a line holding a numbered list ("1. a 2. b") is cut before each
 * number, one with "|" or ";" at them.
 * @param {string} text
 */
function lines(text) {
  /** @type {string[]} */
  const out = [];
  for (const line of text.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/)) {
    if (FENCE.test(line)) continue;
    if (FIRST_ITEM.test(line) && line.search(NEXT_ITEM) >= 0) {
      const starts = [0, ...[...line.matchAll(NEXT_ITEM)].map((m) => /** @type {number} */ (m.index)), line.length];
      for (let i = 0; i + 1 < starts.length; i++) out.push(line.slice(starts[i], starts[i + 1]));
    } else {
      out.push(...line.split(SEPARATOR));
    }
  }
  return out;
}

/**
 * Up to MAX_QUERIES distinct search queries read from the model's answer (none: []).
 * @param {string} text @param {string} question
 * @returns {string[]}
 */
export function parseQueries(text, question) {
  const seen = new Set([key(question)]);
  /** @type {string[]} */
  const queries = [];
  for (const line of lines(text || "")) {
    const stripped = strip(line);
    if (!stripped || stripped.endsWith(":") || stripped.endsWith("!") || ECHO_LABEL.test(stripped)) continue;
    const query = clean(stripped);
    if (CHATTER.test(query)) continue;
    const k = key(query);
    if (!k || seen.has(k) || [...query].length > MAX_QUERY_CHARS || k.split(" ").length > MAX_QUERY_WORDS ||
      echoesPrompt(k)) continue;
    seen.add(k);
    queries.push(query);
    if (queries.length === MAX_QUERIES) break;
  }
  return queries;
}

/**
 * Reciprocal-rank fusion of chunk rankings (chunk -> score, each ranked by (-score,
 * chunk)): the sum of 1 / (rrfK + rank), in ranking order.
 * @param {Map<number, number>[]} rankings
 * @param {number} [rrfK]
 * @returns {Map<number, number>}
 */
export function fuseRankings(rankings, rrfK = RRF_K) {
  /** @type {Map<number, number>} */
  const fused = new Map();
  for (const scored of rankings) {
    const ranked = [...scored.keys()].sort((a, b) => {
      const sa = /** @type {number} */ (scored.get(a));
      const sb = /** @type {number} */ (scored.get(b));
      return sa > sb ? -1 : sa < sb ? 1 : a - b;
    });
    ranked.forEach((i, r) => fused.set(i, (fused.get(i) ?? 0.0) + 1.0 / (rrfK + r + 1)));
  }
  return fused;
}
