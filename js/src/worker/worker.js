// @ts-check
/**
 * The search worker (a module Web Worker, built by build.mjs into worker.js): owns
 * the index so that loading, hashing and scoring never block the page.
 *
 * Protocol
 *   main -> worker  {type: "init", base, ortBase, threads, sources}   base: the index directory
 *                   {type: "search", id, query, k}
 *                   {type: "sources", sources}   the reader's choice of sites: {name: on} ("" is this site)
 *   worker -> main  {type: "status", mode: "loading"|"keyword"|"static"|"hybrid"|"error", message}
 *                   {type: "settings", settings}   the manifest's `settings` (e.g. `llm`), once
 *                   {type: "sources", sources: [{name, url, enabled, state, message}]}   the federated
 *                    sites (federation.js), when one's state changes
 *                   {type: "results", id, mode, results: [{rank, score, url, title, kind, text, display, id,
 *                    source?}], weak, timings: {embed_ms, retrieve_ms}}
 *   source: the federated site a result comes from (its url absolute); none: this site. With
 *   federated sites on, a query's results are posted merged (merge.js), and again as late
 *   sites answer.
 *   weak: the results are only the nearest, no good match (retrieve.js weakMatch)
 *   timings: performance.now() milliseconds inside the worker, for benchmarks/bench_browser.py
 *   (the page ignores them): embed_ms = spelling correction + WordPiece + onnxruntime + pooling
 *   (0 in keyword mode); retrieve_ms = BM25 + dense scoring + fusion + result assembly.
 *
 * Loading order, one tier after the other (each runs the latest query again):
 * 1. "keyword": the manifest and the directory shard (each query then fetches only its
 *    own term and text shards);
 * 2. "static": the site's static query encoder (static_encoder.js, a few hundred KB, no
 *    wasm) and the centroids: keyword + semantic results (each query also fetches its
 *    nearest clusters);
 * 3. "hybrid": the full model through onnxruntime-web (21 MB + 3.7 MB wasm), after the
 *    first answer, at low priority; it takes over from the static encoder.
 * A site has tier 2, tier 3 or both (sphinx_rag_query_encoder).
 * Only the latest query is embedded: one that a newer query overtook while it was
 * being embedded is dropped; one overtaken while its shards were fetched is posted.
 * onnxruntime-web comes from the site's own _static
 * (ortBase), never a CDN; 1 thread unless the page is cross-origin isolated.
 */

import * as ort from "onnxruntime-web/wasm";
import { Embedder } from "../search/embed.js";
import { IndexReader } from "../search/index.js";
import { Searcher, correctSpelling, modelWords } from "../search/retrieve.js";
import { StaticEncoder } from "../search/static_encoder.js";
import { Federation } from "./federation.js";
import { HttpSource } from "./loader.js";
import { wellFormed } from "../ui/well_formed.js";

/** @typedef {{id: number, query: string, k: number}} Request */

const worker = /** @type {any} */ (self);

/** @type {Searcher | null} */
let searcher = null;
/** @type {Embedder | null} */
let embedder = null;
/** @type {StaticEncoder | null} */
let encoder = null;
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
/** @type {{request: Request, mode: string} | null} */
let answered = null;
let busy = false;
let started = false;
/** @type {() => void} */
let answeredOnce = () => {};
/** Resolves when the first results have been posted. */
const firstAnswer = new Promise((resolve) => { answeredOnce = () => resolve(undefined); });

/**
 * @param {Mode} m
 * @param {string} message
 */
function status(m, message) {
  mode = m;
  worker.postMessage({ type: "status", mode: m, message });
}

/** @param {unknown} err */
function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

