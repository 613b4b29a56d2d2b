"""Writing the static index (``search/format.py`` says what it holds): shards named by
their content's hash, the agents' files at the site root, then the manifest in one
rename, then what no manifest names any more. Every file is written whole (temp file,
fsync, rename), so a reader never sees half of one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..search import dense, keyword_shards
from ..search.bm25 import BM25Index
from ..search.format import FORMAT_VERSION, MODEL_FILES, Layout, read_json, site_root_of
from ..search.shards import ShardError, binary_shard, check_binary_shard, dumps, script_shard, script_shards

__all__ = ["write_assets", "amend_manifest"]

#: Files of format 1 (in ``_static/sphinx_rag/``), removed when format 2 is written.
FORMAT_1_FILES = ("manifest.json", "chunks.json", "bm25.json", "bm25_offsets.u32", "bm25_docs.u32",
                  "bm25_impacts.f32", "embeddings.i8", "embeddings_scale.f32", "keyword_index.js")
_UMASK = os.umask(0)
os.umask(_UMASK)


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


def _model_files(model_dir: Path, names: tuple[str, ...] = MODEL_FILES, prefix: str = "model"
                 ) -> tuple[str, dict[str, Path], dict]:
    """The model's (or the reranker's) directory name in the index, its files, and their
    manifest entries: hashed once while they do not change (``model/filehash.py``), read
    only to be copied."""
    from ..model.filehash import sha256

    paths = {name: Path(model_dir) / name for name in names}
    entries = {name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for name, p in paths.items()}
    digest = hashlib.sha256(dumps(entries)).hexdigest()[:16]
    return f"{prefix}-{digest}", paths, entries


def _publish_files(out_dir: Path, files: dict, in_place: set, model_dir: Path, names: tuple[str, ...],
                   prefix: str) -> dict:
    """The files of a model directory into the index (named by their hashes: a file there
    with its size is it, and is not written again); their manifest entry."""
    name, paths, entries = _model_files(model_dir, names, prefix)
    for file, path in paths.items():
        target = f"{name}/{file}"
        if _shard_at_hand(out_dir, (target, entries[file]["bytes"])) is None:
            files[target] = path.read_bytes()
        else:
            in_place.add(target)
    return {"dir": name, "files": entries}


def write_assets(out_dir: Path, *, chunks: list[dict], bm25: BM25Index, vectors_i8: np.ndarray | None,
                 scales: np.ndarray | None, model_dir: Path | None, model_info: dict | None,
                 settings: dict, encoder: tuple[bytes, dict] | None = None, keyword_script: bool = True,
                 kept_centroids: tuple[bytes, int] | None = None, inputs: str | None = None,
                 layout: Layout = Layout(), shard_memo: dict[str, tuple[str, int]] | None = None,
                 site_files: dict[str, bytes] | None = None, pages: list[list] | None = None,
                 reranker_dir: Path | None = None) -> dict:
    """Write the index into ``out_dir`` and return its manifest.

    ``chunks``: the records of ``Chunk.to_record`` in index order. ``model_dir``: the
    query model shipped with the site (None: none). ``reranker_dir``: the cross-encoder
    that reorders the model tier's results (``search/cross_encoder.py``), published with
    the model only. ``encoder``: the static query
    encoder's asset and its manifest fields (``build.py``: what it was fitted on). ``keyword_script``:
    also write ``manifest.js`` (pages with the search bar, which may be opened from
    file://). ``kept_centroids``: the previous build's centroid shard and the chunks
    changed since its k-means (an incremental build, ``build.py``): the chunks are assigned
    to those centroids, no k-means. ``inputs``: a digest of what the index was built from
    (``index_step.index_inputs``: a build that changes none of it keeps the index). Shards already
    present (same content, same name) are not rewritten. ``shard_memo``: script shards
    by payload (``_payload_key`` -> file name, size), an earlier build's (``carry.py``):
    a payload found there whose file is in ``out_dir`` is not compressed again (at 25k
    chunks a one-page edit changes 4 of 971); replaced by this index's. ``site_files``: the
    files for agents (``agents.markdown.site_files``: name relative to the site root -> bytes) and
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
    dense_entry = model_entry = encoder_entry = reranker_entry = None
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
            model_entry = _publish_files(out_dir, files, in_place, model_dir, MODEL_FILES, "model")
            if reranker_dir is not None:  # it comes with the model's tier (cross_encoder.py)
                from ..search.cross_encoder import RERANKER_FILES

                reranker_entry = _publish_files(out_dir, files, in_place, reranker_dir, RERANKER_FILES, "reranker")
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
        "reranker_files": reranker_entry,
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
    passage lengths of ``search/expand.py`` and evaluation; ``display`` for readers and the LLM;
    the links of an object card and its members (``search/expand.py``), where set."""
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
