// @ts-check
/**
 * Whether the full semantic model (the `both` tier's 23 MB model and onnxruntime's 14 MB
 * runtime) may download in the background, decided on the page and told to the worker:
 * Chromium's Web Workers do not see Save-Data (a worker's navigator.connection.saveData
 * stays false when the page's is true).
 *
 * The reader's choice in the settings panel, kept per site in localStorage:
 * - "auto" (the default): download unless the reader asked to save data
 *   (navigator.connection.saveData), the connection is slow (effectiveType slow-2g, 2g
 *   or 3g: Chromium's 3g is a round trip of 270 ms or more, where 37 MB take minutes and
 *   slow every page the reader opens meanwhile), or the device reports under 2 GB of
 *   memory (navigator.deviceMemory 0.25 to 1: the model takes about 200 MB in the worker);
 * - "always": download whatever the browser says;
 * - "never": no model; the site's static encoder (if any) answers semantic queries.
 *
 * Readers who save data or are on a slow connection are also "frugal" (worker.js): a
 * query they type fetches nothing until they pause, and the static encoder's queries
 * read a quarter of the clusters.
 * @module model_policy
 */

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
 * @typedef {{load: boolean, drop: boolean, why: string}} ModelPlan
 *   load: download (or keep) the model; drop: release a loaded model (the reader said
 *   never); why: the reason it is not loaded, as the status line says it
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
  if (choice === "never") return { load: false, drop: true, why: "off in settings" };
  if (choice === "always") return { load: true, drop: false, why: "" };
  const why = holdReason(nav);
  return { load: !why, drop: false, why };
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
