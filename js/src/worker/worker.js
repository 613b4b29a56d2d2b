// @ts-check
/**
 * The search worker (a module Web Worker, built by build.mjs into worker.js): owns
 * the index so that loading, hashing and scoring never block the page.
 *
 * Protocol
 *   main -> worker  {type: "init", base, ortBase, threads, model, frugal, sources}   base: the index directory
 *                   {type: "search", id, query, k, typing}
 *                   {type: "passages", id, queries, k, budget}   Ask's context: each query ranked
 *                     in the current tier as the search box ranks it (retrieve.js `ranking`: the
 *                     which-question vote and the decisive hits included; with the model, the
 *                     cross-encoder once loaded: rerankedScores), the rankings fused
 *                     (llm/multi_query.js), the passages sized to `budget` characters; this
 *                     site's only (the federated sites are not asked), and the search box's
 *                     latest query is left as it is
 *                   {type: "model", load, drop, why, onDemand}   the reader's model setting changed
 *                   {type: "sources", sources}   the reader's choice of sites: {name: on} ("" is this site)
 *   model: {load, drop, why, onDemand} (ui/model_policy.js modelPlan): whether the full model
 *   may download, and whether only once a query wants it (the page decides: a worker does not
 *   see Save-Data); frugal: the reader saves
 *   data or is on a slow connection; typing: the query comes from a keystroke (not pasted,
 *   not a recent search or a shared link)
 *   worker -> main  {type: "status", mode: "loading"|"keyword"|"static"|"hybrid"|"error", message}
 *                   {type: "settings", settings}   the manifest's `settings` (e.g. `llm`), once
 *                   {type: "tiers", encoder, model: {bytes, size} | null}   what the site offers, once
 *                   {type: "sources", sources: [{name, url, enabled, state, message}]}   the federated
 *                    sites (federation.js), when one's state changes
 *                   {type: "results", id, mode, results: [{rank, score, url, title, kind, text, display, id,
 *                    source?}], weak, timings: {embed_ms, retrieve_ms}, partial?, pending?, reranked?}
 *                   {type: "passages", id, results, mode} or {type: "passages", id, error}
 *   source: the federated site a result comes from (its url absolute); none: this site. With
 *   federated sites on, a query's results are posted merged (merge.js), and again as late
 *   sites answer.
 *   weak: the results are only the nearest, no good match (retrieve.js weakMatch)
 *   partial: this site's keyword results of a typed query whose semantic pass waits for
 *   the query to settle (its semantic results, merged with the other sites', follow with
 *   the same id)
 *   pending: a tier still loading will answer this query again and may find what this one
 *   did not: the semantic tiers after keyword results, the full model after the fast
 *   encoder when that one knows none of the query's words (it has no vector for them: the
 *   nearest chunks that `sphinx-rag search` lists come with the model) and the model is on
 *   its way (or this query starts it)
 *   reranked: the same query's hybrid results reordered by the reranker (cross_encoder.js),
 *   posted after its fused ones (this site's alone; a typed query once it has settled); the
 *   dialog swaps them in unless the reader is in the list (timings: {rerank_ms, reranker_load_ms,
 *   posted_at})
 *   timings: performance.now() milliseconds inside the worker, for benchmarks/bench_browser.py;
 *   posted_at: the answer's Date.now() as it leaves the worker (before the model may start)
 *   (the page ignores them): embed_ms = spelling correction + WordPiece + onnxruntime + pooling
 *   (0 in keyword mode); retrieve_ms = BM25 + dense scoring + fusion + result assembly.
 *
 * Loading order, one tier after the other (each runs the latest query again):
 * 1. "keyword": the manifest and the directory shard (each query then fetches only its
 *    own term and text shards);
 * 2. "static": the site's static query encoder (static_encoder.js, a few hundred KB, no
 *    wasm) and the centroids: keyword + semantic results (each query also fetches its
 *    nearest clusters);
 * 3. "hybrid": the full model through onnxruntime-web (23 MB + 14 MB of wasm), at low
 *    priority, when the page's plan allows it: by default (plan.onDemand) once a query wants
 *    it (model_policy.js wantsModel) and the tier before it (static, or keyword on a site
 *    without an encoder) has answered that query, a typed query once it has settled; with
 *    "always" after the first answer. It takes over from the static encoder for every later
 *    query, and answers the latest query again. The reader can start it at once ("always")
 *    or stop and drop it ("never"). The reranker (cross_encoder.js, about 8 MB) downloads
 *    after the model, when the site ships one; from then on each hybrid answer is followed
 *    by its reordered version (rerankLatest).
 * A site has tier 2, tier 3 or both (sphinx_rag_query_encoder); the status line says which
 * answers, and what the model weighs or why it is not downloaded (tier_status.js).
 *
 * Only the latest query is embedded: one that a newer query overtook while it was
 * being embedded is dropped; one overtaken while its shards were fetched is posted.
 * A typed query fetches the clusters its dense pass needs (those not in memory) only once
 * it has settled (settle.js: no newer keystroke for twice the reader's usual gap): each
 * prefix ("i", "im", "imp", ...) would probe clusters of its own, 1.6 MB each at the
 * default probe. Its keyword results are posted at once meanwhile (partial), and a newer
 * query cancels it. A frugal reader's typed query waits to settle (three gaps) before
 * any shard it lacks, keyword ones too (results come when the reader pauses), and, with
 * the static encoder, probes a quarter of the layout's vectors (retrieve.js frugalProbe).
 * onnxruntime-web comes from the site's own _static (ortBase), never a CDN; 1 thread
 * unless the page is cross-origin isolated.
 *
 * This site's index is read as the federated sites' are (loader.js guardedFetch: same
 * origin only, every file within its cap, validate.js checks before use), without their
 * deadline: its model is 23 MB on whatever connection the reader has.
 */

