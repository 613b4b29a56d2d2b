// @ts-check
/**
 * The static query encoder (sphinx_rag/search/static_encoder.py): a query vector without the
 * model, in plain JS. The query's WordPiece ids -> idf-weighted bag (unit length, plus
 * a bias feature) -> int4 low-rank map -> int8 projection into the model's space ->
 * unit length. Same float64 operations in the same order as the Python side, so the
 * vectors are bit-identical (tests/fixtures/static_encoder.json).
 *
 * The asset (one hashed binary): u32 header length | header JSON | vocab.txt | u32 token
 * ids | f32 idf | f32 row scales | int4 weights | f32 projection scales | int8
 * projection, each section padded to 4 bytes.
 * @module static_encoder
 */

import { WordPieceTokenizer } from "./wordpiece.js";

const decoder = new TextDecoder();

/** @param {number} n */
const padded = (n) => n + ((4 - (n % 4)) % 4);

export class StaticEncoder {
  /**
   * Use StaticEncoder.fromBytes().
   * @param {{rows: number, rank: number, dim: number, special_ids: number[], max_seq_length: number,
   *          lowercase?: boolean}} header
   * @param {string} vocab  vocab.txt
   * @param {Uint32Array} tokenIds
   * @param {Float32Array} idf
   * @param {Float32Array} rowScales  rows + 1 (the last: the bias)
   * @param {Int8Array} weights  (rows + 1) x rank
   * @param {Float32Array} projectionScales  rank
   * @param {Int8Array} projection  rank x dim
   */
  constructor(header, vocab, tokenIds, idf, rowScales, weights, projectionScales, projection) {
    this.rows = header.rows;
    this.rank = header.rank;
    this.dim = header.dim;
    this.vocab = vocab;
    this.idf = idf;
    this.rowScales = rowScales;
    this.weights = weights;
    this.projectionScales = projectionScales;
    this.projection = projection;
    this.special = new Set(header.special_ids);
    /** @type {Map<number, number>} WordPiece id -> row */
    this.rowOf = new Map();
    tokenIds.forEach((t, r) => this.rowOf.set(t, r));
    this.tokenizer = new WordPieceTokenizer(vocab, {
      maxLength: header.max_seq_length,
      lowercase: header.lowercase ?? true,
    });
  }

  /**
   * Parse the asset (bytes already verified against the hash in its name).
   * @param {Uint8Array} bytes
   */
  static fromBytes(bytes) {
    const buf = bytes.slice().buffer; // own, aligned copy
    const view = new DataView(buf);
    const n = view.getUint32(0, true);
    let at = 4;
    const header = JSON.parse(decoder.decode(new Uint8Array(buf, at, n)));
    at += padded(n);
    const vocab = decoder.decode(new Uint8Array(buf, at, header.vocab_bytes));
    at += padded(header.vocab_bytes);
    const { rows, rank, dim } = header;
    /**
     * @template T
     * @param {new (buffer: ArrayBuffer, offset: number, length: number) => T} Type
     * @param {number} count
     * @param {number} size  bytes per element
     * @returns {T}
     */
    const take = (Type, count, size) => {
      const arr = new Type(buf, at, count);
      at += padded(count * size);
      return arr;
    };
    const tokenIds = take(Uint32Array, rows, 4);
    const idf = take(Float32Array, rows, 4);
    const rowScales = take(Float32Array, rows + 1, 4);
    const packed = take(Uint8Array, ((rows + 1) * rank) / 2, 1);
    const projectionScales = take(Float32Array, rank, 4);
    const projection = take(Int8Array, rank * dim, 1);
    if (at !== buf.byteLength) throw new Error(`sphinx-rag: encoder asset of ${buf.byteLength} bytes, expected ${at}`);
    const weights = new Int8Array((rows + 1) * rank);
    for (let i = 0; i < packed.length; i++) {
      const lo = packed[i] & 0x0f;
      const hi = packed[i] >> 4;
      weights[2 * i] = lo > 7 ? lo - 16 : lo;
      weights[2 * i + 1] = hi > 7 ? hi - 16 : hi;
    }
    return new StaticEncoder(header, vocab, tokenIds, idf, rowScales, weights, projectionScales, projection);
  }

  /**
   * The query vector of the token ids (float32, unit length), or null when no token is known.
   * @param {number[]} ids
   * @returns {Float32Array | null}
   */
  encodeIds(ids) {
    /** @type {Map<number, number>} row -> summed idf, in query order */
    const counts = new Map();
    for (const t of ids) {
      if (this.special.has(t)) continue;
      const r = this.rowOf.get(t);
      if (r === undefined) continue;
      counts.set(r, (counts.get(r) ?? 0) + this.idf[r]);
    }
    if (!counts.size) return null;
    let sq = 0;
    for (const v of counts.values()) sq += v * v;
    const norm = Math.sqrt(sq);
    const rank = this.rank;
    const h = new Float64Array(rank);
    const bias = this.rows * rank;
    const biasScale = this.rowScales[this.rows];
    for (let j = 0; j < rank; j++) h[j] = this.weights[bias + j] * biasScale;
    for (const [r, v] of counts) {
      const c = this.rowScales[r] * (v / norm);
      const base = r * rank;
      for (let j = 0; j < rank; j++) h[j] += this.weights[base + j] * c;
    }
    const dim = this.dim;
    const q = new Float64Array(dim);
    for (let j = 0; j < rank; j++) {
      const c = this.projectionScales[j] * h[j];
      const base = j * dim;
      for (let k = 0; k < dim; k++) q[k] += this.projection[base + k] * c;
    }
    let length = 0;
    for (let k = 0; k < dim; k++) length += q[k] * q[k];
    length = Math.sqrt(length);
    if (length === 0) return null;
    const out = new Float32Array(dim);
    for (let k = 0; k < dim; k++) out[k] = q[k] / length;
    return out;
  }

  /**
   * The query vector of a text (spelling already corrected), or null.
   * @param {string} text
   */
  encode(text) {
    return this.encodeIds(this.tokenizer.encode(text).ids);
  }
}
