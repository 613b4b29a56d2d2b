"""The static tier's quality against its pseudo-query budget, over several samples (issue 10).

Not a test. The static encoder is fitted again, in-process, from a built site's chunks and
vectors, for each pseudo-queries-per-chunk, cap and seed asked. Each fit is scored
(rrf-static and dense-static MRR@10, Recall@10) on each question set, and the table
gives the mean over the seeds: one sample moves these figures by 0.02-0.08. The
pseudo-query vectors go through the embedding cache, so a budget already embedded costs
seconds.

With ``--share``, the site's own index is scored instead: bm25, rrf-static and rrf-model.
It prints the model's fused gain over keyword-only and the static tier's share of it,
with 95% intervals from a paired bootstrap over the questions.

    python benchmarks/static_encoder_sweep.py demo_docs/_build/html eval/demo_questions.json \\
        --per-chunk 1,2,4,8,24 --seeds default,1,2
    python benchmarks/static_encoder_sweep.py demo_docs/_build/html eval/demo_questions.json --share
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np
from bench_static_encoder import site_corpus

from sphinx_rag.index import build
from sphinx_rag.index import encoder_fit
from sphinx_rag.tools.evaluate import _mean, _score_question, load_questions
from sphinx_rag.search.retrieve import Searcher


def scores(searcher: Searcher, questions: list[dict]) -> list[dict]:
    """Each question's metrics (mrr@10, recall@10, ...) for the searcher's top 10."""
    return [_score_question(searcher.search(q["question"], k=10), q, q.get("relevant") or []) for q in questions]


def sweep(html: Path, sets: dict[str, list[dict]], per_chunk: list[int], caps: list[int], seeds: list[int]) -> None:
    index, chunks, vectors, scales, model_dir = site_corpus(html)
    texts, titles = [c.text for c in chunks], [c.title for c in chunks]
    docs = vectors.astype(np.float32) * scales[:, None]
    searchers = {f: Searcher(html, fusion=f, encoder="static") for f in ("dense", "rrf")}
    print(f"{html}: {len(chunks)} chunks; mean over seeds {seeds}\n")
    print("| per chunk | at most | fit s (mean) | " + " | ".join(f"{name} rrf-static (R@10) | {name} dense-static"
                                                      for name in sets) + " |")
    print("|---|---|---|" + "---|---|" * len(sets))
    for pc in per_chunk:
        for cap in caps:
            fits, cells = [], {name: {"rrf": [], "recall": [], "dense": []} for name in sets}
            for seed in seeds:
                start = time.perf_counter()
                encoder = build.fit_static_encoder(texts, titles, docs, model_dir, index.manifest["model"],
                                                   queries_per_chunk=pc, max_queries=cap, seed=seed)
                fits.append(time.perf_counter() - start)
                for searcher in searchers.values():
                    searcher.index.encoder = lambda encoder=encoder: encoder  # this fit, not the site's
                for name, questions in sets.items():
                    rrf = _mean(scores(searchers["rrf"], questions))
                    cells[name]["rrf"].append(rrf["mrr@10"])
                    cells[name]["recall"].append(rrf["recall@10"])
                    cells[name]["dense"].append(_mean(scores(searchers["dense"], questions))["mrr@10"])
            row = [f"{statistics.mean(cells[n]['rrf']):.3f} ({statistics.mean(cells[n]['recall']):.3f}) | "
                   f"{statistics.mean(cells[n]['dense']):.3f}" for n in sets]
            print(f"| {pc} | {cap} | {statistics.mean(fits):.1f} | " + " | ".join(row) + " |", flush=True)


def share(html: Path, sets: dict[str, list[dict]], resamples: int = 10_000) -> None:
    """The model's fused gain over bm25, the static tier's share of it, paired bootstrap intervals."""
    methods = {"bm25": Searcher(html, fusion="bm25"), "rrf-static": Searcher(html, fusion="rrf", encoder="static"),
               "rrf-model": Searcher(html, fusion="rrf", encoder="model")}
    print("| set | bm25 | rrf-static | rrf-model | the model's gain (95%) | static share (95%) |")
    print("|---|---|---|---|---|---|")
    for name, questions in sets.items():
        b, s, m = (np.array([r["mrr@10"] for r in scores(searcher, questions)]) for searcher in methods.values())
        rng = np.random.default_rng(0)
        picks = rng.integers(0, len(questions), (resamples, len(questions)))
        base = b[picks].mean(axis=1)
        gains, static_gains = m[picks].mean(axis=1) - base, s[picks].mean(axis=1) - base
        shares = static_gains[gains > 0.005] / gains[gains > 0.005]  # the ratio means nothing without a gain
        gain = m.mean() - b.mean()
        low, high = np.percentile(shares, [2.5, 97.5]) if len(shares) else (0.0, 0.0)
        share_cell = "" if gain <= 0.005 or len(shares) < resamples / 2 else (
            f"{(s.mean() - b.mean()) / gain:.0%} ({low:.0%} to {high:.0%})")
        print(f"| {name} ({len(questions)}) | {b.mean():.3f} | {s.mean():.3f} | {m.mean():.3f} | {gain:.3f} "
              f"({np.percentile(gains, 2.5):.3f} to {np.percentile(gains, 97.5):.3f}) | {share_cell} |", flush=True)


def _numbers(text: str) -> list[int]:
    return [int(x) for x in text.split(",")]


def _seeds(text: str) -> list[int]:
    return [encoder_fit.SEED if x == "default" else int(x) for x in text.split(",")]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built HTML directory with a static encoder")
    parser.add_argument("questions", type=Path, nargs="+", help="question sets (eval/*.json)")
    parser.add_argument("--per-chunk", default=str(encoder_fit.QUERIES_PER_CHUNK), help="comma-separated")
    parser.add_argument("--max-queries", default=str(encoder_fit.MAX_QUERIES), help="comma-separated caps")
    parser.add_argument("--seeds", default="default,1,2", help="comma-separated pseudo-query seeds ('default')")
    parser.add_argument("--share", action="store_true", help="the site's own tiers, with bootstrap intervals")
    args = parser.parse_args(argv)
    sets = {path.stem: load_questions(path) for path in args.questions}
    if args.share:
        share(args.site, sets)
    else:
        sweep(args.site, sets, _numbers(args.per_chunk), _numbers(args.max_queries), _seeds(args.seeds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
