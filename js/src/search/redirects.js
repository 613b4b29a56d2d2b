// @ts-check
/**
 * Requests that never reach another origin than the one asked, not even through a
 * redirect: sphinx_rag/search/fetch.py's rule (may_redirect: a redirect is followed within
 * the origin of the request, or from http://host to https://host at the default ports),
 * checked before the redirect's target is requested, not after.
 *
 * Every request goes out with `redirect: "manual"`:
 * - where a redirect's Location can be read (Node, or a fetch that answers the 3xx
 *   itself), it is checked, then followed by hand, at most MAX_REDIRECTS times;
 * - a browser answers an opaque redirect instead (status 0, no Location): where it
 *   points cannot be known before the browser requests it. A URL of the runtime's own
 *   origin (the page's, the worker's: this site's files) is then asked again with
 *   `mode: "same-origin"`: the browser follows redirects within the origin and fails at
 *   the first one to another origin before sending anything there (the Fetch standard's
 *   main fetch; http -> https is another origin here, refused). A URL of another origin
 *   (a federated site's files) is not read through a redirect at all: refused, nothing
 *   sent to where it points (the reader is told to give the site's new address).
 *
 * A response that comes from elsewhere all the same (a fetch that followed anyway) is
 * refused too. Used by every read of an index (worker/loader.js guardedFetch) and by
 * WebMCP's read_page (ui/webmcp.js).
 * @module redirects
 */

/** Redirects followed in a row, at most (fetch.py's MAX_REDIRECTS). */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** @type {Record<string, string>} */
const DEFAULT_PORTS = { "http:": "80", "https:": "443" };

/** The end of the message of a redirect whose target a browser does not show (federation.js's line too). */
export const UNSEEN_REDIRECT = "cannot check where to before following: refused (give the address it moved to)";

/** A redirect to another origin (or one that cannot be checked): refused before it is followed. */
export class RedirectRefused extends Error {}

/**
 * [scheme, host, port] of a URL, the port made explicit.
 * @param {string} url
 * @returns {[string, string, string]}
 */
function originOf(url) {
  const u = new URL(url);
  return [u.protocol, u.hostname, u.port || DEFAULT_PORTS[u.protocol] || ""];
}

/**
 * Whether a redirect from `from` to `to` may be followed: the same origin, or http -> https
 * on the same host at the default ports (fetch.py's may_redirect).
 * @param {string} from @param {string} to
 */
export function mayRedirect(from, to) {
  const [scheme, host, port] = originOf(from);
  const [toScheme, toHost, toPort] = originOf(to);
  if (!/^https?:$/.test(toScheme)) return false;
  if (scheme === toScheme && host === toHost && port === toPort) return true;
  return scheme === "http:" && port === "80" && toScheme === "https:" && toHost === host && toPort === "443";
}

/**
 * The origin of `url` in a message ("another address" when it is not a URL).
 * @param {string} url
 */
function shown(url) {
  try {
    return new URL(url).origin;
  } catch {
    return "another address";
  }
}

/**
 * `response`, unless it came from another origin than `url` allows.
 * @param {Response} response @param {string} url
 */
function fromHere(response, url) {
  if (response.url && response.url !== url && !mayRedirect(url, response.url)) {
    response.body?.cancel().catch(() => {});
    throw new RedirectRefused(`sphinx-rag: ${url} redirects to ${shown(response.url)}, another origin: refused`);
  }
  return response;
}

/**
 * GET `url` with `init`, following only the redirects the rule above allows, each checked
 * before it is requested (RedirectRefused otherwise).
 * @param {typeof fetch} fetchFn
 * @param {string} url
 * @param {RequestInit} [init]  its `redirect` and `mode` are this function's
 * @param {string} [ownOrigin]  the runtime's origin (a page's or a worker's; none in Node)
 * @returns {Promise<Response>}
 */
export async function fetchWithinOrigin(fetchFn, url, init = {}, ownOrigin = globalThis.origin) {
  let current = url;
  for (let hop = 0; ; hop++) {
    const response = await fetchFn(current, { ...init, redirect: "manual" });
    if (response.type === "opaqueredirect") {
      if (shown(current) !== ownOrigin) {
        throw new RedirectRefused(`sphinx-rag: ${url} redirects, and a browser ${UNSEEN_REDIRECT}`);
      }
      let followed;
      try {
        followed = await fetchFn(current, { ...init, mode: "same-origin", redirect: "follow" });
      } catch (err) {
        if (err instanceof TypeError) throw new RedirectRefused(`sphinx-rag: ${url} redirects to another origin: refused`);
        throw err;
      }
      return fromHere(followed, url);
    }
    const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get("location") : null;
    if (location === null) return fromHere(response, url);
    response.body?.cancel().catch(() => {});
    let next;
    try {
      next = new URL(location, current).href;
    } catch {
      throw new RedirectRefused(`sphinx-rag: ${url} redirects to an address that is not a URL: refused`);
    }
    if (!mayRedirect(current, next)) {
      throw new RedirectRefused(`sphinx-rag: ${url} redirects to ${shown(next)}, another origin: refused`);
    }
    if (hop >= MAX_REDIRECTS) throw new RedirectRefused(`sphinx-rag: ${url} redirects more than ${MAX_REDIRECTS} times: refused`);
    current = next;
  }
}
