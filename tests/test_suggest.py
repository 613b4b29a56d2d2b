"""Suggested questions (suggest.py): mined from section titles and object cards, kept only
when the search answers them with their own section, published in the manifest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import build_site
from sphinx_rag.index import suggest
from sphinx_rag.search.index import ASSET_DIR, IndexReader
from sphinx_rag.config import ConfigError, validate
from sphinx_rag.search.retrieve import Searcher

ROOTS = Path(__file__).parent / "roots"
WORDS = {"tune", "install", "use", "run", "store", "=models", "models", "complete", "computing", "compute",
         "generate", "generating", "mean", "meaning"}


@pytest.mark.parametrize("title, question", [
    ("Tuning the hyper-parameters of an estimator", "How do I tune the hyper-parameters of an estimator?"),
    ("Using async and await", "How do I use async and await?"),
    ("Running the tests", "How do I run the tests?"),
    ("How to write a plugin", "How do I write a plugin?"),
    ("Cross-validation: tuning hyper-parameters", "How do I tune hyper-parameters?"),
    ("Preprocessing and normalization", None),  # a gerund used as a noun
    ("Examples", None), ("mlkit.impute.SimpleImputer", None), ("Parameters", None),
    ("Frobnicating widgets", None),  # the docs never write "frobnicate": no guessed verb
])
def test_titles_become_how_to_questions(title, question):
    assert suggest.title_question(title, WORDS) == question


def test_page_titles_become_what_is_questions():
    assert suggest.title_question("Linear Models", WORDS, concept=True) == "What are linear models?"
    assert suggest.title_question("Imputation of missing values", WORDS, concept=True) == \
        "What is imputation of missing values?"
    assert suggest.title_question("Imputation of missing values", WORDS) is None  # a section, not a page
    assert suggest.title_question("NumPy arrays", WORDS, concept=True) == "What are NumPy arrays?"


def test_cards_become_which_questions():
    card = "SimpleImputer (class in mlkit.impute; simple imputer)\nUnivariate imputer for completing missing values."
    assert suggest.card_question(card, WORDS) == "Which class completes missing values?"
    card = "make_blobs (function in mlkit.datasets)\nGenerate isotropic Gaussian blobs for clustering.\nMore."
    assert suggest.card_question(card, WORDS) == "Which function generates isotropic Gaussian blobs for clustering?"
    card = "mean_squared_error (function in mlkit.metrics)\nMean squared error regression loss."
    assert suggest.card_question(card, WORDS) is None  # "mean" is a noun here
    card = "fit (method in mlkit.impute)\nFit the imputer on X."
    assert suggest.card_question(card, WORDS) is None  # methods: too many and too alike


def test_summaries_become_how_which_and_what_questions():
    words = suggest._words(["computing", "fitting", "predicted", "making", "transformed", "probabilities"])
    shared = frozenset({"get parameters for this estimator"})
    cases = {
        "StandardScaler (class in sklearn.preprocessing; standard scaler)\nStandardize features by removing the "
        "mean and scaling to unit variance.\nMore.": "How do I standardize features?",
        "fit (method in sklearn.cluster.KMeans)\nCompute k-means clustering.": "How do I compute k-means clustering?",
        "DummyClassifier (class in sklearn.dummy; dummy classifier)\nDummyClassifier makes predictions that "
        "ignore the input features.": "Which class makes predictions that ignore the input features?",
        "PCA (class in sklearn.decomposition)\nPrincipal component analysis (PCA).\nLinear dimensionality ...":
            "What is principal component analysis?",
        "KMeans (class in sklearn.cluster; k means)\nK-Means clustering.": "What is K-Means clustering?",
        # an argument (X), code, "this", inherited boilerplate, a noun, a role that is no technique: none
        "predict (method in sklearn.linear_model.Ridge)\nPredict class labels for samples in X.": None,
        "fit (method in sklearn.dummy.DummyClassifier)\nConfigure the ``fit`` request.": None,
        "get_params (method in sklearn.cluster.KMeans; get params)\nGet parameters for this estimator.": None,
        "predict_proba (method in sklearn.linear_model.LogisticRegression)\nProbability estimates.": None,
        "LogisticRegression (class in sklearn.linear_model)\nLogistic Regression (aka logit, MaxEnt) classifier.": None,
        "ValueError (exception in sklearn.exceptions)\nComputing went wrong.": None,
    }
    for card, question in cases.items():
        assert suggest.card_question(card, words, shared) == question, card


def test_listing_pages_and_the_root_page_make_no_what_is_question():
    records = [{"url": "index.html#sklearn-small", "doc": "index", "kind": "guide", "headings": ["sklearn-small"],
                "text": "sklearn-small"},
               {"url": "api.html#api", "doc": "api", "kind": "guide", "headings": ["API"], "text": "API"},
               {"url": "models.html#models", "doc": "models", "kind": "guide", "headings": ["Linear Models"],
                "text": "Linear Models\nThe following are a set of methods intended for regression: linear models."},
               {"url": "about.html#about", "doc": "about", "kind": "guide", "headings": ["Widgets"],
                "text": "Widgets"}]
    assert [s.question for s in suggest.candidates(records)] == ["What are linear models?"]
    root = [{**records[0], "text": "sklearn-small is a project that does many things for many people."}]
    assert suggest.candidates(root) == []  # the root page's title is the project's name


SEVEN_ESTIMATORS = ("preprocessing.StandardScaler", "impute.SimpleImputer", "linear_model.LogisticRegression",
                    "linear_model.Ridge", "cluster.KMeans", "decomposition.PCA", "dummy.DummyClassifier")


@pytest.fixture(scope="module")
def api_only_site(tmp_path_factory) -> Path:
    """The issue's site: seven scikit-learn estimators, autosummary pages only, the API page
    under a toctree captioned "API" of a root page titled by the project's name."""
    pytest.importorskip("sklearn")
    src = tmp_path_factory.mktemp("sklearn-small") / "src"
    (src / "_templates" / "autosummary").mkdir(parents=True)
    (src / "_templates" / "autosummary" / "class.rst").write_text(
        "{{ fullname | escape | underline}}\n\n.. currentmodule:: {{ module }}\n\n.. autoclass:: {{ objname }}\n"
        "   :members:\n   :inherited-members: no\n")
    (src / "conf.py").write_text(
        'project = "sklearn-small"\nextensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", '
        '"sphinx_rag"]\nautosummary_generate = True\nnumpydoc_show_class_members = False\n'
        'numpydoc_validation_checks = set()\ntemplates_path = ["_templates"]\n'
        'suppress_warnings = ["autodoc", "autosummary", "ref", "toc", "docutils", "misc"]\n'
        'sphinx_rag_query_encoder = "model"\n')
    (src / "index.rst").write_text("sklearn-small\n=============\n\n.. toctree::\n   :caption: API\n\n   api\n")
    (src / "api.rst").write_text("API\n===\n\n.. currentmodule:: sklearn\n\n.. autosummary::\n   :toctree: generated/\n\n"
                                 + "".join(f"   {name}\n" for name in SEVEN_ESTIMATORS))
    return build_site(src, src.parent / "html", "-d", str(src.parent / "dt"))


