// @ts-check
// The display form (src/search/display.js) and the dialog's passage view (src/ui/passage.js):
// the passages Python builds from the same index (tests/fixtures/passages.json) are rebuilt
// here block for block, with the same plain text for the LLM.
import assert from "node:assert/strict";
import { test } from "node:test";

import { displayText, joinDisplays, recordDisplay } from "../src/search/display.js";
import { Searcher } from "../src/search/retrieve.js";
import { llmPassage } from "../src/llm/prompt.js";
import { SUMMARY_CHARS, cutWords, passageView } from "../src/ui/passage.js";
import { queryTokens } from "../src/ui/highlight.js";
import { SKIP_DEMO, demoIndexDir, fixture, openIndex } from "./helpers.js";

test("passages: the display and the LLM text equal Python's, on the demo", { skip: SKIP_DEMO }, async () => {
  const data = fixture("passages.json");
  const vectors = new Map(fixture("rankings.json").queries.map((/** @type {any} */ q) => [q.query, q.vector]));
  const { index } = await openIndex(/** @type {string} */ (demoIndexDir()));
  const searcher = new Searcher(index, { fusion: "rrf" });
  assert.ok(data.cases.length >= 20);
  let joined = 0;
  let code = 0;
  for (const c of data.cases) {
    const got = await searcher.search(c.query, vectors.get(c.query), data.k);
    assert.deepEqual(got.map((r) => r.id), c.results.map((/** @type {any} */ r) => r.id), c.query);
    got.forEach((r, i) => {
      assert.deepEqual(r.display, c.results[i].display, `${c.query} #${i + 1}`);
      assert.equal(llmPassage(r).text, c.results[i].llm_text, `${c.query} #${i + 1}`);
      assert.equal(displayText(r.display), c.results[i].llm_text);
      if (r.also.length) joined++;
      if (r.display.some((b) => b[0] === "code")) code++;
    });
  }
  assert.ok(joined >= 5, `only ${joined} fixture passages join several chunks`);
  assert.ok(code >= 5, `only ${code} fixture passages hold code`);
});

test("the window a reader is shown equals Python's (the CLI's, the MCP server's), demo and synthetic", () => {
  const data = fixture("passages.json");
  let windows = 0;
  for (const c of data.cases) {
    for (const r of c.results) {
      assert.deepEqual(shown(passageView(r.display, queryTokens(c.query), data.shown_chars, r.title)), r.window,
        `${c.query}: ${r.id}`);
      windows++;
    }
  }
  assert.ok(windows >= 100);
  for (const [n, c] of data.windows.entries()) {
    assert.deepEqual(shown(passageView(c.display, queryTokens(c.query), c.max_chars, c.title)), c.window, `window ${n}`);
  }
  assert.ok(data.windows.some((/** @type {any} */ c) => c.window.some((/** @type {string[]} */ [, t]) => /\ud83d/.test(t))));
});

test("no window opens with a lone '…' line nor shows a heading with nothing under it", () => {
  const filler = Array.from({ length: 60 }, () => "filler").join(" ");
  const view = shown(passageView([["p", filler], ["p", "The strategy matters."]], queryTokens("strategy"), 100));
  assert.deepEqual(view, [["p", "… The strategy matters."]]);
  assert.deepEqual(shown(passageView([["heading", "Usage"], ["p", "…"]], queryTokens("wavelet"), 260, "Guide > Intro")), []);
  assert.deepEqual(shown(passageView([["p", "Intro."], ["heading", "Next"]], queryTokens("x"), 260)), [["p", "Intro."]]);
  const code = [["p", filler], ["code", "strategy = 1\nx = 2"]];
  assert.deepEqual(shown(passageView(code, queryTokens("strategy"), 100)), [["code", "…\nstrategy = 1\nx = 2"]]);
});

test("joinDisplays keeps the first chunk's lead and drops the others'", () => {
  const a = [["lead", "Before."], ["p", "First."]];
  const b = [["lead", "First."], ["code", "x = 1\ny = 2"]];
  assert.deepEqual(joinDisplays([a, b]), [["lead", "Before."], ["p", "First."], ["code", "x = 1\ny = 2"]]);
  assert.deepEqual(joinDisplays([b]), b);
});

test("joinDisplays names the section where a passage leaves its hit's section", () => {
  const a = [["p", "Shuffle first."]];
  const b = [["p", "K-fold splits."]];
  const c = [["lead", "K-fold splits."], ["p", "More folds."]];
  const titles = ["CV > Shuffling", "CV > Iterators > K-fold", "CV > Iterators > K-fold"];
  // shown under the K-fold title: the first chunk is another section's, and K-fold's heading follows
  assert.deepEqual(joinDisplays([a, b, c], titles, "CV > Iterators > K-fold"),
    [["heading", "Shuffling"], ["p", "Shuffle first."], ["heading", "K-fold"], ["p", "K-fold splits."], ["p", "More folds."]]);
  // one section: no heading; API parts (null) never get one
  assert.deepEqual(joinDisplays([b, c], titles.slice(1), titles[1]), [["p", "K-fold splits."], ["p", "More folds."]]);
  assert.deepEqual(joinDisplays([a, b], [null, null], "X > fit"), [["p", "Shuffle first."], ["p", "K-fold splits."]]);
  assert.equal(displayText([["heading", "K-fold"], ["p", "K-fold splits."]]), "K-fold\nK-fold splits.");
});

