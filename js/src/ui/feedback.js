// @ts-check
/**
 * "Report a bad result": an opt-in link (sphinx_rag_feedback_url, the script tag's
 * data-feedback-url) to a URL template, e.g. a new-issue form, prefilled with the query
 * and the results shown. The page itself sends nothing: the reader lands on the form and
 * decides. The text ends with a golden-set entry (sphinx_rag/golden.py) for the maintainer
 * to complete with the page that should have come first and paste into the golden set.
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
  lines.push("", "The page that should have come first: ", "",
    "Golden-set entry (sphinx-rag golden add, or paste into the golden set):",
    JSON.stringify({ query, url: "PAGE.html#ANCHOR", rank: 3 }));
  return lines.join("\n");
}

/**
 * The template with {query} and {results} filled in (URL-encoded; well-formed first:
 * a lone surrogate would make encodeURIComponent throw). Null for a template that is
 * not http(s).
 * @param {string} template
 * @param {string} query
 * @param {{url: string, title: string}[]} results
 * @returns {string | null}
 */
export function feedbackUrl(template, query, results) {
  if (!/^https?:\/\//i.test(template)) return null;
  const encode = (/** @type {string} */ s) => encodeURIComponent(wellFormed(s));
  return template.replaceAll("{query}", encode(query)).replaceAll("{results}", encode(reportText(query, results)));
}
