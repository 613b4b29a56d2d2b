"""The tables of eval/RESULTS.md "Passages sized to a budget": every method of a site at
several character budgets, sphinx-rag's passages as they are and only cut (``cut``) or
sized to the budget (``sized``, expand.py), against the fixed-window baselines.

    python eval/budget_report.py BUILD_DIR QUESTIONS.json [--budgets 4000,8000,16000] [--methods ...] [--hits]

The same numbers as ``sphinx-rag evaluate BUILD_DIR QUESTIONS --budget B [--no-fit]``, in
one process: each query is ranked once per method (the ranking does not depend on the
budget) and its passages made for each budget.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sphinx_rag.search import retrieve  # noqa: E402
from sphinx_rag.tools.evaluate import FIXED_PREFIX, default_methods, evaluate, load_questions  # noqa: E402


def _cache_rankings():
    """Searcher.ranking memoised by (index, fusion, encoder, query): the same values."""
    original, cache = retrieve.Searcher.ranking, {}

    def ranking(self, query, vector=None):
        key = (str(self.index.root), self.fusion, self.encoder, query)
        if key not in cache:
            cache[key] = original(self, query, vector)
        return cache[key]

    retrieve.Searcher.ranking = ranking


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--budgets", default="4000,8000,16000")
    parser.add_argument("--methods", default=None, help="comma-separated (default: evaluate's)")
    parser.add_argument("--title", default="")
    parser.add_argument("--hits", action="store_true",
                        help="report MRR@10 / Recall@10 of the answering passage even when the questions list "
                             "answer components")
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    methods = args.methods.split(",") if args.methods else default_methods(args.build_dir)
    questions = load_questions(args.questions)
    _cache_rankings()
    ac = not args.hits and any(q.get("answer_components") for q in questions)
    keys = ("ac-mrr@10", "ac-recall@10") if ac else ("mrr@10", "recall@10")
    names = ("AC-MRR", "AC-R@10") if ac else ("MRR", "R@10")
    rows: dict[str, dict[int, dict]] = {}
    for budget in budgets:
        for fit in (False, True):
            ours = [m for m in methods if not m.startswith(FIXED_PREFIX)]
            run = methods if not fit else ours  # a fixed window has one size
            for method, data in evaluate(args.build_dir, questions, run, budget=budget, fit=fit).items():
                label = method if method.startswith(FIXED_PREFIX) else f"{method} {'sized' if fit else 'cut'}"
                rows.setdefault(label, {})[budget] = data["overall"]
    order = [f"{m} {v}" for m in methods if not m.startswith(FIXED_PREFIX) for v in ("cut", "sized")]
    order += [m for m in methods if m.startswith(FIXED_PREFIX)]
    head = " | ".join(f"{b:,}: {names[0]} / {names[1]} / sent" for b in budgets)
    print(f"### {args.title or args.questions.name} (n={len(questions)})\n")
    print(f"| method | {head} |")
    print("|---|" + "---|" * len(budgets))
    for label in order:
        cells = []
        for b in budgets:
            m = rows[label][b]
            cells.append(f"{m[keys[0]]:.3f} / {m[keys[1]]:.3f} / {m['sent']:.1f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
