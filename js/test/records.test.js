// @ts-check
// js/src/search/validate.js drops the records Python's sphinx_rag.search.checks drops, for the
// same reason, and counts them in the same words (tests/fixtures/records.json, written by
// tests/fixtures/generate.py; issue 42).
import assert from "node:assert/strict";
import { test } from "node:test";

import { checkTextShard, invalidRecords, recordProblem, urlUnder } from "../src/search/validate.js";
import { fixture } from "./helpers.js";

test("recordProblem gives Python's verdict and words for every record", () => {
  const { records } = fixture("records.json");
  assert.ok(records.length >= 25 && records.some((/** @type {any} */ c) => c.problem === null));
  for (const c of records) assert.equal(recordProblem(c.record, c.i, c.n, c.root), c.problem, c.name);
});

test("urlUnder gives Python's url_under for every URL", () => {
  const { urls } = fixture("records.json");
  assert.ok(urls.length >= 100 && urls.some((/** @type {any} */ c) => c.under) && urls.some((/** @type {any} */ c) => !c.under));
  for (const c of urls) assert.equal(urlUnder(c.url, c.root), c.under, `${JSON.stringify(c.url)} under ${c.root}`);
});

test("invalidRecords counts as Python's invalid_records", () => {
  for (const c of fixture("records.json").lines) assert.equal(invalidRecords(c.dropped, c.read, c.total), c.line);
});

test("a text shard's bad records are dropped with their problem, the others kept", () => {
  const { records } = fixture("records.json");
  // every record checked as chunk 1 of 4, as the fixture did: a shard holding only it
  for (const c of records) {
    const { records: out, dropped } = checkTextShard({ first: 1, chunks: [c.record] }, 1, 1, 4, "texts-x.js", c.root);
    assert.equal(dropped, c.problem === null ? 0 : 1, c.name);
    assert.equal(out[0].problem, c.problem ?? undefined, c.name);
    if (c.problem !== null) assert.equal(out[0].url, "", c.name);
  }
});
