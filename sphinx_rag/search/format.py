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
                         twins: ``agents/markdown.py``) with their sizes and hashes, unless
                         sphinx_rag_llms_txt = False

Every name but the manifest's carries the hash of its content (``shards.py``), so a
reader fetches only what a query needs and caches it forever, a rebuild writes only
the shards whose content changed, and the index is replaced atomically: new shards
(and the files for agents at the site root) first, then the manifest (one rename), then
the files no manifest names are removed (and the agents' files the previous index named
that this one does not).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FORMAT_VERSION", "ASSET_DIR", "MODEL_FILES", "Layout", "IndexMissing", "IndexDamaged", "read_json",
           "site_root_of"]

FORMAT_VERSION = 3
ASSET_DIR = Path("_static") / "sphinx_rag" / "index"
MODEL_FILES = ("model.onnx", "model_info.json", "tokenizer.json", "vocab.txt")


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


def site_root_of(out_dir: Path) -> Path | None:
    """The site root of an index directory ``<html>/_static/sphinx_rag/index`` (None when
    the index is elsewhere: it has no site around it)."""
    out_dir = Path(out_dir)
    n = len(ASSET_DIR.parts)
    return out_dir.parents[n - 1] if len(out_dir.parts) > n and out_dir.parts[-n:] == ASSET_DIR.parts else None
