// @ts-check
/**
 * "View as Markdown · Copy as Markdown" on each page that has a Markdown twin (the page
 * says so with `<link rel="alternate" type="text/markdown" href="...">`, searchbar.py).
 * Small and where the theme keeps its own page links: beside its "Show Source" link
 * (alabaster's and basic's "This Page", pydata's secondary sidebar, furo's icons, the
 * RTD breadcrumbs), else as a last line of the article. Copy fetches the twin and puts
 * it on the clipboard, saying "Copied" (or why not) on the button for a moment.
 * @module markdown_link
 */

import { h } from "./dom.js";

const CLASS = "sphinx-rag-markdown";

/**
 * The twin of this page, from its <link rel="alternate" type="text/markdown">, or null.
 * @param {Document} doc
 * @returns {URL | null}
 */
export function twinOfPage(doc) {
  const link = doc.querySelector('link[rel="alternate"][type="text/markdown"][href]');
  const href = link?.getAttribute("href");
  if (!href) return null;
  try {
    const url = new URL(href, doc.baseURI);
    return url.origin === new URL(doc.baseURI).origin ? url : null;
  } catch {
    return null;
  }
}

/**
 * Where the links go: after the theme's link to the page's source (a list item after its
 * item, a block like its block, with its classes: the theme's spacing), else the article's end.
 * @param {Document} doc
 * @returns {{parent: Element, before: Node | null, tag: string, classes: string}}
 */
function slot(doc) {
  const source = doc.querySelector('a[href*="_sources/"]');
  if (source) {
    const item = source.closest("li");
    if (item?.parentElement) return { parent: item.parentElement, before: item.nextSibling, tag: "li", classes: "" };
    const holder = source.parentElement;
    if (holder?.parentElement && holder !== doc.body) {
      const tag = holder.tagName.toLowerCase() === "p" ? "p" : "div";
      return { parent: holder.parentElement, before: holder.nextSibling, tag, classes: holder.className };
    }
  }
  const main = doc.querySelector("article, [role=main], main, .body, .document") ?? doc.body;
  return { parent: main, before: null, tag: "p", classes: "" };
}

/**
 * Add the links to the page (nothing when it has no twin); returns the element, or null.
 * @param {Document} doc
 * @param {{fetchText?: (url: URL) => Promise<string>, copy?: (text: string) => Promise<void>}} [io]
 * @returns {HTMLElement | null}
 */
export function addMarkdownLink(doc, io = {}) {
  const twin = twinOfPage(doc);
  if (!twin || doc.querySelector(`.${CLASS}`)) return null;
  const fetchText = io.fetchText ?? (async (/** @type {URL} */ url) => {
    const response = await fetch(url, { credentials: "same-origin" });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response.text();
  });
  const copy = io.copy ?? ((/** @type {string} */ text) => navigator.clipboard.writeText(text));
  const where = slot(doc);
  const view = h("a", { href: twin.href, type: "text/markdown", class: `${CLASS}-view` }, ["View as Markdown"]);
  const button = h("button", { type: "button", class: `${CLASS}-copy`, title: "Copy this page as Markdown" },
    ["Copy as Markdown"]);
  let timer = 0;
  button.addEventListener("click", async () => {
    let said;
    try {
      await copy(await fetchText(twin));
      said = "Copied";
    } catch (err) {
      said = "Copy failed";
      console.warn(`sphinx-rag: the page's Markdown could not be copied (${err instanceof Error ? err.message : err})`);
    }
    button.textContent = said;
    clearTimeout(timer);
    timer = window.setTimeout(() => { button.textContent = "Copy as Markdown"; }, 2000);
  });
  const el = h(where.tag, { class: `${where.classes} ${CLASS}`.trim() }, [view, " \u00b7 ", button]);
  where.parent.insertBefore(el, where.before);
  return el;
}
