// Build the browser client into ../sphinx_rag/static/sphinx_rag/ (package data that
// Sphinx copies to <html>/_static/sphinx_rag/). Run with `npm run build`.
//
// Output:
//   worker.js                     src/worker/worker.js bundled as an ES module (module worker):
//                                 the index, the search and onnxruntime-web's JS (its
//                                 "onnxruntime-web/wasm" build: CPU/wasm only, no WebGPU/WebGL).
//   searchbar.js                  src/ui/searchbar.js bundled as a classic script (IIFE):
//                                 Chromium refuses module scripts from file:// pages.
//   searchbar.css                 copied from src/ui/.
//   wllama-ask.js                 src/llm/wllama_engine.js bundled as an ES module with
//                                 @wllama/wllama (llama.cpp in wasm): Ask's in-browser GGUF
//                                 model. Never loaded with the page: ask.js imports it by URL
//                                 once the reader agreed to run a model.
//   wllama.wasm                   wllama's WebAssembly (one build: one thread, threads when
//                                 the page is cross-origin isolated, WebGPU where offered).
//                                 Its CDN fallbacks are never used (ask's engine turns them off).
//   ort-wasm-simd-threaded.wasm   onnxruntime-web's WebAssembly runtime (SIMD, threads
//                                 when the page is cross-origin isolated). Always needed.
//   ort-wasm-simd-threaded.mjs    its Emscripten loader (24 KB): onnxruntime-web imports it
//                                 from env.wasm.wasmPaths when that is set, and its pthread
//                                 workers start from it when numThreads > 1.
// The other onnxruntime-web files (WebGPU/JSEP, JSPI, asyncify builds; 16-28 MB each)
// are not copied. A missing src/ entry (the UI is developed separately) is skipped with
// a notice rather than failing the build.

import { build } from "esbuild";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "sphinx_rag", "static", "sphinx_rag");
const ortDist = dirname(createRequire(import.meta.url).resolve("onnxruntime-web/ort-wasm-simd-threaded.wasm"));

const wllamaWasm = createRequire(import.meta.url).resolve("@wllama/wllama/esm/wasm/wllama.wasm");

const ENTRIES = [
  { src: "src/worker/worker.js", format: "esm", name: "worker" },
  { src: "src/ui/searchbar.js", format: "iife", name: "searchbar" },
  { src: "src/llm/wllama_engine.js", format: "esm", name: "wllama-ask" },
];
const COPIES = [
  join(here, "src", "ui", "searchbar.css"),
  join(ortDist, "ort-wasm-simd-threaded.wasm"),
  join(ortDist, "ort-wasm-simd-threaded.mjs"),
  wllamaWasm,
];
const production = process.env.NODE_ENV !== "development";
// What onnxruntime-web's files weigh, for the worker's status line ("24 MB + 14 MB runtime").
const runtimeBytes = COPIES.filter((f) => /ort-wasm/.test(f) && existsSync(f)).reduce((n, f) => n + statSync(f).size, 0);
// What wllama's wasm weighs, for Ask's consent line ("98 MB, and the 10 MB runtime").
const wllamaBytes = existsSync(wllamaWasm) ? statSync(wllamaWasm).size : 0;

mkdirSync(out, { recursive: true });
// Start clean (old outputs of removed entries must not linger in the package).
for (const name of readdirSync(out)) {
  if (/\.(js|mjs|wasm|css|map)$/.test(name)) rmSync(join(out, name));
}

for (const { src, format, name } of ENTRIES) {
  const entry = join(here, src);
  if (!existsSync(entry)) {
    console.warn(`build: ${src} does not exist yet, skipped`);
    continue;
  }
  await build({
    entryPoints: { [name]: entry },
    outdir: out,
    bundle: true,
    format: /** @type {"esm" | "iife"} */ (format),
    target: ["es2022"],
    minify: production,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
    // onnxruntime-web tests `typeof process`/`require` for Node; keep those branches inert.
    platform: "browser",
    define: {
      "globalThis.SPHINX_RAG_RUNTIME_BYTES": String(runtimeBytes), // src/worker/tier_status.js
      "globalThis.SPHINX_RAG_WLLAMA_BYTES": String(wllamaBytes), // src/ui/ask_local.js
    },
  });
}
for (const file of COPIES) {
  if (!existsSync(file)) {
    console.warn(`build: ${file} does not exist, not copied`);
    continue;
  }
  copyFileSync(file, join(out, file.split(/[\\/]/).pop() ?? ""));
}
for (const name of readdirSync(out).sort()) {
  console.log(`  ${name.padEnd(30)} ${(statSync(join(out, name)).size / 1024).toFixed(0).padStart(7)} KB`);
}