test("passageView shown from further down keeps the heading of the section it is in", () => {
  const filler = Array.from({ length: 60 }, () => "filler").join(" ");
  const display = [["p", "Intro."], ["heading", "K-fold"], ["p", filler], ["p", "The strategy matters."]];
  const view = shown(passageView(display, queryTokens("strategy"), 100));
  assert.deepEqual(view.slice(0, 2), [["heading", "K-fold"], ["p", "… The strategy matters."]]);
  // the hit right under its heading: the heading, then the hit (what is skipped is above both)
  const under = [["p", filler], ["heading", "K-fold"], ["p", "The strategy matters."]];
  assert.deepEqual(shown(passageView(under, queryTokens("strategy"), 100)),
    [["heading", "K-fold"], ["p", "The strategy matters."]]); // a heading starts something new: no "…" above it
  // the result's own section is named above the passage: not repeated at the top of the view
  const own = [["heading", "Shuffling"], ["p", "Shuffle first."], ["heading", "K-fold"], ["p", filler], ["p", "The strategy matters."]];
  assert.deepEqual(shown(passageView(own, queryTokens("strategy"), 100, "CV > K-fold")).slice(0, 1),
    [["p", "… The strategy matters."]]);
  assert.deepEqual(shown(passageView(own, queryTokens("strategy"), 100, "CV > Shuffling")).slice(0, 2),
    [["heading", "K-fold"], ["p", "… The strategy matters."]]);
  const top = [["p", "Shuffle first."], ["heading", "K-fold"], ["p", "The strategy matters."]];
  assert.deepEqual(shown(passageView(top, queryTokens("strategy"), 100, "CV > Shuffling")), top.slice(1)); // all of
  // it fits, but what matched is in the next section: from its heading (issue 44)
  assert.deepEqual(shown(passageView(top, queryTokens("shuffle"), 100, "CV > Shuffling")), [["p", "Shuffle first."], ["p", "…"]]);
  // a heading the room ends on is not shown alone
  const fits = Array.from({ length: 40 }, () => "filler").join(" ");
  const cut = shown(passageView([["p", "The strategy."], ["p", fits], ["heading", "Cross-validation iterators"], ["p", "x"]], queryTokens("strategy"), 300));
  assert.deepEqual(cut, [["p", "The strategy."], ["p", fits], ["p", "…"]]);
});

test("passageView of a parameter question starts at that parameter's entry (issue 44)", () => {
  const display = [["term", "function imread"], ["p", "Read an ndimage from a URI."],
    ["term", "imread(uri, *, index=None, plugin=None, extension=None, format_hint=None, **kwargs)"],
    ["label", "Parameters"], ["term", "uri : {str, pathlib.Path, bytes, file}"],
    ["p", "The resource to load the image from, e.g. a filename, pathlib.Path, http address or file object, see the docs for more info."],
    ["label", "Parameters"], ["term", "index : {int, Ellipsis, None}"],
    ["p", "If the ImageResource contains multiple ndimages, and index is an integer, select the index-th ndimage from among them and return it."]];
  const view = shown(passageView(display, queryTokens("what does `index` of `imread` do?"), 260, "imageio.v3.imread"));
  assert.deepEqual(view.slice(0, 3), [["p", "Read an ndimage from a URI."], ["label", "Parameters"], ["term", "index : {int, Ellipsis, None}"]]);
  assert.ok(!view.some(([, t]) => t.startsWith("uri :")));
});

test("displayText: label and term lines, code indented, paragraphs apart", () => {
  const display = [["label", "Parameters"], ["term", "strategy : str"], ["p", "The rule."], ["code", "a\n\n  b"]];
  assert.equal(displayText(display), "Parameters:\nstrategy : str\nThe rule.\n\n    a\n\n      b");
  assert.deepEqual(recordDisplay({ text: "H\n  a   b\n\n c" }), [["p", "H\na b\nc"]]);
  assert.deepEqual(recordDisplay({ text: "x", display: [] }), []);
});

/** @param {import("../src/ui/passage.js").ViewBlock[]} view */
const shown = (view) => view.map((b) => [b.kind, b.segments.map((s) => s.text).join("")]);

