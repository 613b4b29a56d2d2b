"""The reference search: BM25 + dense scoring, fused, over the static assets.

The browser client (``js/src/retrieve.js``) mirrors these functions one for one;
``tests/fixtures/rankings.json`` holds rankings computed here that the JS tests
must reproduce. All scoring is in float64 over the stored float32/int8 arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .assets import Assets, load_assets
from .lexical import tokenize

__all__ = ["Result", "Searcher", "top_k", "rrf_fuse", "dense_scores", "CANDIDATES"]

CANDIDATES = 100  # depth of each ranking before fusion
FUSIONS = ("rrf", "bm25", "dense")


@dataclass
class Result:
    rank: int
    score: float
    url: str
    title: str
    kind: str
    text: str
    id: str
    index: int

    def to_json(self) -> dict:
        return {"rank": self.rank, "score": self.score, "url": self.url, "title": self.title,
                "kind": self.kind, "text": self.text, "id": self.id}


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k best positive scores; ties go to the lower index."""
    candidates = np.flatnonzero(scores > 0)
    order = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
    return order[:k]


def dense_scores(query: np.ndarray, vectors_i8: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Cosine of the (normalized) query with each int8 vector times its scale."""
    return (vectors_i8.astype(np.float64) @ query.astype(np.float64)) * scales.astype(np.float64)


def rrf_fuse(rankings: list[list[int]], k: int, weights: np.ndarray) -> dict[int, float]:
    """Reciprocal-rank fusion: sum of 1 / (k + rank) (rank from 1), times the chunk weight."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, idx in enumerate(ranking, start=1):
            fused[idx] = fused.get(idx, 0.0) + 1.0 / (k + rank)
    return {i: s * float(weights[i]) for i, s in fused.items()}


class Searcher:
    """Load the assets of a built site once, then answer queries."""

    def __init__(self, path: Path | str, *, fusion: str | None = None, rrf_k: int | None = None):
        self.assets: Assets = load_assets(Path(path))
        settings = self.assets.manifest.get("settings", {})
        self.fusion = fusion or settings.get("fusion", "rrf")
        if self.fusion not in FUSIONS:
            raise ValueError(f"[sphinx-rag] fusion must be one of {FUSIONS}, got {self.fusion!r}")
        self.rrf_k = rrf_k or settings.get("rrf_k", 60)
        self.weights = np.array([c["weight"] for c in self.assets.chunks], dtype=np.float64)
        self._embedder = None
        if self.fusion != "bm25" and self.assets.vectors_i8 is None:
            self.fusion = "bm25"  # keyword-only index

    @property
    def embedder(self):
        if self._embedder is None:
            from .embed import Embedder

            self._embedder = Embedder(self.assets.model_dir)
        return self._embedder

    def bm25_scores(self, query: str) -> np.ndarray:
        return self.assets.bm25.scores(tokenize(query))

    def dense_scores(self, query: str) -> np.ndarray:
        vector = self.embedder.embed([query])[0]
        return dense_scores(vector, self.assets.vectors_i8, self.assets.scales)

    def scores(self, query: str) -> dict[int, float]:
        """Final score of every candidate chunk."""
        if self.fusion == "bm25":
            s = self.bm25_scores(query) * self.weights
            return {i: float(s[i]) for i in top_k(s, CANDIDATES)}
        if self.fusion == "dense":
            s = self.dense_scores(query)
            s = np.where(s > 0, s * self.weights, s)
            return {i: float(s[i]) for i in top_k(s, CANDIDATES)}
        rankings = [top_k(self.bm25_scores(query), CANDIDATES), top_k(self.dense_scores(query), CANDIDATES)]
        return rrf_fuse(rankings, self.rrf_k, self.weights)

    def search(self, query: str, k: int = 10) -> list[Result]:
        scored = self.scores(query)
        ranked = sorted(scored, key=lambda i: (-scored[i], i))[:k]
        out = []
        for rank, i in enumerate(ranked, start=1):
            c = self.assets.chunks[i]
            out.append(Result(rank, scored[i], c["url"], c["title"], c["kind"], c["text"], c["id"], i))
        return out
