// @ts-check
// The worker's federated search (js/src/worker/federation.js) over tiny sites written here
// the way sphinx_rag/search/format.py lays one out (<root>/_static/sphinx_rag/index/), read through
// a fetch over the file system that can also refuse, fail, stall or answer late; and over
// the demo build as a remote site for the semantic tier (skipped without it).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

import { FORMAT_VERSION, IndexReader } from "../src/search/index.js";
import { Searcher } from "../src/search/retrieve.js";
import { compareCodePoints } from "../src/search/shards.js";
import {
  Federation, INDEX_DIR, RemoteSite, UNREADABLE, failureReason, federationEntries, sameModel, siteUrl,
} from "../src/worker/federation.js";
import { HttpSource } from "../src/worker/loader.js";
import { SKIP_DEMO, demoIndexDir, fileFetch, fixture } from "./helpers.js";

const written = /** @type {string[]} */ ([]);
/** Site root URL (https://<name>.test/) -> its directory's file URL. */
const ROOTS = new Map();
after(() => { for (const dir of written) rmSync(dir, { recursive: true, force: true }); });

/** @param {string} kind @param {Uint8Array} payload @returns {[string, string]} */
function scriptShard(kind, payload) {
  const stream = gzipSync(payload);
  const name = `${kind}-${createHash("sha256").update(stream).digest("hex").slice(0, 16)}`;
  return [`${name}.js`, `sphinxRagShard("${name}","${stream.toString("base64")}");\n`];
}

const json = (/** @type {any} */ x) => new TextEncoder().encode(JSON.stringify(x));

/**
 * A keyword-only site: one chunk per text (its words its terms), in `<tmp>/<name>/`, served
 * (by sitesFetch) at https://<name>.test/<path>; returns that root URL and the index directory.
 * edit: changes record i of the text shard (a hostile site); texts: its text shard's payload
 * instead (a gzip bomb).
 * @param {string} name @param {string[]} texts
 * @param {{version?: number, path?: string, edit?: (record: any, i: number) => any, textsStream?: Buffer}} [options]
 */
function writeSite(name, texts, { version = FORMAT_VERSION, path = "", edit = (r) => r, textsStream = undefined } = {}) {
  const root = join(mkdtempSync(join(tmpdir(), "sphinx-rag-fed-")), name);
  written.push(dirname(root));
  const dir = join(root, ...INDEX_DIR.split("/").filter(Boolean));
  mkdirSync(dir, { recursive: true });
  /** @type {Map<string, number[]>} */
  const postings = new Map();
  texts.forEach((t, i) => { for (const w of new Set(t.split(" "))) postings.set(w, [...(postings.get(w) ?? []), i]); });
  const terms = [...postings.keys()].sort(compareCodePoints);
  const lists = terms.map((t) => /** @type {number[]} */ (postings.get(t)));
  const gaps = lists.flatMap((ids) => ids.map((d, j) => (j ? d - ids[j - 1] : d)));
  const head = json({ terms, df: lists.map((l) => l.length), count: lists.map((l) => l.length), scale: terms.map(() => 0.5) });
  const body = Uint8Array.from([...gaps, ...lists.flatMap((l) => l.map(() => 2))]);
  const payload = new Uint8Array(4 + head.length + body.length);
  new DataView(payload.buffer).setUint32(0, head.length, true);
  payload.set(head, 4);
  payload.set(body, 4 + head.length);
  const files = /** @type {Record<string, [string, string]>} */ ({});
  files.terms = scriptShard("terms", payload);
  files.texts = scriptShard("texts", json({ first: 0, chunks: texts.map((text, i) => edit(
    { id: `p${i}#s:0`, doc: `p${i}`, url: `p${i}.html#s`, headings: [`Page ${i}`], kind: "guide", text, display: [["p", text]] }, i)) }));
  if (textsStream) files.texts = streamShard("texts", textsStream);
  const byLength = [...terms].sort((a, b) => a.length - b.length || compareCodePoints(a, b));
  files.near = scriptShard("near", json({ terms: byLength, df: byLength.map((t) => /** @type {number[]} */ (postings.get(t)).length) }));
  files.dir = scriptShard("dir", json({ terms: [[terms[0], files.terms[0]]], texts: [files.texts[0]], weights: [] }));
  for (const [file, text] of Object.values(files)) writeFileSync(join(dir, file), text);
  const manifest = {
    format_version: version, counts: { chunks: texts.length, dim: 0, vocab: terms.length }, model: null, dense: null,
    model_files: null, encoder: null, layout: { texts_per_shard: 64, probe: 4096 }, dir: files.dir[0],
    near: [[byLength[0].length, byLength[byLength.length - 1].length, files.near[0]]], settings: { fusion: "rrf", rrf_k: 60 },
  };
  writeFileSync(join(dir, "manifest.json"), JSON.stringify(manifest));
  ROOTS.set(`https://${name}.test/${path}`, pathToFileURL(root + "/").href);
  return { root: `https://${name}.test/${path}`, dir, files };
}

