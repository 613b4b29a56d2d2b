// @ts-check
// js/src/ui/markdown_text.js escapes page text for agents as Python's
// sphinx_rag/agents/markdown_text.py and markdown.display_markdown do
// (tests/fixtures/agent_markdown.json, written by tests/fixtures/generate.py; Python's
// tests/test_llms.py renders the same outputs with a CommonMark renderer).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  atxHeading, codeFence, codeSpan, displayMarkdown, escapeInline, escapeLine, escapeProse, markdownUrl,
} from "../src/ui/markdown_text.js";
import { fixture } from "./helpers.js";

test("page text, titles and code as Python escapes them", () => {
  const { texts } = fixture("agent_markdown.json");
  assert.ok(texts.length >= 60);
  for (const t of texts) {
    const name = JSON.stringify(t.text);
    assert.equal(escapeInline(t.text), t.inline, `inline ${name}`);
    assert.equal(escapeProse(t.text), t.prose, `prose ${name}`);
    assert.equal(escapeLine(t.text), t.line, `line ${name}`);
    assert.equal(atxHeading(2, t.text), t.heading, `heading ${name}`);
    assert.equal(codeSpan(t.text), t.code_span, `code span ${name}`);
    assert.equal(codeFence(t.text, t.language), t.code_fence, `code fence ${name}`);
  }
});

test("passages' displays and URLs as Python writes them", () => {
  const { displays, urls } = fixture("agent_markdown.json");
  for (const d of displays) assert.equal(displayMarkdown(d.display), d.markdown, JSON.stringify(d.display));
  for (const u of urls) assert.equal(markdownUrl(u.url), u.markdown, JSON.stringify(u.url));
});

test("a lone surrogate becomes U+FFFD, as Python's valid_text makes it", () => {
  assert.equal(escapeInline("a\uD800b_"), "a\uFFFDb\\_");
  assert.equal(markdownUrl("https://x.example/\uDC00"), "https://x.example/%EF%BF%BD");
  assert.equal(codeSpan("\uD800`"), "`` \uFFFD` ``");
});
