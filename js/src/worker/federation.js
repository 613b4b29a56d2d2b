// @ts-check
/**
 * Other sphinx-rag sites searched with the home site (sphinx_rag_federation, read from
 * the home manifest's settings.federation: [{name, url, enabled}], url the site root).
 *
 * A remote site is read with the home index's own code: an HttpSource rooted at its index
 * directory (every shard verified by the hash in its name and kept in Cache Storage under
 * that name, as the home index's are), an IndexReader, a Searcher. Nothing of a site is
 * fetched until it is enabled and a query comes: its manifest then, and only the shards
 * its queries need. Each result carries `source` (the site's name) and an absolute URL.
 *
 * A site's index is untrusted input to this page: every file of it is checked before use
 * (search/validate.js, through IndexReader), every read is guarded (loader.js
 * guardedFetch: no redirect to another origin, a byte cap per file and REMOTE_QUERY_BYTES
 * per query, REMOTE_TIMEOUT_MS per request, body included), and a result whose URL is not
 * an http(s) page under the site's own root (origin and path: `siteUrl`) is dropped: a
 * `javascript:` or another host's URL never becomes a link on this page. A record that fails
 * its checks is left out and the site's line says how many were (a site whose every record
 * read failed is not searched, in one line), as Python's CLI and MCP server say it.
 *
 * Its semantic tier: the home query vector when the site was embedded by the same model
 * (its manifest's model_info equals the home one's) and that vector comes from the model;
 * else the site's own static query encoder, which embeds the query into its own space
 * (a few hundred KB, loaded on first use); else keyword results only, said in one line.
 * A site that cannot be read (down, CORS refused, no answer within REMOTE_TIMEOUT_MS,
 * another index format, a file not matching its hash) is left out with one line, until
 * the reader turns it off and on again; the home results are never held by it longer
 * than FIRST_WAIT_MS (the merge is posted again when a late site answers).
 * @module federation
 */

import { IndexReader } from "../search/index.js";
import { mergeAnswers, mergedWeak } from "../search/merge.js";
import { UNSEEN_REDIRECT } from "../search/redirects.js";
import { Searcher, correctSpelling, modelWords } from "../search/retrieve.js";
import { HttpSource } from "./loader.js";

/** Per request to a federated site (the manifest, a shard; its whole body): then it is left out. */
export const REMOTE_TIMEOUT_MS = 8000;
/** The most bytes one query may read from one federated site, received and inflated (an honest first query: 0.1 to 5 MB). */
export const REMOTE_QUERY_BYTES = 32 << 20;
/** A site's one line says at most this many characters. */
const LINE_CHARS = 300;
/** How long the home results wait for the federated sites' before they are posted alone. */
export const FIRST_WAIT_MS = 300;
/** Where a site keeps its index, from its root (sphinx_rag/search/format.py ASSET_DIR). */
export const INDEX_DIR = "_static/sphinx_rag/index/";
const MAX_SITES = 16;

/**
 * @typedef {{name: string, url: string, enabled: boolean}} SiteEntry
 * @typedef {"off" | "waiting" | "loading" | "keyword" | "static" | "hybrid" | "failed"} SiteState
 *   waiting: enabled, nothing fetched yet (it loads with the next query)
 * @typedef {{name: string, url: string, enabled: boolean, state: SiteState, message: string}} SiteStatus
 * @typedef {{vector: ArrayLike<number> | null, encoder: "model" | "static" | null, model: any,
 *            semantic: boolean}} HomeQuery
 *   vector: the home query vector (null in keyword mode); encoder: what made it; model: the
 *   home manifest's model_info; semantic: the home answers semantically (or never will: no vectors)
 * @typedef {{rank: number, score: number, url: string, title: string, kind: string, text: string,
 *            display: any, id: string, similarity?: number | null, source?: string}} PlainResult
 * @typedef {{results: PlainResult[], weak: boolean}} Answer
 */

/**
 * The federation list of a manifest's settings, entries that are not well-formed dropped.
 * @param {any} settings  manifest.settings
 * @returns {SiteEntry[]}
 */
export function federationEntries(settings) {
  const list = Array.isArray(settings?.federation) ? settings.federation : [];
  /** @type {SiteEntry[]} */
  const out = [];
  for (const e of list) {
    const name = typeof e?.name === "string" ? e.name.trim() : "";
    let url = null;
    try {
      url = new URL(String(e?.url));
    } catch {
      url = null;
    }
    if (!name || !url || !/^https?:$/.test(url.protocol) || out.some((o) => o.name === name)) continue;
    url.search = "";
    url.hash = "";
    out.push({ name, url: url.href.endsWith("/") ? url.href : url.href + "/", enabled: e.enabled === true });
    if (out.length >= MAX_SITES) break;
  }
  return out;
}

