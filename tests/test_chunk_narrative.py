"""Narrative chunks: inside sections, heading paths, token budget, overlap, exclusions."""

import pytest

from sphinx_rag.chunk.narrative import Block, pack_blocks
from sphinx_rag.model.embed import count_tokens, load_tokenizer

from site_helpers import chunks_of


@pytest.mark.sphinx("html", testroot="narrative")
def test_sections_headers_budget_and_weights(app):
    app.build()
    chunks = chunks_of(app.outdir)
    by_title = {}
    for c in chunks:
        by_title.setdefault(c["title"], []).append(c)

    tuning = by_title["User guide > Imputation > Tuning"]
    assert tuning[0]["url"] == "guide.html#tuning"
    assert tuning[0]["text"].startswith("User guide > Imputation > Tuning\nChoose the strategy")
    assert "- mean for symmetric data\n- median for skewed data" in tuning[0]["text"]
    assert "Note: Imputation statistics are learned on the training set only." in tuning[0]["text"]

    # never across sections: the Imputation chunks hold nothing of Tuning or Scaling
    for c in by_title["User guide > Imputation"]:
        assert "cross-validation" not in c["text"] and "Scaling" not in c["text"]
    # the code block is kept whole
    assert any('from apimod import Filler\nfiller = Filler(strategy="median")' in c["text"]
               for c in by_title["User guide > Imputation"])

    # long paragraph split at sentences within the budget (80 tokens, header included) ...
    tok = load_tokenizer(app.sphinx_rag.model_dir, 256)  # keyword-only root: the model's source dir
    scaling = by_title["User guide > Scaling"]
    assert len(scaling) >= 2
    assert all(count_tokens(tok, c["text"]) <= 80 for c in scaling)
    # ... with an overlap of whole sentences
    first_tail = scaling[0]["text"].rsplit(". ", 1)[-1].rstrip(".")
    assert first_tail in scaling[1]["text"]

    # definition lists keep their terms apart from their definitions
    assert by_title["User guide > Strategies"][0]["text"] == (
        "User guide > Strategies\n- mean: Replace by the column mean.\n- median: Replace by the column median.")

    # MyST Markdown pages are chunked like rst ones
    md = by_title["Markdown page > Pipelines in Markdown"][0]
    assert md["url"] == "myst_page.html#pipelines-in-markdown"
    assert md["text"] == ("Markdown page > Pipelines in Markdown\nA pipeline chains transformers and a final "
                          "estimator.\n\nmake_pipeline(StandardScaler(), Ridge())")

    # excluded pages are absent; changelogs are down-weighted by default
    assert not any(c["doc"].startswith("private/") for c in chunks)
    assert {c["weight"] for c in chunks if c["doc"] == "changelog"} == {0.3}
    assert {c["weight"] for c in chunks if c["doc"] == "guide"} == {1.0}

    # a page with nothing but its title and a toctree is still findable by its title
    assert [(c["text"], c["url"]) for c in chunks if c["doc"] == "index"] == [("Narrative test", "index.html#narrative-test")]


@pytest.mark.sphinx("html", testroot="narrative")
def test_a_second_build_reads_no_output_as_sources(app):
    """The output directory is inside the sources here (sphinx.testing's layout) and .md is
    a source suffix (MyST): the Markdown twins of the first build are not pages of the next."""
    app.build()
    first = chunks_of(app.outdir)
    assert (app.outdir / "notes.html.md").is_file()
    app.build(force_all=True)
    again = chunks_of(app.outdir)
    assert [c["id"] for c in again] == [c["id"] for c in first]
    assert not [c for c in again if c["doc"].startswith("_build")]