test("passageView keeps code lines and cuts prose at word boundaries", () => {
  const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ");
  const code = Array.from({ length: 12 }, (_, i) => `line_${i} = ${i}`).join("\n");
  const view = shown(passageView([["p", "Intro text."], ["code", code], ["p", long], ["p", "After."]], queryTokens(""), 200));
  assert.equal(view[0][1], "Intro text.");
  assert.equal(view[1][0], "code");
  assert.ok(view[1][1].startsWith("line_0 = 0\nline_1 = 1\n"), view[1][1]); // newlines kept
  assert.ok(view[1][1].endsWith("\n…"));
  for (const [kind, text] of view.filter(([k]) => k !== "code")) {
    for (const word of text.replace(/…/g, " ").split(/\s+/).filter(Boolean)) {
      assert.ok(word === "Intro" || word === "text." || /^word\d+$/.test(word), `${kind}: cut word ${word}`);
    }
  }
  assert.equal(view.length, 3, "one ellipsis where the passage is cut, not two");
  assert.equal(cutWords("alpha beta gamma", 12), "alpha beta …");
  assert.equal(cutWords("alphabetagamma", 5), "alpha …"); // one word longer than the room
});

test("passageView shows a long code block from the line the query names", () => {
  const listing = Array.from({ length: 40 }, (_, i) => `codeline${19960 + i} = transform(state, weight=${i % 9})`).join("\n");
  const [block] = shown(passageView([["code", listing]], queryTokens("codeline19999"), 260));
  const lines = block[1].split("\n");
  assert.deepEqual(lines, ["…", "codeline19998 = transform(state, weight=2)", "codeline19999 = transform(state, weight=3)"]);
  // a match among the first lines: the block from its top, as before
  assert.ok(shown(passageView([["code", listing]], queryTokens("codeline19962"), 260))[0][1].startsWith("codeline19960 ="));
  // in the middle: the line before it, the line, and those after
  const middle = shown(passageView([["code", listing]], queryTokens("codeline19980"), 260))[0][1].split("\n");
  assert.deepEqual(middle.slice(0, 3), ["…", "codeline19979 = transform(state, weight=1)", "codeline19980 = transform(state, weight=2)"]);
  assert.equal(middle.at(-1), "…");
});

test("passageView starts at the block with the query terms, its label and term above", () => {
  const filler = Array.from({ length: 60 }, () => "filler").join(" ");
  const display = [["p", filler], ["label", "Notes"], ["term", "x : int"], ["p", "The strategy matters."]];
  const view = passageView(display, queryTokens("strategy"), 100);
  // the label starts something new: no "…" line above it (none ever opens a window)
  assert.deepEqual(shown(view).slice(0, 2), [["label", "Notes"], ["term", "x : int"]]);
  assert.ok(view[2].segments.some((s) => s.hit && s.text === "strategy"));
  assert.equal(shown(passageView([["lead", "Again."], ["p", "b\u202ec"]], queryTokens(""), 100))[1][1], "bc");
  assert.deepEqual(shown(passageView([["lead", "Again."]], queryTokens(""), 100)), [["p", "Again."]]);
});

test("an API passage shown from further down keeps its summary line first", () => {
  const filler = Array.from({ length: 60 }, () => "filler").join(" ");
  const display = [["term", "class Scaler"], ["p", `Scale features. ${filler}`], ["term", "class Scaler(copy=True)"],
    ["label", "Parameters"], ["term", "copy : bool"], ["p", "Whether the strategy copies."]];
  const view = shown(passageView(display, queryTokens("strategy"), 160));
  assert.ok(view[0][1].startsWith("Scale features. filler") && view[0][1].endsWith("…"), view[0][1]);
  assert.ok(view[0][1].length <= SUMMARY_CHARS + 2);
  // then the matching entry with the terms above it (here the signature too: the next block)
  assert.deepEqual(view.slice(1, 4), [["term", "class Scaler(copy=True)"], ["label", "Parameters"], ["term", "copy : bool"]]);
  const further = [...display.slice(0, 3), ["p", filler], ...display.slice(3)];
  assert.deepEqual(shown(passageView(further, queryTokens("strategy"), 160)).slice(1, 3),
    [["label", "Parameters"], ["term", "copy : bool"]]); // the summary line ends with "…": no line of its own
  // the summary is the next block: no ellipsis between them
  // a label the room ends on is not shown alone
  const fits = Array.from({ length: 40 }, () => "filler").join(" "); // leaves 8 characters of room
  const cut = shown(passageView([["p", "The strategy."], ["p", fits], ["label", "Parameters"], ["p", "x"]], queryTokens("strategy"), 300));
  assert.deepEqual(cut, [["p", "The strategy."], ["p", fits], ["p", "…"]]);
  const near = [["term", "fit"], ["p", filler], ["p", "The strategy."]];
  assert.deepEqual(shown(passageView(near, queryTokens("strategy"), 120)).map(([k]) => k), ["p", "p"]);
});
