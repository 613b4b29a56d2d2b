// @ts-check
/**
 * The shard source of pages opened from file:// (no fetch, no workers), and of pages
 * whose Content-Security-Policy refuses workers: every script shard is a classic script
 * that calls the global `sphinxRagShard(name, base64)` (sphinx_rag/search/shards.py), so it is
 * loaded with a <script> tag and handed over by that call. Dense shards are binary:
 * semantic search is not available this way.
 * @module script_source
 */

import { scriptPayload } from "../search/shards.js";

/** @type {Map<string, (base64: string) => void>} */
const waiting = new Map();

/**
 * Register a shard (called by each shard script; the manifest's name carries a hash the
 * page does not know, so it is matched by kind).
 * @param {string} name
 * @param {string} base64
 */
function register(name, base64) {
  const key = name.startsWith("manifest-") ? "manifest" : name;
  const resolve = waiting.get(key);
  if (resolve) {
    waiting.delete(key);
    resolve(base64);
  }
}

export class ScriptSource {
  /** @param {string | URL} baseUrl  the index directory */
  constructor(baseUrl) {
    const base = String(baseUrl);
    this.baseUrl = base.endsWith("/") ? base : base + "/";
    /** @type {any} */ (globalThis).sphinxRagShard = register;
    /** @type {Map<string, Promise<string>>} */
    this.loaded = new Map();
  }

  /**
   * The base64 argument of the shard script `file` once it has run.
   * @param {string} key  the name it registers under
   * @param {string} file
   * @returns {Promise<string>}
   */
  load(key, file) {
    let p = this.loaded.get(key);
    if (!p) {
      p = new Promise((resolve, reject) => {
        waiting.set(key, resolve);
        const script = document.createElement("script");
        script.src = new URL(file, this.baseUrl).href;
        script.addEventListener("load", () => {
          script.remove();
          if (waiting.get(key) === resolve) { // ran, but registered nothing of that name
            waiting.delete(key);
            reject(new Error(`sphinx-rag: ${file} is not a search index shard: rebuild the docs`));
          }
        });
        script.addEventListener("error", () => {
          script.remove();
          waiting.delete(key);
          reject(new Error(`sphinx-rag: ${script.src} is missing: rebuild the docs with sphinx-rag`));
        });
        document.head.append(script);
      });
      this.loaded.set(key, p);
      p.catch(() => this.loaded.delete(key));
    }
    return p;
  }

  /** @returns {Promise<any>} the manifest, from manifest.js */
  async manifest() {
    const base64 = await this.load("manifest", "manifest.js");
    return JSON.parse(new TextDecoder().decode(await scriptPayload("manifest", base64, false)));
  }

  /** @param {string} file  e.g. "terms-0123456789abcdef.js" @returns {Promise<Uint8Array>} */
  async script(file) {
    const name = file.replace(/\.js$/, "");
    return scriptPayload(name, await this.load(name, file));
  }

  /** @param {string} name @returns {Promise<Uint8Array>} */
  async binary(name) {
    throw new Error(`sphinx-rag: ${name} cannot be read without fetch (pages opened from file://)`);
  }
}
