"""BM25 index with precomputed impacts (scores equal rank-bm25's ``BM25Okapi``).

At build time every (term, chunk) pair gets its final BM25 contribution, so a
query only sums posting lists: the same cheap loop in Python and in the browser
(``js/src/search/bm25.js``). The on-disk form is JSON plus little-endian arrays.

A query term missing from the vocabulary is matched to vocabulary terms within a
small Damerau-Levenshtein distance (typo tolerance), weighted down.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .lexical import tokenize

__all__ = ["BM25Index", "build_index", "document_tokens", "edit_distance", "typo_candidates"]

K1, B, EPSILON = 1.5, 0.75, 0.25  # rank-bm25's BM25Okapi defaults
MAX_TYPO_EXPANSIONS = 3
HEADER_BOOST = 2  # a chunk's first line (heading path / owner) counts this many times


def document_tokens(text: str) -> list[str]:
    """BM25 tokens of a chunk; its header line is repeated (a simple BM25F)."""
    header = text.split("\n", 1)[0]
    return tokenize(text) + tokenize(header) * (HEADER_BOOST - 1)


@dataclass
class BM25Index:
    """Posting lists: term ``vocab[t]`` occurs in ``docs[offsets[t]:offsets[t+1]]``."""

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

    def term_id(self, term: str) -> int | None:
        return self._term_ids.get(term)

    def query_terms(self, tokens: list[str]) -> list[tuple[int, float]]:
        """(term id, weight) for each query token; typos map to near terms."""
        weighted = []
        for token in tokens:
            tid = self._term_ids.get(token)
            if tid is not None:
                weighted.append((tid, 1.0))
                continue
            for dist, term in typo_candidates(token, self.vocab, self.doc_freq):
                weighted.append((self._term_ids[term], 1.0 / (1.0 + dist)))
        return weighted

    def doc_freq(self, term: str) -> int:
        tid = self._term_ids[term]
        return int(self.offsets[tid + 1] - self.offsets[tid])

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every chunk for the (already tokenized) query."""
        return self._scores(tokens, {t: self.query_terms([t]) for t in dict.fromkeys(tokens)})

    def _scores(self, tokens: list[str], terms: dict) -> np.ndarray:
        out = np.zeros(self.n_docs, dtype=np.float64)
        for token in tokens:
            for tid, weight in terms[token]:
                lo, hi = self.offsets[tid], self.offsets[tid + 1]
                out[self.docs[lo:hi]] += weight * self.impacts[lo:hi].astype(np.float64)
        return out

    def keyword_scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 times coverage: the share of the query's distinct known terms a chunk has.

        Coverage is Lucene's classic "coord" factor. It separates a chunk that
        matches every part of "strategy parameter of a dummy classifier" from a
        longer one matching fewer (demo docs: fused MRR@10 0.772 -> 0.789;
        neutral on the scikit-learn API questions, see eval/RESULTS.md).
        """
        terms = {t: self.query_terms([t]) for t in dict.fromkeys(tokens)}
        known = [ids for ids in terms.values() if ids]
        hits = np.zeros(self.n_docs, dtype=np.float64)
        for ids in known:
            has = np.zeros(self.n_docs, dtype=bool)
            for tid, _ in ids:
                has[self.docs[self.offsets[tid]:self.offsets[tid + 1]]] = True
            hits += has
        if not known:
            return hits
        return self._scores(tokens, terms) * (hits / len(known))


def build_index(corpus: list[list[str]], *, k1=K1, b=B, epsilon=EPSILON) -> BM25Index:
    """Index tokenized chunks exactly as ``rank_bm25.BM25Okapi(corpus)`` scores them."""
    n_docs = len(corpus)
    lengths = [len(doc) for doc in corpus]
    avgdl = sum(lengths) / n_docs if n_docs else 0.0
    postings: dict[str, list[tuple[int, int]]] = {}
    for d, doc in enumerate(corpus):
        for term, tf in Counter(doc).items():
            postings.setdefault(term, []).append((d, tf))

    # IDF as BM25Okapi: negative IDFs floored to epsilon * mean IDF.
    idf = {t: math.log(n_docs - len(p) + 0.5) - math.log(len(p) + 0.5) for t, p in postings.items()}
    floor = epsilon * (sum(idf.values()) / len(idf)) if idf else 0.0
    idf = {t: (v if v >= 0 else floor) for t, v in idf.items()}

    vocab = sorted(postings)
    offsets = np.zeros(len(vocab) + 1, dtype=np.uint32)
    docs, impacts = [], []
    for i, term in enumerate(vocab):
        for d, tf in postings[term]:
            norm = tf + k1 * (1 - b + b * lengths[d] / avgdl)
            docs.append(d)
            impacts.append(idf[term] * tf * (k1 + 1) / norm)
        offsets[i + 1] = len(docs)
    return BM25Index(
        vocab=vocab,
        offsets=offsets,
        docs=np.asarray(docs, dtype=np.uint32),
        impacts=np.asarray(impacts, dtype=np.float32),
        n_docs=n_docs,
        avgdl=avgdl,
        k1=k1,
        b=b,
        epsilon=epsilon,
    )


def max_typo_distance(term: str) -> int:
    """Short terms get no typo matching (too many false friends)."""
    if len(term) < 4:
        return 0
    return 1 if len(term) < 8 else 2


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (transpositions cost 1), capped at limit+1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[len(b)]


def typo_candidates(term: str, vocab: list[str], doc_freq) -> list[tuple[int, str]]:
    """Up to MAX_TYPO_EXPANSIONS (distance, vocab term), nearest then most frequent."""
    limit = max_typo_distance(term)
    if limit == 0:
        return []
    found = []
    for cand in vocab:
        if abs(len(cand) - len(term)) > limit or len(cand) < 4:
            continue
        dist = edit_distance(term, cand, limit)
        if dist <= limit:
            found.append((dist, -doc_freq(cand), cand))
    found.sort()
    return [(dist, cand) for dist, _, cand in found[:MAX_TYPO_EXPANSIONS]]
