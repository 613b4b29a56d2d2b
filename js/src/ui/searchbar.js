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
 * - the theme's own search box (alabaster, furo, sphinx_rtd_theme, ...) opens the dialog
 *   (theme.js); with data-theme-search="both", or a theme without one, a search button
 *   is added instead (to the sidebar, else a floating button).
 * - dialog: ARIA combobox + grouped listbox (results.js: one group per page); `/`,
 *   Ctrl+K or Cmd+K opens, arrows move, PageUp/PageDown jump between pages, Enter opens
 *   the selected result, Esc closes. Kind chips filter the results (filters.js); an
 *   empty box lists recent searches (recent.js) and the site's suggested questions
 *   (suggestions.js). With sphinx_rag_federation, site chips choose the sites searched
 *   and each result names its site (sources.js). Colours follow the theme's switch. With data-feedback-url, a
 *   "Report a bad result" link opens a prefilled form (feedback.js).
 * - "Ask" (ask.js): when the site or the reader set an LLM endpoint, an Ask button
 *   (and Ctrl/Cmd+Enter) streams an answer from the top results into the dialog's
 *   askSlot; a gear button opens the reader's settings panel, which also holds
 *   "Semantic model: automatic / always / never" (model_setting.js, model_policy.js:
 *   whether the worker may download the full model, decided here from the reader's
 *   choice, Save-Data, the connection and the device memory).
 * - the index is loaded on first use (focus of the button, a shortcut), by a Web
 *   Worker over http(s), or on the main thread from the same shards over file://.
 *
 * Document text is only ever inserted with textContent / text nodes.
 *
 * Runtime config: data- attributes of this script's tag (data-sphinx-rag = version,
 * data-search-page = Sphinx's search page relative to the site root, data-project = the
 * project name for the LLM prompt, data-theme-search = "replace" | "both",
 * data-feedback-url = sphinx_rag_feedback_url's template, if set). The site root
 * and the asset directory come from this script's URL (<root>/_static/sphinx_rag/searchbar.js).
 */

import { identifierTokens } from "../search/lexical.js";
import { queryTokens } from "./highlight.js";
import { renderPassage } from "./passage.js";
import { LocalBackend, WorkerBackend } from "./backend.js";
import { AskPanel } from "./ask.js";
import { h } from "./dom.js";
import { countText, filterGroups, groupResults, kindCounts, renderGroups } from "./results.js";
import { KindFilter } from "./filters.js";
import { SourceFilter } from "./sources.js";
import { RecentSearches } from "./recent.js";
import { suggestedQuestions, suggestionGroup } from "./suggestions.js";
import { feedbackUrl } from "./feedback.js";
import { addSearchButton, followColorScheme, takeOverSearchBox, themeSearchInputs, topClearOfBoxes } from "./theme.js";
import { historyIcon, searchIcon } from "./icons.js";
import { wellFormed } from "./well_formed.js";
import { ModelChoiceStore, frugal, modelPlan } from "./model_policy.js";
import { ModelSetting } from "./model_setting.js";
import { registerWebMcp } from "./webmcp.js";
import { addMarkdownLink } from "./markdown_link.js";

/** @typedef {import("./backend.js").Result} Result */
/** @typedef {import("./backend.js").Status} Status */

const K = 10;
const PREFIX = "sphinx-rag";

const thisScript = /** @type {HTMLScriptElement | null} */ (
  document.currentScript || document.querySelector("script[data-sphinx-rag]")
);


/**
 * The passage of one result, below its title path: the one function that says how a
 * passage body looks.
 * @param {Result} result
 * @param {Set<string>} tokens  the query's tokens, highlighted
 * @returns {HTMLElement}
 */
function passageBody(result, tokens) {
  return renderPassage(result, tokens); // ui/passage.js: the display form, code kept as code
}

/**
 * Whether an input event comes from typing (a keystroke, a deletion, a composed character),
 * not a paste or a drop: the worker lets a typed query settle before fetching its clusters.
 * @param {Event} e
 */
function isTyping(e) {
  const type = /** @type {InputEvent} */ (e).inputType;
  return typeof type === "string" && type !== "" && type !== "insertFromPaste" && type !== "insertFromDrop";
}

/** @param {EventTarget | null} el */
function isEditable(el) {
  if (!(el instanceof HTMLElement)) return false;
  return el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName);
}

