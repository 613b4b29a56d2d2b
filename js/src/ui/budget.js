// @ts-check
/**
 * How big an agent's answer is, in estimated tokens, and a long page read in parts: the
 * twin of sphinx_rag/agents/budget.py (estimate_tokens, part_spans, parts), the same
 * estimate and the same cuts, pinned by tests/fixtures/page_parts.json. Python counts and
 * cuts by code point; so does this file (its offsets are UTF-16, but a surrogate pair is
 * one character and never cut in two).
 *
 * A part ends between blocks (a blank line outside a code fence) unless the block that
 * would start the next part does not fit in one either; then between the lines of that
 * block, or, for a line longer than a part, inside the line (after a space among its last
 * SPACE_WINDOW characters when there is one). Joined, the parts are the whole page, but
 * for the lines that close a code fence cut in two at the end of a part and reopen it at
 * the start of the next. Linear in the page's length.
 * @module budget
 */

/** A default answer's cap, as budget.py's ANSWER_TOKENS. */
export const ANSWER_TOKENS = 20000;
/** A part cut inside a line ends after a space among its last this many characters. */
export const SPACE_WINDOW = 1000;
/** A code fence's opening line longer than this is not repeated in each part. */
export const OPENER_CHARS = 200;
const FENCE = /^(`{3,}|~{3,})/;
const BLANK = /^[ \t\r]*$/;

/** @typedef {[number, number]} Counts  ASCII characters, other characters */
/** @typedef {[number, number, string, string]} Span  start, end, reopen, close */

/** @param {number} c */
const isHigh = (c) => c >= 0xd800 && c <= 0xdbff;
/** @param {number} c */
const isLow = (c) => c >= 0xdc00 && c <= 0xdfff;

/**
 * Code units of the character (code point) at `i`: 2 for a surrogate pair, else 1.
 * @param {string} text @param {number} i
 */
function width(text, i) {
  return isHigh(text.charCodeAt(i)) && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
}

/**
 * [ASCII characters, other characters] of text.slice(start, end), by code point.
 * @param {string} text @param {number} [start] @param {number} [end]
 * @returns {Counts}
 */
function counts(text, start = 0, end = text.length) {
  let ascii = 0;
  let other = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 128) {
      ascii++;
    } else {
      other++;
      if (isHigh(c) && i + 1 < end && isLow(text.charCodeAt(i + 1))) i++;
    }
  }
  return [ascii, other];
}

/** @param {number} ascii @param {number} other */
function cost(ascii, other) {
  return Math.ceil(ascii / 3.5 + other);
}

/** @param {Counts} a @param {Counts} b @returns {Counts} */
function sum(a, b) {
  return [a[0] + b[0], a[1] + b[1]];
}

/** @param {Counts} c @param {Counts} extra @param {number} budget */
function fits(c, extra, budget) {
  return cost(c[0] + extra[0], c[1] + extra[1]) <= budget;
}

/**
 * Tokens of `text`, estimated: 3.5 ASCII characters a token, a token for any other character.
 * @param {string} text
 */
export function estimateTokens(text) {
  const [ascii, other] = counts(text);
  return cost(ascii, other);
}

/**
 * The lines that reopen (the opening line itself) and close a code fence a part boundary
 * cuts through; none for an opening line longer than OPENER_CHARS or an eighth of the budget.
 * @param {string} opener @param {number} budget
 * @returns {[string, string]}
 */
function fenceLines(opener, budget) {
  if (!opener || [...opener].length > OPENER_CHARS || 8 * estimateTokens(opener) > budget) return ["", ""];
  return [opener, /** @type {RegExpExecArray} */ (FENCE.exec(opener))[1]];
}

/** Each line's start, the line that opened the fence open at its start ("": none), whether it is blank. */
class Lines {
  /** @param {string} markdown @param {number} budget */
  constructor(markdown, budget) {
    this.text = markdown;
    this.budget = budget;
    /** @type {number[]} */
    this.starts = [];
    /** @type {string[]} */
    this.fences = [];
    /** @type {boolean[]} */
    this.blank = [];
    let pos = 0;
    let fence = "";
    let opener = "";
    for (const line of markdown.split("\n")) {
      this.starts.push(pos);
      this.fences.push(fence ? opener : "");
      this.blank.push(BLANK.test(line));
      pos += line.length + 1;
      const opened = FENCE.exec(line);
      if (fence) {
        const mark = opened ? opened[1] : "";
        if (mark && mark[0] === fence[0] && mark.length >= fence.length && BLANK.test(line.slice(mark.length))) fence = "";
      } else if (opened) {
        fence = opened[1];
        opener = line;
      }
    }
    this.count = this.starts.length;
    /** @type {Map<string, [Counts, Counts, Counts]>} */
    this.decorationsOf = new Map();
  }

  /** Where line `j` ends, its newline included. @param {number} j */
  end(j) {
    return j + 1 < this.count ? this.starts[j + 1] : this.text.length;
  }

  /**
   * Counts of what a part cut inside the fence `opener` opened gets: the fence reopened
   * before it, closed after it at a line's end, closed after it inside a line.
   * @param {string} opener @returns {[Counts, Counts, Counts]}
   */
  decorations(opener) {
    let found = this.decorationsOf.get(opener);
    if (!found) {
      const [reopen, close] = fenceLines(opener, this.budget);
      found = reopen ? [counts(`${reopen}\n`), counts(`${close}\n`), counts(`\n${close}\n`)] : [[0, 0], [0, 0], [0, 0]];
      this.decorationsOf.set(opener, found);
    }
    return found;
  }

  /** Whether a block starts at line `j` (a blank line before it, outside a fence). @param {number} j */
  blockStarts(j) {
    return j > 0 && j < this.count && this.blank[j - 1] && !this.fences[j] && !this.blank[j];
  }

  /** Whether the block that starts at line `first` fits in a part of its own. @param {number} first */
  blockFits(first) {
    /** @type {Counts} */
    let c = [0, 0];
    for (let j = first; j < this.count; j++) {
      if (j > first && this.blockStarts(j)) return true;
      const a = this.starts[j];
      const b = this.end(j);
      if (b - a > this.budget * 3.5) return false;
      c = sum(c, counts(this.text, a, b));
      if (!fits(c, [0, 0], this.budget)) return false;
    }
    return true;
  }

  /** Whether line `j` fits in a part of its own (its fence reopened and closed). @param {number} j */
  lineFits(j) {
    const a = this.starts[j];
    const b = this.end(j);
    if (b - a > this.budget * 3.5) return false;
    const after = j + 1 < this.count ? this.decorations(this.fences[j + 1])[1] : /** @type {Counts} */ ([0, 0]);
    return fits(sum(counts(this.text, a, b), this.decorations(this.fences[j])[0]), after, this.budget);
  }
}

/**
 * Where a part ends inside a line (from `a`, the line ending at `stop`): as far as `budget`
 * allows (`base`: what the part holds besides), after a space among the last SPACE_WINDOW
 * characters if there is one (`a`: nothing fits).
 * @param {string} text @param {number} a @param {number} stop @param {Counts} base @param {number} budget
 */
function insideLine(text, a, stop, base, budget) {
  let [ascii, other] = base;
  let p = a;
  while (p < stop) {
    if (text.charCodeAt(p) < 128) ascii++;
    else other++;
    if (cost(ascii, other) > budget) break;
    p += width(text, p);
  }
  if (p < stop) {
    let q = p;
    for (let n = 0; n < SPACE_WINDOW && q > a; n++) {
      q--;
      if (q > a && isLow(text.charCodeAt(q)) && isHigh(text.charCodeAt(q - 1))) q--;
      if (text.charCodeAt(q) === 32) {
        p = q + 1;
        break;
      }
    }
  }
  return p;
}

/**
 * How `parts` cuts `markdown`: [start, end, reopen, close] for each part, the spans
 * following each other from 0 to the end; a part that starts inside a code fence starts
 * with `reopen` (the line that opened it), one that ends inside one ends with `close` (its
 * fence mark); "" otherwise. (budget.py part_spans, by code point.)
 * @param {string} markdown
 * @param {number} [budget]
 * @returns {Span[]}
 */
export function partSpans(markdown, budget = ANSWER_TOKENS) {
  const lines = new Lines(markdown, budget);
  const { starts, fences, count } = lines;
  const end = markdown.length;
  /** @type {Span[]} */
  const spans = [];
  let a = 0; // where the part starts
  let first = 0; // its line
  while (a < end) {
    const opener = fences[first];
    let c = lines.decorations(opener)[0];
    let before = c;
    let block = 0; // the last block start the part may end at (0: none)
    let j = first;
    let seg = a;
    for (;;) { // line j joins the part, from seg
      before = c;
      const segEnd = lines.end(j);
      if (segEnd - seg > budget * 3.5) break; // longer than a part whatever it holds
      c = sum(c, counts(markdown, seg, segEnd));
      if (j + 1 === count) {
        if (fits(c, [0, 0], budget)) block = count; // the rest: the last part
        break;
      }
      if (!fits(c, lines.decorations(fences[j + 1])[1], budget)) break;
      if (lines.blockStarts(j + 1)) block = j + 1;
      j += 1;
      seg = segEnd;
    }
    const reopen = fenceLines(opener, budget)[0];
    if (block === count) {
      spans.push([a, end, reopen, ""]);
      break;
    }
    let cut = 0; // inside a line longer than a part
    if (block && lines.blockFits(block)) cut = block; // between blocks
    else if (j > first && lines.lineFits(j)) cut = j; // between the lines of a block longer than a part
    if (cut) {
      spans.push([a, starts[cut], reopen, fenceLines(fences[cut], budget)[1]]);
      a = starts[cut];
      first = cut;
      continue;
    }
    const stop = lines.end(j) - (j + 1 < count ? 1 : 0);
    const close = fenceLines(fences[j], budget)[1];
    let p = insideLine(markdown, seg, stop, sum(before, lines.decorations(fences[j])[2]), budget);
    if (p === seg && seg > a) { // nothing of line j fits after what the part holds: it starts the next
      spans.push([a, seg, reopen, close]);
      a = seg;
      first = j;
      continue;
    }
    if (p === a) p = a + width(markdown, a); // a budget too small for anything: a character a part
    spans.push([a, p, reopen, close]);
    a = p;
    first = j;
  }
  return spans;
}

/**
 * `markdown` in parts of at most `budget` estimated tokens each (partSpans): joined, they
 * are all of it, but for the fence lines that close a code block cut in two at the end of
 * a part and reopen it at the start of the next.
 * @param {string} markdown
 * @param {number} [budget]
 * @returns {string[]}
 */
export function parts(markdown, budget = ANSWER_TOKENS) {
  if (estimateTokens(markdown) <= budget) return [markdown];
  return partSpans(markdown, budget).map(([a, b, reopen, close]) => {
    let text = markdown.slice(a, b);
    if (reopen) text = `${reopen}\n${text}`;
    if (close) text += `${text.endsWith("\n") ? "" : "\n"}${close}\n`;
    return text;
  });
}
