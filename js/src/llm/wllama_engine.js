// @ts-check
/**
 * Ask's in-browser GGUF model: wllama (llama.cpp in WebAssembly) as an adapter
 * (answer_stream.js). The entry of its own bundle, `wllama-ask.js` (js/build.mjs): the
 * page imports it by URL only once a reader agreed to run a model (ask_local.js), so the
 * dialog's first open costs what it did.
 *
 * wllama runs the model in a Web Worker of its own (generation never blocks the page):
 * several threads when the page is cross-origin isolated (COOP + COEP: `sphinx-rag serve
 * --isolated`), one otherwise; WebGPU where the browser offers it. Its wasm comes from the
 * site (`wasmUrl`, next to this bundle): wllama's CDN fallbacks are turned off
 * (setCompat(null)), so a browser that cannot run the site's build (it needs WebAssembly
 * Memory64: Chrome, Edge and Firefox of 2025 on) gets an error, not a file from elsewhere.
 * The model's file comes as a Blob (gguf_file.js fetched and checked it).
 *
 * The chat template is the model's own (GGUF metadata, applied by llama.cpp's server code
 * inside wllama). Each answer's pieces are the OpenAI-style chunks' deltas; the last
 * chunk's `timings` (llama.cpp's prompt and generation speeds) are kept in `timings`.
 *
 * @module wllama_engine
 */

import { Wllama } from "@wllama/wllama";

import { Channel } from "./answer_stream.js";

/**
 * @typedef {import("./prompt.js").Message} Message
 * @typedef {{prompt_n?: number, prompt_ms?: number, predicted_n?: number, predicted_ms?: number,
 *            prompt_per_second?: number, predicted_per_second?: number}} Timings  llama.cpp's
 */

/** Threads for this page: up to 4 when cross-origin isolated (shared memory), else 1. */
export function threadCount() {
  if (!globalThis.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(4, globalThis.navigator?.hardwareConcurrency || 1));
}

/** Sampling for a small model's answer (llama.cpp's options). */
export const SAMPLING = {};

/** wllama's log lines: its warnings and errors only (the model's own log is silenced). */
const LOGGER = {
  debug() {}, log() {}, info() {},
  warn: (/** @type {unknown[]} */ ...args) => console.warn("sphinx-rag: wllama:", ...args),
  error: (/** @type {unknown[]} */ ...args) => console.error("sphinx-rag: wllama:", ...args),
};

/**
 * Start the model in its worker and return it as an adapter, with what it runs on.
 * @param {{wasmUrl: string, blob: Blob, name: string, contextTokens: number, threads?: number}} options
 * @returns {Promise<import("./answer_stream.js").Adapter & {threads: number, gpu: boolean,
 *   timings: Timings | null, exit: () => Promise<void>}>}
 */
export async function startEngine({ wasmUrl, blob, name, contextTokens, threads = threadCount() }) {
  const wllama = new Wllama({ default: wasmUrl }, { suppressNativeLog: true, logger: /** @type {any} */ (LOGGER) });
  wllama.setCompat(null); // never the CDN's files
  const adapter = {
    kind: /** @type {const} */ ("gguf"),
    label: name,
    model: name,
    threads,
    gpu: false,
    /** @type {Timings | null} */
    timings: null,
    /** llama.cpp's sampling options added to each answer's request */
    sampling: /** @type {Record<string, number>} */ ({ ...SAMPLING }),
    exit: () => wllama.exit(),
    /**
     * @param {Message[]} messages
     * @param {import("./answer_stream.js").DeltaOptions} options
     */
    deltas(messages, { signal, temperature, maxTokens }) {
      const channel = new Channel();
      adapter.timings = null;
      wllama.createChatCompletion(/** @type {any} */ ({
        ...adapter.sampling, messages, stream: true, max_tokens: maxTokens, temperature, abortSignal: signal,
        onData: (/** @type {any} */ chunk) => {
          const piece = chunk?.choices?.[0]?.delta?.content;
          if (typeof piece === "string") channel.push(piece);
          if (chunk?.timings) adapter.timings = chunk.timings;
        },
      })).then(() => channel.close(), (/** @type {unknown} */ err) => channel.fail(err));
      return channel;
    },
    /** @param {Message[]} messages @param {number} maxTokens @param {AbortSignal} signal */
    async complete(messages, maxTokens, signal) {
      const reply = /** @type {any} */ (await wllama.createChatCompletion(/** @type {any} */ ({
        messages, max_tokens: maxTokens, temperature: 0, abortSignal: signal,
      })));
      const text = reply?.choices?.[0]?.message?.content;
      return { text: typeof text === "string" ? text : "", usage: reply?.usage ?? null };
    },
  };
  const gpu = Boolean(await /** @type {any} */ (globalThis.navigator)?.gpu?.requestAdapter?.().catch(() => /** @type {null} */ (null)));
  await wllama.loadModel([blob], { n_ctx: contextTokens, n_threads: threads, ...(gpu ? {} : { n_gpu_layers: 0 }) });
  adapter.gpu = gpu;
  adapter.threads = wllama.getNumThreads();
  return adapter;
}
