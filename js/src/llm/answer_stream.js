// @ts-check
/**
 * One code path for every answer, whatever answers it: a backend is an adapter whose
 * `deltas()` yields the answer's text piece by piece (an LLM server's stream, the browser's
 * built-in model, a GGUF model in a worker). streamAnswer reads those pieces under the same
 * rules for all of them: the answer's cap (`maxChars`, kind "limit"), an inactivity limit
 * (`timeoutMs`, kind "timeout"), the reader's Stop (kind "aborted"), each failure an
 * llm.js LLMError holding the text received (`partial`). An adapter that enforces the cap
 * and the limit itself, with messages of its own (the endpoint's client), says so with
 * `ownsLimits`. No DOM access.
 *
 * @module answer_stream
 */

import { LLMError, MAX_ANSWER_CHARS, completeChat, streamChat } from "./llm.js";

/**
 * @typedef {import("./prompt.js").Message} Message
 * @typedef {{signal: AbortSignal, temperature: number, maxTokens: number, timeoutMs: number,
 *            maxChars: number}} DeltaOptions
 * @typedef {{kind: "endpoint" | "builtin" | "gguf", label: string, model: string, ownsLimits?: boolean,
 *            deltas: (messages: Message[], options: DeltaOptions) => AsyncIterable<string>,
 *            complete: (messages: Message[], maxTokens: number, signal: AbortSignal)
 *              => Promise<{text: string, usage: Record<string, unknown> | null}>}} Adapter
 *   kind: which backend; label: how the reader sees it ("SmolLM2 135M, in this browser");
 *   model: the model's name (the steps list's "<model> judges…"); complete: a short reply
 *   (Ask's extra calls, context.js)
 */

/**
 * Pieces pushed by a callback, read as an async iterable (a callback API as an adapter's
 * deltas). push() after close() or fail() is ignored.
 */
export class Channel {
  constructor() {
    /** @type {string[]} */
    this.queue = [];
    this.done = false;
    /** @type {unknown} */
    this.error = null;
    /** @type {(() => void) | null} */
    this.wake = null;
  }

  /** @param {string} piece */
  push(piece) {
    if (this.done || !piece) return;
    this.queue.push(piece);
    this.wake?.();
  }

  close() {
    this.done = true;
    this.wake?.();
  }

  /** @param {unknown} error */
  fail(error) {
    if (this.done) return;
    this.error = error ?? new Error("failed");
    this.done = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator]() {
    for (;;) {
      if (this.queue.length) {
        yield /** @type {string} */ (this.queue.shift());
        continue;
      }
      if (this.error) throw this.error;
      if (this.done) return;
      await new Promise((resolve) => { this.wake = () => resolve(undefined); });
      this.wake = null;
    }
  }
}

/** Characters as Python counts them (code points). @param {string} text */
const codePoints = (text) => {
  let n = 0;
  for (const _ of text) n++; // eslint-disable-line no-unused-vars
  return n;
};

/**
 * The answer from `adapter`, its pieces given to `onToken` as they come; resolves with the
 * whole text, rejects with an LLMError (see the module's comment).
 * @param {Adapter} adapter
 * @param {{messages: Message[], temperature?: number, maxTokens?: number, timeoutMs?: number,
 *          maxChars?: number, signal?: AbortSignal, onToken?: (piece: string) => void}} options
 * @returns {Promise<string>}
 */
export async function streamAnswer(adapter, options) {
  const { messages, temperature = 0.1, maxTokens = 512, timeoutMs = 60000, maxChars = MAX_ANSWER_CHARS,
    signal, onToken = () => {} } = options;
  const own = Boolean(adapter.ownsLimits);
  const inner = new AbortController();
  let partial = "";
  let chars = 0;
  /** @type {"" | "timeout" | "aborted"} */
  let stopped = "";
  /** @type {(reason: "timeout" | "aborted") => void} */
  let interrupt = () => {};
  const interrupted = new Promise((resolve) => {
    interrupt = (reason) => {
      if (stopped) return;
      stopped = reason;
      inner.abort();
      resolve(reason);
    };
  });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const arm = () => {
    if (own) return;
    clearTimeout(timer);
    timer = setTimeout(() => interrupt("timeout"), timeoutMs);
  };
  const onAbort = () => interrupt("aborted");
  const stoppedError = () => (stopped === "timeout"
    ? new LLMError("timeout", partial
      ? `${adapter.label} sent nothing for ${timeoutMs / 1000} s: the answer is incomplete.`
      : `${adapter.label} did not answer within ${timeoutMs / 1000} s.`, { partial })
    : new LLMError("aborted", "Stopped: the answer is incomplete.", { partial }));
  if (signal?.aborted) throw new LLMError("aborted", "Stopped: the answer is incomplete.");
  signal?.addEventListener("abort", onAbort, { once: true });
  const iterator = adapter.deltas(messages, { signal: inner.signal, temperature, maxTokens, timeoutMs, maxChars })[
    Symbol.asyncIterator]();
  arm();
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), interrupted]);
      if (typeof next === "string") throw stoppedError();
      if (next.done) break;
      arm();
      const piece = String(next.value ?? "");
      if (!piece) continue;
      const n = codePoints(piece);
      if (!own && chars + n > maxChars) {
        const head = Array.from(piece).slice(0, maxChars - chars).join("");
        if (head) {
          partial += head;
          onToken(head);
        }
        inner.abort(); // the rest is not generated
        throw new LLMError("limit", `The answer was cut at ${maxChars.toLocaleString("en-US")} characters (the ` +
          "max_answer_chars setting): the model did not end it.", { partial });
      }
      chars += n;
      partial += piece;
      onToken(piece);
    }
    if (stopped) throw stoppedError();
    return partial;
  } catch (err) {
    if (stopped) throw stoppedError();
    if (err instanceof LLMError) {
      if (!err.partial) err.partial = partial;
      throw err;
    }
    const e = /** @type {any} */ (err);
    if (e?.name === "AbortError") throw new LLMError("aborted", "Stopped: the answer is incomplete.", { partial });
    throw new LLMError("model", `${adapter.label} failed: ${String(e?.message ?? e).slice(0, 300)}`,
      { partial, cause: err });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
    if (stopped || inner.signal.aborted) iterator.return?.(undefined)?.catch?.(() => {});
  }
}

/**
 * The OpenAI-compatible server (llm.js) as an adapter: its client keeps its own cap, timeout
 * and error messages (a CORS refusal, a redirect, an HTTP error with the server's words).
 * @param {{endpoint: string, model: string, timeout: number}} settings  timeout: seconds (a short reply's whole time)
 * @returns {Adapter}
 */
export function endpointAdapter({ endpoint, model, timeout }) {
  return {
    kind: "endpoint",
    label: `The LLM server (${model})`,
    model,
    ownsLimits: true,
    deltas(messages, { signal, temperature, timeoutMs, maxChars }) {
      const channel = new Channel();
      streamChat({ endpoint, model, messages, temperature, timeoutMs, maxChars, signal, onToken: (t) => channel.push(t) })
        .then(() => channel.close(), (err) => channel.fail(err));
      return channel;
    },
    complete: (messages, maxTokens, signal) => completeChat({
      endpoint, model, messages, maxTokens, signal, timeoutMs: timeout * 1000,
    }),
  };
}
