// @ts-check
/**
 * The reader-facing search bar, injected on every page by sphinx_rag/searchbar.py.
 *
 * Built as a classic (IIFE) script, not a module: Chromium refuses module scripts
 * from file://, and the search must keep working there (keyword only).
 *
 * - pydata-sphinx-theme: takes over the theme's search button and Ctrl+K (this
 *   deferred script runs before the theme's, so its capture listener sees the key
 *   first); the theme's own dialog is left in the page, unused.
 * - other themes: adds a search button to the sidebar (before Sphinx's quick-search
 *   box, which keeps working) or, failing that, the header, or a floating button.
 * - dialog: ARIA combobox + listbox; `/`, Ctrl+K or Cmd+K opens, arrows move,
 *   Enter opens the selected result, Esc closes.
 * - "Ask" (ask.js): when the site or the reader set an LLM endpoint, an Ask button
 *   (and Ctrl/Cmd+Enter) streams an answer from the top results into the dialog's
 *   askSlot; a gear button opens the reader's settings panel.
 * - the index is loaded on first use (focus of the button, a shortcut), by a Web
 *   Worker over http(s), or on the main thread from the same shards over file://.
 *
 * Document text is only ever inserted with textContent / text nodes.
 *
 * Runtime config: data- attributes of this script's tag (data-sphinx-rag = version,
 * data-search-page = Sphinx's search page relative to the site root, data-project = the
 * project name for the LLM prompt). The site root
 * and the asset directory come from this script's URL (<root>/_static/sphinx_rag/searchbar.js).
 */

import { queryTokens, titleParts } from "./highlight.js";
import { renderPassage } from "./passage.js";
import { LocalBackend, WorkerBackend } from "./backend.js";
import { AskPanel } from "./ask.js";
import { h } from "./dom.js";

/** @typedef {import("./backend.js").Result} Result */
/** @typedef {import("./backend.js").Status} Status */

const K = 10;
const KIND_LABELS = /** @type {Record<string, string>} */ ({ api: "API", example: "Example", guide: "Guide" });
const PREFIX = "sphinx-rag";

const thisScript = /** @type {HTMLScriptElement | null} */ (
  document.currentScript || document.querySelector("script[data-sphinx-rag]")
);

/** An inline SVG magnifying glass (no external icon font needed). */
function searchIcon() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", `${PREFIX}-icon`);
  const circle = document.createElementNS(ns, "circle");
  circle.setAttribute("cx", "10.5");
  circle.setAttribute("cy", "10.5");
  circle.setAttribute("r", "6.5");
  const line = document.createElementNS(ns, "path");
  line.setAttribute("d", "M15.5 15.5 L21 21");
  svg.append(circle, line);
  return svg;
}

/**
 * Segments -> text nodes and <mark> elements.
 * @param {HTMLElement} parent
 * @param {import("./highlight.js").Segment[]} segments
 */
function appendSegments(parent, segments) {
  for (const s of segments) parent.append(s.hit ? h("mark", {}, [s.text]) : s.text);
}

function isMac() {
  return /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}

/** @param {EventTarget | null} el */
function isEditable(el) {
  if (!(el instanceof HTMLElement)) return false;
  return el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName);
}

export class SearchDialog {
  /**
   * @param {{assetBase: URL, siteRoot: URL, searchPage: string, project?: string}} options
   */
  constructor({ assetBase, siteRoot, searchPage, project = "" }) {
    this.assetBase = assetBase;
    this.siteRoot = siteRoot;
    this.searchPage = searchPage;
    /** @type {import("./backend.js").Backend | null} */
    this.backend = null;
    this.requestId = 0;
    /** @type {Result[]} */
    this.results = [];
    this.active = -1;
    this.mode = "idle";
    /** Hooks for later integrations (e.g. "Ask"): called with (query, results, mode). */
    /** @type {((query: string, results: Result[], mode: string) => void)[]} */
    this.resultListeners = [];
    this.build();
    this.ask = new AskPanel({ dialog: this, siteRoot, project });
  }

