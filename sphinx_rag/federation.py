"""Other sphinx-rag sites a reader searches from this site's dialog (``sphinx_rag_federation``).

Every sphinx-rag index is static and fetched lazily by URL, so the reader's browser can
search another site's published index next to this one's, with no server: the dialog
merges the rankings (``search/merge.py``), each result names its site.

The build turns the config value into the list the browser reads, in the manifest's
settings (``settings.federation``: ``[{"name", "url", "enabled"}]``, ``url`` the site's
root ending in ``/``, ``enabled`` whether it is searched before the reader turns it
on). The manifest is read before the first query anyway (no request of its own) and
revalidated on every visit (a rebuild reaches every page at once, those an incremental
build did not rewrite included).

- a mapping: ``{"numpy": "https://numpy.org/doc/stable/", "v1.4": {"url": "https://.../1.4/",
  "enabled": True}}``, taken as given (no network at build time);
- ``True``: every ``intersphinx_mapping`` entry that publishes a sphinx-rag index that a
  browser may read from another origin, checked once per build (``check_site``: a
  request each, in parallel, ``CHECK_TIMEOUT`` seconds in all each, redirects within the
  site's origin only, the manifest checked as a reader checks it; one line of output each).
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from .search.index import ASSET_DIR, FORMAT_VERSION

__all__ = ["CHECK_TIMEOUT", "MAX_NAME", "entry_problem", "configured_sites", "intersphinx_sites", "check_site",
           "resolve", "site_root"]

CHECK_TIMEOUT = 3.0  # seconds per intersphinx site (they are checked in parallel)
MAX_NAME = 40  # characters of a source's name (its chip in the dialog)
EXAMPLE = '{"numpy": "https://numpy.org/doc/stable/", "v1.4": {"url": "https://mlkit.org/1.4/", "enabled": True}}'


def site_root(url: str) -> str:
    """A site's root URL (ending in /) from its root, a page of it, its index directory or
    its manifest.json (``search.fetch.index_url``'s forms); RemoteError if it is no http(s) URL."""
    from .search.remote import index_url  # not when conf.py is validated: no HTTP client then

    return index_url(url)[: -len(ASSET_DIR.as_posix() + "/")]


def _url_problem(url) -> str | None:
    if not isinstance(url, str) or not url.strip():
        return "must be the http(s) URL of a sphinx-rag site"
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{url!r} is not an http(s) URL"
    return None


def entry_problem(name, value) -> str | None:
    """What is wrong with one entry of the mapping (None: nothing)."""
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
        return f"has the name {name!r}: give each site a short name (1-{MAX_NAME} printable characters)"
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"url", "enabled"})
        if unknown:
            return f"[{name!r}] has unknown keys {unknown}; allowed: 'url', 'enabled'"
        if not isinstance(value.get("enabled", False), bool):
            return f"[{name!r}]['enabled'] must be True or False"
        value = value.get("url")
    problem = _url_problem(value)
    return f"[{name!r}] {problem}" if problem else None


def configured_sites(mapping: dict) -> list[dict]:
    """The mapping's entries (validated by ``config.py``) as the browser reads them."""
    out = []
    for name, value in mapping.items():
        url, enabled = (value["url"], value.get("enabled", False)) if isinstance(value, dict) else (value, False)
        out.append({"name": name.strip(), "url": site_root(url), "enabled": bool(enabled)})
    return out


def intersphinx_sites(mapping) -> list[tuple[str, str]]:
    """(name, URL) of every ``intersphinx_mapping`` entry with an http(s) URL, in its order."""
    out = []
    for name, value in (mapping or {}).items():
        uri = None
        if isinstance(value, (tuple, list)) and len(value) == 2:
            first, second = value
            # Sphinx normalises conf.py's (uri, inventory) to (name, (uri, (inventory,)))
            uri = second[0] if first == name and isinstance(second, (tuple, list)) and second else first
        if isinstance(name, str) and _url_problem(uri) is None:
            out.append((name, uri.strip()))
    return out


def check_site(name: str, url: str, *, origin: str, timeout: float = CHECK_TIMEOUT) -> tuple[dict | None, str]:
    """Whether a browser at ``origin`` can search the site at ``url``: its manifest.json is
    there, in the format this sphinx-rag writes, well-formed (``search/checks.py``), and sent
    with Access-Control-Allow-Origin. One guarded request (``search.fetch.fetch_response``: within
    ``timeout`` seconds in all, no redirect to another origin). Returns (the entry, or None)
    and one line saying what was found."""
    import time

    from .search.checks import manifest_problem
    from .search.remote import MAX_MANIFEST_BYTES, RemoteError, fetch_response

    try:
        root = site_root(url)
    except RemoteError as exc:
        return None, f"{name} ({url}): {exc}: left out"
    manifest_url = root + ASSET_DIR.as_posix() + "/manifest.json"
    try:
        response = fetch_response(manifest_url, max_bytes=MAX_MANIFEST_BYTES, timeout=timeout,
                                  deadline=time.monotonic() + timeout, headers={"Origin": origin})
    except RemoteError as exc:
        if exc.status is not None:
            why = "no sphinx-rag index" if exc.status == 404 else "the site answered"
            return None, f"{name} ({root}): {why} (HTTP {exc.status} for {manifest_url}): left out"
        if exc.slow:
            return None, f"{name} ({root}): no complete answer within {timeout:g} s for {manifest_url}: left out"
        return None, f"{name} ({root}): {str(exc).removeprefix('[sphinx-rag] ')}: left out"
    allowed = response.headers.get("Access-Control-Allow-Origin", "") or ""
    try:
        manifest = json.loads(response.data)
    except ValueError:
        manifest = None
    if not isinstance(manifest, dict) or "format_version" not in manifest:
        return None, f"{name} ({root}): {manifest_url} is not a sphinx-rag manifest: left out"
    if manifest["format_version"] != FORMAT_VERSION:
        return None, (f"{name} ({root}): its index is in format {repr(manifest['format_version'])[:20]}, this "
                      f"sphinx-rag writes and reads {FORMAT_VERSION}: left out")
    problem = manifest_problem(manifest)
    if problem:
        return None, f"{name} ({root}): its manifest {problem}: left out"
    if allowed.strip() not in ("*", origin):
        return None, (f"{name} ({root}): its server does not let other sites' pages read it (no "
                      f"Access-Control-Allow-Origin for {origin}), so readers' browsers would refuse it: left out")
    chunks = manifest["counts"]["chunks"]
    return ({"name": name, "url": root, "enabled": False},
            f"{name} ({root}): {chunks:,} chunks, federated (readers turn it on in the search dialog)")


def resolve(value, intersphinx_mapping, *, origin: str, note, timeout: float = CHECK_TIMEOUT) -> list[dict]:
    """The sites the browser gets for ``sphinx_rag_federation = value``: the mapping's, or
    with True those intersphinx sites that pass ``check_site`` (``note`` gets one line each)."""
    if value is not True:
        return configured_sites(value) if isinstance(value, dict) else []
    sites = intersphinx_sites(intersphinx_mapping)
    if not sites:
        note("[sphinx-rag] federation: sphinx_rag_federation = True, but intersphinx_mapping names no http(s) "
             "site: no other site is searched")
        return []
    with ThreadPoolExecutor(max_workers=min(8, len(sites))) as pool:
        checked = list(pool.map(lambda site: check_site(*site, origin=origin, timeout=timeout), sites))
    out = []
    for entry, line in checked:
        note(f"[sphinx-rag] federation: {line}")
        if entry is not None and all(e["url"] != entry["url"] for e in out):
            out.append(entry)
    return out