/** A script shard of a given gzip stream (its name its hash). @param {string} kind @param {Buffer} stream @returns {[string, string]} */
function streamShard(kind, stream) {
  const name = `${kind}-${createHash("sha256").update(stream).digest("hex").slice(0, 16)}`;
  return [`${name}.js`, `sphinxRagShard("${name}","${stream.toString("base64")}");\n`];
}

/**
 * fileFetch with the ways a site fails: per root URL, "down" (no connection), "cors" (the
 * server answers, but not to cross-origin reads: only a no-cors request succeeds), "stall"
 * (never answers: only its signal ends it), or a delay in milliseconds.
 * @param {Record<string, "down" | "cors" | "stall" | number>} how
 * @param {string[]} calls
 * @returns {typeof fetch}
 */
function sitesFetch(how, calls) {
  const files = fileFetch();
  return /** @type {any} */ (async (/** @type {string} */ url, /** @type {RequestInit} */ init = {}) => {
    const rule = Object.entries(how).find(([root]) => String(url).startsWith(root))?.[1];
    if (rule === "down") {
      calls.push(String(url));
      throw new TypeError("fetch failed");
    }
    if (rule === "cors" && init.mode !== "no-cors") {
      calls.push(String(url));
      throw new TypeError("fetch failed");
    }
    if (rule === "stall") {
      calls.push(String(url));
      return new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    }
    if (typeof rule === "number") await new Promise((r) => setTimeout(r, rule));
    calls.push(String(url));
    const root = [...ROOTS.keys()].find((r) => String(url).startsWith(r));
    return root ? files(ROOTS.get(root) + String(url).slice(root.length)) : new Response("", { status: 404 });
  });
}

const HOME = { results: [{ rank: 1, score: 1, url: "h0.html", title: "Home", kind: "guide", text: "baseline", display: [], id: "h#:0" }], weak: false };
const KEYWORD = { vector: null, encoder: null, model: null, semantic: false };

/** Post the merge of a started search; every post's sources, in rank order. */
async function posts(/** @type {any} */ handle, stale = () => false) {
  const out = /** @type {Array<Array<string>>} */ ([]);
  await handle.post(HOME, (/** @type {any} */ a) => out.push(a.results.map((/** @type {any} */ r) => r.source ?? "")), stale);
  return out;
}

test("federationEntries keeps well-formed sites once, in order", () => {
  const entries = federationEntries({ federation: [
    { name: "numpy", url: "https://numpy.org/doc/stable", enabled: true }, { name: "numpy", url: "https://x.org/" },
    { name: " ", url: "https://y.org/" }, { name: "js", url: "javascript:alert(1)" }, { name: "rel", url: "../1.4/" },
    { name: "v1.4", url: "http://mlkit.org/1.4/", enabled: "yes" }, "nonsense",
  ] });
  assert.deepEqual(entries, [
    { name: "numpy", url: "https://numpy.org/doc/stable/", enabled: true },
    { name: "v1.4", url: "http://mlkit.org/1.4/", enabled: false },
  ]);
  assert.deepEqual(federationEntries({}), []);
  assert.deepEqual(federationEntries(null), []);
});

