"""Chunks -> BM25 + int8 embeddings -> assets (the build-finished step).

Vectors are stored as int8 with one float32 scale per chunk. A small sqlite
cache beside the exported model maps a chunk text's sha256 to its stored
vector, so a rebuild only embeds chunks whose text changed.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Callable

import numpy as np

from .assets import read_json, write_assets
from .bm25 import build_index
from .chunk import Chunk
from .lexical import tokenize

__all__ = ["build", "quantize_vectors", "EmbeddingCache"]

Progress = Callable[[str, int, int], None]


HEADER_BOOST = 2  # the first line (heading path / owner) counts this many times


def index_tokens(text: str) -> list[str]:
    """BM25 tokens of a chunk; its header line is repeated (a simple BM25F)."""
    header = text.split("\n", 1)[0]
    return tokenize(text) + tokenize(header) * (HEADER_BOOST - 1)


def embedding_input(chunk: Chunk) -> str:
    """What is embedded for a chunk ("embed small, return big", parent-document style).

    An API chunk is embedded by its first paragraph: owner, name, type/default and
    the first paragraph of the description. Long option lists otherwise dominate the
    mean-pooled vector (demo docs: dense MRR@10 0.709 -> 0.742, see eval/RESULTS.md).
    The whole chunk is still what BM25 indexes and what is shown and cited.
    """
    return chunk.text.split("\n\n", 1)[0] if chunk.kind == "api" else chunk.text


def quantize_vectors(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-vector int8: v ≈ q * scale."""
    peak = np.abs(vectors).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(vectors / scales[:, None]), -127, 127).astype(np.int8)
    return q, scales


class EmbeddingCache:
    """text sha256 -> (int8 vector, scale); failures to open just disable it."""

    def __init__(self, path: Path):
        try:
            self.db = sqlite3.connect(str(path))
            self.db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, q BLOB, scale REAL)")
        except sqlite3.Error:
            self.db = None

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get(self, keys: list[str]) -> dict[str, tuple[bytes, float]]:
        if self.db is None:
            return {}
        found = {}
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            rows = self.db.execute(f"SELECT key, q, scale FROM v WHERE key IN ({','.join('?' * len(part))})", part)
            found.update({k: (q, s) for k, q, s in rows})
        return found

    def put(self, rows: list[tuple[str, bytes, float]]):
        if self.db is None or not rows:
            return
        try:
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            pass


def embed_chunks(texts: list[str], model_dir: Path, *, batch_size: int, threads: int | None,
                 progress: Progress | None) -> tuple[np.ndarray, np.ndarray]:
    """int8 vectors and scales for all texts, embedding only those not cached."""
    from .embed import Embedder

    dim = int(read_json(Path(model_dir) / "model_info.json")["dim"])
    use_cache = os.environ.get("SPHINX_RAG_EMBED_CACHE", "1") != "0"  # "0": benchmarks, debugging
    cache = EmbeddingCache(Path(model_dir) / "embedding_cache.sqlite" if use_cache else Path(":memory:"))
    keys = [EmbeddingCache.key(t) for t in texts]
    cached = cache.get(sorted(set(keys)))
    todo = sorted({k: t for k, t in zip(keys, texts) if k not in cached}.items())
    if todo:
        embedder = Embedder(model_dir, threads=threads)
        report = (lambda done: progress("embedding chunks... ", done, len(todo))) if progress else None
        fresh = embedder.embed([t for _, t in todo], batch_size=batch_size, progress=report)
        q, s = quantize_vectors(fresh)
        rows = [(k, q[i].tobytes(), float(s[i])) for i, (k, _) in enumerate(todo)]
        cache.put(rows)
        cached.update({k: (qb, sc) for k, qb, sc in rows})
    vectors = np.zeros((len(texts), dim), dtype=np.int8)
    scales = np.zeros(len(texts), dtype=np.float32)
    for i, k in enumerate(keys):
        qb, sc = cached[k]
        vectors[i] = np.frombuffer(qb, dtype=np.int8)
        scales[i] = sc
    return vectors, scales


def build(chunks: list[Chunk], *, urls: dict[str, str], out_dir: Path, model_dir: Path, embeddings: bool,
          settings: dict, batch_size: int = 32, threads: int | None = None,
          progress: Progress | None = None) -> dict:
    """Index the chunks (in the given order) and write the assets; returns the manifest."""
    records = []
    for c in chunks:
        url = urls[c.doc] + (f"#{c.anchor}" if c.anchor else "")
        records.append({"id": c.id, "doc": c.doc, "url": url, "title": c.title, "headings": c.headings,
                        "kind": c.kind, "order": c.order, "weight": c.weight, "text": c.text})
    bm25 = build_index([index_tokens(c.text) for c in chunks])
    vectors = scales = info = None
    if embeddings and chunks:
        info = read_json(Path(model_dir) / "model_info.json")
        vectors, scales = embed_chunks([embedding_input(c) for c in chunks], model_dir, batch_size=batch_size,
                                       threads=threads, progress=progress)
    return write_assets(out_dir, chunks=records, bm25=bm25, vectors_i8=vectors, scales=scales,
                        model_dir=model_dir, model_info=info,
                        settings=settings)