def test_an_api_only_site_gets_questions_from_its_summaries(api_only_site):
    """Issue 38: "What is API?" and "What is sklearn-small?" were all it got."""
    shown = IndexReader(api_only_site).manifest["settings"]["suggestions"]
    questions = [q for q, _ in shown]
    assert len(shown) >= 3, questions
    assert not [q for q in questions if "API" in q or "sklearn-small" in q]  # the toctree caption, the project
    assert "How do I standardize features?" in questions
    searcher = Searcher(api_only_site)
    for question, url in shown:  # each verified: answered first by the object it came from
        first = searcher.search(question, k=1)[0]
        assert url in (first.url, *first.also) and url.startswith("generated/sklearn."), (question, first.url)
    assert len({url.split("#")[0] for _, url in shown}) == len(shown)


def test_the_demo_gets_verified_questions_from_different_pages(demo_html):
    records = IndexReader(demo_html).chunks()
    searcher = Searcher(demo_html)
    chosen = suggest.choose(records, searcher)
    assert 3 <= len(chosen) <= suggest.MAX_SHOWN
    assert len({s.url.split("#")[0] for s in chosen}) == len(chosen)
    for s in chosen:  # each is answered first by a passage of where it came from
        first = searcher.search(s.question, k=1)[0]
        assert s.url in (first.url, *first.also)
    assert {s.source for s in chosen} >= {"api", "section"}
    settings = IndexReader(demo_html).manifest["settings"]
    assert settings["suggestions"] == [[s.question, s.url] for s in chosen]


def test_config_values_are_checked():
    with pytest.raises(ConfigError, match="list of questions"):
        validate({"sphinx_rag_suggestions": ["ok", 3]})
    with pytest.raises(ConfigError, match=r"\{query\}"):
        validate({"sphinx_rag_feedback_url": "https://x.org/new"})
    with pytest.raises(ConfigError, match="http"):
        validate({"sphinx_rag_feedback_url": "javascript:alert({query})"})
    assert validate({"sphinx_rag_feedback_url": "https://x.org/new?t={query}"})


def _manifest(out: Path) -> dict:
    return json.loads((out / ASSET_DIR / "manifest.json").read_text())


@pytest.mark.slow
def test_the_maintainers_questions_extend_or_replace_the_mined_ones(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)

    conf = (src / "conf.py").read_text()

    def build(value: list) -> dict:
        out = tmp_path / "html"
        (src / "conf.py").write_text(conf + f"\nsphinx_rag_suggestions = {value!r}\n")
        cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return _manifest(out)["settings"]

    mined = build(["auto"])["suggestions"]
    assert mined and all(url for _, url in mined)
    extended = build(["How do I install it?", "auto"])["suggestions"]
    assert extended == [["How do I install it?", ""], *mined]
    assert build(["How do I install it?"])["suggestions"] == [["How do I install it?", ""]]
    assert "suggestions" not in build([])
