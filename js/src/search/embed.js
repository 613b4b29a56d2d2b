// @ts-check
/**
 * Query embeddings in the browser (or Node) with onnxruntime-web, as sphinx_rag/model/embed.py
 * computes them: WordPiece ids truncated to max_seq_length, the model's
 * last_hidden_state pooled over the attention mask (mean) or [CLS], L2-normalized.
 *
 * `ort` is injected, not imported: the worker passes the onnxruntime-web module it
 * loaded (with env.wasm.wasmPaths set), the Node tests pass `import("onnxruntime-web")`.
 * @module embed
 */

import { WordPieceTokenizer } from "./wordpiece.js";

let threadsConfigured = false; // onnxruntime-web reads env.wasm.numThreads once

/**
 * @typedef {object} ModelInfo  model_info.json
 * @property {number} dim
 * @property {number} max_seq_length
 * @property {"mean" | "cls"} [pooling]
 * @property {boolean} [normalize]
 * @property {boolean} [do_lower_case]
 * @property {string} [model_id]
 */

export class Embedder {
  /**
   * Use Embedder.create().
   * @param {any} ort
   * @param {any} session  an ort.InferenceSession
   * @param {WordPieceTokenizer} tokenizer
   * @param {ModelInfo} info
   */
  constructor(ort, session, tokenizer, info) {
    this.ort = ort;
    this.session = session;
    this.tokenizer = tokenizer;
    this.info = info;
    this.dim = info.dim;
    this.pooling = info.pooling ?? "mean";
    this.normalize = info.normalize ?? true;
    if (this.pooling !== "mean" && this.pooling !== "cls") {
      throw new Error(`sphinx-rag: unsupported pooling ${JSON.stringify(this.pooling)} in model_info.json`);
    }
    /** @type {string[]} */
    const outputs = session.outputNames;
    this.output = outputs.includes("last_hidden_state") ? "last_hidden_state" : outputs[0];
    this.inputs = new Set(session.inputNames);
  }

  /**
   * Create the onnxruntime session (wasm execution provider).
   * @param {any} ort  the onnxruntime-web module
   * @param {{model: Uint8Array | ArrayBuffer, vocab: string, info: ModelInfo,
   *          numThreads?: number, sessionOptions?: object}} files
   *   numThreads (default 1) is set on ort.env.wasm before the first session only:
   *   onnxruntime-web reads it once; threads > 1 need a cross-origin isolated page.
   * @returns {Promise<Embedder>}
   */
  static async create(ort, { model, vocab, info, numThreads = 1, sessionOptions = {} }) {
    if (ort.env?.wasm && !threadsConfigured) {
      ort.env.wasm.numThreads = numThreads;
      threadsConfigured = true;
    }
    const bytes = model instanceof Uint8Array ? model : new Uint8Array(model);
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ["wasm"],
      graphOptimizationLevel: "all",
      ...sessionOptions,
    });
    return new Embedder(ort, session, WordPieceTokenizer.fromModelInfo(vocab, info), info);
  }

  /**
   * The embedding of one text (a query): dim float32 values.
   * @param {string} text
   * @returns {Promise<Float32Array>}
   */
  async embed(text) {
    const { ids } = this.tokenizer.encode(text);
    const n = ids.length;
    const Tensor = this.ort.Tensor;
    /** @type {Record<string, any>} */
    const feeds = {
      input_ids: new Tensor("int64", BigInt64Array.from(ids, (x) => BigInt(x)), [1, n]),
      attention_mask: new Tensor("int64", new BigInt64Array(n).fill(1n), [1, n]),
      token_type_ids: new Tensor("int64", new BigInt64Array(n), [1, n]),
    };
    for (const name of Object.keys(feeds)) if (!this.inputs.has(name)) delete feeds[name];
    const results = await this.session.run(feeds);
    const hidden = /** @type {Float32Array} */ (results[this.output].data);
    const dim = this.dim;
    const pooled = new Float64Array(dim);
    if (this.pooling === "cls") {
      for (let j = 0; j < dim; j++) pooled[j] = hidden[j];
    } else {
      // One unpadded sequence: the mask is all ones, the mean is over all n tokens.
      for (let t = 0; t < n; t++) for (let j = 0; j < dim; j++) pooled[j] += hidden[t * dim + j];
      for (let j = 0; j < dim; j++) pooled[j] /= n;
    }
    const out = new Float32Array(dim);
    let norm = 1;
    if (this.normalize) {
      let sq = 0;
      for (let j = 0; j < dim; j++) sq += Math.fround(pooled[j]) ** 2;
      norm = Math.max(Math.sqrt(sq), 1e-12);
    }
    for (let j = 0; j < dim; j++) out[j] = Math.fround(pooled[j]) / norm;
    for (const t of Object.values(results)) t.dispose?.();
    return out;
  }

  /** Release the onnxruntime session. */
  async release() {
    await this.session.release?.();
  }
}
