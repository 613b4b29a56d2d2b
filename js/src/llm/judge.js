// @ts-check
/**
 * LLM filtering for Ask (Python's sphinx_rag/llm/judge.py: the same prompt, the same
 * reading of the reply; tests/fixtures/multi_query.json pins both): one call per passage,
 * each asking for one word; a passage is dropped only when the model clearly says no, and
 * when it says no to every passage all are sent anyway.
 *
 * @module judge
 */

export const JUDGE_MAX_TOKENS = 8;
export const JUDGE_PASSAGE_CHARS = 2000;

const SYSTEM = "You check whether an excerpt of the {project} documentation helps to answer a question. " +
  "Reply with one word: yes or no.";
const USER = "Question: {question}\n\nExcerpt ({title}):\n{text}\n\n" +
  "Does this excerpt help to answer the question? Reply yes or no.";

const YES = new Set(["yes", "y", "yeah", "yep", "true", "relevant", "helpful", "helps", "oui", "ja", "si"]);
const NO = new Set(["no", "nope", "false", "irrelevant", "unhelpful", "not", "non", "nein"]);
const WORD = /\p{L}+/gu; // Python's [^\W\d_]+: letters
const PY_SPACE = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";
const SPACE = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, "g"); // str.isspace()
const TRAILING_SPACE = new RegExp(`${PY_SPACE}+$`);

/**
 * The chat messages asking whether one passage helps to answer `question`.
 * @param {string} question @param {string} title @param {string} text @param {string} project
 * @returns {import("./prompt.js").Message[]}
 */
export function judgeMessages(question, title, text, project) {
  let shown = text.replace(SPACE, "");
  const points = [...shown];
  if (points.length > JUDGE_PASSAGE_CHARS) shown = `${points.slice(0, JUDGE_PASSAGE_CHARS).join("").replace(TRAILING_SPACE, "")} ...`;
  const values = /** @type {Record<string, string>} */ ({ question, title, text: shown });
  return [
    { role: "system", content: SYSTEM.replace("{project}", () => project) },
    { role: "user", content: USER.replace(/\{(question|title|text)\}/g, (_, name) => values[name]) },
  ];
}

/**
 * true (yes), false (no) or null (neither: the passage is kept) from the judge's reply:
 * its first word that is a yes or a no, among the first 12.
 * @param {string} text
 * @returns {boolean | null}
 */
export function parseVerdict(text) {
  const words = (text || "").toLowerCase().match(WORD) ?? [];
  for (const word of words.slice(0, 12)) {
    if (YES.has(word)) return true;
    if (NO.has(word)) return false;
  }
  return null;
}

/**
 * The passages not rejected (a verdict other than false); all of them when every one is.
 * @template P
 * @param {P[]} passages @param {(boolean | null)[]} verdicts
 * @returns {P[]}
 */
export function keptPassages(passages, verdicts) {
  const kept = passages.filter((_, i) => verdicts[i] !== false);
  return kept.length ? kept : [...passages];
}
