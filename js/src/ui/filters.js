// @ts-check
/**
 * Kind filters: chips "All / API / Examples / Guide" above the results, only for the
 * kinds the current results have. A chip filters the results already shown (no new
 * query). The choice is kept for the session (sessionStorage) and applies to later
 * queries whenever they have results of that kind (otherwise they show all).
 * Keyboard: Tab reaches the chips, Left/Right move between them, Enter/Space press.
 * @module filters
 */

import { arrowKeysWalk, h } from "./dom.js";
import { KINDS } from "./results.js";
import { usableStorage } from "./storage.js";

const PREFIX = "sphinx-rag";
const KEY = "sphinx-rag-kind";
const LABELS = /** @type {Record<string, string>} */ ({ all: "All", api: "API", example: "Examples", guide: "Guide" });

export class KindFilter {
  /** @param {(kind: string) => void} onChange  called after the reader picks a chip */
  constructor(onChange) {
    this.onChange = onChange;
    this.store = usableStorage("sessionStorage");
    /** The reader's choice ("all" until they pick one). */
    this.preferred = this.store?.getItem(KEY) || "all";
    if (this.preferred !== "all" && !KINDS.includes(this.preferred)) this.preferred = "all";
    /** What the current results are filtered by (the preference, if they have that kind). */
    this.active = "all";
    this.element = h("div", { class: `${PREFIX}-filters`, role: "group", "aria-label": "Show results of kind", hidden: "" });
    this.element.addEventListener("click", (e) => {
      const chip = /** @type {HTMLElement} */ (e.target).closest?.("button[data-kind]");
      if (chip) this.pick(chip.getAttribute("data-kind") || "all");
    });
    arrowKeysWalk(this.element);
  }

  /**
   * Chips for the kinds these results have; returns the kind to filter them by.
   * @param {Record<string, number>} counts  entries per kind, and "all"
   */
  update(counts) {
    this.active = counts[this.preferred] ? this.preferred : "all";
    this.element.replaceChildren();
    this.element.hidden = !counts.all;
    if (!counts.all) return this.active;
    for (const kind of ["all", ...KINDS]) {
      if (!counts[kind]) continue;
      this.element.append(h("button", {
        type: "button",
        class: `${PREFIX}-chip`,
        "data-kind": kind,
        "aria-pressed": String(kind === this.active),
      }, [LABELS[kind], h("span", { class: `${PREFIX}-chip-count` }, [String(counts[kind])])]));
    }
    return this.active;
  }

  /** @param {string} kind */
  pick(kind) {
    this.preferred = kind;
    this.active = kind;
    try {
      this.store?.setItem(KEY, kind);
    } catch {
      // quota or a storage that went away: the choice lasts until the page closes
    }
    for (const chip of this.element.querySelectorAll("button[data-kind]")) {
      chip.setAttribute("aria-pressed", String(chip.getAttribute("data-kind") === kind));
    }
    this.onChange(kind);
  }
}
