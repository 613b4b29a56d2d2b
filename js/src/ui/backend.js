// @ts-check
/**
 * Where the search bar's queries go.
 *
 * - WorkerBackend (http/https): worker.js owns the index; keyword results as soon as
 *   BM25 + chunks are in, hybrid once the model is. If the worker can not start
 *   (e.g. a Content-Security-Policy without worker-src 'self'), falls back to
 *   LocalBackend and says why.
 * - LocalBackend (file://, where fetch and workers fail): loads keyword_index.js with
 *   a classic <script> and runs the keyword search on the main thread, with the same
 *   modules as the worker.
 *
 * Both report through onStatus({mode, message}), onResults(id, mode, results) and
 * onSettings(settings) (the manifest's `settings`, once the index is read: the page
 * learns the site's LLM settings without a request of its own).
 * @module backend
 */

import { BM25Index } from "../search/bm25.js";
import { Searcher } from "../search/retrieve.js";

/**
 * @typedef {{rank: number, score: number, url: string, title: string, kind: string,
 *            text: string, id: string}} Result
 * @typedef {{mode: "loading" | "keyword" | "hybrid" | "error", message: string}} Status
 * @typedef {(status: Status) => void} StatusHandler
 * @typedef {(id: number, mode: string, results: Result[]) => void} ResultsHandler
 * @typedef {(settings: Record<string, any>) => void} SettingsHandler
 * @typedef {{start(): void, search(id: number, query: string, k: number): void}} Backend
 */

/** @param {string} b64 */
function decodeBase64(b64) {
  const raw = atob(b64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes.buffer;
}

/**
 * A keyword-only Searcher from the object keyword_index.js assigns to
 * window.SPHINX_RAG_KEYWORD_INDEX (see sphinx_rag/searchbar.py).
 * @param {any} data
 * @returns {Searcher}
 */
export function keywordSearcherFrom(data) {
  const bin = data.binary;
  const bm25 = new BM25Index(
    data.bm25,
    new Uint32Array(decodeBase64(bin["bm25_offsets.u32"])),
    new Uint32Array(decodeBase64(bin["bm25_docs.u32"])),
    new Float32Array(decodeBase64(bin["bm25_impacts.f32"])),
  );
  return new Searcher({ manifest: data.manifest, chunks: data.chunks, bm25, vectors: null, scales: null });
}

/** @param {Result & {index?: number}} r @returns {Result} */
function plain(r) {
  return { rank: r.rank, score: r.score, url: r.url, title: r.title, kind: r.kind, text: r.text, id: r.id };
}

export class LocalBackend {
  /**
   * @param {{scriptUrl: string, reason: string, onStatus: StatusHandler, onResults: ResultsHandler,
   *          onSettings?: SettingsHandler}} options
   */
  constructor({ scriptUrl, reason, onStatus, onResults, onSettings }) {
    this.scriptUrl = scriptUrl;
    this.reason = reason;
    this.onStatus = onStatus;
    this.onResults = onResults;
    this.onSettings = onSettings ?? (() => {});
    /** @type {Searcher | null} */
    this.searcher = null;
    /** @type {{id: number, query: string, k: number} | null} */
    this.pending = null;
    this.started = false;
  }

  start() {
    if (this.started) return;
    this.started = true;
    const ready = () => {
      try {
        const data = /** @type {any} */ (window).SPHINX_RAG_KEYWORD_INDEX;
        this.searcher = keywordSearcherFrom(data);
        this.onSettings(data.manifest?.settings ?? {});
      } catch (err) {
        this.onStatus({ mode: "error", message: `sphinx-rag: the keyword index could not be read (${err}); rebuild the docs` });
        return;
      }
      this.onStatus({ mode: "keyword", message: this.reason });
      this.flush();
    };
    if (/** @type {any} */ (window).SPHINX_RAG_KEYWORD_INDEX) {
      ready();
      return;
    }
    const script = document.createElement("script");
    script.src = this.scriptUrl;
    script.addEventListener("load", ready);
    script.addEventListener("error", () =>
      this.onStatus({
        mode: "error",
        message: "sphinx-rag: keyword_index.js is missing next to searchbar.js: rebuild the docs with sphinx-rag",
      }),
    );
    document.head.append(script);
  }

  /**
   * @param {number} id
   * @param {string} query
   * @param {number} k
   */
  search(id, query, k) {
    const first = this.pending === null;
    this.pending = { id, query, k };
    // On the main thread: answer only the latest of the keystrokes of one task.
    if (this.searcher && first) setTimeout(() => this.flush(), 0);
  }

  flush() {
    const request = this.pending;
    this.pending = null;
    if (!request || !this.searcher) return;
    this.onResults(request.id, "keyword", this.searcher.keywordSearch(request.query, request.k).map(plain));
  }
}

export class WorkerBackend {
  /**
   * @param {{workerUrl: string, base: string, ortBase: string, threads: number,
   *          keywordScriptUrl: string, onStatus: StatusHandler, onResults: ResultsHandler,
   *          onSettings?: SettingsHandler}} options
   */
  constructor(options) {
    this.options = options;
    /** @type {Worker | null} */
    this.worker = null;
    /** @type {LocalBackend | null} */
    this.fallback = null;
    /** @type {{id: number, query: string, k: number} | null} */
    this.pending = null;
    this.heard = false; // any message from the worker yet
  }

  start() {
    if (this.worker || this.fallback) return;
    const { workerUrl, base, ortBase, threads, onStatus, onResults } = this.options;
    try {
      this.worker = new Worker(workerUrl, { type: "module", name: "sphinx-rag" });
    } catch (err) {
      this.fallBack(String(err));
      return;
    }
    this.worker.addEventListener("message", (e) => {
      this.heard = true;
      const msg = e.data;
      if (msg.type === "status") onStatus({ mode: msg.mode, message: msg.message });
      else if (msg.type === "results") onResults(msg.id, msg.mode, msg.results);
      else if (msg.type === "settings") this.options.onSettings?.(msg.settings ?? {});
    });
    this.worker.addEventListener("error", (e) => {
      e.preventDefault();
      if (!this.heard) this.fallBack(e.message || "the search worker did not start");
      else onStatus({ mode: "error", message: `sphinx-rag: the search worker failed: ${e.message}` });
    });
    this.worker.postMessage({ type: "init", base, ortBase, threads });
    if (this.pending) this.search(this.pending.id, this.pending.query, this.pending.k);
  }

  /** Keyword search on the main thread, saying why. @param {string} why */
  fallBack(why) {
    this.worker?.terminate();
    this.worker = null;
    const { keywordScriptUrl, onStatus, onResults, onSettings } = this.options;
    this.fallback = new LocalBackend({
      scriptUrl: keywordScriptUrl,
      reason: `Keyword only: semantic search needs a Web Worker (${why})`,
      onStatus,
      onResults,
      onSettings,
    });
    this.fallback.start();
    if (this.pending) this.fallback.search(this.pending.id, this.pending.query, this.pending.k);
  }

  /**
   * @param {number} id
   * @param {string} query
   * @param {number} k
   */
  search(id, query, k) {
    this.pending = { id, query, k };
    if (this.fallback) this.fallback.search(id, query, k);
    else if (this.worker) this.worker.postMessage({ type: "search", id, query, k });
  }
}