test("sameModel compares model_info whatever its key order", () => {
  assert.ok(sameModel({ model_id: "m", dim: 384 }, { dim: 384, model_id: "m" }));
  assert.ok(!sameModel({ model_id: "m", dim: 384 }, { model_id: "n", dim: 384 }));
  assert.ok(!sameModel(null, null) && !sameModel({ model_id: "m" }, null));
});

test("a site is read only when it is on and a query comes; its results are absolute and named", async () => {
  const a = writeSite("a", ["baseline model", "a widget"]);
  const b = writeSite("b", ["baseline widget"]);
  const calls = /** @type {string[]} */ ([]);
  const changes = /** @type {any[]} */ ([]);
  const federation = new Federation({ federation: [{ name: "a", url: a.root, enabled: true }, { name: "b", url: b.root }] },
    { fetch: sitesFetch({}, calls), caches: null, firstWaitMs: 5000, onChange: (s) => changes.push(s) });
  federation.setChoices({});
  assert.deepEqual(federation.statuses().map((s) => [s.name, s.state]), [["a", "waiting"], ["b", "off"]]);
  assert.deepEqual(calls, []); // nothing before a query
  const merged = /** @type {any[]} */ ([]);
  await federation.start("baseline", 10, KEYWORD)?.post(HOME, (m) => merged.push(m), () => false);
  assert.equal(merged.length, 2); // the home results do not wait for a site's first contact
  assert.deepEqual(merged.map((m) => m.results.map((/** @type {any} */ r) => [r.rank, r.source ?? "", r.url])),
    [[[1, "", "h0.html"]], [[1, "", "h0.html"], [2, "a", `${a.root}p0.html#s`]]]);
  // a known site: one merge; a's passage holds "model", this site's does not: a's first
  assert.deepEqual(await posts(federation.start("model", 10, KEYWORD)), [["a", ""]]);
  assert.deepEqual(calls.map((u) => u.slice(a.root.length)), ["_static/sphinx_rag/index/manifest.json",
    ...["dir", "terms", "texts"].map((k) => `_static/sphinx_rag/index/${a.files[k][0]}`)]);
  assert.ok(calls.every((u) => u.startsWith(a.root)), "nothing of b");
  assert.deepEqual(changes.at(-1).map((/** @type {any} */ s) => [s.name, s.state]), [["a", "keyword"], ["b", "off"]]);

  federation.setChoices({ b: true, "": false }); // b on, this site off
  const sources = await posts(federation.start("widget", 10, KEYWORD));
  // both first results match as well: the smaller URL first, not the site listed first
  assert.deepEqual([...sources.at(-1) ?? []].sort(), ["a", "b"]);
  federation.setChoices({ a: false, b: false, "": false }); // nothing at all: this site after all
  assert.equal(federation.start("widget", 10, KEYWORD), null);
  assert.deepEqual(federation.merge("widget", HOME, []).results.map((r) => r.source ?? ""), [""]);
});

