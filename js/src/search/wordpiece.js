// @ts-check
/**
 * BERT WordPiece tokenizer giving the token ids of the Hugging Face `tokenizers`
 * library for the sphinx-rag model (all-MiniLM-L6-v2's tokenizer.json):
 *
 * 1. special tokens ([CLS], [SEP], [MASK], ...) written in the text are matched first,
 *    on the raw text, case-sensitively (they are "added tokens", not normalized);
 * 2. BertNormalizer: drop NUL, U+FFFD and control/format/private-use characters, map
 *    whitespace to " ", put spaces around CJK ideographs, strip accents (NFD, drop Mn),
 *    lowercase each character on its own (so a final sigma becomes "σ", never "ς");
 * 3. BertPreTokenizer: split on whitespace, isolate punctuation (ASCII punctuation
 *    and Unicode P*);
 * 4. WordPiece: greedy longest match with "##" continuations; a word longer than
 *    100 characters, or with no segmentation, becomes [UNK];
 * 5. [CLS] ... [SEP], truncated to max_seq_length (model_info.json: 256, not the 128
 *    of tokenizer.json).
 *
 * The Rust tokenizers crate classifies characters with the tables of the
 * `unicode_categories` crate, older than current Unicode: the classes come from
 * unicode_tables.js (generated from tokenizers by tests/fixtures/generate.py), not
 * from JavaScript's \p{...}; tests/fixtures/wordpiece.json checks every code point.
 * @module wordpiece
 */

import { CONTROL, NONSPACING_MARKS, PUNCTUATION, inRanges } from "./unicode_tables.js";

/** @typedef {{ids: number[], tokens: string[]}} Encoding */

export const SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"];

// Rust char::is_whitespace (Unicode White_Space); \t \n \r count as whitespace too.
const WHITESPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003,
  0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);


// Characters whose canonical decomposition (Unicode 13 and later) the tokenizers crate's
// NFD tables lack: kept whole, as the HF tokenizer does. Found by the every-code-point
// test of js/test/wordpiece.test.js.
const NO_DECOMPOSITION = new RegExp(
  "([" +
    [
      0x105c9, 0x105e4, 0x11383, 0x11385, 0x1138e, 0x11391, 0x113c5, 0x113c7, 0x113c8, 0x11938, 0x16121,
      0x16122, 0x16123, 0x16124, 0x16125, 0x16126, 0x16127, 0x16128, 0x16d68, 0x16d69, 0x16d6a,
    ].map((cp) => String.fromCodePoint(cp)).join("") +
    "])",
  "u",
);

/** NFD as the tokenizers crate computes it. @param {string} text */
function nfd(text) {
  if (!NO_DECOMPOSITION.test(text)) return text.normalize("NFD");
  return text.split(NO_DECOMPOSITION).map((part, i) => (i % 2 ? part : part.normalize("NFD"))).join("");
}

/** @param {number} cp */
export function isWhitespace(cp) {
  return WHITESPACE.has(cp);
}

