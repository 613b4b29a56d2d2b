// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { displayMarkdown, escapeLine } from "../src/ui/markdown_text.js";
import { clip, estimateTokens, modelContextOf, parts, registerWebMcp, searchAnswer, shown, twinUrl } from "../src/ui/webmcp.js";

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
  assert.deepEqual(pieces.map((p) => p.length), [851, 846, 846, 926, 966, 966, 966, 966, 966, 979]); // budget.parts' lengths
  assert.ok(pieces.at(-1)?.endsWith("\n\n```\nx\n\n\ny\n```"));
  assert.equal(pieces.join(""), md); // every character, in order (budget.test.js: the cases of page_parts.json)
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
  assert.match(answer, /^## 1\. API > Filler\nURL: https:\/\/docs\.example\.org\/en\/stable\/api\.html#Filler\nKind: api\n\n```python\nFiller\(x\)\n```\n\nFills &lt;b>gaps&lt;\/b>\.\n\n\(≈\d+ tokens\)\n$/);
  await assert.rejects(tools[0].execute({ query: "x", k: 0, kind: "nope" }),
    /^Error: sphinx-rag: search_docs: k \(how many passages\) must be a whole number from 1 to 20 \(got 0\); kind must be one of any, api, guide, example \(got "nope"\)$/);
  const page = (await tools[1].execute({ url: "guide.html" })).content[0].text;
  assert.match(page, /^<!-- https:\/\/docs\.example\.org\/en\/stable\/guide\.html -->\n# Guide\n/);
  await assert.rejects(tools[1].execute({ url: "api.html" }), /has no Markdown twin here \(HTTP 404\)/);
  await assert.rejects(tools[1].execute({ url: "https://evil.example/guide.html" }), /is not a page of this site/);
  assert.equal(searchAnswer("none", [], ROOT), 'No results for "none".\n');
});

test("search_docs gives page text and titles as text: escaped as the MCP server and the twins escape them", () => {
  const hostile = [
    { title: "[x](javascript:alert(3)) <b>bold</b>", display: [["p", "<script>alert(1)</script> <img src=x> ![](http://tracker/x.png)"]] },
    { title: "<iframe src=https://evil.example/>", display: [["p", "<http://tracker.invalid/x> [a](https://evil.example/) **kwargs"]] },
    { title: "cross_val_score __init__ C#", display: [["code", "```\n<script>\n", "html"]] },
    { title: "No display", text: "<b>raw</b> [t](javascript:x)" },
  ].map((r, i) => ({ rank: i + 1, score: 1, url: `p${i}.html#[a](javascript:x)`, kind: "guide", id: `${i}`, text: "", ...r }));
  const answer = searchAnswer("q", /** @type {any} */ (hostile), ROOT);
  const heads = answer.split("\n").filter((l) => l.startsWith("## "));
  assert.deepEqual(heads, ["## 1. \\[x\\]\\(javascript:alert(3)) &lt;b>bold&lt;/b>", "## 2. &lt;iframe src=https://evil.example/>",
    "## 3. cross_val_score \\_\\_init\\_\\_ C#", "## 4. No display"]);
  assert.ok(heads.every((h, i) => h === `## ${i + 1}. ${escapeLine(hostile[i].title)}`));
  assert.ok(answer.includes(`\n\n${displayMarkdown(/** @type {any} */ (hostile[1].display))}\n`));
  assert.ok(answer.includes("\n\n````html\n```\n<script>\n\n````\n"), answer); // code stays code, in a longer fence
  assert.ok(answer.includes("\n\n&lt;b>raw&lt;/b> \\[t\\]\\(javascript:x)\n"), answer); // a record's text, escaped too
  assert.ok(answer.includes("URL: https://docs.example.org/en/stable/p0.html#%5Ba%5D(javascript:x)\n"), answer);
  const outsideCode = answer.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1$/gm, "");
  assert.doesNotMatch(outsideCode, /<[a-z!/]|\]\(|!\[/i);
});

test("tool errors are one line, and echo a short piece of a bad value", async () => {
  /** @type {any[]} */
  const tools = [];
  const win = { document: { modelContext: { registerTool: (/** @type {any} */ t) => tools.push(t) } } };
  registerWebMcp({ win, siteRoot: ROOT, passages: async () => [],
    fetchText: async (url) => ({ ok: false, status: 404, url: url.href, text: "" }) });
  const [search, read] = tools;
  const huge = "x".repeat(1 << 20);
  /** @type {[any, Record<string, any>][]} */
  const cases = [
    [search, { query: "q", kind: huge }], [search, { query: "q", k: huge }], [search, { query: "q", k: 2, kind: "a\nb\u2028c" }],
    [read, { url: "https://evil.example/a\nb\rc\u2028d\u2029e\u0085f" }], [read, { url: `guide\u2028${huge}.html` }],
    [read, { url: "guide.html\n" + huge }], [read, { url: "index.html", part: huge }], [read, { url: `https://evil.example/${huge}` }],
  ];
  for (const [tool, args] of cases) {
    const error = await tool.execute(args).then(() => null, (/** @type {Error} */ e) => e.message);
    assert.ok(error, JSON.stringify(args).slice(0, 80));
    assert.match(error, /^sphinx-rag: (search_docs|read_page): /);
    assert.doesNotMatch(error, /[\n\r\u2028\u2029\u0085\v\f]/, error.slice(0, 300));
    assert.ok(error.length < 600, `${error.length}: ${error.slice(0, 300)}`);
  }
  assert.equal(shown("a".repeat(50)), `"${"a".repeat(38)}\u2026`);
  assert.equal(shown(3), "3");
  assert.equal(clip("😀".repeat(5), 3), "😀😀😀");
});