import * as ort from "onnxruntime-web/wasm";
import { CrossEncoder } from "../search/cross_encoder.js";
import { Embedder } from "../search/embed.js";
import { IndexReader } from "../search/index.js";
import { Searcher, clipQuery, correctSpelling, frugalProbe, modelWords } from "../search/retrieve.js";
import { fuseRankings } from "../llm/multi_query.js";
import { StaticEncoder } from "../search/static_encoder.js";
import { Federation } from "./federation.js";
import { HttpSource } from "./loader.js";
import { wellFormed } from "../ui/well_formed.js";
import { FRUGAL_SETTLE, RHYTHM_KEYS, SETTLE, settleDelay } from "./settle.js";
import { downloadSize, modelBytes, rerankerBytes, tierStatus } from "./tier_status.js";
import { wantsModel } from "../ui/model_policy.js";

/**
 * @typedef {{id: number, query: string, k: number, typing: boolean, at: number, settle: number,
 *            settled?: Promise<void>}} Request
 *   at: performance.now() on arrival; settle: how long a typed query waits to settle (ms
 *   after `at`, settle.js); settled: its wait, once it began
 * @typedef {import("../ui/model_policy.js").ModelPlan} ModelPlan
 */

const worker = /** @type {any} */ (self);

/** @type {Searcher | null} */
let searcher = null;
/** @type {Embedder | null} */
let embedder = null;
/** @type {StaticEncoder | null} */
let encoder = null;
/** @type {CrossEncoder | null} the reranker (cross_encoder.js): loaded once the model is */
let crossEncoder = null;
/** Milliseconds the reranker took to arrive and start (its files and session), for benchmarks. */
let rerankerLoadMs = 0;
/**
 * The hybrid answer the reranker reorders next (the latest query's, this site's alone):
 * posted again as {type: "results", ..., reranked: true} once reordered.
 * @type {{request: Request, ranked: any, weak: boolean} | null}
 */
