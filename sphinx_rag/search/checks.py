"""What a reader checks in an index before it uses it: another site's index is untrusted input.

``index.IndexReader`` calls these on every manifest, directory and shard it reads (a
local directory's too: a damaged index is one ``IndexDamaged`` line, not a traceback).
Two outcomes:

- the structure (the manifest, the directories, a shard's counts and ranges) is wrong:
  the check returns a problem and the reader refuses the whole index;
- one chunk record is wrong (a field of the wrong type, a display block that is not
  ``[type, text]``, a URL outside the site): that record becomes ``DROPPED`` (no text,
  no URL; its ``problem`` says why), which the callers leave out of their results; the
  rest of the site answers, and the callers say in one line how many records were
  invalid (``invalid_records``); a site whose every record read is invalid is not
  searched, in one line too.

A record's URL must stay on the site: http(s), the site's own origin, under its path
(``url_under``), so a ``javascript:`` link, another host or a ``../`` out of the site
never reaches a reader or an agent.

Sizes (``payload_limits``) come from the manifest's own counts and layout, each with a
hard ceiling: a count of 10^12 is refused before anything is allocated, and a shard's
payload (after decompression) and its JSON containers are capped per kind.
"""

from __future__ import annotations

import math
import re
from urllib.parse import unquote, urljoin, urlsplit

from .format import MODEL_FILES

__all__ = ["MAX_CHUNKS", "MAX_DIM", "MAX_VOCAB", "MAX_RECORD_BYTES", "MAX_BLOCKS", "DROPPED", "manifest_problem",
           "directory_problem", "dense_directory_problem", "text_records", "record_problem", "invalid_records",
           "url_under", "pages_listing",
           "payload_limits", "shard_kind", "is_shard_name", "json_containers", "SHARD_KINDS"]

MAX_CHUNKS = 2_000_000  # ten times the largest index measured (200k chunks); arrays of n_chunks are allocated
MAX_DIM = 4096
MAX_VOCAB = 20_000_000
MAX_CLUSTERS = 1 << 16  # a cluster map stores u16 cluster ids
MAX_RECORD_BYTES = 32 << 10  # a chunk record as JSON (the largest measured: 3.3 KB)
MAX_BLOCKS = 256  # display blocks of one record
MAX_MODEL_BYTES = 256 << 20
SHARD_KINDS = {"dir": "js", "terms": "js", "near": "js", "texts": "js", "manifest": "js", "centroids": "bin",
               "cluster": "bin", "cmap": "bin", "ddir": "bin", "encoder": "bin", "pages": "bin"}
_SHARD = re.compile(r"([a-z]+)-[0-9a-f]{16}\.(js|bin)")
_HEX16 = re.compile(r"[0-9a-f]{16}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_MODEL_DIR = re.compile(r"(?:model|reranker)-[0-9a-f]{16}")
_KIND = re.compile(r"[a-z]{1,20}")
_LANGUAGE = re.compile(r"[A-Za-z0-9_+.#-]{0,40}")
_BLOCK_TYPES = {"p", "code", "term", "label", "lead", "heading"}
_URL_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\\]")
#: [min, max] of each layout field a reader uses (format 3 writes them all)
LAYOUT_RANGES = {"texts_per_shard": (1, 1 << 16), "term_shard_bytes": (1, 16 << 20),
                 "near_shard_terms": (1, 1 << 20), "probe": (1, MAX_CHUNKS), "cluster_map_chunks": (1, 1 << 20)}
OPTIONAL_LAYOUT = {"head_postings": (1, MAX_CHUNKS), "exact_up_to": (0, MAX_CHUNKS),
                   "cluster_size": (1, MAX_CHUNKS), "max_clusters": (1, MAX_CLUSTERS),
                   "guide_hits": (0, 1 << 16), "guide_clusters": (0, MAX_CLUSTERS)}
DROPPED = {"id": "", "doc": "", "url": "", "headings": [], "kind": "", "text": "", "display": [], "title": "",
           "members": 0, "dropped": True}


