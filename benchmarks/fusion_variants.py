"""Fusion variants measured against today's reciprocal-rank fusion (issue 27; none adopted).

The fused ranking loses the passage that one list puts first when the other list does
not have it: on Click's 100 questions the dense list alone is right at rank 1 for 8
questions the fusion gets wrong, the keyword list alone for 4. This script replays
sphinx-rag's own keyword and dense passes (``retrieve.Searcher``) and changes only the
fusion step, then scores passages as ``sphinx-rag evaluate`` does:

- ``rrf``: today (``retrieve.rrf_fuse``, then the reranking stage and the pinned names);
- ``gap``: a list's first chunk gets one more vote when it is decisive, its score at
  least ``GAP_KEYWORD`` (keyword) or ``GAP_DENSE`` (dense) above the list's second, in
  relative terms (on every set the right first hit has the larger gap: medians 0.23-0.46
  against 0.04-0.16 for the keyword list, 0.06-0.14 against 0.02-0.06 for the dense);
- ``k20``: RRF's constant 20 instead of 60 (the first ranks count more);
- ``z``: each list's scores standardised over its 100 candidates and added (the dense
  list times its vote), instead of ranks;
- ``rrf+z``: today's fusion plus 0.003 times that sum (score gaps break RRF's ties).

Usage::

    python benchmarks/fusion_variants.py SITE Q.json [SITE Q.json ...] [--encoder model]

Prints MRR@10 and Hit@1 per set and variant, and each variant's paired difference to
``rrf`` with a 95% bootstrap interval over the questions.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np

from sphinx_rag.tools.evaluate import _score_question, load_questions
from sphinx_rag.search.keyword_scoring import expand_tokens, keyword_scores
from sphinx_rag.search.lexical import tokenize
from sphinx_rag.search.rerank import rerank
from sphinx_rag.search.retrieve import CANDIDATES, DENSE_VOTE, Searcher, decisive_hits, pin_decisive, rrf_fuse, top_k

VARIANTS = ("rrf", "gap", "k20", "z", "rrf+z")
GAP_KEYWORD, GAP_DENSE = 0.3, 0.1


def _standardised(ranking: list[int], scores: np.ndarray) -> tuple[dict[int, float], float]:
    """z-scores of a list's candidates, and the value a chunk outside the list gets (its last)."""
    values = np.array([float(scores[i]) for i in ranking]) if ranking else np.zeros(1)
    mean, spread = values.mean(), values.std() or 1.0
    return {i: (float(scores[i]) - mean) / spread for i in ranking}, float((values.min() - mean) / spread)


def _decisive_first(ranking: list[int], scores: np.ndarray, gap: float) -> int | None:
    if len(ranking) < 2 or scores[ranking[0]] <= 0:
        return None
    first, second = float(scores[ranking[0]]), float(scores[ranking[1]])
    return ranking[0] if (first - second) / first >= gap else None


def ranking(searcher: Searcher, query: str, variant: str) -> dict[int, float]:
    """``Searcher.ranking``'s fused scores, with the fusion step replaced by ``variant``."""
    tokens = tokenize(query)
    expansions = expand_tokens(tokens, searcher.index.postings, searcher.index.near)
    kscores = keyword_scores(searcher.index.n_chunks, tokens, expansions)
    keyword = top_k(kscores, CANDIDATES)
    dense = searcher.dense_scores(query, None, keyword)
    dense_top = top_k(dense, CANDIDATES)
    weights, vote = searcher.index.weights, DENSE_VOTE[searcher.encoder]
    k = 20 if variant == "k20" else searcher.rrf_k
    fused = rrf_fuse([keyword, dense_top], k, weights, [1.0, vote])
    if variant == "gap":
        for lst, scores, gap, v in ((keyword, kscores, GAP_KEYWORD, 1.0), (dense_top, dense, GAP_DENSE, vote)):
            first = _decisive_first(lst, scores, gap)
            if first is not None:
                fused[first] += v / (k + 1) * float(weights[first])
    elif variant in ("z", "rrf+z"):
        zk, k_out = _standardised(keyword, kscores)
        zd, d_out = _standardised(dense_top, dense)
        both = {i: zk.get(i, k_out) + vote * zd.get(i, d_out) for i in set(keyword) | set(dense_top)}
        if variant == "z":
            fused = {i: s * float(weights[i]) for i, s in both.items()}
        else:
            fused = {i: fused.get(i, 0.0) + 0.003 * s * float(weights[i]) for i, s in both.items()}
    reranked = rerank(query, fused, lambda i: searcher.index.chunk(i)["kind"], weights, k)
    return pin_decisive(reranked, decisive_hits(query, expansions))


def _interval(diffs: list[float], rounds: int = 2000) -> tuple[float, float]:
    rng = random.Random(0)
    means = sorted(sum(rng.choice(diffs) for _ in diffs) / len(diffs) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="+", help="SITE QUESTIONS, repeated")
    parser.add_argument("--encoder", default="model", choices=("model", "static"))
    args = parser.parse_args(argv)
    if len(args.pairs) % 2:
        parser.error("give SITE QUESTIONS pairs")
    print(f"| set ({args.encoder}) | " + " | ".join(VARIANTS) + " |")
    print("|---|" + "---|" * len(VARIANTS))
    for site, qfile in zip(args.pairs[::2], args.pairs[1::2]):
        searcher = Searcher(site, encoder=args.encoder)
        questions = [q for q in load_questions(Path(qfile)) if q.get("relevant")]
        mrr: dict[str, list[float]] = {}
        hit1: dict[str, list[float]] = {}
        for variant in VARIANTS:
            for q in questions:
                results = searcher.passages(ranking(searcher, q["question"], variant), 10)
                row = _score_question(results, q, q["relevant"])
                mrr.setdefault(variant, []).append(row["mrr@10"])
                hit1.setdefault(variant, []).append(1.0 if row["mrr@10"] == 1.0 else 0.0)
        cells = []
        for variant in VARIANTS:
            cell = f"{np.mean(mrr[variant]):.3f} ({np.mean(hit1[variant]):.2f})"
            if variant != "rrf":
                diffs = [a - b for a, b in zip(mrr[variant], mrr["rrf"])]
                lo, hi = _interval(diffs)
                cell += f" {np.mean(diffs):+.3f} [{lo:+.3f}, {hi:+.3f}]"
            cells.append(cell)
        print(f"| {Path(qfile).stem} ({len(questions)}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
