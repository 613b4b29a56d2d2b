"""BM25 with precomputed impacts, built once per build from the chunks' tokens.

``build_index`` gives every (term, chunk) pair its final BM25Okapi contribution (scores
equal rank-bm25's), so that a query only sums them (``keyword_scoring``); the index is
stored in term shards (``keyword_shards``).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .keyword_scoring import Postings, bm25_scores, expand_tokens
from .lexical import tokenize

__all__ = ["K1", "B", "EPSILON", "HEADER_BOOST", "BM25Index", "build_index", "document_tokens"]

K1, B, EPSILON = 1.5, 0.75, 0.25  # rank-bm25's BM25Okapi defaults
HEADER_BOOST = 2  # a chunk's first line (heading path / owner) counts this many times


def document_tokens(text: str) -> list[str]:
    """BM25 tokens of a chunk; its header line is repeated (a simple BM25F)."""
    header = text.split("\n", 1)[0]
    return tokenize(text) + tokenize(header) * (HEADER_BOOST - 1)


@dataclass
class BM25Index:
    """The whole index in memory (build time): ``vocab[t]`` is in ``docs[offsets[t]:offsets[t+1]]``."""

    vocab: list[str]  # sorted
    offsets: np.ndarray  # uint32, len(vocab) + 1
    docs: np.ndarray  # uint32 chunk indices
    impacts: np.ndarray  # float32 BM25 contribution of the term to that chunk
    n_docs: int
    avgdl: float
    k1: float = K1
    b: float = B
    epsilon: float = EPSILON

    def __post_init__(self):
        self._term_ids = {t: i for i, t in enumerate(self.vocab)}

    def doc_freq(self, term: str) -> int:
        tid = self._term_ids[term]
        return int(self.offsets[tid + 1] - self.offsets[tid])

    def postings(self, term: str) -> Postings | None:
        """Exact (float32 impacts, no head cut): what the stored shards approximate."""
        tid = self._term_ids.get(term)
        if tid is None:
            return None
        lo, hi = self.offsets[tid], self.offsets[tid + 1]
        return Postings(term, int(hi - lo), self.docs[lo:hi].astype(np.int64), self.impacts[lo:hi].astype(np.float64))

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every chunk for the (already tokenized) query (typos expanded)."""
        near = lambda token: [(t, self.doc_freq(t)) for t in self.vocab]  # noqa: E731
        return bm25_scores(self.n_docs, tokens, expand_tokens(tokens, self.postings, near))


def build_index(corpus: list[list[str]], *, k1=K1, b=B, epsilon=EPSILON) -> BM25Index:
    """Index tokenized chunks exactly as ``rank_bm25.BM25Okapi(corpus)`` scores them.

    Terms are counted per chunk in Python, the impacts computed by numpy with the same
    float64 operations in the same order (the same bits as a loop over the postings, in
    a third of the time: this runs on every incremental build).
    """
    n_docs = len(corpus)
    lengths = [len(doc) for doc in corpus]
    avgdl = sum(lengths) / n_docs if n_docs else 0.0
    term_ids: dict[str, int] = {}  # in order of first appearance: the order the IDF mean sums in
    ids: list[int] = []
    tfs: list[int] = []
    distinct: list[int] = []
    for doc in corpus:
        counts = Counter(doc)
        for term in counts:
            if term not in term_ids:
                term_ids[term] = len(term_ids)
        ids += map(term_ids.__getitem__, counts)
        tfs += counts.values()
        distinct.append(len(counts))
    term_of = np.asarray(ids, dtype=np.int64)
    df = np.bincount(term_of, minlength=len(term_ids))

    # IDF as BM25Okapi: negative IDFs floored to epsilon * mean IDF.
    idf = [math.log(n_docs - f + 0.5) - math.log(f + 0.5) for f in df.tolist()]
    floor = epsilon * (sum(idf) / len(idf)) if idf else 0.0
    idf = np.asarray([v if v >= 0 else floor for v in idf], dtype=np.float64)

    terms = list(term_ids)
    order = sorted(range(len(terms)), key=terms.__getitem__)
    rank = np.empty(len(terms), dtype=np.int64)
    rank[order] = np.arange(len(terms))
    by_term = np.argsort(rank[term_of], kind="stable")  # postings by term, chunks ascending within
    term_of = term_of[by_term]
    tf = np.asarray(tfs, dtype=np.float64)[by_term]
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), distinct)[by_term]
    norm = tf + k1 * (1 - b + b * np.asarray(lengths, dtype=np.int64)[docs] / avgdl)
    offsets = np.zeros(len(terms) + 1, dtype=np.uint32)
    np.cumsum(df[order], out=offsets[1:])
    return BM25Index(
        vocab=[terms[i] for i in order],
        offsets=offsets,
        docs=docs.astype(np.uint32),
        impacts=(idf[term_of] * tf * (k1 + 1) / norm).astype(np.float32),
        n_docs=n_docs,
        avgdl=avgdl,
        k1=k1,
        b=b,
        epsilon=epsilon,
    )

