// @ts-check
// A redirect to another origin is refused before anything is sent there (js/src/search/redirects.js),
// for every read of an index (worker/loader.js guardedFetch) and for WebMCP's read_page: real
// HTTP servers on 127.0.0.1, one that redirects and one on another port that counts what it
// receives. Browsers (opaque redirects) are tests/browser/test_webmcp.py and test_federated_dialog.py.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, test } from "node:test";

import { MAX_REDIRECTS, RedirectRefused, fetchWithinOrigin, mayRedirect } from "../src/search/redirects.js";
import { registerWebMcp } from "../src/ui/webmcp.js";
import { HttpSource, guardedFetch } from "../src/worker/loader.js";

/**
 * A server on 127.0.0.1: `routes` path -> [status, headers, body]; every request's path is kept in `seen`.
 * @param {(path: string, base: string) => [number, Record<string, string>, string] | undefined} route
 */
async function server(route) {
  /** @type {string[]} */
  const seen = [];
  let base = "";
  const httpd = createServer((req, res) => {
    seen.push(req.url ?? "");
    const [status, headers, body] = route(req.url ?? "", base) ?? [404, {}, "not here"];
    res.writeHead(status, { "content-length": String(Buffer.byteLength(body)), ...headers });
    res.end(body);
  });
  await new Promise((resolve) => httpd.listen(0, "127.0.0.1", () => resolve(undefined)));
  base = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (httpd.address()).port}/`;
  after(() => httpd.close());
  return { base, seen };
}

const elsewhere = await server(() => [200, {}, "{\"stolen\": true}"]); // another origin: must receive nothing
const site = await server((path, base) => {
  if (path === "/away.json" || path === "/docs/away.html.md") return [302, { location: `${elsewhere.base}x${path}` }, ""];
  if (path === "/moved.json") return [301, { location: "/here.json" }, ""];
  if (path === "/docs/old.html.md") return [307, { location: `${base}docs/guide.html.md` }, ""];
  if (path === "/here.json" || path === "/docs/guide.html.md") return [200, {}, "{\"here\": true}"];
  if (path.startsWith("/loop")) return [302, { location: `/loop${Number(path.slice(5)) + 1}` }, ""];
  if (path === "/idx/manifest.json") return [302, { location: `${elsewhere.base}idx/manifest.json` }, ""];
  return undefined;
});

test("a redirect to another port is refused before it is requested; one within the origin is followed", async () => {
  await assert.rejects(fetchWithinOrigin(fetch, `${site.base}away.json`),
    (err) => err instanceof RedirectRefused && err.message === `sphinx-rag: ${site.base}away.json redirects to ${elsewhere.base.slice(0, -1)}, another origin: refused`);
  assert.equal(await (await fetchWithinOrigin(fetch, `${site.base}moved.json`)).text(), "{\"here\": true}");
  await assert.rejects(fetchWithinOrigin(fetch, `${site.base}loop0`), new RegExp(`redirects more than ${MAX_REDIRECTS} times: refused$`));
  // every read of an index: the guarded fetch and a site's manifest
  await assert.rejects(guardedFetch(fetch, `${site.base}away.json`, { maxBytes: 100 }), RedirectRefused);
  const source = new HttpSource(`${site.base}idx/`, { caches: null });
  await assert.rejects(source.manifest(), /redirects to http:\/\/127\.0\.0\.1:\d+, another origin: refused/);
  assert.deepEqual(elsewhere.seen, []); // before: the manifest was requested there, then refused
});

test("WebMCP read_page refuses a twin that redirects to another origin, before anything is sent there", async () => {
  /** @type {any} */
  let read;
  const win = { document: { modelContext: { registerTool: (/** @type {any} */ t) => { if (t.name === "read_page") read = t; } } } };
  registerWebMcp({ win, siteRoot: new URL(`${site.base}docs/`), passages: async () => [] });
  await assert.rejects(read.execute({ url: "away.html" }),
    /^Error: sphinx-rag: read_page: http:\/\/127\.0\.0\.1:\d+\/docs\/away\.html\.md redirects off this site: refused/);
  assert.deepEqual(elsewhere.seen, []); // before: requested there, then refused
  const moved = (await read.execute({ url: "old.html" })).content[0].text; // within the site: followed
  assert.match(moved, /\{"here": true\}/);
});

test("a browser's opaque redirect: another site's file is refused at once; this site's asked again in same-origin mode", async () => {
  /** @type {[string, RequestInit | undefined][]} */
  const calls = [];
  const opaque = /** @type {any} */ ({ type: "opaqueredirect", status: 0, url: "", headers: new Headers(), body: null });
  /** @param {(init: RequestInit | undefined) => any} answer */
  const browser = (answer) => /** @type {any} */ (async (/** @type {string} */ url, /** @type {RequestInit} */ init) => {
    calls.push([url, init]);
    return answer(init);
  });
  const remote = browser(() => opaque);
  await assert.rejects(fetchWithinOrigin(remote, "https://other.example/idx/manifest.json", {}, "https://docs.example"),
    /^Error: sphinx-rag: https:\/\/other\.example\/idx\/manifest\.json redirects, and a browser cannot check where to before following: refused/);
  assert.equal(calls.length, 1);
  assert.equal(calls[0][1]?.redirect, "manual");
  calls.length = 0;
  const crossed = browser((init) => {
    if (init?.mode === "same-origin") throw new TypeError("Failed to fetch"); // the browser's network error at the hop away
    return opaque;
  });
  await assert.rejects(fetchWithinOrigin(crossed, "https://docs.example/a.md", {}, "https://docs.example"),
    /^Error: sphinx-rag: https:\/\/docs\.example\/a\.md redirects to another origin: refused$/);
  assert.deepEqual(calls.map(([, init]) => [init?.redirect, init?.mode]), [["manual", undefined], ["follow", "same-origin"]]);
  const within = browser((init) => (init?.mode === "same-origin"
    ? new Response("ok") : opaque));
  assert.equal(await (await fetchWithinOrigin(within, "https://docs.example/a.md", {}, "https://docs.example")).text(), "ok");
});

test("the redirect rule is fetch.py's may_redirect", () => {
  assert.ok(mayRedirect("https://a.org/x", "https://a.org/y"));
  assert.ok(mayRedirect("http://a.org/x", "https://a.org/y")); // TLS added to the same host
  assert.ok(mayRedirect("http://a.org:80/x", "https://a.org:443/y"));
  assert.ok(!mayRedirect("https://a.org/x", "http://a.org/y")); // never https -> http
  assert.ok(!mayRedirect("http://a.org:8000/x", "https://a.org/y")); // another port
  assert.ok(!mayRedirect("https://a.org/x", "https://b.a.org/y"));
  assert.ok(!mayRedirect("https://a.org/x", "https://a.org:8443/y"));
  assert.ok(!mayRedirect("https://a.org/x", "javascript:alert(1)"));
  assert.ok(!mayRedirect("https://a.org/x", "file:///etc/passwd"));
});