/**
 * Whether two manifests' model_info describe the same model (the same vector space).
 * @param {any} a @param {any} b
 */
export function sameModel(a, b) {
  const canonical = (/** @type {any} */ x) => JSON.stringify(x, x && typeof x === "object" ? Object.keys(x).sort() : undefined);
  return a != null && b != null && typeof a === "object" && canonical(a) === canonical(b);
}

/**
 * A federated site's result URL as a link, or null when it is not an http(s) page under
 * the site's root (the same origin, a path under the root's; `../` climbing out, another
 * host, `//host`, `javascript:`, `data:`, credentials: null, the record is dropped).
 * @param {unknown} url  the record's URL (relative to the root, as sphinx-rag writes it)
 * @param {string} root  the site root (ends with "/")
 * @returns {string | null}
 */
export function siteUrl(url, root) {
  if (typeof url !== "string") return null;
  let resolved;
  let base;
  try {
    resolved = new URL(url, root);
    base = new URL(root);
  } catch {
    return null;
  }
  if (!/^https?:$/.test(resolved.protocol) || resolved.origin !== base.origin) return null;
  if (resolved.username || resolved.password || !resolved.pathname.startsWith(base.pathname)) return null;
  return resolved.href;
}

/**
 * A reason as one line of at most LINE_CHARS (it may quote a remote file: control
 * characters and line breaks become spaces).
 * @param {string} text
 */
