// @ts-check
/**
 * The cross-encoder stage, a mirror of sphinx_rag/search/cross_encoder.py: the fused top
 * `depth` candidates re-scored by a small model that reads the question and each chunk
 * together, `[CLS] question [SEP] chunk text [SEP]`, then ordered by
 * `logit - rankWeight * ln(fused rank)` above every other candidate.
 *
 * The same ids (wordpiece.js reproduces the Python tokenizer's), the same padded batch
 * and onnxruntime-web's wasm: tests/fixtures/cross_encoder.json pins the scores.
 * `ort` is injected, as in embed.js.
 * @module cross_encoder
 */

import { tokenize } from "./lexical.js";
import { WordPieceTokenizer } from "./wordpiece.js";

/** Code points of a text tokenized per token of the budget (Python's CHARS_PER_TOKEN). */
export const CHARS_PER_TOKEN = 8;
/** How a chunk's text is cut to the model's budget (Python's TEXT_CUTS). */
export const TEXT_CUTS = ["head", "focus"];
/** focusText reads CHARS_PER_TOKEN * FOCUS_READ_TOKENS code points at most. */
const FOCUS_READ_TOKENS = 2500;

/**
 * @typedef {object} RerankerInfo  reranker_info.json
 * @property {number} max_query_tokens
 * @property {number} max_tokens
 * @property {number} depth
 * @property {number} rank_weight
 * @property {boolean} [do_lower_case]
 * @property {string} [text_cut]  one of TEXT_CUTS ("head" when absent)
 */

/**
 * reranker_info.json checked as Python's RerankerInfo.from_json checks it.
 * @param {any} data
 * @returns {RerankerInfo}
 */
export function readInfo(data) {
  const num = (/** @type {string} */ key) => {
    const v = data?.[key];
    if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`sphinx-rag: reranker_info.json lacks or mistypes ${key}`);
    return v;
  };
  const info = {
    max_query_tokens: Math.trunc(num("max_query_tokens")), max_tokens: Math.trunc(num("max_tokens")),
    depth: Math.trunc(num("depth")), rank_weight: num("rank_weight"), do_lower_case: data.do_lower_case !== false,
    text_cut: data.text_cut === undefined ? "head" : data.text_cut,
  };
  if (!(info.max_query_tokens >= 1 && info.max_query_tokens < info.max_tokens - 3 && info.max_tokens <= 512
        && info.depth >= 1 && info.depth <= 100 && info.rank_weight >= 0 && info.rank_weight <= 10
        && TEXT_CUTS.includes(info.text_cut))) {
    throw new Error("sphinx-rag: reranker_info.json holds values out of range");
  }
  return info;
}

/**
 * The part of a text that is tokenized: its first CHARS_PER_TOKEN * maxTokens code points.
 * @param {string} text
 * @param {number} maxTokens
 */
export function clipText(text, maxTokens) {
  const most = CHARS_PER_TOKEN * maxTokens;
  if (text.length <= most) return text; // fewer UTF-16 units than that: fewer code points too
  let out = "";
  let n = 0;
  for (const ch of text) {
    if (n++ >= most) break;
    out += ch;
  }
  return out;
}

/**
 * Python's focus_text: the first line (owner or heading path), then the other lines' sentences
 * with most distinct question words (lexical.js tokenize) first, ties and the rest in
 * reading order; clipped like clipText.
 * @param {string} query
 * @param {string} text
 * @param {number} maxTokens
 */
export function focusText(query, text, maxTokens) {
  const lines = clipText(text, FOCUS_READ_TOKENS).split("\n");
  const units = lines.slice(1).flatMap((line) => line.split(/(?<=[.!?]) +/)).filter((u) => /[^ \t]/.test(u));
  const asked = new Set(tokenize(query));
  const shared = units.map((u) => new Set(tokenize(u).filter((t) => asked.has(t))).size);
  const order = units.map((_, k) => k).sort((a, b) => shared[b] - shared[a] || a - b);
  return clipText([lines[0], ...order.map((k) => units[k])].join("\n"), maxTokens);
}

/**
 * The part of a chunk's text the model reads, by info.text_cut (Python's model_text).
 * @param {string} query
 * @param {string} text
 * @param {RerankerInfo} info
 */
export function modelText(query, text, info) {
  return info.text_cut === "focus" ? focusText(query, text, info.max_tokens) : clipText(text, info.max_tokens);
}

/**
 * [CLS] question [SEP] text [SEP], and the token types (Python's pair_ids).
 * @param {number[]} queryIds
 * @param {number[]} textIds
 * @param {{cls: number, sep: number, info: RerankerInfo}} options
 * @returns {{ids: number[], types: number[]}}
 */
export function pairIds(queryIds, textIds, { cls, sep, info }) {
  const q = queryIds.slice(0, info.max_query_tokens);
  const t = textIds.slice(0, Math.max(0, info.max_tokens - 3 - q.length));
  return { ids: [cls, ...q, sep, ...t, sep], types: [...new Array(q.length + 2).fill(0), ...new Array(t.length + 1).fill(1)] };
}

/**
 * Each candidate's combined score, in fused order (rank 1 first): logit - w * ln(rank).
 * @param {ArrayLike<number>} logits
 * @param {number} rankWeight
 * @returns {Float64Array}
 */