/** Answer the latest request in the current mode, unless that is done already. */
async function pump() {
  if (busy || !searcher || !latest) return;
  if (answered && answered.request === latest && answered.mode === mode) return;
  busy = true;
  const request = latest;
  const m = mode;
  try {
    const start = performance.now();
    let embedded = start;
    /** @type {Float32Array | null} */
    let vector = null;
    if (m === "hybrid" && embedder) {
      vector = await embedder.embed(await correctSpelling(request.query, searcher.index, words));
      if (latest !== request) return; // overtaken while embedding: drop it
      embedded = performance.now();
    } else if (m === "static" && encoder) {
      // no token the encoder knows: a zero vector (no chunk is near), as retrieve.py does
      vector = encoder.encode(await correctSpelling(request.query, searcher.index, words))
        ?? new Float32Array(searcher.index.dim);
      if (latest !== request) return;
      embedded = performance.now();
    }
    // keyword-only without a vector; the static tier's ranking votes with DENSE_VOTE.static
    const answer = await searcher.hybridAnswer(request.query, vector, request.k, m === "static" ? "static" : "model");
    // then the federated sites (federation.js; this site's results first: they share this
    // thread): the vector is theirs too if the same model made it
    const others = federation?.start(request.query, request.k, {
      vector, encoder: vector ? (m === "static" ? "static" : "model") : null, model: searcher.index.manifest.model,
      semantic: m === "static" || m === "hybrid" || !searcher.index.hasVectors,
    }) ?? null;
    const results = answer.results;
    const weak = answer.weak && results.length > 0;
    // Overtaken while fetching shards: still posted (the dialog shows an answer newer than
    // the one on screen, so a reader typing fast sees results follow), then the newer one.
    const plain = results.map((r) => ({
      rank: r.rank, score: r.score, url: r.url, title: r.title, kind: r.kind, text: r.text, display: r.display,
      id: r.id,
    }));
    const timings = { embed_ms: embedded - start, retrieve_ms: performance.now() - embedded };
    answered = { request, mode: m };
    const post = (/** @type {{results: any[], weak: boolean}} */ a) => worker.postMessage({
      type: "results",
      id: request.id,
      mode: m === "hybrid" || m === "static" ? m : "keyword",
      results: a.results,
      weak: a.weak,
      timings,
    });
    if (others) { // the model waits for the other sites' answers too (its start takes the thread)
      others.post({ results: plain, weak }, post, () => latest !== request).then(answeredOnce, answeredOnce);
    } else {
      post({ results: plain, weak });
      answeredOnce();
    }
  } catch (err) {
    answered = { request, mode: m };
    worker.postMessage({ type: "results", id: request.id, mode: m, results: [] });
    worker.postMessage({ type: "status", mode: "error", message: `sphinx-rag: search failed: ${describe(err)}` });
  } finally {
    busy = false;
    queueMicrotask(pump); // a newer request, or a mode change, may be waiting
  }
}

/**
 * @param {{base: string, ortBase: string, threads?: number, sources?: Record<string, boolean>}} options
 */
async function init({ base, ortBase, threads = 1, sources = {} }) {
  if (started) return;
  started = true;
  sourceChoices = sources;
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
    worker.postMessage({ type: "settings", settings: index.manifest.settings ?? {} });
    federation = new Federation(index.manifest.settings, {
      writesAfter: afterFirstAnswer,
      onChange: (sources) => worker.postMessage({ type: "sources", sources }),
    });
    if (federation.configured) federation.setChoices(sourceChoices);
  } catch (err) {
    status("error", describe(err));
    return;
  }
  const withModel = index.hasVectors && index.manifest.model_files != null;
  const withEncoder = index.hasVectors && index.manifest.encoder != null;
  status(
    "keyword",
    withModel || withEncoder
      ? "Keyword results — semantic search loading…"
      : "Keyword search: this site's index has no semantic embeddings",
  );
  pump();
  afterFirstAnswer.then(() => index.shardNames()).then((names) => source.prune(names)).catch(() => {}); // drop what older builds left
  if (withEncoder) {
    try {
      const [loaded] = await Promise.all([index.encoder(), index.centroids(), index.denseDirectory()]);
      encoder = loaded;
      if (encoder) words = modelWords(encoder.vocab);
      status("static", withModel
        ? "Hybrid search: keyword + semantic (fast encoder; full model loading…)"
        : "Hybrid search: keyword + semantic (this site's fast query encoder)");
      pump();
    } catch (err) {
      status("keyword", `Keyword only: the query encoder failed to load (${describe(err)})`);
    }
  }
  if (!withModel) return;
  // The model (21 MB) waits for the first keyword answer, or a second without a query:
  // a reader's first results must not share the line with it (it is fetched at low priority too).
  await afterFirstAnswer;

  try {
    ort.env.wasm.wasmPaths = ortBase;
    ort.env.wasm.proxy = false;
    ort.env.logLevel = "error";
    const isolated = Boolean(/** @type {any} */ (globalThis).crossOriginIsolated);
    const numThreads = isolated ? Math.max(1, threads) : 1;
    const [model] = await Promise.all([source.model(), index.centroids(), index.denseDirectory()]);
    if (!model) throw new Error("the manifest lists no model");
    embedder = await Embedder.create(ort, { ...model, numThreads });
    words = modelWords(model.vocab);
  } catch (err) {
    const fallback = encoder ? "static" : "keyword";
    status(fallback, `${encoder ? "Fast encoder only" : "Keyword only"}: the semantic model failed to load (${describe(err)})`);
    return;
  }
  status("hybrid", "Hybrid search: keyword + semantic (full model)");
  pump(); // run the latest query again, now hybrid
}

worker.addEventListener("message", (/** @type {MessageEvent} */ e) => {
  const msg = e.data || {};
  if (msg.type === "init") {
    init(msg);
  } else if (msg.type === "search") {
    latest = { id: msg.id, query: wellFormed(msg.query), k: Number(msg.k) || 10 };
    federation?.prepare(); // the manifests of sites read for the first time, while this site answers
    pump();
  } else if (msg.type === "sources") {
    sourceChoices = msg.sources ?? {};
    if (!federation?.configured) return;
    federation.setChoices(sourceChoices);
    answered = null; // the latest query again, over the sites now chosen
    pump();
  }
});
