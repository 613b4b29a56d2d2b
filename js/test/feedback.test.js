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
