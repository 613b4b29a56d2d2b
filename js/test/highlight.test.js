// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { displayText, findHits, highlight, queryTokens, snippet, titleParts } from "../src/ui/highlight.js";

const joined = (/** @type {{text: string}[]} */ segs) => segs.map((s) => s.text).join("");
const hits = (/** @type {{text: string, hit: boolean}[]} */ segs) => segs.filter((s) => s.hit).map((s) => s.text);

test("displayText drops the heading line, reST backquotes and extra whitespace", () => {
  const text = "Guide > Baselines\nThe ``strategy``   parameter\n\nselects the rule.";
  assert.equal(displayText(text, "Guide > Baselines"), "The strategy parameter selects the rule.");
  assert.equal(displayText("Parameter strategy of X.\nmore", "X > Y"), "Parameter strategy of X. more");
});

test("bidi overrides and zero-width characters never reach the screen", () => {
  assert.equal(displayText("A > B\nsafe \u202etxet desrever\u202c end", "A > B"), "safe txet desrever end");
  assert.equal(displayText("pan\u200bdas\ufeff", ""), "pandas");
  assert.deepEqual(titleParts("Guide\u202e > Part\u2067"), ["Guide", "Part"]);
});

test("hits use the BM25 tokenizer: plurals and identifier parts match", () => {
  const q = queryTokens("strategy classifier");
  assert.deepEqual(hits(highlight("Several strategies for a DummyClassifier.", q)), ["strategies", "Classifier"]);
  assert.deepEqual(hits(highlight("a DummyClassifier", queryTokens("DummyClassifier"))), ["DummyClassifier"]);
  assert.deepEqual(findHits("the of and", queryTokens("the of")), []); // stop words never match
});

test("a word made of parts is marked where the query word is, never by a part that is no word (issue 44)", () => {
  const text = "Docstrings are raw reST; init_video_stream and _can_read read it.";
  assert.deepEqual(hits(highlight(text, queryTokens("read"))), ["read", "read"]); // not "reST"
  assert.deepEqual(hits(highlight(text, queryTokens("re-read"))), ["read", "read"]); // "re": no word of its own
  assert.deepEqual(hits(highlight(text, queryTokens("reST"))), ["reST"]); // its whole form
  assert.deepEqual(hits(highlight(text, queryTokens("video"))), ["video"]); // the part, not init_video_stream
  assert.deepEqual(findHits("ImageIOs", queryTokens("images")), [{ start: 0, end: 5, tokens: ["image"] }]);
});

test("segments rebuild the text exactly, markup included", () => {
  const text = '<img src=x onerror="alert(1)"> strategy';
  const segs = highlight(text, queryTokens("strategy"));
  assert.equal(joined(segs), text);
  assert.deepEqual(hits(segs), ["strategy"]);
});

test("snippet windows the passage around the most query terms", () => {
  const filler = "lorem ipsum dolor sit amet ".repeat(30);
  const text = `${filler}the strategy parameter of the dummy classifier ${filler}`;
  const segs = snippet(text, queryTokens("dummy strategy"), 120);
  const out = joined(segs);
  assert.ok(out.startsWith("… ") && out.endsWith(" …"), out);
  assert.ok(out.length <= 120 + 4, String(out.length));
  assert.deepEqual(hits(segs), ["strategy", "dummy"]);
});

test("snippet of a short text or without hits is its start, uncut", () => {
  assert.equal(joined(snippet("short text", queryTokens("zzz"))), "short text");
  const long = "word ".repeat(100).trim();
  const out = joined(snippet(long, queryTokens("zzz"), 50));
  assert.ok(out.startsWith("word") && out.endsWith(" …") && out.length <= 52, out);
});