  build() {
    const id = (/** @type {string} */ s) => `${PREFIX}-${s}`;
    this.input = /** @type {HTMLInputElement} */ (
      h("input", {
        id: id("input"),
        class: id("input"),
        type: "text",
        role: "combobox",
        "aria-expanded": "false",
        "aria-controls": id("listbox"),
        "aria-autocomplete": "list",
        "aria-label": "Search the documentation",
        "aria-describedby": id("status"),
        // the long one is cut off on a phone
        placeholder: matchMedia("(max-width: 480px)").matches ? "Search the docs…" : "Search the docs, or ask a question…",
        autocomplete: "off",
        autocapitalize: "off",
        spellcheck: "false",
        enterkeyhint: "search",
      })
    );
    // "Esc" means nothing on a touch screen: there the button shows "Close" (CSS, pointer: coarse)
    this.closeButton = h("button", { type: "button", class: id("close"), "aria-label": "Close search" }, [
      h("span", { class: id("close-key") }, ["Esc"]), h("span", { class: id("close-word") }, ["Close"]),
    ]);
    this.status = h("p", { id: id("status"), class: id("status"), role: "status", "data-mode": "idle" });
    // The "Ask" (local LLM) answer: filled by ask.js, hidden until then.
    this.askSlot = h("section", { class: id("ask"), "aria-label": "Answer", hidden: "" });
    this.listbox = h("ul", { id: id("listbox"), class: id("listbox"), role: "listbox", "aria-label": "Search results" });
    this.empty = h("p", { class: id("empty"), hidden: "" });
    this.fullSearch = /** @type {HTMLAnchorElement} */ (
      h("a", { class: id("fullsearch"), href: new URL(this.searchPage, this.siteRoot).href }, ["Full-text search page"])
    );
    // A link that opens this page with the dialog showing this query (?q=...), to share.
    this.shareLink = /** @type {HTMLAnchorElement} */ (
      h("a", { class: id("share"), href: shareUrl(""), hidden: "" }, ["Link to this search"])
    );
    this.bar = h("div", { class: id("bar") }, [searchIcon(), this.input, this.closeButton]);
    const hints = h("p", { class: id("hints"), "aria-hidden": "true" }, [
      h("kbd", {}, ["↑"]), h("kbd", {}, ["↓"]), " select ", h("kbd", {}, ["Enter"]), " open ",
      h("kbd", {}, ["Esc"]), " close",
    ]);
    this.dialog = /** @type {HTMLDialogElement} */ (
      h("dialog", { class: PREFIX, "aria-label": "Search the documentation" }, [
        h("div", { class: id("panel") }, [
          this.bar,
          this.status,
          this.askSlot,
          this.empty,
          this.listbox,
          h("div", { class: id("footer") }, [hints, this.shareLink, this.fullSearch]),
        ]),
      ])
    );
    document.body.append(this.dialog);

    this.input.addEventListener("input", () => this.search());
    this.input.addEventListener("keydown", (e) => this.onKeydown(e));
    this.closeButton.addEventListener("click", () => this.close());
    // Keys anywhere in the dialog: Esc closes (Sphinx's sphinx_highlight.js cancels Escape on
    // the document, which would stop the dialog's own cancel), arrows move the selection.
    this.dialog.addEventListener("keydown", (e) => {
      if (e.isComposing || e.target === this.input) return; // the input handles its own keys
      if (e.key === "Escape") {
        e.preventDefault();
        this.close();
      } else if ((e.key === "ArrowDown" || e.key === "ArrowUp") && !isEditable(e.target)) {
        this.input.focus();
        this.onKeydown(e);
      }
    });
    this.dialog.addEventListener("cancel", (e) => {
      e.preventDefault(); // Esc: close through close(), the one place that tidies up
      this.close();
    });
    this.dialog.addEventListener("click", (e) => {
      if (e.target === this.dialog) this.close(); // click on the backdrop
    });
    this.listbox.addEventListener("mousemove", (e) => {
      const li = /** @type {HTMLElement} */ (e.target).closest?.("[role=option]");
      if (li) this.setActive(Number(li.getAttribute("data-index")), false);
    });
    this.listbox.addEventListener("click", (e) => {
      const a = /** @type {HTMLElement} */ (e.target).closest?.("a");
      if (a && !(e instanceof MouseEvent && (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0))) {
        this.dialog.close(); // same-page links only change the hash: do not leave the dialog open
      }
    });
  }

  /** Start loading the index (idempotent): on first focus of a trigger, or on open. */
  warmUp() {
    if (this.backend) return;
    const onStatus = (/** @type {Status} */ s) => this.setStatus(s);
    const onResults = (/** @type {number} */ id, /** @type {string} */ mode, /** @type {Result[]} */ results,
      /** @type {boolean | undefined} */ weak) => this.showResults(id, mode, results, Boolean(weak));
    const onSettings = (/** @type {Record<string, any>} */ settings) => this.ask.setSiteSettings(settings);
    if (location.protocol === "file:") {
      this.backend = new LocalBackend({
        base: new URL("index/", this.assetBase).href,
        reason: "Keyword only: opened from file://, semantic search needs http(s)",
        onStatus,
        onResults,
        onSettings,
      });
    } else {
      this.backend = new WorkerBackend({
        workerUrl: new URL("worker.js", this.assetBase).href,
        base: new URL("index/", this.assetBase).href, // sphinx_rag/assets.py ASSET_DIR
        ortBase: this.assetBase.href, // build.mjs puts the ort-wasm files beside worker.js
        threads: globalThis.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1,
        onStatus,
        onResults,
        onSettings,
      });
    }
    this.setStatus({ mode: "loading", message: "Loading the search index…" });
    this.backend.start();
    if (this.input.value.trim()) this.search();
  }

