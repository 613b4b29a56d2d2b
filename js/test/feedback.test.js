// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { feedbackUrl, reportText } from "../src/ui/feedback.js";
import { suggestedQuestions } from "../src/ui/suggestions.js";

const RESULTS = [
  { url: "guide.html#imputation", title: "Guide > Imputation" },
  { url: "api.html#Filler", title: "API > Filler" },
];

test("the report lists the query, the results shown and a golden-set entry to complete", () => {
  const text = reportText("impute & scale?", RESULTS);
  assert.match(text, /^Search: impute & scale\?\n/);
  assert.match(text, /1\. Guide > Imputation \(guide\.html#imputation\)\n2\. API > Filler \(api\.html#Filler\)/);
  const entry = JSON.parse(text.trim().split("\n").at(-1) ?? "");
  assert.deepEqual(entry, { query: "impute & scale?", url: "PAGE.html#ANCHOR", rank: 3 });
  assert.match(reportText("nothing", []), /No results were shown\./);
});

test("the template gets the query and the report URL-encoded, a lone surrogate made well-formed", () => {
  const url = feedbackUrl("https://github.com/o/r/issues/new?title=Search:+{query}&body={results}", "a&b=c", RESULTS);
  assert.ok(url?.startsWith("https://github.com/o/r/issues/new?title=Search:+a%26b%3Dc&body=Search%3A%20a%26b%3Dc"));
  const parsed = new URL(/** @type {string} */ (url));
  assert.equal(parsed.searchParams.get("body"), reportText("a&b=c", RESULTS));
  assert.doesNotThrow(() => feedbackUrl("https://x.org/?q={query}", "emoji cut \ud83d", []));
  assert.equal(feedbackUrl("https://x.org/?q={query}", "\ud83d", []), "https://x.org/?q=%EF%BF%BD");
  assert.equal(feedbackUrl("javascript:alert(1)//{query}", "q", []), null);
});

test("suggested questions: strings or [question, url] pairs, malformed entries dropped", () => {
  assert.deepEqual(suggestedQuestions([["How do I tune it?", "guide.html#tuning"], "What is X? ", 3, ["", "a"], null]),
    ["How do I tune it?", "What is X?"]);
  assert.deepEqual(suggestedQuestions(undefined), []);
  assert.deepEqual(suggestedQuestions({ a: 1 }), []);
});

test("a bad answer's report: the question, the reason, the answer's beginning, the sources, a golden entry", async () => {
  const { QUOTED_ANSWER, answerReportText } = await import("../src/ui/feedback.js");
  const text = answerReportText({ question: "And the median?", reason: "not-asked", answer: "Use it [1].\nSee [2].",
    sources: RESULTS, earlier: ["How do I impute?"] });
  assert.equal(text.split("\n").slice(0, 7).join("\n"), [
    "Ask: And the median?", '(a follow-up to: "How do I impute?")', "Reason: Not what I asked", "",
    "Answer (beginning):", "> Use it [1].", "> See [2]."].join("\n"));
  assert.match(text, /Sources sent to the model:\n1\. Guide > Imputation \(guide\.html#imputation\)\n2\. API > Filler/);
  const entry = JSON.parse(text.trim().split("\n").at(-1) ?? "");
  assert.deepEqual(entry, { query: "And the median?", url: "PAGE.html#ANCHOR", rank: 3 });
  const long = answerReportText({ question: "q", reason: "missing", answer: "é".repeat(QUOTED_ANSWER + 50), sources: [] });
  assert.match(long, new RegExp(`> ${"é".repeat(QUOTED_ANSWER)}…\n`));
  assert.match(long, /Reason: Missing in the docs\n/);
  assert.match(long, /No source was sent to the model\./);
  const url = feedbackUrl("https://x.org/new?title={query}&body={results}", "q", [], long);
  assert.equal(new URL(/** @type {string} */ (url)).searchParams.get("body"), long);
});
