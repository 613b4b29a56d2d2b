"""The cross-encoder stage (search/cross_encoder.py): its pure parts, and a site that
publishes no reranker (what every site publishes until the default model's package ships
one: issue 43). The browser's twin is pinned by tests/fixtures/cross_encoder.json
(js/test/cross_encoder.test.js)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sphinx_rag.model.source import packaged_reranker_dir
from sphinx_rag.search.cross_encoder import (CHARS_PER_TOKEN, RerankerInfo, clip_text, combined, focus_text,
                                             load_reranker, model_text, pair_ids, rerank_scores)
from sphinx_rag.search.index import IndexReader
from sphinx_rag.search.retrieve import Searcher

INFO = RerankerInfo(max_query_tokens=4, max_tokens=12, depth=3, rank_weight=0.5)


# -- the pure parts -------------------------------------------------------------------------

def test_pair_ids_cut_the_question_then_fill_with_the_text():
    ids, types = pair_ids([1, 2, 3, 4, 5, 6], list(range(10, 30)), cls=101, sep=102, info=INFO)
    assert ids == [101, 1, 2, 3, 4, 102, 10, 11, 12, 13, 14, 102]  # 4 question pieces, 12 in all
    assert types == [0] * 6 + [1] * 6
    ids, types = pair_ids([], [], cls=101, sep=102, info=INFO)
    assert ids == [101, 102, 102] and types == [0, 0, 1]


def test_clip_text_counts_code_points():
    text = "\U0001F600" * (CHARS_PER_TOKEN * 3 + 5)  # astral: two UTF-16 units each in the browser
    assert clip_text(text, 3) == "\U0001F600" * (CHARS_PER_TOKEN * 3)
    assert clip_text("short", 3) == "short"


def test_focus_text_puts_the_sentences_that_share_the_question_words_first():
    text = ("Deployment > Development server\nThe server runs on port 5000. Reloading restarts it! "
            "To stop reloading, pass --no-reload.\n$ app run --no-reload")
    got = focus_text("How do I stop the server from reloading?", text, 64).split("\n")
    assert got[0] == "Deployment > Development server"  # the heading path stays first
    assert got[1] == "To stop reloading, pass --no-reload."  # stop + reload (+ no)
    assert got[2:] == ["The server runs on port 5000.", "Reloading restarts it!", "$ app run --no-reload"]
    assert focus_text("nothing shared", "Head\nOne. Two.\nThree.", 64) == "Head\nOne.\nTwo.\nThree."
    assert focus_text("a", "x" * 1000, 3) == "x" * (CHARS_PER_TOKEN * 3)  # clipped like clip_text


def test_focus_text_reads_a_hostile_chunk_in_bounded_time():
    huge = "Head\n" + "filler words here. " * 5000 + "the asked word."  # the answer past 20,000 code points
    assert focus_text("asked word", huge, 64) == clip_text("Head" + "\nfiller words here." * 100, 64)


def test_model_text_cuts_as_the_info_says():
    focus = RerankerInfo(4, 12, 3, 0.5, text_cut="focus")
    assert model_text("stop", "H\nGo on. Stop here.", focus) == "H\nStop here.\nGo on."
    assert model_text("stop", "H\nGo on. Stop here.", INFO) == "H\nGo on. Stop here."


def test_combined_adds_the_fused_ranks_prior():
    got = combined(np.array([1.0, 1.0, 3.0], dtype=np.float32), 0.5)
    assert got.tolist() == pytest.approx([1.0, 1.0 - 0.5 * np.log(2), 3.0 - 0.5 * np.log(3)])
    assert combined(np.array([2.0, 5.0]), 0.0).tolist() == [2.0, 5.0]


def test_rerank_scores_reorder_the_top_and_keep_the_rest_below():
    fused = {10: 0.9, 11: 0.8, 12: 0.7, 13: 0.6, 14: 0.5}
    asked = []

    def logits(top):
        asked.append(list(top))
        return np.array([0.0, 0.0, 9.0], dtype=np.float32)  # the third candidate is the best

    out = rerank_scores(fused, logits, INFO)
    assert asked == [[10, 11, 12]]  # the first depth=3 by fused score
    order = sorted(out, key=lambda i: (-out[i], i))
    assert order == [12, 10, 11, 13, 14]
    assert out[13] == 0.6 and out[14] == 0.5  # below the reranked three, untouched
    assert min(out[i] for i in (10, 11, 12)) > 0.6


def test_rerank_scores_leave_a_single_candidate_alone():
    assert rerank_scores({3: 1.0}, lambda top: pytest.fail("no model call for one candidate"), INFO) == {3: 1.0}


@pytest.mark.parametrize("bad", [
    {}, {"max_query_tokens": 40, "max_tokens": 32, "depth": 20, "rank_weight": 1.0},
    {"max_query_tokens": 8, "max_tokens": 64, "depth": 0, "rank_weight": 1.0},
    {"max_query_tokens": 8, "max_tokens": 64, "depth": 20, "rank_weight": float("inf")},
    {"max_query_tokens": "8", "max_tokens": 64, "depth": 20, "rank_weight": "x"},
    {"max_query_tokens": 8, "max_tokens": 64, "depth": 20, "rank_weight": 1.0, "text_cut": "tail"},
])
def test_reranker_info_refuses_what_the_model_cannot_read(bad):
    with pytest.raises(ValueError, match="reranker_info.json"):
        RerankerInfo.from_json(bad)


# -- in the searcher: what the CLI, MCP and evaluate rank with -------------------------------------

@pytest.fixture(scope="module")
def api_html(tmp_path_factory, rootdir) -> Path:
    """tests/roots/test-api with the model's tier (the root itself is keyword-only)."""
    from site_helpers import build_site, copy_with_model

    src = copy_with_model(rootdir / "test-api", tmp_path_factory.mktemp("rerank-api-src"))
    out = tmp_path_factory.mktemp("rerank-api") / "html"
    return build_site(src, out, "-d", str(out.parent / "doctrees"))


def test_a_site_without_a_reranker_ranks_as_fused(api_html):
    """No reranker published (sphinx_rag.model.source.RERANKER_SHA256 pins none yet): the
    manifest names none, and asking for reranking changes nothing and says nothing."""
    directory, why = packaged_reranker_dir()
    assert (directory, why) == (None, "")  # pins none: nothing to say
    assert IndexReader(api_html).manifest.get("reranker_files") is None
    lines = []
    query = "which function adds two numbers"
    assert Searcher(api_html, rerank=True, warn=lines.append).scores(query) == Searcher(api_html).scores(query)
    assert lines == []


def test_load_reranker_of_a_site_without_one_says_nothing(api_html, tmp_path):
    site = tmp_path / "html"
    shutil.copytree(api_html, site)
    manifest = site / "_static" / "sphinx_rag" / "index" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["reranker_files"] = None
    manifest.write_text(json.dumps(data))
    lines = []
    assert load_reranker(IndexReader(site), lines.append) is None and lines == []
