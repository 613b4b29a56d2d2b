// @ts-check
// Tests of js/src/llm/answer_stream.js (one path for every backend's answer) and
// js/src/llm/prompt_api.js (the browser's built-in model, against a stub of the Prompt API's
// documented shape). The endpoint's adapter is tested end to end in tests/browser/test_ask_e2e.py.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Channel, streamAnswer } from "../src/llm/answer_stream.js";
import { LLMError } from "../src/llm/llm.js";
import { builtinAdapter, builtinAvailability, promptApi } from "../src/llm/prompt_api.js";

/**
 * An adapter yielding `pieces`, then hanging (`hang`) or throwing (`fail`); what it was given
 * is kept in `seen`.
 * @param {string[]} pieces @param {{hang?: boolean, fail?: Error, ownsLimits?: boolean}} [how]
 */
function adapter(pieces, how = {}) {
  /** @type {{signal: AbortSignal | null, messages: any[]}} */
  const seen = { signal: null, messages: [] };
  return {
    seen,
    kind: /** @type {const} */ ("gguf"), label: "Tiny model", model: "tiny", ownsLimits: how.ownsLimits,
    /** @param {any[]} messages @param {{signal: AbortSignal}} options */
    async *deltas(messages, { signal }) {
      seen.signal = signal;
      seen.messages = messages;
      for (const p of pieces) yield p;
      if (how.fail) throw how.fail;
      if (how.hang) await new Promise(() => {});
    },
    complete: async () => ({ text: "", usage: null }),
  };
}

const MESSAGES = [{ role: /** @type {const} */ ("user"), content: "q" }];

test("an adapter's pieces reach onToken in order, and the whole text is returned", async () => {
  const a = adapter(["The ", "answer ", "[1]."]);
  const got = [];
  const text = await streamAnswer(a, { messages: MESSAGES, onToken: (t) => got.push(t) });
  assert.equal(text, "The answer [1].");
  assert.deepEqual(got, ["The ", "answer ", "[1]."]);
  assert.deepEqual(a.seen.messages, MESSAGES);
});

test("the answer's cap cuts the text, stops the adapter and says so (kind limit)", async () => {
  const a = adapter(["12345", "67890", "more"], { hang: true });
  const got = [];
  await assert.rejects(streamAnswer(a, { messages: MESSAGES, maxChars: 7, onToken: (t) => got.push(t) }),
    (/** @type {LLMError} */ e) => e.kind === "limit" && e.partial === "1234567" && /7 characters/.test(e.message));
  assert.equal(got.join(""), "1234567");
  assert.ok(a.seen.signal?.aborted, "the adapter's signal is aborted: nothing more is generated");
});

test("a silent model times out (kind timeout), the partial answer kept", async () => {
  const a = adapter(["Half an answer"], { hang: true });
  await assert.rejects(streamAnswer(a, { messages: MESSAGES, timeoutMs: 30 }),
    (/** @type {LLMError} */ e) => e.kind === "timeout" && e.partial === "Half an answer" && /Tiny model sent nothing/.test(e.message));
  assert.ok(a.seen.signal?.aborted);
  await assert.rejects(streamAnswer(adapter([], { hang: true }), { messages: MESSAGES, timeoutMs: 30 }),
    (/** @type {LLMError} */ e) => e.kind === "timeout" && /did not answer within 0.03 s/.test(e.message));
});

test("Stop ends the answer at once (kind aborted) and aborts the adapter", async () => {
  const stop = new AbortController();
  const a = adapter(["Some"], { hang: true });
  const answer = streamAnswer(a, { messages: MESSAGES, signal: stop.signal, onToken: () => stop.abort() });
  await assert.rejects(answer, (/** @type {LLMError} */ e) => e.kind === "aborted" && e.partial === "Some");
  assert.ok(a.seen.signal?.aborted);
  const stopped = new AbortController();
  stopped.abort();
  await assert.rejects(streamAnswer(a, { messages: MESSAGES, signal: stopped.signal }),
    (/** @type {LLMError} */ e) => e.kind === "aborted");
});

test("a model's own failure is one line naming it (kind model); an LLMError passes as it is", async () => {
  await assert.rejects(streamAnswer(adapter(["x"], { fail: new Error("out of memory") }), { messages: MESSAGES }),
    (/** @type {LLMError} */ e) => e.kind === "model" && e.message === "Tiny model failed: out of memory" && e.partial === "x");
  const own = new LLMError("http", "The LLM server answered HTTP 500.");
  await assert.rejects(streamAnswer(adapter([], { fail: own }), { messages: MESSAGES }), (e) => e === own);
});