let toRerank = null;
/** @type {Federation | null} the other sites searched with this one */
let federation = null;
/** @type {Record<string, boolean>} the reader's choice of sites, until the federation is read */
let sourceChoices = {};
/** @type {Set<string>} whole words of the model's vocabulary, for spelling correction */
let words = new Set();
/** @typedef {"loading" | "keyword" | "static" | "hybrid" | "error"} Mode */
/** @type {Mode} */
let mode = "loading";
/** @type {Request | null} */
let latest = null;
/** @type {Request | null} the request pump() is answering */
let current = null;
/** @type {{request: Request, mode: string} | null} */
let answered = null;
/** @type {{id: number, queries: unknown, k: unknown, budget: unknown}[]} Ask's passages requests, oldest first */
const asks = [];
let busy = false;
let started = false;
let frugal = false;
/** The manifest layout's probe (a frugal reader's static queries probe a quarter of it). */
let layoutProbe = 0;
/** @type {() => void} wakes a typed query waiting to settle: a newer one arrived */
let wake = () => {};
/** @type {number[]} arrival times of the last typed queries (the reader's rhythm) */
const keystrokes = [];
/** @type {() => void} */
let answeredOnce = () => {};
/** Resolves when the first results have been posted. */
const firstAnswer = new Promise((resolve) => { answeredOnce = () => resolve(undefined); });

/** What the site offers and how far each tier got (tier_status.js words it). */
const tiers = {
  /** @type {import("./tier_status.js").EncoderState} */
  encoder: "none",
  /** @type {import("./tier_status.js").ModelState | null} */
  model: null,
  why: "",
  modelBytes: 0,
  encoderError: "",
  modelError: "",
};
/** @type {ModelPlan} */
let plan = { load: true, drop: false, why: "", onDemand: true };
/** The model may start: the index is read and the first answer is out (or a second passed). */
let modelMayStart = false;
/** @type {Request | null} the latest query whose answer wanted the model (plan.onDemand) */
let wantedBy = null;
/** @type {AbortController | null} stops the model's download */
let modelDownload = null;
/** @type {{source: HttpSource, index: IndexReader, ortBase: string, threads: number} | null} */
let loaded = null;

/** A typed query's dense pass, cancelled because a newer query arrived while it settled. */
class Superseded extends Error {}

/**
 * @param {Mode} m
 * @param {string} message
 */
function status(m, message) {
  mode = m;
  worker.postMessage({ type: "status", mode: m, message });
}

/** Post the status line of the tiers' current state. */
function announce() {
  const { mode: m, message } = tierStatus(tiers);
  status(m, message);
}

/** @param {unknown} err */
function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Results as posted to the page; a record that failed its checks (no URL: validate.js
 * DROPPED) is left out.
 * @param {import("../search/retrieve.js").Result[]} results
 */
function plainResults(results) {
  return results.filter((r) => r.url).map((r) => ({
    rank: r.rank, score: r.score, url: r.url, title: r.title, kind: r.kind, text: r.text, display: r.display,
    id: r.id, similarity: r.similarity ?? null, // merge.js compares it across sites
  }));
}

/**
 * index.beforeFetch: a typed query's clusters (a frugal reader's: any shard it lacks)
 * wait until the query has settled, then are fetched unless a newer query came.
 * @param {import("../search/index.js").QueryShard} kind
 */
function beforeFetch(kind) {
  return kind === "cluster" || frugal ? settle() : Promise.resolve();
}

/**
 * The wait of the query being answered, if typed: its keyword results are posted
 * meanwhile (a frugal reader's wait for their shards too).
 */
function settle() {
  const request = current;
  if (!request || !request.typing) return Promise.resolve();
  request.settled ??= (async () => {
    const until = request.at + request.settle;
    if (performance.now() >= until || latest !== request) return; // settled already (a tier came later)
    if (!frugal) await postKeywordMeanwhile(request);
    const wait = until - performance.now();
    if (wait > 0 && latest === request) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, wait);
        wake = () => { clearTimeout(timer); resolve(undefined); };
      });
    }
  })();
  return request.settled.then(() => {
    if (latest !== request) throw new Superseded();
  });
}

