// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { estimateTokens, modelContextOf, parts, registerWebMcp, searchAnswer, twinUrl } from "../src/ui/webmcp.js";

const ROOT = new URL("https://docs.example.org/en/stable/");

test("the token estimate is sphinx_rag/agents/budget.py's", () => {
  // budget.estimate_tokens of the same strings: 4, 5, 8
  assert.equal(estimateTokens("hello world"), 4);
  assert.equal(estimateTokens("café “x”"), 5);
  assert.equal(estimateTokens("日本語のテキスト"), 8);
});

test("a long page is cut in parts between blocks, never inside a fence, as budget.parts cuts it", () => {
  const md = ["# T", ...Array.from({ length: 30 }, (_, i) => `para ${i} `.repeat(40)), "```\nx\n\n\ny\n```"].join("\n\n");
  const pieces = parts(md, 300);
  assert.deepEqual(pieces.map((p) => p.length), [850, 845, 845, 925, 965, 965, 965, 965, 965, 980]);
  assert.ok(pieces.at(-1)?.endsWith("```\nx\n\n\ny\n```\n"));
  assert.equal(pieces.join("").replace(/\s+/g, ""), md.replace(/\s+/g, ""));
});

test("a twin is this site's page with .md; anything else is refused", () => {
  assert.equal(twinUrl("user_guide/impute.html#x", ROOT)?.href, "https://docs.example.org/en/stable/user_guide/impute.html.md");
  assert.equal(twinUrl("https://docs.example.org/en/stable/guide/", ROOT)?.href,
    "https://docs.example.org/en/stable/guide/index.html.md");
  assert.equal(twinUrl("api.html.md?x=1", ROOT)?.href, "https://docs.example.org/en/stable/api.html.md");
  for (const bad of ["https://evil.example/x.html", "../../latest/x.html", "/other/x.html", "javascript:alert(1)",
    "//evil.example/a.html", "file:///etc/passwd"]) {
    assert.equal(twinUrl(bad, ROOT), null, bad);
  }
});

test("no API, no tools; a stub gets two read-only tools whose errors are one line", async () => {
  assert.equal(modelContextOf({ document: {}, navigator: {} }), null);
  assert.deepEqual(registerWebMcp({ win: { document: {}, navigator: {} }, siteRoot: ROOT, passages: async () => [] }), []);
  /** @type {any[]} */
  const tools = [];
  const win = { document: {}, navigator: { modelContext: { registerTool: (/** @type {any} */ t) => tools.push(t) } } };
  const results = [
    { rank: 1, score: 1, url: "api.html#Filler", title: "API > Filler", kind: "api", text: "t", id: "a",
      display: [["term", "Filler(x)"], ["p", "Fills <b>gaps</b>."]] },
    { rank: 2, score: 1, url: "guide.html", title: "Guide", kind: "guide", text: "g", id: "b", display: [["p", "A guide."]] },
  ];
  const names = registerWebMcp({ win, siteRoot: ROOT, passages: async () => results,
    fetchText: async (url) => ({ ok: url.pathname.endsWith("/guide.html.md"), status: 404, url: url.href, text: "# Guide\n" }) });
  assert.deepEqual(names, ["search_docs", "read_page"]);
  assert.ok(tools.every((t) => t.annotations.readOnlyHint === true));
  const answer = (await tools[0].execute({ query: "fill gaps", k: 1, kind: "api" })).content[0].text;
  assert.match(answer, /^## 1\. API > Filler\nURL: https:\/\/docs\.example\.org\/en\/stable\/api\.html#Filler\nKind: api\n\nFiller\(x\)\nFills <b>gaps<\/b>\.\n\n\(≈\d+ tokens\)\n$/);
  await assert.rejects(tools[0].execute({ query: "x", k: 0, kind: "nope" }),
    /^Error: sphinx-rag: search_docs: k \(how many passages\) must be a whole number from 1 to 20 \(got 0\); kind must be one of any, api, guide, example \(got "nope"\)$/);
  const page = (await tools[1].execute({ url: "guide.html" })).content[0].text;
  assert.match(page, /^<!-- https:\/\/docs\.example\.org\/en\/stable\/guide\.html -->\n# Guide\n/);
  await assert.rejects(tools[1].execute({ url: "api.html" }), /has no Markdown twin here \(HTTP 404\)/);
  await assert.rejects(tools[1].execute({ url: "https://evil.example/guide.html" }), /is not a page of this site/);
  assert.equal(searchAnswer("none", [], ROOT), 'No results for "none".\n');
});
