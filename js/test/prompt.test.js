// Tests of js/src/llm/prompt.js: the same messages as sphinx_rag/llm/prompt.py (Python run on
// the same inputs), the same template rules, token estimate and passage fitting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

import {
  estimateTokens, formatPassages, validatePrompt, sentenceEnds, fitPassages, buildMessages, DEFAULT_PROMPT,
  passageBudget,
} from '../src/llm/prompt.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PYTHON = process.env.PYTHON || 'python3';

const PY_CASES = `
import json, sys
from sphinx_rag.llm.prompt import build_messages, fit_passages, passage_budget, sentence_ends
from sphinx_rag.llm.settings import browser_settings
from sphinx_rag.llm.template import DEFAULT_PROMPT
def passage(n, sentences, title=None):
    text = " ".join(f"Sentence {i} of passage {n} says something useful here, e.g. this. Ünïcødé ok!"
                    for i in range(sentences))
    return {"title": title or f"Title {n}", "url": f"page{n}.html#s{n}", "text": text}
passages = [passage(n, 3 + 7 * n) for n in range(1, 9)]
custom = "Project {project}; use {{braces}}.\\n{passages}\\nQ: {question}"
cases = []
for prompt in (DEFAULT_PROMPT, custom):
    for mct in (1024, 1100, 1200, 1500, 2048, 4096, 8192):
        s = browser_settings({"endpoint": "http://127.0.0.1:1", "model": "m", "prompt": prompt,
                              "max_context_tokens": mct}, "mlkit")
        built = build_messages("How do I frobnicate?", passages, project="mlkit", prompt=prompt,
                               max_context_tokens=mct)
        budgets = [passage_budget("How do I frobnicate?", k, project="mlkit", prompt=prompt, max_context_tokens=mct)
                   for k in (1, 8)]
        cases.append({"settings": s, "messages": built.messages, "passages": built.passages, "budgets": budgets})
cut = {"title": "T", "url": "u", "text": "Use a baseline, e.g. the prior one. It is cheap!\\ndef fit(X): pass\\nEnd here."}
fits = [[b, fit_passages([cut], b, 0)] for b in range(0, 40)]
ends = sentence_ends(cut["text"])
mixed = [passage(n, s) for n, s in enumerate((10, 200, 5, 300, 8, 2), start=1)]
skips = [[b, fit_passages(mixed, b, 0)] for b in (150, 400, 900, 3000, 9000)]
json.dump({"cases": cases, "passages": passages, "fits": fits, "cut": cut, "ends": ends, "mixed": mixed,
           "skips": skips}, sys.stdout)
`;

test('buildMessages and fitPassages give the same messages as Python', () => {
  const proc = spawnSync(PYTHON, ['-c', PY_CASES], { cwd: REPO, encoding: 'utf8' });
  assert.equal(proc.status, 0, proc.stderr);
  const py = JSON.parse(proc.stdout);
  const keptCounts = new Set();
  for (const c of py.cases) {
    const built = buildMessages('How do I frobnicate?', py.passages, c.settings);
    assert.deepEqual(built.messages, c.messages);
    assert.deepEqual(built.passages, c.passages);
    assert.deepEqual([1, 8].map((k) => passageBudget('How do I frobnicate?', k, c.settings)), c.budgets);
    keptCounts.add(c.passages.length);
  }
  assert.ok(keptCounts.size >= 4, 'the cases should keep different numbers of passages');
  assert.deepEqual(sentenceEnds(py.cut.text), py.ends);
  for (const [budget, kept] of py.fits) assert.deepEqual(fitPassages([py.cut], budget, 0), kept, `budget ${budget}`);
  assert.ok(py.fits.some(([, kept]) => kept.length && kept[0].text !== py.cut.text), 'some cut happens');
  // a passage too long for what is left is skipped, not the end of the list
  for (const [budget, kept] of py.skips) assert.deepEqual(fitPassages(py.mixed, budget, 0), kept, `budget ${budget}`);
  assert.ok(py.skips.some(([, kept]) => kept.some((/** @type {any} */ p) => p.title === 'Title 3') &&
    !kept.some((/** @type {any} */ p) => p.title === 'Title 2')), 'some passage is skipped');
});

test('DEFAULT_PROMPT is Python\'s', () => {
  const code = 'import json, sys\nfrom sphinx_rag.llm.template import DEFAULT_PROMPT\njson.dump(DEFAULT_PROMPT, sys.stdout)';
  const proc = spawnSync(PYTHON, ['-c', code], { cwd: REPO, encoding: 'utf8' });
  assert.equal(proc.status, 0, proc.stderr);
  assert.equal(DEFAULT_PROMPT, JSON.parse(proc.stdout));
  assert.equal(validatePrompt(DEFAULT_PROMPT), null);
});

test('estimateTokens counts code points / 4', () => {
  assert.equal(estimateTokens(''), 0);
  assert.equal(estimateTokens('abcde'), 2);
  assert.equal(estimateTokens('😀😀😀😀'), 1);
});

test('formatPassages numbers [n] Title (URL)', () => {
  assert.equal(formatPassages([{ title: 'A', url: 'a.html', text: ' x ' }, { title: 'B', url: 'b.html', text: 'y' }]),
    '[1] A (a.html)\nx\n\n[2] B (b.html)\ny');
});

test('fitPassages drops lowest-ranked first, never cuts mid-sentence', () => {
  const p = (n) => ({ title: `T${n}`, url: `u${n}`, text: 'One sentence here. Another one there. '.repeat(10) });
  const all = [p(1), p(2), p(3)];
  const two = estimateTokens(formatPassages(all.slice(0, 2)));
  assert.deepEqual(fitPassages(all, two + 5, 0), all.slice(0, 2));
  for (let budget = 10; budget < estimateTokens(formatPassages([all[0]])); budget += 3) {
    const kept = fitPassages(all, budget, 0);
    if (!kept.length) continue;
    assert.equal(kept.length, 1);
    assert.match(kept[0].text, /(here|there)\.$/);
    assert.ok(all[0].text.startsWith(kept[0].text));
  }
});

test('validatePrompt mirrors Python', () => {
  assert.equal(validatePrompt('{passages} {question} {project} {{x}}'), null);
  assert.match(validatePrompt('{passages}'), /placeholder \{question\}/);
  assert.match(validatePrompt('{question}'), /placeholder \{passages\}/);
  assert.match(validatePrompt('{passages} {question} {projct}'), /unknown placeholder \{projct\}/);
  assert.match(validatePrompt('{passages} {question} }'), /not a valid template/);
  assert.throws(() => buildMessages('q', [], { prompt: '{passages}', project: 'p', max_context_tokens: 4096 }),
    /must contain the placeholder \{question\}/);
});
