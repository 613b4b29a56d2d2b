// @ts-check
/**
 * The "Ask" action of the search dialog: the question and its top passages, sized to the
 * model's context window (the search worker, passageBudget), go to an OpenAI-compatible
 * LLM server (prompt.js: buildMessages, llm.js: streamChat, on the main thread), or, with
 * no server set, to a model in the reader's browser (ask_local.js: the browser's built-in
 * model, or a GGUF model run by wllama in a worker, after the reader's consent): the same
 * path for all three, each backend an adapter yielding the answer's pieces
 * (llm/answer_stream.js). With
 * multi_query or filter_passages (the site's or the reader's), the model first rewrites
 * the question into search queries and/or judges each passage (context.js): each of those
 * calls is a line of the steps list while it runs, then says what it gave, its time and
 * its tokens. The streamed answer is rendered with
 * markdown.js's MarkdownStream (DOM nodes only, never innerHTML), its [n] citations
 * linked to the cited passages, above a "Sources" list of the passages sent; an answer
 * that cites none of them, or one it was not given, gets a note saying so.
 *
 * A conversation: each answered question is a turn of the thread, kept in the tab
 * (sessionStorage, THREAD_KEY + the site root's path: it survives following a citation to
 * another page) and shown above the next answer; "New question" empties it. A follow-up (the
 * search box or a suggested question, while a thread is open) is searched as itself and
 * joined to the earlier questions, and the model reads the last turns (llm/thread.js). The
 * model's suggested follow-ups (a "Follow-up questions:" list, parsed defensively) are held
 * back from the streamed answer and shown as buttons that ask them. Thumbs up/down, with a
 * reason for down: with the site's feedback URL (sphinx_rag_feedback_url) a reason opens
 * its form prefilled (feedback.js's answerReportText); without it, nothing leaves the page.
 *
 * The panel never crowds out the results: typing another query folds it to its title line
 * (and clears an error), and its height is capped (less on a phone), its body scrolling. An
 * error is one short line and a "Details" disclosure with the whole message, as Markdown.
 *
 * Rendering costs time linear in the answer's length: finished blocks are rendered once,
 * only the open one again, at most once per animation frame and for a few milliseconds
 * of it (a fast stream is shown over the next frames). The answer stops at the settings'
 * max_answer_chars, with a note.
 *
 * Settings: the site's (`manifest.json` settings.llm, passed in by the backend, no
 * request of its own) under the reader's override, kept in localStorage under
 * STORAGE_KEY as {endpoint, model, timeout?, multi_query?, filter_passages?} — the only
 * thing kept there (the conversation is in sessionStorage) — combined
 * by llm_settings.js's mergeSettings. With neither, the Ask button is hidden; the gear
 * button's settings panel lets a reader enable it (or name a GGUF file: ask_local.js). The
 * only request made is to the configured endpoint (llm.js may also probe `<endpoint>/models`
 * once, to tell a stopped server from a CORS refusal), or, for an in-browser model, to the
 * model file's URL and the site's own wllama files.
 *
 * State for tests and tools: the answer section's `data-state` is idle | searching |
 * consent | downloading | loading (an in-browser model: the reader's yes, its file, its
 * start) | preparing (the extra calls) | waiting | streaming | done | error (then
 * `data-error-kind` is llm.js's error kind; `data-collapsed` when folded), `timings`
 * ({start, firstToken, end}, performance.now() ms) describes the last answer, `steps` its
 * extra calls (context.js's Step), `messages` what the model read and `thread` the turns so
 * far; `data-backend` says what answers (endpoint | builtin | gguf) and `data-citations`, once
 * an answer is done, whether it cites only passages it was given (ok | none | unknown). The panel is
 * `window.sphinxRag.ask`.
 *
 * @module ask
 */

import { endpointAdapter, streamAnswer } from "../llm/answer_stream.js";
import { gatherContext } from "../llm/context.js";
import { LLMError, normalizeEndpoint } from "../llm/llm.js";
import { DEFAULTS, mergeSettings } from "../llm/llm_settings.js";
import { MarkdownStream, renderMarkdown, safeUrl } from "../llm/markdown.js";
import { ANSWER_RESERVE_TOKENS, SHORT_PROMPT, buildMessages, passageBudget } from "../llm/prompt.js";
import { FollowUpHold, citationCheck, earlierQuestions, parseFollowUps } from "../llm/thread.js";
import { LocalAnswers } from "./ask_local.js";
import { REASONS, answerReportText, feedbackUrl } from "./feedback.js";
import { displayText, titleParts } from "./highlight.js";
import { h } from "./dom.js";
import { wellFormed } from "./well_formed.js";

/** localStorage key of the reader's own settings. */
export const STORAGE_KEY = "sphinx-rag-llm";
/** Passages offered to the model, as `sphinx-rag ask --k` (fewer if the context is small). */
export const ASK_PASSAGES = 8;
const PREFIX = "sphinx-rag";
/** sessionStorage key of the conversation (followed by the site root's path). */
export const THREAD_KEY = "sphinx-rag-thread:";
/** Turns kept in the tab (the model reads fewer: llm/thread.js). */
export const STORED_TURNS = 10;
/** Characters of an answer kept in the tab. */
const STORED_ANSWER_CHARS = 20000;
/** An error message up to this long is its own short line; a longer one goes under "Details". */
export const SHORT_ERROR_CHARS = 100;

/** The short line of an error whose message is long, by llm.js's kind (and "settings"). */
export const SHORT_ERRORS = /** @type {Record<string, string>} */ ({
  unreachable: "Could not reach the LLM server.",
  cors: "The LLM server does not allow requests from this site (CORS).",
  csp: "This site’s Content-Security-Policy blocks the LLM server.",
  http: "The LLM server answered with an error.",
  incomplete: "The connection broke: the answer is incomplete.",
  timeout: "The LLM server did not answer in time.",
  aborted: "Stopped: the answer is incomplete.",
  invalid: "The LLM server sent a reply Ask cannot read.",
  redirect: "The LLM server redirected the request: nothing was sent there.",
  limit: "The answer was cut at its maximum length (max_answer_chars).",
  settings: "The LLM settings are not valid.",
  model: "The in-browser model failed.",
  download: "The model file was refused.",
  declined: "Not downloaded: nothing was fetched.",
});

/** Tokens an in-browser model may write: a short answer (the prompt asks for one to three
 * sentences) in fewer than the budget's reserve, so a rambling small model stops sooner. */
export const LOCAL_ANSWER_TOKENS = 256;
/** Seconds an in-browser model may stay silent (its first token waits for the whole prompt). */
export const LOCAL_TIMEOUT = 300;
/** The share of an in-browser model's window the budget counts on: the page estimates 4
 * characters a token, and code and API names run nearer 3 in a small model's vocabulary. */
export const LOCAL_CONTEXT_SHARE = 0.75;

/**
 * The settings of an in-browser model's answer: its context (a share of its window), the
 * short prompt, one call (no extra steps), and the site's temperature and answer cap.
 * @param {unknown} site  manifest settings.llm @param {string} project @param {number} contextTokens
 * @returns {Settings}
 */
export function localSettings(site, project, contextTokens) {
  const own = {
    endpoint: "(in this browser)", max_context_tokens: Math.max(512, Math.floor(contextTokens * LOCAL_CONTEXT_SHARE)),
    prompt: SHORT_PROMPT, timeout: LOCAL_TIMEOUT, multi_query: false, filter_passages: false,
  };
  const s = site && typeof site === "object" ? /** @type {any} */ (site) : {};
  const settings = mergeSettings([own, { temperature: s.temperature, max_answer_chars: s.max_answer_chars, project: s.project },
    { project }]);
  return /** @type {Settings} */ ({ ...settings, source: "site" });
}