export class SearchDialog {
  /**
   * @param {{assetBase: URL, siteRoot: URL, searchPage: string, project?: string, feedback?: string}} options
   *   feedback: the "Report a bad result" URL template ("": no link)
   */
  constructor({ assetBase, siteRoot, searchPage, project = "", feedback = "" }) {
    this.assetBase = assetBase;
    this.feedback = feedback;
    /** The site's suggested questions (manifest settings.suggestions), shown in the empty box. @type {string[]} */
    this.suggested = [];
    /** The theme's own search boxes, which the open dialog must not cover (main() sets them). @type {() => Element[]} */
    this.themeBoxes = () => [];
    this.siteRoot = siteRoot;
    this.searchPage = searchPage;
    /** @type {import("./backend.js").Backend | null} */
    this.backend = null;
    this.requestId = 0;
    /** The request whose results are shown: results of older ones are dropped, newer ones shown as they come. */
    this.shownId = 0;
    /** @type {Map<number, string>} request id -> its query, until newer results are shown */
    this.queries = new Map();
    /** The ranked results shown (the backend's order; Ask reads them). @type {Result[]} */
    this.results = [];
    /** The query those results answer. */
    this.query = "";
    /** The listbox's entries in visual order (option i opens entries[i]). @type {import("./results.js").Entry[]} */
    this.entries = [];
    this.active = -1;
    /** The reader moved in the results with the keyboard (a reranked order is not swapped in then). */
    this.navigated = false;
    /** The pointer is over the results. */
    this.pointerInList = false;
    /** A reranked order waiting for the pointer to leave the list. @type {{id: number, mode: string, results: Result[], weak: boolean} | null} */
    this.heldRerank = null;
    this.mode = "idle";
    this.closing = false;
    /** Hooks for later integrations (e.g. "Ask"): called with (query, results, mode), not for partial results. */
    /** @type {((query: string, results: Result[], mode: string) => void)[]} */
    this.resultListeners = [];
    this.recent = new RecentSearches(siteRoot);
    this.filter = new KindFilter(() => this.renderResults(false));
    this.sources = new SourceFilter({ siteRoot, homeLabel: project, onChange: (choices) => this.backend?.sources(choices) });
    this.build();
    this.ask = new AskPanel({ dialog: this, siteRoot, project });
    this.modelChoice = new ModelChoiceStore(siteRoot);
    this.modelSetting = new ModelSetting({ onChange: (choice) => this.setModelChoice(choice) });
    this.ask.addSettingsSection(this.modelSetting.element);
    this.showModelChoice();
  }

  /** What the reader's model choice means in this browser now (model_policy.js). */
  modelPlan() {
    return modelPlan(this.modelChoice.get(), /** @type {any} */ (navigator));
  }

  showModelChoice() {
    this.modelSetting.show(this.modelChoice.get(), this.modelPlan(), this.modelChoice.storage !== null);
  }

