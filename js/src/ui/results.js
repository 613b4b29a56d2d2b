// @ts-check
/**
 * The results as the reader sees them (DocSearch-style): one group per page, headed by
 * the page title and ordered by the page's best hit, its hits beneath in rank order.
 * Hits with the same URL (several parameters of one class share its anchor, every chunk
 * of a long code block its section's) are one entry: the passage of the best hit, or of
 * the hit that holds the most names the query asks for (`codeline19999`, a row's key:
 * lexical.js identifierTokens), and how many more matched there. Its link leads to that
 * name on the page with a text fragment (`#anchor:~:text=codeline19999`): a line of a
 * code block or a table row has no id of its own. The ranking itself stays the
 * backend's (`SearchDialog.results`); this module only arranges it.
 *
 * ARIA: the WAI-ARIA listbox with grouped options (a `group` per page, labelled by its
 * `presentation` header), so a screen reader says "StandardScaler, group" before the
 * options of that page. Document text is inserted as text nodes only.
 *
 * A link is only ever an http(s) URL (`resultHref`): of this site's origin for its own
 * results, of the federated site for its (the worker kept only those under its root). A
 * result that is not well-formed, or whose URL is anything else (`javascript:`, `data:`),
 * is not shown: the worker checks every record, this is the second lock.
 * @module results
 */

import { tokenize } from "../search/lexical.js";
import { titleParts } from "./highlight.js";
import { h } from "./dom.js";

/** @typedef {import("./backend.js").Result} Result */
/** @typedef {{result: Result, merged: Result[], kind: string}} Entry  merged: lower hits with the same URL */
/** @typedef {{page: string, title: string, entries: Entry[]}} Group */

const PREFIX = "sphinx-rag";
export const KINDS = ["api", "example", "guide"];
export const KIND_LABELS = /** @type {Record<string, string>} */ ({ api: "API", example: "Example", guide: "Guide" });

/** @param {Result} r */
export function kindOf(r) {
  return KINDS.includes(r.kind) ? r.kind : "guide";
}

/** The page of a URL: without its #anchor. @param {string} url */
export function pageOf(url) {
  const at = url.indexOf("#");
  return at < 0 ? url : url.slice(0, at);
}

/**
 * The document a result comes from: its chunk id's part before "#" ("guide#intro:0"),
 * else its page. A singlehtml site puts every document in one file, and groups them apart.
 * A federated site's documents are its own (its name first: two sites both have "index").
 * @param {Result} r
 */
export function documentOf(r) {
  const at = r.id.indexOf("#");
  const doc = at < 0 ? pageOf(r.url) : r.id.slice(0, at);
  return r.source ? `${r.source}\u0000${doc}` : doc;
}

/**
 * How many of `names` (query identifier tokens) a result's text holds.
 * @param {Result} r @param {string[]} names
 */
export function namesHeld(r, names) {
  if (!names.length) return 0;
  const tokens = new Set(tokenize(r.text));
  return names.filter((n) => tokens.has(n)).length;
}

/**
 * Whether a result has the fields the dialog renders, as strings (its display as blocks of strings).
 * @param {any} r
 */
export function wellFormedResult(r) {
  return r != null && ["url", "title", "kind", "text", "id"].every((k) => typeof r[k] === "string")
    && (r.source === undefined || typeof r.source === "string")
    && (r.display == null || (Array.isArray(r.display) && r.display.every((/** @type {unknown} */ b) => Array.isArray(b)
      && b.length >= 2 && b.every((x) => typeof x === "string"))));
}

/**
 * The link of a result, or null when this page must not link it: an http(s) URL, of this
 * site's origin for its own results (file: for a page opened from disk), any http(s) for a
 * federated site's (the worker kept those under that site's root only).
 * @param {{url: string, source?: string}} r
 * @param {URL} siteRoot
 * @returns {string | null}
 */
export function resultHref(r, siteRoot) {
  if (typeof r.url !== "string") return null;
  let url;
  try {
    url = new URL(r.url, siteRoot);
  } catch {
    return null;
  }
  if (r.source) return /^https?:$/.test(url.protocol) ? url.href : null;
  if (siteRoot.protocol === "file:") return url.protocol === "file:" ? url.href : null;
  return /^https?:$/.test(url.protocol) && url.origin === siteRoot.origin ? url.href : null;
}

/**
 * Ranked results -> groups by document (ordered by each one's best hit), one entry per URL,
 * showing the hit that holds the most of `names`, else the best.
 * @param {Result[]} results  in rank order
 * @param {string[]} [names]  the query's identifier tokens (lexical.js identifierTokens)
 * @returns {Group[]}
 */
export function groupResults(results, names = []) {
  /** @type {Map<string, Group>} */
  const groups = new Map();
  /** @type {Map<string, Entry>} */
  const byUrl = new Map();
  for (const result of results) {
    if (!wellFormedResult(result)) continue; // the worker checked it: never here
    const same = byUrl.get(result.url);
    if (same) {
      if (namesHeld(result, names) > namesHeld(same.result, names)) { // it shows what was asked for
        same.merged.push(same.result);
        same.result = result;
      } else {
        same.merged.push(result);
      }
      continue;
    }
    /** @type {Entry} */
    const entry = { result, merged: [], kind: kindOf(result) };
    byUrl.set(result.url, entry);
    const doc = documentOf(result);
    let group = groups.get(doc);
    if (!group) {
      group = { page: pageOf(result.url), title: titleParts(result.title)[0], entries: [] };
      groups.set(doc, group);
    }
    group.entries.push(entry);
  }
  return [...groups.values()];
}

