// @ts-check
/**
 * Ask with nothing to install: which backend answers, and what an in-browser model costs
 * the reader before it costs anything.
 *
 * Three backends, taken in this order (the reader may pick one in the settings):
 * 1. an LLM server (the site's `sphinx_rag_llm` or the reader's endpoint: ask.js, llm.js);
 * 2. the browser's built-in model (the Prompt API, llm/prompt_api.js), where the browser has
 *    one and the site allows it (`sphinx_rag_llm_browser`'s `builtin`);
 * 3. a GGUF model run by wllama in a worker (llm/wllama_engine.js, its own bundle): the
 *    site's (`sphinx_rag_llm_browser`'s url, sha256, bytes, name) or one the reader named.
 * The Ask button says which ("Ask SmolLM2 135M, in this browser"), and so do the waiting
 * line and the note under the answer.
 *
 * The GGUF model is opt-in and says what it costs: before the first byte, the answer area
 * asks once "answer with NAME, run in this browser? It downloads N MB once …" (the reader's
 * yes is kept per file in localStorage, LOCAL_KEY); with Save-Data, a slow or cellular
 * connection or little memory (model_policy.js's holdReason) it asks every time, saying
 * why. Then the download's progress, the check (llm/gguf_file.js: from its URL only, its
 * size and sha256), and the model's start ("wasm, 1 thread"). A file kept from an earlier
 * visit starts at once, without asking. "Remove" in the settings frees it (and asks again
 * next time). The built-in model, when the browser must first download it ("downloadable"),
 * is asked for the same way.
 *
 * Nothing of this loads or fetches before the reader asks a question with an in-browser
 * backend: the built-in model's availability() is a local call, the bundle and the wasm
 * are imported only after the consent, and the model file comes only from its URL.
 *
 * @module ask_local
 */

import { BUILTIN_CONTEXT_TOKENS, builtinAdapter, builtinAvailability, promptApi } from "../llm/prompt_api.js";
import { cachedBlob, loadModelFile, megabytes, readerModel, removeCached, siteModel } from "../llm/gguf_file.js";
import { LLMError } from "../llm/llm.js";
import { h } from "./dom.js";
import { holdReason } from "./model_policy.js";

const PREFIX = "sphinx-rag";
/** localStorage key of the reader's choices: {choice, url, sha256, learned, agreed}. */
export const LOCAL_KEY = "sphinx-rag-llm-local";
/** @typedef {"auto" | "endpoint" | "builtin" | "gguf"} Choice */
/** @type {Choice[]} */
export const CHOICES = ["auto", "endpoint", "builtin", "gguf"];
/** @type {Record<Choice, string>} */
const CHOICE_LABELS = {
  auto: "Automatic", endpoint: "An LLM server", builtin: "The browser’s built-in model", gguf: "A model run in this page",
};
/** Bytes of wllama's wasm (js/build.mjs defines it; 0 unbundled). */
export const RUNTIME_BYTES = Number(/** @type {any} */ (globalThis).SPHINX_RAG_WLLAMA_BYTES) || 0;
/** The bundle holding wllama, beside searchbar.js (js/build.mjs). */
export const ENGINE_FILE = "wllama-ask.js";
export const WASM_FILE = "wllama.wasm";

/**
 * @typedef {import("../llm/prompt_api.js").Availability} Availability
 * @typedef {import("../llm/gguf_file.js").ModelFile} ModelFile
 * @typedef {import("../llm/answer_stream.js").Adapter} Adapter
 * @typedef {{choice: Choice, url: string, sha256: string, learned: boolean, agreed: string[]}} LocalSettings
 *   url, sha256: the reader's GGUF file ("": none; sha256 learned at its first download when
 *   the reader gave none); agreed: the files (sha256, else URL) the reader agreed to download
 * @typedef {{builtin: boolean, gguf: boolean, model: unknown}} SiteLocal  manifest settings.llm_browser
 * @typedef {{kind: "endpoint" | "builtin" | "gguf", label: string, contextTokens: number}} Plan
 *   label: what the reader is told answers ("SmolLM2 135M, in this browser")
 * @typedef {{cached: boolean, fetchMs: number, startMs: number, bytes: number, threads: number}} LoadReport
 *   fetchMs: the file read (kept) or downloaded and checked; startMs: the model started in its worker
 */

/** @returns {LocalSettings} */
const emptyLocal = () => ({ choice: "auto", url: "", sha256: "", learned: false, agreed: [] });

