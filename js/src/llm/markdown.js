// @ts-check
/**
 * Safe Markdown for LLM answers: the text becomes DOM nodes built with
 * createElement/createTextNode/setAttribute only (never innerHTML), so whatever HTML
 * the model (or a passage it quotes) contains is shown as text. Links keep http(s) and
 * relative URLs only, and "[n]" citations link to the cited passages. No DOM access
 * except through the `doc` passed in (tests pass a fake document).
 *
 * @module markdown
 */

/**
 * The URL if it is http(s) or relative, else null (javascript:, data:, vbscript:, ...).
 * @param {unknown} url
 * @returns {string|null}
 */
export function safeUrl(url) {
  if (typeof url !== 'string') return null;
  const u = url.trim();
  if (!u || /[\u0000-\u0020\u007f-\u009f\\]/.test(u)) return null;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(u);
  if (scheme) return /^https?$/i.test(scheme[1]) ? u : null;
  return u;
}

/**
 * @typedef {{citationUrl?: (n: number) => (string|null|undefined), doc: Document}} RenderOptions
 */

/**
 * Render an LLM answer as DOM nodes, safely: only createElement/createTextNode/setAttribute
 * (never innerHTML), so HTML in the answer shows as text. Supports paragraphs, headings (as
 * bold paragraphs), **bold**, *em*, `code`, fenced code blocks, bullet and numbered lists,
 * [text](url) links with http(s) or relative URLs only (others render as their text), and
 * [n] / [1, 2] citations linked to citationUrl(n) (class "sphinx-rag-cite").
 * @param {string} text @param {RenderOptions} options
 * @returns {DocumentFragment}
 */
export function renderMarkdown(text, options) {
  const { doc } = options;
  const citationUrl = options.citationUrl ?? (() => null);
  const frag = doc.createDocumentFragment();
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+.#-]*)[^`]*$/;
  const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;

  /** @param {string} tag @param {Record<string, string>} [attrs] */
  const el = (tag, attrs = {}) => {
    const node = doc.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };

  /**
   * Inline Markdown into `parent`.
   * @param {Node} parent @param {string} s @param {boolean} inLink
   */
  const inline = (parent, s, inLink = false) => {
    let buf = '';
    const flush = () => {
      if (buf) parent.appendChild(doc.createTextNode(buf));
      buf = '';
    };
    let i = 0;
    while (i < s.length) {
      const ch = s[i];
      if (ch === '\\' && i + 1 < s.length && /[!-/:-@[-`{-~]/.test(s[i + 1])) {
        buf += s[i + 1];
        i += 2;
        continue;
      }
      if (ch === '\n') {
        flush();
        parent.appendChild(el('br'));
        i++;
        continue;
      }
      if (ch === '`') {
        let run = '`';
        while (s[i + run.length] === '`') run += '`';
        const close = s.indexOf(run, i + run.length);
        if (close > 0) {
          flush();
          const code = el('code');
          let content = s.slice(i + run.length, close);
          if (/^ .*\S.* $/.test(content)) content = content.slice(1, -1);
          code.appendChild(doc.createTextNode(content));
          parent.appendChild(code);
          i = close + run.length;
          continue;
        }
        buf += run;
        i += run.length;
        continue;
      }
      if (ch === '*') {
        // "**strong**" or "*em*": the marker must hug the text on both sides
        const marker = s[i + 1] === '*' ? '**' : '*';
        const from = i + marker.length;
        const close = s.indexOf(marker, from);
        if (close > from && (marker === '**' || s[close + 1] !== '*') && !/\s/.test(s[from]) && !/\s/.test(s[close - 1])) {
          flush();
          const node = el(marker === '**' ? 'strong' : 'em');
          inline(node, s.slice(from, close), inLink);
          parent.appendChild(node);
          i = close + marker.length;
          continue;
        }
        buf += marker;
        i += marker.length;
        continue;
      }
      if (ch === '[') {
        const rest = s.slice(i);
        const link = inLink ? null : /^\[([^\[\]\n]+)\]\(((?:[^()\s]|\([^()\s]*\))*)(?:\s+"[^"]*")?\)/.exec(rest);
        if (link) {
          flush();
          const href = safeUrl(link[2]);
          if (href) {
            const a = el('a', { href, rel: 'noopener noreferrer' });
            inline(a, link[1], true);
            parent.appendChild(a);
          } else {
            inline(parent, link[1], true); // unsafe URL: the text only
          }
          i += link[0].length;
          continue;
        }
        const cite = /^\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/.exec(rest);
        if (cite) {
          const numbers = cite[1].split(',').map((x) => Number(x.trim()));
          const urls = numbers.map((n) => safeUrl(citationUrl(n)));
          if (!inLink && urls.every((u) => u)) {
            flush();
            numbers.forEach((n, k) => {
              const a = el('a', { href: /** @type {string} */ (urls[k]), class: 'sphinx-rag-cite' });
              a.appendChild(doc.createTextNode(`[${n}]`));
              parent.appendChild(a);
            });
          } else {
            buf += cite[0];
          }
          i += cite[0].length;
          continue;
        }
      }
      buf += ch;
      i++;
    }
    flush();
  };

  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      while (i < lines.length && !(lines[i].trim().startsWith(marker[0].repeat(marker.length)) &&
        /^ {0,3}(`{3,}|~{3,})\s*$/.test(lines[i]))) {
        body.push(lines[i]);
        i++;
      }
      i++; // the closing fence (or the end)
      const pre = el('pre');
      const code = el('code', fence[2] ? { class: `language-${fence[2]}` } : {});
      code.appendChild(doc.createTextNode(body.join('\n')));
      pre.appendChild(code);
      frag.appendChild(pre);
      continue;
    }
    if (!line.trim()) {
      i++;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const p = el('p');
      const strong = el('strong');
      inline(strong, heading[2]);
      p.appendChild(strong);
      frag.appendChild(p);
      i++;
      continue;
    }
    const item = ITEM.exec(line);
    if (item) {
      const ordered = /\d/.test(item[2]);
      const list = el(ordered ? 'ol' : 'ul');
      if (ordered && parseInt(item[2], 10) !== 1) list.setAttribute('start', String(parseInt(item[2], 10)));
      while (i < lines.length) {
        const m = ITEM.exec(lines[i]);
        if (!m || /\d/.test(m[2]) !== ordered) break;
        const parts = [m[3]];
        i++;
        while (i < lines.length && lines[i].trim() && !ITEM.exec(lines[i]) && !FENCE.exec(lines[i]) &&
          /^\s/.test(lines[i])) {
          parts.push(lines[i].trim());
          i++;
        }
        const li = el('li');
        inline(li, parts.join(' '));
        list.appendChild(li);
        while (i < lines.length && !lines[i].trim() && i + 1 < lines.length && ITEM.exec(lines[i + 1]) &&
          /\d/.test(/** @type {RegExpExecArray} */ (ITEM.exec(lines[i + 1]))[2]) === ordered) i++; // loose list
      }
      frag.appendChild(list);
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !FENCE.exec(lines[i]) && !HEADING.exec(lines[i]) &&
      !(para.length && ITEM.exec(lines[i]))) {
      para.push(lines[i].trim());
      i++;
    }
    const p = el('p');
    inline(p, para.join('\n'));
    frag.appendChild(p);
  }
  return frag;
}
