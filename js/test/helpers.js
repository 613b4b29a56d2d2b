// @ts-check
// Shared paths and loaders of the JS parity tests.
//
// Fixtures: tests/fixtures/*.json (made by tests/fixtures/generate.py).
// Demo assets: $SPHINX_RAG_DEMO_HTML (default demo_docs/_build/html), built with
//   cd demo_docs && python -m sphinx -b html -q . _build/html
// Tests needing the demo build skip when it is missing, unless SPHINX_RAG_REQUIRE_DEMO=1
// (tests/test_js_parity.py sets it), which makes them fail instead.

import { existsSync, readFileSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import { AssetLoader } from "../src/worker/loader.js";

const here = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(here, "..", "..");
export const FIXTURES = join(REPO, "tests", "fixtures");
export const REQUIRE_DEMO = process.env.SPHINX_RAG_REQUIRE_DEMO === "1";

/** @param {string} name */
export function fixture(name) {
  return JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));
}

/** The demo build's asset directory, or null if it is not built. */
export function demoAssetDir() {
  const html = process.env.SPHINX_RAG_DEMO_HTML || join(REPO, "demo_docs", "_build", "html");
  const dir = join(html, "_static", "sphinx_rag");
  if (existsSync(join(dir, "manifest.json"))) return dir;
  if (REQUIRE_DEMO) throw new Error(`no demo build at ${html} (SPHINX_RAG_DEMO_HTML)`);
  return null;
}

export const SKIP_DEMO = demoAssetDir() === null
  ? "demo docs not built: cd demo_docs && python -m sphinx -b html -q . _build/html"
  : false;

/**
 * A fetch() over the local file system, for AssetLoader in Node.
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

/** An AssetLoader over a local asset directory (no Cache Storage). @param {string} dir */
export function localLoader(dir, options = {}) {
  return new AssetLoader(pathToFileURL(dir + "/").href, { fetch: fileFetch(), caches: null, ...options });
}

/** vocab.txt: the demo build's, else the exported model in ~/.cache/sphinx-rag. */
export function vocabPath() {
  const demo = demoAssetDir();
  if (demo && existsSync(join(demo, "model", "vocab.txt"))) return join(demo, "model", "vocab.txt");
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
