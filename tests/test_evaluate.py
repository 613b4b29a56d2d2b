"""The evaluation harness, and a guard against retrieval-quality regressions."""

from pathlib import Path

from sphinx_rag.evaluate import evaluate, format_table, is_relevant, load_questions
from sphinx_rag.retrieve import Result

QUESTIONS = Path(__file__).resolve().parent.parent / "eval" / "demo_questions.json"


def test_relevance_needs_the_passage_not_just_the_page():
    r = Result(1, 1.0, "a.html#x", "", "api", "Parameter strategy of X.\nmore", "id", 0)
    assert is_relevant(r, {"url": "a.html#x", "text_contains": "Parameter  strategy of X."})
    assert not is_relevant(r, {"url": "a.html#x", "text_contains": "Parameter alpha of X."})
    assert not is_relevant(r, {"url": "a.html#y"})


def test_hybrid_beats_both_baselines_on_the_demo(demo_html):
    report = evaluate(demo_html, load_questions(QUESTIONS), ["bm25", "dense", "rrf", "rrf-static"])
    mrr = {m: report[m]["overall"]["mrr@10"] for m in report}
    assert mrr["rrf"] > mrr["bm25"] and mrr["rrf"] > mrr["dense"], mrr
    # the static query encoder (no model in the browser) still adds to keyword search
    # (eval/RESULTS.md: 0.756 against bm25's 0.726)
    assert mrr["rrf-static"] > mrr["bm25"] + 0.01, mrr
    # eval/RESULTS.md records 0.797; fail loudly on a real regression, not on noise
    assert mrr["rrf"] >= 0.77, mrr
    assert report["rrf"]["overall"]["recall@10"] >= 0.85
    assert "| rrf | 82 |" in format_table(report)


def test_default_methods_show_each_query_encoder(demo_html):
    """The demo ships both encoders: evaluate compares them side by side by default."""
    from sphinx_rag.evaluate import default_methods

    assert default_methods(demo_html) == ["bm25", "dense-static", "dense-model", "rrf-static", "rrf-model"]