/** The keyword results of a typed query that waits to settle (partial: its semantic ones follow). @param {Request} request */
async function postKeywordMeanwhile(request) {
  if (!searcher || latest !== request) return;
  const start = performance.now();
  const { results, weak } = await searcher.hybridAnswer(request.query, null, request.k);
  // not answeredOnce(): the model and the Cache Storage writes wait for the final answer
  // (its clusters, the other sites' merge), or the second that starts them anyway
  worker.postMessage({
    type: "results", id: request.id, mode: "keyword", results: plainResults(results), weak: weak && results.length > 0,
    timings: { embed_ms: 0, retrieve_ms: performance.now() - start }, partial: true,
  });
}

/**
 * The probe of tier `m`'s dense pass: a frugal reader's quick encoder probes a quarter of
 * the vectors (at 25k chunks: MRR@10 0.937 -> 0.933 for a quarter of the bytes); the model,
 * which the reader chose to download, the whole probe (it lost 0.027 there).
 * @param {Mode} m
 */
function probeFor(m) {
  return frugal && m !== "hybrid" ? frugalProbe(layoutProbe) : layoutProbe;
}

/**
 * The query vector in tier `m` and the encoder that made it (null: keyword only); unread:
 * the fast encoder knows none of the query's words (a zero vector then: no chunk is near,
 * as retrieve.py does). Only pump() and passagesFor() call it, one at a time (`busy`): the
 * search box's queries and Ask's share one onnxruntime session, whose runs never overlap.
 * @param {string} query @param {Mode} m
 * @returns {Promise<{vector: Float32Array | null, encoderName: "model" | "static", unread: boolean}>}
 */
async function queryVector(query, m) {
  const s = /** @type {Searcher} */ (searcher);
  if (m === "hybrid" && embedder) {
    return { vector: await embedder.embed(await correctSpelling(query, s.index, words)), encoderName: "model", unread: false };
  }
  if (m === "static" && encoder) {
    const encoded = encoder.encode(await correctSpelling(query, s.index, words));
    return { vector: encoded ?? new Float32Array(s.index.dim), encoderName: "static", unread: encoded === null };
  }
  return { vector: null, encoderName: "model", unread: false };
}

/**
 * Ask's passages: each query ranked in the current tier as the search box ranks it
 * (hybridAnswer's choice of fusion; `ranking` reranks and pins the decisive hits), the
 * rankings fused when there are several (Python's `sphinx-rag ask`), the passages sized to
 * `budget` characters. This site's only: the federated sites are not asked.
 * @param {{id: number, queries: unknown, k: unknown, budget: unknown}} msg
 */
async function passagesFor(msg) {
  const queries = Array.isArray(msg.queries) ? msg.queries.map((q) => clipQuery(wellFormed(String(q)))).filter((q) => q.trim()) : [];
  const budget = Number(msg.budget) >= 1 ? Math.trunc(Number(msg.budget)) : null;
  try {
    const s = /** @type {Searcher} */ (searcher);
    const m = mode;
    s.probe = probeFor(m);
    /** @type {Map<number, number>[]} */
    const rankings = [];
    for (const query of queries) {
      const { vector, encoderName } = await queryVector(query, m);
      const fusion = !vector || !s.index.hasVectors || s.fusion === "bm25" ? "bm25" : s.fusion;
      const ranked = await s.ranking(query, fusion === "bm25" ? null : vector, fusion, encoderName);
      // the model's tier with the reranker: the order the search box shows once reranked
      rankings.push(crossEncoder && m === "hybrid" && ranked.fused ? await s.rerankedScores(query, ranked, crossEncoder) : ranked.scored);
    }
    const scored = rankings.length === 1 ? rankings[0] : fuseRankings(rankings);
    const results = rankings.length ? await s.passages(scored, Number(msg.k) || 8, budget) : [];
    worker.postMessage({ type: "passages", id: msg.id, mode: m, results: plainResults(results) });
  } catch (err) {
    worker.postMessage({ type: "passages", id: msg.id, error: `sphinx-rag: search failed: ${describe(err)}` });
  }
}

