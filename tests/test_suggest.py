"""Suggested questions (suggest.py): mined from section titles and object cards, kept only
when the search answers them with their own section, published in the manifest."""

from __future__ import annotations

import json
import re
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
REPO = Path(__file__).resolve().parent.parent


# -- a small grammar of the questions a reader writes (no part-of-speech tagger) ----------------

OPENINGS = ("How do I ", "How can I ", "How does ", "How do ", "What is ", "What are ", "What does ", "Which class ",
            "Which function ", "Which method ", "Why ", "When ", "Where ", "Which ", "Can I ", "Is ", "Are ", "Does ",
            "Do ")
_PREPOSITION = r"(?:of|in|for|with|to|on|as|by|per|from|at|into|over|under|between|across|via|without|within|about|" \
               r"against|through|using)"


def question_problem(q: str) -> str | None:
    """Why ``q`` is no grammatical question (None: it is one): it opens with a question word
    and ends with its one "?"; no clause stands where a noun should ("What are how pages
    become chunks?"); "How do I" is followed by a verb's base form, "Which class" by a verb
    that agrees ("makes"); "What is" takes a singular, "What are" a plural or two things;
    no word twice in a row; "my", not "your", in a question about oneself."""
    if not q.endswith("?") or q.count("?") != 1:
        return "does not end with one question mark"
    if not q.startswith(OPENINGS):
        return "opens with no question word"
    words = q[:-1].split()
    if not 3 <= len(words) <= 22:
        return "too short or too long"
    if re.search(r"\b(?:is|are|do|does|I) (?:how|what|why|when|where|which|who)\b", q, re.I):
        return "a clause where a noun should be"
    if any(a.lower() == b.lower() for a, b in zip(words, words[1:])):
        return "a word twice"
    if q.startswith(("How do I ", "How can I ")):
        verb = words[3]
        if not verb.isalpha() or not verb.islower() or verb.endswith("ing") or verb in (
                "the", "a", "an", "to", "one", "without", "with", "of", "in", "on", "for", "is", "are"):
            return f"no verb after 'How do I' ({verb})"
        if re.search(r"\byour\b", q):
            return "'your' in a question about myself"
    if q.startswith(("Which class ", "Which function ", "Which method ")):
        if not (words[2].endswith("s") and words[2].islower()):
            return f"no verb that agrees after '{' '.join(words[:2])}' ({words[2]})"
    what = re.match(r"What (is|are) (.+)\?$", q)
    if what:
        phrase = re.split(rf" {_PREPOSITION} ", what.group(2))[0]
        if phrase.split()[0].lower() in ("how", "what", "why", "which", "when", "where"):
            return "a clause where a noun should be"
        plural = " and " in f" {phrase} " or re.search(r"[^sui']s$", phrase.split()[-1]) is not None
        if what.group(1) == "is" and plural and not phrase.split()[-1][0].isupper():
            return f"'is' with a plural ({phrase})"
        if what.group(1) == "are" and not plural:
            return f"'are' with a singular ({phrase})"
    return None


@pytest.mark.parametrize("question, problem", [
    ("What are how pages become chunks?", "a clause where a noun should be"),  # issue 44's, on its own docs
    ("What are how ranking works?", "a clause where a noun should be"),
    ("What is formats by plugin?", "'is' with a plural (formats)"),  # on imageio
    ("How do I the browser client?", "no verb after 'How do I' (the)"),
    ("Which class completing missing values?", "no verb that agrees after 'Which class' (completing)"),
    ("What are dataset loading tools", "does not end with one question mark"),
    ("How do I preview on your machine?", "'your' in a question about myself"),
    ("How do I retry failed tasks?", None), ("What is principal component analysis?", None),
    ("Which class makes predictions that ignore the input features?", None), ("Why does my task run twice?", None),
    ("What are linear models?", None), ("What are imputation and scaling?", None),
])
def test_the_grammar_check_tells_a_question_from_a_phrase(question, problem):
    assert question_problem(question) == problem


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


# -- issue 44: questions a person would write, on any site ------------------------------------

