// @ts-check
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { test } from "node:test";

import { Searcher, correctSpelling, modelWords } from "../src/search/retrieve.js";
import { SKIP_SMALL, demoIndexDir, openIndex, readFixture, smallIndexDir } from "./helpers.js";

test("the static encoder gives Python's query vectors and rankings, bit for bit", { skip: SKIP_SMALL }, async () => {
  // written beside the small index by tests/test_js_parity.py from the demo build's encoder
  const data = readFixture(join(dirname(/** @type {string} */ (smallIndexDir())), "static_encoder.json"));
  const { index } = await openIndex(/** @type {string} */ (demoIndexDir()));
  assert.equal(index.manifest.encoder.file, data.encoder, "not the demo build the fixture was made from");
  const encoder = await index.encoder();
  assert.ok(encoder);
  const words = modelWords(encoder.vocab);
  const searchers = { rrf: new Searcher(index, { fusion: "rrf" }), dense: new Searcher(index, { fusion: "dense" }) };
  assert.ok(data.queries.length >= 50);
  assert.ok(data.queries.some((/** @type {any} */ q) => q.vector === null), "no query without a known token");
  /** @type {string[]} */
  const failures = [];
  for (const q of data.queries) {
    const text = await correctSpelling(q.query, index, words);
    if (text !== q.embedding_query) failures.push(`spelling ${JSON.stringify(q.query)}`);
    const vector = encoder.encode(text);
    const same = vector === null ? q.vector === null : q.vector !== null && vector.every((x, i) => x === Math.fround(q.vector[i]));
    if (!same) {
      failures.push(`vector ${JSON.stringify(q.query)}`);
      continue;
    }
    const query = vector ?? new Float32Array(index.dim);
    for (const fusion of /** @type {const} */ (["rrf", "dense"])) {
      const got = await searchers[fusion].search(q.query, query, 10, undefined, "static");
      const want = q[fusion];
      const ok = got.length === want.length && got.every((r, i) =>
        r.id === want[i][0] && r.index === want[i][1] && r.score === want[i][2]);
      if (!ok) failures.push(`${fusion} ${JSON.stringify(q.query)}`);
    }
  }
  assert.deepEqual(failures, []);
});