/**
 * Answer Ask's oldest passages request, else the latest search in the current mode unless
 * that is done already. One job at a time (`busy`): Ask's shards never wait for a typed
 * query to settle (index.beforeFetch reads `current`), and the model runs one text at a time.
 */
async function pump() {
  if (busy || !searcher) return;
  const ask = asks.shift();
  if (ask) {
    busy = true;
    try {
      await passagesFor(ask);
    } finally {
      busy = false;
      queueMicrotask(pump);
    }
    return;
  }
  if (!latest) return;
  if (answered && answered.request === latest && answered.mode === mode) {
    if (toRerank && toRerank.request === latest && crossEncoder) rerankLatest();
    return;
  }
  busy = true;
  const request = latest;
  current = request;
  const m = mode;
  try {
    const start = performance.now();
    const { vector, encoderName, unread } = await queryVector(request.query, m);
    if (vector && latest !== request) return; // overtaken while embedding: drop it
    const embedded = vector ? performance.now() : start;
    // keyword-only without a vector; the static tier's ranking votes with DENSE_VOTE.static
    searcher.probe = probeFor(m);
    const answer = await searcher.hybridAnswer(request.query, vector, request.k, encoderName);
    // then the federated sites (federation.js; this site's results first: they share this
    // thread): the vector is theirs too if the same model made it
    const others = federation?.start(request.query, request.k, {
      vector, encoder: vector ? encoderName : null, model: searcher.index.manifest.model,
      semantic: m === "static" || m === "hybrid" || !searcher.index.hasVectors,
    }) ?? null;
    const results = plainResults(answer.results);
    const weak = answer.weak && results.length > 0;
    // Overtaken while fetching shards: still posted (the dialog shows an answer newer than
    // the one on screen, so a reader typing fast sees results follow), then the newer one.
    const timings = { embed_ms: embedded - start, retrieve_ms: performance.now() - embedded };
    // the tier before the model (static; keyword on a site without a working encoder) decides
    // whether this query wants the model (model_policy.js wantsModel)
    const lastFast = m === "static" || (m === "keyword" && (tiers.encoder === "none" || tiers.encoder === "failed"));
    const wants = lastFast && tiers.model !== null && wantsModel(request.query, { found: results.length, weak: answer.weak, unread });
    const wanted = wants && tiers.model === "ondemand" && plan.load;
    const modelComing = tiers.model === "waiting" || tiers.model === "downloading" || wanted;
    const pending = m === "keyword" ? tiers.encoder === "loading" || modelComing : m === "static" && unread && modelComing;
    answered = { request, mode: m };
    // the reranker reorders the model tier's answer of this site alone (a merged federated list stays)
    toRerank = m === "hybrid" && !others && answer.ranked?.fused ? { request, ranked: answer.ranked, weak } : null;
    const post = (/** @type {{results: any[], weak: boolean}} */ a) => worker.postMessage({
      type: "results",
      id: request.id,
      mode: m === "hybrid" || m === "static" ? m : "keyword",
      results: a.results,
      weak: a.weak,
      timings: { ...timings, posted_at: Date.now() },
      pending,
    });
    const done = () => {
      answeredOnce();
      if (wants) wantedBy = request; // for a reader who turns "automatic" on later
      if (wanted) demandModel(request);
    };
    if (others) { // the model waits for the other sites' answers too (its start takes the thread)
      others.post({ results, weak }, post, () => latest !== request).then(done, done);
    } else {
      post({ results, weak });
      done();
    }
  } catch (err) {
    if (err instanceof Superseded) return; // a newer query came while this one settled
    answered = { request, mode: m };
    worker.postMessage({ type: "results", id: request.id, mode: m, results: [] });
    worker.postMessage({ type: "status", mode: "error", message: `sphinx-rag: search failed: ${describe(err)}` });
  } finally {
    busy = false;
    current = null;
    queueMicrotask(pump); // a newer request, or a mode change, may be waiting
  }
}

