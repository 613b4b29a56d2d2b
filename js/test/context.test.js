// @ts-check
// The context of an answer (context.js): the cases of tests/test_multi_query.py.
import assert from "node:assert/strict";
import { test } from "node:test";

import { gatherContext } from "../src/llm/context.js";
import { JUDGE_MAX_TOKENS } from "../src/llm/judge.js";
import { LLMError } from "../src/llm/llm.js";
import { REWRITE_MAX_TOKENS } from "../src/llm/multi_query.js";

const QUESTION = "How do I fill missing values with the mean?";

/** @param {string[]} queries */
const passagesFor = async (queries) => [0, 1, 2].map((n) => ({
  title: `T${n}`, url: `u${n}.html`, text: `passage ${n} for ${queries.join(" + ")}`,
}));

/**
 * complete(messages, maxTokens): rewrites, then verdicts, from lists; records calls.
 * @param {{rewrite?: string, verdicts?: string[], usage?: any, failAt?: number, abortAt?: number}} options
 */
function fakeModel({ rewrite = "", verdicts = [], usage = null, failAt = 0, abortAt = 0 } = {}) {
  /** @type {[any[], number][]} */
  const calls = [];
  const left = [...verdicts];
  /** @type {import("../src/llm/context.js").Complete} */
  const complete = async (messages, maxTokens) => {
    calls.push([messages, maxTokens]);
    if (calls.length === failAt) throw new LLMError("unreachable", "Could not connect to the LLM server");
    if (calls.length === abortAt) throw new LLMError("aborted", "Stopped: the answer is incomplete.");
    if (messages[0].content.includes("search queries")) return { text: rewrite, usage };
    return { text: /** @type {string} */ (left.shift()), usage };
  };
  return { complete, calls };
}

test("multi-query searches the question and the model's queries", async () => {
  const model = fakeModel({ rewrite: '1. "SimpleImputer mean"\n2. impute NaN' });
  /** @type {string[][]} */
  const searched = [];
  /** @type {any[]} */
  const steps = [];
  const context = await gatherContext({
    question: QUESTION, project: "mlkit", complete: model.complete, multiQuery: true,
    search: (qs) => { searched.push(qs); return passagesFor(qs); }, onStep: (s) => steps.push(s),
  });
  assert.deepEqual(searched, [[QUESTION, "SimpleImputer mean", "impute NaN"]]);
  assert.deepEqual(context.queries, searched[0]);
  assert.equal(model.calls.length, 1);
  assert.equal(model.calls[0][1], REWRITE_MAX_TOKENS);
  assert.equal(steps.length, 1);
  assert.equal(steps[0].kind, "rewrite");
  assert.deepEqual(steps[0].result, ["SimpleImputer mean", "impute NaN"]);
  assert.ok(steps[0].estimated && steps[0].promptTokens > 20 && steps[0].completionTokens === 10);
  const usage = { prompt_tokens: 71, completion_tokens: 5, total_tokens: 76 };
  const served = await gatherContext({
    question: QUESTION, project: "p", complete: fakeModel({ rewrite: "impute NaN", usage }).complete, multiQuery: true,
    search: passagesFor,
  });
  assert.deepEqual([served.steps[0].promptTokens, served.steps[0].completionTokens, served.steps[0].estimated], [71, 5, false]);
  for (const m of [fakeModel({ rewrite: "Sure! Just use the mean.", verdicts: ["yes", "yes", "yes"] }), fakeModel({ failAt: 1 })]) {
    /** @type {string[][]} */
    const seen = [];
    const ctx = await gatherContext({
      question: QUESTION, project: "p", complete: m.complete, multiQuery: true, filterPassages: true,
      search: (qs) => { seen.push(qs); return passagesFor(qs); },
    });
    assert.deepEqual(seen, [[QUESTION]]);
    if (m.calls.length === 1) assert.match(ctx.steps[0].error, /^Could not connect/); // no judging after it
  }
});

test("filtering drops the passages the model rejects", async () => {
  const model = fakeModel({ verdicts: ["Yes.", "No, it does not.", "Maybe"] });
  const context = await gatherContext({
    question: QUESTION, project: "p", complete: model.complete, filterPassages: true, search: passagesFor,
  });
  assert.deepEqual(context.passages.map((p) => p.title), ["T0", "T2"]);
  assert.deepEqual(context.verdicts, [true, false, null]);
  assert.ok(model.calls.every(([, max]) => max === JUDGE_MAX_TOKENS));
  assert.match(model.calls[1][0][1].content, /passage 1 for/);
  const all = await gatherContext({
    question: QUESTION, project: "p", complete: fakeModel({ verdicts: ["no", "no", "no"] }).complete,
    filterPassages: true, search: passagesFor,
  });
  assert.equal(all.passages.length, 3);
  const failing = fakeModel({ verdicts: ["no", "no", "no"], failAt: 2 });
  const rest = await gatherContext({
    question: QUESTION, project: "p", complete: failing.complete, filterPassages: true, search: passagesFor,
  });
  assert.deepEqual(rest.passages.map((p) => p.title), ["T1", "T2"]);
  assert.equal(failing.calls.length, 2);
  const off = await gatherContext({ question: QUESTION, project: "p", multiQuery: true, filterPassages: true, search: passagesFor });
  assert.deepEqual(off.steps, []);
  // the reader's Stop ends everything
  const stopped = fakeModel({ verdicts: ["yes", "yes", "yes"], abortAt: 2 });
  await assert.rejects(gatherContext({
    question: QUESTION, project: "p", complete: stopped.complete, filterPassages: true, search: passagesFor,
  }), (err) => /** @type {any} */ (err).kind === "aborted");
});