/**
 * The reader's choices from storage (defaults for anything missing or malformed).
 * @param {Storage | null} storage
 * @returns {LocalSettings}
 */
export function readLocal(storage) {
  let value;
  try {
    value = JSON.parse(storage?.getItem(LOCAL_KEY) ?? "null");
  } catch {
    value = null;
  }
  const out = emptyLocal();
  if (!value || typeof value !== "object") return out;
  if (CHOICES.includes(value.choice)) out.choice = value.choice;
  if (typeof value.url === "string") out.url = value.url.trim().slice(0, 2000);
  if (typeof value.sha256 === "string" && /^[0-9a-f]{64}$/.test(value.sha256)) out.sha256 = value.sha256;
  out.learned = value.learned === true && Boolean(out.sha256);
  if (Array.isArray(value.agreed)) out.agreed = value.agreed.filter((/** @type {unknown} */ k) => typeof k === "string").slice(-20);
  return out;
}

/**
 * Keep the reader's choices (false if the browser refuses).
 * @param {Storage | null} storage @param {LocalSettings} value
 */
export function writeLocal(storage, value) {
  try {
    if (!storage) return false;
    const empty = value.choice === "auto" && !value.url && !value.agreed.length;
    if (empty) storage.removeItem(LOCAL_KEY);
    else storage.setItem(LOCAL_KEY, JSON.stringify(value));
    return true;
  } catch {
    return false;
  }
}

/**
 * The site's part (manifest settings.llm_browser): older manifests have none, and then
 * the built-in model and a reader's file are allowed (the defaults).
 * @param {unknown} value
 * @returns {SiteLocal}
 */
export function siteLocal(value) {
  const v = /** @type {any} */ (value);
  if (!v || typeof v !== "object") return { builtin: true, gguf: true, model: null };
  return { builtin: v.builtin !== false, gguf: v.gguf !== false, model: v.gguf === false ? null : v.model ?? null };
}

/**
 * Why the download should be confirmed every time ("" when nothing says so): the browser
 * asks to save data, the connection is slow or cellular, or the device has little memory.
 * @param {import("./model_policy.js").NavigatorLike & {connection?: {type?: string} | null}} nav
 */
export function downloadHold(nav) {
  const why = holdReason(nav);
  if (why) return why;
  return nav.connection?.type === "cellular" ? "cellular connection" : "";
}

/**
 * Whether this browser can run the GGUF model: a secure context (Cache Storage,
 * SubtleCrypto) with WebAssembly Memory64 (wllama's build). "" when it can, else why not.
 * @param {any} [win]
 */
export function ggufSupport(win = globalThis) {
  if (!win.isSecureContext || !win.caches || !win.crypto?.subtle) {
    return "an in-browser model needs the page over https (or on localhost)";
  }
  const Memory = win.WebAssembly?.Memory;
  for (const key of ["address", "index"]) {
    try {
      new Memory({ [key]: "i64", initial: 1n, maximum: 1n });
      return "";
    } catch {
      // this spelling is not known: the other one, or none
    }
  }
  return "this browser cannot run the in-browser model (it needs WebAssembly Memory64)";
}

/**
 * Which backend answers: the reader's choice when it can, else the first of the order.
 * @param {{choice: Choice, endpoint: boolean, builtin: Availability, gguf: boolean}} can
 *   endpoint: an endpoint is set; builtin: the built-in model's availability; gguf: a GGUF
 *   model is named and this browser runs it
 * @returns {"endpoint" | "builtin" | "gguf" | null}
 */
export function chooseBackend({ choice, endpoint, builtin, gguf }) {
  const ok = { endpoint, builtin: builtin !== "unavailable", gguf };
  if (choice !== "auto" && ok[choice]) return choice;
  return /** @type {const} */ (["endpoint", "builtin", "gguf"]).find((k) => ok[k]) ?? null;
}

/**
 * The consent line of a GGUF file ("" parts left out).
 * @param {ModelFile} model @param {boolean} runtime  whether wllama's files are still to fetch
 * @param {string} hold  downloadHold's reason ("" none)
 */