  /**
   * The reader chose in the settings panel: kept for this site, applied at once.
   * @param {import("./model_policy.js").ModelChoice} choice
   */
  setModelChoice(choice) {
    this.modelChoice.set(choice);
    this.backend?.setModel(this.modelPlan());
    this.showModelChoice();
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
    this.count = h("p", { id: id("count"), class: id("count") });
    this.clearRecent = h("button", { type: "button", class: id("clear-recent"), hidden: "" }, ["Clear recent searches"]);
    this.toolbar = h("div", { class: id("toolbar") }, [this.filter.element, this.count, this.clearRecent]);
    this.listbox = h("div", {
      id: id("listbox"), class: id("listbox"), role: "listbox", "aria-label": "Search results", "aria-describedby": id("count"),
    });
    this.empty = h("p", { class: id("empty"), hidden: "" });
    this.fullSearch = /** @type {HTMLAnchorElement} */ (
      h("a", { class: id("fullsearch"), href: new URL(this.searchPage, this.siteRoot).href }, ["Full-text search page"])
    );
    // A link that opens this page with the dialog showing this query (?q=...), to share.
    this.shareLink = /** @type {HTMLAnchorElement} */ (
      h("a", { class: id("share"), href: shareUrl(""), hidden: "" }, ["Link to this search"])
    );
    // "Report a bad result" (sphinx_rag_feedback_url): a prefilled form, nothing sent by the page
    this.feedbackLink = /** @type {HTMLAnchorElement} */ (
      h("a", { class: id("feedback"), href: "#", target: "_blank", rel: "noopener noreferrer", hidden: "" },
        ["Report a bad result"])
    );
    this.bar = h("div", { class: id("bar") }, [searchIcon(), this.input, this.closeButton]);
    // The keys, most needed first: on one line with the links, those that do not fit are
    // hidden whole (searchbar.css), never wrapping the footer onto a second line.
    const hint = (/** @type {string[]} */ keys, /** @type {string} */ what) =>
      h("span", { class: id("hint") }, [...keys.map((k) => h("kbd", {}, [k])), ` ${what}`]);
    const hints = h("p", { class: id("hints"), "aria-hidden": "true" }, [
      hint(["↑", "↓"], "select"), hint(["Enter"], "open"), hint(["Esc"], "close"), hint(["PgDn"], "next page"),
    ]);
    this.dialog = /** @type {HTMLDialogElement} */ (
      h("dialog", { class: PREFIX, "aria-label": "Search the documentation" }, [
        h("div", { class: id("panel") }, [
          this.bar,
          this.status,
          this.sources.lines,
          this.askSlot,
          this.empty,
          this.sources.element,
          this.toolbar,
          this.listbox,
          h("div", { class: id("footer") }, [hints, this.feedbackLink, this.shareLink, this.fullSearch]),
        ]),
      ])
    );
    document.body.append(this.dialog);

    this.input.addEventListener("input", (e) => this.search(isTyping(e)));
    this.input.addEventListener("keydown", (e) => this.onKeydown(e));
    this.closeButton.addEventListener("click", () => this.close());
    this.clearRecent.addEventListener("click", () => {
      this.recent.clear();
      this.showRecent();
      this.input.focus();
    });
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
    // the reranked order waits while the reader is in the list (showReranked)
    this.listbox.addEventListener("pointerenter", () => { this.pointerInList = true; });
    this.listbox.addEventListener("pointerleave", () => {
      this.pointerInList = false;
      const held = this.heldRerank;
      if (held) this.showReranked(held.id, held.mode, held.results, held.weak);
    });
    this.listbox.addEventListener("mousemove", (e) => {
      const li = /** @type {HTMLElement} */ (e.target).closest?.("[role=option]");
      if (li) this.setActive(Number(li.getAttribute("data-index")), false);
    });
    this.listbox.addEventListener("click", (e) => {
      const li = /** @type {HTMLElement} */ (e.target).closest?.("[role=option]");
      if (!li) return;
      const query = li.getAttribute("data-recent") ?? li.getAttribute("data-search"); // a recent or suggested query
      if (query !== null) {
        e.preventDefault();
        this.searchFor(query);
        return;
      }
      this.recent.add(this.query); // the reader opened a result of this query
      const a = /** @type {HTMLElement} */ (e.target).closest?.("a");
      if (a && !(e instanceof MouseEvent && (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0))) {
        this.close(); // same-page links only change the hash: do not leave the dialog open
      }
    });
  }