/** Control characters removed by clean_text (Cc, Cf, Co but not \t \n \r). @param {number} cp */
export function isControl(cp) {
  if (cp < 0x80) return (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || cp === 0x7f;
  return inRanges(CONTROL, cp);
}

/** The CJK ideograph blocks of BERT (as in tokenizers' bert.rs). @param {number} cp */
export function isChineseChar(cp) {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** ASCII punctuation or Unicode P* (BertPreTokenizer). @param {number} cp */
export function isPunctuation(cp) {
  if (cp < 0x80) return (cp >= 0x21 && cp <= 0x2f) || (cp >= 0x3a && cp <= 0x40) || (cp >= 0x5b && cp <= 0x60) || (cp >= 0x7b && cp <= 0x7e);
  return inRanges(PUNCTUATION, cp);
}

/** @param {number} cp */
export function isNonspacingMark(cp) {
  return cp >= 0x300 && inRanges(NONSPACING_MARKS, cp);
}

/**
 * BertNormalizer(clean_text, handle_chinese_chars, strip_accents = lowercase = true).
 * @param {string} text
 * @param {{lowercase?: boolean, stripAccents?: boolean}} [options]
 * @returns {string}
 */
export function normalize(text, { lowercase = true, stripAccents = lowercase } = {}) {
  let out = "";
  for (const ch of text) {
    const cp = /** @type {number} */ (ch.codePointAt(0));
    if (cp === 0 || cp === 0xfffd || isControl(cp)) continue;
    if (isWhitespace(cp)) out += " ";
    else if (isChineseChar(cp)) out += " " + ch + " ";
    else out += ch;
  }
  if (stripAccents) {
    let stripped = "";
    for (const ch of nfd(out)) {
      if (!isNonspacingMark(/** @type {number} */ (ch.codePointAt(0)))) stripped += ch;
    }
    out = stripped;
  }
  if (lowercase) {
    let lowered = "";
    // One character at a time, as Rust's char::to_lowercase (no final-sigma context).
    for (const ch of out) lowered += ch.toLowerCase();
    out = lowered;
  }
  return out;
}

/**
 * BertPreTokenizer: words split on whitespace, each punctuation character on its own.
 * @param {string} text normalized text
 * @returns {string[]}
 */
export function preTokenize(text) {
  const words = [];
  let current = "";
  for (const ch of text) {
    const cp = /** @type {number} */ (ch.codePointAt(0));
    if (isWhitespace(cp)) {
      if (current) words.push(current);
      current = "";
    } else if (isPunctuation(cp)) {
      if (current) words.push(current);
      words.push(ch);
      current = "";
    } else current += ch;
  }
  if (current) words.push(current);
  return words;
}

export class WordPieceTokenizer {
  /**
   * @param {string} vocabText contents of vocab.txt (one token per line, id = line number)
   * @param {{maxLength?: number, lowercase?: boolean, stripAccents?: boolean,
   *          maxInputCharsPerWord?: number, unkToken?: string, prefix?: string}} [options]
   *   maxLength counts [CLS] and [SEP] (model_info.json's max_seq_length).
   */
  constructor(vocabText, options = {}) {
    const lines = vocabText.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    /** @type {Map<string, number>} */
    this.vocab = new Map();
    lines.forEach((token, id) => {
      const t = token.endsWith("\r") ? token.slice(0, -1) : token;
      if (!this.vocab.has(t)) this.vocab.set(t, id);
    });
    this.maxLength = options.maxLength ?? 256;
    this.lowercase = options.lowercase ?? true;
    this.stripAccents = options.stripAccents ?? this.lowercase;
    this.maxInputCharsPerWord = options.maxInputCharsPerWord ?? 100;
    this.unkToken = options.unkToken ?? "[UNK]";
    this.prefix = options.prefix ?? "##";
    this.specialTokens = SPECIAL_TOKENS.filter((t) => this.vocab.has(t));
    for (const t of [this.unkToken, "[CLS]", "[SEP]"]) {
      if (!this.vocab.has(t)) throw new Error(`sphinx-rag: vocab.txt has no ${t} token`);
    }
    this.unkId = /** @type {number} */ (this.vocab.get(this.unkToken));
    this.clsId = /** @type {number} */ (this.vocab.get("[CLS]"));
    this.sepId = /** @type {number} */ (this.vocab.get("[SEP]"));
  }

  /**
   * Build from the model directory files.
   * @param {string} vocabText
   * @param {{max_seq_length?: number, do_lower_case?: boolean}} info model_info.json
   */
  static fromModelInfo(vocabText, info) {
    return new WordPieceTokenizer(vocabText, {
      maxLength: info.max_seq_length ?? 256,
      lowercase: info.do_lower_case ?? true,
    });
  }

  /**
   * WordPiece of one pre-tokenized word.
   * @param {string} word
   * @returns {string[]}
   */
  wordPiece(word) {
    const chars = Array.from(word);
    if (chars.length > this.maxInputCharsPerWord) return [this.unkToken];
    const pieces = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found = null;
      while (start < end) {
        let sub = chars.slice(start, end).join("");
        if (start > 0) sub = this.prefix + sub;
        if (this.vocab.has(sub)) {
          found = sub;
          break;
        }
        end--;
      }
      if (found === null) return [this.unkToken];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  /**
   * Word pieces of the text, without [CLS]/[SEP] and without truncation.
   * @param {string} text
   * @returns {string[]}
   */
  tokenize(text) {
    const out = [];
    for (const [segment, special] of this.splitSpecial(text)) {
      if (special) {
        out.push(segment);
        continue;
      }
      const normalized = normalize(segment, { lowercase: this.lowercase, stripAccents: this.stripAccents });
      for (const word of preTokenize(normalized)) out.push(...this.wordPiece(word));
    }
    return out;
  }

  /**
   * The text split around special tokens written in it (leftmost match first).
   * @param {string} text
   * @returns {Array<[string, boolean]>} [segment, isSpecial]
   */
  splitSpecial(text) {
    /** @type {Array<[string, boolean]>} */
    const out = [];
    let from = 0;
    let plainStart = 0;
    while (from < text.length) {
      const at = text.indexOf("[", from);
      if (at < 0) break;
      const token = this.specialTokens.find((t) => text.startsWith(t, at));
      if (token) {
        if (at > plainStart) out.push([text.slice(plainStart, at), false]);
        out.push([token, true]);
        from = plainStart = at + token.length;
      } else from = at + 1;
    }
    if (plainStart < text.length) out.push([text.slice(plainStart), false]);
    return out;
  }

  /**
   * Token ids with [CLS] and [SEP], truncated to maxLength.
   * @param {string} text
   * @returns {Encoding}
   */
  encode(text) {
    const tokens = this.tokenize(text).slice(0, Math.max(0, this.maxLength - 2));
    tokens.unshift("[CLS]");
    tokens.push("[SEP]");
    const ids = tokens.map((t) => /** @type {number} */ (this.vocab.get(t)));
    return { ids, tokens };
  }
}