test("a late site is posted again; a stale request is not", async () => {
  const a = writeSite("a", ["baseline model"]);
  const b = writeSite("b", ["baseline widget"]);
  /** @type {() => void} */
  let open = () => {};
  const gate = new Promise((resolve) => { open = () => resolve(undefined); });
  const late = sitesFetch({}, []);
  const fetchFn = /** @type {any} */ (async (/** @type {string} */ url, /** @type {any} */ init) => {
    if (String(url).startsWith(b.root)) await gate; // b answers only once the first merge is out
    return late(url, init);
  });
  const federation = new Federation({ federation: [{ name: "a", url: a.root, enabled: true }, { name: "b", url: b.root, enabled: true }] },
    { fetch: fetchFn, caches: null, firstWaitMs: 20 });
  const out = /** @type {string[][]} */ ([]);
  await federation.start("baseline", 10, KEYWORD)?.post(HOME, (m) => {
    out.push(m.results.map((r) => r.source ?? ""));
    open();
  }, () => false);
  assert.ok(out.length >= 2 && !out[0].includes("b"), JSON.stringify(out));
  assert.deepEqual(out.at(-1), ["", "a", "b"]);

  const stale = /** @type {string[][]} */ ([]);
  let newer = false;
  const federation2 = new Federation({ federation: [{ name: "b", url: b.root, enabled: true }] },
    { fetch: sitesFetch({ [b.root]: 200 }, []), caches: null, firstWaitMs: 0 });
  await federation2.start("widget", 10, KEYWORD)?.post(HOME, (m) => {
    stale.push(m.results.map((r) => r.source ?? ""));
    newer = true; // a newer query came before b answered
  }, () => newer);
  assert.deepEqual(stale, [[""]]);

  // a newer search of the same query (the model arrived: another tier) supersedes a late merge
  const superseded = /** @type {string[][]} */ ([]);
  const federation3 = new Federation({ federation: [{ name: "b", url: b.root, enabled: true }] },
    { fetch: sitesFetch({ [b.root]: 200 }, []), caches: null, firstWaitMs: 0 });
  const older = federation3.start("widget", 10, KEYWORD)?.post(HOME, (m) => superseded.push(m.results.map((r) => r.source ?? "")), () => false);
  federation3.setChoices({ b: false }); // or the reader turned b off meanwhile
  await older;
  assert.deepEqual(superseded, []); // the newer search posts its own
});

test("each failing site says why in one line, is left out, and is read again once turned off and on", async () => {
  const ok = writeSite("ok", ["baseline model"]);
  const down = writeSite("down", ["baseline"]);
  const cors = writeSite("cors", ["baseline"]);
  const stall = writeSite("stall", ["baseline"]);
  const format2 = writeSite("format2", ["baseline"], { version: 2 });
  const badhash = writeSite("badhash", ["baseline"]);
  writeFileSync(join(badhash.dir, badhash.files.terms[0]), scriptShard("terms", Uint8Array.of(1))[1]
    .replace(/terms-[0-9a-f]{16}/, badhash.files.terms[0].slice(0, -3)));
  const calls = /** @type {string[]} */ ([]);
  const sites = { ok, down, cors, stall, format2, badhash };
  const federation = new Federation({ federation: Object.entries(sites).map(([name, s]) => ({ name, url: s.root, enabled: true })) },
    { fetch: sitesFetch({ [down.root]: "down", [cors.root]: "cors", [stall.root]: "stall" }, calls), caches: null, timeoutMs: 1000 });
  assert.deepEqual(await posts(federation.start("baseline", 10, KEYWORD)), [[""], ["", "ok"]]); // failures post nothing
  const lines = Object.fromEntries(federation.statuses().filter((s) => s.state === "failed").map((s) => [s.name, s.message]));
  assert.deepEqual(Object.keys(lines).sort(), ["badhash", "cors", "down", "format2", "stall"]);
  // down and no CORS header: one TypeError, and no no-cors probe (it would follow a redirect anywhere)
  assert.equal(lines.down, `not searched: ${UNREADABLE}`);
  assert.equal(lines.cors, `not searched: ${UNREADABLE}`);
  assert.deepEqual(calls.filter((u) => u.startsWith(cors.root)), [`${cors.root}${INDEX_DIR}manifest.json`]); // no probe
  assert.equal(lines.stall, "not searched: no answer within 1 s");
  assert.equal(lines.format2, "not searched: its index is in format 2, this page reads 3");
  assert.match(lines.badhash, /^not searched: a file of its index is refused: terms-[0-9a-f]{16} does not match its hash/);
  const before = calls.length;
  assert.deepEqual(await posts(federation.start("baseline", 10, KEYWORD)), [["", "ok"]]);
  assert.ok(calls.slice(before).every((u) => u.startsWith(ok.root)), "failed sites are not asked again");
  federation.setChoices({ format2: false });
  federation.setChoices({ format2: true });
  assert.equal(federation.statuses().find((s) => s.name === "format2")?.state, "waiting");
  await posts(federation.start("baseline", 10, KEYWORD));
  assert.ok(calls.slice(before).some((u) => u.startsWith(format2.root)), "read again");
});

