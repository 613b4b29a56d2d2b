"""The evaluation harness (Hit@k, answer components, fixed-size baselines), and guards
against retrieval-quality regressions on the demo, on Flask's user guide, on Click's docs and on a part of
scikit-learn's API."""

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import build_site
from sphinx_rag.tools.evaluate import (AC_BUDGET, answer_component_scores, budgeted, evaluate, format_table, is_relevant,
                                 load_questions)
from sphinx_rag.tools.fixed_baseline import CHUNK_CHARS, OVERLAP_CHARS, fixed_windows
from sphinx_rag.tools.page_text import page_text, read_page_text
from sphinx_rag.search.retrieve import Result

EVAL = Path(__file__).resolve().parent.parent / "eval"
QUESTIONS = EVAL / "demo_questions.json"
FLASK_QUESTIONS = EVAL / "flask_questions.json"


def test_relevance_needs_the_passage_not_just_the_page():
    r = Result(1, 1.0, "a.html#x", "", "api", "Parameter strategy of X.\nmore", "id", 0)
    assert is_relevant(r, {"url": "a.html#x", "text_contains": "Parameter  strategy of X."})
    assert not is_relevant(r, {"url": "a.html#x", "text_contains": "Parameter alpha of X."})
    assert not is_relevant(r, {"url": "a.html#y"})
    smart = Result(1, 1.0, "a.html#x", "", "guide", "the application\u2019s module", "id", 0)
    assert is_relevant(smart, {"url": "a.html#x", "text_contains": "the application's module"})


def test_a_phrase_copied_from_the_page_meets_what_the_reader_sees():
    """An API chunk's text is its docstring's reST source; a phrase a question writer copies
    from the rendered page is in the chunk's display (attrs: 16 of 118 labels were unmeetable)."""
    r = Result(1, 1.0, "api.html#attrs.has", "", "api", "Check whether *cls* is a class with *attrs* attributes.",
               "id", 0, display=[["p", "Check whether cls is a class with attrs attributes."]])
    assert is_relevant(r, {"url": "api.html#attrs.has", "text_contains": "whether cls is a class with attrs"})
    assert is_relevant(r, {"url": "api.html#attrs.has", "text_contains": "whether *cls* is"})  # the source too
    assert not is_relevant(r, {"url": "api.html#attrs.has", "text_contains": "whether obj is"})
    assert not is_relevant(r, {"url": "api.html#other", "text_contains": "whether cls is a class"})


# -- answer components ------------------------------------------------------------------

PASSAGES = [
    "Unique URLs > Redirection\nIf you access the URL without a trailing slash (/projects), Flask redirects you\n"
    "to the canonical URL with the trailing slash (/projects/).",
    "Routing\nUse the route() decorator to bind a function to a URL.",
    "Accessing the URL with a trailing slash (/about/) produces a 404 \u201cNot Found\u201d error.",
]
REDIRECT = ["Flask redirects you to the canonical URL with the trailing slash"]
NOT_FOUND = ["produces a 404 \"not found\" error", "never written anywhere"]


def test_answer_component_mrr_is_the_rank_that_completes_the_answer():
    # whitespace (a line break inside the context), curly quotes and case are normalised
    assert answer_component_scores(PASSAGES, [REDIRECT, NOT_FOUND]) == (1 / 3, 1.0)
    assert answer_component_scores(PASSAGES, [REDIRECT]) == (1.0, 1.0)
    # one component missing: no complete answer (MRR 0), half the components found
    assert answer_component_scores(PASSAGES, [REDIRECT, ["HEAD requests"]]) == (0.0, 0.5)
    # only the top `cutoff` passages count
    assert answer_component_scores(PASSAGES, [REDIRECT, NOT_FOUND], cutoff=2) == (0.0, 0.5)


