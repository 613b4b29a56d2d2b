// @ts-check
/**
 * Whether and when the full semantic model (the `both` tier's 23 MB model and
 * onnxruntime's 14 MB runtime) downloads, decided on the page and told to the worker:
 * Chromium's Web Workers do not see Save-Data (a worker's navigator.connection.saveData
 * stays false when the page's is true).
 *
 * The reader's choice in the settings panel, kept per site in localStorage:
 * - "auto" (the default): on demand. Nothing of the model is fetched when the dialog
 *   opens; it downloads once a query wants the semantic tier (wantsModel, below) and the
 *   fast tier (the static encoder, or keyword search on a site without one) has answered
 *   it. Never when the reader asked to save data (navigator.connection.saveData), the
 *   connection is slow (effectiveType slow-2g, 2g or 3g: Chromium's 3g is a round trip of
 *   270 ms or more, where 37 MB take minutes and slow every page the reader opens
 *   meanwhile), or the device reports under 2 GB of memory (navigator.deviceMemory 0.25
 *   to 1: the model takes about 200 MB in the worker);
 * - "always": download as soon as the search starts (after its first answer, or a
 *   second), whatever the browser says;
 * - "never": no model; the site's static encoder (if any) answers semantic queries.
 * Once downloaded, the model answers every later query of the page.
 *
 * A query wants the semantic tier (wantsModel) when the fast tier's answer is not enough
 * for it, which keyword search and the static encoder cannot tell apart from a good one:
 * - it found nothing, or only a weak match (retrieve.js weakMatch: no chunk holds half of
 *   its words exactly, a typo's near term not counting, and no chunk is near enough);
 * - the static encoder knows none of its words (it has no vector for it);
 * - it is a question: it ends with "?", or starts with a question word (how, what, why,
 *   can, does, ...);
 * - it has several (3 or more) words of prose: words that are neither stop words nor
 *   code (identifiers such as SimpleImputer or random_state, dotted paths, words with
 *   digits).
 * A name or two that keyword search matched (`SimpleImputer`, `train_test_split
 * random_state`, `imputer strategy`) does not: the keyword tier pins what it names, and
 * the model would not change the first results. A typed query decides only once it has
 * settled (worker.js, settle.js): a pause in the middle of a word is not a query.
 *
 * Readers who save data or are on a slow connection are also "frugal" (worker.js): a
 * query they type fetches nothing until they pause, and the static encoder's queries
 * read a quarter of the clusters.
 * @module model_policy
 */

import { identifierTokens, isCjk, STOP_WORDS } from "../search/lexical.js";
import { usableStorage } from "./storage.js";

/** @typedef {"auto" | "always" | "never"} ModelChoice */
/** @type {ModelChoice[]} */
export const MODEL_CHOICES = ["auto", "always", "never"];
/** navigator.connection.effectiveType values that hold the model back. */
export const SLOW_CONNECTIONS = ["slow-2g", "2g", "3g"];
/** navigator.deviceMemory (GB) below which the model is held back. */
export const LOW_MEMORY_GB = 2;

/**
 * @typedef {{saveData?: boolean, effectiveType?: string}} ConnectionLike
 * @typedef {{connection?: ConnectionLike | null, deviceMemory?: number}} NavigatorLike
 * @typedef {{load: boolean, drop: boolean, why: string, onDemand: boolean}} ModelPlan
 *   load: download (or keep) the model; drop: release a loaded model (the reader said
 *   never); why: the reason it is not loaded, as the status line says it; onDemand: only
 *   once a query wants it (wantsModel), not when the search starts
 */

/**
 * Why an automatic choice holds the model back ("data saver on", ...), or "" when nothing does.
 * @param {NavigatorLike} nav
 */
export function holdReason(nav) {
  const connection = nav.connection;
  if (connection?.saveData) return "data saver on";
  if (connection && SLOW_CONNECTIONS.includes(String(connection.effectiveType))) {
    return `slow connection: ${connection.effectiveType}`;
  }
  const memory = nav.deviceMemory;
  if (typeof memory === "number" && memory > 0 && memory < LOW_MEMORY_GB) return `little memory: ${memory} GB`;
  return "";
}

