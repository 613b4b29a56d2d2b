"""Retrieval quality on question sets with known answers.

Two kinds of ground truth, either or both per question:

* ``relevant``: the answering passage by URL (page + anchor) and a phrase of it, so a
  result counts only when it is the right passage, not merely the right page
  (Recall@k, MRR@10 of the first hit);
* ``answer_components``: what a complete answer needs, each component a list of
  context strings, found when one of them occurs in a returned passage (whitespace,
  quotes and case normalised). Answer-Component MRR@10 is 1 / the rank of the passage
  that completes the set of components (0 if one is missing from the top 10) and
  Answer-Component Recall@10 the share of components found (the fastbook benchmark's
  definitions, seed 003), both under a character budget: the top-10 passages are read in
  rank order and cut when together they reach ``AC_BUDGET`` characters, so that long
  passages do not win by length alone.

``budget``: the top 10 cut to that many characters, the way an LLM's context holds them,
for every metric (a hit counts only when its phrase is within the cut), and sphinx-rag's
passages sized for it (``search/expand.py``: shorter passages, more of them in the budget)
unless ``fit`` is off, which shows what the cut alone does to the same passages.

Methods are names (``METHODS``): sphinx-rag's own rankings over the built index
(``bm25``, ``dense``, ``rrf``) and baselines over fixed-size windows of the same pages
(``fixed-bm25``, ``fixed-dense``, ``fixed-rrf``, see fixed_baseline.py).

A sphinx-rag method may name the query encoder of its dense ranking: ``rrf-static``
(the site's fitted static encoder), ``rrf-model`` (the full model); plain ``rrf``
uses the site's own choice.
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path

from ..chunk.display import display_text
from ..search.index import IndexReader
from ..search.retrieve import ENCODERS, FUSIONS, Result, Searcher

__all__ = ["load_questions", "is_relevant", "evaluate", "format_table", "normalize_text", "budgeted",
           "answer_component_scores", "default_methods", "METHODS", "AC_BUDGET"]

KS = (1, 5, 10)
#: Characters of the top-10 passages the answer-component metrics read: ten windows of
#: the fixed-size baseline (750 characters each), about what a small LLM context holds.
AC_BUDGET = 7500
FIXED_PREFIX = "fixed-"
#: A sphinx-rag method with the cross-encoder stage after its fusion (``search/cross_encoder.py``):
#: what a reader gets once the browser has the model (``rrf-model-rerank``).
RERANK_SUFFIX = "-rerank"
METHODS = (FUSIONS + tuple(f"{f}-{e}" for f in FUSIONS if f != "bm25" for e in ENCODERS)
           + ("rrf" + RERANK_SUFFIX,) + tuple(f"rrf-{e}{RERANK_SUFFIX}" for e in ENCODERS)
           + tuple(FIXED_PREFIX + f for f in FUSIONS))
HIT_KEYS = [f"recall@{k}" for k in KS] + ["mrr@10"]
AC_KEYS = ["ac-mrr@10", "ac-recall@10"]
BUDGET_KEYS = ["sent", "chars"]  # passages read (whole or cut) and characters within a budget
KEY_NAMES = {"mrr@10": "MRR@10", "ac-recall@10": "AC-Recall@10"}
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def load_questions(path: Path) -> list[dict]:
    """A question set, or a golden set (``golden.py``: entries with ``query`` and ``url``)."""
    questions = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(questions, list) and questions and all(isinstance(q, dict) and "query" in q for q in questions):
        from . import golden

        return golden.as_questions(golden.load(path))
    for q in questions:
        components = q.get("answer_components")
        if not q.get("question") or not (q.get("relevant") or components):
            raise ValueError(f"[sphinx-rag] question {q.get('id')!r} in {path} needs 'question' and 'relevant' "
                             "or 'answer_components'")
        if components is not None and not (
                isinstance(components, list) and components
                and all(isinstance(c, list) and c and all(isinstance(s, str) and s.strip() for s in c)
                        for c in components)):
            raise ValueError(f"[sphinx-rag] question {q.get('id')!r} in {path}: 'answer_components' must be a "
                             'list of lists of context strings, e.g. [["app.run()"], ["--debug", "debug=True"]]')
    return questions


def normalize_text(text: str) -> str:
    """Text as component matching compares it: NFKC, ASCII quotes, one space, lower case."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).translate(_QUOTES)).strip().lower()


