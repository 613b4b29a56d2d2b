"""MRR@10 and Hit@1 of one question set with each of several exported rerankers, beside
the fused order: the teacher's and the students' numbers side by side, on the index a site
publishes (its chunks, its fused ranking), whatever reranker it ships.

    python training/compare_rerankers.py HTML QUESTIONS.json NAME=EXPORTED_DIR [NAME=DIR ...] [--json OUT]

Each reranker is read through the runtime's ``CrossEncoder`` (an export of
``export_reranker.py``: the teacher exported at its own length, or a student), and scored
with ``sphinx-rag evaluate``'s own metrics (``tools/evaluate.py``) over the model tier
(``rrf-model``). A report, not a selection: the students are chosen on the validation
projects (``train_reranker.py``), and this is run once on the evaluation corpora.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sphinx_rag.search.cross_encoder import CrossEncoder  # noqa: E402
from sphinx_rag.search.retrieve import Searcher  # noqa: E402
from sphinx_rag.tools.evaluate import _score_question, _mean, load_questions  # noqa: E402


def scores(html: Path, questions: list[dict], reranker: Path | None) -> tuple[dict, float]:
    """The set's metrics with ``reranker`` after the fusion (None: the fused order), and the
    seconds the reranking took per question."""
    searcher = Searcher(html, encoder="model", rerank=reranker is not None)
    if reranker is not None:
        searcher._cross = CrossEncoder(reranker)
    rows, started = [], time.perf_counter()
    for q in questions:
        rows.append({"style": q.get("style", ""), **_score_question(searcher.search(q["question"], k=10), q,
                                                                     q.get("relevant") or [])})
    return _mean(rows), (time.perf_counter() - started) / max(1, len(questions))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("rerankers", nargs="+", metavar="NAME=DIR")
    parser.add_argument("--json", type=Path, help="also write the table as JSON")
    args = parser.parse_args(argv)
    questions = load_questions(args.questions)
    table = {}
    for name, directory in [("fused", None)] + [tuple(r.split("=", 1)) for r in args.rerankers]:
        metrics, seconds = scores(args.html, questions, Path(directory) if directory else None)
        table[name] = {"mrr@10": metrics["mrr@10"], "hit@1": metrics["recall@1"], "seconds": seconds}
        print(f"{name:12s} MRR@10 {metrics['mrr@10']:.3f}  Hit@1 {metrics['recall@1']:.3f}  "
              f"({seconds:.2f} s a question)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(table, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
