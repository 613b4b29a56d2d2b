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
