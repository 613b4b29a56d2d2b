// @ts-check
// Ask as a conversation (llm/thread.js, prompt.js, multi_query.js, context.js) against
// Python's, through tests/fixtures/ask_thread.json: what a follow-up sends, what it is
// searched as, the follow-up questions read from sloppy answers; and, JS only, how much of
// a streamed answer is shown before its follow-up list.
import assert from "node:assert/strict";
import { test } from "node:test";

import { gatherContext } from "../src/llm/context.js";
import { rewriteMessages } from "../src/llm/multi_query.js";
import { buildMessages, passageBudget } from "../src/llm/prompt.js";
import {
  FollowUpHold, citationCheck, earlierQuestions, followUpCut, history, parseFollowUps, stripCitations, threadQuery,
} from "../src/llm/thread.js";
import { fixture } from "./helpers.js";

const data = fixture("ask_thread.json");

test("a follow-up's messages, passages, budget and history are Python's", () => {
  assert.ok(data.cases.length >= 7);
  const settings = (/** @type {any} */ c) => ({ prompt: c.prompt, project: "mlkit", max_context_tokens: c.max_context_tokens });
  for (const c of data.cases) {
    const thread = data.threads[c.thread];
    const built = buildMessages(data.question, data.passages, settings(c), thread);
    assert.deepEqual(built.messages, c.messages, c.name);
    assert.equal(built.passages.length, c.kept, c.name);
    assert.equal(passageBudget(data.question, 8, settings(c), thread), c.budget, c.name);
    assert.deepEqual(history(thread, c.max_context_tokens), c.history, c.name);
    assert.equal(threadQuery(thread, data.question), c.thread_query, c.name);
    assert.deepEqual(earlierQuestions(thread), c.earlier, c.name);
  }
  // the cases cover: no history, history cut by turns, by characters, by the window
  const kept = data.cases.map((/** @type {any} */ c) => c.history.length);
  assert.ok(kept.includes(0) && kept.includes(1) && kept.includes(2) && kept.includes(3), String(kept));
  // the earlier answers reach the model without their citations and follow-ups
  const one = data.cases.find((/** @type {any} */ c) => c.name === "one earlier turn");
  assert.deepEqual(one.messages.slice(1, 3), [
    { role: "user", content: "How do I impute missing values?" },
    { role: "assistant", content: "Use `SimpleImputer`. It fills NaN." },
  ]);
});

test("the rewrite sees the earlier questions, as Python's", () => {
  const earlier = [[], ["How do I impute missing values?"], ["A?", "B?"]];
  assert.deepEqual(earlier.map((e) => rewriteMessages(data.question, "mlkit", e)), data.rewrite);
  assert.match(data.rewrite[2][1].content, /Earlier questions:\n- A\?\n- B\?\n\nQuestion: And the median\?$/);
});

test("follow-up questions read from sloppy answers are Python's", () => {
  for (const c of data.follow_ups) {
    const { answer, questions } = parseFollowUps(c.text);
    assert.deepEqual([answer, questions], c.parsed, c.text);
  }
  const counts = data.follow_ups.map((/** @type {any} */ c) => c.parsed[1].length);
  assert.ok(counts.includes(0) && counts.includes(3), String(counts));
  for (const [text, stripped] of data.citations) assert.equal(stripCitations(text), stripped);
});

test("what an answer cites, and which citations name no passage sent, are Python's", () => {
  const checks = data.citation_checks;
  assert.ok(checks.some((/** @type {any} */ c) => !c.check.cited.length && c.sent > 0), "a case citing nothing");
  assert.ok(checks.some((/** @type {any} */ c) => c.check.unknown.length), "a case citing a passage not given");
  for (const c of checks) assert.deepEqual(citationCheck(c.text, c.sent), c.check, c.text);
});

test("a follow-up is searched as itself and joined to the earlier questions, fused", async () => {
  /** @type {string[][]} */
  const searched = [];
  const search = async (/** @type {string[]} */ queries) => {
    searched.push(queries);
    return [{ title: "T", url: "u.html", text: "x" }];
  };
  const thread = [{ question: "How do I impute missing values?", answer: "Use SimpleImputer." }];
  /** @type {any[][]} */
  const calls = [];
  const complete = async (/** @type {any[]} */ messages) => {
    calls.push(messages);
    return { text: messages[0].content.startsWith("You write") ? "median imputation" : "yes", usage: null };
  };
  const got = await gatherContext({ question: "And the median?", search, project: "p", complete, multiQuery: true,
    filterPassages: true, thread });
  assert.deepEqual(searched, [["And the median?", "How do I impute missing values? And the median?", "median imputation"]]);
  assert.deepEqual(got.queries, searched[0]);
  assert.match(calls[0][1].content, /Earlier questions:\n- How do I impute missing values\?/);
  assert.match(calls[1][1].content, /^Question: How do I impute missing values\? And the median\?\n/); // the judge
  await gatherContext({ question: "Alone?", search, project: "p" });
  assert.deepEqual(searched[1], ["Alone?"]);
});

test("a streamed answer is shown up to its follow-up list, never a piece of it", () => {
  const full = "The answer [1].\r\n\r\n**Follow-up questions:**\r\n- How?\r\n- Why?\r\n";
  for (const size of [1, 2, 3, 7, 1000]) { // pieces of every size: a "\r\n" or the heading cut anywhere
    const hold = new FollowUpHold();
    let shown = "";
    for (let i = 0; i < full.length; i += size) {
      hold.push(full.slice(i, i + size));
      shown += hold.take();
      assert.ok(!shown.includes("*"), `showed part of the heading (pieces of ${size}): ${JSON.stringify(shown)}`);
    }
    hold.end();
    assert.equal(shown, "The answer [1].\n\n");
    assert.equal(hold.text, full.replace(/\r\n/g, "\n"));
    const { answer, questions } = parseFollowUps(hold.text);
    assert.deepEqual([answer, questions], ["The answer [1].", ["How?", "Why?"]]);
    assert.equal(hold.takeUpTo(answer.length), ""); // nothing more to show: the list stays out
  }
  // a line that starts like the heading and is not one is shown once it is complete
  const prose = "Follow-up questions are welcome, said the docs.\nMore.";
  assert.equal(followUpCut(prose.slice(0, 20)), 0);
  assert.equal(followUpCut(prose), prose.length);
  assert.equal(followUpCut("Plain text, no heading"), 22);
  assert.equal(followUpCut("A list:\n1. "), 8); // a line start waits for its first letters
  assert.equal(followUpCut("A list:\n1. Use it"), 17);
  assert.equal(followUpCut(`${"x".repeat(300)}\nFollow-up questions:\n- A?`), 301);
  // a malformed list: held back while it streams, all of it shown at the end
  const bad = "Answer.\nFollow-up questions:\nThe docs say more; read them.";
  const hold = new FollowUpHold();
  hold.push(bad);
  const early = hold.take();
  hold.end();
  assert.equal(early + hold.takeUpTo(parseFollowUps(hold.text).answer.length), bad);
});

test("an answer in 200,000 small pieces: all of it shown, in order, once", () => {
  const hold = new FollowUpHold();
  const line = "Some words of a long answer, a line of it. ";
  let shown = 0;
  for (let i = 0; i < 200000; i++) {
    hold.push(i % 40 === 39 ? "\n" : line.slice(0, 20));
    shown += hold.take().length;
  }
  assert.equal(shown, hold.length);
  assert.equal(hold.text.length, hold.length);
});