/**
 * The latest query's hybrid answer reordered by the reranker (cross_encoder.js) and posted
 * again ({reranked: true}; the dialog swaps it in unless the reader is in the list). A typed
 * query waits until it has settled (a pause mid-word is not a query); a newer query drops it.
 */
async function rerankLatest() {
  const job = toRerank;
  if (busy || !job || job.request !== latest || !crossEncoder || !searcher) return;
  const request = job.request;
  const wait = request.typing ? request.at + request.settle - performance.now() : 0;
  if (wait > 0) {
    setTimeout(() => pump(), wait);
    return;
  }
  toRerank = null;
  busy = true;
  const s = searcher;
  try {
    const start = performance.now();
    const scored = await s.rerankedScores(request.query, job.ranked, crossEncoder);
    const passages = await s.passages(scored, request.k);
    if (latest !== request) return; // a newer query came meanwhile: its answer decides
    const dense = job.ranked.dense; // each hit's cosine, as the fused answer gave it (merge.js reads it)
    /** @type {Map<number, number>} */
    const cosine = new Map();
    if (dense) for (let r = 0; r < dense.ids.length; r++) cosine.set(dense.ids[r], dense.scores[r]);
    for (const p of passages) p.similarity = dense ? cosine.get(p.index) ?? 0 : null;
    const results = plainResults(passages);
    worker.postMessage({
      type: "results", id: request.id, mode: "hybrid", results, weak: job.weak, reranked: true, pending: false,
      timings: { rerank_ms: performance.now() - start, reranker_load_ms: rerankerLoadMs, posted_at: Date.now() },
    });
  } catch (err) {
    console.warn(`sphinx-rag: reranking failed (${describe(err)}): the fused order stays`);
  } finally {
    busy = false;
    queueMicrotask(pump);
  }
}

/**
 * The site's reranker, after its model: its files checked against the manifest (loader.js),
 * its session made; one console line and the fused order when it cannot be used.
 * @param {{source: HttpSource}} site
 */
async function loadReranker({ source }) {
  try {
    const start = performance.now();
    const files = await source.reranker();
    if (!files || !embedder) return;
    crossEncoder = await CrossEncoder.create(ort, files);
    rerankerLoadMs = performance.now() - start;
    pump(); // the answer on screen may be reordered now
  } catch (err) {
    console.warn(`sphinx-rag: the reranker cannot be used (${describe(err)}): results stay in the fused order`);
  }
}

/** @param {any} value @returns {ModelPlan} */
function readPlan(value) {
  if (!value || typeof value !== "object") return { load: true, drop: false, why: "", onDemand: true };
  return {
    load: value.load !== false, drop: Boolean(value.drop), why: String(value.why ?? ""),
    onDemand: value.onDemand !== false,
  };
}

/**
 * A query wanted the model (its fast answer is posted): start the download, a typed query
 * once it has settled (settle.js: a pause mid-word is not a query), unless a newer query
 * came meanwhile (its own answer decides).
 * @param {Request} request
 */
function demandModel(request) {
  const go = () => {
    if (latest !== request || tiers.model !== "ondemand" || !plan.load) return;
    modelMayStart = true; // its answer is out
    startModel();
  };
  const wait = request.typing ? request.at + request.settle - performance.now() : 0;
  if (wait > 0) setTimeout(go, wait);
  else go();
}

/** Start the model's download if the plan allows it and it is not there or on its way. */
function startModel() {
  if (!loaded || !modelMayStart || tiers.model === null) return;
  if (!plan.load) {
    if (tiers.model !== "ready") {
      tiers.model = "held";
      tiers.why = plan.why;
      announce();
    }
    return;
  }
  if (tiers.model === "downloading" || tiers.model === "ready") return;
  loadModel(loaded);
}