def test_answer_components_are_read_under_a_character_budget():
    assert budgeted(["a" * 5, "b" * 5, "c" * 5], 12) == ["a" * 5, "b" * 5, "cc"]
    assert budgeted(["a" * 20, "b"], 12) == ["a" * 12]
    assert sum(map(len, budgeted(PASSAGES * 100))) == AC_BUDGET
    # the third passage starts within the budget but the context lies past its end
    budget = len(PASSAGES[0]) + len(PASSAGES[1]) + 20
    assert answer_component_scores(PASSAGES, [REDIRECT, NOT_FOUND], budget=budget) == (0.0, 0.5)


def test_a_budget_cuts_every_metric_where_the_context_ends():
    from sphinx_rag.tools.evaluate import _score_question

    results = [Result(n, 1.0, f"a.html#{n}", "", "guide", text, f"id{n}", n) for n, text in enumerate(PASSAGES, 1)]
    q = {"answer_components": [REDIRECT, NOT_FOUND]}
    relevant = [{"url": "a.html#3", "text_contains": "a 404"}]
    assert _score_question(results, q, relevant)["mrr@10"] == 1 / 3
    budget = len(PASSAGES[0]) + len(PASSAGES[1]) + 20  # the third passage starts, its phrase is past the cut
    row = _score_question(results, q, relevant, budget)
    assert row["mrr@10"] == 0.0 and row["recall@10"] == 0.0 and row["ac-recall@10"] == 0.5
    assert row["sent"] == 3 and row["chars"] == budget
    row = _score_question(results, q, relevant, sum(map(len, PASSAGES)))
    assert row["mrr@10"] == 1 / 3 and row["ac-mrr@10"] == 1 / 3
    # the reader's form of a cut passage does not bring back the phrase past the cut
    shown = [dataclasses.replace(r, display=[["p", r.text]]) for r in results]
    assert _score_question(shown, q, relevant, budget)["mrr@10"] == 0.0
    assert _score_question(shown, q, relevant)["mrr@10"] == 1 / 3


def test_a_budget_sizes_the_passages_to_fit_more_of_them(demo_html):
    questions = load_questions(QUESTIONS)
    cut = evaluate(demo_html, questions, ["rrf"], budget=2500, fit=False)["rrf"]["overall"]
    fit = evaluate(demo_html, questions, ["rrf"], budget=2500)["rrf"]["overall"]
    assert cut["chars"] <= 2500 and fit["chars"] <= 2500
    assert fit["sent"] > cut["sent"] + 0.25, (cut, fit)  # more distinct passages in the same characters
    assert fit["recall@10"] > cut["recall@10"], (cut, fit)
    with pytest.raises(ValueError, match="budget"):
        evaluate(demo_html, questions, ["bm25"], budget=0)


def test_question_files_must_give_components_as_lists_of_strings(tmp_path):
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"id": "a", "question": "q?", "answer_components": ["not a list"]}]))
    with pytest.raises(ValueError, match=r"^\[sphinx-rag\] question 'a' .*list of lists of context strings"):
        load_questions(path)
    path.write_text(json.dumps([{"id": "a", "question": "q?"}]))
    with pytest.raises(ValueError, match="needs 'question' and 'relevant' or 'answer_components'"):
        load_questions(path)
    path.write_text(json.dumps([{"id": "a", "question": "q?", "answer_components": [["x", "y"], ["z"]]}]))
    assert load_questions(path)[0]["answer_components"] == [["x", "y"], ["z"]]


# -- page text and fixed-size windows ---------------------------------------------------

def test_page_text_is_the_main_content_with_its_anchors(demo_html):
    pt = read_page_text(demo_html / "user_guide" / "dummy_estimators.html")
    at = pt.text.index("always predicts the median of the training targets")
    assert pt.anchor_at(at) == "baselines-for-regression"
    assert "Link to this heading" not in pt.text and "¶" not in pt.text
    assert "function(" not in pt.text  # no scripts, no theme navigation
    assert not re.search(r"[ \t]{2,}\S", pt.text.split("\n")[0])
    html = ('<body><nav>Menu</nav><div role="main"><section id="a"><h1>T<a class="headerlink">¶</a></h1>'
            '<p>One   two</p><pre>x = 1\n    y</pre><section id="b"><p>Three</p></section></section></div>'
            '<footer>Foot</footer></body>')
    pt = page_text(html)
    assert pt.text == "T\nOne two\nx = 1\n    y\nThree"
    assert pt.anchors == [(0, "a"), (pt.text.index("Three"), "b")]
    assert pt.anchors_in(0, len(pt.text)) == ["b"]