export function consentText(model, runtime, hold) {
  const size = model.bytes ? megabytes(model.bytes) : "a file of unknown size";
  const extra = runtime && RUNTIME_BYTES ? ` (and the ${megabytes(RUNTIME_BYTES)} runtime)` : "";
  const host = new URL(model.url).host;
  const why = hold ? ` Your browser reports ${hold}.` : "";
  return `Answer with ${model.name}, run in this browser? It downloads ${size}${extra} once, from ${host}, ` +
    `and keeps it in this browser (Remove it in the settings); your question stays on this device.${why}`;
}

export class LocalAnswers {
  /**
   * @param {{siteRoot: URL, assetBase: URL, storage: Storage | null, win?: any, onChange: () => void}} options
   *   assetBase: where searchbar.js is (the engine's bundle and wasm are beside it)
   */
  constructor({ siteRoot, assetBase, storage, win = globalThis, onChange }) {
    this.siteRoot = siteRoot;
    this.assetBase = assetBase;
    this.storage = storage;
    this.win = win;
    this.onChange = onChange;
    /** @type {SiteLocal} */
    this.site = { builtin: false, gguf: false, model: null };
    /** @type {Availability} the built-in model's, once probed (probeBuiltin) */
    this.builtin = "unavailable";
    this.probed = false;
    this.language = (win.document?.documentElement?.lang || "en").split("-")[0].toLowerCase();
    /** @type {{key: string, adapter: Adapter & {threads?: number, gpu?: boolean, timings?: any, exit?: () => Promise<void>}} | null} */
    this.engine = null;
    /** @type {Promise<any> | null} the engine's bundle, once imported */
    this.bundle = null;
    /** @type {LoadReport | null} how the last model file came (for tests and benchmarks) */
    this.lastLoad = null;
    this.buildSection();
  }

  /** The site's settings arrived (manifest settings.llm_browser). @param {unknown} value */
  setSite(value) {
    this.site = siteLocal(value);
    this.refresh();
  }

  /**
   * Ask the browser, once, whether its built-in model can answer (availability(): a local
   * call, no download), when that decides whether Ask shows: no endpoint is set, the site
   * allows it and the browser has the API. Chromium logs a warning for the call when its
   * on-device model service is not running; a page that has an endpoint never makes it.
   */
  probeBuiltin() {
    if (this.probed || !this.site.builtin || !promptApi(this.win)) return;
    this.probed = true;
    builtinAvailability(this.win, this.language).then((a) => {
      this.builtin = a;
      this.refresh();
      if (a !== "unavailable") this.onChange();
    });
  }

  /** The reader's choices. */
  local() {
    return readLocal(this.storage);
  }

  /** The GGUF model that would run: the reader's file, else the site's; null when none. @returns {ModelFile | null} */
  model() {
    if (!this.site.gguf) return null;
    const local = this.local();
    if (local.url) {
      try {
        const model = readerModel(local.url, local.sha256, this.siteRoot);
        return { ...model, sha256: local.sha256 };
      } catch {
        return null;
      }
    }
    return siteModel(this.site.model, this.siteRoot);
  }

  /**
   * What answers the next question, given whether an endpoint is set.
   * @param {boolean} endpoint
   * @returns {Plan | null}
   */
  plan(endpoint) {
    if (!endpoint) this.probeBuiltin();
    const model = this.model();
    const kind = chooseBackend({ choice: this.local().choice, endpoint, builtin: this.site.builtin ? this.builtin : "unavailable",
      gguf: Boolean(model) && !ggufSupport(this.win) });
    if (kind === "endpoint") return { kind, label: "", contextTokens: 0 };
    if (kind === "builtin") return { kind, label: "the browser’s built-in model", contextTokens: BUILTIN_CONTEXT_TOKENS };
    if (kind === "gguf" && model) return { kind, label: `${model.name}, in this browser`, contextTokens: model.contextTokens };
    return null;
  }

  /**
   * The adapter for `plan`, after the reader's consent where it is needed: the answer area
   * shows the question, the download's progress and the model's start. Rejects with an
   * LLMError ("declined": the reader said not now; "download", "model", "aborted").
   * @param {Plan} plan
   * @param {{area: HTMLElement, setState: (state: string) => void, signal: AbortSignal}} ui
   * @returns {Promise<Adapter>}
   */
  async prepare(plan, ui) {
    if (plan.kind === "builtin") return this.prepareBuiltin(ui);
    const model = this.model();
    if (!model) throw new LLMError("model", "No in-browser model is set.");
    return this.prepareGguf(model, ui);
  }

