"""What the head cut costs the keyword ranking, and what storing the tail gives back (a simulation).

A term in more than ``head_postings`` chunks stores its highest impacts (its head) as
bytes. Format 2 first dropped the other postings, so a chunk outside a common term's
head lost both that term's impact and its share of query-term coverage; it now keeps
them as chunk ids with 4-bit impacts (``keyword_shards.stored_tail``), the ``tail stored`` row. This
script scores questions with the exact index and with each choice of what a term shard
stores beyond the head, and prints the top-10 and top-100 overlap of each keyword
ranking with exact scoring (typo expansion off: the same unknown words everywhere):

- ``cut``: nothing (format 2 before tails);
- ``coverage``: the tail's chunk ids (coverage exact), its impacts counted as 0;
- ``tail mean``: the tail's chunk ids and one impact for all of them (their mean);
- ``tail 1 bit``: the tail's ids and its impacts in 2 levels (each its range's midpoint);
- ``tail 2 bits``: the tail's ids and 4 equal ranges of its impacts, each at its mean
  (what the format stored until index format 3);
- ``tail stored``: the tail's ids and ``keyword_shards.TAIL_LEVELS`` levels fitted to its impacts
  (Lloyd-Max: 16, 4 bits; 8 until November 25, 2026), as the format stores them
  (``keyword_shards.stored_tail``: each level's mean);
- ``tail minimum``: the tail's ids, each at the head's lowest impact (an upper bound).

    python benchmarks/keyword_overlap.py BUILD_DIR QUESTIONS.json [...] [--head 4096]

Nothing here changes the index; eval/RESULTS.md records the numbers.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np
from replicate_index import read_index

from sphinx_rag.search.bm25 import build_index, document_tokens
from sphinx_rag.search.keyword_scoring import Postings, expand_tokens, keyword_scores
from sphinx_rag.search.keyword_shards import stored_tail
from sphinx_rag.search.lexical import tokenize
from sphinx_rag.search.retrieve import top_k

VARIANTS = ["cut", "coverage", "tail mean", "tail 1 bit", "tail 2 bits", "tail stored", "tail minimum"]


def tail_impacts(impacts: np.ndarray, tail: np.ndarray, head_min: float, variant: str) -> np.ndarray:
    """The impacts a reader would have for the tail's chunks under ``variant``."""
    t = impacts[tail]
    if variant == "coverage":
        return np.zeros_like(t)
    if variant == "tail mean":
        return np.full_like(t, t.mean())
    if variant == "tail minimum":
        return np.full_like(t, head_min)
    lo, hi = t.min(), t.max()
    if variant == "tail 2 bits":  # four equal ranges, each at the mean of its impacts
        codes = np.minimum(((t - lo) / ((hi - lo) / 4 or 1.0)).astype(int), 3)
        means = np.array([t[codes == c].mean() if (codes == c).any() else 0.0 for c in range(4)])
        return means[codes]
    step = (hi - lo) / 2 if hi > lo else 1.0  # "tail 1 bit": two levels, each at its range's midpoint
    return lo + (np.minimum(((t - lo) / step).astype(int), 1) + 0.5) * step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--head", type=int, default=4096, help="head_postings (default 4096, the format's)")
    args = parser.parse_args()
    records, _, _, _ = read_index(args.site)
    index = build_index([document_tokens(r["text"]) for r in records])
    n = len(records)
    weights = np.array([r.get("weight", 1.0) for r in records])
    term_id = {t: i for i, t in enumerate(index.vocab)}

    def postings(term: str, variant: str) -> Postings | None:
        i = term_id.get(term)
        if i is None:
            return None
        lo, hi = int(index.offsets[i]), int(index.offsets[i + 1])
        docs, impacts = index.docs[lo:hi].astype(np.int64), index.impacts[lo:hi].astype(np.float64)
        if variant != "exact" and len(docs) > args.head:
            keep = np.sort(np.lexsort((docs, -impacts))[:args.head])
            if variant == "cut":
                docs, impacts = docs[keep], impacts[keep]
            else:
                tail = np.ones(len(docs), dtype=bool)
                tail[keep] = False
                impacts = impacts.copy()
                if variant == "tail stored":  # exactly what the format stores
                    _, codes, values = stored_tail(index, i, args.head)
                    impacts[tail] = np.asarray(values)[codes]
                else:
                    impacts[tail] = tail_impacts(impacts, tail, float(impacts[keep].min()), variant)
        return Postings(term, len(docs), docs, impacts)

    queries = [q["question"] for path in args.questions for q in json.loads(path.read_text())]
    overlap = {v: ([], []) for v in VARIANTS}
    for query in queries:
        tokens = tokenize(query)

        def scores(variant, tokens=tokens):
            return keyword_scores(n, tokens, expand_tokens(tokens, lambda t: postings(t, variant), lambda t: []))

        exact = scores("exact")
        top10, top100 = set(top_k(exact * weights, 10)), set(top_k(exact, 100))
        for variant in VARIANTS:
            s = scores(variant)
            overlap[variant][0].append(len(set(top_k(s * weights, 10)) & top10) / max(1, len(top10)))
            overlap[variant][1].append(len(set(top_k(s, 100)) & top100) / max(1, len(top100)))
    cut_terms = int((np.diff(index.offsets) > args.head).sum())
    print(f"{args.site}: {n} chunks, {cut_terms} terms in more than {args.head} chunks, {len(queries)} queries")
    print("| stored beyond the head | top-10 overlap | top-100 overlap |\n|---|---|---|")
    for variant in VARIANTS:
        print(f"| {variant} | {np.mean(overlap[variant][0]):.3f} | {np.mean(overlap[variant][1]):.3f} |")


if __name__ == "__main__":
    main()