def test_fixed_windows_cover_the_page_with_overlap_on_word_boundaries(demo_html):
    text = read_page_text(demo_html / "user_guide" / "impute.html").text
    windows = fixed_windows(text)
    assert len(windows) > 3 and windows[0][0] == 0 and windows[-1][1] == len(text)
    for (s1, e1), (s2, _e2) in zip(windows, windows[1:]):
        assert e1 - s1 <= CHUNK_CHARS and e1 - s1 > CHUNK_CHARS // 2
        assert s1 < s2 < e1 and e1 - s2 <= OVERLAP_CHARS  # overlap, never more than asked
        assert text[e1].isspace() and text[s2 - 1].isspace()  # whole words
    with pytest.raises(ValueError, match="overlap"):
        fixed_windows(text, size=100, overlap=100)


# -- the demo: regression guard, and the fixed-size baselines -------------------------

@pytest.mark.slow
def test_hybrid_beats_both_baselines_on_the_demo(demo_html):
    report = evaluate(demo_html, load_questions(QUESTIONS),
                      ["bm25", "dense", "rrf", "rrf-static", "fixed-bm25", "fixed-rrf"])
    mrr = {m: report[m]["overall"]["mrr@10"] for m in report}
    assert mrr["rrf"] > mrr["bm25"] and mrr["rrf"] > mrr["dense"], mrr
    # the static query encoder (no model in the browser) still adds to keyword search
    assert mrr["rrf-static"] > mrr["bm25"] + 0.01, mrr
    # eval/RESULTS.md records 0.885; fail loudly on a real regression, not on noise
    assert mrr["rrf"] >= 0.85, mrr
    assert report["rrf"]["overall"]["recall@10"] >= 0.88
    # the fixed-size-window baselines are real rankings (RESULTS.md: fixed-rrf 0.710), below ours
    assert 0.6 <= mrr["fixed-rrf"] < mrr["rrf"], mrr
    table = format_table(report)
    assert "| rrf | 82 |" in table and "| fixed-bm25 | 82 |" in table and "ac-mrr@10" not in table


def test_object_cards_find_what_a_class_is_for_on_the_demo(demo_html):
    """"Which class does X?" (eval/demo_which_questions.json): RESULTS.md records fused
    MRR@10 0.752 with object cards and 0.664 before them."""
    report = evaluate(demo_html, load_questions(EVAL / "demo_which_questions.json"), ["rrf"])
    assert report["rrf"]["overall"]["n"] == 18 and report["rrf"]["overall"]["mrr@10"] >= 0.70, report["rrf"]["overall"]


def test_the_demo_question_sets_pass_their_check(demo_html):
    """eval/check_questions.py on the demo's two sets: every label exists on its page and
    can be met by a chunk; the which-questions' URL-only labels are valid (the anchor
    alone decides), a label that no chunk can meet is reported."""
    for name in ("demo_questions.json", "demo_which_questions.json"):
        assert_questions_hold(demo_html, EVAL / name)
    which = json.loads((EVAL / "demo_which_questions.json").read_text())[0]
    page = which["relevant"][0]["url"].split("#")[0]
    unmeetable = [{**which, "relevant": [{"url": which["relevant"][0]["url"], "text_contains": "no chunk says this"}]}]
    path = demo_html.parent / "unmeetable.json"
    path.write_text(json.dumps(unmeetable))
    check = subprocess.run([sys.executable, str(EVAL / "check_questions.py"), str(demo_html), str(path)],
                           capture_output=True, text=True)
    assert check.returncode == 1 and page in check.stdout, check.stdout


# -- corpora nobody here wrote, each built from its project's sdist on PyPI --------------

