// @ts-check
/**
 * The dialog inside each theme: its colour scheme from the theme's own switch, and the
 * theme's own search box as the way in.
 *
 * Colour scheme (the dialog and our button get data-sr-scheme="light"|"dark"):
 * - pydata-sphinx-theme: html[data-theme] is "light" or "dark" (its switch resolves "auto");
 * - furo: body[data-theme] is "light", "dark" or "auto" (auto: the system's preference);
 * - other themes: dark only if the page declares a dark `color-scheme` of its own;
 *   alabaster and sphinx_rtd_theme have no dark mode, so the dialog stays light even
 *   when the system is dark (a dark dialog over a white page looks broken).
 * A MutationObserver on <html> and <body> and the media query follow a switch at once.
 *
 * Search boxes: every form that submits to Sphinx's search page with a `q` field
 * (alabaster and basic's #searchbox, furo's sidebar, sphinx_rtd_theme's side nav,
 * pydata's search field). Focusing, clicking or typing in one opens the dialog with
 * what it held; submitting it does too. Sphinx's search page keeps its own box (its
 * forms submit to "" or "#").
 * @module theme
 */

import { h } from "./dom.js";
import { searchIcon } from "./icons.js";

const PREFIX = "sphinx-rag";

/** @returns {"light" | "dark"} */
export function pageScheme() {
  const prefersDark = matchMedia("(prefers-color-scheme: dark)").matches;
  const html = document.documentElement.getAttribute("data-theme"); // pydata
  const body = document.body?.getAttribute("data-theme"); // furo
  for (const value of [html, body]) {
    if (value === "dark" || value === "light") return value;
  }
  if (html === "auto" || body === "auto") return prefersDark ? "dark" : "light";
  const declared = getComputedStyle(document.documentElement).colorScheme || "";
  if (/\bdark\b/.test(declared)) return /\blight\b/.test(declared) && !prefersDark ? "light" : "dark";
  return "light";
}

/**
 * Keep data-sr-scheme of `elements` equal to the page's scheme, now and on every switch.
 * @param {() => Element[]} elements
 */
export function followColorScheme(elements) {
  const apply = () => {
    const scheme = pageScheme();
    for (const el of elements()) {
      if (el.getAttribute("data-sr-scheme") !== scheme) el.setAttribute("data-sr-scheme", scheme);
    }
  };
  apply();
  const observer = new MutationObserver(apply);
  const watched = { attributes: true, attributeFilter: ["data-theme", "data-mode", "class", "style"] };
  observer.observe(document.documentElement, watched);
  if (document.body) observer.observe(document.body, watched);
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", apply);
}

/**
 * Where the dialog's top must go so that it covers none of the theme's own search boxes
 * (pydata-sphinx-theme's search pill, in its header, which it half-covered at some widths):
 * just below the lowest box it would overlap, as long as that is in the top `upTo` of the
 * viewport (a header's box); null: no box in the way, the dialog stays where its style puts it.
 * @param {{top: number, bottom: number, left: number, right: number}} dialog  its box as its style places it
 * @param {{top: number, bottom: number, left: number, right: number, width: number, height: number}[]} boxes
 * @param {number} upTo  the lowest a box may end for the dialog to move below it (px)
 * @returns {number | null}
 */
export function topClearOfBoxes(dialog, boxes, upTo) {
  if (dialog.top <= 0) return null; // full screen (a small screen): it covers the page whole
  let top = null;
  for (const box of boxes) {
    if (!box.width || !box.height) continue; // hidden (the theme's other copy of the pill)
    const overlaps = box.left < dialog.right && box.right > dialog.left && box.top < dialog.bottom
      && box.bottom > dialog.top;
    if (overlaps && box.bottom + 8 <= upTo) top = Math.max(top ?? 0, box.bottom + 8);
  }
  return top;
}

/**
 * The `q` inputs of the theme's search forms (those submitting to Sphinx's search page).
 * @param {URL} searchPage
 * @returns {HTMLInputElement[]}
 */
export function themeSearchInputs(searchPage) {
  /** @type {HTMLInputElement[]} */
  const inputs = [];
  for (const form of document.querySelectorAll("form")) {
    const action = (form.getAttribute("action") || "").trim();
    if (!action || action.startsWith("#") || form.closest("dialog.sphinx-rag")) continue;
    if (new URL(form.action, location.href).pathname !== searchPage.pathname) continue;
    const input = form.querySelector("input[name=q]");
    if (input instanceof HTMLInputElement) inputs.push(input);
  }
  return inputs;
}

/**
 * Make a theme's search box open the dialog (with what was typed into it).
 * @param {HTMLInputElement} input
 * @param {{open: (query?: string) => void, warmUp: () => void, isClosing: () => boolean}} dialog
 */
export function takeOverSearchBox(input, dialog) {
  input.setAttribute("aria-haspopup", "dialog");
  input.setAttribute("aria-keyshortcuts", "Control+K Meta+K /");
  input.setAttribute("autocomplete", "off");
  const openFromBox = () => {
    const typed = input.value;
    input.value = ""; // the text moves to the dialog; a stale copy would come back next time
    dialog.open(typed);
  };
  // focus comes back here when the dialog closes: that must not open it again
  input.addEventListener("focus", () => {
    if (!dialog.isClosing()) openFromBox();
  });
  input.addEventListener("click", openFromBox);
  input.addEventListener("input", openFromBox);
  input.addEventListener("pointerdown", () => dialog.warmUp(), { once: true });
  input.form?.addEventListener("submit", (e) => {
    e.preventDefault();
    openFromBox();
  });
}

/**
 * Put our search button on the page: for themes without a search box of their own, or
 * beside it (data-theme-search="both").
 * @param {() => void} open
 * @returns {HTMLElement}
 */
export function addSearchButton(open) {
  const shortcut = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent) ? "⌘K" : "Ctrl+K";
  const button = h("button", {
    type: "button",
    class: `${PREFIX}-trigger`,
    "aria-haspopup": "dialog",
    "aria-keyshortcuts": "Control+K Meta+K /",
  }, [searchIcon(), h("span", { class: `${PREFIX}-trigger-text` }, ["Search"]), h("kbd", {}, [shortcut])]);
  const searchbox = document.getElementById("searchbox"); // basic, alabaster, nature, ...
  const furo = document.querySelector(".sidebar-search-container");
  const rtd = document.querySelector(".wy-side-nav-search [role=search], .wy-side-nav-search form");
  const sidebar = document.querySelector(".sphinxsidebarwrapper, .sphinxsidebar, [role=navigation]");
  if (searchbox?.parentElement) {
    searchbox.before(button);
  } else if (furo || rtd) {
    /** @type {Element} */ (furo || rtd).before(button);
  } else if (sidebar) {
    sidebar.prepend(button);
  } else {
    button.classList.add(`${PREFIX}-trigger--floating`);
    document.body.append(button);
  }
  button.addEventListener("click", () => open());
  return button;
}