def _int(value, lo: int, hi: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_shard_name(name, kind: str | None = None) -> bool:
    """A shard file name (``kind-<16 hex>.js|bin``), of ``kind`` if given, the extension
    its kind has: never a path."""
    match = _SHARD.fullmatch(name) if isinstance(name, str) else None
    return bool(match) and SHARD_KINDS.get(match.group(1)) == match.group(2) and kind in (None, match.group(1))


def shard_kind(name: str) -> str:
    return name.split("-", 1)[0]


# -- the manifest ------------------------------------------------------------------------------

def _files_problem(entry, what: str, names: tuple[str, ...]) -> str | None:
    """What is wrong with a manifest's ``model_files`` or ``reranker_files`` (None: nothing)."""
    if not entry:
        return None
    files = entry.get("files") if isinstance(entry, dict) else None
    if not (isinstance(entry, dict) and isinstance(entry.get("dir"), str) and _MODEL_DIR.fullmatch(entry["dir"])
            and entry["dir"].startswith(what + "-") and isinstance(files, dict)):
        return f"names a {what} directory that is not one"
    for name in names:
        meta = files.get(name)
        if not (isinstance(meta, dict) and _int(meta.get("bytes"), 1, MAX_MODEL_BYTES)
                and isinstance(meta.get("sha256"), str) and _HEX64.fullmatch(meta["sha256"])):
            return f"lists the {what}'s {name} without a valid size and sha256"
    return None


def manifest_problem(m: dict) -> str | None:
    """What is wrong with a format-3 manifest (None: nothing a reader would trip on)."""
    counts, layout = m.get("counts"), m.get("layout")
    if not isinstance(counts, dict):
        return "has no counts"
    n, dim = counts.get("chunks"), counts.get("dim")
    if not _int(n, 0, MAX_CHUNKS):
        return f"counts {n!r} chunks (0 to {MAX_CHUNKS:,} are read)"
    if not _int(dim, 0, MAX_DIM):
        return f"counts a dimension of {dim!r} (0 to {MAX_DIM})"
    if not _int(counts.get("vocab", 0), 0, MAX_VOCAB) or not _int(counts.get("clusters", 0), 0, MAX_CLUSTERS):
        return "has counts of terms or clusters out of range"
    if not isinstance(layout, dict):
        return "has no layout"
    for key, (lo, hi) in LAYOUT_RANGES.items():
        if not _int(layout.get(key), lo, hi):
            return f"has layout.{key} = {str(layout.get(key))[:40]!r} ({lo} to {hi:,})"
    for key, (lo, hi) in OPTIONAL_LAYOUT.items():
        if key in layout and not _int(layout[key], lo, hi):
            return f"has layout.{key} = {str(layout[key])[:40]!r} ({lo} to {hi:,})"
    if not is_shard_name(m.get("dir"), "dir"):
        return "names no directory shard"
    near = m.get("near", [])
    if not isinstance(near, list) or not all(
            isinstance(e, list) and len(e) == 3 and _int(e[0], 0, 1 << 30) and _int(e[1], 0, 1 << 30)
            and is_shard_name(e[2], "near") for e in near):
        return "has a near list that is not [[shortest, longest, near shard]]"
    dense = m.get("dense")
    if dense is not None:
        if not (isinstance(dense, dict) and is_shard_name(dense.get("centroids"), "centroids")
                and is_shard_name(dense.get("directory"), "ddir")):
            return "has a dense entry without its centroid and directory shards"
        if dim < 1 or (n > 0 and not _int(counts.get("clusters"), 1, MAX_CLUSTERS)):
            return "has vectors but no dimension or clusters"
    from .cross_encoder import RERANKER_FILES

    for key, what, names in (("model_files", "model", MODEL_FILES), ("reranker_files", "reranker", RERANKER_FILES)):
        problem = _files_problem(m.get(key), what, names)
        if problem:
            return problem
    encoder = m.get("encoder")
    if encoder and not (isinstance(encoder, dict) and is_shard_name(encoder.get("file"), "encoder")):
        return "names an encoder that is not a shard"
    llms = m.get("llms")
    if llms and not (isinstance(llms, dict) and is_shard_name(llms.get("pages"), "pages")):
        return "names a pages listing that is not a shard"
    settings = m.get("settings", {})
    if not isinstance(settings, dict):
        return "has settings that are not a mapping"
    if settings.get("fusion", "rrf") not in ("rrf", "bm25", "dense"):
        return f"has the fusion {str(settings.get('fusion'))[:40]!r}"
    if settings.get("query_encoder") not in (None, "static", "model", "both"):  # None: keyword-only
        return f"has the query encoder {str(settings.get('query_encoder'))[:40]!r}"
    rrf_k = settings.get("rrf_k", 60)
    floor = settings.get("relevance_floor", 0.3)
    if not (_number(rrf_k) and 0 < rrf_k <= 1e6) or not (_number(floor) and -1 <= floor <= 1):
        return "has an rrf_k or relevance_floor out of range"
    return None


def payload_limits(m: dict, kind: str) -> tuple[int, int]:
    """(most bytes, most JSON lists and objects) of one shard of ``kind`` after
    decompression, from the manifest's counts and layout (checked), each with a ceiling:
    what an honest index of those counts can hold, with a wide margin, and no more."""
    counts, layout = m["counts"], m["layout"]
    n, vocab, clusters = counts["chunks"], counts.get("vocab", 0), counts.get("clusters", 0)
    per, dim = layout["texts_per_shard"], counts["dim"]
    if kind == "texts":
        return min(per * MAX_RECORD_BYTES + 4096, 64 << 20), per * (MAX_BLOCKS + 8) + 8
    if kind == "terms":  # a shard holds ~term_shard_bytes (its header ~5x the estimate), one term's postings more
        size = 16 * layout["term_shard_bytes"] + 8 * n + (64 << 10)
        return min(size, 256 << 20), min(8 + layout["term_shard_bytes"], 8 + vocab + 1)
    if kind == "near":
        return min(layout["near_shard_terms"] * 512 + (1 << 20), 64 << 20), 8
    if kind == "dir":  # term shards (at most one a term), text shard names, weight ranges (at most one a chunk)
        return min((64 << 10) + 128 * (vocab + n), 256 << 20), 8 + vocab + n + -(-n // per)
    if kind == "ddir":
        maps = -(-n // layout["cluster_map_chunks"])
        return (4 << 10) + 64 * (clusters + maps), 8 + clusters
    if kind == "pages":
        return min((256 << 10) + 4096 * n, 256 << 20), 16 + 4 * n
    if kind == "centroids":
        return 4 + clusters * (4 + dim), 0
    if kind == "cmap":
        return 4 + 2 * layout["cluster_map_chunks"], 0
    if kind == "cluster":
        return 4 + n * (8 + dim), 0
    if kind == "encoder":
        return 32 << 20, 0
    return 4 << 20, 64


def json_containers(payload: bytes) -> int:
    """An upper bound of the lists and objects a JSON text makes (each needs its bracket):
    checked before ``json.loads``, whose objects take 20x the bytes of ``[{},{},...]``."""
    return payload.count(b"[") + payload.count(b"{")


# -- the directories ---------------------------------------------------------------------------

def directory_problem(d, n: int, per: int) -> str | None:
    if not isinstance(d, dict):
        return "is not a directory"
    terms, texts, weights = d.get("terms"), d.get("texts"), d.get("weights", [])
    if not isinstance(terms, list) or not all(isinstance(t, list) and len(t) == 2 and isinstance(t[0], str)
                                              and is_shard_name(t[1], "terms") for t in terms):
        return "has term shards that are not [[first term, shard]]"
    if any(terms[i][0] > terms[i + 1][0] for i in range(len(terms) - 1)):
        return "has term shards out of order"
    if not isinstance(texts, list) or len(texts) != -(-n // per) or not all(is_shard_name(t, "texts") for t in texts):
        return f"does not list the {-(-n // per):,} text shards of {n:,} chunks"
    if not isinstance(weights, list) or not all(
            isinstance(w, list) and len(w) == 3 and _int(w[0], 0, n) and _int(w[1], 0, n) and w[0] < w[1]
            and _number(w[2]) and 0 <= w[2] <= 1e6 for w in weights):
        return "has page weights that are not [[first, end, weight]] within its chunks"
    return None


def dense_directory_problem(d, n: int, clusters: int, map_chunks: int) -> str | None:
    if not isinstance(d, dict) or not isinstance(d.get("clusters"), list) or not isinstance(d.get("cluster_map"), list):
        return "is not a dense directory"
    entries, maps = d["clusters"], d["cluster_map"]
    if not all(isinstance(e, list) and len(e) == 2 and is_shard_name(e[0], "cluster") and _int(e[1], 0, n)
               for e in entries):
        return "has clusters that are not [[shard, size]]"
    if len(entries) != clusters or sum(e[1] for e in entries) != n:
        return f"has {len(entries)} clusters of {sum(e[1] for e in entries):,} chunks, its manifest {clusters} of {n:,}"
    expected = -(-n // map_chunks) if len(entries) > 1 else 0
    if len(maps) != expected or not all(is_shard_name(name, "cmap") for name in maps):
        return f"does not list the {expected} cluster map shards"
    return None


# -- records -----------------------------------------------------------------------------------

def url_under(url, root: str) -> bool:
    """Whether ``url`` (relative to ``root``, or absolute) stays on the site at ``root``:
    http(s), the same scheme, host and port, a path under the root's, no ``..`` (also
    percent-encoded), no backslash, space or control character (a browser reads
    ``/\\evil.example`` as another host)."""
    if not isinstance(url, str) or len(url) > 4096 or _URL_FORBIDDEN.search(url) or url != url.strip():
        return False
    base = urlsplit(root)
    try:
        resolved = urlsplit(urljoin(root, url))
        port, base_port = resolved.port, base.port
    except ValueError:
        return False
    if (resolved.scheme, resolved.hostname, port) != (base.scheme, base.hostname, base_port) or resolved.username \
            or resolved.password or resolved.scheme not in ("http", "https"):
        return False
    path = unquote(resolved.path)
    if any(segment in (".", "..") for segment in path.split("/")) or "\\" in path:
        return False
    return resolved.path.startswith(base.path)


def _display_ok(display) -> bool:
    if not isinstance(display, list) or len(display) > MAX_BLOCKS:
        return False
    for block in display:
        if not (isinstance(block, list) and 2 <= len(block) <= 3 and all(isinstance(x, str) for x in block)
                and block[0] in _BLOCK_TYPES):
            return False
        if len(block) == 3 and (block[0] != "code" or not _LANGUAGE.fullmatch(block[2])):
            return False
    return True


def record_problem(r, i: int, n: int, root: str) -> str | None:
    """What is wrong with chunk record ``i`` of ``n`` (None: nothing), in a few words;
    ``js/src/search/validate.js`` recordProblem says the same of the same record
    (``tests/fixtures/records.json``)."""
    if not isinstance(r, dict):
        return "a record is not an object"
    if not all(isinstance(r.get(k), str) for k in ("id", "doc", "url", "text", "kind")):
        return "a record's id, doc, url, kind and text must be strings"
    if not _KIND.fullmatch(r["kind"]):
        return "a record's kind must be a short lowercase word"
    headings = r.get("headings")
    if not (isinstance(headings, list) and len(headings) <= 64 and all(isinstance(h, str) for h in headings)):
        return "a record's headings must be a list of at most 64 strings"
    if "display" in r and not _display_ok(r["display"]):
        return "a record's display blocks must be [type, text] strings"
    if not _int(r.get("members", 0), 0, n - 1 - i) or not _int(r.get("card", 0), 0, i):
        return "a record's card and members must point within the chunks"
    if not url_under(r["url"], root):
        return "a record's url must be a page of the site"
    return None


def text_records(shard, at: int, per: int, n: int, root: str, fill: bool = False) -> tuple[list[dict] | None, int]:
    """The records of text shard number ``at`` (chunks ``at * per`` on), each checked
    (``root``: the site root its URLs must stay under): (records, how many were dropped),
    or (None, 0) when the shard is not that text shard. ``fill``: give every record
    ``members`` (0 unless a card), which ``expand.py`` reads of the chunk another's ``card``
    points at (a writer leaves it out when 0: ``index.load_chunk_records`` does again)."""
    first = at * per
    if not isinstance(shard, dict) or shard.get("first") != first or not isinstance(shard.get("chunks"), list) \
            or len(shard["chunks"]) != min(per, n - first):
        return None, 0
    out, dropped = [], 0
    for j, r in enumerate(shard["chunks"]):
        problem = record_problem(r, first + j, n, root)
        if problem is None:
            r["title"] = " > ".join(h for h in r["headings"] if h)
            if fill:
                r.setdefault("members", 0)
            out.append(r)
        else:
            out.append(dict(DROPPED, headings=[], display=[], problem=problem))
            dropped += 1
    return out, dropped


def invalid_records(dropped: int, read: int, total: int) -> str:
    """How many of the records read were invalid, as the one line about a site says it
    ("167 of 167 records invalid"; "12 of the 192 records read invalid" when a query read
    only some of them); js/src/search/validate.js invalidRecords says the same."""
    if read >= total:
        return f"{dropped:,} of {total:,} records invalid"
    return f"{dropped:,} of the {read:,} records read invalid"


def _agent_file_name(name) -> bool:
    """A name the agents' files may have: relative, inside the site, a twin or llms*.txt."""
    if not isinstance(name, str) or not name or len(name) > 1024 or name.startswith(("/", "\\")) \
            or _URL_FORBIDDEN.search(name) or name != name.strip() or ":" in name.split("/")[0]:
        return False
    return not {".", "..", ""} & set(name.split("/")) and (name.endswith(".md") or name in ("llms.txt",
                                                                                              "llms-full.txt"))


def pages_listing(listing, n: int, root: str) -> dict | None:
    """The pages listing with only its well-formed entries: pages ``[doc, url, twin, first,
    chunks]`` within the index, files ``{name: [bytes, hash]}`` whose names stay in the site
    (None: it is not a listing at all)."""
    if not isinstance(listing, dict) or not isinstance(listing.get("pages"), list) \
            or not isinstance(listing.get("files"), dict):
        return None
    pages = [p for p in listing["pages"]
             if isinstance(p, list) and len(p) == 5 and isinstance(p[0], str) and url_under(p[1], root)
             and _agent_file_name(p[2]) and _int(p[3], 0, n) and _int(p[4], 0, n) and p[3] + p[4] <= n]
    files = {name: entry for name, entry in listing["files"].items()
             if _agent_file_name(name) and isinstance(entry, list) and len(entry) == 2
             and _int(entry[0], 0, MAX_MODEL_BYTES) and isinstance(entry[1], str) and _HEX16.fullmatch(entry[1])}
    return {**listing, "pages": pages, "files": files}