@pytest.mark.sphinx("html", testroot="narrative")
def test_tables_glossaries_footnotes_and_local_contents(app):
    """Structures that used to come out as one run of words (a robustness check on real
    sites: click's tables and contents boxes, attrs' glossary and MyST footnotes)."""
    app.build()
    chunks = chunks_of(app.outdir)
    text = "\n\n".join(c["text"] for c in chunks if c["doc"] == "reference")
    # a table: a row per line, cells apart, the header first; shown the same way
    assert "Flag given | default | flag_value\nnot passed | False | True\n--flag | True | True" in text
    table = next(c for c in chunks if "not passed | False" in c["text"])
    assert ["p", "Flag given | default | flag_value\nnot passed | False | True\n--flag | True | True"] in table["display"]
    # a glossary: a chunk per term, titled by the term and linked to the term's own anchor
    slotted = next(c for c in chunks if c["title"] == "Reference > Terms > slotted class")
    assert slotted["url"] == "reference.html#term-slotted-class"
    assert slotted["text"] == ("Reference > Terms > slotted class\n"
                               "A class whose instances keep their attributes in fixed slots instead of a dict.")
    assert slotted["display"] == [["p", "A class whose instances keep their attributes in fixed slots instead of a dict."]]
    dict_class = next(c for c in chunks if c["title"] == "Reference > Terms > dict class")
    assert dict_class["url"] == "reference.html#term-dict-class" and "per-instance dict" in dict_class["text"]
    assert "fixed slots" not in dict_class["text"]
    # footnote marks do not stick to words; the footnote's text has no number
    assert "less memory on CPython." in text and "CPython1" not in text and "CPython 1" not in text
    assert "Measured with tracemalloc on 10,000 instances." in text and "1Measured" not in text
    # a definition list keeps its classifiers (numpydoc's "name : type" settings); a nested
    # list is part of its item's definition, not an item of its own
    assert "- numpydoc_use_plots (bool): Whether to produce plots for examples." in text
    assert "- numpydoc_xref_aliases (dict): Aliases for cross-references: short the alias." in text
    assert "\n- short" not in text
    # a list longer than the budget is cut between its items, which keep their line breaks
    steps = [c for c in chunks if c["title"] == "Reference > Release steps"]
    assert len(steps) >= 2
    for c in steps:
        items = c["text"].split("\n")[1:]
        assert items and all(i.startswith("- ") and i.endswith(".") for i in items), c["text"]
    assert sum(len(c["text"].split("\n")) - 1 for c in steps) >= 6
    # a page's local contents box is navigation, not content
    assert "Flag options Terms" not in text and not any(c["text"].endswith("Terms") for c in chunks)
    # MyST puts footnotes after every section: they get the page title, not an empty one
    md = [c for c in chunks if c["doc"] == "myst_page"]
    assert all(c["title"] for c in md), [c["id"] for c in md if not c["title"]]
    note = next(c for c in md if "object.__setattr__" in c["text"])
    assert note["title"] == "Markdown page" and note["text"].startswith("Markdown page\n")
    assert any(c["text"].endswith("Frozen instances are slower to create.") for c in md)


@pytest.mark.sphinx("html", testroot="narrative")
def test_admonitions_read_as_the_page_shows_them(app):
    """Sphinx's admonition-like nodes read as on the page: "Changed in version 1.3: ...",
    "See also: ...", a title as the label (a titled admonition, a todo), not the node's
    class name ("Versionmodified: ..." was on 25 of Flask's chunks)."""
    app.build()
    [chunk] = [c for c in chunks_of(app.outdir) if c["doc"] == "notes"]
    assert chunk["text"].split("\n\n") == [
        "Release notes\nChanged in version 1.3: The default solver is lbfgs.",
        "Deprecated since version 1.2: Use fit_transform instead.",
        "See also: The solver guide.",
        "Todo: Document the warm start.",
        "Before you upgrade: Pin the version in your requirements.",
        "Note: The new default runs: model.fit(X, y)"]  # the display keeps the code apart
    assert chunk["display"][-2:] == [["p", "Note: The new default runs:"], ["code", "model.fit(X, y)", "python"]]
    assert ["p", "Before you upgrade: Pin the version in your requirements."] in chunk["display"]