def corpus_site(tmp_path_factory, name: str, script: str, *options: str) -> Path:
    """``eval/<script> SRC`` (the project's docs from its pinned sdist), built with sphinx_rag;
    skipped when PyPI cannot be reached."""
    src = tmp_path_factory.mktemp(name) / "src"
    proc = subprocess.run([sys.executable, str(EVAL / script), str(src)], capture_output=True, text=True)
    if proc.returncode:
        pytest.skip(f"{name}'s sdist could not be fetched from PyPI: {proc.stderr.strip().splitlines()[-1:]}")
    return build_site(src, src / "_build" / "html", "-j", "2", *options)


def assert_questions_hold(html: Path, questions: Path):
    """eval/check_questions.py finds no problem: every label is on its page and can be met."""
    check = subprocess.run([sys.executable, str(EVAL / "check_questions.py"), str(html), str(questions)],
                           capture_output=True, text=True)
    assert check.returncode == 0 and check.stdout.endswith(" 0 problem(s)\n"), check.stdout[-2000:]


# -- Flask's user guide -------------------------------------------------------------------

@pytest.fixture(scope="session")
def flask_html(tmp_path_factory) -> Path:
    return corpus_site(tmp_path_factory, "flask", "make_narrative_corpus.py")


def test_the_flask_questions_hold_and_retrieval_does_not_regress(flask_html):
    assert_questions_hold(flask_html, FLASK_QUESTIONS)
    report = evaluate(flask_html, load_questions(FLASK_QUESTIONS), methods=("bm25", "rrf"))
    rrf = report["rrf"]["overall"]
    # eval/RESULTS.md: rrf MRR@10 0.878 since three labels were corrected (0.828-0.841 before),
    # AC-MRR@10 0.821, AC-Recall@10 0.984 (81 questions)
    assert rrf["n"] == 81 and rrf["mrr@10"] >= 0.79 and rrf["ac-mrr@10"] >= 0.78 and rrf["ac-recall@10"] >= 0.95, rrf
    assert rrf["ac-mrr@10"] > report["bm25"]["overall"]["ac-mrr@10"]


# -- Click's docs (API by autodoc over Sphinx field lists + MyST guide pages): from its sdist --

CLICK_QUESTIONS = EVAL / "click_questions.json"


@pytest.fixture(scope="session")
def click_html(tmp_path_factory) -> Path:
    # the model's tier only: the static encoder's fit is measured in eval/RESULTS.md, not here
    return corpus_site(tmp_path_factory, "Click", "make_click_corpus.py", "-D", "sphinx_rag_query_encoder=model")


def test_the_click_questions_hold_and_retrieval_does_not_regress(click_html):
    assert_questions_hold(click_html, CLICK_QUESTIONS)
    report = evaluate(click_html, load_questions(CLICK_QUESTIONS), methods=("bm25", "rrf"))
    rrf = report["rrf"]["overall"]
    # eval/RESULTS.md: rrf MRR@10 0.775, Recall@10 0.955, which-questions 0.790 (0.664 before the
    # reranking stage), bm25 0.659 (100 questions)
    assert rrf["n"] == 100 and rrf["mrr@10"] >= 0.73 and rrf["recall@10"] >= 0.90, rrf
    assert report["rrf"]["by_style"]["which"]["mrr@10"] >= 0.72, report["rrf"]["by_style"]["which"]
    assert rrf["mrr@10"] > report["bm25"]["overall"]["mrr@10"] + 0.05


# -- attrs's docs (autodoc + hand-written API entries, MyST narrative): questions written blind --

ATTRS_QUESTIONS = EVAL / "attrs_questions.json"


@pytest.fixture(scope="session")
def attrs_html(tmp_path_factory) -> Path:
    return corpus_site(tmp_path_factory, "attrs", "make_attrs_corpus.py", "-D", "sphinx_rag_query_encoder=model")