  /** @param {{area: HTMLElement, setState: (state: string) => void, signal: AbortSignal}} ui */
  async prepareBuiltin(ui) {
    this.builtin = await builtinAvailability(this.win, this.language);
    if (this.builtin === "unavailable") throw new LLMError("model", "The browser’s built-in model is not available.");
    if (this.builtin !== "available" && !this.agreed("builtin")) {
      await this.askConsent(ui, "Answer with your browser’s built-in model? Your browser downloads it first " +
        "(several GB, once for every site that uses it); your question stays on this device.", "Download and answer");
      this.agree("builtin");
    }
    /** @type {HTMLProgressElement | null} */
    let bar = null;
    const adapter = builtinAdapter({
      win: this.win, language: this.language,
      onProgress: (fraction) => {
        if (!bar) {
          ui.setState("downloading");
          bar = this.progress(ui.area, "Your browser downloads its built-in model…");
        }
        bar.max = 1;
        bar.value = fraction;
      },
    });
    return adapter;
  }

  /**
   * @param {ModelFile} model
   * @param {{area: HTMLElement, setState: (state: string) => void, signal: AbortSignal}} ui
   */
  async prepareGguf(model, ui) {
    const key = model.sha256 || model.url;
    if (this.engine?.key === key) return this.engine.adapter;
    await this.stopEngine();
    const kept = model.sha256 ? await cachedBlob(model.sha256, model.bytes, this.win.caches ?? null) : null;
    const hold = downloadHold(this.win.navigator ?? {});
    if (!kept && (hold || !this.agreed(key))) {
      await this.askConsent(ui, consentText(model, !this.bundle, hold),
        model.bytes ? `Download ${megabytes(model.bytes)} and answer` : "Download and answer");
      this.agree(key);
    }
    const started = performance.now();
    let bar = /** @type {HTMLProgressElement | null} */ (null);
    if (!kept) {
      ui.setState("downloading");
      bar = this.progress(ui.area, `Downloading ${model.name}…`);
    }
    const bundle = this.importEngine(); // the runtime downloads with the model
    let loaded;
    try {
      loaded = kept ? { blob: kept, sha256: model.sha256, cached: true, kept: true }
        : await loadModelFile(model, {
          signal: ui.signal, caches: this.win.caches ?? null,
          onProgress: (done, total) => {
            if (!bar) return;
            if (total) bar.max = total;
            bar.value = done;
            const label = /** @type {HTMLElement} */ (bar.previousElementSibling);
            label.textContent = `Downloading ${model.name}: ${megabytes(done)}${total ? ` of ${megabytes(total)}` : ""}`;
          },
        });
    } catch (err) {
      if (err instanceof LLMError && err.kind === "download") this.forget(key);
      throw err;
    }
    const fetched = performance.now();
    if (model.source === "reader" && !model.sha256) this.learn(model.url, loaded.sha256);
    ui.setState("loading");
    const threads = /** @type {any} */ (await bundle.catch(() => /** @type {null} */ (null)))?.threadCount?.() ?? 1;
    const how = this.win.crossOriginIsolated ? `wasm, ${threads} thread${threads === 1 ? "" : "s"}` : "wasm, 1 thread";
    ui.area.replaceChildren(h("p", { class: `${PREFIX}-waiting` }, [`Starting ${model.name} (${how})…`]));
    let engine;
    try {
      const mod = await bundle;
      engine = await mod.startEngine({
        wasmUrl: new URL(WASM_FILE, this.assetBase).href, blob: loaded.blob, name: model.name,
        contextTokens: model.contextTokens,
      });
    } catch (err) {
      throw new LLMError("model", `${model.name} could not start in this browser: ` +
        `${String(/** @type {any} */ (err)?.message ?? err).slice(0, 200)}`, { cause: err });
    }
    if (ui.signal.aborted) {
      this.engine = { key, adapter: engine }; // started: the next question uses it
      throw new LLMError("aborted", "Stopped.");
    }
    this.engine = { key, adapter: engine };
    this.lastLoad = { cached: loaded.cached, fetchMs: fetched - started, startMs: performance.now() - fetched,
      bytes: loaded.blob.size, threads: engine.threads ?? 1 };
    this.refresh();
    return engine;
  }

  /** The running model stops (its worker and memory freed). */
  async stopEngine() {
    const engine = this.engine;
    this.engine = null;
    try {
      await engine?.adapter.exit?.();
    } catch {
      // stopped already
    }
  }