  /** @param {string} [query] */
  open(query) {
    this.warmUp();
    if (!this.dialog.open) this.dialog.showModal();
    if (typeof query === "string" && query && query !== this.input.value) {
      this.input.value = query;
      this.search();
    }
    this.input.focus();
    this.input.select();
  }

  close() {
    if (this.dialog.open) this.dialog.close();
  }

  search() {
    const query = this.input.value.trim();
    const id = ++this.requestId;
    this.fullSearch.href = new URL(
      this.searchPage + (query ? `?q=${encodeURIComponent(query)}` : ""),
      this.siteRoot,
    ).href;
    this.shareLink.href = shareUrl(query);
    this.shareLink.hidden = !query;
    if (!query) {
      this.render([], "");
      return;
    }
    this.backend?.search(id, query, K);
  }

  /** @param {Status} status */
  setStatus(status) {
    this.mode = status.mode;
    this.status.setAttribute("data-mode", status.mode);
    this.status.textContent = status.message;
  }

  /**
   * @param {number} id
   * @param {string} mode
   * @param {Result[]} results
   * @param {boolean} [weak]  only the nearest results, no good match
   */
  showResults(id, mode, results, weak = false) {
    if (id !== this.requestId) return; // stale: a newer query was typed
    this.render(results, this.input.value.trim());
    const query = this.input.value.trim();
    if (weak && results.length) {
      this.empty.hidden = false;
      this.empty.textContent = `No good match for “${query}”. The nearest results:`;
    }
    this.listbox.toggleAttribute("data-weak", weak && results.length > 0);
    this.listbox.setAttribute("data-mode", mode);
    this.listbox.setAttribute("data-query", this.input.value.trim()); // what these results answer
    for (const listener of this.resultListeners) listener(this.input.value.trim(), results, mode);
  }

  /**
   * @param {Result[]} results
   * @param {string} query
   */
  render(results, query) {
    this.results = results;
    this.listbox.replaceChildren();
    const tokens = queryTokens(query);
    results.forEach((r, i) => {
      const kind = KIND_LABELS[r.kind] ? r.kind : "guide";
      const path = h("span", { class: `${PREFIX}-path` });
      titleParts(r.title).forEach((part, j) => {
        if (j) path.append(h("span", { class: `${PREFIX}-sep`, "aria-hidden": "true" }, [" › "]));
        path.append(part); // not highlighted: identifiers would light up part by part
      });
      const text = renderPassage(r, tokens);
      const link = h("a", { href: new URL(r.url, this.siteRoot).href, tabindex: "-1", class: `${PREFIX}-link` }, [
        h("span", { class: `${PREFIX}-head` }, [
          h("span", { class: `${PREFIX}-badge ${PREFIX}-badge--${kind}` }, [KIND_LABELS[kind]]),
          path,
        ]),
        text,
      ]);
      this.listbox.append(
        h("li", {
          id: `${PREFIX}-option-${i}`,
          role: "option",
          "aria-selected": "false",
          class: `${PREFIX}-option`,
          "data-index": String(i),
          "data-id": r.id,
          "data-kind": kind,
        }, [link]),
      );
    });
    this.input.setAttribute("aria-expanded", results.length ? "true" : "false");
    this.empty.hidden = !(query && !results.length && this.mode !== "loading");
    this.empty.textContent = this.empty.hidden ? "" : `No results for “${query}”.`;
    this.active = -1;
    this.setActive(results.length ? 0 : -1, false); // new results: Enter opens the best one
    this.listbox.scrollTop = 0;
  }

  /**
   * @param {number} index
   * @param {boolean} scroll
   */
  setActive(index, scroll) {
    const options = this.listbox.querySelectorAll("[role=option]");
    if (this.active >= 0 && options[this.active]) options[this.active].setAttribute("aria-selected", "false");
    this.active = index;
    const el = options[index];
    if (el) {
      el.setAttribute("aria-selected", "true");
      this.input.setAttribute("aria-activedescendant", el.id);
      if (scroll) el.scrollIntoView({ block: "nearest" });
    } else {
      this.input.removeAttribute("aria-activedescendant");
    }
  }

