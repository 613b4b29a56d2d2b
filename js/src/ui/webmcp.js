// @ts-check
/**
 * WebMCP: the page offers its search to an agent in the browser (Chrome's origin trial,
 * 2026): `registerTool({name, description, inputSchema, execute, annotations})` on
 * `document.modelContext` (the current draft) or `navigator.modelContext` (earlier ones).
 * Where neither is there, nothing is registered and nothing else happens.
 *
 * - `search_docs` (query, k, kind): the same static index the search box reads, answered
 *   by the worker (the backend's `passages`: this site's ranking in its current tier, the
 *   static encoder's without the model), as Markdown: a `## n. title`, its URL and kind,
 *   then the passage (like `sphinx-rag mcp`'s answer), page text and titles escaped as the
 *   MCP server and the twins escape them (markdown_text.js): text, never markup.
 * - `read_page` (url, part): a page's Markdown twin, fetched from this site only (its
 *   origin, under its root), in parts of about 20,000 tokens.
 *
 * Both are read-only. A wrong argument or a failure is one thrown line ("sphinx-rag: ..."),
 * echoing at most a short piece of a bad value (as the MCP server's errors).
 * Every answer ends with its size in estimated tokens, as the MCP server's do.
 * @module webmcp
 */

import { RedirectRefused, fetchWithinOrigin } from "../search/redirects.js";
import { ANSWER_TOKENS, estimateTokens, parts } from "./budget.js";
import { atxHeading, collapse, displayMarkdown, escapeLine, escapeProse, markdownUrl } from "./markdown_text.js";

export { ANSWER_TOKENS, estimateTokens, parts };

/** @typedef {import("./backend.js").Result} Result */
/** @typedef {{content: {type: "text", text: string}[]}} ToolAnswer */
/** @typedef {{name: string, description: string, inputSchema: object, annotations: {readOnlyHint: boolean},
 *             execute: (args: Record<string, any>) => Promise<ToolAnswer>}} Tool */

export const KINDS = ["any", "api", "guide", "example"];
export const MAX_K = 20;
const TWIN_BYTES = 8 << 20; // a twin is read whole before it is cut in parts: at most this much

/**
 * The model context API of this page, or null (feature detection: a `registerTool` function).
 * @param {any} win
 * @returns {{registerTool: (tool: Tool) => unknown} | null}
 */
export function modelContextOf(win) {
  for (const candidate of [win?.document?.modelContext, win?.navigator?.modelContext]) {
    if (candidate && typeof candidate.registerTool === "function") return candidate;
  }
  return null;
}

/** @param {string} text */
function sized(text) {
  const body = text.replace(/\n+$/, "");
  return `${body}\n\n(\u2248${(estimateTokens(body) + 6).toLocaleString("en-US")} tokens)\n`;
}

/**
 * The URL of the Markdown twin of a page of this site (llmstxt.org: the page's URL with
 * `.md` appended, `index.html.md` for a URL ending in `/`), or null when `url` is not
 * under `siteRoot` (another origin, or above the root).
 * @param {string} url  absolute, or relative to the site root
 * @param {URL} siteRoot
 * @returns {URL | null}
 */
export function twinUrl(url, siteRoot) {
  let page;
  try {
    page = new URL(url, siteRoot);
  } catch {
    return null;
  }
  if (page.origin !== siteRoot.origin || !page.pathname.startsWith(siteRoot.pathname)) return null;
  if (!/^https?:$/.test(page.protocol) && page.protocol !== "file:") return null;
  page.hash = "";
  page.search = "";
  if (page.pathname.endsWith("/")) page.pathname += "index.html.md";
  else if (!page.pathname.endsWith(".md")) page.pathname += ".md";
  return page;
}

/**
 * The search answer: each result under `## n. title` with its absolute URL and kind, then
 * its passage as Markdown, page text escaped (as `sphinx-rag mcp`'s search_docs).
 * @param {string} query
 * @param {Result[]} results
 * @param {URL} siteRoot
 */