/**
 * An error as the panel shows it: one short line, and the whole message as details (""
 * when the message is the short line itself: short, without Markdown).
 * @param {string} kind @param {string} message @param {number} [status]  an HTTP status
 * @returns {{line: string, details: string}}
 */
export function errorSummary(kind, message, status = 0) {
  const text = String(message ?? "").trim();
  if (Array.from(text).length <= SHORT_ERROR_CHARS && !/[`*[\]\n]/.test(text)) return { line: text, details: "" };
  const line = kind === "http" && status ? `The LLM server answered with an error (HTTP ${status}).`
    : SHORT_ERRORS[kind] ?? "Ask failed.";
  return { line, details: text };
}

/**
 * @typedef {{title: string, url: string}} Source
 * @typedef {{question: string, answer: string, sources: Source[], followUps: string[]}} Turn
 * @typedef {{question: string, text: string, hold: FollowUpHold | null, sources: Source[], recorded: boolean}} Live
 *   the answer shown: its text (a streamed one's: hold.text), whether it is a turn of the thread yet
 */

/** The text of the answer shown. @param {Live} live */
const liveText = (live) => (live.hold ? live.hold.text : live.text);

/** The tab's `sessionStorage`, or null where it is unavailable. */
export function pageSession() {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null;
  }
}

/** @param {unknown} v @param {number} max */
const cap = (v, max) => (typeof v === "string" ? Array.from(v).slice(0, max).join("") : "");

/**
 * The conversation kept in the tab, its malformed parts dropped ([] when none or unreadable).
 * @param {Storage | null} storage @param {string} key
 * @returns {Turn[]}
 */
export function readThread(storage, key) {
  let value;
  try {
    value = JSON.parse(storage?.getItem(key) ?? "null");
  } catch {
    return [];
  }
  const turns = value && typeof value === "object" && Array.isArray(value.turns) ? value.turns : [];
  /** @type {Turn[]} */
  const out = [];
  for (const t of turns) {
    if (!t || typeof t !== "object") continue;
    const question = cap(t.question, 2000).trim();
    const answer = cap(t.answer, STORED_ANSWER_CHARS);
    if (!question || !answer.trim()) continue;
    const sources = (Array.isArray(t.sources) ? t.sources : [])
      .filter((/** @type {any} */ s) => s && typeof s.title === "string" && typeof s.url === "string" && safeUrl(s.url))
      .map((/** @type {any} */ s) => ({ title: cap(s.title, 500), url: cap(s.url, 2000) }));
    const followUps = (Array.isArray(t.followUps) ? t.followUps : [])
      .filter((/** @type {unknown} */ q) => typeof q === "string" && q.trim()).slice(0, 3)
      .map((/** @type {string} */ q) => cap(q, 300));
    out.push({ question, answer, sources, followUps });
  }
  return out.slice(-STORED_TURNS);
}

/**
 * Keep the conversation in the tab (its last STORED_TURNS turns); false if it could not be.
 * @param {Storage | null} storage @param {string} key @param {Turn[]} turns
 */
export function writeThread(storage, key, turns) {
  try {
    if (!storage) return false;
    if (!turns.length) storage.removeItem(key);
    else {
      const kept = turns.slice(-STORED_TURNS).map((t) => ({ ...t, answer: cap(t.answer, STORED_ANSWER_CHARS) }));
      storage.setItem(key, JSON.stringify({ version: 1, turns: kept }));
    }
    return true;
  } catch {
    return false; // full, or denied: the conversation lives in this page only
  }
}

/**
 * @typedef {{endpoint: string, model: string, timeout?: number, multi_query?: boolean,
 *            filter_passages?: boolean}} ReaderSettings
 * @typedef {import("../llm/llm_settings.js").LLMSettings & {source: "site" | "reader"}} Settings
 * @typedef {{title: string, url: string, text: string, id?: string}} Passage
 * @typedef {{start: number, firstToken: number | null, end: number | null}} Timings
 */

/** @param {unknown} v */
function positive(v) {
  return typeof v === "number" && Number.isFinite(v) && v > 0;
}

/** The `localStorage` of the page, or null where it is unavailable (sandboxed frames...). */
export function pageStorage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/**
 * The reader's settings from storage, or null (none, or unreadable).
 * @param {Storage | null} storage
 * @returns {ReaderSettings | null}
 */
export function readReaderSettings(storage) {
  let value;
  try {
    const raw = storage?.getItem(STORAGE_KEY);
    if (!raw) return null;
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!value || typeof value !== "object" || typeof value.endpoint !== "string" || !value.endpoint.trim()) {
    return null;
  }
  /** @type {ReaderSettings} */
  const out = { endpoint: value.endpoint.trim(), model: typeof value.model === "string" ? value.model.trim() : "" };
  if (positive(value.timeout)) out.timeout = value.timeout;
  for (const key of /** @type {const} */ (["multi_query", "filter_passages"])) {
    if (typeof value[key] === "boolean") out[key] = value[key];
  }
  return out;
}

/**
 * The site's LLM settings (manifest settings.llm) if they name an endpoint, else null.
 * @param {unknown} site
 * @returns {Record<string, any> | null}
 */
export function siteLLM(site) {
  const s = /** @type {any} */ (site);
  return s && typeof s === "object" && typeof s.endpoint === "string" && s.endpoint.trim() ? s : null;
}

/**
 * What an answer uses: the site's settings with the reader's endpoint, model, timeout and
 * extra steps (multi_query, filter_passages) on top; prompt, context size and temperature
 * stay the site's (or Python's defaults).
 * Null when neither names an endpoint (Ask is off). The layers of mergeSettings, the
 * rule `sphinx-rag ask` also follows.
 * @param {unknown} site  manifest settings.llm ({} when the site set none)
 * @param {ReaderSettings | null} reader
 * @param {string} [project]  the project name, when the site settings have none
 * @returns {Settings | null}
 */
export function effectiveSettings(site, reader, project = "") {
  const override = reader && {
    endpoint: reader.endpoint, model: reader.model, timeout: reader.timeout,
    multi_query: reader.multi_query, filter_passages: reader.filter_passages,
  };
  const settings = mergeSettings([override, site, { project }]);
  return settings && /** @type {Settings} */ ({ ...settings, source: reader ? "reader" : "site" });
}

/**
 * Runs `render(budgetMs)` at most once per animation frame, with FRAME_BUDGET_MS of
 * it; when `render` says it is not done (a fast stream left more than one frame's work),
 * it runs again at the next frame. No frame grows long, however fast the answer comes.
 */
export class FrameRenderer {
  /** @param {(budgetMs: number) => boolean} render  true when everything is shown */
  constructor(render) {
    this.render = render;
    this.frame = 0;
    /** @type {((done: boolean) => void) | null} */
    this.drained = null;
  }

  /** Render at the next frame (once, however often it is asked before then). */
  request() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      if (this.render(FRAME_BUDGET_MS)) {
        this.drained?.(true);
        this.drained = null;
      } else {
        this.request();
      }
    });
  }

  /** Frame by frame until all is shown: true then, false if cancel() came first. @returns {Promise<boolean>} */
  drain() {
    this.drained?.(false);
    const done = new Promise((resolve) => { this.drained = resolve; });
    this.request();
    return /** @type {Promise<boolean>} */ (done);
  }

  /** Stop rendering (a new answer takes the area, or the caller renders the rest itself). */
  cancel() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.drained?.(false);
    this.drained = null;
  }
}

/** Milliseconds of each animation frame an answer's rendering may take. */
const FRAME_BUDGET_MS = 6;

/** An inline SVG gear (settings): a ring, a hub and eight square teeth. */
function gearIcon() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", `${PREFIX}-icon ${PREFIX}-gear-icon`);
  const circle = (/** @type {string} */ r) => {
    const c = document.createElementNS(ns, "circle");
    c.setAttribute("cx", "12");
    c.setAttribute("cy", "12");
    c.setAttribute("r", r);
    return c;
  };
  const teeth = document.createElementNS(ns, "path");
  let d = "";
  for (let k = 0; k < 8; k++) {
    const a = (k * Math.PI) / 4;
    const p = (/** @type {number} */ r) => `${(12 + r * Math.cos(a)).toFixed(2)} ${(12 + r * Math.sin(a)).toFixed(2)}`;
    d += `M${p(6.5)} L${p(9.6)} `;
  }
  teeth.setAttribute("d", d.trim());
  teeth.setAttribute("stroke-width", "3.4");
  teeth.setAttribute("stroke-linecap", "butt");
  svg.append(circle("6.6"), circle("2.4"), teeth);
  return svg;
}

/**
 * The part of SearchDialog the panel uses.
 * @typedef {{input: HTMLInputElement, bar: HTMLElement, askSlot: HTMLElement, listbox: HTMLElement,
 *            results: Passage[], resultListeners: ((q: string, r: any[], m: string) => void)[],
 *            feedback?: string, searchFor?(query: string): void, assetBase?: URL,
 *            close(): void, passages(queries: string[], k: number, budget: number): Promise<Passage[]>}} DialogLike
 *   passages: Ask's context from the search worker (the queries' rankings fused, sized to `budget`);
 *   feedback: sphinx_rag_feedback_url's template ("": none); searchFor: search a query as if typed
 */

/**
 * A thumb (up; down is the same turned over), drawn here: a cuff and a fist with its thumb up.
 * @param {boolean} down
 */
function thumbIcon(down) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", `${PREFIX}-icon ${PREFIX}-thumb-icon`);
  const path = document.createElementNS(ns, "path");
  path.setAttribute("d", "M3 10h4v11H3z M7 10l4-8c1.4 0 2.5 1.1 2.5 2.5V9H19a2 2 0 0 1 2 2.3l-1.3 7.6a2 2 0 0 1-2 1.7H7");
  path.setAttribute("stroke-linejoin", "round");
  if (down) path.setAttribute("transform", "rotate(180 12 12)");
  svg.append(path);
  return svg;
}

export class AskPanel {
  /**
   * @param {{dialog: DialogLike, siteRoot: URL, project?: string, storage?: Storage | null,
   *          session?: Storage | null}} options  storage: the reader's settings; session: the conversation
   */
  constructor({ dialog, siteRoot, project = "", storage = pageStorage(), session = pageSession() }) {
    this.dialog = dialog;
    this.siteRoot = siteRoot;
    this.project = project;
    this.storage = storage;
    this.session = session;
    this.threadKey = THREAD_KEY + siteRoot.pathname;
    /** manifest settings.llm, once the index is read */
    /** @type {Record<string, any>} */
    this.site = {};
    this.siteKnown = false;
    /** @type {AbortController | null} */
    this.controller = null;
    this.run = 0;
    /** @type {string | null} a question waiting for its search results */
    this.pending = null;
    /** @type {Timings | null} */
    this.timings = null;
    /** @type {FrameRenderer | null} the answer's rendering */
    this.renderer = null;
    /** @type {import("../llm/context.js").Step[]} the last answer's extra calls */
    this.steps = [];
    /** @type {import("../llm/prompt.js").Message[]} what the model read for the last answer */
    this.messages = [];
    /** @type {Turn[]} the conversation: the questions answered, oldest first */
    this.thread = readThread(session, this.threadKey);
    /** @type {Live | null} the answer shown */
    this.live = null;
    /** The question of the answer area ("" when it shows none). */
    this.shown = "";
    /** The in-browser backends (the built-in model, a GGUF model in a worker) and their consent. */
    this.local = new LocalAnswers({ siteRoot, assetBase: dialog.assetBase ?? new URL("_static/sphinx_rag/", siteRoot),
      storage, onChange: () => this.update() });
    this.build();
    this.update();
    if (this.thread.length) this.showThread(true);
  }

  /** The endpoint's settings (the site's under the reader's), or null when none is set. */
  settings() {
    return effectiveSettings(this.site, readReaderSettings(this.storage), this.project);
  }

  /**
   * What answers the next question and with which settings, or null when nothing can (Ask is
   * off): an endpoint, the browser's built-in model or a GGUF model (ask_local.js's order,
   * or the reader's choice).
   * @returns {(import("./ask_local.js").Plan & {settings: Settings}) | null}
   */
  plan() {
    const endpoint = this.settings();
    const plan = this.local.plan(Boolean(endpoint));
    if (!plan) return null;
    if (plan.kind === "endpoint" && endpoint) return { ...plan, label: endpoint.model, settings: endpoint };
    return { ...plan, settings: localSettings(this.site, this.project, plan.contextTokens) };
  }

  /** The site's settings arrived (manifest settings; `llm` is {} when the site set none). @param {any} settings */
  setSiteSettings(settings) {
    const llm = settings && typeof settings === "object" ? settings.llm : null;
    this.site = llm && typeof llm === "object" ? llm : {};
    this.siteKnown = true;
    this.local.setSite(settings && typeof settings === "object" ? settings.llm_browser : null);
    this.update();
  }

  build() {
    const id = (/** @type {string} */ s) => `${PREFIX}-${s}`;
    const d = this.dialog;

    // -- the bar: Ask and the gear, before the close button ----------------------------------
    const shortcut = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent) ? "⌘Enter" : "Ctrl+Enter";
    this.askButton = h("button", {
      type: "button",
      class: id("askbutton"),
      "aria-keyshortcuts": "Control+Enter Meta+Enter",
      title: `Ask the LLM, from the results below (${shortcut})`,
      hidden: "",
    }, ["Ask"]);
    this.gearButton = h("button", {
      type: "button",
      class: id("gear"),
      "aria-label": "Settings",
      "aria-expanded": "false",
      "aria-controls": id("settings"),
      title: "Settings (semantic model, LLM server)",
    }, [gearIcon()]);
    const closeButton = d.bar.querySelector(`.${PREFIX}-close`);
    d.bar.insertBefore(this.askButton, closeButton);
    d.bar.insertBefore(this.gearButton, closeButton);

    // -- the settings panel, below the bar ------------------------------------------------------
    const field = (/** @type {string} */ name, /** @type {string} */ label, /** @type {Record<string, string>} */ attrs) => {
      const input = /** @type {HTMLInputElement} */ (h("input", {
        id: id(`llm-${name}`), name, type: "text", autocomplete: "off", spellcheck: "false", ...attrs,
      }));
      return { input, row: h("div", { class: id("field") }, [h("label", { for: input.id }, [label]), input]) };
    };
    const endpoint = field("endpoint", "Endpoint URL", {
      inputmode: "url", autocapitalize: "off", placeholder: "http://127.0.0.1:11434/v1",
      "aria-describedby": id("settings-site"),
    });
    const model = field("model", "Model", { autocapitalize: "off", placeholder: "e.g. gemma3" });
    const timeout = field("timeout", "Timeout (s)", { type: "number", min: "0.1", step: "any", inputmode: "decimal" });
    this.endpointInput = endpoint.input;
    this.modelInput = model.input;
    this.timeoutInput = timeout.input;
    const toggle = (/** @type {string} */ name, /** @type {string} */ label) => {
      const input = /** @type {HTMLInputElement} */ (h("input", { id: id(`llm-${name}`), name, type: "checkbox" }));
      return { input, row: h("div", { class: id("toggle") }, [input, h("label", { for: input.id }, [label])]) };
    };
    const multi = toggle("multi_query", "Let the model write more search queries first (one more call)");
    const filter = toggle("filter_passages", "Let the model drop passages it judges irrelevant (one call per passage)");
    this.multiQueryInput = multi.input;
    this.filterInput = filter.input;
    this.siteNote = h("p", { id: id("settings-site"), class: id("settings-site") });
    this.settingsMessage = h("p", { class: id("settings-message"), role: "status" });
    this.resetButton = h("button", { type: "button", class: id("reset") }, ["Reset to site default"]);
    const closeSettings = h("button", { type: "button", class: id("settings-close") }, ["Close"]);
    this.form = /** @type {HTMLFormElement} */ (h("form", {
      id: id("settings"), class: id("settings"), "aria-label": "Settings", hidden: "", novalidate: "",
    }, [
      h("p", { class: id("settings-intro") }, [
        "“Ask” sends your question and the passages found to an OpenAI-compatible LLM server, " +
        "usually one on your own machine (llama.cpp’s llama-server, Ollama), or answers with a model " +
        "in this browser. These settings are kept in this browser only.",
      ]),
      h("div", { class: id("fields") }, [endpoint.row, model.row, timeout.row]),
      h("div", { class: id("toggles") }, [multi.row, filter.row]),
      this.local.section,
      this.siteNote,
      this.settingsMessage,
      h("div", { class: id("settings-actions") }, [
        h("button", { type: "submit", class: id("save") }, ["Save"]), this.resetButton, closeSettings,
      ]),
    ]));
    d.bar.after(this.form);

    // -- the answer (the dialog's askSlot, between the status line and the results) ---------------
    this.slot = d.askSlot;
    this.slot.setAttribute("data-state", "idle");
    this.heading = h("p", { class: id("ask-title") });
    this.stopButton = h("button", { type: "button", class: id("stop"), hidden: "" }, ["Stop"]);
    this.newButton = h("button", { type: "button", class: id("ask-new"), title: "Forget this conversation" },
      ["New question"]);
    this.toggleButton = h("button", {
      type: "button", class: id("ask-toggle"), "aria-expanded": "true", "aria-controls": id("ask-body"),
      "aria-label": "Hide the answer", title: "Hide the answer",
    }, [h("span", { "aria-hidden": "true" }, ["▾"])]);
    this.threadList = h("ol", { class: id("thread"), "aria-label": "Earlier questions", hidden: "" });
    this.stepsList = h("ol", { class: id("ask-steps"), "aria-label": "Before the answer", hidden: "" });
    this.answer = h("div", { class: id("answer"), "aria-live": "polite", "aria-busy": "false" });
    this.note = h("div", { class: id("ask-note"), role: "alert", hidden: "" });
    this.followUps = h("div", { class: id("follow-ups"), hidden: "" });
    this.sourcesList = h("ol", { class: id("sources-list") });
    this.sources = h("div", { class: id("ask-sources"), hidden: "" }, [
      h("p", { class: id("sources-title"), id: id("sources-title") }, ["Sources"]),
      this.sourcesList,
    ]);
    this.sourcesList.setAttribute("aria-labelledby", id("sources-title"));
    // thumbs up/down; down asks why (DocSearch's reasons)
    this.thumbs = ["up", "down"].map((vote) => h("button", {
      type: "button", class: id("thumb"), "data-vote": vote, "aria-pressed": "false",
      "aria-label": vote === "up" ? "Good answer" : "Bad answer", title: vote === "up" ? "Good answer" : "Bad answer",
    }, [thumbIcon(vote === "down")]));
    this.reasons = h("div", { class: id("reasons"), role: "group", "aria-label": "What was wrong?", hidden: "" },
      Object.entries(REASONS).map(([key, label]) => h("button", { type: "button", class: id("reason"), "data-reason": key },
        [label])));
    this.feedbackNote = h("p", { class: id("feedback-note"), role: "status" });
    this.feedback = h("div", { class: id("ask-feedback"), hidden: "" }, [
      h("span", { class: id("feedback-label") }, ["Helpful?"]), ...this.thumbs, this.reasons, this.feedbackNote,
    ]);
    this.disclaimer = h("p", { class: id("ask-disclaimer"), hidden: "" });
    this.body = h("div", { id: id("ask-body"), class: id("ask-body") }, [
      this.threadList, this.stepsList, this.answer, this.note, this.followUps, this.sources, this.feedback,
      this.disclaimer,
    ]);
    this.slot.append(h("div", { class: id("ask-head") }, [this.heading, this.stopButton, this.newButton,
      this.toggleButton]), this.body);

    // -- events ---------------------------------------------------------------------------------
    this.askButton.addEventListener("click", () => this.ask());
    this.gearButton.addEventListener("click", () => (this.form.hidden ? this.openSettings() : this.closeSettings()));
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.save();
    });
    this.form.addEventListener("keydown", (e) => {
      if (e.key === "Escape") { // close the panel, not the dialog
        e.preventDefault();
        e.stopPropagation();
        this.closeSettings();
      }
    });
    this.resetButton.addEventListener("click", () => this.reset());
    closeSettings.addEventListener("click", () => this.closeSettings());
    this.stopButton.addEventListener("click", () => this.stop());
    this.newButton.addEventListener("click", () => this.newQuestion());
    this.toggleButton.addEventListener("click", () => this.collapse(this.toggleButton.getAttribute("aria-expanded") === "true"));
    for (const thumb of this.thumbs) thumb.addEventListener("click", () => this.vote(thumb.getAttribute("data-vote") ?? ""));
    for (const button of this.reasons.querySelectorAll("button")) {
      button.addEventListener("click", () => this.report(/** @type {keyof typeof REASONS} */ (button.getAttribute("data-reason"))));
    }
    this.slot.addEventListener("click", (e) => {
      const a = /** @type {HTMLElement} */ (e.target).closest?.("a");
      if (a && a.getAttribute("target") !== "_blank" &&
        !(e instanceof MouseEvent && (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0))) {
        d.close(); // same-page links only change the hash: do not leave the dialog open
      }
    });
    d.input.addEventListener("input", () => {
      const typed = wellFormed(d.input.value).trim();
      if (this.pending !== null) {
        if (typed === this.pending) return;
        this.pending = null; // the question changed before its results came: the thread as it was
        this.showThread(true);
        return;
      }
      if (this.slot.hidden || typed === this.shown) return;
      // another query starts: its results must not sit under the answer, nor under an error
      const state = this.slot.getAttribute("data-state");
      if (state === "error" || state === "done") this.clearNote();
      if (!(this.live && liveText(this.live).trim()) && !this.controller) {
        this.showThread(true); // no answer came (an error, no results): the conversation as it was, or nothing
        return;
      }
      this.collapse(true);
    });
    d.resultListeners.push((query, results) => {
      if (this.pending !== null && query === this.pending) {
        this.pending = null;
        this.start(query, results);
      } else if (this.pending === null && !this.slot.hidden && query !== this.shown) {
        this.collapse(true); // results of another query (a recent search, a suggestion): on top
      }
    });
  }

  /** Another part of the reader's settings (model_setting.js) at the top of the panel. @param {HTMLElement} section */
  addSettingsSection(section) {
    this.form.prepend(section);
  }

  /** Show the Ask button when an endpoint is configured; refresh the panel's texts. */
  update() {
    const plan = this.plan();
    this.askButton.hidden = !plan;
    const shortcut = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent) ? "⌘Enter" : "Ctrl+Enter";
    this.askButton.title = `Ask ${plan?.label ?? "the LLM"}, from the results below (${shortcut})`;
    this.slot.setAttribute("data-backend", plan?.kind ?? "");
    const site = siteLLM(this.site);
    this.siteNote.textContent = site
      ? `Site default: ${site.endpoint}, model ${site.model}.`
      : this.siteKnown
        ? "This site sets no LLM server: enter yours to enable “Ask”."
        : "";
    this.resetButton.toggleAttribute("disabled", !readReaderSettings(this.storage));
  }

  openSettings() {
    const reader = readReaderSettings(this.storage);
    const settings = this.settings();
    this.endpointInput.value = settings?.endpoint ?? "";
    this.modelInput.value = settings?.model ?? "";
    this.timeoutInput.value = reader?.timeout ? String(reader.timeout) : "";
    this.timeoutInput.placeholder = String(settings?.timeout ?? DEFAULTS.timeout);
    this.multiQueryInput.checked = Boolean(settings?.multi_query);
    this.filterInput.checked = Boolean(settings?.filter_passages);
    this.local.fill();
    this.showSettingsMessage("");
    this.update();
    this.form.hidden = false;
    this.gearButton.setAttribute("aria-expanded", "true");
    this.endpointInput.focus();
  }

  closeSettings() {
    this.form.hidden = true;
    this.gearButton.setAttribute("aria-expanded", "false");
    this.gearButton.focus();
  }

  /** @param {string} message @param {HTMLElement} [invalid] the field at fault */
  showSettingsMessage(message, invalid) {
    this.settingsMessage.textContent = message;
    this.settingsMessage.toggleAttribute("data-error", Boolean(invalid));
    for (const input of [this.endpointInput, this.modelInput, this.timeoutInput, this.local.urlInput, this.local.shaInput]) {
      if (input === invalid) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
    }
    invalid?.focus();
  }

  save() {
    const local = this.local.readForm();
    if ("error" in local) {
      this.showSettingsMessage(local.error, local.input);
      return;
    }
    if (!this.endpointInput.value.trim() && this.local.usableWithout(local.value)) {
      try {
        this.storage?.removeItem(STORAGE_KEY); // no endpoint: an in-browser model answers
      } catch {
        // nothing stored, then
      }
      this.saved(local.value);
      return;
    }
    let endpoint;
    try {
      endpoint = normalizeEndpoint(this.endpointInput.value);
    } catch (err) {
      const message = this.endpointInput.value.trim()
        ? `The endpoint URL is not valid: ${/** @type {Error} */ (err).message}.`
        : "Enter the endpoint URL of the LLM server, e.g. http://127.0.0.1:8080/v1 (llama.cpp) " +
          "or http://127.0.0.1:11434/v1 (Ollama); or use “Reset to site default”.";
      this.showSettingsMessage(message, this.endpointInput);
      return;
    }
    const model = wellFormed(this.modelInput.value).trim();
    if (!model) {
      this.showSettingsMessage("Enter the model name the server serves (Ollama: see `ollama list`; " +
        "llama.cpp’s llama-server accepts any name).", this.modelInput);
      return;
    }
    /** @type {ReaderSettings} */
    const value = { endpoint, model };
    const rawTimeout = this.timeoutInput.value.trim();
    if (rawTimeout) {
      const t = Number(rawTimeout);
      if (!positive(t)) {
        this.showSettingsMessage("The timeout must be a number of seconds above 0, e.g. 60.", this.timeoutInput);
        return;
      }
      value.timeout = t;
    }
    // the extra steps are stored only where the reader's choice differs from the site's
    const site = siteLLM(this.site);
    if (this.multiQueryInput.checked !== Boolean(site?.multi_query)) value.multi_query = this.multiQueryInput.checked;
    if (this.filterInput.checked !== Boolean(site?.filter_passages)) value.filter_passages = this.filterInput.checked;
    try {
      this.storage?.setItem(STORAGE_KEY, JSON.stringify(value));
      if (!this.storage) throw new Error("no localStorage");
    } catch (err) {
      this.showSettingsMessage(`The settings could not be saved in this browser (${/** @type {Error} */ (err).message}).`,
        this.endpointInput);
      return;
    }
    this.saved(local.value);
  }

  /** The settings are kept: the in-browser part too, and the panel closes. @param {import("./ask_local.js").LocalSettings} local */
  saved(local) {
    this.local.save(local);
    this.local.refresh();
    this.update();
    this.form.hidden = true;
    this.gearButton.setAttribute("aria-expanded", "false");
    this.dialog.input.focus();
  }

  reset() {
    try {
      this.storage?.removeItem(STORAGE_KEY);
    } catch {
      // nothing stored, then
    }
    const site = siteLLM(this.site);
    this.endpointInput.value = site?.endpoint ?? "";
    this.modelInput.value = site?.model ?? "";
    this.timeoutInput.value = "";
    this.timeoutInput.placeholder = String(effectiveSettings(site, null)?.timeout ?? DEFAULTS.timeout);
    this.multiQueryInput.checked = Boolean(site?.multi_query);
    this.filterInput.checked = Boolean(site?.filter_passages);
    this.update();
    const plan = this.plan();
    this.showSettingsMessage(site ? "Using the site’s default LLM settings."
      : plan ? `No LLM server is set: “Ask” uses ${plan.label}.` : "No LLM server is set: “Ask” is off.");
    this.gearButton.focus(); // the reset button is now disabled
  }

  /**
   * The Ask action (button, Ctrl/Cmd+Enter, a suggested follow-up): answer the question in
   * the search box, a follow-up when a conversation is open.
   * @param {string} [question]  as the dialog searched it
   */
  ask(question = wellFormed(this.dialog.input.value).trim()) {
    if (!this.plan()) {
      this.openSettings();
      return;
    }
    if (!question) {
      this.dialog.input.focus();
      return;
    }
    this.stop();
    this.recordLive(); // what the last answer gave, if it was still coming
    const box = this.dialog.listbox;
    if (box.getAttribute("data-query") === question) {
      this.start(question, this.dialog.results);
      return;
    }
    // The results of this question are not in yet: answer when they are.
    this.pending = question;
    this.resetAnswer(question);
    this.slot.setAttribute("data-state", "searching");
    this.answer.append(h("p", { class: `${PREFIX}-waiting` }, ["Searching the documentation…"]));
  }

  /** A suggested follow-up: searched as if typed (its results below), then asked. @param {string} question */
  askFollowUp(question) {
    this.dialog.input.value = question;
    this.ask(question);
    if (this.pending === question) this.dialog.searchFor?.(question);
  }

  stop() {
    this.controller?.abort();
  }

  /** "New question": the conversation is forgotten (the tab's copy too) and the panel closes. */
  newQuestion() {
    this.stop();
    this.run++; // an answer still coming is not shown, nor kept
    this.renderer?.cancel();
    this.thread = [];
    this.live = null;
    writeThread(this.session, this.threadKey, []);
    this.hide();
    this.dialog.input.focus();
    this.dialog.input.select();
  }

  /** Hide the panel (no answer to show). */
  hide() {
    this.pending = null;
    this.shown = "";
    this.slot.hidden = true;
    this.slot.setAttribute("data-state", "idle");
  }

  /** Fold the panel to its title line, or unfold it. @param {boolean} folded */
  collapse(folded) {
    this.slot.toggleAttribute("data-collapsed", folded);
    this.body.hidden = folded;
    const label = folded ? "Show the answer" : "Hide the answer";
    this.toggleButton.setAttribute("aria-expanded", String(!folded));
    this.toggleButton.setAttribute("aria-label", label);
    this.toggleButton.setAttribute("title", label);
    this.toggleButton.replaceChildren(h("span", { "aria-hidden": "true" }, [folded ? "▸" : "▾"]));
  }

  /**
   * The answer shown becomes a turn of the conversation (once; an empty answer does not),
   * kept in the tab. Its follow-up list is read off (llm/thread.js).
   * @returns {{answer: string, questions: string[]}}
   */
  recordLive() {
    const live = this.live;
    if (!live || live.recorded) return { answer: "", questions: [] };
    live.recorded = true;
    const parsed = parseFollowUps(liveText(live));
    if (!parsed.answer.trim()) return parsed;
    this.thread.push({ question: live.question, answer: parsed.answer, sources: live.sources, followUps: parsed.questions });
    this.thread = this.thread.slice(-STORED_TURNS);
    writeThread(this.session, this.threadKey, this.thread);
    return parsed;
  }

  /** @param {string} question @param {number} earlier  turns shown above it */
  setHeading(question, earlier) {
    this.heading.replaceChildren(h("span", { class: `${PREFIX}-ask-label` }, [earlier ? "Follow-up" : "Answer"]),
      earlier ? ": " : " to ", h("q", {}, [question]));
    if (earlier) {
      this.heading.append(h("span", { class: `${PREFIX}-ask-count` },
        [` (${earlier} earlier question${earlier === 1 ? "" : "s"})`]));
    }
  }

  /** Empty every part of the answer area. @param {string} question  the one it will show */
  clearArea(question) {
    this.run++;
    this.renderer?.cancel(); // the last answer's rendering stops
    this.shown = question;
    this.slot.hidden = false;
    this.slot.removeAttribute("data-error-kind");
    this.answer.replaceChildren();
    this.clearNote();
    this.sources.hidden = true;
    this.sourcesList.replaceChildren();
    this.showFollowUps([]);
    this.resetFeedback(false);
    this.disclaimer.hidden = true;
    this.stopButton.hidden = true;
    this.stepsList.replaceChildren();
    this.stepsList.hidden = true;
    this.steps = [];
  }

  /** Clear the answer area for a new question, the conversation so far above it. @param {string} question */
  resetAnswer(question) {
    this.clearArea(question);
    this.live = null;
    this.collapse(false);
    this.setHeading(question, this.thread.length);
    this.renderEarlier(this.thread);
  }

  /**
   * Show the conversation kept so far (its last answer as the current one); hide the
   * panel if there is none.
   * @param {boolean} folded
   */
  showThread(folded) {
    const last = this.thread.at(-1);
    if (!last) {
      this.clearArea("");
      this.live = null;
      this.hide();
      return;
    }
    this.clearArea(last.question);
    this.live = { question: last.question, text: last.answer, hold: null, sources: last.sources, recorded: true };
    this.setHeading(last.question, this.thread.length - 1);
    this.renderEarlier(this.thread.slice(0, -1));
    this.answer.append(renderMarkdown(last.answer, {
      doc: document, citationUrl: (n) => last.sources[n - 1]?.url ?? null,
    }));
    this.renderSources(last.sources, last.sources.map((s) => s.url));
    this.showFollowUps(last.followUps);
    this.resetFeedback(true);
    this.slot.setAttribute("data-state", "done");
    this.collapse(folded);
  }

  /** The earlier turns, each its question and its answer (citations to its own sources). @param {Turn[]} turns */
  renderEarlier(turns) {
    this.threadList.replaceChildren(...turns.map((t) => {
      const answer = h("div", { class: `${PREFIX}-turn-answer` });
      answer.append(renderMarkdown(t.answer, { doc: document, citationUrl: (n) => t.sources[n - 1]?.url ?? null }));
      return h("li", { class: `${PREFIX}-turn` }, [h("p", { class: `${PREFIX}-turn-question` }, [t.question]), answer]);
    }));
    this.threadList.hidden = !turns.length;
  }

  /** The model's suggested follow-ups, as buttons that ask them ([]: none). @param {string[]} questions */
  showFollowUps(questions) {
    this.followUps.replaceChildren();
    this.followUps.hidden = !questions.length;
    if (!questions.length) return;
    this.followUps.append(
      h("p", { class: `${PREFIX}-follow-ups-title` }, ["Ask next"]),
      h("ul", { class: `${PREFIX}-follow-up-list` }, questions.map((q) => {
        const button = h("button", { type: "button", class: `${PREFIX}-follow-up` }, [q]);
        button.addEventListener("click", () => this.askFollowUp(q));
        return h("li", {}, [button]);
      })),
    );
  }

  /** The thumbs, unpressed (shown for an answer, else hidden). @param {boolean} show */
  resetFeedback(show) {
    this.feedback.hidden = !show;
    for (const thumb of this.thumbs) thumb.setAttribute("aria-pressed", "false");
    for (const button of this.reasons.querySelectorAll("button")) button.removeAttribute("aria-pressed");
    this.reasons.hidden = true;
    this.feedbackNote.replaceChildren();
  }

  /** A thumb pressed: up thanks, down asks what was wrong. @param {string} vote */
  vote(vote) {
    for (const thumb of this.thumbs) thumb.setAttribute("aria-pressed", String(thumb.getAttribute("data-vote") === vote));
    this.reasons.hidden = vote !== "down";
    this.feedbackNote.replaceChildren(vote === "down" ? "What was wrong?" : "Thanks for the feedback.");
    if (vote === "down") /** @type {HTMLElement | null} */ (this.reasons.querySelector("button"))?.focus();
  }

  /**
   * The reason of a thumbs down. With the site's feedback URL, its form opens in a new tab,
   * prefilled with the question, the reason, the answer's beginning, the sources and a
   * golden-set entry to complete; the reader decides to submit it. Without one, nothing
   * leaves the page.
   * @param {keyof typeof REASONS} reason
   */
  report(reason) {
    for (const button of this.reasons.querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(button.getAttribute("data-reason") === reason));
    }
    this.reasons.hidden = true;
    const live = this.live;
    const template = this.dialog.feedback ?? "";
    if (!live || !template) {
      this.feedbackNote.replaceChildren("Thanks for the feedback.");
      return;
    }
    const own = live.recorded && this.thread.at(-1)?.question === live.question; // the last turn is this one
    const earlier = earlierQuestions(own ? this.thread.slice(0, -1) : this.thread);
    const { answer } = parseFollowUps(liveText(live));
    const text = answerReportText({ question: live.question, reason, answer, sources: live.sources, earlier });
    const url = feedbackUrl(template, live.question, live.sources, text);
    if (!url) {
      this.feedbackNote.replaceChildren("Thanks for the feedback.");
      return;
    }
    window.open(url, "_blank", "noopener,noreferrer");
    this.feedbackNote.replaceChildren("Thanks. A prefilled report opened in a new tab (",
      h("a", { href: url, target: "_blank", rel: "noopener noreferrer", class: `${PREFIX}-report-link` }, ["open it again"]),
      "); nothing is sent until you submit it there.");
  }

  /**
   * An extra call starts: a line of the steps list says so until it ends.
   * @param {"rewrite" | "judge"} kind @param {Passage | null} passage @param {string} model
   */
  stepStarted(kind, passage, model) {
    this.stepsList.hidden = false;
    const text = kind === "rewrite" ? `${model} writes search queries for the question…`
      : `${model} judges “${passage?.title ?? ""}”…`;
    this.stepsList.append(h("li", { class: `${PREFIX}-ask-step`, "data-kind": kind, "data-state": "running" }, [text]));
  }

  /**
   * An extra call ended: its line says what it gave, its time and its tokens.
   * @param {import("../llm/context.js").Step} step
   */
  stepEnded(step) {
    this.steps.push(step);
    const line = /** @type {HTMLElement | null} */ (this.stepsList.lastElementChild);
    if (!line) return;
    const tokens = `${step.promptTokens}+${step.completionTokens} tokens${step.estimated ? " (estimated)" : ""}`;
    const cost = ` (${(step.ms / 1000).toFixed(2)} s, ${tokens})`;
    let text;
    if (step.error) {
      text = `Failed after ${(step.ms / 1000).toFixed(2)} s: ${step.error}`;
    } else if (step.kind === "rewrite") {
      text = step.result.length ? `Search queries: ${step.result.map((/** @type {string} */ q) => `“${q}”`).join(", ")}`
        : "No usable search query: the question alone";
    } else {
      const title = step.passage?.title ?? "";
      text = step.result === true ? `Relevant: ${title}` : step.result === false ? `Not relevant, not sent: ${title}`
        : `Kept (no clear verdict): ${title}`;
    }
    line.textContent = text + (step.error ? "" : cost);
    line.setAttribute("data-state", step.error ? "failed" : "done");
    if (step.kind === "judge" && !step.error) line.setAttribute("data-verdict", String(step.result));
  }

  clearNote() {
    this.note.hidden = true;
    this.note.replaceChildren();
    this.note.removeAttribute("data-kind");
  }

  /** A note that is not an error (no results, nothing fits, an empty answer). @param {string} text @param {string} kind */
  showNote(text, kind) {
    this.note.hidden = false;
    this.note.replaceChildren(h("div", { class: `${PREFIX}-ask-note-line` }, [text]));
    this.note.setAttribute("data-kind", kind);
  }

  /**
   * An error: one short line, and the whole message under "Details" (both Markdown: the
   * messages write commands in backticks), and the panel's data-error-kind.
   * @param {string} kind @param {string} message @param {number} [status]
   */
  showError(kind, message, status = 0) {
    const { line, details } = errorSummary(kind, message, status);
    const lineNode = h("div", { class: `${PREFIX}-ask-note-line` });
    lineNode.append(renderMarkdown(line, { doc: document }));
    const parts = [lineNode];
    if (details) {
      const body = h("div", { class: `${PREFIX}-ask-details-body` });
      body.append(renderMarkdown(details, { doc: document }));
      parts.push(h("details", { class: `${PREFIX}-ask-details` }, [h("summary", {}, ["Details"]), body]));
    }
    this.note.replaceChildren(...parts);
    this.note.hidden = false;
    this.note.setAttribute("data-kind", kind);
    this.slot.setAttribute("data-error-kind", kind === "settings" ? "invalid" : kind);
    this.slot.setAttribute("data-state", "error");
  }

  /**
   * Ask the model about `results` (the top ASK_PASSAGES of them), after the conversation so
   * far. Whatever answers (plan(): an endpoint, the built-in model, a GGUF model), the same
   * path: an in-browser model is made ready first (consent, download, start: ask_local.js),
   * then the passages, the messages, and the answer streamed from the backend's adapter
   * (answer_stream.js).
   * @param {string} question @param {Passage[]} results
   */
  async start(question, results) {
    const plan = this.plan();
    if (!plan) return;
    const { settings } = plan;
    this.stop();
    this.recordLive();
    const thread = this.thread.slice(); // the earlier turns
    this.resetAnswer(question);
    const run = this.run;
    const state = (/** @type {string} */ s) => this.slot.setAttribute("data-state", s);
    this.slot.setAttribute("data-backend", plan.kind);
    this.slot.removeAttribute("data-citations");
    // the passages come from the worker first (an await): the last answer's state must not linger
    state("searching");
    if (!results.length) {
      state("done");
      this.showNote(`No search results for “${question}”: nothing to ask the model about.`, "empty");
      return;
    }
    const invalid = (/** @type {unknown} */ err) => this.showError("settings", /** @type {Error} */ (err).message);
    let budget;
    try {
      budget = passageBudget(question, ASK_PASSAGES, settings, thread);
    } catch (err) {
      invalid(err);
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    this.stopButton.hidden = false;
    const finish = () => {
      this.stopButton.hidden = true;
      if (this.controller === controller) this.controller = null;
    };
    /** @param {unknown} err @param {import("../llm/llm.js").LLMErrorKind} kind */
    const asError = (err, kind) => (err instanceof LLMError ? err
      : new LLMError(kind, String(/** @type {any} */ (err)?.message ?? err)));
    /** @type {import("../llm/answer_stream.js").Adapter} */
    let adapter;
    if (plan.kind === "endpoint") {
      adapter = endpointAdapter(settings);
    } else {
      try {
        adapter = await this.local.prepare(plan, { area: this.answer, setState: state, signal: controller.signal });
      } catch (err) {
        if (run !== this.run) return;
        const e = asError(err, "model");
        this.answer.replaceChildren();
        this.showError(e.kind, e.message, e.status);
        finish();
        return;
      }
      if (run !== this.run) return;
      this.answer.replaceChildren();
      state("searching");
    }
    const who = plan.kind === "gguf" ? `${adapter.model} (in this browser)` : adapter.model;
    // the passages from the search worker, sized to the context; the results shown if it fails
    const search = async (/** @type {string[]} */ queries) => {
      try {
        return await this.dialog.passages(queries, ASK_PASSAGES, budget);
      } catch {
        return results.slice(0, ASK_PASSAGES);
      }
    };
    /** @type {import("../llm/context.js").Complete} */
    const complete = (messages, maxTokens) => adapter.complete(messages, maxTokens, controller.signal);
    if (settings.multi_query || settings.filter_passages) state("preparing");
    let context;
    try {
      context = await gatherContext({
        question, search, project: settings.project, complete, thread,
        multiQuery: settings.multi_query, filterPassages: settings.filter_passages,
        onStepStart: (kind, passage) => { if (run === this.run) this.stepStarted(kind, passage, adapter.model); },
        onStep: (step) => { if (run === this.run) this.stepEnded(step); },
      });
    } catch (err) { // the reader's Stop
      if (run !== this.run) return;
      const e = asError(err, "aborted");
      this.showError(e.kind, e.message, e.status);
      finish();
      return;
    }
    if (run !== this.run) return;
    let built;
    try {
      built = buildMessages(question, context.passages, settings, thread);
    } catch (err) {
      invalid(err);
      finish();
      return;
    }
    const sent = built.passages;
    this.messages = built.messages;
    const urls = sent.map((p) => new URL(p.url, this.siteRoot).href);
    this.renderSources(sent, urls);
    const live = { question, text: "", hold: new FollowUpHold(), recorded: false,
      sources: sent.map((p, i) => ({ title: p.title, url: urls[i] })) };
    this.live = live;
    if (!sent.length) {
      this.showNote(`No passage fits in max_context_tokens=${settings.max_context_tokens}: the model ` +
        "gets the question alone.", "warning");
    }
    const timings = /** @type {Timings} */ ({ start: performance.now(), firstToken: null, end: null });
    this.timings = timings;
    state("waiting");
    this.answer.setAttribute("aria-busy", "true");
    this.answer.replaceChildren(h("p", { class: `${PREFIX}-waiting` }, [`Asking ${who}…`]));
    let text = "";
    // A Content-Security-Policy without the endpoint in connect-src makes fetch fail like a
    // stopped server; the page is told of the violation, so the error can say so.
    /** @type {string[]} */
    const blocked = [];
    const onViolation = (/** @type {SecurityPolicyViolationEvent} */ e) => {
      if (/connect-src|default-src/.test(e.effectiveDirective || e.violatedDirective)) blocked.push(e.blockedURI);
    };
    document.addEventListener("securitypolicyviolation", onViolation);
    /** @type {MarkdownStream | null} */
    let markdown = null; // made at the first piece: it replaces "Asking…"
    const renderer = new FrameRenderer((budget) => markdown?.render(budget) ?? true);
    this.renderer = renderer;
    // the answer as shown: all but a follow-up list (held back while it streams, read at the end)
    const hold = live.hold;
    const show = (/** @type {string} */ piece) => {
      if (!piece) return;
      markdown ??= new MarkdownStream(this.answer, {
        doc: document, citationUrl: (n) => urls[n - 1] ?? null, groupClass: `${PREFIX}-blocks`,
      });
      markdown.push(piece);
      renderer.request();
    };
    /** The stream ended (or broke): the rest of the answer shown, its follow-ups read. */
    const settle = () => {
      hold.end();
      show(hold.takeUpTo(parseFollowUps(hold.text).answer.length));
      if (markdown) {
        markdown.close();
        return renderer.drain();
      }
      this.answer.replaceChildren();
      return Promise.resolve(true);
    };
    let ok = false;
    try {
      await streamAnswer(adapter, {
        messages: built.messages,
        temperature: settings.temperature,
        maxTokens: plan.kind === "endpoint" ? ANSWER_RESERVE_TOKENS : LOCAL_ANSWER_TOKENS,
        timeoutMs: settings.timeout * 1000,
        maxChars: settings.max_answer_chars,
        signal: controller.signal,
        onToken: (piece) => {
          if (run !== this.run) return;
          if (timings.firstToken === null) {
            timings.firstToken = performance.now();
            state("streaming");
          }
          text += piece;
          hold.push(piece);
          show(hold.take());
          if (!markdown) this.answer.replaceChildren(); // nothing to show yet: "Asking…" goes
        },
      });
      if (run !== this.run) return;
      if (!(await settle())) return; // the rest of a fast stream, frame by frame
      if (!text.trim()) this.showNote(`${adapter.model} returned an empty answer.`, "empty");
      else this.checkCitations(parseFollowUps(text).answer, sent.length);
      state("done");
      ok = true;
    } catch (err) {
      if (run !== this.run) return;
      let e = asError(err, "invalid");
      const origin = plan.kind === "endpoint" ? new URL(settings.endpoint).origin : "";
      if (origin && (e.kind === "unreachable" || e.kind === "cors")) {
        await new Promise((r) => setTimeout(r, 50)); // violation events are queued after the rejection
        if (run !== this.run) return;
      }
      if (origin && (e.kind === "unreachable" || e.kind === "cors") && blocked.some((u) => u.startsWith(origin))) {
        e = new LLMError("csp", `This site's Content-Security-Policy does not allow connections to ${origin} ` +
          `(connect-src), so Ask cannot reach the LLM server: the site must allow it, e.g. ` +
          `\`connect-src 'self' ${origin}\`.`);
      }
      if (!(await settle())) return; // what arrived (the partial answer) stays
      this.showError(e.kind, e.message, e.status);
    } finally {
      renderer.cancel();
      document.removeEventListener("securitypolicyviolation", onViolation);
      if (run === this.run) {
        timings.end = performance.now();
        this.answer.setAttribute("aria-busy", "false");
        this.stopButton.hidden = true;
        if (this.controller === controller) this.controller = null;
        this.disclaimer.hidden = !text.trim();
        this.disclaimer.textContent = `Generated by ${this.backendName(plan.kind, adapter)} from the sources above: ` +
          "check them.";
        const { questions } = this.recordLive();
        if (ok) this.showFollowUps(questions);
        this.resetFeedback(ok && Boolean(text.trim()));
      }
    }
  }

  /**
   * What answered, as the note under the answer names it.
   * @param {"endpoint" | "builtin" | "gguf"} kind @param {import("../llm/answer_stream.js").Adapter} adapter
   */
  backendName(kind, adapter) {
    if (kind !== "gguf") return adapter.model;
    const engine = /** @type {any} */ (adapter);
    const how = engine.gpu ? "WebGPU" : `wasm, ${engine.threads ?? 1} thread${engine.threads === 1 ? "" : "s"}`;
    return `${adapter.model}, in this browser (${how})`;
  }

  /**
   * An answer that cites none of its passages, or one it was not given, is shown as such
   * (llm/thread.js citationCheck): a note, and the panel's data-citations (ok | none | unknown).
   * @param {string} answer @param {number} sent
   */
  checkCitations(answer, sent) {
    const { cited, unknown } = citationCheck(answer, sent);
    if (unknown.length) {
      const numbers = unknown.map((n) => `[${n}]`).join(", ");
      this.slot.setAttribute("data-citations", "unknown");
      this.showNote(`This answer cites ${numbers}, which it was not given (${sent} passage${sent === 1 ? "" : "s"} ` +
        "sent): check it against the sources below.", "citations");
    } else if (sent && !cited.length) {
      this.slot.setAttribute("data-citations", "none");
      this.showNote("This answer cites none of the passages it was given: check it against the sources below.",
        "citations");
    } else {
      this.slot.setAttribute("data-citations", "ok");
    }
  }

  /** @param {{title: string, url: string, text?: string, id?: string}[]} sent @param {string[]} urls */
  renderSources(sent, urls) {
    this.sourcesList.replaceChildren(...sent.map((p, i) => {
      const link = h("a", { href: urls[i], class: `${PREFIX}-ask-source` });
      titleParts(p.title).forEach((part, j) => {
        if (j) link.append(h("span", { class: `${PREFIX}-sep`, "aria-hidden": "true" }, [" › "]));
        link.append(part);
      });
      const body = p.text ? displayText(p.text, p.title) : "";
      const excerpt = body.length > 90 ? `${body.slice(0, 90).replace(/\s+\S*$/, "")}…` : body;
      return h("li", { "data-id": p.id ?? "" }, [link, h("span", { class: `${PREFIX}-source-text` }, [excerpt])]);
    }));
    this.sources.hidden = !sent.length;
  }
}
