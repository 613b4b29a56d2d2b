// @ts-check
/**
 * The passages an answer reads, and the extra LLM calls that choose them (opt-in):
 * Python's sphinx_rag/llm/context.py, step for step.
 *
 * 1. multiQuery: the model rewrites the question into search queries (multi_query.js);
 *    the question and each query are searched, their rankings fused (the search worker).
 *    Without it, or when the model gives no usable query, the question alone.
 * 2. The passages come sized to the context window (the search's budget).
 * 3. filterPassages: the model judges each passage, one call each (judge.js); the
 *    rejected ones are not sent.
 *
 * A follow-up (`thread`: the earlier turns) is also searched as thread.js's threadQuery (the
 * earlier questions joined to it), fused with the question's own ranking; the rewrite sees
 * the earlier questions and the judge reads the joined question.
 *
 * Each extra call is reported to onStep when it ends, and onStepStart before (the Ask
 * panel shows a status line for it). A failed call ends the extra steps; an aborted one
 * (the reader's Stop) ends everything.
 *
 * @module context
 */

import { JUDGE_MAX_TOKENS, judgeMessages, keptPassages, parseVerdict } from "./judge.js";
import { REWRITE_MAX_TOKENS, parseQueries, rewriteMessages } from "./multi_query.js";
import { MESSAGE_OVERHEAD_TOKENS, estimateTokens, llmPassage } from "./prompt.js";
import { earlierQuestions, threadQuery } from "./thread.js";

/**
 * @typedef {import("./prompt.js").Message} Message
 * @typedef {{prompt_tokens?: unknown, completion_tokens?: unknown}} Usage
 * @typedef {(messages: Message[], maxTokens: number) => Promise<{text: string, usage: Usage | null}>} Complete
 * @typedef {{title: string, url: string, text: string}} Passage
 * @typedef {{kind: "rewrite" | "judge", ms: number, promptTokens: number, completionTokens: number,
 *            estimated: boolean, reply: string, error: string, result: any, passage: Passage | null}} Step
 */

/** @param {unknown} v */
const count = (v) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : null);

/**
 * One extra call, timed, with its token counts (the server's, else estimated). An abort
 * (the reader's Stop) is thrown on; other failures are the step's `error`.
 * @param {"rewrite" | "judge"} kind @param {Complete} complete @param {Message[]} messages @param {number} maxTokens
 * @returns {Promise<Step>}
 */
export async function callStep(kind, complete, messages, maxTokens) {
  const start = performance.now();
  /** @type {Step} */
  const step = { kind, ms: 0, promptTokens: 0, completionTokens: 0, estimated: true, reply: "", error: "", result: null, passage: null };
  try {
    const { text, usage } = await complete(messages, maxTokens);
    step.ms = performance.now() - start;
    step.reply = text;
    const prompt = count(usage?.prompt_tokens);
    const completion = count(usage?.completion_tokens);
    step.estimated = prompt === null || completion === null;
    step.promptTokens = step.estimated
      ? messages.reduce((s, m) => s + estimateTokens(m.content), 0) + MESSAGE_OVERHEAD_TOKENS
      : /** @type {number} */ (prompt);
    step.completionTokens = step.estimated ? estimateTokens(text) : /** @type {number} */ (completion);
  } catch (err) {
    if (/** @type {any} */ (err)?.kind === "aborted" || /** @type {any} */ (err)?.name === "AbortError") throw err;
    step.ms = performance.now() - start;
    step.error = err instanceof Error ? err.message : String(err);
  }
  return step;
}

/**
 * The passages for an answer to `question` (see the module's comment).
 * @template {Passage} P
 * @param {{question: string, search: (queries: string[]) => Promise<P[]>, project: string,
 *          complete?: Complete | null, multiQuery?: boolean, filterPassages?: boolean, thread?: unknown[],
 *          onStepStart?: (kind: "rewrite" | "judge", passage: P | null) => void,
 *          onStep?: (step: Step) => void}} options
 * @returns {Promise<{passages: P[], queries: string[], retrieved: P[], verdicts: (boolean | null)[], steps: Step[]}>}
 */
export async function gatherContext({
  question, search, project, complete = null, multiQuery = false, filterPassages = false, thread = [],
  onStepStart = () => {}, onStep = () => {},
}) {
  const joined = threadQuery(thread, question);
  const queries = joined ? [question, joined] : [question];
  /** @type {Step[]} */
  const steps = [];
  let failed = false;
  if (multiQuery && complete) {
    onStepStart("rewrite", null);
    const messages = rewriteMessages(question, project, earlierQuestions(thread));
    const step = await callStep("rewrite", complete, messages, REWRITE_MAX_TOKENS);
    failed = Boolean(step.error);
    step.result = failed ? [] : parseQueries(step.reply, question);
    queries.push(...step.result);
    steps.push(step);
    onStep(step);
  }
  const retrieved = (await search(queries)).map(llmPassage);
  let passages = retrieved;
  /** @type {(boolean | null)[]} */
  const verdicts = [];
  if (filterPassages && complete && !failed && retrieved.length) {
    for (const p of retrieved) {
      onStepStart("judge", p);
      const step = await callStep("judge", complete, judgeMessages(joined ?? question, p.title, p.text, project), JUDGE_MAX_TOKENS);
      step.passage = p;
      step.result = step.error ? null : parseVerdict(step.reply);
      steps.push(step);
      verdicts.push(step.result);
      onStep(step);
      if (step.error) break;
    }
    passages = keptPassages(retrieved, [...verdicts, ...Array(retrieved.length - verdicts.length).fill(null)]);
  }
  return { passages, queries, retrieved, verdicts, steps };
}
