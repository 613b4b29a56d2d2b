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

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+.#-]*)[^`]*$/;
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})\s*$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(\s+#+)?\s*$/;

/**
 * A block of the answer: lines [start, end) of the text.
 * @typedef {{kind: 'fence'|'heading'|'list'|'paragraph', start: number, end: number}} Block
 */

/** The text's lines, line endings made "\n". @param {string} text */
function splitLines(text) {
  return String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
}

/**
 * The next block at or after line `i` (blank lines between blocks skipped), or null.
 * Where a block ends depends only on its own lines and the line after it (a list looks one
 * blank line ahead): appending text never changes a block that another one follows.
 * @param {string[]} lines @param {number} i
 * @returns {Block | null}
 */
function nextBlock(lines, i) {
  while (i < lines.length && !lines[i].trim()) i++;
  if (i >= lines.length) return null;
  const start = i;
  const line = lines[i];
  const fence = FENCE.exec(line);
  if (fence) {
    const marker = fence[1];
    i++;
    while (i < lines.length && !(lines[i].trim().startsWith(marker[0].repeat(marker.length)) &&
      CLOSING_FENCE.test(lines[i]))) i++;
    return { kind: 'fence', start, end: Math.min(i + 1, lines.length) }; // with its closing fence
  }
  if (HEADING.exec(line)) return { kind: 'heading', start, end: i + 1 };
  const item = ITEM.exec(line);
  if (item) {
    const ordered = /\d/.test(item[2]);
    while (i < lines.length) {
      const m = ITEM.exec(lines[i]);
      if (!m || /\d/.test(m[2]) !== ordered) break;
      i++;
      while (i < lines.length && lines[i].trim() && !ITEM.exec(lines[i]) && !FENCE.exec(lines[i]) &&
        /^\s/.test(lines[i])) i++; // the item's continuation lines
      while (i < lines.length && !lines[i].trim() && i + 1 < lines.length && ITEM.exec(lines[i + 1]) &&
        /\d/.test(/** @type {RegExpExecArray} */ (ITEM.exec(lines[i + 1]))[2]) === ordered) i++; // loose list
    }
    return { kind: 'list', start, end: i };
  }
  i++;
  while (i < lines.length && lines[i].trim() && !FENCE.exec(lines[i]) && !HEADING.exec(lines[i]) &&
    !ITEM.exec(lines[i])) i++;
  return { kind: 'paragraph', start, end: i };
}

/**
 * The DOM of one block.
 * @param {string[]} lines @param {Block} block @param {RenderOptions} options
 * @returns {Node}
 */
function renderBlock(lines, block, options) {
  const { doc } = options;
  const citationUrl = options.citationUrl ?? (() => null);

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

  const { start, end } = block;
  if (block.kind === 'fence') {
    const fence = /** @type {RegExpExecArray} */ (FENCE.exec(lines[start]));
    const closed = end - start >= 2 && end <= lines.length && CLOSING_FENCE.test(lines[end - 1]) &&
      lines[end - 1].trim().startsWith(fence[1][0].repeat(fence[1].length));
    const pre = el('pre');
    const code = el('code', fence[2] ? { class: `language-${fence[2]}` } : {});
    code.appendChild(doc.createTextNode(lines.slice(start + 1, closed ? end - 1 : end).join('\n')));
    pre.appendChild(code);
    return pre;
  }
  if (block.kind === 'heading') {
    const p = el('p');
    const strong = el('strong');
    inline(strong, /** @type {RegExpExecArray} */ (HEADING.exec(lines[start]))[2]);
    p.appendChild(strong);
    return p;
  }
  if (block.kind === 'list') {
    const first = /** @type {RegExpExecArray} */ (ITEM.exec(lines[start]));
    const ordered = /\d/.test(first[2]);
    const list = el(ordered ? 'ol' : 'ul');
    if (ordered && parseInt(first[2], 10) !== 1) list.setAttribute('start', String(parseInt(first[2], 10)));
    /** @type {string[] | null} */
    let parts = null;
    const flush = () => {
      if (!parts) return;
      const li = el('li');
      inline(li, parts.join(' '));
      list.appendChild(li);
    };
    for (let i = start; i < end; i++) {
      const m = ITEM.exec(lines[i]);
      if (m) {
        flush();
        parts = [m[3]];
      } else if (lines[i].trim()) {
        /** @type {string[]} */ (parts).push(lines[i].trim());
      }
    }
    flush();
    return list;
  }
  const p = el('p');
  inline(p, lines.slice(start, end).map((l) => l.trim()).join('\n'));
  return p;
}

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
  const frag = options.doc.createDocumentFragment();
  const lines = splitLines(text);
  for (let block = nextBlock(lines, 0); block; block = nextBlock(lines, block.end)) {
    frag.appendChild(renderBlock(lines, block, options));
  }
  return frag;
}