  /** Start loading the index (idempotent): on first focus of a trigger, or on open. */
  warmUp() {
    if (this.backend) return;
    const onStatus = (/** @type {Status} */ s) => this.setStatus(s);
    const onResults = (/** @type {number} */ id, /** @type {string} */ mode, /** @type {Result[]} */ results,
      /** @type {boolean | undefined} */ weak, /** @type {boolean | undefined} */ partial,
      /** @type {boolean | undefined} */ pending, /** @type {boolean | undefined} */ reranked) => {
      if (reranked) this.showReranked(id, mode, results, Boolean(weak));
      else this.showResults(id, mode, results, Boolean(weak), Boolean(partial), Boolean(pending));
    };
    const onSettings = (/** @type {Record<string, any>} */ settings) => {
      this.ask.setSiteSettings(settings);
      this.suggested = suggestedQuestions(settings.suggestions);
      if (this.dialog.open && !this.input.value.trim()) this.showRecent(); // they came after the dialog opened
    };
    const onTiers = (/** @type {import("./backend.js").Tiers} */ tiers) => {
      this.modelSetting.setSite(tiers.model, tiers.encoder);
      this.showModelChoice();
    };
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
        base: new URL("index/", this.assetBase).href, // sphinx_rag/search/format.py ASSET_DIR
        ortBase: this.assetBase.href, // build.mjs puts the ort-wasm files beside worker.js
        threads: globalThis.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1,
        model: this.modelPlan(),
        frugal: frugal(/** @type {any} */ (navigator)),
        onStatus,
        onResults,
        onSettings,
        sources: this.sources.choices, // the reader's choice of federated sites
        onSources: (sites) => this.sources.update(sites),
        onTiers,
      });
    }
    this.setStatus({ mode: "loading", message: "Loading the search index…" });
    this.backend.start();
    if (this.input.value.trim()) this.search();
  }

  /**
   * Put the dialog clear of the theme's search boxes (theme.js topClearOfBoxes): it sits
   * where its style puts it unless it would cover one.
   */
  placeClearOfTheme() {
    this.dialog.style.marginTop = "";
    this.dialog.style.maxHeight = "";
    const boxes = this.themeBoxes().map((el) => el.getBoundingClientRect());
    const top = topClearOfBoxes(this.dialog.getBoundingClientRect(), boxes, 0.4 * window.innerHeight);
    if (top === null) return;
    this.dialog.style.marginTop = `${top}px`;
    this.dialog.style.maxHeight = `min(42rem, calc(100dvh - ${top + 16}px))`; // its bottom stays on screen
  }

  /** @param {string} [query] */
  open(query) {
    this.warmUp();
    if (!this.dialog.open) {
      this.dialog.showModal();
      this.placeClearOfTheme();
    }
    if (typeof query === "string" && query && query !== this.input.value) {
      this.input.value = query;
      this.search();
    } else if (!this.input.value.trim()) {
      this.showRecent();
    }
    this.input.focus();
    this.input.select();
  }

  close() {
    if (!this.dialog.open) return;
    this.closing = true; // focus goes back to what opened the dialog: it must not reopen it
    try {
      this.dialog.close();
    } finally {
      this.closing = false;
    }
  }

  isClosing() {
    return this.closing;
  }

  /** Search for `query` as if typed (a recent search). @param {string} query */
  searchFor(query) {
    this.input.value = query;
    this.search();
    this.input.focus();
  }

  /** @param {boolean} [typing]  from a keystroke (isTyping) */
  search(typing = false) {
    const query = wellFormed(this.input.value).trim(); // a lone surrogate breaks encodeURIComponent
    const id = ++this.requestId;
    this.fullSearch.href = new URL(
      this.searchPage + (query ? `?q=${encodeURIComponent(query)}` : ""),
      this.siteRoot,
    ).href;
    this.shareLink.href = shareUrl(query);
    this.shareLink.hidden = !query;
    if (!query) {
      this.shownId = id; // answers to what was typed before are not shown any more
      this.queries.clear();
      this.showRecent();
      return;
    }
    this.queries.set(id, query);
    this.backend?.search(id, query, K, typing);
  }

  /**
   * Ask's passages: the queries' rankings fused, sized to `budget` characters (the backend's).
   * @param {string[]} queries @param {number} k @param {number} budget
   * @returns {Promise<Result[]>}
   */
  passages(queries, k, budget) {
    this.warmUp();
    return /** @type {import("./backend.js").Backend} */ (this.backend).passages(queries, k, budget);
  }

  /** @param {Status} status */
  setStatus(status) {
    this.mode = status.mode;
    this.status.setAttribute("data-mode", status.mode);
    this.status.textContent = status.message;
  }

  /**
   * Results of request `id`: shown unless results of a newer request are shown already
   * (while the reader types, each keystroke's results appear as they arrive).
   * @param {number} id
   * @param {string} mode
   * @param {Result[]} results
   * @param {boolean} [weak]  only the nearest results, no good match
   * @param {boolean} [partial]  the keyword results of a typed query, its semantic ones follow
   *   (resultListeners wait for those: Ask answers from the best passages)
   * @param {boolean} [pending]  a tier still loading will answer again (worker.js)
   */
  showResults(id, mode, results, weak = false, partial = false, pending = false) {
    const query = this.queries.get(id);
    if (id < this.shownId || query === undefined) return;
    this.shownId = id;
    this.navigated = false; // new results: the reader has not moved in them yet
    this.heldRerank = null;
    this.listbox.removeAttribute("data-reranked");
    for (const older of this.queries.keys()) if (older < id) this.queries.delete(older);
    this.results = results;
    this.query = query;
    this.renderResults(true);
    if (weak && results.length) {
      this.empty.hidden = false;
      this.empty.textContent = `No good match for “${query}”. The nearest results:`;
    } else if (pending && !results.length) { // not "No results": the full model may find the nearest
      this.empty.textContent = `No results for “${query}” yet: semantic search is still loading…`;
    }
    this.listbox.toggleAttribute("data-weak", weak && results.length > 0);
    this.listbox.setAttribute("data-mode", mode);
    this.listbox.setAttribute("data-query", query); // what these results answer
    if (!partial) for (const listener of this.resultListeners) listener(query, results, mode);
  }

  /**
   * The results on screen reordered by the reranker (worker.js rerankLatest): swapped in at
   * once unless the reader is in the list (the pointer over it, keyboard moves in it, focus
   * on one of its links), so that nothing moves under them; then held until the pointer
   * leaves it, and dropped once they have moved with the keyboard or a newer query answers.
   * @param {number} id
   * @param {string} mode
   * @param {Result[]} results
   * @param {boolean} weak
   */
  showReranked(id, mode, results, weak) {
    if (id !== this.shownId || this.queries.get(id) === undefined || this.navigated) return;
    const inList = this.pointerInList || this.listbox.contains(document.activeElement);
    if (inList) {
      this.heldRerank = { id, mode, results, weak };
      return;
    }
    this.heldRerank = null;
    this.showResults(id, mode, results, weak);
    this.listbox.setAttribute("data-reranked", "");
  }

  /**
   * this.results as groups by page, filtered by kind; the first entry active.
   * @param {boolean} newResults  false: only the filter changed (its chips stay as they are)
   */
  renderResults(newResults) {
    const tokens = queryTokens(this.query);
    const names = identifierTokens(this.query); // what the query names: the entry and link show it
    const groups = groupResults(this.results, names);
    const kind = newResults ? this.filter.update(kindCounts(groups)) : this.filter.active;
    const shown = filterGroups(groups, kind);
    this.entries = renderGroups(this.listbox, shown, {
      siteRoot: this.siteRoot,
      passage: (r) => passageBody(r, tokens),
      source: (r) => this.sources.chip(r),
      names,
    });
    this.sources.count(this.results);
    this.listbox.removeAttribute("data-recent");
    this.updateFeedback();
    this.count.textContent = countText(shown);
    this.clearRecent.hidden = true;
    this.empty.hidden = !(this.query && !this.results.length && this.mode !== "loading");
    this.empty.textContent = this.empty.hidden ? "" : `No results for “${this.query}”.`;
    this.afterRender();
  }

  /** The feedback link for the results shown (hidden without a template or a query). */
  updateFeedback() {
    const href = this.feedback && this.query ? feedbackUrl(this.feedback, this.query, this.results) : null;
    this.feedbackLink.hidden = !href;
    this.feedbackLink.href = href ?? "#";
  }

  /** The empty box: the reader's recent searches and the site's suggested questions. */
  showRecent() {
    const recent = this.recent.list();
    this.results = [];
    this.entries = [];
    this.query = "";
    this.filter.update({ all: 0 });
    this.sources.count([]);
    this.count.textContent = "";
    this.empty.hidden = true;
    this.listbox.replaceChildren();
    this.listbox.removeAttribute("data-weak");
    this.listbox.removeAttribute("data-mode");
    this.listbox.setAttribute("data-query", "");
    this.listbox.toggleAttribute("data-recent", recent.length > 0);
    if (recent.length) {
      const group = h("ul", { role: "group", class: `${PREFIX}-group`, "aria-labelledby": `${PREFIX}-recent-title` }, [
        h("li", { role: "presentation", id: `${PREFIX}-recent-title`, class: `${PREFIX}-group-title` }, ["Recent searches"]),
      ]);
      recent.forEach((q, i) => {
        group.append(h("li", {
          id: `${PREFIX}-option-${i}`, role: "option", "aria-selected": "false",
          class: `${PREFIX}-option ${PREFIX}-recent`, "data-index": String(i), "data-recent": q,
        }, [h("span", { class: `${PREFIX}-link` }, [historyIcon(), h("span", {}, [q])])]));
      });
      this.listbox.append(group);
    }
    const suggested = this.suggested.filter((q) => !recent.includes(q));
    if (suggested.length) this.listbox.append(suggestionGroup(suggested, recent.length, searchIcon));
    this.clearRecent.hidden = !recent.length;
    this.updateFeedback();
    this.afterRender();
  }

  afterRender() {
    const n = this.options().length;
    this.input.setAttribute("aria-expanded", n ? "true" : "false");
    this.active = -1;
    this.setActive(n ? 0 : -1, false); // new results: Enter opens the best one
    this.listbox.scrollTop = 0;
  }

  /** @returns {NodeListOf<HTMLElement>} the options, in visual order */
  options() {
    return this.listbox.querySelectorAll("[role=option]");
  }

  /**
   * @param {number} index
   * @param {boolean} scroll
   */
  setActive(index, scroll) {
    const options = this.options();
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

  /**
   * The first option of the next (step 1) or previous (-1) page group.
   * @param {number} step
   */
  groupStart(step) {
    const options = Array.from(this.options());
    const groupOf = (/** @type {number} */ i) => options[i]?.closest("[role=group]");
    let i = Math.max(this.active, 0);
    const here = groupOf(i);
    if (step > 0) {
      while (i < options.length && groupOf(i) === here) i++;
      return Math.min(i, options.length - 1);
    }
    while (i > 0 && groupOf(i - 1) === here) i--; // the start of this group
    if (i === this.active || this.active < 0) { // already there: the start of the previous one
      i = Math.max(i - 1, 0);
      const previous = groupOf(i);
      while (i > 0 && groupOf(i - 1) === previous) i--;
    }
    return i;
  }

  /** @param {KeyboardEvent} e */
  onKeydown(e) {
    if (e.isComposing) return;
    const n = this.options().length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!n) return;
      const step = e.key === "ArrowDown" ? 1 : -1;
      this.navigated = true; // the reranked order, if it comes, would move the list under them
      this.setActive((this.active + step + n) % n, true);
    } else if ((e.key === "PageDown" || e.key === "PageUp") && n) {
      e.preventDefault();
      this.navigated = true;
      this.setActive(this.groupStart(e.key === "PageDown" ? 1 : -1), true);
    } else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      this.ask.ask(); // the "Ask" action
    } else if (e.key === "Enter") {
      e.preventDefault();
      const option = this.options()[this.active];
      const query = option?.getAttribute("data-recent") ?? option?.getAttribute("data-search");
      if (query !== null && query !== undefined) {
        this.searchFor(query);
      } else if (option) {
        const href = /** @type {HTMLAnchorElement} */ (option.querySelector("a")).href;
        this.recent.add(this.query);
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

/**
 * An agent's search (WebMCP): the backend's passages for one query, once its index is in
 * (started here if the dialog never was; retried while it loads, 30 s at most).
 * @param {SearchDialog} dialog @param {string} query @param {number} k
 * @returns {Promise<Result[]>}
 */
async function indexPassages(dialog, query, k) {
  dialog.warmUp();
  for (let waited = 0; ; waited += 200) {
    try {
      return await dialog.passages([query], k, k * 1500);
    } catch (err) {
      if (waited >= 30000 || !/not loaded yet/.test(String(err))) throw err;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
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
    feedback: thisScript.dataset.feedbackUrl || "",
  });

  // pydata-sphinx-theme (and themes built on it): its buttons, our dialog. Other themes:
  // their search box opens our dialog ("replace"), or our button comes beside it ("both").
  const themeButtons = document.querySelectorAll(".search-button__button");
  const replace = (thisScript.dataset.themeSearch || "replace") === "replace";
  const boxes = replace ? themeSearchInputs(new URL(thisScript.dataset.searchPage || "search.html", siteRoot)) : [];
  for (const box of boxes) takeOverSearchBox(box, dialog);
  dialog.themeBoxes = () => [...themeButtons, ...boxes];
  window.addEventListener("resize", () => {
    if (dialog.dialog.open) dialog.placeClearOfTheme();
  });
  /** @type {Element[]} */
  let triggers = Array.from(themeButtons);
  if (!triggers.length) triggers = boxes.length ? boxes : [addSearchButton(() => dialog.open())];
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

  followColorScheme(() => [dialog.dialog, ...document.querySelectorAll(".sphinx-rag-trigger")]);
  addMarkdownLink(document); // "View as Markdown · Copy as Markdown" (markdown_link.js)
  // WebMCP (webmcp.js): an agent in the browser searches and reads this site; nothing without the API
  const webmcp = registerWebMcp({ win: window, siteRoot, passages: (query, k) => indexPassages(dialog, query, k) });
  /** @type {any} */ (window).sphinxRag = { dialog, ask: dialog.ask, webmcp };

  // A shared link (?q=...) opens the dialog with its query; Sphinx's own search page
  // uses ?q= for itself and keeps it.
  const shared = new URLSearchParams(location.search).get("q");
  const onSearchPage = new URL(thisScript.dataset.searchPage || "search.html", siteRoot).pathname === location.pathname;
  if (shared && shared.trim() && !onSearchPage) dialog.open(shared);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
