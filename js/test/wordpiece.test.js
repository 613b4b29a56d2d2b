// @ts-check
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  WordPieceTokenizer, isChineseChar, isControl, isNonspacingMark, isPunctuation, isWhitespace, normalize,
} from "../src/search/wordpiece.js";
import { fixture, vocabPath } from "./helpers.js";

/** @type {{max_length: number, cases: Array<[string, number[]]>, chars: any}} */
const data = fixture("wordpiece.json");
const vocab = vocabPath();

test("encode() gives the HF tokenizer's ids on every fixture string", { skip: vocab ? false : "no vocab.txt" }, () => {
  const tok = new WordPieceTokenizer(readFileSync(/** @type {string} */ (vocab), "utf8"), { maxLength: data.max_length });
  assert.equal(data.max_length, 256);
  assert.ok(data.cases.length >= 500, `only ${data.cases.length} cases`);
  const failures = [];
  for (const [text, ids] of data.cases) {
    const got = tok.encode(text).ids;
    if (JSON.stringify(got) !== JSON.stringify(ids)) failures.push({ text, want: ids, got });
  }
  assert.deepEqual(failures.slice(0, 3), [], `${failures.length} of ${data.cases.length} differ`);
  assert.ok(data.cases.some(([, ids]) => ids.length === 256), "no truncated case");
});

/** @param {number[][]} ranges */
function rangeSet(ranges) {
  const set = new Set();
  for (const [lo, hi] of ranges) for (let cp = lo; cp <= hi; cp++) set.add(cp);
  return set;
}

test("every code point is classified as the HF BERT normalizer / pre-tokenizer does", () => {
  const chars = data.chars;
  const control = rangeSet(chars.control);
  const whitespace = rangeSet(chars.whitespace);
  const punctuation = rangeSet(chars.punctuation);
  const nonspacing = rangeSet(chars.nonspacing);
  const cjk = rangeSet(chars.cjk);
  const mapped = new Map(chars.mapped.map((/** @type {[number, string]} */ [cp, out]) => [cp, out]));
  const bad = [];
  for (let cp = 0; cp < 0x110000; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const removed = cp === 0 || cp === 0xfffd || isControl(cp);
    if (removed !== (control.has(cp) || cp === 0 || cp === 0xfffd)) bad.push(["control", cp]);
    if (removed) continue;
    if (isWhitespace(cp) !== whitespace.has(cp)) bad.push(["whitespace", cp]);
    if (isWhitespace(cp)) continue;
    if (isPunctuation(cp) !== punctuation.has(cp)) bad.push(["punctuation", cp]);
    if (isNonspacingMark(cp) !== nonspacing.has(cp)) bad.push(["nonspacing", cp]);
    if (isChineseChar(cp) !== cjk.has(cp)) bad.push(["cjk", cp]);
    if (cp >= 0xac00 && cp <= 0xd7a3) continue;
    const c = String.fromCodePoint(cp);
    const want = mapped.has(cp) ? mapped.get(cp) : cjk.has(cp) ? ` ${c} ` : c;
    if (normalize(c) !== want) bad.push(["normalize", cp, want, normalize(c)]);
  }
  assert.deepEqual(bad.slice(0, 10).map((b) => [b[0], (/** @type {number} */ (b[1])).toString(16), ...b.slice(2)]), []);
});

test("pitfalls: final sigma, special tokens, long words, truncation", { skip: vocab ? false : "no vocab.txt" }, () => {
  const tok = new WordPieceTokenizer(readFileSync(/** @type {string} */ (vocab), "utf8"), { maxLength: 8 });
  assert.equal(normalize("ΟΔΟΣ"), "οδοσ"); // per-character lowercase: no final sigma
  assert.deepEqual(tok.tokenize("a[MASK]b [cls]"), ["a", "[MASK]", "b", "[", "cl", "##s", "]"]);
  assert.deepEqual(tok.tokenize("x".repeat(101)), ["[UNK]"]);
  const { ids, tokens } = tok.encode("one two three four five six seven eight");
  assert.equal(ids.length, 8);
  assert.deepEqual([tokens[0], tokens[7]], ["[CLS]", "[SEP]"]);
});
