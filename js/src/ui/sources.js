// @ts-check
/**
 * The source filter of a federated search (sphinx_rag_federation): a chip per site, this
 * site first, beside the kind filters. A pressed chip's site is searched, the others are
 * not: a site turned on is read from then on (nothing of it is fetched before), a site
 * turned off stops being asked. The reader's choice is kept in this browser's
 * localStorage, per site (the key holds the site root's path, as recent.js does); when
 * the browser refuses storage it lasts until the page closes. At least one site stays on.
 *
 * Each result of a federated search names its site with a chip (`chip`); a site that
 * cannot be searched, or only by keyword, says why in one line under the status line.
 * Keyboard: Tab reaches the chips, Left/Right move between them, Enter/Space press.
 * @module sources
 */

import { arrowKeysWalk, h } from "./dom.js";
import { usableStorage } from "./storage.js";

const PREFIX = "sphinx-rag";
/** The home site's name in the reader's choices and the worker's protocol. */
export const HOME = "";

/** @typedef {import("../worker/federation.js").SiteStatus} SiteStatus */

/**
 * The reader's choices read back from storage: {name: on} with boolean values only.
 * @param {string | null} text
 * @returns {Record<string, boolean>}
 */
export function parseChoices(text) {
  try {
    const value = JSON.parse(text || "{}");
    if (!value || typeof value !== "object" || Array.isArray(value)) return {};
    return Object.fromEntries(Object.entries(value).filter(([, on]) => typeof on === "boolean"));
  } catch {
    return {}; // not ours, or damaged: the site's defaults
  }
}

export class SourceFilter {
  /**
   * @param {{siteRoot: URL, homeLabel: string, onChange: (choices: Record<string, boolean>) => void}} options
   *   homeLabel: this site's chip (the project's name)
   */
  constructor({ siteRoot, homeLabel, onChange }) {
    this.key = `sphinx-rag-sources:${siteRoot.pathname}`;
    this.store = usableStorage("localStorage");
    this.homeLabel = homeLabel || "This site";
    this.onChange = onChange;
    /** @type {Record<string, boolean>} */
    this.choices = parseChoices(this.read());
    /** @type {SiteStatus[]} the federated sites as the worker last described them */
    this.sites = [];
    this.element = h("div", { class: `${PREFIX}-sources`, role: "group", "aria-label": "Search these sites", hidden: "" });
    this.lines = h("ul", { class: `${PREFIX}-source-lines`, "aria-live": "polite", hidden: "" });
    this.element.addEventListener("click", (e) => {
      const chip = /** @type {HTMLElement} */ (e.target).closest?.("button[data-source]");
      if (chip) this.toggle(chip.getAttribute("data-source") ?? HOME);
    });
    arrowKeysWalk(this.element);
  }

  /** @returns {string | null} */
  read() {
    try {
      return this.store?.getItem(this.key) ?? null;
    } catch {
      return null;
    }
  }

  /** Whether the search is federated (the site names other sites). */
  get federated() {
    return this.sites.length > 0;
  }

  /** @param {string} name */
  isOn(name) {
    if (name === HOME) return this.choices[HOME] !== false || !this.sites.some((s) => s.enabled);
    return Boolean(this.sites.find((s) => s.name === name)?.enabled);
  }

  /**
   * The worker's description of the sites: chips and status lines drawn again.
   * @param {SiteStatus[]} sites
   */
  update(sites) {
    this.sites = sites;
    this.render();
  }

  /**
   * The number of results each site has among those shown (on its chip).
   * @param {Array<{source?: string}>} results
   */
  count(results) {
    /** @type {Record<string, number>} */
    this.counts = {};
    for (const r of results) this.counts[r.source ?? HOME] = (this.counts[r.source ?? HOME] || 0) + 1;
    this.render();
  }

  render() {
    const focused = /** @type {HTMLElement | null} */ (document.activeElement)?.getAttribute?.("data-source");
    this.element.hidden = !this.federated;
    this.element.replaceChildren();
    this.lines.replaceChildren();
    if (!this.federated) {
      this.lines.hidden = true;
      return;
    }
    const all = [{ name: HOME, label: this.homeLabel, state: "", message: "" },
      ...this.sites.map((s) => ({ name: s.name, label: s.name, state: s.state, message: s.message }))];
    for (const site of all) {
      const on = this.isOn(site.name);
      const n = on ? this.counts?.[site.name] : undefined;
      const chip = h("button", {
        type: "button",
        class: `${PREFIX}-chip ${PREFIX}-source-chip`,
        "data-source": site.name,
        "data-state": site.state || "home",
        "aria-pressed": String(on),
        title: site.message || (site.name === HOME ? "This site" : site.state === "off" ? "Not searched: press to search it too" : ""),
      }, [site.label, ...(n ? [h("span", { class: `${PREFIX}-chip-count` }, [String(n)])] : [])]);
      this.element.append(chip);
      if (focused === site.name) chip.focus();
      if (on && site.message) {
        this.lines.append(h("li", { "data-source": site.name, "data-state": site.state }, [`${site.label}: ${site.message}`]));
      }
    }
    this.lines.hidden = !this.lines.childElementCount;
  }

  /** @param {string} name */
  toggle(name) {
    const on = !this.isOn(name);
    const others = this.sites.filter((s) => s.name !== name && s.enabled).length + (name !== HOME && this.isOn(HOME) ? 1 : 0);
    if (!on && others === 0) return; // the last site searched stays on
    this.choices = { ...this.choices, [name]: on };
    if (name !== HOME) {
      this.sites = this.sites.map((s) => (s.name === name ? { ...s, enabled: on, state: on ? "waiting" : "off", message: "" } : s));
    }
    try {
      this.store?.setItem(this.key, JSON.stringify(this.choices));
    } catch {
      // full or refused: the choice lasts until the page closes
    }
    this.render();
    this.onChange(this.choices);
  }

  /**
   * The chip naming a result's site (null when the search is not federated).
   * @param {{source?: string}} result
   * @returns {HTMLElement | null}
   */
  chip(result) {
    if (!this.federated) return null;
    const name = result.source ?? HOME;
    return h("span", { class: `${PREFIX}-source`, "data-source": name }, [name === HOME ? this.homeLabel : name]);
  }
}
