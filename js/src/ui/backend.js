// @ts-check
/**
 * Where the search bar's queries go.
 *
 * - WorkerBackend (http/https): worker.js owns the index; keyword results as soon as
 *   the manifest and directory are in, hybrid once the model is. If the worker can not
 *   start (e.g. a Content-Security-Policy without worker-src 'self'), falls back to
 *   LocalBackend and says why.
 * - LocalBackend (file://, where fetch and workers fail): loads the same shards with
 *   classic <script> tags (script_source.js) and runs the keyword search on the main
 *   thread, with the same modules as the worker.
 *
 * Both report through onStatus({mode, message}), onResults(id, mode, results, weak, partial, pending),
 * onSettings(settings) (the manifest's `settings`, once the index is read: the page
 * learns the site's LLM settings without a request of its own) and onTiers(tiers) (whether
 * the site ships the full model, and its size; the local backend never loads it).
 * @module backend
 */

import { fuseRankings } from "../llm/multi_query.js";
import { IndexReader } from "../search/index.js";
import { Searcher } from "../search/retrieve.js";
import { ScriptSource } from "./script_source.js";

/**
 * @typedef {{rank: number, score: number, url: string, title: string, kind: string,
 *            text: string, display: import("../search/display.js").Display, id: string,
 *            source?: string}} Result  source: the federated site it comes from (url absolute)
 * @typedef {{mode: "loading" | "keyword" | "static" | "hybrid" | "error", message: string}} Status
 * @typedef {(status: Status) => void} StatusHandler
 * @typedef {(id: number, mode: string, results: Result[], weak?: boolean, partial?: boolean, pending?: boolean,
 *            reranked?: boolean) => void} ResultsHandler
 *   partial: the keyword results of a typed query, its semantic results follow (worker.js);
 *   pending: a tier still loading will answer again (worker.js); reranked: the same query's
 *   hybrid results reordered by the reranker, after its fused ones (worker.js rerankLatest)
 * @typedef {(settings: Record<string, any>) => void} SettingsHandler
 * @typedef {import("../worker/federation.js").SiteStatus} SourceStatus
 * @typedef {(sources: SourceStatus[]) => void} SourcesHandler
 * @typedef {{encoder: boolean, model: {bytes: number, size: string} | null}} Tiers
 * @typedef {(tiers: Tiers) => void} TiersHandler
 * @typedef {import("./model_policy.js").ModelPlan} ModelPlan
 * @typedef {{start(): void, search(id: number, query: string, k: number, typing?: boolean): void,
 *            sources(choices: Record<string, boolean>): void, setModel(plan: ModelPlan): void,
 *            passages(queries: string[], k: number, budget: number): Promise<Result[]>}} Backend
 *   sources: the reader's choice of federated sites ({name: on}; "" is this site)
 *   passages: Ask's context (the queries' rankings fused, sized to `budget` characters;
 *   this site's only, never the federated sites)
 */

/** @param {Result & {index?: number}} r @returns {Result} */
function plain(r) {
  return {
    rank: r.rank, score: r.score, url: r.url, title: r.title, kind: r.kind, text: r.text, display: r.display, id: r.id,
  };
}

export class LocalBackend {
  /**
   * @param {{base: string, reason: string, onStatus: StatusHandler, onResults: ResultsHandler,
   *          onSettings?: SettingsHandler}} options  base: the index directory
   */
  constructor({ base, reason, onStatus, onResults, onSettings }) {
    this.base = base;
    this.reason = reason;
    this.onStatus = onStatus;
    this.onResults = onResults;
    this.onSettings = onSettings ?? (() => {});
    /** @type {Searcher | null} */
    this.searcher = null;
    /** @type {{id: number, query: string, k: number} | null} */
    this.pending = null;
    this.started = false;
    this.busy = false;
  }