  /** The engine's bundle (imported once, by URL: never part of searchbar.js). */
  importEngine() {
    this.bundle ??= import(/* webpackIgnore: true */ new URL(ENGINE_FILE, this.assetBase).href);
    return this.bundle;
  }

  /**
   * Ask the reader in the answer area; resolves on yes, rejects ("declined") on no or Stop.
   * @param {{area: HTMLElement, setState: (state: string) => void, signal: AbortSignal}} ui
   * @param {string} text @param {string} yes  the button's label
   * @returns {Promise<void>}
   */
  askConsent(ui, text, yes) {
    ui.setState("consent");
    const accept = h("button", { type: "button", class: `${PREFIX}-consent-yes` }, [yes]);
    const refuse = h("button", { type: "button", class: `${PREFIX}-consent-no` }, ["Not now"]);
    ui.area.replaceChildren(h("div", { class: `${PREFIX}-consent`, role: "group", "aria-label": "Download a model?" }, [
      h("p", {}, [text]), h("div", { class: `${PREFIX}-consent-actions` }, [accept, refuse]),
    ]));
    accept.focus();
    return new Promise((resolve, reject) => {
      const declined = () => reject(new LLMError("declined", "Not downloaded: nothing was fetched. Ask again to choose again."));
      accept.addEventListener("click", () => resolve(undefined), { once: true });
      refuse.addEventListener("click", declined, { once: true });
      ui.signal.addEventListener("abort", declined, { once: true });
    });
  }

  /** A progress bar under its label, in `area`. @param {HTMLElement} area @param {string} label */
  progress(area, label) {
    const bar = /** @type {HTMLProgressElement} */ (h("progress", { class: `${PREFIX}-download` }));
    area.replaceChildren(h("div", { class: `${PREFIX}-download-box` }, [h("p", { class: `${PREFIX}-waiting` }, [label]), bar]));
    return bar;
  }

  /** @param {string} key */
  agreed(key) {
    return this.local().agreed.includes(key);
  }

  /** @param {string} key */
  agree(key) {
    const local = this.local();
    if (!local.agreed.includes(key)) writeLocal(this.storage, { ...local, agreed: [...local.agreed, key] });
  }

  /** @param {string} key */
  forget(key) {
    const local = this.local();
    writeLocal(this.storage, { ...local, agreed: local.agreed.filter((k) => k !== key) });
  }

  /** A reader's file without a hash: the one it was kept under. @param {string} url @param {string} sha256 */
  learn(url, sha256) {
    const local = this.local();
    if (local.url === url) writeLocal(this.storage, { ...local, sha256, learned: true });
  }

  // -- the settings section ---------------------------------------------------------------------

  buildSection() {
    const id = (/** @type {string} */ s) => `${PREFIX}-${s}`;
    this.choiceSelect = /** @type {HTMLSelectElement} */ (h("select", {
      id: id("answer-backend"), name: "answer-backend", "aria-describedby": id("answer-backend-note"),
    }, CHOICES.map((c) => h("option", { value: c }, [CHOICE_LABELS[c]]))));
    this.choiceNote = h("p", { id: id("answer-backend-note"), class: id("answer-backend-note") });
    const field = (/** @type {string} */ name, /** @type {string} */ label, /** @type {Record<string, string>} */ attrs) => {
      const input = /** @type {HTMLInputElement} */ (h("input", {
        id: id(`llm-${name}`), name, type: "text", autocomplete: "off", spellcheck: "false", autocapitalize: "off", ...attrs,
      }));
      return { input, row: h("div", { class: id("field") }, [h("label", { for: input.id }, [label]), input]) };
    };
    const url = field("gguf-url", "Model file (GGUF URL)", { inputmode: "url", placeholder: "https://…/model.gguf" });
    const sha = field("gguf-sha256", "Its sha256 (optional)", { placeholder: "64 hex digits" });
    this.urlInput = url.input;
    this.shaInput = sha.input;
    this.modelStatus = h("p", { class: id("model-file-status") });
    this.removeButton = h("button", { type: "button", class: id("model-remove"), hidden: "" }, ["Remove"]);
    this.removeButton.addEventListener("click", () => this.remove());
    this.section = h("div", { class: id("local-llm") }, [
      h("div", { class: id("field") }, [h("label", { for: this.choiceSelect.id }, ["Answers from"]), this.choiceSelect]),
      this.choiceNote,
      h("div", { class: id("fields") }, [url.row, sha.row]),
      h("div", { class: id("model-file") }, [this.modelStatus, this.removeButton]),
    ]);
  }