def is_relevant(result, relevant: dict) -> bool:
    """Right passage: its URL (or a chunk it took in, see search/expand.py) and the phrase, in
    the text ranked or in what the reader sees (``display``: an API chunk's text is its
    docstring's reST source, ``*cls*``, while a phrase copied from the page reads "cls").
    A URL without an anchor (a golden set's page) is met by any passage of that page."""
    urls = [result.url, *getattr(result, "also", ())]
    if "#" in relevant["url"]:
        if relevant["url"] not in urls:
            return False
    elif not any(u.split("#", 1)[0] == relevant["url"] for u in urls):
        return False
    phrase = relevant.get("text_contains")
    if not phrase:
        return True
    phrase = _fold(phrase)
    return phrase in _fold(result.text) or phrase in _fold(display_text(getattr(result, "display", None) or []))


def _fold(text: str) -> str:
    """Whitespace collapsed, typographic quotes made ASCII (Sphinx's smartquotes)."""
    return " ".join(text.translate(_QUOTES).split())


def budgeted(texts: list[str], budget: int = AC_BUDGET) -> list[str]:
    """The passages in rank order, the one that crosses ``budget`` cut there, later ones dropped."""
    out, left = [], budget
    for text in texts:
        if left <= 0:
            break
        out.append(text[:left])
        left -= len(out[-1])
    return out


def answer_component_scores(texts: list[str], components: list[list[str]], budget: int = AC_BUDGET,
                            cutoff: int = 10) -> tuple[float, float]:
    """(AC-MRR@cutoff, AC-Recall@cutoff) of ranked passage texts for one question."""
    passages = [normalize_text(t) for t in budgeted(texts[:cutoff], budget)]
    first = []  # 1-based rank of the first passage holding each component, None if none
    for contexts in components:
        wanted = [normalize_text(c) for c in contexts]
        first.append(next((rank for rank, p in enumerate(passages, start=1) if any(w in p for w in wanted)), None))
    found = [r for r in first if r is not None]
    mrr = 1.0 / max(found) if found and len(found) == len(first) else 0.0
    return mrr, len(found) / len(first)


def _within(results, budget: int) -> list:
    """The results whose text starts within ``budget`` characters of the top 10, the
    last one cut there (a phrase past the cut is not read: a cut result keeps no display,
    so ``is_relevant`` reads the cut text only)."""
    kept = budgeted([r.text for r in results[:10]], budget)
    return [dataclasses.replace(r, text=t) if t == r.text else dataclasses.replace(r, text=t, display=[])
            for r, t in zip(results, kept)]


def _score_question(results, q: dict, relevant: list[dict], budget: int | None = None) -> dict:
    row: dict = {}
    if budget is not None:
        results = _within(results, budget)
        row["sent"], row["chars"] = len(results), sum(len(r.text) for r in results)
    if relevant:
        ranks = [next((r.rank for r in results if is_relevant(r, rel)), None) for rel in relevant]
        found = [r for r in ranks if r is not None]
        first = min(found) if found else None
        row.update({f"recall@{k}": sum(1 for r in found if r <= k) / len(relevant) for k in KS})
        row["mrr@10"] = 1.0 / first if first and first <= 10 else 0.0
    if q.get("answer_components"):
        row["ac-mrr@10"], row["ac-recall@10"] = answer_component_scores(
            [r.text for r in results], q["answer_components"], AC_BUDGET if budget is None else budget)
    return row


def default_methods(html_dir: Path) -> list[str]:
    """bm25, dense and rrf (each of the last two per query encoder when the site has
    both), then the fixed-size-window baselines (they need the site's model)."""
    index = IndexReader(Path(html_dir))
    if not index.has_vectors:
        return ["bm25", "fixed-bm25"]
    fixed = ["fixed-bm25", "fixed-rrf"] if index.model_dir is not None else ["fixed-bm25"]
    reranked = index.manifest.get("reranker_files") is not None
    if index.has_encoder and index.model_dir is not None:
        return ["bm25", "dense-static", "dense-model", "rrf-static", "rrf-model",
                *(["rrf-model" + RERANK_SUFFIX] if reranked else []), *fixed]
    return ["bm25", "dense", "rrf", *(["rrf" + RERANK_SUFFIX] if reranked else []), *fixed]


# -- methods: a name -> a function from a query to its ranked passages ------------------

