// @ts-check
/**
 * The browser's built-in model (the Prompt API, `LanguageModel`: Chrome's on-device model)
 * as an Ask adapter (answer_stream.js). Feature-detected: without `LanguageModel`, or when
 * `availability()` says "unavailable", there is none. "available": it answers at once;
 * "downloadable" / "downloading": the browser fetches its own model first (gigabytes, once
 * for every site), so the page asks the reader before `create()` (ask_local.js), and the
 * download's progress comes through `create()`'s monitor.
 *
 * Each answer is a session of its own: the system message and the earlier turns of a
 * follow-up are its `initialPrompts`, the question's message goes to `promptStreaming()`,
 * whose chunks are the answer's pieces (deltas); the session is destroyed after. The Stop
 * button's signal reaches `create()` and `promptStreaming()`. No DOM access.
 *
 * @module prompt_api
 */

/** The context the budget assumes for the built-in model (Gemini Nano's input quota is larger). */
export const BUILTIN_CONTEXT_TOKENS = 4096;
/** The output languages the Prompt API knows (Chromium 156: de, en, es, fr, ja; others: English). */
const LANGUAGES = ["de", "en", "es", "fr", "ja"];

/**
 * @typedef {import("./prompt.js").Message} Message
 * @typedef {"available" | "downloadable" | "downloading" | "unavailable"} Availability
 */

/** `LanguageModel` if the browser has a usable one, else null. @param {any} [win] */
export function promptApi(win = globalThis) {
  const api = win?.LanguageModel;
  return api && typeof api.availability === "function" && typeof api.create === "function" ? api : null;
}

/** The options that say what the session reads and writes (its language). @param {string} language */
function ioOptions(language) {
  const lang = LANGUAGES.includes(language) ? language : "en";
  return {
    expectedInputs: [{ type: "text", languages: [lang] }],
    expectedOutputs: [{ type: "text", languages: [lang] }],
  };
}

/**
 * Whether the built-in model can answer: "unavailable" without the API, or when it throws.
 * @param {any} [win] @param {string} [language]  the page's (its <html lang>, primary subtag)
 * @returns {Promise<Availability>}
 */
export async function builtinAvailability(win = globalThis, language = "en") {
  const api = promptApi(win);
  if (!api) return "unavailable";
  try {
    const answer = await api.availability(ioOptions(language));
    return ["available", "downloadable", "downloading"].includes(answer) ? answer : "unavailable";
  } catch {
    return "unavailable";
  }
}

/**
 * A ReadableStream's chunks (or any async iterable's), as an async iterable.
 * @param {any} stream
 * @returns {AsyncIterable<unknown>}
 */
async function* chunksOf(stream) {
  if (stream && typeof stream[Symbol.asyncIterator] === "function") {
    yield* stream;
    return;
  }
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock?.();
  }
}

/**
 * The built-in model as an adapter.
 * @param {{win?: any, language?: string, onProgress?: (fraction: number) => void}} [options]
 *   onProgress: the browser's own download of its model, 0 to 1 (create()'s monitor)
 * @returns {import("./answer_stream.js").Adapter}
 */
export function builtinAdapter({ win = globalThis, language = "en", onProgress } = {}) {
  const api = promptApi(win);
  if (!api) throw new Error("this browser has no built-in model (the Prompt API)");
  /** @param {Message[]} messages @param {AbortSignal} signal */
  const open = async (messages, signal) => {
    const system = messages.filter((m) => m.role === "system").map((m) => m.content).join("\n\n");
    const rest = messages.filter((m) => m.role !== "system");
    const initialPrompts = [...(system ? [{ role: "system", content: system }] : []), ...rest.slice(0, -1)];
    const session = await api.create({
      ...ioOptions(language), initialPrompts, signal,
      monitor(/** @type {any} */ m) {
        m?.addEventListener?.("downloadprogress", (/** @type {any} */ e) => onProgress?.(Number(e?.loaded) || 0));
      },
    });
    return { session, input: rest.at(-1)?.content ?? "" };
  };
  return {
    kind: "builtin",
    label: "The browser's built-in model",
    model: "the browser’s built-in model",
    async *deltas(messages, { signal }) {
      const { session, input } = await open(messages, signal);
      try {
        for await (const piece of chunksOf(session.promptStreaming(input, { signal }))) yield String(piece ?? "");
      } finally {
        session.destroy?.();
      }
    },
    async complete(messages, maxTokens, signal) {
      const { session, input } = await open(messages, signal);
      try {
        return { text: String(await session.prompt(input, { signal }) ?? ""), usage: null };
      } finally {
        session.destroy?.();
      }
    },
  };
}