  /** The section's fields from the stored choices (the settings panel opens). */
  fill() {
    const local = this.local();
    this.choiceSelect.value = local.choice;
    this.urlInput.value = local.url;
    this.shaInput.value = local.learned ? "" : local.sha256;
    const site = siteModel(this.site.model, this.siteRoot);
    this.urlInput.placeholder = site ? site.url : "https://…/model.gguf";
    this.refresh();
  }

  /**
   * The section's values, checked: the choices to keep, or the message and the field at fault.
   * @returns {{value: LocalSettings} | {error: string, input: HTMLElement}}
   */
  readForm() {
    const local = this.local();
    const choice = /** @type {Choice} */ (this.choiceSelect.value);
    const url = this.urlInput.value.trim();
    const sha = this.shaInput.value.trim().toLowerCase();
    if (!url && sha) return { error: "Enter the model file’s URL for this sha256, or clear it.", input: this.urlInput };
    if (url) {
      try {
        readerModel(url, sha, this.siteRoot);
      } catch (err) {
        return { error: /** @type {Error} */ (err).message, input: sha && !/^[0-9a-f]{64}$/.test(sha) ? this.shaInput : this.urlInput };
      }
    }
    const sameFile = url === local.url && (!sha || sha === local.sha256);
    const keepLearned = sameFile && local.learned && !sha;
    return { value: { choice, url, sha256: sha || (keepLearned ? local.sha256 : ""), learned: keepLearned, agreed: local.agreed } };
  }

  /**
   * Whether Ask works without an endpoint with these choices (the panel may then save with
   * an empty endpoint).
   * @param {LocalSettings} value
   */
  usableWithout(value) {
    if (value.choice === "endpoint") return false;
    const builtin = this.site.builtin && this.builtin !== "unavailable";
    const gguf = this.site.gguf && (Boolean(value.url) || Boolean(siteModel(this.site.model, this.siteRoot))) && !ggufSupport(this.win);
    return builtin || gguf;
  }

  /** @param {LocalSettings} value */
  save(value) {
    return writeLocal(this.storage, value);
  }

  /** The notes of the section: what answers, which file, whether it is kept. */
  refresh() {
    const model = this.model();
    const parts = [];
    if (this.site.builtin) {
      parts.push(this.builtin === "unavailable" ? "this browser has no built-in model"
        : `the browser’s built-in model (${this.builtin})`);
    }
    const unsupported = ggufSupport(this.win);
    if (!this.site.gguf) parts.push("this site runs no model in the page");
    else if (unsupported) parts.push(unsupported);
    this.choiceNote.textContent = "Automatic: an LLM server if one is set, else the browser’s built-in model, else a " +
      `model run in this page. Here: ${parts.join("; ") || "no in-browser model"}.`;
    this.section.querySelector(`.${PREFIX}-fields`)?.toggleAttribute("hidden", !this.site.gguf);
    if (!model) {
      this.modelStatus.textContent = this.site.gguf ? "No model file is named: enter a GGUF file’s URL to run it here." : "";
      this.removeButton.hidden = true;
      return;
    }
    const size = model.bytes ? `${megabytes(model.bytes)}, ` : "";
    const whose = model.source === "site" ? "the site’s model" : "your model";
    const running = this.engine?.key === (model.sha256 || model.url) ? " Running in this page." : "";
    this.modelStatus.textContent = `${model.name} (${size}${whose}).${running}`;
    this.removeButton.hidden = true;
    if (!model.sha256) return;
    cachedBlob(model.sha256, model.bytes, this.win.caches ?? null).then((blob) => {
      if (this.model()?.sha256 !== model.sha256) return;
      this.modelStatus.textContent = `${model.name} (${size}${whose}): ${blob ? "kept in this browser" : "not downloaded"}.${running}`;
      this.removeButton.hidden = !blob && !running;
    }).catch(() => {});
  }

  /** "Remove": the kept file goes, the running model stops, and the next download asks again. */
  async remove() {
    const model = this.model();
    if (!model) return;
    await this.stopEngine();
    if (model.sha256) await removeCached(model.sha256, this.win.caches ?? null);
    this.forget(model.sha256 || model.url);
    this.refresh();
    this.onChange();
  }
}
