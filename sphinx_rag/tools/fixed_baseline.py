"""Fixed-size-chunk baselines for ``sphinx-rag evaluate``: does structure-aware chunking pay?

The strong simple baseline for long-form text (seed 003, the fastbook benchmark):
cut each page's plain text into ~750-character windows with overlap, ignoring its
structure, and rank them with the same scoring as sphinx-rag (BM25 x coverage with typo
expansion; the same MiniLM model for cosine; RRF k=60 of both top-100 lists; the same
page weights). Only the chunking differs, so the comparison isolates it.

Computed at evaluation time from the built site: the pages are those of the index
(``page_text.py`` reads their HTML). Chunk vectors are cached under the model cache
(``fixed-chunks/<hash>.npy``, keyed by the model and every chunk text): a re-run embeds
nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..search.bm25 import build_index
from ..search.keyword_scoring import expand_tokens, keyword_scores
from ..search.keyword_shards import near_lengths
from ..search.lexical import tokenize
from ..search.retrieve import CANDIDATES, Result, Searcher, rrf_fuse, top_k
from .page_text import PageText, read_page_text

__all__ = ["CHUNK_CHARS", "OVERLAP_CHARS", "fixed_windows", "FixedChunk", "FixedSearcher"]

CHUNK_CHARS = 750
OVERLAP_CHARS = 150
_SPACE = re.compile(r"\s")


def fixed_windows(text: str, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS) -> list[tuple[int, int]]:
    """(start, end) of windows of at most ``size`` characters, each starting ``overlap``
    characters before the previous one ends; cuts fall on whitespace when there is some
    in the second half of a window (words stay whole)."""
    if overlap >= size:
        raise ValueError(f"[sphinx-rag] overlap ({overlap}) must be smaller than the chunk size ({size})")
    windows = []
    start, n = 0, len(text)
    while start < n:
        end = min(n, start + size)
        if end < n:
            cut = max((m.start() for m in _SPACE.finditer(text, start + size // 2, end)), default=-1)
            if cut > start:
                end = cut
        windows.append((start, end))
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        space = _SPACE.search(text, nxt, end)
        start = space.end() if space else nxt
    return windows


@dataclass
class FixedChunk:
    page: str  # URL of the page, no anchor
    title: str
    text: str
    url: str  # page#anchor where the window starts
    also: list[str]  # page#anchor of the other sections/objects the window reaches into


def _url(page: str, anchor: str | None) -> str:
    return f"{page}#{anchor}" if anchor else page


def page_chunks(page: str, title: str, pt: PageText, size: int, overlap: int) -> list[FixedChunk]:
    out = []
    for start, end in fixed_windows(pt.text, size, overlap):
        out.append(FixedChunk(page, title, pt.text[start:end], _url(page, pt.anchor_at(start)),
                              [_url(page, a) for a in pt.anchors_in(start, end)]))
    return out


class FixedSearcher:
    """bm25 / dense / rrf over fixed windows of the pages the site's index covers."""

    def __init__(self, html_dir: Path | str, *, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS,
                 searcher: Searcher | None = None):
        self.site = searcher or Searcher(html_dir)
        index = self.site.index
        pages: dict[str, tuple[str, float]] = {}  # page URL -> (title, weight)
        weights = index.weights
        for i in range(index.n_chunks):
            c = index.chunk(i)
            page = c["url"].split("#", 1)[0]
            if page not in pages:
                pages[page] = (c["title"].split(" > ", 1)[0], float(weights[i]))
        html_root = index.root.parent.parent.parent  # _static/sphinx_rag/index -> the HTML root
        self.page_texts = {page: read_page_text(html_root / page) for page in pages}
        self.chunks = [ch for page, (title, _) in pages.items()
                       for ch in page_chunks(page, title, self.page_texts[page], size, overlap)]
        self.weights = np.array([pages[ch.page][1] for ch in self.chunks], dtype=np.float64)
        self.bm25 = build_index([tokenize(ch.text) for ch in self.chunks])
        self._vectors: np.ndarray | None = None

    def _near(self, term: str) -> list[tuple[str, int]]:
        lengths = near_lengths(term)
        if lengths is None:
            return []
        return [(t, self.bm25.doc_freq(t)) for t in self.bm25.vocab if lengths[0] <= len(t) <= lengths[1]]

    def keyword_scores(self, query: str) -> np.ndarray:
        tokens = tokenize(query)
        return keyword_scores(len(self.chunks), tokens, expand_tokens(tokens, self.bm25.postings, self._near))

    @property
    def vectors(self) -> np.ndarray:
        if self._vectors is None:
            self._vectors = self._cached_vectors()
        return self._vectors

    def _cached_vectors(self) -> np.ndarray:
        model_dir = self.site.index.model_dir
        key = hashlib.sha256((model_dir / "model.onnx").read_bytes())
        for ch in self.chunks:
            key.update(ch.text.encode("utf-8") + b"\0")
        root = Path(os.environ.get("SPHINX_RAG_CACHE") or Path.home() / ".cache" / "sphinx-rag")
        path = root / "fixed-chunks" / f"{key.hexdigest()[:32]}.npy"
        if path.is_file():
            return np.load(path)
        vectors = self.site.embedder.embed([ch.text for ch in self.chunks])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
        np.save(tmp, vectors)
        os.replace(tmp, path)
        return vectors

    def dense_scores(self, query: str) -> np.ndarray:
        return self.vectors @ self.site.query_vector(query).astype(np.float32)

    def scores(self, query: str, fusion: str) -> dict[int, float]:
        if fusion == "bm25":
            s = self.keyword_scores(query) * self.weights
        elif fusion == "dense":
            dense = self.dense_scores(query).astype(np.float64)
            s = np.where(dense > 0, dense * self.weights, dense)
        else:
            rankings = [top_k(self.keyword_scores(query), CANDIDATES),
                        top_k(self.dense_scores(query).astype(np.float64), CANDIDATES)]
            return rrf_fuse(rankings, self.site.rrf_k, self.weights)
        return {i: float(s[i]) for i in top_k(s, CANDIDATES)}

    def search(self, query: str, fusion: str = "rrf", k: int = 10) -> list[Result]:
        scored = self.scores(query, fusion)
        ranked = sorted(scored, key=lambda i: (-scored[i], i))[:k]
        return [Result(rank, scored[i], self.chunks[i].url, self.chunks[i].title, "fixed", self.chunks[i].text,
                       f"fixed:{i}", i, list(self.chunks[i].also))
                for rank, i in enumerate(ranked, start=1)]
