// @ts-check
import assert from "node:assert/strict";
import { test } from "node:test";

import { identifierTokens, stem, tokenize, wordParts } from "../src/search/lexical.js";
import { fixture } from "./helpers.js";

test("tokenize() gives Python's tokens on every fixture string", () => {
  /** @type {{cases: Array<[string, string[]]>}} */
  const { cases } = fixture("lexical.json");
  assert.ok(cases.length >= 500, `only ${cases.length} cases`);
  const failures = cases.filter(([text, tokens]) => JSON.stringify(tokenize(text)) !== JSON.stringify(tokens));
  assert.deepEqual(failures.slice(0, 5).map(([t, want]) => ({ text: t, want, got: tokenize(t) })), []);
});

test("identifiers, stop words, plurals (examples of sphinx_rag/search/lexical.py)", () => {
  assert.deepEqual(tokenize("fit_transform"), ["fit_transform", "fit", "transform"]);
  assert.deepEqual(tokenize("RandomForestClassifier"), ["randomforestclassifier", "random", "forest", "classifier"]);
  assert.deepEqual(tokenize("HTMLParser"), ["htmlparser", "html", "parser"]);
  assert.deepEqual(tokenize("The Café of sklearn.dummy"), ["cafe", "sklearn", "dummy"]);
  assert.deepEqual(tokenize("a b c"), []);
  assert.deepEqual(
    ["strategies", "classes", "values", "analysis", "status", "fit"].map(stem),
    ["strategy", "class", "value", "analysis", "status", "fit"],
  );
  assert.deepEqual(wordParts("getHTTPResponse2Code"), ["get", "http", "response2", "code"]);
});

test("identifierTokens() gives Python's identifier tokens on every fixture string", () => {
  /** @type {{cases: Array<[string, string[]]>, identifiers: string[][]}} */
  const { cases, identifiers } = fixture("lexical.json");
  assert.equal(identifiers.length, cases.length);
  assert.ok(identifiers.filter((ids) => ids.length > 0).length >= 100);
  const failures = cases.map(([text], i) => ({ text, want: identifiers[i], got: identifierTokens(text) }))
    .filter(({ want, got }) => JSON.stringify(got) !== JSON.stringify(want));
  assert.deepEqual(failures.slice(0, 5), []);
  assert.deepEqual(identifierTokens("offset of SN0421 in KNeighborsClassifier, create_app or 交叉验证"),
    ["sn0421", "kneighborsclassifier", "create_app"]);
});
