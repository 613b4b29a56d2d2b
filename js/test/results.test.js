// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { countText, filterGroups, groupResults, kindCounts, pageOf, textFragment } from "../src/ui/results.js";
import { remember } from "../src/ui/recent.js";

/** @param {string} id @param {string} url @param {string} title @param {string} kind */
const hit = (id, url, title, kind) => ({ rank: 0, score: 0, id, url, title, kind, text: "" });

const RANKED = [
  hit("a1", "api/Scaler.html#Scaler", "Scaler > pkg.Scaler", "api"),
  hit("g1", "guide.html#scaling", "Guide > Scaling", "guide"),
  hit("a2", "api/Scaler.html#Scaler", "Scaler > pkg.Scaler", "api"), // same URL as a1
  hit("e1", "ex.html#top", "Example", "example"),
  hit("g2", "guide.html#more", "Guide > Scaling > More", "guide"),
  hit("a3", "api/Scaler.html#Scaler.fit", "Scaler > pkg.Scaler.fit", "api"),
];

test("one group per page, ordered by the page's best hit; hits in rank order beneath", () => {
  const groups = groupResults(RANKED);
  assert.deepEqual(groups.map((g) => g.title), ["Scaler", "Guide", "Example"]);
  assert.deepEqual(groups.map((g) => g.entries.map((e) => e.result.id)), [["a1", "a3"], ["g1", "g2"], ["e1"]]);
  assert.equal(pageOf("api/Scaler.html#Scaler.fit"), "api/Scaler.html");
});

test("a singlehtml site's documents are groups of their own, though they share one file", () => {
  const single = [
    hit("guide#scaling:0", "index.html#scaling", "Guide > Scaling", "guide"),
    hit("api#scaler:0", "index.html#scaler", "API > Scaler", "api"),
    hit("guide#more:0", "index.html#more", "Guide > More", "guide"),
  ];
  const groups = groupResults(single);
  assert.deepEqual(groups.map((g) => [g.title, g.page, g.entries.length]), [["Guide", "index.html", 2], ["API", "index.html", 1]]);
  assert.equal(countText(groups), "3 results on 2 pages");
});

test("hits with the same URL are one entry: the best, and the others merged into it", () => {
  const [scaler] = groupResults(RANKED);
  assert.deepEqual(scaler.entries[0].merged.map((m) => m.id), ["a2"]);
  const urls = groupResults(RANKED).flatMap((g) => g.entries.map((e) => e.result.url));
  assert.equal(new Set(urls).size, urls.length);
});

test("counts and the kind filter work on entries, and drop pages left empty", () => {
  const groups = groupResults(RANKED);
  assert.deepEqual(kindCounts(groups), { all: 5, api: 2, guide: 2, example: 1 });
  assert.equal(countText(groups), "5 results on 3 pages");
  const api = filterGroups(groups, "api");
  assert.deepEqual(api.map((g) => g.title), ["Scaler"]);
  assert.equal(countText(api), "2 results on 1 page");
  assert.equal(countText(filterGroups(groups, "example")), "1 result on 1 page");
  assert.equal(filterGroups(groups, "all"), groups);
  assert.equal(countText([]), "");
});

test("unknown kinds count as guide", () => {
  const [group] = groupResults([hit("x", "x.html", "X", "weird")]);
  assert.equal(group.entries[0].kind, "guide");
});

test("recent searches: newest first, once each, capped, blanks ignored", () => {
  let list = /** @type {string[]} */ ([]);
  for (const q of ["a", "b", " a ", "", "c", "d"]) list = remember(list, q, 3);
  assert.deepEqual(list, ["d", "c", "a"]);
});

/** A chunk of the long code page: every one shares its section's URL. @param {number} n @param {number} from */
const code = (n, from) => ({ ...hit(`code#code-page:${n}`, "code.html#code-page", "Code page", "guide"),
  text: `Code page\ncodeline${from} = transform(state)\ncodeline${from + 1} = transform(state)`,
  display: [["code", `codeline${from} = transform(state)\ncodeline${from + 1} = transform(state)`]] });

