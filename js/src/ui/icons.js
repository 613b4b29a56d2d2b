// @ts-check
/** Inline SVG icons (no icon font, no request): currentColor strokes, hidden from screen readers. */

const PREFIX = "sphinx-rag";
const NS = "http://www.w3.org/2000/svg";

/**
 * @param {string} tag
 * @param {Record<string, string>} attrs
 */
function svgNode(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

/** @param {Element[]} children */
function icon(children) {
  const svg = svgNode("svg", { viewBox: "0 0 24 24", "aria-hidden": "true", class: `${PREFIX}-icon` });
  svg.append(...children);
  return svg;
}

/** A magnifying glass. */
export function searchIcon() {
  return icon([svgNode("circle", { cx: "10.5", cy: "10.5", r: "6.5" }), svgNode("path", { d: "M15.5 15.5 L21 21" })]);
}

/** A clock, for a recent search. */
export function historyIcon() {
  return icon([svgNode("circle", { cx: "12", cy: "12", r: "8" }), svgNode("path", { d: "M12 7.5 V12 L15 14" })]);
}