function oneLine(text) {
  const line = text.replace(/[\s\p{Cc}\p{Zl}\p{Zp}\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu, " ").trim();
  return line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 1)}…` : line;
}

/** Why a browser's fetch failed, when it does not say (a TypeError: "Failed to fetch"). */
export const UNREADABLE = "it cannot be reached or read from this page (down, offline, not allowed by this page's "
  + "Content-Security-Policy connect-src, no Access-Control-Allow-Origin header, or a redirect without one: a browser "
  + "does not tell which)";

/**
 * Why a site cannot be read, in a few words (no "sphinx-rag:" prefix, no advice meant for
 * the home site's maintainer). A browser's network failure, CORS refusal and redirect
 * without CORS headers are one TypeError: a no-cors request would tell the first two
 * apart, but the Fetch standard lets it only follow redirects, to any host, and no request
 * of another site's may reach an address the site redirects to (search/redirects.js):
 * the line names all three.
 * @param {unknown} err
 * @param {string} manifestUrl
 * @param {number} timeoutMs
 */
export function failureReason(err, manifestUrl, timeoutMs) {
  return oneLine(reason(err, manifestUrl, timeoutMs));
}

/**
 * failureReason, before it is made one line.
 * @param {unknown} err @param {string} manifestUrl @param {number} timeoutMs
 */
function reason(err, manifestUrl, timeoutMs) {
  const name = err instanceof Error || err instanceof DOMException ? err.name : "";
  const message = err instanceof Error ? err.message : String(err);
  if (name === "TimeoutError" || name === "AbortError") return `no answer within ${timeoutMs / 1000} s`;
  if (err instanceof TypeError && !/sphinx-rag/.test(message)) return UNREADABLE;
  const format = /index format (\S+), this client reads (\d+)/.exec(message);
  if (format) return `its index is in format ${format[1]}, this page reads ${format[2]}`;
  const status = /\(HTTP (\d+)\)/.exec(message);
  if (status && /no search index/.test(message)) return `no sphinx-rag index at ${manifestUrl} (HTTP ${status[1]})`;
  const damaged = /is damaged \((.*)\): rebuild the docs/.exec(message);
  if (damaged) return `a file of its index is refused: ${damaged[1]}`;
  const redirect = / redirects to (\S+), another origin: refused$/.exec(message);
  if (redirect) return `it redirects to ${redirect[1]}, another origin: refused`;
  if (message.endsWith(` redirects, and a browser ${UNSEEN_REDIRECT}`)) return `it redirects, and a browser ${UNSEEN_REDIRECT}`;
  const large = /^sphinx-rag: (\S+) (is larger than its index allows \(over .*\)|inflates to more than [\d.]+ [KM]B)/.exec(message);
  if (large) return `a file of its index is too large: ${large[1].split("/").pop()} ${large[2]}`;
  const spent = / sent (more than [\d.]+ [KM]B for one query): refused$/.exec(message);
  if (spent) return `it sent ${spent[1]}: refused`;
  const invalid = /^sphinx-rag: (.*) is not a well-formed sphinx-rag index file \((.*)\)$/.exec(message);
  if (invalid) return `its index is not well-formed: ${invalid[1]} (${invalid[2]})`;
  return message.replace(/^sphinx-rag: /, "");
}

export class RemoteSite {
  /**
   * @param {SiteEntry} entry
   * @param {{fetch?: typeof fetch, caches?: CacheStorage | null, timeoutMs?: number, queryBytes?: number,
   *          writesAfter?: Promise<unknown>}} [options]
   */
  constructor(entry, options = {}) {
    this.entry = entry;
    this.name = entry.name;
    this.root = entry.url;
    this.base = new URL(INDEX_DIR, entry.url).href;
    this.enabled = entry.enabled;
    this.rawFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = options.timeoutMs ?? REMOTE_TIMEOUT_MS;
    this.options = options;
    this.reset();
  }

  /** Forget a failure (the reader turned the site off and on again): read it again. */
  reset() {
    this.source = new HttpSource(this.base, {
      fetch: this.rawFetch,
      caches: this.options.caches,
      deadlineMs: this.timeoutMs,
      queryBytes: this.options.queryBytes ?? REMOTE_QUERY_BYTES,
    });
    if (this.options.writesAfter) this.source.deferWrites(this.options.writesAfter);
    /** @type {Promise<Searcher> | null} */
    this.opened = null;
    this.ready = false; // its manifest and directory are in
    /** @type {Promise<import("../search/static_encoder.js").StaticEncoder | null> | null} */
    this.encoder = null;
    /** @type {SiteState} */
    this.state = this.enabled ? "waiting" : "off";
    this.message = "";
    this.denseFailed = "";
    this.pruned = false;
    this.epoch = (this.epoch ?? 0) + 1; // a search started before a reset reports nothing
  }

  get failed() {
    return this.state === "failed";
  }

  /** The manifest and the directory shard, once. @returns {Promise<Searcher>} */
  open() {
    if (!this.opened) {
      this.opened = (async () => {
        const index = new IndexReader(await this.source.manifest(), this.source, this.root); // its records' URLs stay under its root
        await index.directory();
        this.ready = true;
        return new Searcher(index);
      })();
    }
    return this.opened;
  }

  /**
   * The query vector for this site, and the vote of its dense ranking (retrieve.js
   * DENSE_VOTE): the home vector if the same model made both, else its own static encoder's
   * (loaded on first use), else none (`why` says so when it is a loss).
   * @param {string} query
   * @param {Searcher} searcher
   * @param {HomeQuery} home
   * @returns {Promise<{vector: ArrayLike<number> | null, vote: "model" | "static", why: string}>}
   */
  async queryVector(query, searcher, home) {
    const index = searcher.index;
    if (!home.semantic || !index.hasVectors || searcher.fusion === "bm25" || this.denseFailed) {
      return { vector: null, vote: "model", why: "" };
    }
    const compatible = sameModel(index.manifest.model, home.model);
    if (compatible && home.encoder === "model" && home.vector) {
      return { vector: home.vector, vote: "model", why: "" }; // the same model embedded both
    }
    if (index.manifest.encoder) {
      this.encoder ??= index.encoder();
      const encoder = await this.encoder;
      if (encoder) {
        const vector = encoder.encode(await correctSpelling(query, index, modelWords(encoder.vocab)));
        return { vector: vector ?? new Float32Array(index.dim), vote: "static", why: "" };
      }
    }
    return { vector: null, vote: "model", why: compatible ? "" // the same model, not loaded here yet
      : "keyword results only: its semantic search needs its own model, which this page does not load" };
  }

  /**
   * This site's answer to a query, with the tier its index and the home query allow: its
   * keyword results when its semantic tier fails (said in one line). Throws when the site
   * cannot be read at all: the caller leaves it out.
   * @param {string} query
   * @param {number} k
   * @param {HomeQuery} home
   * @returns {Promise<Answer>}
   */
  async search(query, k, home) {
    if (this.state === "waiting" || this.state === "off") this.state = "loading";
    this.source.newQuery();
    const searcher = await this.open();
    const denseFailure = async (/** @type {unknown} */ err) => {
      this.denseFailed = failureReason(err, this.source.url("manifest.json"), this.timeoutMs);
    };
    /** @type {{vector: ArrayLike<number> | null, vote: "model" | "static", why: string}} */
    let tier = { vector: null, vote: "model", why: "" };
    try {
      tier = await this.queryVector(query, searcher, home);
    } catch (err) { // its encoder could not be read
      await denseFailure(err);
    }
    /** @type {{results: import("../search/retrieve.js").Result[], weak: boolean}} */
    let answer;
    try {
      answer = await searcher.hybridAnswer(query, tier.vector, k, tier.vote);
    } catch (err) {
      if (!tier.vector) throw err; // its keyword index failed: it is left out
      await denseFailure(err); // its clusters failed: keyword results
      tier = { vector: null, vote: "model", why: "" };
      answer = await searcher.hybridAnswer(query, null, k);
    }
    const invalid = searcher.index.invalidRecords(); // records that failed their checks: left out, and said
    if (searcher.index.everyRecordInvalid) throw new Error(`sphinx-rag: ${invalid}`); // nothing of it can be shown
    this.state = !tier.vector ? "keyword" : tier.vote === "static" ? "static" : "hybrid";
    const why = this.denseFailed ? `keyword results only: its semantic index failed (${this.denseFailed})` : tier.why;
    this.message = [why, invalid && `${invalid}; left out`].filter(Boolean).join("; ");
    this.prune(searcher.index);
    /** @type {PlainResult[]} */
    const results = [];
    for (const r of answer.results) {
      const url = r.url ? siteUrl(r.url, this.root) : null; // "": a record that failed its checks
      if (url === null) continue; // not a page of this site: never a link here
      results.push({
        rank: r.rank, score: r.score, url, title: r.title, kind: r.kind, text: r.text, display: r.display, id: r.id,
        similarity: r.similarity ?? null, source: this.name,
      });
    }
    return { results, weak: answer.weak && results.length > 0 };
  }

  /**
   * Drop what older builds of this site left in Cache Storage, once, when that costs no
   * request (its dense directory is in memory, or it has none).
   * @param {IndexReader} index
   */
  prune(index) {
    if (this.pruned || (index.manifest.dense && !index.denseDir)) return;
    this.pruned = true;
    index.shardNames().then((names) => this.source.prune(names)).catch(() => {});
  }

  /** @param {unknown} err */
  async fail(err) {
    this.state = "failed";
    this.message = `not searched: ${failureReason(err, this.source.url("manifest.json"), this.timeoutMs)}`;
  }

  /** @returns {SiteStatus} */
  status() {
    return { name: this.name, url: this.root, enabled: this.enabled, state: this.enabled ? this.state : "off",
      message: this.enabled ? this.message : "" };
  }
}

export class Federation {
  /**
   * @param {any} settings  the home manifest's settings
   * @param {{fetch?: typeof fetch, caches?: CacheStorage | null, timeoutMs?: number, queryBytes?: number,
   *          firstWaitMs?: number, writesAfter?: Promise<unknown>, onChange?: (sources: SiteStatus[]) => void,
   *          homeBase?: string}} [options]  homeBase: this site's index directory (its results' URLs are relative to its root)
   */
  constructor(settings, options = {}) {
    this.sites = federationEntries(settings).map((e) => new RemoteSite(e, options));
    const base = options.homeBase ?? "";
    this.homeRoot = base.endsWith(INDEX_DIR) ? base.slice(0, -INDEX_DIR.length) : base;
    this.firstWaitMs = options.firstWaitMs ?? FIRST_WAIT_MS;
    this.onChange = options.onChange ?? (() => {});
    /** Whether the home site's results are shown (the reader may search the others only). */
    this.homeOn = true;
    this.announced = "";
    /** Counts start() and setChoices() calls: a merge of an earlier one is not posted any more. */
    this.generation = 0;
  }

  /** Tell the page the sites' states, when they changed. */
  notify() {
    const sources = this.statuses();
    const text = JSON.stringify(sources);
    if (text === this.announced) return;
    this.announced = text;
    this.onChange(sources);
  }

  /** Whether any other site is configured. */
  get configured() {
    return this.sites.length > 0;
  }

  /** The sites a query goes to. */
  get active() {
    return this.sites.filter((s) => s.enabled && !s.failed);
  }

  /** @returns {SiteStatus[]} */
  statuses() {
    return this.sites.map((s) => s.status());
  }

  /**
   * The reader's choice (name -> on/off; "" is the home site), over the site's defaults.
   * A site turned on again after a failure is read again.
   * @param {Record<string, boolean>} choices
   */
  setChoices(choices) {
    const pick = (/** @type {string} */ name, /** @type {boolean} */ fallback) =>
      (typeof choices?.[name] === "boolean" ? choices[name] : fallback);
    for (const site of this.sites) {
      const on = pick(site.name, site.entry.enabled);
      if (on !== site.enabled) {
        site.enabled = on;
        if (on && site.failed) site.reset();
        else if (!site.opened) site.state = on ? "waiting" : "off";
      }
    }
    this.homeOn = pick("", true);
    this.generation++;
    this.notify();
  }

  /** Fetch the manifest and directory of the enabled sites not read yet (their searches follow). */
  prepare() {
    for (const site of this.active) if (!site.opened) site.open().catch(() => {}); // its search reports it
  }

  /**
   * Start the enabled sites' searches for a query (once the home site has its answer).
   * Returns null when no other site is searched, else the handle that posts the merge.
   * @param {string} query
   * @param {number} k
   * @param {HomeQuery} home
   */
  start(query, k, home) {
    const generation = ++this.generation; // a newer search (another query, tier or choice) supersedes this one
    const sites = this.active;
    if (!sites.length) return null;
    /** @type {Array<Answer | null>} null: not answered (yet, or at all) */
    const answers = sites.map(() => /** @type {Answer | null} */ (null));
    const settled = new Set();
    const known = sites.map((site) => site.ready); // the first contact with a site is never waited for
    const epochs = sites.map((site) => site.epoch);
    const searches = sites.map((site, n) => site.search(query, k, home)
      .then((answer) => { answers[n] = answer; })
      .catch((err) => (site.epoch === epochs[n] ? site.fail(err) : undefined))
      .then(() => {
        settled.add(n);
        this.notify();
        return n;
      }));
    this.notify(); // "loading" for those read for the first time
    const federation = this;
    return {
      /**
       * Post the home answer merged with the sites' answers: once the sites read before
       * answered or firstWaitMs passed (a site read for the first time is not waited for:
       * its manifest and directory are round trips to another origin), then again as each
       * late one answers (unless `stale()`: a newer query came; nothing once a newer search
       * started). Resolves when every site answered or failed.
       * @param {Answer} homeAnswer
       * @param {(merged: Answer) => void} post
       * @param {() => boolean} stale
       */
      async post(homeAnswer, post, stale) {
        const timer = new Promise((resolve) => setTimeout(resolve, federation.firstWaitMs));
        await Promise.race([Promise.all(searches.filter((_, n) => known[n])), timer]);
        let late = searches.filter((_, n) => !settled.has(n));
        let shown = -1; // how many sites' answers the last post merged (a failure adds none)
        for (;;) {
          // the first merge is posted even when a newer query came (a reader typing fast sees
          // results follow, as without other sites), unless a newer search superseded it
          if (generation !== federation.generation || (shown >= 0 && stale())) return;
          const have = answers.filter((a) => a !== null).length;
          if (have !== shown) post(federation.merge(query, homeAnswer, answers));
          shown = have;
          if (!late.length) return;
          await Promise.race(late); // one more site answered (or failed): post again
          late = late.filter((promise) => !settled.has(searches.indexOf(promise)));
        }
      },
    };
  }

  /**
   * The home answer and the sites' answers as one ranking (merge.js: a weak site's after the
   * others' good matches, then by each hit's match to the query, whatever the sites' order),
   * renumbered.
   * @param {string} query
   * @param {Answer} home
   * @param {Array<Answer | null>} answers
   * @returns {Answer}
   */
  merge(query, home, answers) {
    const others = /** @type {Answer[]} */ (answers.filter((a) => a !== null));
    const parts = this.homeOn || !others.length ? [home, ...others] : others; // never nothing at all
    const key = (/** @type {PlainResult} */ r) => {
      let url = r.url;
      try {
        url = new URL(r.url, this.homeRoot).href; // this site's URLs are relative to its root
      } catch { /* no root known: as it is */ }
      return `${url} ${r.id}`;
    };
    const merged = mergeAnswers(query, parts.map((a) => ({
      hits: a.results.map((r) => ({ key: key(r), text: r.text, title: r.title, similarity: r.similarity ?? null })),
      weak: a.weak,
    })), parts.map((a) => a.results[0]?.source ?? ""));
    const results = merged.map(([n, i], rank) => ({ ...parts[n].results[i], rank: rank + 1 }));
    return { results, weak: mergedWeak(parts.map((a) => a.weak)) && results.length > 0 };
  }
}
