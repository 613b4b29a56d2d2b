// Tests of js/src/llm/markdown.js: safe Markdown rendering with a tiny fake DOM (an answer with
// HTML from the fake LLM server is tested end to end in llm.test.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MarkdownStream, renderMarkdown, safeUrl } from '../src/llm/markdown.js';
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

test('an answer\'s links and citations resolve to http(s) only, as a browser parses their hrefs', () => {
  const hostile = ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', '\x01javascript:alert(1)', 'java\nscript:alert(1)',
    'jav&#x61;script:alert(1)', '\u00a0javascript:alert(1)', 'javascript\u2028:alert(1)', '%6Aavascript:alert(1)',
    'vbscript:msgbox(1)', 'data:text/html;base64,PHNjcmlwdD4=', 'blob:https://x.org/1', 'file:///etc/passwd',
    '\\\\evil.example/x', 'https:javascript:alert(1)', '//evil.example/x', ' https://ok.example/ ', 'page.html#a'];
  const answer = hostile.map((u, i) => `[link ${i}](${u}) and <${u}> [${i + 1}]`).join('\n\n');
  const frag = /** @type {any} */ (renderMarkdown(answer, {
    doc: /** @type {any} */ (fakeDocument), citationUrl: (n) => hostile[n - 1] ?? null,
  }));
  const hrefs = frag.elements().filter((/** @type {any} */ e) => e.nodeName === 'a').map((/** @type {any} */ e) => e.getAttribute('href'));
  assert.ok(hrefs.length >= 8, String(hrefs.length)); // the safe ones stay links
  for (const href of hrefs) {
    assert.match(new URL(href, 'https://docs.example/dir/page.html').protocol, /^https?:$/, href);
  }
  assert.ok(!hrefs.some((h) => /^\s*javascript:/i.test(h)));
  assert.equal(frag.elements().filter((/** @type {any} */ e) => !['p', 'a', 'br', 'code', 'em', 'strong'].includes(e.nodeName)).length, 0);
});

// -- MarkdownStream: the same DOM as renderMarkdown, rendered as the answer streams ---------------

const GROUP = 'sphinx-rag-blocks';
const options = { doc: /** @type {any} */ (fakeDocument), citationUrl: (n) => cites[n] ?? null, groupClass: GROUP };
/** The blocks shown, in order, out of the stream's groups. @param {any} box */
const blocksOf = (box) => box.childNodes.flatMap((c) => (c.getAttribute?.('class') === GROUP ? c.childNodes : [c]));
/** The markup of what a stream shows, as if its groups were not there. @param {any} box */
const shownMarkup = (box) => `<div>${blocksOf(box).map((c) => c.markup).join('')}</div>`;
/** @param {string} text */
const full = (text) => {
  const box = fakeDocument.createElement('div');
  box.appendChild(/** @type {any} */ (renderMarkdown(text, options)));
  return box.markup;
};

/** A small deterministic PRNG (mulberry32). @param {number} seed */
function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces that make every block kind and its edge cases: loose lists, lists of both kinds,
// continuation lines, headings, open and closed fences (``` and ~~~), CRLF and CR line
// endings, inline markup spanning lines, citations and links.
const PIECES = ['\n', '\n', '\n\n', '\r\n', '\r', ' ', '  ', 'word', 'the answer', '- ', '* ', '1. ', '3) ', '# ', '### ',
  '```', '```python', '~~~', '`', '**', '*', '[1]', '[2, 1]', '[link](https://x.org/a)', '[x](javascript:y)',
  '\\*', '<b>', 'x = 1', '#', '-'];

test('MarkdownStream gives renderMarkdown\'s DOM on random streams cut anywhere', () => {
  const random = prng(29);
  for (let run = 0; run < 1500; run++) {
    let text = '';
    const n = 1 + Math.floor(random() * 40);
    for (let i = 0; i < n; i++) text += PIECES[Math.floor(random() * PIECES.length)];
    const box = fakeDocument.createElement('div');
    const stream = new MarkdownStream(/** @type {any} */ (box), options);
    let at = 0;
    while (at < text.length) {
      const step = 1 + Math.floor(random() * 12);
      stream.push(text.slice(at, at + step));
      at += step;
      const dice = random();
      if (dice < 0.5) {
        assert.equal(stream.render(), true);
        // on screen mid-stream: renderMarkdown of the text so far (a "\r" at its end held back)
        const soFar = text.slice(0, at).replace(/\r$/, '');
        assert.equal(shownMarkup(box), full(soFar), JSON.stringify({ text, at }));
      } else if (dice < 0.8) {
        stream.render(0); // no time: one finished block at most, the rest at later calls
      }
    }
    stream.end();
    assert.equal(shownMarkup(box), full(text), JSON.stringify(text));
    const groups = box.childNodes.filter((c) => c.getAttribute('class') === GROUP);
    assert.ok(groups.every((g) => g.childNodes.length >= 1 && g.childNodes.length <= 50));
    assert.ok(box.childNodes.slice(0, groups.length).every((c) => c.getAttribute('class') === GROUP)); // open ones last
  }
});

test('MarkdownStream.render(budget) adds at least one finished block per call, the open one last', () => {
  const box = fakeDocument.createElement('div');
  const stream = new MarkdownStream(/** @type {any} */ (box), options);
  stream.push('one\n\ntwo\n\nthree\n\nfour\n\nfive is being written'); // "four" may go on
  const shown = [];
  while (!stream.render(0)) shown.push(blocksOf(box).map((n) => n.textContent));
  assert.deepEqual(shown, [['one'], ['one', 'two']]);
  assert.deepEqual(blocksOf(box).map((n) => n.textContent), ['one', 'two', 'three', 'four', 'five is being written']);
  assert.equal(box.childNodes[0].getAttribute('class'), GROUP); // finished blocks in a group
  stream.end();
  assert.deepEqual(blocksOf(box).map((n) => n.textContent), ['one', 'two', 'three', 'four', 'five is being written']);
});

test('MarkdownStream renders each finished block once', () => {
  const box = fakeDocument.createElement('div');
  const stream = new MarkdownStream(/** @type {any} */ (box), options);
  let created = 0;
  const counting = { ...options, doc: { ...fakeDocument, createElement: (t) => { created++; return fakeDocument.createElement(t); } } };
  stream.options = /** @type {any} */ (counting);
  const paragraph = 'A paragraph with **bold** and `code` [1].\n\n';
  for (let i = 0; i < 2000; i++) {
    stream.push(paragraph);
    stream.render();
  }
  stream.end();
  assert.equal(box.childNodes.length, 40 + 1); // 1,999 finished blocks in groups of 50, the last one open
  assert.equal(blocksOf(box).length, 2000);
  assert.equal(shownMarkup(box), full(paragraph.repeat(2000)));
  // each paragraph's 4 elements (p, strong, code, a) made twice: open at one call, finished at
  // the next; and a group per 50 paragraphs. Constant per block: linear in the answer.
  assert.equal(created, 2000 * 4 * 2 + 2000 / 50);
});
