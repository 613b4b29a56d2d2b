// @ts-check
/**
 * The LLM settings an answer uses: the site's (manifest settings.llm, written by Python's
 * `browser_settings()`) under the caller's overrides, over the defaults.
 *
 * mergeSettings is the rule of Python's `sphinx_rag.llm.settings.merge_settings`; both
 * must give tests/fixtures/llm_settings.json (checked by js/test/llm_settings.test.js and
 * tests/test_llm.py).
 *
 * @module llm_settings
 */

import { DEFAULT_PROMPT } from './prompt.js';

/**
 * @typedef {{endpoint: string, model: string, max_context_tokens: number, temperature: number,
 *            timeout: number, max_answer_chars: number, multi_query: boolean, filter_passages: boolean,
 *            prompt: string, project: string}} LLMSettings
 *   what Python's `browser_settings()` emits and mergeSettings returns (timeout in seconds)
 */

/** Python's `LLM_DEFAULTS` (timeout in seconds), without endpoint and model. */
export const DEFAULTS = Object.freeze({
  max_context_tokens: 4096, temperature: 0.1, timeout: 60, max_answer_chars: 20000, multi_query: false,
  filter_passages: false, prompt: DEFAULT_PROMPT,
});

/** The {project} of the prompt when nobody names it (Python's `DEFAULT_PROJECT`). */
export const DEFAULT_PROJECT = 'documented';

/** @type {LLMSettings} */
const SETTINGS_DEFAULTS = Object.freeze({ endpoint: '', model: '', ...DEFAULTS, project: DEFAULT_PROJECT });

/** @param {unknown} v @returns {v is number} a finite number (never a boolean) */
const isNumber = (v) => typeof v === 'number' && Number.isFinite(v);

/**
 * key -> the usable form of a value, or null when it is of the wrong type or empty.
 * @type {{[K in keyof LLMSettings]: (v: unknown) => LLMSettings[K] | null}}
 */
const USABLE = {
  endpoint: (v) => (typeof v === 'string' && v.trim() ? v : null),
  model: (v) => (typeof v === 'string' && v ? v : null),
  max_context_tokens: (v) => (isNumber(v) ? Math.trunc(v) || 0 : null), // truncated, as Python's int(); no -0
  temperature: (v) => (isNumber(v) ? v : null),
  timeout: (v) => (isNumber(v) && v > 0 ? v : null),
  max_answer_chars: (v) => (isNumber(v) && Math.trunc(v) >= 1 ? Math.trunc(v) : null),
  multi_query: (v) => (typeof v === 'boolean' ? v : null),
  filter_passages: (v) => (typeof v === 'boolean' ? v : null),
  prompt: (v) => (typeof v === 'string' && v ? v : null),
  project: (v) => (typeof v === 'string' && v ? v : null),
};

/**
 * The settings an answer uses, from `layers` (objects, highest priority first).
 *
 * For each key, the first layer that sets it (a value other than null/undefined) decides:
 * its value if usable, else the default (not a lower layer: an empty override means
 * "none"). Usable: endpoint a non-blank string; model, prompt, project a non-empty string;
 * max_context_tokens a finite number (truncated to an integer); temperature a finite
 * number; timeout a number > 0; max_answer_chars a finite number that is at least 1 once
 * truncated to an integer; multi_query, filter_passages a boolean. Null when there is no
 * endpoint (the LLM is off).
 * @param {unknown[]} layers
 * @returns {LLMSettings | null}
 */
export function mergeSettings(layers) {
  const objects = /** @type {Record<string, unknown>[]} */ (
    layers.filter((l) => l !== null && typeof l === 'object' && !Array.isArray(l)));
  const out = /** @type {Record<string, unknown>} */ ({});
  for (const [key, usable] of Object.entries(USABLE)) {
    const layer = objects.find((l) => l[key] !== undefined && l[key] !== null);
    const value = layer ? /** @type {(v: unknown) => unknown} */ (usable)(layer[key]) : null;
    out[key] = value ?? SETTINGS_DEFAULTS[/** @type {keyof LLMSettings} */ (key)];
  }
  return out.endpoint ? /** @type {LLMSettings} */ (out) : null;
}