export function searchAnswer(query, results, siteRoot) {
  const shown = query.length <= 80 ? query : `${query.slice(0, 79)}\u2026`;
  if (!results.length) return `No results for ${JSON.stringify(shown)}.\n`;
  /** @type {string[]} */
  const lines = [];
  results.forEach((r, i) => {
    const url = new URL(r.url, siteRoot).href;
    lines.push(atxHeading(2, `${i + 1}. ${r.title}`), `URL: ${markdownUrl(url)}`, `Kind: ${escapeLine(r.kind)}`, "",
      displayMarkdown(r.display ?? []) || escapeProse(r.text), "");
  });
  let text = lines.join("\n");
  while (estimateTokens(text) > ANSWER_TOKENS && results.length > 1) {
    results = results.slice(0, -1);
    text = searchAnswer(query, results, siteRoot);
  }
  return text;
}

/**
 * A bad argument as an error repeats it: as JSON, cut to 40 characters with "…" (the MCP
 * server's argument_error).
 * @param {unknown} value
 */
export function shown(value) {
  let text;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length <= 40 ? text : `${clip(text, 39)}\u2026`;
}

/**
 * The first `limit` characters (code points: no half of a pair) of `text`.
 * @param {string} text
 * @param {number} limit
 */
export function clip(text, limit) {
  if (text.length <= limit) return text;
  let out = "";
  let n = 0;
  for (const ch of text) {
    if (n++ === limit) break;
    out += ch;
  }
  return out;
}

/**
 * Throw the one-line error `message` unless `value` (whitespace of any kind, U+2028 and a
 * URL's newlines too, as one space: the MCP server's tool_error).
 * @param {any} value
 * @param {string} message
 */
function need(value, message) {
  if (!value) throw failure(message);
}

/** The one-line error of `message`. @param {string} message */
function failure(message) {
  return new Error(`sphinx-rag: ${collapse(message)}`);
}

/**
 * Register the tools where the browser offers WebMCP; the names registered ([] without it).
 * @param {{win: any, siteRoot: URL, passages: (query: string, k: number) => Promise<Result[]>,
 *          fetchText?: (url: URL) => Promise<{ok: boolean, status: number, url: string, text: string}>}} options
 *   passages: this site's ranked passages for a query (the backend's); fetchText: GET a same-origin URL
 * @returns {string[]}
 */
