"""Suggested questions (suggest.py): mined from section titles and object cards, kept only
when the search answers them with their own section, published in the manifest."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sphinx_rag import suggest
from sphinx_rag.assets import ASSET_DIR, IndexReader
from sphinx_rag.config import ConfigError, validate
from sphinx_rag.retrieve import Searcher

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