  /** @param {KeyboardEvent} e */
  onKeydown(e) {
    if (e.isComposing) return;
    const n = this.results.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!n) return;
      const step = e.key === "ArrowDown" ? 1 : -1;
      this.setActive((this.active + step + n) % n, true);
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.ask.ask(); // the "Ask" action
    } else if (e.key === "Enter") {
      e.preventDefault();
      const result = this.results[this.active];
      if (result) {
        const href = new URL(result.url, this.siteRoot).href;
        this.close();
        location.assign(href);
      } else if (this.input.value.trim()) {
        location.assign(this.fullSearch.href); // no result yet: Sphinx's own search
      }
    } else if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      this.close();
    }
  }
}

/**
 * Put a search button on the page (themes other than pydata-sphinx-theme).
 * @param {SearchDialog} dialog
 * @returns {HTMLElement}
 */
function addTrigger(dialog) {
  const shortcut = isMac() ? "⌘K" : "Ctrl+K";
  const button = h("button", {
    type: "button",
    class: `${PREFIX}-trigger`,
    "aria-haspopup": "dialog",
    "aria-keyshortcuts": "Control+K Meta+K /",
  }, [searchIcon(), h("span", { class: `${PREFIX}-trigger-text` }, ["Search"]), h("kbd", {}, [shortcut])]);
  const searchbox = document.getElementById("searchbox"); // basic, alabaster, nature, ...
  const furo = document.querySelector(".sidebar-search-container");
  const rtd = document.querySelector(".wy-side-nav-search [role=search], .wy-side-nav-search form");
  const sidebar = document.querySelector(".sphinxsidebarwrapper, .sphinxsidebar, [role=navigation]");
  if (searchbox?.parentElement) {
    searchbox.before(button);
  } else if (furo || rtd) {
    /** @type {Element} */ (furo || rtd).before(button);
  } else if (sidebar) {
    sidebar.prepend(button);
  } else {
    button.classList.add(`${PREFIX}-trigger--floating`);
    document.body.append(button);
  }
  button.addEventListener("click", () => dialog.open());
  return button;
}

/**
 * This page's URL with `?q=query` (no query: without it): opening it opens the dialog.
 * @param {string} query
 */
function shareUrl(query) {
  const url = new URL(location.href);
  url.hash = "";
  if (query) url.searchParams.set("q", query);
  else url.searchParams.delete("q");
  return url.href;
}

function main() {
  if (!thisScript?.src) return;
  const assetBase = new URL(".", thisScript.src);
  const siteRoot = new URL("../../", assetBase);
  const dialog = new SearchDialog({
    assetBase,
    siteRoot,
    searchPage: thisScript.dataset.searchPage || "search.html",
    project: thisScript.dataset.project || "",
  });

  // pydata-sphinx-theme (and themes built on it): its buttons, our dialog.
  const themeButtons = document.querySelectorAll(".search-button__button");
  const triggers = themeButtons.length ? Array.from(themeButtons) : [addTrigger(dialog)];
  for (const t of triggers) {
    t.addEventListener("focus", () => dialog.warmUp(), { once: true });
    t.addEventListener("pointerdown", () => dialog.warmUp(), { once: true });
  }
  window.addEventListener("click", (e) => {
    const target = /** @type {Element} */ (e.target);
    if (themeButtons.length && target.closest?.(".search-button__button")) {
      e.preventDefault();
      e.stopPropagation(); // the theme set `onclick` on the button: keep it from opening its dialog
      dialog.open();
    }
  }, true);

  // Shortcuts, in the capture phase of window, registered before the theme's.
  window.addEventListener("keydown", (e) => {
    if (e.isComposing || e.altKey || e.shiftKey) return;
    const modK = (e.ctrlKey || e.metaKey) && /^k$/i.test(e.key);
    const slash = e.key === "/" && !e.ctrlKey && !e.metaKey && !isEditable(e.target);
    if (!modK && !slash) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    dialog.open();
  }, true);

  /** @type {any} */ (window).sphinxRag = { dialog, ask: dialog.ask };

  // A shared link (?q=...) opens the dialog with its query; Sphinx's own search page
  // uses ?q= for itself and keeps it.
  const shared = new URLSearchParams(location.search).get("q");
  const onSearchPage = new URL(thisScript.dataset.searchPage || "search.html", siteRoot).pathname === location.pathname;
  if (shared && shared.trim() && !onSearchPage) dialog.open(shared);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