export function registerWebMcp({ win, siteRoot, passages, fetchText }) {
  const context = modelContextOf(win);
  if (!context) return [];
  const get = fetchText ?? (async (/** @type {URL} */ url) => {
    // a redirect to another origin is refused before anything is sent there (search/redirects.js)
    const response = await fetchWithinOrigin((u, init) => fetch(u, init), url.href, { credentials: "same-origin" });
    const length = Number(response.headers.get("content-length") || 0);
    if (length > TWIN_BYTES) return { ok: false, status: 413, url: response.url, text: "" };
    return { ok: response.ok, status: response.status, url: response.url, text: response.ok ? await response.text() : "" };
  });

  /** @type {Tool} */
  const search = {
    name: "search_docs",
    description: "Search this documentation site (keyword and semantic search, the same ranking as its search box) "
      + "and return the best passages, each with its title, URL, kind (api: reference of a class, function or "
      + "parameter; guide: narrative text; example: a gallery example) and text. Use it first for any question "
      + "about this library: how to do something, which object to use, what a parameter does, what an error means.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "what to look for: words, a question, an error message" },
        k: { type: "integer", minimum: 1, maximum: MAX_K, default: 5, description: "how many passages (default 5)" },
        kind: { type: "string", enum: KINDS, default: "any", description: "only passages of this kind (default any)" },
      },
      required: ["query"],
    },
    annotations: { readOnlyHint: true },
    async execute(args) {
      const query = typeof args?.query === "string" ? args.query.replace(/\s+/g, " ").trim() : "";
      const k = args?.k === undefined ? 5 : args.k;
      const kind = args?.kind === undefined ? "any" : args.kind;
      const problems = [];
      if (!query) problems.push("query must be text: words, a question or an error message");
      if (!Number.isInteger(k) || k < 1 || k > MAX_K) problems.push(`k (how many passages) must be a whole number from 1 to ${MAX_K} (got ${shown(k)})`);
      if (!KINDS.includes(kind)) problems.push(`kind must be one of ${KINDS.join(", ")} (got ${shown(kind)})`);
      need(!problems.length, `search_docs: ${problems.join("; ")}`);
      const depth = kind === "any" ? k : Math.min(4 * k, 50);
      const found = (await passages(query, depth)).filter((r) => r.url && (kind === "any" || r.kind === kind)).slice(0, k);
      return { content: [{ type: "text", text: sized(searchAnswer(query, found, siteRoot)) }] };
    },
  };

  /** @type {Tool} */
  const read = {
    name: "read_page",
    description: "Read one page of this documentation site as Markdown (headings, prose, code, API signatures and "
      + "parameters, tables of objects and tables of contents as links to other pages' Markdown). Give a URL of "
      + "this site as search_docs returns it, or relative to the site (user_guide/index.html), or of its .md twin. "
      + `A page over ${ANSWER_TOKENS.toLocaleString("en-US")} tokens comes in parts: ask for part 2 and on.`,
    inputSchema: {
      type: "object",
      properties: {
        url: { type: "string", description: "a page URL of this site" },
        part: { type: "integer", minimum: 1, default: 1, description: "which part of a long page (default 1)" },
      },
      required: ["url"],
    },
    annotations: { readOnlyHint: true },
    async execute(args) {
      const url = typeof args?.url === "string" ? args.url.trim() : "";
      const part = args?.part === undefined ? 1 : args.part;
      need(url, "read_page: url must be a page URL of this site, as search_docs gives it");
      need(Number.isInteger(part) && part >= 1, `read_page: part must be a whole number from 1 (got ${shown(part)})`);
      const twin = twinUrl(url, siteRoot);
      need(twin, `read_page: ${clip(url, 200)} is not a page of this site (${siteRoot.href})`);
      const target = /** @type {URL} */ (twin);
      let answer;
      try {
        answer = await get(target);
      } catch (err) {
        need(!(err instanceof RedirectRefused), `read_page: ${clip(target.href, 200)} redirects off this site: refused, nothing was sent there`);
        throw failure(`read_page: cannot fetch ${clip(target.href, 200)} (${clip(String(err instanceof Error ? err.message : err), 200)})`);
      }
      need(!answer.url || twinUrl(answer.url, siteRoot), `read_page: ${clip(target.href, 200)} was redirected off this site: refused`);
      need(answer.ok, `read_page: ${clip(url, 200)} has no Markdown twin here (HTTP ${answer.status}): `
        + "give a page URL from search_docs");
      const pieces = parts(answer.text);
      need(part <= pieces.length, `read_page: ${clip(target.href, 200)} is read in ${pieces.length} part${pieces.length > 1 ? "s" : ""}: `
        + `part must be from 1 to ${pieces.length}; got ${part}`);
      let head = `<!-- ${markdownUrl(target.href.replace(/\.md$/, "").replace(/index\.html$/, ""))} -->\n`;
      if (pieces.length > 1) {
        head += `<!-- part ${part} of ${pieces.length}${part < pieces.length ? `: read_page with part=${part + 1} for the next` : ""} -->\n`;
      }
      return { content: [{ type: "text", text: sized(head + pieces[part - 1]) }] };
    },
  };

  const names = [];
  for (const tool of [search, read]) {
    try {
      context.registerTool(tool);
      names.push(tool.name);
    } catch (err) {
      console.warn(`sphinx-rag: WebMCP did not take the ${tool.name} tool (${err instanceof Error ? err.message : err})`);
    }
  }
  return names;
}