/**
 * Whether queries should read as few bytes as they can: Save-Data or a slow connection.
 * @param {NavigatorLike} nav
 */
export function frugal(nav) {
  const connection = nav.connection;
  return Boolean(connection?.saveData || (connection && SLOW_CONNECTIONS.includes(String(connection.effectiveType))));
}

/**
 * What to do with the model, given the reader's choice and what the browser reports.
 * @param {ModelChoice} choice
 * @param {NavigatorLike} nav
 * @returns {ModelPlan}
 */
export function modelPlan(choice, nav) {
  if (choice === "never") return { load: false, drop: true, why: "off in settings", onDemand: false };
  if (choice === "always") return { load: true, drop: false, why: "", onDemand: false };
  const why = holdReason(nav);
  return { load: !why, drop: false, why, onDemand: true };
}

/** First words that make a query a question (lowercase). */
export const QUESTION_WORDS = new Set(
  `how what why when where which who whom whose can could should would does do did is are was were
  will shall explain difference`.split(/\s+/),
);
/** Words of prose from which a query is a sentence, not a name. */
export const SEVERAL_WORDS = 3;
/** Characters that make a word code: a dotted path, a call, an argument, an attribute. */
const CODE_MARKS = /[._()[\]=:<>/\\`]/;

/**
 * The query's words of prose, lowercase: not stop words, not code (identifierTokens: an
 * identifier made of parts, a word with digits; or a word with code punctuation). A run
 * of CJK characters (written without spaces) counts as one word per two characters.
 * @param {string} query
 * @returns {string[]}
 */
export function proseWords(query) {
  /** @type {string[]} */
  const out = [];
  for (const word of query.normalize("NFKC").split(/\s+/)) {
    if (!word || CODE_MARKS.test(word.replace(/^\p{P}+|\p{P}+$/gu, "")) || identifierTokens(word).length) continue;
    const cjk = [...word].filter((ch) => isCjk(/** @type {number} */ (ch.codePointAt(0)))).length;
    if (cjk) {
      for (let i = 0; i < Math.ceil(cjk / 2); i++) out.push(word);
      continue;
    }
    const plain = word.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
    if (plain.length > 1 && !STOP_WORDS.has(plain)) out.push(plain);
  }
  return out;
}

/**
 * Whether the query is a question: it ends with a question mark, or its first word is a
 * question word.
 * @param {string} query
 */
export function isQuestion(query) {
  const text = query.trim();
  if (/[?\uff1f\u061f]$/.test(text)) return true;
  const first = text.split(/\s+/, 1)[0].toLowerCase().replace(/[^\p{L}']+/gu, "").replace(/'.*$/, "");
  return QUESTION_WORDS.has(first);
}

/**
 * Whether a query wants the semantic model, judged from the fast tier's answer (the module
 * docstring says why each rule).
 * @param {string} query
 * @param {{found: number, weak: boolean, unread: boolean}} answer  found: how many results;
 *   weak: only the nearest, no good match; unread: the static encoder knows none of its words
 */
export function wantsModel(query, { found, weak, unread }) {
  if (!found || weak || unread) return true;
  return isQuestion(query) || proseWords(query).length >= SEVERAL_WORDS;
}

/** The reader's choice for one site, in this browser's localStorage (nothing kept when it refuses). */
export class ModelChoiceStore {
  /** @param {URL} siteRoot @param {Storage | null} [storage] */
  constructor(siteRoot, storage = usableStorage("localStorage")) {
    this.key = `sphinx-rag-model:${siteRoot.pathname}`;
    this.storage = storage;
  }

  /** @returns {ModelChoice} */
  get() {
    let value = null;
    try {
      value = this.storage?.getItem(this.key);
    } catch {
      // refused: the default
    }
    return MODEL_CHOICES.includes(/** @type {ModelChoice} */ (value)) ? /** @type {ModelChoice} */ (value) : "auto";
  }

  /**
   * @param {ModelChoice} choice
   * @returns {boolean} whether it was stored (it applies to this page either way)
   */
  set(choice) {
    try {
      if (!this.storage) return false;
      if (choice === "auto") this.storage.removeItem(this.key);
      else this.storage.setItem(this.key, choice);
      return true;
    } catch {
      return false;
    }
  }
}
