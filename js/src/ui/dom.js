// @ts-check
/**
 * The one DOM builder of the UI: attributes via setAttribute and children as nodes
 * or text nodes, so document and LLM text can never become HTML.
 * @param {string} tag
 * @param {Record<string, string>} [attrs]
 * @param {(Node | string)[]} [children]
 * @returns {HTMLElement}
 */
export function h(tag, attrs = {}, children = []) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) el.append(c); // strings become text nodes
  return el;
}

/**
 * Left and right arrows move the focus along a row of chips (buttons), wrapping around:
 * one tab stop for the row, as the kind filters and the site chips both want.
 * @param {HTMLElement} row
 */
export function arrowKeysWalk(row) {
  row.addEventListener("keydown", (e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const chips = Array.from(row.querySelectorAll("button"));
    const at = chips.indexOf(/** @type {HTMLButtonElement} */ (e.target));
    if (at < 0) return;
    e.preventDefault();
    chips[(at + (e.key === "ArrowRight" ? 1 : -1) + chips.length) % chips.length].focus();
  });
}
