// The module of benchmarks/bench_browser.py's benchmark page: the client's own modules
// (js/src), driven directly to time each stage of a hybrid query and to return the
// query vectors for the comparison with Python. bench_browser.py bundles it with esbuild
// (onnxruntime-web from js/node_modules) into bench.js, loaded by bench.html.
// Format 2: the index is read lazily (HttpSource + IndexReader); benchQueries runs every
// query once untimed first, so the timed run measures computation, not shard fetches.
import * as ort from "onnxruntime-web/wasm";
import { HttpSource } from "../js/src/worker/loader.js";
import { IndexReader } from "../js/src/search/index.js";
import { Embedder } from "../js/src/search/embed.js";
import { CANDIDATES, Searcher, correctSpelling, modelWords, rrfFuse, topK } from "../js/src/search/retrieve.js";

let searcher, embedder, words;

window.benchInit = async (base, ortBase) => {
  ort.env.wasm.wasmPaths = ortBase;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = "error";
  const source = new HttpSource(base, { caches: null });
  const index = new IndexReader(await source.manifest(), source);
  await index.directory();
  const [model] = await Promise.all([source.model(), index.centroids(), index.denseDirectory()]);
  embedder = await Embedder.create(ort, { ...model, numThreads: 1 });  // as the worker, not isolated
  words = modelWords(model.vocab);
  searcher = new Searcher(index);
  return { chunks: index.nChunks, probe: searcher.probe, fusion: searcher.fusion };
};

window.benchQueries = async (queries, withVectors) => {
  const out = [];
  for (const q of queries) {  // untimed: fetch every shard these queries need
    const vector = await embedder.embed(await correctSpelling(q, searcher.index, words));
    await searcher.search(q, vector, 10);
  }
  for (const q of queries) {
    const t0 = performance.now();
    const text = await correctSpelling(q, searcher.index, words);
    const t1 = performance.now();
    const tokens = embedder.tokenizer.encode(text).ids.length;
    const t2 = performance.now();
    const vector = await embedder.embed(text);  // WordPiece again + onnxruntime + pooling
    const t3 = performance.now();
    const bm25Top = topK(await searcher.bm25Scores(q), CANDIDATES);
    const t4 = performance.now();
    const denseTop = topK(await searcher.denseScores(vector), CANDIDATES);
    const t5 = performance.now();
    rrfFuse([bm25Top, denseTop], searcher.rrfK, searcher.index.weights);
    const t6 = performance.now();
    await searcher.search(q, vector, 10);
    const t7 = performance.now();
    out.push({ query: q, text, tokens, spell: t1 - t0, wordpiece: t2 - t1, embed: t3 - t2, bm25: t4 - t3,
               dense: t5 - t4, fuse: t6 - t5, hybridSearch: t7 - t6,
               vector: withVectors ? Array.from(vector) : null });
  }
  return out;
};