/** Finished blocks per group while an answer streams. */
const GROUP_BLOCKS = 50;

/**
 * renderMarkdown for a streamed answer, in time linear in its length: each block is
 * rendered once, when the next one has started; only the last (still open) block and the
 * line being written are rendered again on each render(). render(budgetMs) stops adding
 * finished blocks when its time is up (at least one each call) and says whether some are
 * left: a fast stream is shown over several frames, none of them long.
 *
 * Finished blocks sit in groups of GROUP_BLOCKS, <div class=groupClass> elements that CSS
 * can contain: the browser then lays out only the group being filled, not every block of a
 * long answer on every frame. After end(), `container` holds the blocks renderMarkdown of
 * the whole text gives, in that order, in those groups (taking them out would cost one
 * layout of the whole answer at once: 2.4 s for 2 MB here).
 */
export class MarkdownStream {
  /**
   * @param {Element} container  emptied, then owned by the stream
   * @param {RenderOptions & {groupClass?: string}} options  groupClass: the class of the groups
   */
  constructor(container, options) {
    this.container = container;
    this.options = options;
    while (container.lastChild) container.removeChild(container.lastChild);
    /** @type {Element[]} the groups of finished blocks, the last one being filled */
    this.groups = [];
    this.inGroup = 0;
    /** The text after the finished blocks (the open block, the line being written), "\n" line endings. */
    this.open = '';
    /** A "\r" at the end of the last piece, waiting to see whether a "\n" follows. */
    this.heldCR = false;
    /** @type {{lines: string[], block: Block}[]} finished blocks not rendered yet, in order */
    this.queue = [];
    this.queued = 0; // this.queue[0 .. queued) are rendered
    /** @type {Node[]} the nodes of the open text, after every finished block */
    this.openNodes = [];
  }

  /** @param {string} piece  the next piece of the answer */
  push(piece) {
    let s = (this.heldCR ? '\r' : '') + piece;
    this.heldCR = s.endsWith('\r');
    if (this.heldCR) s = s.slice(0, -1);
    this.open += s.replace(/\r\n?/g, '\n');
  }

  /**
   * Bring the DOM up to date with the text pushed so far, or part of the way.
   * @param {number} [budgetMs]  time for adding finished blocks (default: no limit)
   * @returns {boolean} true when everything pushed is shown
   */
  render(budgetMs = Infinity) {
    const start = performance.now();
    const lines = this.open.split('\n');
    // The blocks of the complete lines (the last line may still grow): all but the last are final.
    const complete = lines.slice(0, -1);
    /** @type {Block[]} */
    const blocks = [];
    for (let block = nextBlock(complete, 0); block; block = nextBlock(complete, block.end)) blocks.push(block);
    if (blocks.length > 1) {
      const last = /** @type {Block} */ (blocks.pop());
      for (const block of blocks) this.queue.push({ lines: complete, block });
      lines.splice(0, last.start);
      this.open = lines.join('\n'); // the finished blocks' text is let go
    }
    for (const node of this.openNodes) this.container.removeChild(node);
    this.openNodes = [];
    while (this.queued < this.queue.length) {
      const { lines: of, block } = this.queue[this.queued++];
      if (!this.groups.length || this.inGroup === GROUP_BLOCKS) {
        const group = this.options.doc.createElement('div');
        if (this.options.groupClass) group.setAttribute('class', this.options.groupClass);
        this.container.appendChild(group);
        this.groups.push(group);
        this.inGroup = 0;
      }
      this.groups[this.groups.length - 1].appendChild(renderBlock(of, block, this.options));
      this.inGroup++;
      if (performance.now() - start >= budgetMs) break;
    }
    if (this.queued < this.queue.length) return false; // the open part waits for the finished ones
    this.queue = [];
    this.queued = 0;
    for (let block = nextBlock(lines, 0); block; block = nextBlock(lines, block.end)) {
      const node = renderBlock(lines, block, this.options);
      this.openNodes.push(node);
      this.container.appendChild(node);
    }
    return true;
  }

  /** The answer is complete (a "\r" at its end is a line end): render() then shows all of it. */
  close() {
    if (this.heldCR) this.open += '\n';
    this.heldCR = false;
  }

  /** The answer is complete: render all that is left, now. */
  end() {
    this.close();
    this.render();
  }
}
