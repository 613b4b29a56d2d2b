// @ts-check
/**
 * The empty dialog's suggested questions: mined from the site at build time
 * (sphinx_rag/index/suggest.py: section titles and object cards turned into questions the
 * search answers well) or set by the maintainer (sphinx_rag_suggestions), and read from
 * the manifest's settings.suggestions ([question, url] pairs): no request of their own.
 * They are listbox options like recent searches: arrows move, Enter searches.
 * @module suggestions
 */

import { h } from "./dom.js";

const PREFIX = "sphinx-rag";

/**
 * The questions of a manifest's `settings.suggestions` (malformed entries dropped).
 * @param {unknown} value
 * @returns {string[]}
 */
export function suggestedQuestions(value) {
  if (!Array.isArray(value)) return [];
  return value
    .map((entry) => (Array.isArray(entry) ? entry[0] : entry))
    .filter((q) => typeof q === "string" && q.trim())
    .map((q) => q.trim())
    .slice(0, 12);
}

/**
 * The "Suggested questions" group of the listbox; its options are numbered from `first`.
 * @param {string[]} questions
 * @param {number} first  the index of its first option among the listbox's options
 * @param {() => Node} icon
 * @returns {HTMLElement}
 */
export function suggestionGroup(questions, first, icon) {
  const title = `${PREFIX}-suggested-title`;
  const group = h("ul", { role: "group", class: `${PREFIX}-group`, "aria-labelledby": title }, [
    h("li", { role: "presentation", id: title, class: `${PREFIX}-group-title` }, ["Suggested questions"]),
  ]);
  questions.forEach((q, i) => {
    group.append(h("li", {
      id: `${PREFIX}-option-${first + i}`, role: "option", "aria-selected": "false",
      class: `${PREFIX}-option ${PREFIX}-suggestion`, "data-index": String(first + i), "data-search": q,
    }, [h("span", { class: `${PREFIX}-link` }, [icon(), h("span", {}, [q])])]));
  });
  return group;
}