/**
 * Only the entries of one kind ("all": every entry); pages left empty are dropped.
 * @param {Group[]} groups
 * @param {string} kind
 * @returns {Group[]}
 */
export function filterGroups(groups, kind) {
  if (kind === "all") return groups;
  return groups
    .map((g) => ({ ...g, entries: g.entries.filter((e) => e.kind === kind) }))
    .filter((g) => g.entries.length);
}

/**
 * Entries per kind, and "all".
 * @param {Group[]} groups
 * @returns {Record<string, number>}
 */
export function kindCounts(groups) {
  /** @type {Record<string, number>} */
  const counts = { all: 0 };
  for (const g of groups) {
    for (const e of g.entries) {
      counts[e.kind] = (counts[e.kind] || 0) + 1;
      counts.all++;
    }
  }
  return counts;
}

/** "12 results on 5 pages". @param {Group[]} groups */
export function countText(groups) {
  const n = groups.reduce((sum, g) => sum + g.entries.length, 0);
  const plural = (/** @type {number} */ k, /** @type {string} */ word) => `${k} ${word}${k === 1 ? "" : "s"}`;
  return n ? `${plural(n, "result")} on ${plural(groups.length, "page")}` : "";
}

/**
 * A text fragment (`:~:text=`) to the first word of a result's passage that is one of
 * `names`, to append to its URL, or "". The browser scrolls to that word (a code line, a
 * table row; the anchor if the page no longer has it). Only for a chunk that does not open
 * its anchor (the anchor alone lands on it) and a name that is not in its title (a page's
 * or section's own name is on top of it and in the navigation: the first of it in the page
 * is no better than the anchor).
 * @param {Result} r @param {string[]} names
 */
export function textFragment(r, names) {
  if (!names.length || r.id.endsWith(":0")) return "";
  const own = new Set(tokenize(r.title));
  const wanted = new Set(names.filter((n) => !own.has(n)));
  if (!wanted.size) return "";
  const blocks = Array.isArray(r.display) ? r.display.map((b) => b[1]) : [r.text];
  for (const text of blocks.filter((b) => typeof b === "string")) {
    for (const m of text.matchAll(/[\p{L}\p{N}_]+/gu)) {
      if (tokenize(m[0]).some((t) => wanted.has(t))) {
        return `${r.url.includes("#") ? "" : "#"}:~:text=${encodeURIComponent(m[0])}`;
      }
    }
  }
  return "";
}

/**
 * The entries' options into the listbox, group by group, in visual order.
 * @param {HTMLElement} listbox
 * @param {Group[]} groups
 * @param {{siteRoot: URL, passage: (r: Result) => Node, source?: (r: Result) => Node | null, names?: string[]}} how
 *   passage: the body of one entry; source: the chip naming its site (federated search), if any;
 *   names: the query's identifier tokens (links go to the first one shown)
 * @returns {Entry[]} the entries in visual order (option i is entries[i])
 */
export function renderGroups(listbox, groups, { siteRoot, passage, source, names = [] }) {
  listbox.replaceChildren();
  /** @type {Entry[]} */
  const order = [];
  groups.forEach((group, g) => {
    const linked = group.entries.map((entry) => ({ entry, href: resultHref(entry.result, siteRoot) })).filter((e) => e.href !== null);
    if (!linked.length) return;
    const headerId = `${PREFIX}-group-${g}`;
    const list = h("ul", { role: "group", class: `${PREFIX}-group`, "aria-labelledby": headerId }, [
      h("li", { role: "presentation", id: headerId, class: `${PREFIX}-group-title` }, [group.title]),
    ]);
    for (const { entry, href } of linked) {
      list.append(option(entry, order.length, /** @type {string} */ (href), passage, source, names));
      order.push(entry);
    }
    listbox.append(list);
  });
  return order;
}

/**
 * @param {Entry} entry
 * @param {number} index
 * @param {string} url  resultHref's
 * @param {(r: Result) => Node} passage
 * @param {((r: Result) => Node | null) | undefined} source
 * @param {string[]} names
 */
function option(entry, index, url, passage, source, names) {
  const r = entry.result;
  const parts = titleParts(r.title);
  const path = h("span", { class: `${PREFIX}-path` });
  // under the page's header: the section path inside the page (the page title alone at its top)
  (parts.length > 1 ? parts.slice(1) : parts).forEach((part, j) => {
    if (j) path.append(h("span", { class: `${PREFIX}-sep`, "aria-hidden": "true" }, [" › "]));
    path.append(part); // not highlighted: identifiers would light up part by part
  });
  const body = [
    h("span", { class: `${PREFIX}-head` }, [
      h("span", { class: `${PREFIX}-badge ${PREFIX}-badge--${entry.kind}` }, [KIND_LABELS[entry.kind]]),
      ...[source?.(r)].filter((chip) => chip != null),
      path,
    ]),
    passage(r),
  ];
  if (entry.merged.length) {
    const n = entry.merged.length;
    body.push(h("span", { class: `${PREFIX}-more` }, [`+${n} more match${n === 1 ? "" : "es"} here`]));
  }
  const href = url + textFragment(r, names);
  const link = h("a", { href, tabindex: "-1", class: `${PREFIX}-link` }, body);
  return h("li", {
    id: `${PREFIX}-option-${index}`,
    role: "option",
    "aria-selected": "false",
    class: `${PREFIX}-option`,
    "data-index": String(index),
    "data-id": r.id,
    "data-ids": JSON.stringify([r, ...entry.merged].sort((a, b) => a.rank - b.rank).map((m) => m.id)), // in rank order
    "data-kind": entry.kind,
  }, [link]);
}
