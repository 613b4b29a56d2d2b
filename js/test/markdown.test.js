// Tests of js/src/llm/markdown.js: safe Markdown rendering with a tiny fake DOM (an answer with
// HTML from the fake LLM server is tested end to end in llm.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { renderMarkdown, safeUrl } from '../src/llm/markdown.js';
import { fakeDocument, tags } from './fake_dom.js';

const cites = { 1: 'user_guide/dummy.html#baselines', 2: 'api/dummy.html#DummyClassifier' };
const render = (text) => /** @type {import('./fake_dom.js').FakeNode} */ (/** @type {unknown} */ (renderMarkdown(text, {
  doc: /** @type {any} */ (fakeDocument), citationUrl: (n) => cites[n] ?? null,
})));

test('renderMarkdown: blocks, inline code, lists, citations', () => {
  const md = [
    '### Answer', '',
    'Use `DummyClassifier(strategy="prior")` and *not* `**this**` [1][2], see [3] and [1, 2].',
    'Second line.', '',
    '- first **item**', '- second item', '  continued', '',
    '3. three', '4. four', '',
    '```python', 'clf = DummyClassifier()', '<b>not html</b>', '```',
    'Link: [docs](../index.html) and [evil](vbscript:msgbox(1)) and \\*literal\\*.',
  ].join('\n');
  const frag = render(md);
  assert.deepEqual(frag.childNodes.map((n) => n.nodeName), ['p', 'p', 'ul', 'ol', 'pre', 'p']);
  assert.equal(frag.childNodes[0].textContent, 'Answer');
  const [, para, ul, ol, pre, last] = frag.childNodes;
  const codes = para.elements().filter((e) => e.nodeName === 'code').map((e) => e.textContent);
  assert.deepEqual(codes, ['DummyClassifier(strategy="prior")', '**this**']);
  assert.equal(para.elements().find((e) => e.nodeName === 'em')?.textContent, 'not');
  const cite = para.elements().filter((e) => e.getAttribute('class') === 'sphinx-rag-cite');
  assert.deepEqual(cite.map((a) => [a.textContent, a.getAttribute('href')]), [
    ['[1]', cites[1]], ['[2]', cites[2]], ['[1]', cites[1]], ['[2]', cites[2]]]);
  assert.ok(para.textContent.includes('see [3] and'), 'an unknown citation stays text');
  assert.ok(tags(para).includes('br'));
  assert.deepEqual(ul.childNodes.map((li) => li.textContent), ['first item', 'second item continued']);
  assert.equal(ol.getAttribute('start'), '3');
  assert.deepEqual(ol.childNodes.map((li) => li.textContent), ['three', 'four']);
  assert.equal(pre.childNodes[0].getAttribute('class'), 'language-python');
  assert.equal(pre.textContent, 'clf = DummyClassifier()\n<b>not html</b>');
  assert.deepEqual(last.elements().map((e) => [e.nodeName, e.getAttribute('href')]), [['a', '../index.html']]);
  assert.equal(last.textContent, 'Link: docs and evil and *literal*.');
});

test('safeUrl allows http(s) and relative URLs only', () => {
  for (const ok of ['https://x.org/a', 'http://x', 'page.html#a:b', '../a', '/a', '#frag']) assert.equal(safeUrl(ok), ok);
  for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', ' javascript:x', 'java\tscript:x',
    'data:text/html,x', 'vbscript:x', 'file:///etc/passwd', '', null]) assert.equal(safeUrl(bad), null);
});
