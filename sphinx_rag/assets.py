"""The static index (format 3): written at build time, read lazily by Python and the browser.

Layout of ``<html>/_static/sphinx_rag/index/`` (``ARCHITECTURE.md`` has the details)::

    manifest.json        the entry: format, counts, settings, BM25 constants, and the
                         names of the directory shard, the near shards, the centroids
                         and the dense directory
    manifest.js          the same for pages opened from file://
    dir-<h>.js           term shard boundaries, text shard names, page weights: what a
                         keyword query needs
    ddir-<h>.bin         cluster names + sizes, cluster map names: what the dense pass
                         needs besides the centroids (JSON)
    terms-<h>.js         postings of a range of the vocabulary (keyword_shards.term_shards)
    near-<h>.js          vocabulary + df by term length, for typo matching
    texts-<h>.js         consecutive chunk records (Layout.texts_per_shard)
    centroids-<h>.bin    int8 cluster centroids (dense.py)
    cluster-<h>.bin      one cluster's chunk ids and int8 vectors
    cmap-<h>.bin         the cluster of each chunk of a range (Layout.cluster_map_chunks;
                         only with more than one cluster)
    encoder-<h>.bin      the static query encoder (static_encoder.py), unless
                         sphinx_rag_query_encoder = "model"
    model-<h>/           the int8 ONNX model, its tokenizer and vocab.txt, unless
                         sphinx_rag_query_encoder = "static"
    pages-<h>.bin        the pages (doc, URL, Markdown twin, first chunk, chunks) and the
                         files for agents at the site root (llms.txt, llms-full.txt, the
                         twins: ``markdown.py``) with their sizes and hashes, unless
                         sphinx_rag_llms_txt = False

Every name but the manifest's carries the hash of its content (``shards.py``), so a
reader fetches only what a query needs and caches it forever, a rebuild writes only
the shards whose content changed, and the index is replaced atomically: new shards
(and the files for agents at the site root) first, then the manifest (one rename), then
the files no manifest names are removed (and the agents' files the previous index named
that this one does not).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import shutil
import struct
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from . import dense, keyword_shards
from .bm25 import BM25Index
from .keyword_scoring import Postings
from .static_encoder import StaticEncoder
from .shards import (ShardError, binary_shard, check_binary_shard, dumps, read_script_shard, script_shard,
                     script_shards)

__all__ = ["FORMAT_VERSION", "ASSET_DIR", "Layout", "MODEL_FILES", "IndexMissing", "IndexDamaged",
           "write_assets", "amend_manifest", "IndexReader", "find_asset_dir", "read_json", "load_chunk_records",
           "site_root_of"]

FORMAT_VERSION = 3
ASSET_DIR = Path("_static") / "sphinx_rag" / "index"
MODEL_FILES = ("model.onnx", "model_info.json", "tokenizer.json", "vocab.txt")
#: Files of format 1 (in ``_static/sphinx_rag/``), removed when format 2 is written.
FORMAT_1_FILES = ("manifest.json", "chunks.json", "bm25.json", "bm25_offsets.u32", "bm25_docs.u32",
                  "bm25_impacts.f32", "embeddings.i8", "embeddings_scale.f32", "keyword_index.js")
_UMASK = os.umask(0)
os.umask(_UMASK)


@dataclass(frozen=True)
class Layout:
    """How the index is cut into shards (chosen by measurement, see benchmarks/).

    The manifest records it, so readers need no constant of their own.
    """

    texts_per_shard: int = 40  # records per text shard (200k: 64 misses 100 KB/later query, 32: 598 B/chunk)
    term_shard_bytes: int = 12_000  # a term shard holds about this many payload bytes
    head_postings: int = 4096  # a term in more chunks: its other postings get 4-bit impacts (keyword_shards.stored_tail)
    near_shard_terms: int = 4096  # vocabulary terms per near (typo) shard
    exact_up_to: int = 4096  # up to this many chunks: one cluster, exact dense search
    cluster_size: int = 128  # average chunks per cluster above that ...
    max_clusters: int = 1600  # ... up to this many (centroids: 620 KB raw; at 200k dense overlap 0.985, 800: 0.962)
    probe: int = 4096  # vectors a query scores at least (whole clusters, nearest first)
    guide_hits: int = 40  # the clusters of this many keyword hits go first (200k fused overlap 20: 0.972, 40: 0.978)
    guide_clusters: int = 12  # ... at most this many, within probe (50k fused overlap: none 0.920, 8 0.975, 12 0.982)
    cluster_map_chunks: int = 2048  # chunks per cluster map shard (which cluster holds a chunk)


class IndexMissing(FileNotFoundError):
    pass


class IndexDamaged(ValueError):
    """A damaged or mixed index: one line naming the file and the fix."""


def read_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# -- writing ---------------------------------------------------------------------------------

def _write_file(path: Path, data: bytes):
    """Temp file, fsync, rename: a file under its final name is always complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600: web servers run as other users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fsync_dir(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _model_files(model_dir: Path) -> tuple[str, dict[str, Path], dict]:
    """The model's directory name in the index, its files, and their manifest entries:
    hashed once while they do not change (``filehash.py``), read only to be copied."""
    from .filehash import sha256

    paths = {name: Path(model_dir) / name for name in MODEL_FILES}
    entries = {name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for name, p in paths.items()}
    digest = hashlib.sha256(dumps(entries)).hexdigest()[:16]
    return f"model-{digest}", paths, entries


def write_assets(out_dir: Path, *, chunks: list[dict], bm25: BM25Index, vectors_i8: np.ndarray | None,
                 scales: np.ndarray | None, model_dir: Path | None, model_info: dict | None,
                 settings: dict, encoder: tuple[bytes, dict] | None = None, keyword_script: bool = True,
                 kept_centroids: tuple[bytes, int] | None = None, inputs: str | None = None,
                 layout: Layout = Layout(), shard_memo: dict[str, tuple[str, int]] | None = None,
                 site_files: dict[str, bytes] | None = None, pages: list[list] | None = None) -> dict:
    """Write the index into ``out_dir`` and return its manifest.

    ``chunks``: the records of ``Chunk.to_record`` in index order. ``model_dir``: the
    query model shipped with the site (None: none). ``encoder``: the static query
    encoder's asset and its manifest fields (``build.py``: what it was fitted on). ``keyword_script``:
    also write ``manifest.js`` (pages with the search bar, which may be opened from
    file://). ``kept_centroids``: the previous build's centroid shard and the chunks
    changed since its k-means (an incremental build, ``build.py``): the chunks are assigned
    to those centroids, no k-means. ``inputs``: a digest of what the index was built from
    (``extension.py``: a build that changes none of it keeps the index). Shards already
    present (same content, same name) are not rewritten. ``shard_memo``: script shards
    by payload (``_payload_key`` -> file name, size), an earlier build's (``carry.py``):
    a payload found there whose file is in ``out_dir`` is not compressed again (at 25k
    chunks a one-page edit changes 4 of 971); replaced by this index's. ``site_files``: the
    files for agents (``markdown.site_files``: name relative to the site root -> bytes) and
    ``pages`` their page list, written in the same publish (None: none, and those of the
    previous index are removed).
    """
    out_dir = Path(out_dir)
    files: dict[str, bytes] = {}
    in_place: set[str] = set()  # files already in out_dir (memo'd script shards, the model's): neither read nor written
    memo: dict[str, tuple[str, int]] = {}

    def script(kind: str, payload: bytes) -> str:
        return scripts(kind, [payload])[0]

    def scripts(kind: str, payloads: list[bytes]) -> list[str]:
        keys = [_payload_key(kind, p) for p in payloads]
        entries = [_shard_at_hand(out_dir, (shard_memo or {}).get(k)) for k in keys]
        todo = [i for i, e in enumerate(entries) if e is None]
        for i, (name, data) in zip(todo, script_shards(kind, [payloads[i] for i in todo])):
            files[name] = data
            entries[i] = (name, len(data))
        in_place.update(name for name, _ in entries if name not in files)
        memo.update(zip(keys, entries))
        return [name for name, _ in entries]

    def binary(kind: str, data: bytes) -> str:
        name = binary_shard(kind, data)
        files[name] = data
        return name

    per = layout.texts_per_shard
    term_cuts = keyword_shards.term_shards(bm25, layout.term_shard_bytes, layout.head_postings)
    terms = [[first, name] for (first, _), name in zip(term_cuts, scripts("terms", [p for _, p in term_cuts]))]
    near_cuts = keyword_shards.near_shards(bm25, layout.near_shard_terms)
    near = [[lo, hi, name] for (lo, hi, _), name in zip(near_cuts, scripts("near", [p for *_, p in near_cuts]))]
    texts = scripts("texts", [dumps({"first": s, "chunks": [_text_record(c) for c in chunks[s:s + per]]})
                              for s in range(0, len(chunks), per)])
    weights = _weight_ranges([c["weight"] for c in chunks])
    dense_entry = model_entry = encoder_entry = None
    clusters: list[list] = []
    if vectors_i8 is not None:
        kept = kept_centroids if len(chunks) > layout.exact_up_to else None  # one cluster: nothing to keep
        if kept is not None:
            centroid_data, members = dense.assign_clusters(vectors_i8, scales, kept[0])
        else:
            centroid_data, members = dense.fit_clusters(vectors_i8, scales, layout.exact_up_to, layout.cluster_size,
                                                        layout.max_clusters)
        clusters = [[binary("cluster", dense.cluster_shard(ids, vectors_i8, scales)), len(ids)] for ids in members]
        cluster_map: list[str] = []
        if len(members) > 1:  # which cluster holds each chunk, for the probe's keyword guidance
            cluster_of = np.empty(len(chunks), dtype=np.int64)
            for c, ids in enumerate(members):
                cluster_of[ids] = c
            step = layout.cluster_map_chunks
            cluster_map = [binary("cmap", dense.cluster_map_shard(cluster_of[s:s + step]))
                           for s in range(0, len(chunks), step)]
        dense_entry = {"centroids": binary("centroids", centroid_data),
                       "directory": binary("ddir", dumps({"clusters": clusters, "cluster_map": cluster_map}))}
        if kept is not None and kept[1]:  # none changed since the k-means: as if fitted now
            dense_entry["stale_chunks"] = kept[1]
        if model_dir is not None:  # None: vectors without a query model (tests, replicated benchmarks)
            model_name, model_paths, model_entries = _model_files(model_dir)
            for name, path in model_paths.items():  # named by their hashes: a file there with its size is it
                target = f"{model_name}/{name}"
                if _shard_at_hand(out_dir, (target, model_entries[name]["bytes"])) is None:
                    files[target] = path.read_bytes()
                else:
                    in_place.add(target)
            model_entry = {"dir": model_name, "files": model_entries}
        if encoder is not None:
            data, fields = encoder
            encoder_entry = {"file": binary("encoder", data), **fields}
    directory = script("dir", dumps({"terms": terms, "texts": texts, "weights": weights}))
    llms_entry = None
    if site_files is not None:
        listing = {"pages": pages or [], "files": {n: [len(b), _digest16(b)] for n, b in sorted(site_files.items())}}
        llms_entry = {"pages": binary("pages", dumps(listing))}
    manifest = {
        "format_version": FORMAT_VERSION,
        "model": model_info,
        "counts": {"chunks": len(chunks), "vocab": len(bm25.vocab), "postings": int(len(bm25.docs)),
                   "dim": int(vectors_i8.shape[1]) if vectors_i8 is not None else 0, "clusters": len(clusters),
                   "shards": len(files.keys() | in_place)},
        "bm25": {"k1": bm25.k1, "b": bm25.b, "epsilon": bm25.epsilon, "n_docs": bm25.n_docs, "avgdl": bm25.avgdl},
        "layout": asdict(layout),
        "dir": directory,
        "near": near,
        "dense": dense_entry,
        "model_files": model_entry,
        "encoder": encoder_entry,
        "settings": settings,
        "inputs": inputs,
        "llms": llms_entry,
    }
    _publish(out_dir, files, manifest, keyword_script, in_place, site_files or {})
    if shard_memo is not None:
        shard_memo.clear()
        shard_memo.update(memo)
    return manifest


def amend_manifest(out_dir: Path, manifest: dict, keyword_script: bool = True, **fields) -> dict:
    """The published manifest with ``fields`` added, switched in atomically (what is known
    only once the index can be searched: the suggested questions, ``suggest.py``)."""
    manifest = {**manifest, **fields}
    _write_file(out_dir / "manifest.json", dumps(manifest))
    if keyword_script:
        _, data = script_shard("manifest", dumps(manifest))
        _write_file(out_dir / "manifest.js", data)
    _fsync_dir(out_dir)
    return manifest


def _payload_key(kind: str, payload: bytes) -> str:
    return f"{kind}:{hashlib.sha256(payload).hexdigest()}"


def _shard_at_hand(out_dir: Path, entry: tuple[str, int] | None) -> tuple[str, int] | None:
    """A memo entry whose file is in ``out_dir`` with its size (``_publish`` would keep it)."""
    try:
        return entry if entry is not None and (out_dir / entry[0]).stat().st_size == entry[1] else None
    except OSError:
        return None


def _text_record(c: dict) -> dict:
    """What a text shard keeps of a chunk: ``text`` for the keyword index of a rebuild, the
    passage lengths of ``expand.py`` and evaluation; ``display`` for readers and the LLM;
    the links of an object card and its members (``expand.py``), where set."""
    return {k: c[k] for k in ("id", "doc", "url", "headings", "kind", "text", "display", "members", "card")
            if k in c}


def _weight_ranges(weights: list[float]) -> list[list]:
    """[[first chunk, end chunk, weight]] for the runs of chunks whose weight is not 1."""
    out: list[list] = []
    for i, w in enumerate(weights):
        if w == 1.0:
            continue
        if out and out[-1][1] == i and out[-1][2] == w:
            out[-1][1] = i + 1
        else:
            out.append([i, i + 1, w])
    return out


def _digest16(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def site_root_of(out_dir: Path) -> Path | None:
    """The site root of an index directory ``<html>/_static/sphinx_rag/index`` (None when
    the index is elsewhere: it has no site around it)."""
    out_dir = Path(out_dir)
    n = len(ASSET_DIR.parts)
    return out_dir.parents[n - 1] if len(out_dir.parts) > n and out_dir.parts[-n:] == ASSET_DIR.parts else None


def _agent_file_name(name) -> bool:
    """A name the agents' files may have: relative, inside the site, a twin or llms*.txt."""
    if not isinstance(name, str) or not name or name.startswith(("/", "\\")) or "\\" in name:
        return False
    return ".." not in name.split("/") and (name.endswith(".md") or name in ("llms.txt", "llms-full.txt"))


def _previous_site_files(out_dir: Path) -> dict[str, list]:
    """The agents' files the index in ``out_dir`` wrote (name -> [size, hash]; {}: none or unreadable)."""
    try:
        manifest = read_json(out_dir / "manifest.json")
        name = (manifest.get("llms") or {})["pages"]
        listing = json.loads(check_binary_shard(name, (out_dir / name).read_bytes()))
        return {n: v for n, v in listing["files"].items() if _agent_file_name(n)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ShardError):
        return {}


def _publish(out_dir: Path, files: dict[str, bytes], manifest: dict, keyword_script: bool,
             in_place: set[str] = frozenset(), site_files: dict[str, bytes] | None = None):
    """New shards and the agents' ``site_files`` (at the site root), then the manifest (the
    switch), then removal of what nothing names (``in_place``: files of the index already
    there, named too; the agents' files of the previous index that this one has not)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    site_root = site_root_of(out_dir)
    previous_site = _previous_site_files(out_dir) if site_root is not None else {}
    for name, data in sorted(files.items()):
        path = out_dir / name
        if not (path.is_file() and path.stat().st_size == len(data)):
            _write_file(path, data)
    for name, data in sorted((site_files or {}).items()):
        path = site_root / name
        if previous_site.get(name) == [len(data), _digest16(data)] and path.is_file() and path.stat().st_size == len(data):
            continue  # written by the previous index, unchanged
        _write_file(path, data)
    for sub in {n.split("/")[0] for n in files if "/" in n}:
        _fsync_dir(out_dir / sub)
    _fsync_dir(out_dir)
    _write_file(out_dir / "manifest.json", dumps(manifest))  # the switch (HTTP and Python readers)
    if keyword_script:  # file:// readers; until it is written they read the old, still whole, index
        _, data = script_shard("manifest", dumps(manifest))
        _write_file(out_dir / "manifest.js", data)
    _fsync_dir(out_dir)
    keep = ({n.split("/")[0] for n in (*files, *in_place)} | {"manifest.json"}
            | ({"manifest.js"} if keyword_script else set()))
    for path in out_dir.iterdir():
        if path.name not in keep:
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    for name in sorted(set(previous_site) - set(site_files or {})):  # pages gone, excluded, or llms off
        (site_root / name).unlink(missing_ok=True)
    old = out_dir.parent  # format 1 lived in _static/sphinx_rag/ itself
    for name in FORMAT_1_FILES:
        (old / name).unlink(missing_ok=True)
    if (old / "model" / "model_info.json").is_file():
        shutil.rmtree(old / "model", ignore_errors=True)


# -- reading ---------------------------------------------------------------------------------

def find_asset_dir(path: Path) -> Path:
    """Accept the HTML output dir, or the index dir itself."""
    path = Path(path)
    for candidate in (path / ASSET_DIR, path, path / "_build" / "html" / ASSET_DIR):
        if (candidate / "manifest.json").is_file():
            return candidate
    if (path / "_static" / "sphinx_rag" / "manifest.json").is_file():
        raise IndexMissing(f"[sphinx-rag] the index in {path} is from an older sphinx-rag (format 1): rebuild the "
                           "docs with this version")
    raise IndexMissing(
        f"[sphinx-rag] no search index in {path}: add \"sphinx_rag\" to extensions in conf.py and "
        f"build with `sphinx-build -b html SOURCE_DIR {path}`"
    )


class IndexReader:
    """A built index: the manifest at once, every shard on first use (verified, checked, cached).

    Reads a local directory; ``remote.RemoteIndexReader`` reads a published site over
    HTTP through the same methods (it overrides ``_read``, ``where``, ``url_root`` and the
    model's files). Everything read is checked before use (``index_checks.py``): a wrong
    structure is one ``IndexDamaged`` line, a wrong chunk record is dropped (``dropped``
    counts them; ``chunk`` gives ``index_checks.DROPPED``, which has no URL). Each shard's
    payload is capped by its kind (``index_checks.payload_limits``); ``budget``, when set,
    caps the bytes decoded until it is reset (``spent``: a remote reader's per-call cap).
    """

    budget: int | None = None  # bytes of shard payloads that may still be decoded (None: no cap)

    def __init__(self, path: Path | str):
        self.root = find_asset_dir(Path(path))
        try:
            manifest = read_json(self.root / "manifest.json")
        except (OSError, ValueError) as exc:
            raise IndexDamaged(
                f"[sphinx-rag] {self.root / 'manifest.json'} is unreadable ({exc}): rebuild the docs") from None
        self._open(manifest)

    def _open(self, manifest):
        """Check the manifest (format, counts, layout, names: ``IndexDamaged`` if it is not ours)."""
        from .index_checks import manifest_problem

        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if version != FORMAT_VERSION:
            raise IndexDamaged(f"[sphinx-rag] index format {str(version)[:40]} in {self.where('')} is not "
                               f"{FORMAT_VERSION}: {self.rebuild_hint}")
        problem = manifest_problem(manifest)
        if problem:
            raise IndexDamaged(f"[sphinx-rag] {self.where('manifest.json')} {problem}: {self.rebuild_hint}")
        self.n_chunks = manifest["counts"]["chunks"]
        self.dim = manifest["counts"]["dim"]
        self.manifest = manifest
        self._cache: dict[str, object] = {}
        self._dir: dict | None = None
        self._dense_dir: dict | None = None
        self._weights: np.ndarray | None = None
        self.spent = 0  # bytes of shard payloads decoded (``budget``)
        self.dropped = 0  # chunk records dropped by the checks

    #: what the reader of a damaged index should do (a remote site's reader cannot rebuild it)
    rebuild_hint = "rebuild the docs with this sphinx-rag version"
    #: the site root a record's URL must stay under (a local index's URLs are relative)
    url_root = "https://index.invalid/"

    def where(self, name: str) -> str:
        """Where shard ``name`` lives, for messages."""
        return str(self.root / name) if name else str(self.root)

    def _damaged(self, name: str, problem) -> IndexDamaged:
        return IndexDamaged(f"[sphinx-rag] {self.where(name)}: {problem}; {self.rebuild_hint}")

    # raw shards
    def _read(self, name: str) -> bytes:
        try:
            return (self.root / name).read_bytes()
        except OSError as exc:
            raise IndexDamaged(f"[sphinx-rag] {self.root / name} is missing ({exc.strerror}): the index is "
                               "incomplete; rebuild the docs") from None

    def _charge(self, name: str, size: int):
        self.spent += size
        if self.budget is not None and self.spent > self.budget:
            raise IndexDamaged(f"[sphinx-rag] {self.where(name)}: the index asks for more than {self.budget:,} "
                               "bytes for one query: refused")

    def _checked_name(self, name, ext: str) -> str:
        from .index_checks import is_shard_name

        if not is_shard_name(name) or not name.endswith(ext):  # names come from the index: never a path
            raise IndexDamaged(f"[sphinx-rag] {self.where('')} names a shard {str(name)[:80]!r}, which is not a "
                               f"shard name: {self.rebuild_hint}")
        return name

    def limits(self, name: str) -> tuple[int, int]:
        """(most payload bytes, most JSON containers) of shard ``name`` (``index_checks.payload_limits``)."""
        from .index_checks import payload_limits, shard_kind

        return payload_limits(self.manifest, shard_kind(name))

    def script(self, name: str) -> bytes:
        name = self._checked_name(name, ".js")
        data = self._read(name)  # a remote site that does not answer is not a damaged index
        try:
            payload = read_script_shard(name, data, self.limits(name)[0])
        except (ShardError, ValueError, EOFError) as exc:
            raise self._damaged(name, exc) from None
        self._charge(name, len(payload))
        return payload

    def binary(self, name: str) -> bytes:
        name = self._checked_name(name, ".bin")
        data = self._read(name)
        try:
            check_binary_shard(name, data)
        except ShardError as exc:
            raise self._damaged(name, exc) from None
        if len(data) > self.limits(name)[0]:
            raise self._damaged(name, f"{len(data):,} bytes, more than its index allows")
        self._charge(name, len(data))
        return data

    def _json(self, name: str, payload: bytes):
        """A shard's JSON, its containers counted first (``index_checks.json_containers``)."""
        from .index_checks import json_containers

        if json_containers(payload) > self.limits(name)[1]:
            raise self._damaged(name, "more lists and objects than its index allows")
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise self._damaged(name, f"not JSON ({exc})") from None

    def _decoded(self, name: str, decode):
        """``decode(name)``, any failure of a shard that is not what it should be as IndexDamaged."""
        try:
            return decode(name)
        except IndexDamaged:
            raise
        except (ValueError, KeyError, TypeError, IndexError, OverflowError, AttributeError, struct.error) as exc:
            raise self._damaged(name, " ".join(str(exc).split())[:200] or type(exc).__name__) from None

    def _memo(self, name: str, decode):
        if name not in self._cache:
            self._cache[name] = self._decoded(name, decode)
        return self._cache[name]

    @property
    def directory(self) -> dict:
        if self._dir is None:
            from .index_checks import directory_problem

            name = self.manifest["dir"]
            d = self._json(name, self.script(name))
            problem = directory_problem(d, self.n_chunks, self.manifest["layout"]["texts_per_shard"])
            if problem:
                raise self._damaged(name, f"the directory {problem}")
            self._dir = d
        return self._dir

    # keyword tier
    def postings(self, term: str) -> Postings | None:
        shards = self.directory["terms"]
        if not shards:
            return None
        at = max(0, bisect.bisect_right([first for first, _ in shards], term) - 1)
        table = self._memo(shards[at][1], lambda n: keyword_shards.read_term_shard(self.script(n), self.n_chunks))
        return table.get(term)

    def near(self, term: str) -> list[tuple[str, int]]:
        """Vocabulary terms (with df) of the lengths a typo lookup of ``term`` reads."""
        lengths = keyword_shards.near_lengths(term)
        if lengths is None:
            return []
        lo, hi = lengths
        out = []
        for first, last, name in self.manifest["near"]:
            if last >= lo and first <= hi:
                out += [(t, df) for t, df in self._memo(name, lambda n: keyword_shards.read_near_shard(self.script(n)))
                        if lo <= keyword_shards.term_length(t) <= hi]
        return out

    def chunk(self, i: int) -> dict:
        """Record of chunk ``i`` (``title`` added: the heading path; ``index_checks.DROPPED``
        for a record that fails its checks)."""
        if not 0 <= i < self.n_chunks:
            raise IndexError(f"chunk {i} of {self.n_chunks}")
        per = self.manifest["layout"]["texts_per_shard"]
        name = self.directory["texts"][i // per]
        shard = self._memo(name, lambda n: self._texts(n, i // per))
        return shard[i - (i // per) * per]

    def _texts(self, name: str, at: int) -> list[dict]:
        from .index_checks import text_records

        records, dropped = text_records(self._json(name, self.script(name)), at,
                                        self.manifest["layout"]["texts_per_shard"], self.n_chunks, self.url_root,
                                        fill=True)
        if records is None:
            raise self._damaged(name, f"not text shard {at} of the directory")
        self.dropped += dropped
        return records

    def chunks(self) -> list[dict]:
        return [self.chunk(i) for i in range(self.n_chunks)]

    @property
    def weights(self) -> np.ndarray:
        if self._weights is None:
            w = np.ones(self.n_chunks, dtype=np.float64)
            for start, end, weight in self.directory["weights"]:
                w[start:end] = weight
            self._weights = w
        return self._weights

    # dense tier
    @property
    def has_vectors(self) -> bool:
        return self.manifest.get("dense") is not None

    def centroids(self) -> tuple[np.ndarray, np.ndarray]:
        name = self.manifest["dense"]["centroids"]

        def decode(n):
            vectors, scales = dense.read_centroid_shard(self.binary(n), self.dim)
            if len(vectors) != len(self.dense_directory["clusters"]):
                raise ValueError(f"{len(vectors)} centroids for {len(self.dense_directory['clusters'])} clusters")
            return vectors, scales

        return self._memo(name, decode)

    @property
    def dense_directory(self) -> dict:
        """Cluster shard names and sizes, cluster map names: out of the keyword directory,
        which every first query reads (at 200,000 chunks they are 20 KB of its 70 KB gzip)."""
        if self._dense_dir is None:
            from .index_checks import dense_directory_problem

            name = self.manifest["dense"]["directory"]
            d = self._json(name, self.binary(name))
            problem = dense_directory_problem(d, self.n_chunks, self.manifest["counts"]["clusters"],
                                              self.manifest["layout"]["cluster_map_chunks"])
            if problem:
                raise self._damaged(name, f"the dense directory {problem}")
            self._dense_dir = d
        return self._dense_dir

    def cluster(self, c: int) -> dense.Cluster:
        name, size = self.dense_directory["clusters"][c]

        def decode(n):
            cluster = dense.read_cluster_shard(self.binary(n), self.dim, self.n_chunks)
            if len(cluster.ids) != size:
                raise ValueError(f"{len(cluster.ids)} chunks, its directory says {size}")
            return cluster

        return self._memo(name, decode)

    @property
    def cluster_sizes(self) -> list[int]:
        return [size for _, size in self.dense_directory["clusters"]]

    def cluster_of(self, i: int) -> int | None:
        """The cluster holding chunk ``i`` (None: the index has no cluster map)."""
        names = self.dense_directory["cluster_map"]
        if not names:
            return None
        per = self.manifest["layout"]["cluster_map_chunks"]
        clusters = len(self.dense_directory["clusters"])

        def decode(n):
            shard = dense.read_cluster_map_shard(self.binary(n), clusters)
            if len(shard) != min(per, self.n_chunks - (i // per) * per):
                raise ValueError(f"a cluster map of {len(shard)} chunks")
            return shard

        shard = self._memo(names[i // per], decode)
        return int(shard[i % per])

    def directory_names(self) -> list[str]:
        """Every shard file the manifest and the directory name (the model excepted)."""
        d = self.directory
        names = [self.manifest["dir"], *(n for _, _, n in self.manifest["near"]), *(n for _, n in d["terms"]),
                 *d["texts"]]
        if self.has_vectors:
            dd = self.dense_directory
            names += [self.manifest["dense"]["centroids"], self.manifest["dense"]["directory"],
                      *(n for n, _ in dd["clusters"]), *dd["cluster_map"]]
        names += [self.manifest["llms"]["pages"]] if self.manifest.get("llms") else []
        return names + ([self.manifest["encoder"]["file"]] if self.has_encoder else [])

    def pages(self) -> dict | None:
        """The pages and the agents' files (``{"pages": [[doc, url, twin, first chunk,
        chunks]], "files": {name: [bytes, hash]}}``), or None: the site writes none. Entries
        that fail their checks (a name out of the site, a URL off it) are left out."""
        from .index_checks import pages_listing

        entry = self.manifest.get("llms")
        if not entry:
            return None

        def decode(n):
            listing = pages_listing(self._json(n, self.binary(n)), self.n_chunks, self.url_root)
            if listing is None:
                raise ValueError("not a pages listing")
            return listing

        return self._memo(entry["pages"], decode)

    @property
    def has_encoder(self) -> bool:
        return bool(self.manifest.get("encoder"))

    def encoder(self) -> StaticEncoder:
        name = self.manifest["encoder"]["file"]
        return self._memo(name, lambda n: StaticEncoder.from_bytes(self.binary(n)))

    @property
    def model_dir(self) -> Path | None:
        entry = self.manifest.get("model_files")
        return self.root / entry["dir"] if entry else None

    def verify_model(self):
        """Check the model files against their sha256 (they are large: once per process)."""
        entry = self.manifest["model_files"]
        for name in MODEL_FILES:
            meta = entry["files"][name]
            data = self._read(f"{entry['dir']}/{name}")
            if hashlib.sha256(data).hexdigest() != meta["sha256"]:
                raise IndexDamaged(f"[sphinx-rag] {self.root / entry['dir'] / name} does not match the manifest "
                                  "(corrupted): rebuild the docs")


def load_chunk_records(asset_dir: Path) -> list[dict]:
    """Every chunk record of an existing index (ValueError if it is not a readable format 2)."""
    try:
        reader = IndexReader(asset_dir)
        records = reader.chunks()
        weights = reader.weights
    except (IndexMissing, IndexDamaged) as exc:
        raise ValueError(str(exc)) from None
    if reader.dropped:
        raise ValueError(f"[sphinx-rag] {reader.where('')}: {reader.dropped} chunk records fail their checks: "
                         "rebuild the docs")
    out, position = [], {}
    for i, r in enumerate(records):  # ``order``: the chunk's position in its page
        order = position[r["doc"]] = position.get(r["doc"], -1) + 1
        record = {k: v for k, v in r.items() if k != "members" or v}  # as written: a card's only
        out.append(dict(record, weight=float(weights[i]), order=order))
    return out