def test_the_attrs_questions_hold_and_retrieval_does_not_regress(attrs_html):
    assert_questions_hold(attrs_html, ATTRS_QUESTIONS)
    report = evaluate(attrs_html, load_questions(ATTRS_QUESTIONS), methods=("bm25", "rrf"))
    rrf = report["rrf"]["overall"]
    # eval/RESULTS.md: rrf MRR@10 0.753, Recall@10 0.904, bm25 0.692 (99 questions, labels as committed;
    # 0.651 before a phrase copied from the rendered page could meet an API chunk's reST source)
    assert rrf["n"] == 99 and rrf["mrr@10"] >= 0.71 and rrf["recall@10"] >= 0.85, rrf
    assert rrf["mrr@10"] > report["bm25"]["overall"]["mrr@10"] + 0.03


def test_the_attrs_corpus_refuses_an_sdist_that_is_not_the_pinned_one(tmp_path):
    import tarfile

    fake = tmp_path / "attrs-26.1.0.tar.gz"
    with tarfile.open(fake, "w:gz") as tar:
        tar.add(EVAL / "attrs_questions.json", arcname="attrs-26.1.0/README.md")
    proc = subprocess.run([sys.executable, str(EVAL / "make_attrs_corpus.py"), str(tmp_path / "out"),
                           "--sdist", str(fake)], capture_output=True, text=True)
    assert proc.returncode == 1 and "[sphinx-rag]" in proc.stderr and "expected d03ceb89" in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_default_methods_show_each_query_encoder(demo_html):
    """The demo ships both encoders: evaluate compares them side by side by default."""
    from sphinx_rag.tools.evaluate import default_methods

    assert default_methods(demo_html) == ["bm25", "dense-static", "dense-model", "rrf-static", "rrf-model",
                                          "fixed-bm25", "fixed-rrf"]


# -- scikit-learn's API (real numpydoc, generated questions): object cards ------------

#: A part of the corpus of eval/RESULTS.md (benchmarks/make_api_corpus.py) small enough for
#: every test run: about 3,200 chunks, 40 of the 150 API questions, 14 of the 45 which-questions.
SKLEARN_MODULES = ("sklearn.preprocessing", "sklearn.impute", "sklearn.dummy", "sklearn.svm", "sklearn.naive_bayes",
                   "sklearn.pipeline", "sklearn.neighbors")


@pytest.fixture(scope="session")
def sklearn_html(tmp_path_factory) -> Path:
    pytest.importorskip("sklearn")
    src = tmp_path_factory.mktemp("sklearn") / "src"
    proc = subprocess.run([sys.executable, str(EVAL.parent / "benchmarks" / "make_api_corpus.py"), str(src),
                           "--modules", ",".join(SKLEARN_MODULES)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return build_site(src, src / "_build" / "html", "-j", "2", "-D", "sphinx_rag_query_encoder=model")


def _in_modules(questions: list[dict]) -> list[dict]:
    return [q for q in questions
            if q["relevant"][0]["url"].split("#")[1].startswith(tuple(m + "." for m in SKLEARN_MODULES))]


def test_object_cards_on_the_scikit_learn_api(sklearn_html):
    """Parameter questions and "which class does X?" on real numpydoc docstrings; the whole
    corpus gives fused MRR@10 0.937 and 0.776 (eval/RESULTS.md), before object cards 0.694
    and 0.641. This part measured 0.975 and 0.786 (scikit-learn 1.9.1; the thresholds catch a
    real regression, not noise or another release's docstrings)."""
    api = _in_modules(load_questions(EVAL / "sklearn_api_questions.json"))
    which = _in_modules(load_questions(EVAL / "sklearn_which_questions.json"))
    assert (len(api), len(which)) == (40, 14)
    report = evaluate(sklearn_html, api, ["bm25", "rrf"])
    rrf = report["rrf"]["overall"]
    assert rrf["mrr@10"] >= 0.90 and rrf["mrr@10"] > report["bm25"]["overall"]["mrr@10"], report
    assert evaluate(sklearn_html, which, ["rrf"])["rrf"]["overall"]["mrr@10"] >= 0.70
