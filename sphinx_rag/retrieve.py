"""The reference search: BM25 + dense scoring, fused, over the static assets.

The browser client (``js/src/search/retrieve.js``) mirrors these functions one for one;
``tests/fixtures/rankings.json`` holds rankings computed here that the JS tests
must reproduce. All scoring is in float64 over the stored float32/int8 arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .assets import Assets, load_assets
from .bm25 import BM25Index, typo_candidates
from .expand import expand
from .lexical import fold, split_words, tokenize

__all__ = ["Result", "Searcher", "top_k", "rrf_fuse", "dense_scores", "correct_spelling", "CANDIDATES", "BINARY_FIRST_ABOVE",
           "BINARY_CANDIDATES", "BINARY_FRACTION", "use_binary_first", "binary_candidate_count", "pack_signs", "hamming_candidates",
           "dense_candidate_scores"]

CANDIDATES = 100  # depth of each ranking before fusion
FUSIONS = ("rrf", "bm25", "dense")
#: Above this many chunks the dense pass is binary-first (sign bits, Hamming), then exact.
BINARY_FIRST_ABOVE = 5000
#: Chunks kept by the binary pass for exact int8 rescoring: at least this many, and at
#: least 1/BINARY_FRACTION of the chunks. Sign bits rank coarsely: on 12k real docstring
#: paragraphs, keeping 200 changed the fused top-10 of 61% of queries, 2000 of 5%.
BINARY_CANDIDATES = 2000
BINARY_FRACTION = 8
_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


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
    also: list[str] = field(default_factory=list)  # URLs of the chunks the passage added

    def to_json(self) -> dict:
        return {"rank": self.rank, "score": self.score, "url": self.url, "title": self.title,
                "kind": self.kind, "text": self.text, "id": self.id}


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k best positive scores; ties go to the lower index."""
    candidates = np.flatnonzero(scores > 0)
    order = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
    return order[:k]


