// @ts-check
// Object passages (expand.js), the cases of tests/test_expand.py; whole rankings of the
// demo are compared with Python's through tests/fixtures/rankings.json (retrieve.test.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { MAX_CHARS, OBJECT_RANKS, expand, passagesLength } from "../src/search/expand.js";

/** @param {string} doc @param {string} kind @param {number} n @param {object} [links] */
const chunk = (doc, kind, n, links = {}) => ({ doc, kind, text: "x".repeat(n), ...links });

/** An object card and its members, as chunk/api.py links them. */
const apiObject = (/** @type {number} */ members, size = 100) => [
  chunk("p", "api", size, { members }),
  ...Array.from({ length: members }, (_, i) => chunk("p", "api", size, { card: i + 1 })),
];

/** @param {any[]} chunks @param {number[]} ranked @param {number | null} [budget] */
const passages = async (chunks, ranked, k = 10, budget = null) =>
  (await expand(ranked, async (i) => chunks[i], chunks.length, k, budget)).map(({ hit, span }) => [hit, span]);

test("an object card and its ranked parts are one passage", async () => {
  const page = [...apiObject(4), ...apiObject(2)];
  assert.deepEqual(await passages(page, [0, 3, 6, 2]), [[0, [0, 2, 3]], [6, [6]]]);
  assert.deepEqual(await passages(page, [3, 5, 0, 1]), [[3, [0, 1, 3]], [5, [5]]]);
  assert.deepEqual(await passages(page, [3, 1]), [[3, [3]], [1, [1]]]);
  const chunks = [...page, ...Array.from({ length: OBJECT_RANKS }, () => chunk("q", "guide", 10))];
  const filler = (/** @type {number} */ n) => Array.from({ length: n }, (_, i) => 8 + i);
  assert.deepEqual(await passages(chunks, [0, ...filler(OBJECT_RANKS - 1), 2], 1), [[0, [0]]]);
  assert.deepEqual(await passages(chunks, [0, ...filler(OBJECT_RANKS - 2), 2], 1), [[0, [0, 2]]]);
});

test("an object passage keeps to MAX_CHARS", async () => {
  const page = apiObject(3, Math.floor(MAX_CHARS / 3));
  assert.deepEqual(await passages(page, [3, 0, 1, 2]), [[3, [0, 1, 3]], [2, [2]]]);
  const uneven = [chunk("p", "api", 1000, { members: 2 }), chunk("p", "api", 2000, { card: 1 }),
    chunk("p", "api", 100, { card: 2 })];
  assert.deepEqual(await passages(uneven, [0, 1, 2]), [[0, [0]], [1, [1]], [2, [2]]]);
});

test("a method card brings its class card", async () => {
  const page = [chunk("p", "api", 100, { members: 3 }), chunk("p", "api", 100, { card: 1 }),
    chunk("p", "api", 100, { members: 1, card: 2 }), chunk("p", "api", 100, { card: 1 })];
  assert.deepEqual(await passages(page, [2, 3]), [[2, [0, 2, 3]]]);
  assert.deepEqual(await passages(page, [0, 2, 3]), [[0, [0, 2, 3]]]);
  assert.deepEqual((await passages(page, [1, 0, 2, 3], 2))[0], [1, [0, 1, 2, 3]]);
  assert.deepEqual(await passages(page, [3, 2]), [[3, [2, 3]]]);
  assert.deepEqual(await passages(page, [3, 1]), [[3, [3]], [1, [1]]]);
});


// passages sized to a budget: the cases of tests/test_expand.py
test("a budget trims later segments to the neighbours that pay for their length", async () => {
  const page = [...Array.from({ length: 4 }, () => chunk("a", "guide", 300)),
    ...Array.from({ length: 6 }, () => chunk("b", "guide", 300))];
  const ranked = [1, 2, 6, 8];
  const whole = [[1, [1, 2]], [6, [6, 7, 8]]];
  assert.deepEqual(await passages(page, ranked, 2), whole);
  assert.equal(await passagesLength(whole.map(([hit, span]) => ({ hit: /** @type {number} */ (hit),
    span: /** @type {number[]} */ (span) })), async (i) => page[i]), 1506);
  assert.deepEqual(await passages(page, ranked, 2, 1506), whole);
  assert.deepEqual(await passages(page, ranked, 2, 1200), [[1, [1, 2]], [6, [6]]]);
  assert.deepEqual(await passages(page, ranked, 2, 700), [[1, [1, 2]], [6, [6]]]);
  assert.deepEqual(await passages(page, ranked, 2, 500), [[1, [1]], [2, [2]]]);
});

test("a budget keeps the object parts that rank high enough", async () => {
  const page = [chunk("g", "guide", 300), ...apiObject(4, 300),
    ...Array.from({ length: 12 }, (_, i) => chunk(`f${i}`, "api", 10))];
  const ranked = [0, 1, 4, ...Array.from({ length: 12 }, (_, i) => 6 + i), 2];
  assert.deepEqual((await passages(page, ranked))[1], [1, [1, 2, 4]]);
  assert.deepEqual((await passages(page, ranked, 10, 1300))[1], [1, [1, 2, 4]]);
  assert.deepEqual((await passages(page, ranked, 10, 1000))[1], [1, [1, 4]]);
  assert.deepEqual((await passages(page, ranked, 10, 900)).slice(1, 3), [[1, [1]], [4, [4]]]);
});
