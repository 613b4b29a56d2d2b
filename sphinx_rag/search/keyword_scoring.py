"""Keyword scoring at query time: sum the BM25 impacts of the query's terms, times coverage.

The postings come from ``bm25.BM25Index`` at build time and from the term shards
(``keyword_shards.read_term_shard``) at query time; ``js/src/search/bm25.js`` does the
same sums in the same order, so both runtimes give bit-identical float64 scores.
A query term missing from the vocabulary is matched to vocabulary terms within a
small Damerau-Levenshtein distance (typo tolerance), weighted down.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_TYPO_EXPANSIONS", "Postings", "Expansion", "keyword_scores", "bm25_scores", "expand_tokens",
           "max_typo_distance", "edit_distance", "typo_candidates"]

MAX_TYPO_EXPANSIONS = 3


@dataclass
class Postings:
    """One term's postings as a query reads them."""

    term: str
    df: int  # chunks that contain the term (all of them, also when the head is cut)
    docs: np.ndarray  # int64 chunk ids, ascending
    impacts: np.ndarray  # float64 BM25 contribution to each of those chunks


#: Expansion of one query token: [(postings, weight)]; a typo maps to near terms.
Expansion = list[tuple[Postings, float]]


def keyword_scores(n_docs: int, tokens: list[str], expansions: dict[str, Expansion]) -> np.ndarray:
    """BM25 times coverage: the share of the query's distinct known terms a chunk has.

    ``expansions`` maps each distinct token to its postings (empty: unknown). Coverage
    is Lucene's classic "coord" factor. It separates a chunk that matches every part
    of "strategy parameter of a dummy classifier" from a longer one matching fewer
    (demo docs: fused MRR@10 0.772 -> 0.789; see eval/RESULTS.md). Sums run in query
    order, as in JS: both give bit-identical float64 scores.
    """
    known = [ex for ex in (expansions[t] for t in dict.fromkeys(tokens)) if ex]
    hits = np.zeros(n_docs, dtype=np.float64)
    if not known:
        return hits
    for ex in known:
        has = np.zeros(n_docs, dtype=bool)
        for postings, _ in ex:
            has[postings.docs] = True
        hits += has
    return bm25_scores(n_docs, tokens, expansions) * (hits / len(known))


def bm25_scores(n_docs: int, tokens: list[str], expansions: dict[str, Expansion]) -> np.ndarray:
    """Plain BM25: for each query token (repeats count), the weighted impacts of its terms."""
    out = np.zeros(n_docs, dtype=np.float64)
    for token in tokens:
        for postings, weight in expansions[token]:
            out[postings.docs] += weight * postings.impacts
    return out


def expand_tokens(tokens: list[str], lookup, near) -> dict[str, Expansion]:
    """Each distinct token -> its postings, or those of near terms if it is unknown.

    ``lookup(term)`` gives a term's Postings or None; ``near(term)`` gives the
    vocabulary terms that could be within typo distance, with their df.
    """
    out: dict[str, Expansion] = {}
    for token in dict.fromkeys(tokens):
        postings = lookup(token)
        if postings is not None:
            out[token] = [(postings, 1.0)]
            continue
        vocab = dict(near(token))
        out[token] = [(lookup(term), 1.0 / (1.0 + dist))
                      for dist, term in typo_candidates(token, sorted(vocab), vocab.__getitem__)]
    return out


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