def dense_scores(query: np.ndarray, vectors_i8: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Cosine of the (normalized) query with each int8 vector times its scale.

    float64, summed over the dimensions in order (as js/src/search/retrieve.js does), not
    by BLAS, whose summation order varies: both sides get bit-identical scores.
    """
    q = np.asarray(query, dtype=np.float32).astype(np.float64)
    acc = np.zeros(len(vectors_i8), dtype=np.float64)
    for j in range(vectors_i8.shape[1] if vectors_i8.ndim == 2 else 0):
        acc += vectors_i8[:, j] * q[j]
    return acc * scales.astype(np.float64)


def use_binary_first(n_chunks: int) -> bool:
    """The default dense strategy (same rule in JS): exact up to BINARY_FIRST_ABOVE chunks."""
    return n_chunks > BINARY_FIRST_ABOVE


def binary_candidate_count(n_chunks: int, minimum: int = BINARY_CANDIDATES) -> int:
    """How many chunks the binary pass keeps by default (same rule in JS)."""
    return min(n_chunks, max(minimum, -(-n_chunks // BINARY_FRACTION)))


def pack_signs(vectors: np.ndarray) -> np.ndarray:
    """One bit per dimension, set where the value is > 0 (rows of packed uint8)."""
    return np.packbits(np.asarray(vectors) > 0, axis=-1)


def hamming_candidates(query: np.ndarray, signs: np.ndarray, m: int) -> np.ndarray:
    """The m rows whose sign bits are nearest the query's (Hamming), ties to the lower index."""
    distance = _POPCOUNT[np.bitwise_xor(signs, pack_signs(query)[None, :])].sum(axis=1)
    return np.argsort(distance, kind="stable")[:m]


def dense_candidate_scores(query: np.ndarray, vectors_i8: np.ndarray, scales: np.ndarray, *,
                           binary_first: bool, signs: np.ndarray | None = None,
                           binary_candidates: int | None = None) -> np.ndarray:
    """Dense scores of every chunk; binary-first leaves 0 outside the Hamming candidates.

    A candidate's score equals its exact ``dense_scores`` value, so with enough
    candidates both strategies give the same ranking. ``binary_candidates``: how many
    the binary pass keeps (default ``binary_candidate_count(n)``).
    """
    if not binary_first:
        return dense_scores(query, vectors_i8, scales)
    if signs is None:
        signs = pack_signs(vectors_i8)
    if binary_candidates is None:
        binary_candidates = binary_candidate_count(len(vectors_i8))
    rows = np.sort(hamming_candidates(query, signs, binary_candidates))
    out = np.zeros(len(vectors_i8), dtype=np.float64)
    out[rows] = dense_scores(query, vectors_i8[rows], scales[rows])
    return out


def correct_spelling(query: str, bm25: BM25Index, model_words: set[str]) -> str:
    """The query with misspelt words replaced by their nearest corpus term, for embedding.

    A word is corrected only when neither the corpus (BM25 vocabulary) nor the
    embedding model's own vocabulary knows it: "clasifier" becomes "classifier",
    while a real word the docs happen not to use ("inference") is left alone.
    WordPiece would otherwise cut a typo into meaningless pieces.
    """
    out = []
    for piece, is_word in split_words(query):
        if is_word:
            tokens = tokenize(piece)
            if len(tokens) == 1 and bm25.term_id(tokens[0]) is None and fold(piece).lower() not in model_words:
                candidates = typo_candidates(tokens[0], bm25.vocab, bm25.doc_freq)
                if candidates:
                    piece = candidates[0][1]
        out.append(piece)
    return "".join(out)


def rrf_fuse(rankings: list[list[int]], k: int, weights: np.ndarray) -> dict[int, float]:
    """Reciprocal-rank fusion: sum of 1 / (k + rank) (rank from 1), times the chunk weight."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, idx in enumerate(ranking, start=1):
            fused[idx] = fused.get(idx, 0.0) + 1.0 / (k + rank)
    return {i: s * float(weights[i]) for i, s in fused.items()}


class Searcher:
    """Load the assets of a built site once, then answer queries."""

    def __init__(self, path: Path | str, *, fusion: str | None = None, rrf_k: int | None = None,
                 binary_first: bool | None = None, binary_candidates: int | None = None):
        self.assets: Assets = load_assets(Path(path))
        settings = self.assets.manifest.get("settings", {})
        self.fusion = fusion or settings.get("fusion", "rrf")
        if self.fusion not in FUSIONS:
            raise ValueError(f"[sphinx-rag] fusion must be one of {FUSIONS}, got {self.fusion!r}")
        self.rrf_k = rrf_k or settings.get("rrf_k", 60)
        self.weights = np.array([c["weight"] for c in self.assets.chunks], dtype=np.float64)
        self._embedder = None
        self._model_words: set[str] | None = None
        if self.fusion != "bm25" and self.assets.vectors_i8 is None:
            self.fusion = "bm25"  # keyword-only index
        # None: exact dense scoring up to BINARY_FIRST_ABOVE chunks, binary-first above,
        # keeping binary_candidate_count(n) chunks.
        self.binary_first = use_binary_first(len(self.assets.chunks)) if binary_first is None else binary_first
        self.binary_candidates = binary_candidates
        self._signs = None

    @property
    def embedder(self):
        if self._embedder is None:
            from .embed import Embedder

            self._embedder = Embedder(self.assets.model_dir)
        return self._embedder

    def embedding_query(self, query: str) -> str:
        """The text actually embedded for a query (spelling corrected)."""
        if self._model_words is None:
            lines = (self.assets.model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
            self._model_words = {w for w in lines if not w.startswith("##")}
        return correct_spelling(query, self.assets.bm25, self._model_words)

    def bm25_scores(self, query: str) -> np.ndarray:
        """The keyword ranking: BM25 times query-term coverage (BM25Index.keyword_scores)."""
        return self.assets.bm25.keyword_scores(tokenize(query))

    def dense_scores(self, query: str, vector: np.ndarray | None = None) -> np.ndarray:
        """Dense scores (exact or binary-first); ``vector``: the query's embedding if known."""
        if vector is None:
            vector = self.embedder.embed([self.embedding_query(query)])[0]
        if self.binary_first and self._signs is None:
            self._signs = pack_signs(self.assets.vectors_i8)
        return dense_candidate_scores(vector, self.assets.vectors_i8, self.assets.scales,
                                      binary_first=self.binary_first, signs=self._signs,
                                      binary_candidates=self.binary_candidates)

    def scores(self, query: str, vector: np.ndarray | None = None) -> dict[int, float]:
        """Final score of every candidate chunk."""
        if self.fusion == "bm25":
            s = self.bm25_scores(query) * self.weights
            return {i: float(s[i]) for i in top_k(s, CANDIDATES)}
        if self.fusion == "dense":
            s = self.dense_scores(query, vector)
            s = np.where(s > 0, s * self.weights, s)
            return {i: float(s[i]) for i in top_k(s, CANDIDATES)}
        rankings = [top_k(self.bm25_scores(query), CANDIDATES), top_k(self.dense_scores(query, vector), CANDIDATES)]
        return rrf_fuse(rankings, self.rrf_k, self.weights)

    def search(self, query: str, k: int = 10, vector: np.ndarray | None = None) -> list[Result]:
        """The k best passages (expand.py): each a hit plus, if short, what follows it."""
        scored = self.scores(query, vector)
        ranked = sorted(scored, key=lambda i: (-scored[i], i))
        chunks = self.assets.chunks
        out = []
        for rank, span in enumerate(expand(ranked, chunks, k), start=1):
            c = chunks[span[0]]
            text = "\n\n".join(chunks[j]["text"] for j in span)
            out.append(Result(rank, scored[span[0]], c["url"], c["title"], c["kind"], text, c["id"], span[0],
                              [chunks[j]["url"] for j in span[1:]]))
        return out
