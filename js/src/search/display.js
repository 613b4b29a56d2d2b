// @ts-check
/**
 * The display form of a chunk (sphinx_rag/chunk/display.py): what a reader sees, apart
 * from the text that was embedded. A display is a list of blocks [type, text]:
 * "p" prose ("\n" keeps list items apart), "code" (newlines kept; its language third, if known), "term" (a signature or
 * a numpydoc entry line), "label" (the numpydoc section), "lead" (the overlap repeated
 * from the previous chunk: dropped when the passage shows that chunk too), "heading" (the
 * section a passage's next text comes from, added by joinDisplays).
 * joinDisplays and displayText are Python's join_displays and display_text (parity:
 * tests/fixtures/rankings.json holds both for every result).
 * @module display
 */

/** A block; a code block may name its language third: ["code", "x = 1", "python"].
 * @typedef {[string, string] | [string, string, string]} DisplayBlock */
/** @typedef {DisplayBlock[]} Display */

/**
 * A record's display; a record of an index built before displays existed: its text.
 * @param {{text: string, display?: Display}} record
 * @returns {Display}
 */
export function recordDisplay(record) {
  if (Array.isArray(record.display)) return record.display;
  const text = record.text.split("\n").map((l) => l.split(/\s+/).filter(Boolean).join(" ")).filter(Boolean).join("\n");
  return [["p", text]];
}

/**
 * The name of a title's own section, its last part ("Guide > CV > K-fold" -> "K-fold"):
 * what a "heading" block says.
 * @param {string} title
 */
export function sectionName(title) {
  return title.split(" > ").at(-1) ?? title;
}

/**
 * The display of a passage of consecutive chunks: each chunk's blocks in order, the
 * "lead" of every chunk after the first dropped. A passage is shown under its hit's
 * title (`shownTitle`) but can start in, or run into, a neighbouring section: given each
 * chunk's `titles` (null for an API part, whose display names its object), a chunk of
 * another section than the text above it opens with a "heading" block, the last part of
 * its title.
 * @param {Display[]} displays
 * @param {(string | null)[]} [titles]
 * @param {string} [shownTitle]
 * @returns {Display}
 */
export function joinDisplays(displays, titles, shownTitle = "") {
  /** @type {Display} */
  const out = [];
  let current = shownTitle;
  displays.forEach((display, n) => {
    const title = titles ? titles[n] : null;
    if (title && title !== current) out.push(["heading", sectionName(title)]);
    current = title || current;
    for (const b of display) if (!(n && b[0] === "lead")) out.push(/** @type {DisplayBlock} */ ([...b]));
  });
  return out;
}

/**
 * Plain text of a display (what the LLM reads): paragraphs apart, code indented by four
 * spaces, a label ("Parameters:"), a term and a section heading each on the line above
 * what follows.
 * @param {Display} display
 * @returns {string}
 */
export function displayText(display) {
  let out = "";
  let glue = "";
  display.forEach(([kind, text], i) => {
    let piece = kind === "code" ? text.split("\n").map((l) => (l.trim() ? `    ${l}` : l)).join("\n") : text;
    if (kind === "label") piece += ":";
    out += (i ? glue : "") + piece;
    glue = kind === "label" || kind === "term" || kind === "heading" ? "\n" : "\n\n";
  });
  return out;
}
