"""Narrative chunks: inside sections, heading paths, token budget, overlap, exclusions."""

import pytest

from sphinx_rag.chunk.narrative import Block, pack_blocks
from sphinx_rag.embed import count_tokens, load_tokenizer

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


def test_a_paragraph_without_sentence_breaks_is_cut_to_the_budget():
    """The last resort: token windows between words, or inside a word with no space."""
    import random

    from sphinx_rag.chunk.narrative import MAX_CHARS_PER_TOKEN
    from sphinx_rag.model import resolve_model_source

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