/** @param {{source: HttpSource, index: IndexReader, ortBase: string, threads: number}} site */
async function loadModel({ source, index, ortBase, threads }) {
  const download = new AbortController();
  modelDownload = download;
  tiers.model = "downloading";
  announce();
  /** @type {Embedder | null} */
  let made = null;
  try {
    ort.env.wasm.wasmPaths = ortBase;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = "error";
    const isolated = Boolean(/** @type {any} */ (globalThis).crossOriginIsolated);
    const numThreads = isolated ? Math.max(1, threads) : 1;
    const [model] = await Promise.all([source.model(download.signal), index.centroids(), index.denseDirectory()]);
    if (!model) throw new Error("the manifest lists no model");
    if (download.signal.aborted) return;
    made = await Embedder.create(ort, { ...model, numThreads });
    if (download.signal.aborted) {
      made.release().catch(() => {});
      return;
    }
    embedder = made;
    words = modelWords(model.vocab);
  } catch (err) {
    if (download.signal.aborted) return; // stopped on purpose
    tiers.model = "failed";
    tiers.modelError = describe(err);
    announce();
    return;
  } finally {
    if (modelDownload === download) modelDownload = null;
  }
  tiers.model = "ready";
  announce();
  pump(); // run the latest query again, now hybrid
  loadReranker({ source }); // its files after the model's (they come with the model's tier)
}

/**
 * The reader changed the model setting: start the download, stop it, or drop the model.
 * @param {ModelPlan} next
 */
function setPlan(next) {
  plan = next;
  if (plan.load && plan.onDemand) { // "automatic": kept if here or on its way, else when a query wants it
    if (tiers.model === null || tiers.model === "downloading" || tiers.model === "ready") return;
    tiers.model = "ondemand";
    if (loaded) announce();
    if (wantedBy && wantedBy === latest) demandModel(wantedBy); // the query shown wanted it
    return;
  }
  if (plan.load) {
    if (tiers.model === "held" || tiers.model === "ondemand") tiers.model = "waiting";
    modelMayStart = modelMayStart || Boolean(loaded); // the reader asked: no need to wait for a first answer
    startModel();
    return;
  }
  if (tiers.model === null) return;
  modelDownload?.abort();
  modelDownload = null;
  if (tiers.model === "ready" && !plan.drop) return; // already here: using it costs nothing more
  if (embedder) {
    embedder.release().catch(() => {});
    embedder = null;
    words = encoder ? modelWords(encoder.vocab) : new Set();
  }
  crossEncoder?.release().catch(() => {}); // it came with the model, it goes with it
  crossEncoder = null;
  toRerank = null;
  tiers.model = "held";
  tiers.why = plan.why;
  if (loaded) {
    announce();
    pump(); // the latest query again, without the model
  }
}

/**
 * @param {{base: string, ortBase: string, threads?: number, model?: ModelPlan, frugal?: boolean,
 *          sources?: Record<string, boolean>}} options
 */