SITE_WORDS = suggest._words([
    "A coding agent reads the twins; coding agents call the tools. Tuning the model means tuning its "
    "hyper-parameters. Build it on Read the Docs, or serve it yourself: serving and running it is easy.",
    "Workers are deployed with systemd.",
    "tune run deploy install"])


@pytest.mark.parametrize("title, concept, how_to, question", [
    ("How pages become chunks", True, False, None),  # a clause already: "What are how pages become chunks?"
    ("How ranking works", True, False, None),
    ("What the reader's browser does", True, False, None),
    ("Formats by Plugin", True, False, None),  # a listing
    ("Architecture: a chunk and a query, end to end", True, False, None),  # a one-word title, a list
    ("Coding agents", True, False, "What are coding agents?"),  # "a coding agent": the gerund is a modifier
    ("Coding agents", False, False, None),
    ("Tuning the hyper-parameters", False, False, "How do I tune the hyper-parameters?"),
    ("A golden set: searches every build checks", True, False, "What is a golden set?"),
    ("Imputation and scaling", True, False, "What are imputation and scaling?"),
    ("Cluster analysis", True, False, "What is cluster analysis?"),
    ("Run a server", False, True, "How do I run a server?"),  # a how-to page's imperative title
    ("Deploy workers with systemd", True, True, "How do I deploy workers with systemd?"),
    ("Serve the search: themes, builders, headers", True, True, "How do I serve the search?"),
    ("Read the Docs and GitHub Pages with a warm start", False, True, None),  # a name, not "read the docs"
    ("The browser client", False, True, None), ("Without a site to start from", False, True, None),
    ("Turn it on for a site", False, True, None),  # "it": needs its context
    ("How to build it for yourself", False, False, "How do I build it for myself?"),
    ("Deploy workers with systemd", True, False, None),  # not a how-to page: no guessed verb
])
def test_titles_become_questions_of_their_kind(title, concept, how_to, question):
    assert suggest.title_question(title, SITE_WORDS, concept=concept, how_to=how_to) == question


@pytest.mark.parametrize("doc, title, project, expected", [
    ("development/index", "Imageio's developer documentation", "", True),  # imageio's "How do I fix a bug?"
    ("contributing", "Contributing to quaylane", "", True), ("changelog", "Changelog", "", True),
    ("release_notes/v2", "Version 2.1", "", True), ("about/license", "License", "", True),
    ("getting-started", "Working on sphinx-rag: the two commands", "sphinx-rag", True),
    ("user_guide/install", "Installing sphinx-rag", "sphinx-rag", False),
    ("how-to/deploy", "Deploy workers with systemd", "quaylane", False),
    ("formats/index", "Supported formats", "imageio", False),
])
def test_the_projects_housekeeping_pages_ask_nothing(doc, title, project, expected):
    assert suggest.housekeeping(doc, title, project) is expected


def test_summaries_written_as_most_projects_write_them_make_questions_too():
    card = "distance (function in planar; distance)\nReturn the Euclidean distance between two points.\nMore."
    assert suggest.card_question(card, SITE_WORDS) == "Which function returns the Euclidean distance between two points?"
    card = "load_polygons (function in planar; load polygons)\nLoad polygons from a GeoJSON file."
    assert suggest.card_question(card, SITE_WORDS) == "Which function loads polygons from a GeoJSON file?"
    for summary in ("Accuracy classification score.", "Area of a simple polygon, by the shoelace formula."):
        assert suggest.card_question(f"f (function in planar)\n{summary}", SITE_WORDS) is None  # nouns
    assert suggest.card_question("metadata (method in x.SpePlugin)\nSPE specific metadata.", SITE_WORDS) is None
    # the plainer questions that fill up a site with fewer than MIN_SHOWN
    card = "Point (class in planar; point)\nA location in the plane.\nMore."
    assert suggest.card_fallback_question(card, SITE_WORDS) == "Which class represents a location in the plane?"
    card = "area (function in planar)\nArea of a simple polygon, by the shoelace formula."
    assert suggest.card_fallback_question(card, SITE_WORDS) == "Which function gives the area of a simple polygon?"
    assert suggest.card_fallback_question("Base (class in planar)\nA base class for shapes.", SITE_WORDS) is None


