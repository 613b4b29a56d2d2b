// @ts-check
// js/src/ui/budget.js cuts a page as sphinx_rag/agents/budget.py does (tests/fixtures/page_parts.json,
// written by tests/fixtures/generate.py): every character in some part, fences closed and
// reopened, linear in the page's length.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ANSWER_TOKENS, estimateTokens, parts } from "../src/ui/budget.js";
import { fixture } from "./helpers.js";

/**
 * Python's parts from its spans (offsets in code points).
 * @param {string} markdown @param {[number, number, string, string][]} spans
 */
function rebuilt(markdown, spans) {
  const chars = Array.from(markdown);
  return spans.map(([a, b, reopen, close]) => {
    const text = chars.slice(a, b).join("");
    return (reopen ? `${reopen}\n` : "") + text + (close ? `${text.endsWith("\n") ? "" : "\n"}${close}\n` : "");
  });
}

test("the same parts as budget.py for every case of page_parts.json", () => {
  const { cases, estimates } = fixture("page_parts.json");
  assert.ok(cases.length >= 25);
  for (const [text, tokens] of estimates) assert.equal(estimateTokens(text), tokens, JSON.stringify(text));
  for (const c of cases) assert.deepEqual(parts(c.markdown, c.budget), rebuilt(c.markdown, c.spans), c.name);
});

test("a line longer than a part is cut inside it: every character is in some part (issue 42, item 10)", () => {
  const line = Array.from({ length: 40000 }, (_, i) => `word${i}`).join(" "); // ~327 KB, one line
  const page = `# A long paragraph\n\nIt starts here.\n\n${line}\n\nAnd ends.\n`;
  const pieces = parts(page);
  assert.ok(pieces.length >= 4, `${pieces.length}`);
  assert.equal(pieces.join(""), page);
  assert.ok(pieces.every((p) => estimateTokens(p) <= ANSWER_TOKENS));
  assert.ok(pieces.slice(0, -1).every((p) => p.endsWith(" ") || p.endsWith("\n")), "cut after a space");
  const astral = "\u{1F600}".repeat(30000); // no part boundary inside a surrogate pair
  assert.equal(parts(astral, 1000).join(""), astral);
  assert.ok(parts(astral, 1000).every((p) => p.length === 2000 || p === parts(astral, 1000).at(-1)));
});

test("a code block longer than a part: closed at the end of a part, reopened at the start of the next", () => {
  const code = Array.from({ length: 3000 }, (_, i) => `x_${i} = compute(value_${i})`).join("\n");
  const page = `Intro.\n\n\`\`\`python\n${code}\n\`\`\`\n\nAfter.\n`;
  const pieces = parts(page, 2000);
  assert.ok(pieces.length > 5);
  for (const piece of pieces) {
    assert.ok(estimateTokens(piece) <= 2000);
    assert.equal((piece.match(/^```/gm) ?? []).length % 2, 0, piece.slice(0, 40));
  }
  assert.ok(pieces.slice(0, -1).every((p) => p.endsWith("\n```\n")) && pieces.slice(1).every((p) => p.startsWith("```python\n")));
  const unwrapped = pieces.map((p, i) => p.slice(i ? "```python\n".length : 0, i < pieces.length - 1 ? -"```\n".length : undefined));
  assert.equal(unwrapped.join(""), page); // every line, once, in order
});

/** Seconds `parts` takes on `page`. @param {string} page */
function seconds(page) {
  const start = performance.now();
  parts(page);
  return (performance.now() - start) / 1000;
}

test("cutting a long code block is linear: 1.2 MB takes about 4x 300 KB (issue 42, item 13)", () => {
  /** @param {number} bytes */
  const block = (bytes) => "```python\n" + Array.from({ length: bytes / 30 }, (_, i) => `x_${i} = f(value_${i}, ${i})`)
    .join("\n").slice(0, bytes) + "\n```\n";
  seconds(block(300_000)); // warm up
  const small = seconds(block(300_000));
  const large = seconds(block(1_200_000));
  // before: 300 KB took seconds (each line joined to the part so far and estimated again)
  assert.ok(large < 6 * small + 0.5, `1.2 MB: ${large.toFixed(3)} s; 300 KB: ${small.toFixed(3)} s`);
  assert.ok(large < 5, `1.2 MB: ${large.toFixed(3)} s`);
});