export function combined(logits, rankWeight) {
  const out = new Float64Array(logits.length);
  for (let k = 0; k < logits.length; k++) out[k] = logits[k] - rankWeight * Math.log(k + 1);
  return out;
}

/**
 * The fused candidates ordered by (-score, index).
 * @param {Map<number, number>} fused
 */
function ordered(fused) {
  return [...fused.keys()].sort((a, b) => {
    const sa = /** @type {number} */ (fused.get(a));
    const sb = /** @type {number} */ (fused.get(b));
    return sa > sb ? -1 : sa < sb ? 1 : a - b;
  });
}

/**
 * The first `depth` fused candidates (what the reranker reads).
 * @param {Map<number, number>} fused
 * @param {number} depth
 */
export function rerankTop(fused, depth) {
  return ordered(fused).slice(0, depth);
}

/**
 * Python's rerank_scores: the first `info.depth` candidates reordered by `combined` and
 * scored above all others (the best other score + 1 + their lead over the lowest).
 * @param {Map<number, number>} fused
 * @param {(candidates: number[]) => Promise<ArrayLike<number>>} logitsOf
 * @param {RerankerInfo} info
 * @returns {Promise<Map<number, number>>}
 */
export async function rerankScores(fused, logitsOf, info) {
  if (fused.size < 2) return fused;
  const ranked = ordered(fused);
  const top = ranked.slice(0, info.depth);
  const scores = combined(await logitsOf(top), info.rank_weight);
  const rest = ranked.slice(info.depth).map((i) => /** @type {number} */ (fused.get(i)));
  const floor = (rest.length ? Math.max(...rest) : 0) + 1;
  let low = Infinity;
  for (const s of scores) low = Math.min(low, s);
  const out = new Map(fused);
  top.forEach((i, k) => out.set(i, floor + (scores[k] - low)));
  return out;
}

export class CrossEncoder {
  /**
   * Use CrossEncoder.create().
   * @param {any} ort
   * @param {any} session
   * @param {WordPieceTokenizer} tokenizer
   * @param {RerankerInfo} info
   */
  constructor(ort, session, tokenizer, info) {
    this.ort = ort;
    this.session = session;
    this.tokenizer = tokenizer;
    this.info = info;
    this.inputs = new Set(session.inputNames);
    this.output = session.outputNames[0];
  }

  /**
   * @param {any} ort  the onnxruntime-web module (its wasm threads are set by the embedder)
   * @param {{model: Uint8Array | ArrayBuffer, vocab: string, info: any, sessionOptions?: object}} files
   * @returns {Promise<CrossEncoder>}
   */
  static async create(ort, { model, vocab, info, sessionOptions = {} }) {
    const checked = readInfo(info);
    const bytes = model instanceof Uint8Array ? model : new Uint8Array(model);
    const session = await ort.InferenceSession.create(bytes, {
      executionProviders: ["wasm"], graphOptimizationLevel: "all", ...sessionOptions,
    });
    const tokenizer = new WordPieceTokenizer(vocab, { maxLength: checked.max_tokens, lowercase: checked.do_lower_case });
    return new CrossEncoder(ort, session, tokenizer, checked);
  }

  /**
   * Word-piece ids of an already cut text, no special tokens.
   * @param {string} text
   */
  pieces(text) {
    return this.tokenizer.tokenize(text).map((t) => /** @type {number} */ (this.tokenizer.vocab.get(t)));
  }

  /**
   * The model's score of (query, text) for each text: one padded batch.
   * @param {string} query
   * @param {string[]} texts
   * @returns {Promise<Float32Array>}
   */
  async logits(query, texts) {
    if (!texts.length) return new Float32Array(0);
    const q = this.pieces(clipText(query, this.info.max_tokens));
    const t = this.tokenizer;
    const pairs = texts.map((text) => pairIds(q, this.pieces(modelText(query, text, this.info)),
      { cls: t.clsId, sep: t.sepId, info: this.info }));
    const width = Math.max(...pairs.map((p) => p.ids.length));
    const n = pairs.length;
    const ids = new BigInt64Array(n * width);
    const types = new BigInt64Array(n * width);
    const mask = new BigInt64Array(n * width);
    pairs.forEach((p, row) => {
      for (let j = 0; j < p.ids.length; j++) {
        ids[row * width + j] = BigInt(p.ids[j]);
        types[row * width + j] = BigInt(p.types[j]);
        mask[row * width + j] = 1n;
      }
    });
    const Tensor = this.ort.Tensor;
    /** @type {Record<string, any>} */
    const feeds = {
      input_ids: new Tensor("int64", ids, [n, width]),
      attention_mask: new Tensor("int64", mask, [n, width]),
      token_type_ids: new Tensor("int64", types, [n, width]),
    };
    for (const name of Object.keys(feeds)) if (!this.inputs.has(name)) delete feeds[name];
    const results = await this.session.run(feeds);
    const out = Float32Array.from(/** @type {Float32Array} */ (results[this.output].data));
    for (const r of Object.values(results)) r.dispose?.();
    return out;
  }

  /** Release the onnxruntime session. */
  async release() {
    await this.session.release?.();
  }
}
