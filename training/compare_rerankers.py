"""MRR@10 and Hit@1 of one question set with each of several exported rerankers, beside
the fused order: the teacher's and the students' numbers side by side, on the index a site
publishes (its chunks, its fused ranking), whatever reranker it ships.

    python training/compare_rerankers.py HTML QUESTIONS.json NAME=EXPORTED_DIR [NAME=DIR ...] \
        [--grid 10:4,30:4] [--json OUT]

Each reranker is read through the runtime's ``CrossEncoder`` (an export of
``export_reranker.py``: the teacher exported at its own length, or a student), and scored
with ``sphinx-rag evaluate``'s own metrics (``tools/evaluate.py``) over the model tier
(``rrf-model``), at the depth and prior weight it was exported with, or at each
``--grid`` setting (``depth:weight``): a question's logits are computed once and shared
by the settings. Choose a setting on the non-blind sets and report the blind ones with it
(eval/RESULTS.md, "A cross-encoder reranker"): generated validation questions share the
training data's bias and chose badly.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sphinx_rag.search.cross_encoder import CrossEncoder  # noqa: E402
from sphinx_rag.search.retrieve import Searcher  # noqa: E402
from sphinx_rag.tools.evaluate import _score_question, _mean, load_questions  # noqa: E402


class SharedLogits:
    """A reranker at one depth and prior weight whose logits come from a cache shared with
    the other settings: each (question, chunk text) goes through the model once."""

    def __init__(self, model: CrossEncoder, cache: dict, depth: int, weight: float):
        self.model, self.cache = model, cache
        self.info = dataclasses.replace(model.info, depth=depth, rank_weight=weight)

    def logits(self, query: str, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if (query, t) not in self.cache]
        if missing:
            for t, x in zip(missing, self.model.logits(query, missing).tolist()):
                self.cache[(query, t)] = x
        return np.array([self.cache[(query, t)] for t in texts], dtype=np.float32)


def scores(html: Path, questions: list[dict], reranker=None) -> tuple[dict, float]:
    """The set's metrics with ``reranker`` after the fusion (None: the fused order), and the
    seconds a question took."""
    searcher = Searcher(html, encoder="model", rerank=reranker is not None)
    if reranker is not None:
        searcher._cross = reranker
    rows, started = [], time.perf_counter()
    for q in questions:
        rows.append({"style": q.get("style", ""), **_score_question(searcher.search(q["question"], k=10), q,
                                                                     q.get("relevant") or [])})
    return _mean(rows), (time.perf_counter() - started) / max(1, len(questions))


def settings_of(grid: str, model: CrossEncoder) -> list[tuple[int, float]]:
    """(depth, weight) pairs, the deepest first (it fills the cache the others read)."""
    if not grid:
        return [(model.info.depth, model.info.rank_weight)]
    pairs = [(int(d), float(w)) for d, w in (s.split(":") for s in grid.split(","))]
    return sorted(pairs, key=lambda p: -p[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("rerankers", nargs="+", metavar="NAME=DIR")
    parser.add_argument("--grid", default="", help="depth:weight settings, comma-separated (default: the export's)")
    parser.add_argument("--json", type=Path, help="also write the table as JSON")
    args = parser.parse_args(argv)
    questions = load_questions(args.questions)
    table = {}

    def row(name, metrics, seconds):
        table[name] = {"mrr@10": metrics["mrr@10"], "hit@1": metrics["recall@1"], "seconds": seconds}
        print(f"{name:16s} MRR@10 {metrics['mrr@10']:.3f}  Hit@1 {metrics['recall@1']:.3f}  "
              f"({seconds:.2f} s a question)", flush=True)

    row("fused", *scores(args.html, questions))
    for name, directory in (r.split("=", 1) for r in args.rerankers):
        model, cache = CrossEncoder(directory), {}
        for depth, weight in settings_of(args.grid, model):
            row(f"{name} d{depth} w{weight:g}", *scores(args.html, questions, SharedLogits(model, cache, depth, weight)))
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
