"""A site's pages and API objects read from its index, for the MCP tools
(``docs_tools.py``): an object's records (its card and members), a page's records in
order, a twin the site publishes (verified by the size and hash its listing gives)."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from ..search.index import IndexReader, site_root_of

__all__ = ["DocsError", "inside", "local_site_file", "record_anchor", "object_records", "page_records", "same_page",
           "doc_candidates"]


class DocsError(Exception):
    """A failure an agent is told about in one line; the server goes on."""


def inside(rel: str) -> bool:
    """A path relative to a site root that stays in it (no ``..``, also encoded; not absolute)."""
    path = unquote(rel)
    return not path.startswith(("/", "\\")) and "\\" not in path and ".." not in path.split("/")


def local_site_file(index: IndexReader, name: str, entry: list) -> bytes | None:
    """An agents' file of a local site, only inside its root and matching the size and hash
    its listing gives (DocsError if not); None: the index has no site around it."""
    import hashlib

    root = site_root_of(index.root)
    if root is None:
        return None
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise DocsError(f"[sphinx-rag] {name[:80]} is not in the site {root}: refused")
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) != entry[0] or hashlib.sha256(data).hexdigest()[:16] != entry[1]:
        raise DocsError(f"[sphinx-rag] {path} does not match its hash in the index: refused (rebuild the docs)")
    return data


def record_anchor(record: dict) -> str:
    """The part of a chunk id between the page and the number: the object's full name for API chunks."""
    return record["id"].partition("#")[2].rpartition(":")[0]


def object_records(index: IndexReader, hit: int, owner: str) -> tuple[list[dict], list[str]]:
    """The chunks of the API object holding chunk ``hit`` (its id's anchor), and the names
    of the objects nested in it (a class's methods: those of its card's members)."""
    anchor = record_anchor(index.chunk(hit))
    start = hit - int(index.chunk(hit)["id"].rpartition(":")[2])
    records = []
    i = max(start, 0)
    while i < index.n_chunks and record_anchor(index.chunk(i)) == anchor:
        records.append(index.chunk(i))
        i += 1
    members: list[str] = []
    span = records[0].get("members", 0) if records else 0
    for j in range(i, min(start + span + 1, index.n_chunks)):
        nested = index.chunk(j)["headings"][-1]
        if nested.startswith(owner + ".") and nested not in members:
            members.append(nested)
    return records, members


def page_records(index: IndexReader, page: str) -> list[dict]:
    """The chunk records of a page (its URL relative to the site root, no fragment) from the
    text shards, for a site that writes no Markdown: the index is sorted by document, so a
    binary search over the shards' first records finds it (a few shards, not all)."""
    per = index.manifest["layout"]["texts_per_shard"]
    n_shards = -(-index.n_chunks // per)
    for doc in doc_candidates(page):
        lo, hi = 0, n_shards
        while lo < hi:  # the last shard whose first record's doc is <= doc
            mid = (lo + hi) // 2
            if index.chunk(mid * per)["doc"] <= doc:
                lo = mid + 1
            else:
                hi = mid
        i = max(lo - 1, 0) * per
        out = []
        while i < index.n_chunks and index.chunk(i)["doc"] <= doc:
            record = index.chunk(i)
            if record["doc"] == doc and same_page(record["url"].partition("#")[0], page):
                out.append(record)
            i += 1
        if out:
            return out
    return []


def same_page(a: str, b: str) -> bool:
    """Two URLs of one page (``x/`` is ``x/index.html``, the root is ``index.html``)."""
    return a.removesuffix("index.html") == b.removesuffix("index.html")


def doc_candidates(page: str) -> list[str]:
    """The documents a page URL can be: ``a/b.html`` -> ``a/b``; ``a/b/`` (dirhtml) ->
    ``a/b``, ``a/b/index``; the root -> ``index``."""
    path = urlsplit(page).path
    if path.endswith(".html"):
        base = path[: -len(".html")]
        return [base] + ([base[: -len("/index")] or "index"] if base.endswith("index") else [])
    path = path.rstrip("/")
    return [path, f"{path}/index"] if path else ["index"]