test("failureReason: a timeout, a refused read, a site that is not there", () => {
  const timeout = new DOMException("signal timed out", "TimeoutError");
  assert.equal(failureReason(timeout, "https://x/m.json", 8000), "no answer within 8 s");
  assert.equal(failureReason(new TypeError("Failed to fetch"), "https://x/m.json", 8000), UNREADABLE);
  const missing = new Error("sphinx-rag: no search index at https://x/m.json (HTTP 404): build the docs with \"sphinx_rag\" in extensions");
  assert.equal(failureReason(missing, "https://x/m.json", 8000), "no sphinx-rag index at https://x/m.json (HTTP 404)");
});

test("the semantic tier: the home vector for the same model, the site's own encoder otherwise", { skip: SKIP_DEMO }, async () => {
  const index = /** @type {string} */ (demoIndexDir());
  const root = "https://mlkit.test/"; // a site's results are http(s) pages under its root: served from the demo build
  ROOTS.set(root, pathToFileURL(join(index, "..", "..", "..") + "/").href);
  const files = (/** @type {string[]} */ calls) => sitesFetch({}, calls);
  const manifest = JSON.parse(readFileSync(join(index, "manifest.json"), "utf8"));
  const query = fixture("rankings.json").queries[0];
  const home = { vector: query.vector, encoder: /** @type {"model"} */ ("model"), model: manifest.model, semantic: true };
  /** A fetch of the demo whose manifest says something else. @param {(m: any) => any} edit @param {string[]} calls */
  const edited = (edit, calls) => /** @type {any} */ (async (/** @type {string} */ url, /** @type {any} */ init) => {
    const response = await files(calls)(url, init);
    return String(url).endsWith("manifest.json") ? new Response(JSON.stringify(edit(await response.json()))) : response;
  });
  const site = (/** @type {(m: any) => any} */ edit, /** @type {string[]} */ calls) =>
    new RemoteSite({ name: "mlkit", url: root, enabled: true }, { fetch: edited(edit, calls), caches: null });

  const same = /** @type {string[]} */ ([]);
  const remote = site((m) => m, same);
  const answer = await remote.search(query.query, 10, home);
  const local = new HttpSource(pathToFileURL(index + "/").href, { fetch: fileFetch(), caches: null });
  const expected = await new Searcher(new IndexReader(await local.manifest(), local)).hybridAnswer(query.query, query.vector, 10);
  assert.equal(remote.state, "hybrid");
  assert.deepEqual(answer.results.map((r) => [r.id, r.score, r.url]), expected.results.map((r) => [r.id, r.score, root + r.url]));
  assert.ok(!same.some((u) => /encoder-|model-/.test(u)), "the home vector, not the site's encoder or model");

  const other = /** @type {string[]} */ ([]);
  const another = site((m) => ({ ...m, model: { ...m.model, model_id: "another/model" } }), other);
  await another.search(query.query, 10, home);
  assert.equal(another.state, "static");
  assert.ok(other.some((u) => u.includes(manifest.encoder.file)), "its own encoder embeds the query");

  const bare = site((m) => ({ ...m, model: { ...m.model, model_id: "another/model" }, encoder: null }), []);
  const keyword = await bare.search(query.query, 10, home);
  assert.equal(bare.state, "keyword");
  assert.match(bare.message, /^keyword results only: its semantic search needs its own model/);
  assert.ok(keyword.results.length > 0);

  // another model, and its encoder does not match its hash: its keyword results, and why
  const damaged = new RemoteSite({ name: "mlkit", url: root, enabled: true }, { caches: null, fetch: /** @type {any} */ (
    async (/** @type {string} */ url, /** @type {any} */ init) => {
      if (String(url).includes("/encoder-")) return new Response(new Uint8Array(64));
      return edited((m) => ({ ...m, model: { ...m.model, model_id: "another/model" } }), [])(url, init);
    }) });
  const fallback = await damaged.search(query.query, 10, home);
  assert.equal(damaged.state, "keyword");
  assert.match(damaged.message, /^keyword results only: its semantic index failed \(a file of its index is refused: encoder-/);
  assert.ok(fallback.results.length > 0);
});

test("siteUrl: only http(s) pages under the site's root (origin and path)", () => {
  const root = "https://a.test/docs/";
  const ok = { "p.html#s": "https://a.test/docs/p.html#s", "https://a.test/docs/api/x.html": "https://a.test/docs/api/x.html",
    "api/../p.html": "https://a.test/docs/p.html", "?q=1": "https://a.test/docs/?q=1" };
  for (const [url, href] of Object.entries(ok)) assert.equal(siteUrl(url, root), href, url);
  for (const url of ["javascript:alert(document.domain)", " JavaScript:alert(1)", "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>", "//evil.test/docs/p.html", "https://evil.test/docs/p.html",
    "http://a.test/docs/p.html", "https://a.test:444/docs/p.html", "../outside.html", "%2e%2e/outside.html",
    "/other/p.html", "https://a.test/docs/../x.html", "https://u:p@a.test/docs/p.html", "\\\\evil.test\\docs\\p.html",
    "blob:https://a.test/x", "file:///etc/passwd", "https://a.test/docsx/p.html"]) {
    assert.equal(siteUrl(url, root), null, url);
  }
  assert.equal(siteUrl(42, root), null);
  assert.deepEqual(federationEntries({ federation: [{ name: "q", url: "https://q.test/docs/?v=1#top" }] }).map((e) => e.url),
    ["https://q.test/docs/"]);
});

test("a site's results whose URLs are not pages under its root are dropped: never a javascript: link", async () => {
  const urls = ["javascript:window.pwned=1", "data:text/html,<script>parent.pwned=1</script>", "//evil.test/docs/p.html",
    "../outside.html", "https://evil.test/phish.html", "p5.html#ok", "https://hostile.test/docs/abs.html"];
  const site = writeSite("hostile", urls.map(() => "baseline widget"), { path: "docs/", edit: (r, i) => ({ ...r, url: urls[i] }) });
  const federation = new Federation({ federation: [{ name: "hostile", url: site.root, enabled: true }] },
    { fetch: sitesFetch({}, []), caches: null, firstWaitMs: 5000 });
  const merged = /** @type {any[]} */ ([]);
  await federation.start("baseline", 10, KEYWORD)?.post(HOME, (m) => merged.push(m), () => false);
  const hostile = merged.at(-1).results.filter((/** @type {any} */ r) => r.source === "hostile").map((/** @type {any} */ r) => r.url);
  assert.deepEqual(hostile.sort(), ["https://hostile.test/docs/abs.html", "https://hostile.test/docs/p5.html#ok"]);
  assert.equal(federation.statuses()[0].state, "keyword");
});

test("a site whose files are not well-formed is left out with one line; this site's results are posted as ever", async () => {
  const blocks = writeSite("blocks", ["baseline model"], { edit: (r) => ({ ...r, display: [["p", 42], [null, { x: 1 }]] }) });
  const huge = writeSite("huge", ["baseline"]);
  const manifestPath = join(huge.dir, "manifest.json");
  writeFileSync(manifestPath, JSON.stringify({ ...JSON.parse(readFileSync(manifestPath, "utf8")), counts: { chunks: 1e12, dim: 0 } }));
  const bomb = writeSite("bomb", ["baseline"], { textsStream: gzipSync(Buffer.alloc(128 << 20), { level: 9 }) });
  const ok = writeSite("ok", ["baseline model"]);
  const federation = new Federation({ federation: ["blocks", "huge", "bomb", "ok"].map((name, i) => (
    { name, url: [blocks, huge, bomb, ok][i].root, enabled: true })) }, { fetch: sitesFetch({}, []), caches: null, firstWaitMs: 5000 });
  assert.deepEqual(await posts(federation.start("baseline", 10, KEYWORD)), [[""], ["", "ok"]]);
  const lines = Object.fromEntries(federation.statuses().map((s) => [s.name, s.message]));
  // its one record fails its checks: dropped, and with none left the site is not searched, saying how many (issue 42)
  assert.equal(lines.blocks, "not searched: 1 of 1 records invalid (a record's display blocks must be [type, text] strings)");
  assert.equal(lines.huge, "not searched: its index is not well-formed: manifest.json (counts.chunks must be an integer from 0 to 4194304)");
  assert.match(lines.bomb, /^not searched: a file of its index is too large: texts-[0-9a-f]{16} inflates to more than 4\.1 MB$/);
  assert.equal(lines.ok, "");
});

test("a site some of whose records fail their checks answers with the others, its line saying how many (issue 42)", async () => {
  const some = writeSite("some", ["baseline model", "baseline strategy", "baseline rule"], {
    edit: (r, i) => (i === 1 ? Object.fromEntries(Object.entries(r).filter(([k]) => k !== "headings")) : r) });
  const federation = new Federation({ federation: [{ name: "some", url: some.root, enabled: true }] },
    { fetch: sitesFetch({}, []), caches: null, firstWaitMs: 5000 });
  const sources = await posts(federation.start("baseline", 10, KEYWORD));
  const [status] = federation.statuses();
  assert.equal(status.message, "1 of 3 records invalid (a record's headings must be a list of at most 64 strings); left out");
  assert.equal(status.state, "keyword");
  assert.equal(sources.at(-1)?.filter((s) => s === "some").length, 2); // the two well-formed records
});

test("a slow site is 'no answer within', a redirect to another origin is refused, naming it", async () => {
  const slow = writeSite("slow", ["baseline"]);
  const moved = writeSite("moved", ["baseline"]);
  const files = sitesFetch({}, []);
  const fetchFn = /** @type {any} */ (async (/** @type {string} */ url, /** @type {any} */ init) => {
    if (String(url).startsWith(slow.root)) { // headers at once, then a byte every 100 ms
      let sent = 0;
      const body = new ReadableStream({ async pull(c) {
        await new Promise((r) => setTimeout(r, 100));
        if (sent++ > 100) c.close(); else c.enqueue(Uint8Array.of(32));
      } });
      return new Response(body);
    }
    const response = await files(url, init);
    if (String(url).startsWith(moved.root)) Object.defineProperty(response, "url", { value: "http://127.0.0.1:9/manifest.json" });
    return response;
  });
  const federation = new Federation({ federation: [{ name: "slow", url: slow.root, enabled: true }, { name: "moved", url: moved.root, enabled: true }] },
    { fetch: fetchFn, caches: null, timeoutMs: 500 });
  await posts(federation.start("baseline", 10, KEYWORD));
  const lines = Object.fromEntries(federation.statuses().map((s) => [s.name, s.message]));
  assert.equal(lines.slow, "not searched: no answer within 0.5 s");
  assert.equal(lines.moved, "not searched: it redirects to http://127.0.0.1:9, another origin: refused");
});

test("failureReason is one line of at most 300 characters, whatever a remote file holds", () => {
  const quoted = new Error(`sphinx-rag: texts-x is odd: "<script>\n\u202eevil\u001b[2J${"x".repeat(1000)}"`);
  const line = failureReason(quoted, "https://x/m.json", 8000);
  assert.ok(!/[\n\u202e\u001b]/.test(line) && line.length <= 300, line);
});