test("an entry shows the hit holding the name the query asks for, the others merged", () => {
  // issue 29: 1,342 chunks of one code block share code.html#code-page; lines 6610-6614 were
  // shown for "codeline19999" (the best hit's), "+9 more matches here"
  const results = [code(440, 6610), code(1341, 19998), code(12, 180)];
  const [entry] = groupResults(results, ["codeline19999"])[0].entries;
  assert.equal(entry.result.id, "code#code-page:1341");
  assert.deepEqual(entry.merged.map((m) => m.id), ["code#code-page:440", "code#code-page:12"]);
  assert.equal(groupResults(results)[0].entries[0].result.id, "code#code-page:440"); // no name: the best hit
  assert.equal(groupResults(results, ["transform"])[0].entries[0].result.id, "code#code-page:440"); // all hold it
});

test("a link goes to the name on the page with a text fragment, where the anchor is not enough", () => {
  assert.equal(textFragment(code(1341, 19998), ["codeline19999"]), ":~:text=codeline19999");
  assert.equal(textFragment({ ...code(7, 1), url: "code.html" }, ["codeline2"]), "#:~:text=codeline2");
  assert.equal(textFragment(code(0, 0), ["codeline1"]), ""); // the chunk opens its anchor: the anchor is enough
  assert.equal(textFragment(code(9, 5), ["codeline7"]), ""); // not in the passage
  assert.equal(textFragment(code(9, 5), []), "");
  const param = { ...hit("api/Knn#Knn:5", "api/Knn.html#Knn", "Knn > pkg.Knn", "api"), text: "",
    display: [["term", "Knn(n_neighbors=5)"], ["p", "n_neighbors : int"]] };
  assert.equal(textFragment(param, ["knn", "n_neighbor"]), ":~:text=n_neighbors"); // not the page's own name
  assert.equal(textFragment(param, ["knn"]), "");
});

test("a link is only ever http(s): this site's of its own origin, a federated site's of http(s); other results are not shown", async () => {
  const { fakeDocument } = await import("./fake_dom.js");
  const saved = /** @type {any} */ (globalThis).document;
  /** @type {any} */ (globalThis).document = fakeDocument;
  try {
    const { h } = await import("../src/ui/dom.js");
    const { renderGroups, resultHref } = await import("../src/ui/results.js");
    const { renderPassage } = await import("../src/ui/passage.js");
    const root = new URL("https://docs.example/project/");
    const results = [
      hit("ok", "guide.html#a", "Guide", "guide"),
      hit("js", "javascript:alert(document.domain)", "Guide", "guide"),
      hit("data", "data:text/html,<script>alert(1)</script>", "Data", "guide"),
      hit("away", "https://evil.example/phish.html", "Away", "guide"),
      { ...hit("remote", "https://other.example/docs/p.html", "Remote", "guide"), source: "other" },
      { ...hit("remotejs", "javascript:alert(1)", "Remote JS", "guide"), source: "other" },
      { ...hit("blocks", "blocks.html", "Blocks", "guide"), display: [["p", 42]] }, // not well-formed: not shown
    ];
    assert.equal(resultHref(results[0], root), "https://docs.example/project/guide.html#a");
    assert.equal(resultHref(results[1], root), null);
    assert.equal(resultHref({ url: "api.html" }, new URL("file:///home/me/html/")), "file:///home/me/html/api.html");
    assert.equal(resultHref({ url: "javascript:x" }, new URL("file:///home/me/html/")), null);
    const listbox = /** @type {any} */ (h("div"));
    const shown = renderGroups(listbox, groupResults(/** @type {any[]} */ (results)), {
      siteRoot: root, passage: (r) => renderPassage(r, new Set()),
    });
    assert.deepEqual(shown.map((e) => e.result.id), ["ok", "remote"]);
    const hrefs = listbox.elements().filter((/** @type {any} */ e) => e.nodeName === "a").map((/** @type {any} */ e) => e.getAttribute("href"));
    assert.deepEqual(hrefs, ["https://docs.example/project/guide.html#a", "https://other.example/docs/p.html"]);
    // a passage of blocks that are not strings renders what is text, as text
    const box = /** @type {any} */ (renderPassage(/** @type {any} */ ({ text: "t", display: [["p", 42], ["p", "<b>kept</b>"], [1, "x"]] }), new Set()));
    assert.equal(box.textContent, "<b>kept</b>");
  } finally {
    /** @type {any} */ (globalThis).document = saved;
  }
});