async function init({ base, ortBase, threads = 1, model, frugal: saving = false, sources = {} }) {
  if (started) return;
  started = true;
  sourceChoices = sources;
  plan = readPlan(model);
  frugal = Boolean(saving);
  status("loading", "Loading the search index…");
  const source = new HttpSource(base);
  // Keeping files in Cache Storage, and pruning what older builds left there, wait for the
  // first answer (or a second without a query): they must not slow the first results.
  const afterFirstAnswer = Promise.race([firstAnswer, new Promise((r) => setTimeout(r, 1000))]);
  source.deferWrites(afterFirstAnswer);
  /** @type {IndexReader} */
  let index;
  try {
    index = new IndexReader(await source.manifest(), source);
    await index.directory();
    searcher = new Searcher(index);
    layoutProbe = searcher.probe;
    index.beforeFetch = beforeFetch;
    worker.postMessage({ type: "settings", settings: index.manifest.settings ?? {} });
    federation = new Federation(index.manifest.settings, {
      homeBase: base, // the merge keys this site's results by their absolute URLs
      writesAfter: afterFirstAnswer,
      onChange: (sites) => worker.postMessage({ type: "sources", sources: sites }),
    });
    if (federation.configured) federation.setChoices(sourceChoices);
  } catch (err) {
    status("error", describe(err));
    return;
  }
  const withModel = index.hasVectors && index.manifest.model_files != null;
  const withEncoder = index.hasVectors && index.manifest.encoder != null;
  tiers.encoder = withEncoder ? "loading" : "none";
  tiers.model = withModel ? (plan.load ? (plan.onDemand ? "ondemand" : "waiting") : "held") : null;
  tiers.why = plan.why;
  // what a reader who needs meaning downloads: the model, and the reranker that follows it
  tiers.modelBytes = withModel ? modelBytes(index.manifest.model_files) + rerankerBytes(index.manifest.reranker_files) : 0;
  worker.postMessage({
    type: "tiers",
    encoder: withEncoder,
    model: withModel ? { bytes: tiers.modelBytes, size: downloadSize(tiers.modelBytes) } : null,
  });
  loaded = { source, index, ortBase, threads };
  status("keyword", withModel || withEncoder
    ? "Keyword results — semantic search loading…"
    : "Keyword search: this site's index has no semantic embeddings");
  pump();
  afterFirstAnswer.then(() => index.shardNames()).then((names) => source.prune(names)).catch(() => {}); // drop what older builds left
  if (withEncoder) {
    try {
      const [made] = await Promise.all([index.encoder(), index.centroids(), index.denseDirectory()]);
      encoder = made;
      if (encoder && !embedder) words = modelWords(encoder.vocab);
      tiers.encoder = "ready";
    } catch (err) {
      tiers.encoder = "failed";
      tiers.encoderError = describe(err);
    }
    announce();
    pump();
  } else if (withModel && (!plan.load || plan.onDemand)) {
    announce(); // keyword results only, and why (or when the model comes)
  }
  if (!withModel) return;
  // "always": the model (23 MB) waits for the first keyword answer, or a second without a
  // query: a reader's first results must not share the line with it (it is fetched at low
  // priority too). By default it waits for a query that wants it (demandModel).
  await afterFirstAnswer;
  modelMayStart = true;
  if (!plan.onDemand || !plan.load) startModel();
}

worker.addEventListener("message", (/** @type {MessageEvent} */ e) => {
  const msg = e.data || {};
  if (msg.type === "init") {
    init(msg);
  } else if (msg.type === "search") {
    const at = performance.now();
    const typing = Boolean(msg.typing);
    if (typing) {
      keystrokes.push(at);
      if (keystrokes.length > RHYTHM_KEYS) keystrokes.shift();
    }
    latest = {
      id: msg.id, query: clipQuery(wellFormed(msg.query)), k: Number(msg.k) || 10, typing, at,
      settle: typing ? settleDelay(keystrokes, frugal ? FRUGAL_SETTLE : SETTLE) : 0,
    };
    wake(); // a typed query waiting to settle is overtaken
    federation?.prepare(); // the manifests of sites read for the first time, while this site answers
    pump();
  } else if (msg.type === "model") {
    setPlan(readPlan(msg));
  } else if (msg.type === "sources") {
    sourceChoices = msg.sources ?? {};
    if (!federation?.configured) return;
    federation.setChoices(sourceChoices);
    answered = null; // the latest query again, over the sites now chosen
    pump();
  } else if (msg.type === "passages") {
    if (searcher) {
      asks.push(msg);
      pump();
    } else {
      worker.postMessage({ type: "passages", id: msg.id, error: "sphinx-rag: search failed: the search index is not loaded yet" });
    }
  }
});
