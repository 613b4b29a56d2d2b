"""The display form: what a reader sees of a chunk (sphinx_rag/chunk/display.py), apart
from its embedded text; on small inputs, random reST, and the real demo build."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sphinx_rag.chunk.api import api_chunk_parts
from sphinx_rag.chunk.display import (ELLIPSIS, clip_display, cut_words, display_text, join_displays, rst_blocks,
                                      rst_inline)
from sphinx_rag.chunk.narrative import Block, pack

from site_helpers import chunks_of

KINDS = {"p", "code", "term", "label", "lead"}
TEMPLATE_WORDING = ("is described as", "has the following type(s)", "accepts the values", "is returned by",
                    "The parameters of", "The description of", "Here is a usage example", "See also, the objects")


def test_inline_roles_become_their_text():
    assert rst_inline(":class:`~mlkit.impute.SimpleImputer`") == "SimpleImputer"
    assert rst_inline(":class:`mlkit.impute.SimpleImputer`") == "mlkit.impute.SimpleImputer"
    assert rst_inline("Read more in the :ref:`User Guide <impute>`.") == "Read more in the User Guide."
    assert rst_inline(":func:`numpy.mean` and :py:meth:`~a.B.fit`") == "numpy.mean() and fit()"
    assert rst_inline(":math:`O(n \\cdot d)` and :term:`!estimator`") == "O(n \\cdot d) and estimator"
    assert rst_inline("``fit`` then `transform`, *emphasis*, **strong**") == "fit then transform, emphasis, strong"
    assert rst_inline("see `the docs <https://x.org>`_ and `Foo`_ [1]_") == "see the docs and Foo [1]"
    assert rst_inline("f(*args, **kwargs) with a * b") == "f(*args, **kwargs) with a * b"  # not markup
    assert rst_inline("``:class:`kept```") == ":class:`kept`"  # a literal is shown as written


def test_directives_lose_their_markers():
    blocks = rst_blocks(
        "Intro.\n\n.. warning::\n\n   Take care of\n   this.\n\n.. versionadded:: 1.2\n   The option.\n\n"
        ".. note:: Short note.\n\n.. _target:\n\n.. image:: x.png\n   :alt: x\n\n.. plot::\n\n   plt.plot()\n\n"
        ".. custom-thing:: Its argument\n   :option: 1\n\n   Its body is kept.\n\n"
        ".. [1] Author, A. (2020). A title\n   on two lines.")
    assert blocks == [["p", "Intro."], ["p", "Warning: Take care of this."], ["p", "Added in version 1.2: The option."],
                      ["p", "Note: Short note."], ["p", "Its argument"], ["p", "Its body is kept."],
                      ["p", "[1] Author, A. (2020). A title on two lines."]]


def test_code_stays_code():
    blocks = rst_blocks("Minimizes the objective function::\n\n    ||y - Xw||^2\n      + alpha\n\nThen:\n\n"
                        ">>> from x import y\n>>> y(1)\n2\n\n.. code-block:: python\n   :caption: c\n\n"
                        "   a = 1\n   b = 2\n\n.. math::\n\n   x^2\n")
    assert blocks == [["p", "Minimizes the objective function:"], ["code", "||y - Xw||^2\n  + alpha"],
                      ["p", "Then:"], ["code", ">>> from x import y\n>>> y(1)\n2", "pycon"],
                      ["code", "a = 1\nb = 2", "python"], ["code", "x^2", "math"]]  # with their languages, when known


def test_lists_keep_their_lines():
    blocks = rst_blocks('The strategy:\n\n- If "mean", use the mean\n  of each column.\n- If "median", the median.\n')
    assert blocks == [["p", "The strategy:"], ["p", '- If "mean", use the mean of each column.\n- If "median", the median.']]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("ab :`*_<>-.=~\n\t[]|>") + [".. ", "::", ">>> ", "   ", ":class:",
                                                                 ".. warning::", "``", "\n\n"]), max_size=80)
       .map("".join))
def test_any_rest_renders_without_error(text):
    """Malformed reST (unclosed roles, stray directives, odd indentation) still renders."""
    blocks = rst_blocks(text)
    assert all(b[0] in KINDS and isinstance(b[1], str) and b[1].strip() and len(b) in (2, 3) for b in blocks)
    assert all(b[0] == "code" and b[2] for b in blocks if len(b) == 3)  # a language only on code
    rst_inline(text)


def test_api_parts_read_naturally():
    doc = ('Impute.\n\nRead more in the :ref:`User Guide <impute>`.\n\nParameters\n----------\n'
           'strategy : {"mean", "median"}, default="mean"\n    The rule, see :class:`~a.Other`.\n\n'
           'Returns\n-------\nX : :class:`~numpy.ndarray`\n    Imputed.\n\nExamples\n--------\n>>> f(1)\n2\n')
    parts = api_chunk_parts("pkg.Imputer", "class", doc, "(strategy='mean')")
    texts = [t for t, _ in parts]
    displays = [d for _, d in parts]
    assert texts[2].startswith("Parameter strategy of pkg.Imputer")  # the embedded text is unchanged
    # the object card reads as the summary, the signature chunk as the signature
    assert displays[0] == [["term", "class Imputer"], ["p", "Impute."], ["p", "Read more in the User Guide."]]
    assert displays[1] == [["term", "class Imputer(strategy='mean')"]]
    assert displays[2] == [["label", "Parameters"], ["term", 'strategy : {"mean", "median"}, default="mean"'],
                           ["p", "The rule, see Other."]]
    assert displays[3] == [["label", "Returns"], ["term", "X : ndarray"], ["p", "Imputed."]]
    assert displays[4] == [["label", "Examples"], ["code", ">>> f(1)\n2", "pycon"]]
    assert display_text(displays[2]) == 'Parameters:\nstrategy : {"mean", "median"}, default="mean"\nThe rule, see Other.'


def _count(text: str) -> int:
    return len(text.split())


def test_packed_chunks_have_no_header_and_mark_their_overlap():
    sentences = [f"Sentence number {i} says a thing." for i in range(30)]
    blocks = [Block(" ".join(sentences[:15])), Block("x = 1\ny = 2", code=True), Block(" ".join(sentences[15:]))]
    chunks = pack("Page > Section", blocks, _count, budget=60, overlap=8)
    assert len(chunks) >= 3
    for text, display, _anchor in chunks:
        assert text.startswith("Page > Section\n")
        assert all(not b[1].startswith("Page > Section") for b in display)
    assert ["code", "x = 1\ny = 2"] in [b for _, d, _ in chunks for b in d]
    leads = [d[0] for _, d, _ in chunks[1:] if d and d[0][0] == "lead"]
    assert leads and all(b[1].endswith(".") for b in leads)
    # joined back (a passage of consecutive chunks): every sentence once
    joined = display_text(join_displays([d for _, d, _ in chunks]))
    assert all(joined.count(s) == 1 for s in sentences)


def test_a_passage_names_the_sections_it_runs_into():
    """A passage is shown under its hit's title; the chunks of other sections it takes
    (expand.py) open with their section's heading, in the display and the LLM's text."""
    a, b = [["p", "Shuffle first."]], [["lead", "x"], ["p", "K-fold splits."]]
    titles = ["CV > Shuffling", "CV > Iterators > K-fold"]
    joined = join_displays([a, b], titles, shown_title="CV > Iterators > K-fold")
    assert joined == [["heading", "Shuffling"], ["p", "Shuffle first."], ["heading", "K-fold"], ["p", "K-fold splits."]]
    assert display_text(joined) == "Shuffling\nShuffle first.\n\nK-fold\nK-fold splits."
    assert join_displays([a, b], [titles[0]] * 2, titles[0]) == [["p", "Shuffle first."], ["p", "K-fold splits."]]
    assert join_displays([a, b], [None, None], "X > fit") == [["p", "Shuffle first."], ["p", "K-fold splits."]]
    assert clip_display(joined, 10)[0] == ["heading", "Shuffling"]  # kept whole, like a label


def test_a_sentence_cut_by_token_windows_says_so():
    long_sentence = " ".join(f"word{i}" for i in range(100))
    chunks = pack("H", [Block(long_sentence)], _count, budget=30, overlap=0)
    displays = [d[0][1] for _, d, _ in chunks]
    assert displays[0].endswith(f" {ELLIPSIS}") and displays[-1].startswith(f"{ELLIPSIS} ")
    assert all(re.fullmatch(rf"({ELLIPSIS} )?(word\d+ )*word\d+( {ELLIPSIS})?", d) for d in displays)


def test_clip_display_cuts_between_words_and_lines():
    display = [["p", "alpha beta gamma delta " * 10], ["code", "\n".join(f"line{i}" for i in range(30))]]
    clipped = clip_display(display, 60)
    assert clipped == [["p", cut_words(display[0][1], 60)]]
    assert clipped[0][1].endswith(f"delta alpha {ELLIPSIS}") or clipped[0][1].endswith(f" {ELLIPSIS}")
    code = clip_display([["p", "Intro."], display[1]], 200)[1][1]
    assert code.startswith("line0\nline1\n") and code.endswith(f"\n{ELLIPSIS}")
    assert cut_words("alphabetagamma", 5) == f"alpha {ELLIPSIS}"


# -- the real demo build ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_chunks(demo_html):
    return chunks_of(demo_html)


def test_demo_displays_have_no_markup_template_or_header(demo_chunks):
    assert all(c["display"] or c["text"] == c["title"] for c in demo_chunks)  # only title-only pages are empty
    for c in demo_chunks:
        shown = "\n".join(text for _, text, *_ in c["display"])
        assert not re.search(r":\w+:`|`_|``|^\.\. \w|\.\. \w[\w-]*::", shown, re.M), (c["id"], shown)
        assert not any(w in shown for w in TEMPLATE_WORDING), (c["id"], shown)
        assert not re.search(r"^(Parameter|Attribute) \w+ of ", shown, re.M), (c["id"], shown)
        header = c["text"].split("\n", 1)[0]
        if c["kind"] != "api":  # narrative and examples: the heading path line is not shown
            assert shown.split("\n", 1)[0] != header, c["id"]
        assert all(kind in KINDS and text.strip() for kind, text, *_ in c["display"]), c["id"]
    raw = [c for c in demo_chunks if ":class:`" in c["text"] or ".. warning::" in c["text"]]
    assert len(raw) >= 10  # the embedded text keeps what it was tuned on


def test_demo_code_blocks_keep_their_lines(demo_chunks):
    code = [text for c in demo_chunks for kind, text, *_ in c["display"] if kind == "code"]
    assert sum("\n" in t for t in code) >= 30
    assert any("X_scaled = StandardScaler().fit_transform(X)\ncross_val_score(" in t for t in code)
    assert any(t.startswith(">>> ") for t in code)  # doctest examples of the API pages
    example = [c for c in demo_chunks if c["kind"] == "example" and any(k == "code" for k, *_ in c["display"])]
    assert example


def test_demo_api_parameter_reads_naturally(demo_chunks):
    param = next(c for c in demo_chunks
                 if c["text"].startswith("Parameter strategy of mlkit.impute.SimpleImputer"))
    assert param["display"][:2] == [["label", "Parameters"], ["term", "strategy : str, default='mean'"]]
    head = next(c for c in demo_chunks if c["text"].startswith("mlkit.impute.SimpleImputer (class)"))
    assert head["display"][0][1].startswith("class SimpleImputer(")
    assert "Read more in the User Guide." in [t for _, t, *_ in head["display"]]  # after the card's paragraph
    card = next(c for c in demo_chunks if c["text"].startswith("SimpleImputer (class in mlkit.impute"))
    assert card["display"][:2] == [["term", "class SimpleImputer"],
                                   ["p", "Univariate imputer for completing missing values with simple strategies."]]


def test_demo_ellipses_sit_between_words(demo_chunks):
    for c in demo_chunks:
        for _, text, *_ in c["display"]:
            for m in re.finditer(ELLIPSIS, text):
                before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
                assert before in ("", " ", "\n") or after in ("", " ", "\n"), (c["id"], text)


@pytest.mark.sphinx("html", testroot="malformed", freshenv=True,  # a full build: its warnings again
                    confoverrides={"sphinx_rag_docstring_warnings": True})
def test_malformed_rest_in_a_docstring_still_builds(app, warning):
    app.build()  # must not raise
    log = warning.getvalue()
    assert "numpydoc could not parse the docstring of badmod.broken" in log and "badmod.py:4" in log
    chunks = chunks_of(app.outdir)
    broken = [c for c in chunks if "badmod.broken" in c["title"]]
    # the narrative fallback is displayed from the doctree, without its header line
    assert any("Do something useful with x." in t for c in broken for _, t, *_ in c["display"])
    assert not any(t.startswith("Malformed") for c in broken for _, t, *_ in c["display"])
    odd = [c for c in chunks if c["url"].endswith("#badmod.odd")]
    assert len(odd) >= 3 and all(c["display"] for c in odd)
    shown = "\n".join(t for c in odd for _, t, *_ in c["display"])
    assert "Body kept." in shown and "Warning:" in shown and ".. " not in shown
