// @ts-check
/**
 * The status line of the search worker: which tier answers (keyword, the site's static
 * encoder, the full model) and, for the full model, whether it is downloading (and how
 * large it is), waits for a question that needs it (model_policy.js wantsModel), is held
 * back (and why) or off. One pure function of the worker's state, so
 * each text is written once and tested in Node.
 * @module tier_status
 */

/**
 * onnxruntime-web's wasm and its loader in bytes, set by build.mjs (esbuild `define`) from
 * the files it ships beside worker.js; 0 where the code runs unbundled (Node tests).
 */
export const RUNTIME_BYTES = Number(/** @type {any} */ (globalThis).SPHINX_RAG_RUNTIME_BYTES) || 0;

/** The files worker/loader.js downloads for the model (the manifest also lists tokenizer.json). */
export const MODEL_DOWNLOAD = ["model.onnx", "vocab.txt", "model_info.json"];
/** The reranker files cross_encoder.js reads (its vocab.txt is the same bytes as the model's: one cache entry). */
export const RERANKER_DOWNLOAD = ["reranker.onnx", "reranker_info.json"];

/**
 * @typedef {"none" | "loading" | "ready" | "failed"} EncoderState
 * @typedef {"waiting" | "ondemand" | "held" | "downloading" | "ready" | "failed"} ModelState
 *   waiting: to start after the first answer (the reader chose "always"); ondemand: to start
 *   once a query wants it; held: not downloaded (TierState.why)
 * @typedef {object} TierState
 * @property {EncoderState} encoder  "none": the site has no static encoder
 * @property {ModelState | null} model  null: the site ships no model
 * @property {string} [why]  why the model is held ("data saver on", "off in settings", ...)
 * @property {number} [modelBytes]  the model files' bytes (manifest model_files)
 * @property {string} [encoderError]  why the encoder failed to load
 * @property {string} [modelError]  why the model failed to load
 * @typedef {{mode: "keyword" | "static" | "hybrid", message: string}} TierStatus
 */

/** @param {number} bytes  "24 MB", "0.5 MB" */
export function megabytes(bytes) {
  const mb = bytes / 1e6;
  return `${mb >= 10 ? Math.round(mb) : mb.toFixed(1)} MB`;
}

/**
 * What the model download weighs: "24 MB + 14 MB runtime" (onnxruntime's wasm, fetched
 * with it; its gzip is a quarter of that where the server compresses).
 * @param {number} modelBytes
 * @param {number} [runtimeBytes]
 */
export function downloadSize(modelBytes, runtimeBytes = RUNTIME_BYTES) {
  return runtimeBytes > 0 ? `${megabytes(modelBytes)} + ${megabytes(runtimeBytes)} runtime` : megabytes(modelBytes);
}

/**
 * The model files' bytes a reader downloads, from the manifest's model_files entry.
 * @param {{files: Record<string, {bytes: number}>} | null | undefined} entry
 */
export function modelBytes(entry) {
  if (!entry) return 0;
  return MODEL_DOWNLOAD.reduce((sum, name) => sum + (entry.files[name]?.bytes ?? 0), 0);
}

/**
 * The reranker's bytes a reader downloads after the model (manifest reranker_files; 0: none).
 * @param {{files: Record<string, {bytes: number}>} | null | undefined} entry
 */
export function rerankerBytes(entry) {
  if (!entry) return 0;
  return RERANKER_DOWNLOAD.reduce((sum, name) => sum + (entry.files[name]?.bytes ?? 0), 0);
}

/**
 * The status line once the keyword tier is ready (a site with neither encoder nor model:
 * a keyword-only index).
 * @param {TierState} state
 * @returns {TierStatus}
 */
export function tierStatus({ encoder, model, why = "", modelBytes: bytes = 0, encoderError = "", modelError = "" }) {
  const quick = encoder === "ready";
  const size = downloadSize(bytes);
  const mode = quick ? "static" : "keyword";
  if (model === "ready") return { mode: "hybrid", message: "Hybrid search: keyword + semantic (full model)" };
  if (model === "failed") {
    return { mode, message: `${quick ? "Fast encoder only" : "Keyword only"}: the semantic model failed to load (${modelError})` };
  }
  if (encoder === "failed") {
    return { mode, message: `Keyword only: the query encoder failed to load (${encoderError})` };
  }
  if (model === null) {
    if (quick) return { mode, message: "Hybrid search: keyword + semantic (this site's fast query encoder)" };
    if (encoder === "none") return { mode, message: "Keyword search: this site's index has no semantic embeddings" };
  }
  switch (model) {
    case "downloading":
      return { mode, message: `Downloading the semantic model (${size})… ` +
        `${quick ? "keyword and quick semantic" : "keyword"} results meanwhile` };
    case "ondemand":
      if (encoder === "loading") break;
      return {
        mode,
        message: quick
          ? `Hybrid search: keyword + semantic (fast encoder). The semantic model (${size}) loads when a question needs it.`
          : `Keyword results. The semantic model (${size}) loads when a question needs it.`,
      };
    case "held":
      if (encoder === "loading") break;
      return {
        mode,
        message: quick
          ? `Semantic model not downloaded (${why}): quick semantic results from the site's encoder. Change in settings.`
          : `Keyword results only: semantic model not downloaded (${why}). Change in settings.`,
      };
    default: // waiting for the first answer
      if (quick) return { mode, message: `Hybrid search: keyword + semantic (fast encoder; the semantic model, ${size}, loads next)` };
  }
  return { mode: "keyword", message: "Keyword results — semantic search loading…" };
}