  async start() {
    if (this.started) return;
    this.started = true;
    try {
      const source = new ScriptSource(this.base);
      const index = new IndexReader(await source.manifest(), source);
      await index.directory();
      this.searcher = new Searcher(index);
      this.onSettings(index.manifest.settings ?? {});
    } catch (err) {
      this.onStatus({ mode: "error", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    this.onStatus({ mode: "keyword", message: this.reason });
    this.flush();
  }

  /**
   * @param {number} id
   * @param {string} query
   * @param {number} k
   */
  search(id, query, k) {
    this.pending = { id, query, k };
    this.flush();
  }

  /** No model here (file:// or no worker). @param {ModelPlan} _plan */
  setModel(_plan) {}

  /**
   * Ask's passages: the queries' keyword rankings (as `flush` ranks a query here) fused,
   * sized to `budget` characters.
   * @param {string[]} queries @param {number} k @param {number} budget
   * @returns {Promise<Result[]>}
   */
  async passages(queries, k, budget) {
    if (!this.searcher) throw new Error("sphinx-rag: the search index is not loaded yet");
    const rankings = [];
    for (const q of queries) rankings.push((await this.searcher.ranking(q, null, "bm25")).scored);
    const scored = rankings.length === 1 ? rankings[0] : fuseRankings(rankings);
    return (await this.searcher.passages(scored, k, budget)).filter((r) => r.url).map(plain);
  }

  /** Answer the latest request (one at a time: keystrokes in between are skipped). Each
   * answer is reported even when a newer request waits: the dialog shows it until the
   * newer one's comes (a reader typing fast sees results follow, not a frozen list). */
  async flush() {
    if (this.busy || !this.searcher || !this.pending) return;
    const request = this.pending;
    this.pending = null;
    this.busy = true;
    try {
      const { results, weak } = await this.searcher.hybridAnswer(request.query, null, request.k);
      const shown = results.filter((r) => r.url).map(plain); // "": a record that failed its checks
      this.onResults(request.id, "keyword", shown, weak && shown.length > 0);
    } catch (err) {
      this.onStatus({ mode: "error", message: `sphinx-rag: search failed: ${err instanceof Error ? err.message : err}` });
    } finally {
      this.busy = false;
      if (this.pending) this.flush();
    }
  }

  /** Federated sites need fetch and a worker: from file:// only this site is searched. */
  sources() {}
}

export class WorkerBackend {
  /**
   * @param {{workerUrl: string, base: string, ortBase: string, threads: number,
   *          model: ModelPlan, frugal: boolean,
   *          onStatus: StatusHandler, onResults: ResultsHandler,
   *          onSettings?: SettingsHandler, onSources?: SourcesHandler, onTiers?: TiersHandler,
   *          sources?: Record<string, boolean>}} options  sources: the reader's choice of federated
   *   sites; model: whether the full model may download (model_policy.js); frugal: the reader
   *   saves data or is on a slow connection
   */
  constructor(options) {
    this.options = options;
    /** @type {Worker | null} */
    this.worker = null;
    /** @type {LocalBackend | null} */
    this.fallback = null;
    /** @type {{id: number, query: string, k: number, typing: boolean} | null} */
    this.pending = null;
    this.heard = false; // any message from the worker yet
    /** @type {Map<number, {resolve: (r: Result[]) => void, reject: (e: Error) => void}>} Ask's requests */
    this.asked = new Map();
    this.askedId = 0;
  }

  start() {
    if (this.worker || this.fallback) return;
    const { workerUrl, base, ortBase, threads, model, frugal, onStatus, onResults } = this.options;
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
      else if (msg.type === "results") {
        onResults(msg.id, msg.mode, msg.results, msg.weak, Boolean(msg.partial), Boolean(msg.pending), Boolean(msg.reranked));
      }
      else if (msg.type === "settings") this.options.onSettings?.(msg.settings ?? {});
      else if (msg.type === "sources") this.options.onSources?.(msg.sources ?? []);
      else if (msg.type === "tiers") this.options.onTiers?.({ encoder: Boolean(msg.encoder), model: msg.model ?? null });
      else if (msg.type === "passages") {
        const request = this.asked.get(msg.id);
        this.asked.delete(msg.id);
        if (msg.error) request?.reject(new Error(msg.error));
        else request?.resolve(msg.results);
      }
    });
    this.worker.addEventListener("error", (e) => {
      e.preventDefault();
      if (!this.heard) this.fallBack(e.message || "the search worker did not start");
      else onStatus({ mode: "error", message: `sphinx-rag: the search worker failed: ${e.message}` });
    });
    this.worker.postMessage({ type: "init", base, ortBase, threads, model, frugal, sources: this.options.sources ?? {} });
    if (this.pending) this.search(this.pending.id, this.pending.query, this.pending.k, this.pending.typing);
  }

  /** Keyword search on the main thread, saying why. @param {string} why */
  fallBack(why) {
    this.worker?.terminate();
    this.worker = null;
    for (const request of this.asked.values()) request.reject(new Error(`sphinx-rag: the search worker stopped (${why})`));
    this.asked.clear();
    const { base, onStatus, onResults, onSettings } = this.options;
    this.fallback = new LocalBackend({
      base,
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
   * @param {boolean} [typing]  from a keystroke: its semantic pass may wait for the next one
   */
  search(id, query, k, typing = false) {
    this.pending = { id, query, k, typing };
    if (this.fallback) this.fallback.search(id, query, k);
    else if (this.worker) this.worker.postMessage({ type: "search", id, query, k, typing });
  }

  /** The reader changed the model setting. @param {ModelPlan} plan */
  setModel(plan) {
    this.options.model = plan;
    this.worker?.postMessage({ type: "model", ...plan });
  }

  /** @param {Record<string, boolean>} choices */
  sources(choices) {
    this.options.sources = choices;
    this.worker?.postMessage({ type: "sources", sources: choices });
  }

  /**
   * Ask's passages, from the worker (or the main thread's fallback).
   * @param {string[]} queries @param {number} k @param {number} budget
   * @returns {Promise<Result[]>}
   */
  passages(queries, k, budget) {
    if (this.fallback) return this.fallback.passages(queries, k, budget);
    const worker = this.worker;
    if (!worker) return Promise.reject(new Error("sphinx-rag: the search index is not loaded yet"));
    const id = ++this.askedId;
    return new Promise((resolve, reject) => {
      this.asked.set(id, { resolve, reject });
      worker.postMessage({ type: "passages", id, queries, k, budget });
    });
  }
}
