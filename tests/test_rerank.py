"""The reranking stage (sphinx_rag/rerank.py): questions that ask which API object does something."""

from __future__ import annotations

import numpy as np

from sphinx_rag.search import rerank, retrieve


def test_the_question_form_that_asks_for_an_api_object():
    for q in ("Which class rescales features?", "what function opens an editor", "Which exception is raised?",
              "which two helper functions", "WHICH DECORATOR", "What estimators support weights?"):
        assert rerank.asks_for_object(q), q
    for q in ("How do I rescale features?", "which of the three classifiers", "whichclass", "which_class",
              "Which environment variable values switch a flag on?", "which typeset", "classes of estimators"):
        assert not rerank.asks_for_object(q), q


def test_api_candidates_of_the_top_get_one_more_vote():
    fused = {0: 0.04, 1: 0.03, 2: 0.02, 3: 0.01}
    kinds = {0: "guide", 1: "api", 2: "guide", 3: "api"}
    weights = np.array([1.0, 1.0, 1.0, 0.5])
    asked: list[int] = []

    def kind(i):
        asked.append(i)
        return kinds[i]

    out = rerank.rerank("Which class does it?", fused, kind, weights, 60)
    assert out == {0: 0.04, 1: 0.03 + 1.0 / 61 * 1.0, 2: 0.02, 3: 0.01 + 1.0 / 61 * 0.5}
    assert sorted(out, key=lambda i: -out[i]) == [1, 0, 2, 3]  # 3 has half a page weight: half a vote
    assert sorted(asked) == [0, 1, 2, 3]
    # other questions are not touched, and no chunk's kind is read for them
    asked.clear()
    assert rerank.rerank("how does it work", fused, kind, weights, 60) is fused and asked == []


def test_only_the_first_candidates_are_reranked():
    fused = {i: 1.0 / (10 + i) for i in range(rerank.RERANK_DEPTH + 5)}
    out = rerank.rerank("which function", fused, lambda i: "api", np.ones(len(fused)), 60)
    moved = [i for i in fused if out[i] != fused[i]]
    assert moved == list(range(rerank.RERANK_DEPTH))


def test_a_which_question_finds_the_object_before_the_guide_on_the_demo(demo_html, monkeypatch):
    """The fused ranking puts the user guide's section on StandardScaler first; the question asks
    for a class (eval/RESULTS.md: the demo's which-questions 0.752 -> 0.833)."""
    query = "Which class rescales features to zero mean and unit variance?"
    searcher = retrieve.Searcher(demo_html)
    top = searcher.search(query, k=3)[0]
    assert top.kind == "api" and top.url.endswith("#mlkit.preprocessing.StandardScaler"), top.url
    monkeypatch.setattr(retrieve, "rerank", lambda query, fused, *args: fused)
    before = searcher.search(query, k=3)[0]
    assert before.kind != "api" and "user_guide/preprocessing" in before.url, before.url


def test_the_fusion_study_replays_the_shipped_fusion(demo_html, monkeypatch):
    """benchmarks/fusion_variants.py compares its variants with ``rrf``: that must be the
    ranking sphinx-rag ships (the same keyword and dense passes, fusion, reranking stage
    and pinned names), or its table compares with something else."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "fusion_variants.py"
    monkeypatch.syspath_prepend(str(path.parent))  # its `import harness`, as `python benchmarks/X.py` has it
    spec = importlib.util.spec_from_file_location("fusion_variants", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    searcher = retrieve.Searcher(demo_html)
    for query in ("Which class standardizes features?", "how do I pick the number of neighbors",
                  "StandardScaler with_mean", "nearst neighbours regresion"):
        assert study.ranking(searcher, query, "rrf") == searcher.ranking(query)[0], query
        assert study.ranking(searcher, query, "gap").keys() == searcher.ranking(query)[0].keys(), query