test("an adapter that keeps its own limits (the endpoint's client) is not cut by streamAnswer", async () => {
  const text = await streamAnswer(adapter(["1234567890"], { ownsLimits: true }), { messages: MESSAGES, maxChars: 3 });
  assert.equal(text, "1234567890");
});

test("Channel: pieces pushed by a callback, read in order, then the end or the error", async () => {
  const c = new Channel();
  c.push("a");
  c.push("");
  setTimeout(() => { c.push("b"); c.close(); c.push("ignored"); }, 5);
  const got = [];
  for await (const p of c) got.push(p);
  assert.deepEqual(got, ["a", "b"]);
  const failing = new Channel();
  failing.push("x");
  failing.fail(new Error("broke"));
  const read = [];
  await assert.rejects(async () => { for await (const p of failing) read.push(p); }, /broke/);
  assert.deepEqual(read, ["x"]);
});

// -- the Prompt API (a stub of its documented shape) --------------------------------------------

/** A window with a stub LanguageModel: availability() says `availability`; sessions are recorded. */
function stubWindow(availability = "available", chunks = ["Built-in ", "answer [1]."]) {
  const log = { created: /** @type {any[]} */ ([]), prompted: /** @type {any[]} */ ([]), destroyed: 0 };
  const LanguageModel = {
    availability: async (/** @type {any} */ options) => {
      log.created.push({ availability: options });
      return availability;
    },
    create: async (/** @type {any} */ options) => {
      log.created.push(options);
      options.monitor?.({ addEventListener: (/** @type {string} */ type, /** @type {Function} */ f) => {
        if (type === "downloadprogress") f({ loaded: 0.5 });
      } });
      return {
        promptStreaming: (/** @type {string} */ input, /** @type {any} */ opts) => {
          log.prompted.push({ input, signal: opts?.signal });
          return new ReadableStream({ start(c) { for (const piece of chunks) c.enqueue(piece); c.close(); } });
        },
        prompt: async (/** @type {string} */ input) => { log.prompted.push({ input }); return "yes"; },
        destroy: () => { log.destroyed++; },
      };
    },
  };
  return { win: { LanguageModel }, log };
}

test("the built-in model is feature-detected: none, broken or unavailable is 'unavailable'", async () => {
  assert.equal(promptApi({}), null);
  assert.equal(await builtinAvailability({}), "unavailable");
  assert.equal(await builtinAvailability({ LanguageModel: { availability: () => { throw new Error("no"); }, create() {} } }),
    "unavailable");
  assert.equal(await builtinAvailability(stubWindow("maybe-later").win), "unavailable");
  for (const a of ["available", "downloadable", "downloading"]) assert.equal(await builtinAvailability(stubWindow(a).win), a);
  const { win, log } = stubWindow();
  await builtinAvailability(win, "ja");
  assert.deepEqual(log.created[0].availability.expectedOutputs, [{ type: "text", languages: ["ja"] }]);
  await builtinAvailability(win, "nl"); // a language it does not know: English is asked for
  assert.deepEqual(log.created[1].availability.expectedInputs, [{ type: "text", languages: ["en"] }]);
});

test("the built-in model answers through the same stream: system and earlier turns first, the question streamed", async () => {
  const { win, log } = stubWindow();
  const progress = [];
  const a = builtinAdapter({ win, onProgress: (f) => progress.push(f) });
  const messages = [
    { role: /** @type {const} */ ("system"), content: "Rules." },
    { role: /** @type {const} */ ("user"), content: "Earlier?" },
    { role: /** @type {const} */ ("assistant"), content: "Earlier answer." },
    { role: /** @type {const} */ ("user"), content: "Excerpts...\nQuestion: now?" },
  ];
  const got = [];
  const text = await streamAnswer(a, { messages, onToken: (t) => got.push(t) });
  assert.equal(text, "Built-in answer [1].");
  assert.deepEqual(got, ["Built-in ", "answer [1]."]);
  assert.deepEqual(log.created[0].initialPrompts, messages.slice(0, 3));
  assert.equal(log.prompted[0].input, "Excerpts...\nQuestion: now?");
  assert.ok(log.prompted[0].signal instanceof AbortSignal, "Stop reaches promptStreaming");
  assert.ok(log.created[0].signal instanceof AbortSignal, "and create");
  assert.deepEqual(progress, [0.5]);
  assert.equal(log.destroyed, 1, "each answer's session is destroyed");
  assert.deepEqual(await a.complete(messages, 8, new AbortController().signal), { text: "yes", usage: null });
  assert.equal(log.destroyed, 2);
});