def _method_runner(html_dir: Path, method: str, shared: dict,
                   budget: int | None = None) -> tuple[Callable[[str], list[Result]], Callable]:
    """(search, relevant-entries adapter) of one method name; ``budget``: sphinx-rag's
    passages sized for it (the fixed windows have one size)."""
    if method.startswith(FIXED_PREFIX):
        from .fixed_baseline import FixedSearcher

        if "fixed" not in shared:
            shared["fixed"] = FixedSearcher(html_dir)
        fixed, fusion = shared["fixed"], method[len(FIXED_PREFIX):]
        return (lambda q: fixed.search(q, fusion, k=10)), (lambda rel: _for_plain_text(rel, fixed.page_texts))
    if method not in METHODS:
        raise ValueError(f"[sphinx-rag] unknown evaluation method {method!r}: use one of {', '.join(METHODS)}")
    rerank = method.endswith(RERANK_SUFFIX)
    fusion, _, encoder = method.removesuffix(RERANK_SUFFIX).partition("-")
    searcher = Searcher(html_dir, fusion=fusion, encoder=encoder or None, rerank=rerank, warn=_refuse)
    if rerank and searcher.cross_encoder is None:
        raise ValueError(f"[sphinx-rag] {html_dir} ships no reranker (built with sphinx_rag_rerank = False, or by an "
                         f"older sphinx-rag): {method} would be {method.removesuffix(RERANK_SUFFIX)}; rebuild the docs")
    return (lambda q: searcher.search(q, k=10, budget=budget)), (lambda rel: rel)


def _refuse(message: str):
    """A reranker that cannot be used stops an evaluation (its numbers would be the fused order's)."""
    raise ValueError(message)


def _for_plain_text(relevant: list[dict], page_texts: dict) -> list[dict]:
    """Relevant entries for passages cut from the page text: a phrase that text does not
    contain (the owner/parameter sentences sphinx-rag writes into API chunks) cannot be
    checked there, so the anchor alone decides."""
    out = []
    for rel in relevant:
        page = page_texts.get(rel["url"].split("#", 1)[0])
        phrase = rel.get("text_contains")
        if phrase and page is not None and _fold(phrase) not in _fold(page.text):
            rel = {k: v for k, v in rel.items() if k != "text_contains"}
        out.append(rel)
    return out


def evaluate(html_dir: Path, questions: list[dict], methods=None, *, budget: int | None = None,
             fit: bool = True) -> dict:
    """{method: {"overall": metrics, "by_style": {style: metrics}, "per_question": [...]}}

    ``budget``: every metric reads the top 10 cut to that many characters; sphinx-rag's
    passages are sized for it unless ``fit`` is False (see the module's docstring).
    """
    if budget is not None and budget < 1:
        raise ValueError(f"[sphinx-rag] the budget must be a number of characters >= 1, got {budget}")
    report, shared = {}, {}
    for method in methods or default_methods(html_dir):
        search, adapt = _method_runner(Path(html_dir), method, shared, budget if fit else None)
        rows = []
        for q in questions:
            row = _score_question(search(q["question"]), q, adapt(q.get("relevant") or []), budget)
            rows.append({"id": q["id"], "style": q.get("style", ""), **row})
        report[method] = {"overall": _mean(rows), "per_question": rows,
                          "by_style": {s: _mean([r for r in rows if r["style"] == s])
                                       for s in sorted({r["style"] for r in rows})}}
    return report


def _mean(rows: list[dict]) -> dict:
    out: dict = {}
    for key in HIT_KEYS + AC_KEYS + BUDGET_KEYS:
        values = [r[key] for r in rows if key in r]
        if values:
            out[key] = sum(values) / len(values)
    out["n"] = len(rows)
    return out


def format_table(report: dict, title: str = "") -> str:
    first = report[next(iter(report))]
    keys = [k for k in HIT_KEYS + AC_KEYS + BUDGET_KEYS if k in first["overall"]]
    lines = [f"### {title}", ""] if title else []
    lines += ["| method | n | " + " | ".join(keys) + " |", "|---|---|" + "---|" * len(keys)]
    for method, data in report.items():
        m = data["overall"]
        lines.append(f"| {method} | {m['n']} | " + " | ".join(_cell(k, m) for k in keys) + " |")
    styles = sorted({s for data in report.values() for s in data["by_style"]})
    for key in ("mrr@10", "ac-recall@10"):
        if len(styles) < 2 or key not in keys:
            continue
        lines += ["", f"{KEY_NAMES[key]} by question style:", "",
                  "| method | " + " | ".join(f"{s} (n={first['by_style'][s]['n']})" for s in styles) + " |",
                  "|---|" + "---|" * len(styles)]
        for method, data in report.items():
            lines.append(f"| {method} | " + " | ".join(
                f"{data['by_style'][s][key]:.3f}" if key in data["by_style"][s] else "" for s in styles) + " |")
    return "\n".join(lines)


def _cell(key: str, metrics: dict) -> str:
    if key not in metrics:
        return ""
    return f"{metrics[key]:.0f}" if key == "chars" else f"{metrics[key]:.2f}" if key == "sent" else f"{metrics[key]:.3f}"