def test_a_question_that_opens_as_one_already_taken_waits():
    """imageio: "Which function writes an image / multiple images / multiple volumes to the
    specified file?" took three of its six places."""
    records = [{"url": f"api/{name}.html#{name}", "doc": f"api/{name}", "kind": "api", "headings": [name],
                "text": f"{name} (function in imageio.v2)\n{summary}\nMore."}
               for name, summary in [("imwrite", "Write an image to the specified file."),
                                     ("mimwrite", "Write multiple images to the specified file."),
                                     ("imread", "Read an image from the specified file."),
                                     ("mvolwrite", "Write multiple volumes to the specified file.")]]

    class FirstIsAsked:  # every question's first result is where it came from
        def search(self, question, k=1):
            url = next(s.url for s in suggest.candidates(records) if s.question == question)
            return [type("Result", (), {"url": url, "also": []})()]

    questions = [s.question for s in suggest.choose(records, FirstIsAsked(), limit=2)]
    assert questions == ["Which function writes an image to the specified file?",
                         "Which function reads an image from the specified file?"]
    assert len(suggest.choose(records, FirstIsAsked(), limit=6)) == 3  # those that waited fill up to MIN_SHOWN


def _mined(site: Path) -> list[list[str]]:
    return [[q, url] for q, url in IndexReader(site).manifest["settings"].get("suggestions", []) if url]


@pytest.fixture(scope="module")
def narrative_root_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("suggest-narrative") / "html"
    return build_site(ROOTS / "test-suggest-narrative", out, "-d", str(out.parent / "dt"))


@pytest.fixture(scope="module")
def api_root_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("suggest-api") / "html"
    return build_site(ROOTS / "test-suggest-api", out, "-d", str(out.parent / "dt"))


def check_site_questions(site: Path, housekeeping_pages: tuple[str, ...] = ()):
    """At least MIN_SHOWN mined questions, each grammatical, none of a housekeeping page,
    each answered first by where it came from."""
    mined = _mined(site)
    questions = [q for q, _ in mined]
    assert len(mined) >= suggest.MIN_SHOWN, questions
    assert [(q, question_problem(q)) for q in questions if question_problem(q)] == []
    assert not [url for _, url in mined if url.split("#")[0] in housekeeping_pages], mined
    searcher = Searcher(site)
    for question, url in mined:
        first = searcher.search(question, k=1)[0]
        assert url in (first.url, *first.also) or ("#" not in url and first.url.split("#")[0] == url), (question, first.url)
    return questions


def test_a_narrative_site_gets_questions_of_its_guides_not_of_its_housekeeping(narrative_root_site):
    questions = check_site_questions(narrative_root_site, ("changelog.html", "contributing.html",
                                                           "development.html", "license.html"))
    assert "How do I deploy workers with systemd?" in questions  # a how-to page's imperative title
    assert not [q for q in questions if re.search(r"fix a bug|documentation|test suite|frequently", q, re.I)]


def test_an_api_site_of_one_page_gets_three_questions(api_root_site):
    """Issue 44: a small API-only site got one question where the dialog has room for three."""
    questions = check_site_questions(api_root_site)
    assert "Which function returns the Euclidean distance between two points?" in questions


def test_the_demo_and_the_api_only_site_ask_grammatical_questions(demo_html, api_only_site):
    check_site_questions(demo_html)
    check_site_questions(api_only_site)


@pytest.mark.slow
def test_the_docs_site_asks_grammatical_questions_of_its_guides(tmp_path_factory):
    """The docs of sphinx-rag itself (issue 44: "What are how pages become chunks?")."""
    out = tmp_path_factory.mktemp("docs-site") / "html"
    build_site(REPO / "docs", out, "-d", str(out.parent / "dt"))
    questions = check_site_questions(out, ("development.html",))
    assert not [q for q in questions if "how pages" in q or "how ranking" in q]
