// @ts-check
// Ask's extra LLM steps (multi_query.js, judge.js) against Python's, through
// tests/fixtures/multi_query.json: the messages sent, the queries and verdicts read from
// sloppy answers, and the passages of fused demo rankings (with and without a budget).
import assert from "node:assert/strict";
import { test } from "node:test";

import { judgeMessages, keptPassages, parseVerdict } from "../src/llm/judge.js";
import { fuseRankings, parseQueries, rewriteMessages } from "../src/llm/multi_query.js";
import { Searcher } from "../src/search/retrieve.js";
import { SKIP_DEMO, demoIndexDir, fixture, openIndex } from "./helpers.js";

const data = fixture("multi_query.json");

test("the rewrite and judge messages are Python's", () => {
  const question = data.queries[0].question;
  assert.deepEqual(rewriteMessages(question, "mlkit"), data.rewrite_messages);
  const texts = ["  SimpleImputer replaces {missing} values.\n", `Impute ${"missing values with the mean. ".repeat(80)}`];
  assert.deepEqual(texts.map((t) => judgeMessages(question, "Imputation > Univariate", t, "mlkit")), data.judge_messages);
});

test("queries read from sloppy answers are Python's", () => {
  assert.ok(data.queries.length >= 10);
  for (const c of data.queries) assert.deepEqual(parseQueries(c.answer, c.question), c.queries, c.answer);
  assert.ok(data.queries.some((/** @type {any} */ c) => c.queries.length === 0), "no answer without queries");
  assert.ok(data.queries.some((/** @type {any} */ c) => c.queries.length === 3), "no answer with three queries");
});

test("verdicts, and the passages kept, are Python's", () => {
  for (const [reply, verdict] of data.verdicts) assert.equal(parseVerdict(reply), verdict, reply);
  for (const [verdicts, kept] of data.kept) assert.deepEqual(keptPassages(["a", "b", "c"], verdicts), kept);
});

test("fused rankings give Python's passages, with and without a budget", { skip: SKIP_DEMO }, async () => {
  const { index } = await openIndex(/** @type {string} */ (demoIndexDir()));
  const searcher = new Searcher(index, { fusion: "rrf" });
  const rankings = fixture("rankings.json");
  const vectors = new Map(rankings.queries.map((/** @type {any} */ q) => [q.query, q.vector]));
  const { k, budget, cases } = data.fused;
  let sized = 0;
  for (const c of cases) {
    const scored = [];
    for (const q of c.queries) scored.push((await searcher.ranking(q, vectors.get(q))).scored);
    const fused = fuseRankings(scored, data.fused.rrf_k);
    const shape = (/** @type {any[]} */ results) => results.map((r) => [r.id, r.index, r.score, r.also]);
    assert.deepEqual(shape(await searcher.passages(fused, k)), c.passages, c.queries[0]);
    assert.deepEqual(shape(await searcher.passages(fused, k, budget)), c.budget_passages, c.queries[0]);
    if (JSON.stringify(c.passages) !== JSON.stringify(c.budget_passages)) sized++;
  }
  assert.ok(sized >= 2, "the budget changes too few fixture passages");
});
