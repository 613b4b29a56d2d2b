// @ts-check
/**
 * "Report a bad result": an opt-in link (sphinx_rag_feedback_url, the script tag's
 * data-feedback-url) to a URL template, e.g. a new-issue form, prefilled with the query
 * and the results shown. The page itself sends nothing: the reader lands on the form and
 * decides. The text ends with a golden-set entry (sphinx_rag/tools/golden.py) for the maintainer
 * to complete with the page that should have come first and paste into the golden set.
 *
 * The Ask panel's thumbs down uses the same template: {query} becomes the question, {results}
 * the reason, the answer's beginning, the sources sent and the same golden-set entry
 * (answerReportText).
 * @module feedback
 */

import { wellFormed } from "./well_formed.js";

/** Results listed in the report. */
export const REPORTED = 5;

/**
 * The report's text: the query, the results shown in order, and a golden-set entry.
 * @param {string} query
 * @param {{url: string, title: string}[]} results  in the order shown
 * @returns {string}
 */
export function reportText(query, results) {
  const lines = [`Search: ${query}`, "", results.length ? "Results shown:" : "No results were shown."];
  results.slice(0, REPORTED).forEach((r, i) => lines.push(`${i + 1}. ${r.title} (${r.url})`));
  lines.push("", "The page that should have come first: ", "", ...goldenEntry(query));
  return lines.join("\n");
}

/** The golden-set entry a maintainer completes with the page the answer should come from. @param {string} query */
function goldenEntry(query) {
  return ["Golden-set entry (sphinx-rag golden add, or paste into the golden set):",
    JSON.stringify({ query, url: "PAGE.html#ANCHOR", rank: 3 })];
}

/** Why an answer was bad, as the reader says it (the thumbs down's choices). */
export const REASONS = /** @type {const} */ ({
  incorrect: "Incorrect",
  "not-asked": "Not what I asked",
  missing: "Missing in the docs",
});

/** Characters of the answer quoted in a report (a long URL fails on some servers). */
export const QUOTED_ANSWER = 400;

/**
 * The report of a bad answer: the question (after the earlier ones of its conversation),
 * the reason, the answer's beginning, the sources sent, and a golden-set entry to complete.
 * @param {{question: string, reason: keyof typeof REASONS, answer: string, sources: {url: string, title: string}[],
 *          earlier?: string[]}} report
 * @returns {string}
 */
export function answerReportText({ question, reason, answer, sources, earlier = [] }) {
  const lines = [`Ask: ${question}`];
  if (earlier.length) lines.push(`(a follow-up to: ${earlier.map((q) => `"${q}"`).join(", ")})`);
  lines.push(`Reason: ${REASONS[reason] ?? reason}`, "");
  const quoted = Array.from(answer.trim());
  if (quoted.length) {
    const shown = quoted.length > QUOTED_ANSWER ? `${quoted.slice(0, QUOTED_ANSWER).join("")}…` : answer.trim();
    lines.push("Answer (beginning):", ...shown.split("\n").map((l) => `> ${l}`), "");
  }
  lines.push(sources.length ? "Sources sent to the model:" : "No source was sent to the model.");
  sources.slice(0, REPORTED * 2).forEach((r, i) => lines.push(`${i + 1}. ${r.title} (${r.url})`));
  lines.push("", reason === "missing" ? "The page that should answer it (or that the docs lack): "
    : "The page that holds the right answer: ", "", ...goldenEntry(question));
  return lines.join("\n");
}

/**
 * The template with {query} and {results} filled in (URL-encoded; well-formed first:
 * a lone surrogate would make encodeURIComponent throw). Null for a template that is
 * not http(s). `text`: the report ({results}), by default the search's (reportText).
 * @param {string} template
 * @param {string} query
 * @param {{url: string, title: string}[]} results
 * @param {string} [text]
 * @returns {string | null}
 */
export function feedbackUrl(template, query, results, text = reportText(query, results)) {
  if (!/^https?:\/\//i.test(template)) return null;
  const encode = (/** @type {string} */ s) => encodeURIComponent(wellFormed(s));
  return template.replaceAll("{query}", encode(query)).replaceAll("{results}", encode(text));
}
