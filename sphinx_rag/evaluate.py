"""Retrieval quality on question sets with known answers: Recall@k and MRR@10.

A question's ``relevant`` entries name the answer by URL (page + anchor) and a
phrase of the answering chunk, so a result counts only when it is the right
passage, not merely the right page. Every fusion method is scored on the same
questions, giving BM25-only and dense-only baselines beside the hybrid.

A method is a fusion (``bm25``, ``dense``, ``rrf``), optionally with the query encoder
that makes the dense ranking: ``rrf-static`` (the site's fitted static encoder) or
``rrf-model`` (the full model); plain ``rrf`` uses the site's own choice.
"""

from __future__ import annotations

import json
from pathlib import Path

from .assets import IndexReader
from .retrieve import ENCODERS, FUSIONS, Searcher

__all__ = ["load_questions", "is_relevant", "evaluate", "format_table", "default_methods", "METHODS"]

METHODS = FUSIONS + tuple(f"{f}-{e}" for f in FUSIONS if f != "bm25" for e in ENCODERS)

KS = (1, 5, 10)


def load_questions(path: Path) -> list[dict]:
    questions = json.loads(Path(path).read_text(encoding="utf-8"))
    for q in questions:
        if not q.get("question") or not q.get("relevant"):
            raise ValueError(f"[sphinx-rag] question {q.get('id')!r} in {path} needs 'question' and 'relevant'")
    return questions


def is_relevant(result, relevant: dict) -> bool:
    """Right passage: its URL (or a chunk it took in, see expand.py) and the phrase."""
    if relevant["url"] != result.url and relevant["url"] not in getattr(result, "also", ()):
        return False
    phrase = relevant.get("text_contains")
    return not phrase or " ".join(phrase.split()) in " ".join(result.text.split())


def _score_question(results, relevant: list[dict]) -> dict:
    ranks = []  # 1-based rank of the first result matching each relevant entry
    for rel in relevant:
        ranks.append(next((r.rank for r in results if is_relevant(r, rel)), None))
    found = [r for r in ranks if r is not None]
    first = min(found) if found else None
    row = {f"recall@{k}": sum(1 for r in found if r <= k) / len(relevant) for k in KS}
    row["mrr@10"] = 1.0 / first if first and first <= 10 else 0.0
    return row


def default_methods(html_dir: Path) -> list[str]:
    """bm25, dense and rrf; each of the last two per query encoder when the site has both."""
    index = IndexReader(Path(html_dir))
    if not index.has_vectors:
        return ["bm25"]
    if index.has_encoder and index.model_dir is not None:
        return ["bm25", "dense-static", "dense-model", "rrf-static", "rrf-model"]
    return ["bm25", "dense", "rrf"]


def evaluate(html_dir: Path, questions: list[dict], methods=None) -> dict:
    """{method: {"overall": metrics, "by_style": {style: metrics}, "per_question": [...]}}"""
    report = {}
    for method in methods or default_methods(html_dir):
        fusion, _, encoder = method.partition("-")
        searcher = Searcher(html_dir, fusion=fusion, encoder=encoder or None)
        rows = []
        for q in questions:
            row = _score_question(searcher.search(q["question"], k=10), q["relevant"])
            rows.append({"id": q["id"], "style": q.get("style", ""), **row})
        report[method] = {"overall": _mean(rows), "per_question": rows,
                          "by_style": {s: _mean([r for r in rows if r["style"] == s])
                                       for s in sorted({r["style"] for r in rows})}}
    return report


def _mean(rows: list[dict]) -> dict:
    keys = [f"recall@{k}" for k in KS] + ["mrr@10"]
    out = {k: sum(r[k] for r in rows) / len(rows) for k in keys} if rows else {k: 0.0 for k in keys}
    out["n"] = len(rows)
    return out


def format_table(report: dict, title: str = "") -> str:
    keys = [f"recall@{k}" for k in KS] + ["mrr@10"]
    lines = [f"### {title}", ""] if title else []
    lines += ["| method | n | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
    for method, data in report.items():
        m = data["overall"]
        lines.append(f"| {method} | {m['n']} | " + " | ".join(f"{m[k]:.3f}" for k in keys) + " |")
    styles = sorted({s for data in report.values() for s in data["by_style"]})
    if len(styles) > 1:
        lines += ["", "MRR@10 by question style:", "",
                  "| method | " + " | ".join(f"{s} (n={report[next(iter(report))]['by_style'][s]['n']})" for s in styles) + " |",
                  "|---|" + "---|" * len(styles)]
        for method, data in report.items():
            lines.append(f"| {method} | " + " | ".join(f"{data['by_style'][s]['mrr@10']:.3f}" for s in styles) + " |")
    return "\n".join(lines)