@pytest.mark.sphinx("html", testroot="narrative")
def test_tabs_dropdowns_and_cards_read_as_their_section(app):
    """sphinx-design and sphinx-tabs (scientific Python sites use both): a wrapper's blocks
    join the section's run instead of making chunks of one word, a tab's label opens its
    panel, a dropdown's raw SVG chevron is not text."""
    app.build()
    chunks = [c for c in chunks_of(app.outdir) if c["doc"] == "install"]
    assert [c["title"] for c in chunks] == ["Installing", "Installing > Shell completion"]
    install, shells = (c["text"] for c in chunks)
    assert install == ("Installing\nPick an installer.\n\npip: Run the installer in a virtual environment."
                       "\n\nconda:\n\nconda install -c conda-forge mlkit\n\nAfter installing, check the version.")
    assert ["code", "conda install -c conda-forge mlkit", "bash"] in chunks[0]["display"]
    assert "Bash: Add the line to your bashrc file.\n\nZsh: Add the line to your zshrc file." in shells
    assert "Why a virtual environment? It keeps the packages of each project apart." in shells
    assert "<svg" not in shells and "Bash Zsh" not in shells
    assert "Getting started\n\nThe first steps.\n\nReference\n\nEvery function." in shells


def test_a_paragraph_without_sentence_breaks_is_cut_to_the_budget():
    """The last resort: token windows between words, or inside a word with no space."""
    import random

    from sphinx_rag.chunk.narrative import MAX_CHARS_PER_TOKEN
    from sphinx_rag.model.source import resolve_model_source

    tok = load_tokenizer(resolve_model_source("all-MiniLM-L6-v2"), 256)
    count = lambda t: count_tokens(tok, t)  # noqa: E731
    rng = random.Random(0)
    words = [rng.choice(["imputation", "missing", "values", "strategy", "median", "of", "with"]) for _ in range(60_000)]
    paragraph = " ".join(words)  # 400 KB, not one sentence break
    texts = pack_blocks("Page > Section", [Block(paragraph)], count, budget=256, overlap=32)
    assert len(texts) > 100
    assert all(count(t) <= 256 for t in texts)
    assert " ".join(t.split("\n", 1)[1] for t in texts).split() == words  # nothing lost, nothing repeated
    blob = "A" * 30_000  # one "word": a single [UNK] token, but not one passage
    pieces = pack_blocks("H", [Block(blob)], count, budget=64, overlap=0)
    assert "".join(p[2:] for p in pieces) == blob
    assert all(len(p) <= 64 * MAX_CHARS_PER_TOKEN for p in pieces)


def test_pack_blocks_keeps_code_whole_when_it_fits():
    count = lambda t: len(t.split())  # noqa: E731
    code = Block("a = 1\nb = 2\nc = 3", code=True)
    prose = Block(" ".join(["word"] * 25) + ".")
    texts = pack_blocks("H", [prose, code], count, budget=30, overlap=0)  # 25 + 9 > 29
    assert texts == ["H\n" + prose.text, "H\na = 1\nb = 2\nc = 3"]


@pytest.mark.sphinx("html", testroot="narrative")
def test_named_tables_and_code_blocks_are_linked_to(app):
    """A chunk that starts in a table or code block the author named (``:name:`` or a
    label) links to it, every piece of a long one too; Sphinx's own numbering ids (a
    captioned code block's ``id1``) are not used: the next edit renumbers them."""
    app.build()
    chunks = [c for c in chunks_of(app.outdir) if c["doc"] == "reference"]
    by_title = {}
    for c in chunks:
        by_title.setdefault(c["title"], []).append(c)
    [table] = by_title["Reference > Backends"]
    assert table["url"] == "reference.html#backend-defaults" and table["id"] == "reference#backend-defaults:0"
    loop = by_title["Reference > Retries"]
    assert len(loop) >= 2 and all(c["url"] == "reference.html#retry-loop" for c in loop)
    assert [c["id"] for c in loop] == [f"reference#retry-loop:{n}" for n in range(len(loop))]
    [closing] = by_title["Reference > Closing"]
    assert closing["url"] == "reference.html#closing" and closing["text"].endswith("session.close()")
    html = (app.outdir / "reference.html").read_text()
    assert all(f'id="{anchor}"' in html for anchor in ("backend-defaults", "retry-loop", "closing"))
    # chunks that start in prose keep their section's anchor
    assert by_title["Reference > Flag options"][0]["url"] == "reference.html#flag-options"
