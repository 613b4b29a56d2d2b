// @ts-check
/**
 * The display form of a chunk (sphinx_rag/chunk/display.py): what a reader sees, apart
 * from the text that was embedded. A display is a list of blocks [type, text]:
 * "p" prose ("\n" keeps list items apart), "code" (newlines kept), "term" (a signature or
 * a numpydoc entry line), "label" (the numpydoc section), "lead" (the overlap repeated
 * from the previous chunk: dropped when the passage shows that chunk too).
 * joinDisplays and displayText are Python's join_displays and display_text (parity:
 * tests/fixtures/rankings.json holds both for every result).
 * @module display
 */

/** @typedef {[string, string]} DisplayBlock */
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
 * The display of a passage of consecutive chunks: each chunk's blocks in order, the
 * "lead" of every chunk after the first dropped.
 * @param {Display[]} displays
 * @returns {Display}
 */
export function joinDisplays(displays) {
  /** @type {Display} */
  const out = [];
  displays.forEach((display, n) => {
    for (const b of display) if (!(n && b[0] === "lead")) out.push([b[0], b[1]]);
  });
  return out;
}

/**
 * Plain text of a display (what the LLM reads): paragraphs apart, code indented by four
 * spaces, a label ("Parameters:") and a term each on the line above what follows.
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
    glue = kind === "label" || kind === "term" ? "\n" : "\n\n";
  });
  return out;
}
