// @ts-check
/**
 * Text made well-formed at the dialog's boundaries: a lone surrogate (half of an emoji,
 * cut by a paste, a maxlength or an IME) becomes U+FFFD. `encodeURIComponent` throws
 * "URI malformed" on one, and the URL, the worker, localStorage and the LLM server are
 * better off without them. The query is made well-formed once, where it is read.
 * @module well_formed
 */

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `String.prototype.toWellFormed` where the browser has it, else the same by a regex.
 * @param {unknown} text
 * @returns {string}
 */
export function wellFormed(text) {
  const s = String(text ?? "");
  const native = /** @type {{toWellFormed?: () => string}} */ (/** @type {unknown} */ (s)).toWellFormed;
  return typeof native === "function" ? native.call(s) : s.replace(LONE_SURROGATE, "\uFFFD");
}

/** The regex fallback alone (tests compare it with the native one). @param {string} text */
export function wellFormedFallback(text) {
  return text.replace(LONE_SURROGATE, "\uFFFD");
}
