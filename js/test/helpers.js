// @ts-check
// Shared paths and loaders of the JS parity tests.
//
// Fixtures: tests/fixtures/*.json (made by tests/fixtures/generate.py).
// Demo index: $SPHINX_RAG_DEMO_HTML (default demo_docs/_build/html), built with
//   cd demo_docs && python -m sphinx -b html -q . _build/html
// Tests needing the demo build skip when it is missing, unless SPHINX_RAG_REQUIRE_DEMO=1
// (tests/test_js_parity.py sets it), which makes them fail instead.

import { existsSync, readFileSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { IndexReader } from "../src/search/index.js";
import { HttpSource } from "../src/worker/loader.js";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, "..", "..");
export const FIXTURES = join(REPO, "tests", "fixtures");
export const REQUIRE_DEMO = process.env.SPHINX_RAG_REQUIRE_DEMO === "1";

/** Keys whose value is a query vector, written by generate.py as base64 float32 bytes. */
const VECTOR_KEYS = new Set(["vector", "static_vector"]);

/**
 * A JSON file written by tests/fixtures/generate.py's dumps(), its vectors as arrays of
 * numbers again (generate.load in Python).
 * @param {string} path
 */
export function readFixture(path) {
  return JSON.parse(readFileSync(path, "utf8"), (key, value) => {
    if (!VECTOR_KEYS.has(key) || typeof value !== "string") return value;
    const bytes = Buffer.from(value, "base64");
    const floats = new Float32Array(bytes.byteLength / 4);
    new Uint8Array(floats.buffer).set(bytes); // little-endian, as every platform Node runs on
    return Array.from(floats);
  });
}

/** @param {string} name */
export function fixture(name) {
  // rankings.json: Python's rankings of this machine's demo build when tests/test_js_parity.py
  // made them (another CPU may round a chunk vector's value the other way)
  if (name === "rankings.json" && process.env.SPHINX_RAG_RANKINGS) return readFixture(process.env.SPHINX_RAG_RANKINGS);
  return readFixture(join(FIXTURES, name));
}

/** The demo build's index directory, or null if it is not built. */
export function demoIndexDir() {
  const html = process.env.SPHINX_RAG_DEMO_HTML || join(REPO, "demo_docs", "_build", "html");
  const dir = join(html, "_static", "sphinx_rag", "index");
  if (existsSync(join(dir, "manifest.json"))) return dir;
  if (REQUIRE_DEMO) throw new Error(`no demo build at ${html} (SPHINX_RAG_DEMO_HTML)`);
  return null;
}

/**
 * The demo re-indexed into many small shards, made by tests/test_js_parity.py
 * ($SPHINX_RAG_SMALL_INDEX, with Python's rankings.json beside it), or null.
 */
export function smallIndexDir() {
  const dir = process.env.SPHINX_RAG_SMALL_INDEX;
  if (dir && existsSync(join(dir, "manifest.json"))) return dir;
  if (REQUIRE_DEMO) throw new Error("no small-layout index ($SPHINX_RAG_SMALL_INDEX): run tests/test_js_parity.py");
  return null;
}

/**
 * tests/roots/test-longpages' index and Python's rankings over it (long_pages.json), made by
 * tests/test_js_parity.py ($SPHINX_RAG_LONGPAGES_HTML, $SPHINX_RAG_LONGPAGES_RANKINGS), or null.
 * @returns {{dir: string, rankings: string} | null}
 */
export function longPages() {
  const html = process.env.SPHINX_RAG_LONGPAGES_HTML;
  const rankings = process.env.SPHINX_RAG_LONGPAGES_RANKINGS;
  const dir = html ? join(html, "_static", "sphinx_rag", "index") : "";
  if (dir && rankings && existsSync(join(dir, "manifest.json")) && existsSync(rankings)) return { dir, rankings };
  if (REQUIRE_DEMO) throw new Error("no long-pages index ($SPHINX_RAG_LONGPAGES_HTML): run tests/test_js_parity.py");
  return null;
}

export const SKIP_DEMO = demoIndexDir() === null
  ? "demo docs not built: cd demo_docs && python -m sphinx -b html -q . _build/html"
  : false;
export const SKIP_SMALL = smallIndexDir() === null ? "no small-layout index: run python -m pytest tests/test_js_parity.py" : false;
export const SKIP_LONG = longPages() === null ? "no long-pages index: run python -m pytest tests/test_js_parity.py" : false;

/**
 * A fetch() over the local file system, for HttpSource in Node.
 * @param {{calls?: string[]}} [log] records each URL fetched
 * @returns {typeof fetch}
 */
export function fileFetch(log = {}) {
  return /** @type {any} */ (async (/** @type {string} */ url) => {
    log.calls?.push(String(url));
    const path = fileURLToPath(String(url));
    if (!existsSync(path)) return new Response("not found", { status: 404 });
    const data = readFileSync(path);
    return new Response(data, { headers: { "content-length": String(data.byteLength) } });
  });
}

/** The worker's HTTP source over a local index directory (no Cache Storage). @param {string} dir */
export function localSource(dir, options = {}) {
  return new HttpSource(pathToFileURL(dir + "/").href, { fetch: fileFetch(), caches: null, ...options });
}

/** An IndexReader over a local index directory, through the worker's source. @param {string} dir */
export async function openIndex(dir) {
  const source = localSource(dir);
  return { index: new IndexReader(await source.manifest(), source), source };
}

/** vocab.txt: the demo build's, else the exported model in ~/.cache/sphinx-rag. */
export function vocabPath() {
  const demo = demoIndexDir();
  if (demo) {
    const manifest = JSON.parse(readFileSync(join(demo, "manifest.json"), "utf8"));
    if (manifest.model_files) return join(demo, manifest.model_files.dir, "vocab.txt");
  }
  const models = join(process.env.SPHINX_RAG_CACHE || join(homedir(), ".cache", "sphinx-rag"), "models");
  if (existsSync(models)) {
    for (const name of readdirSync(models).sort()) {
      const path = join(models, name, "vocab.txt");
      if (existsSync(path)) return path;
    }
  }
  if (REQUIRE_DEMO) throw new Error("no vocab.txt: build the demo docs");
  return null;
}
