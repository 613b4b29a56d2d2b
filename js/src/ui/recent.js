// @ts-check
/**
 * Recent searches: the last few queries the reader opened a result for, shown while
 * the search box is empty. Kept in this browser's localStorage, one list per site (the
 * key holds the site root's path: two doc sets on one host keep theirs apart), capped,
 * clearable. When the browser refuses storage nothing is kept, not even in memory.
 * @module recent
 */

import { usableStorage } from "./storage.js";
import { wellFormed } from "./well_formed.js";

export const RECENT_MAX = 6;

/**
 * The list with `query` first (once), at most `cap` long.
 * @param {string[]} list
 * @param {string} query
 * @param {number} [cap]
 */
export function remember(list, query, cap = RECENT_MAX) {
  const q = wellFormed(query).trim();
  if (!q) return list;
  return [q, ...list.filter((x) => x !== q)].slice(0, cap);
}

export class RecentSearches {
  /** @param {URL} siteRoot */
  constructor(siteRoot) {
    this.key = `sphinx-rag-recent:${siteRoot.pathname}`;
    this.store = usableStorage("localStorage");
  }

  /** @returns {string[]} newest first */
  list() {
    try {
      const value = JSON.parse(this.store?.getItem(this.key) || "[]");
      return Array.isArray(value)
        ? value.filter((q) => typeof q === "string" && q.trim()).map(wellFormed).slice(0, RECENT_MAX)
        : [];
    } catch {
      return []; // not ours, or damaged: start again
    }
  }

  /** @param {string} query */
  add(query) {
    this.write(remember(this.list(), query));
  }

  clear() {
    try {
      this.store?.removeItem(this.key);
    } catch {
      // nothing was stored
    }
  }

  /** @param {string[]} list */
  write(list) {
    try {
      this.store?.setItem(this.key, JSON.stringify(list));
    } catch {
      // full or refused: not remembered
    }
  }
}
