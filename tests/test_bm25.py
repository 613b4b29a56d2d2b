"""BM25 scores must equal rank-bm25's BM25Okapi on the same tokens."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from sphinx_rag.search.index import IndexReader
from sphinx_rag.search.bm25 import build_index, document_tokens
from sphinx_rag.search.keyword_scoring import bm25_scores, edit_distance, typo_candidates
from sphinx_rag.search.keyword_shards import code_bits, impact_levels, pack_codes, unpack_codes
from sphinx_rag.search.lexical import tokenize

from site_helpers import chunks_of


def test_matches_rank_bm25_on_demo_chunks(demo_html):
    corpus = [tokenize(c["text"]) for c in chunks_of(demo_html)]
    ours, ref = build_index(corpus), BM25Okapi(corpus)
    queries = ["strategy dummy classifier", "missing values imputation mean", "the imputer of the imputer",
               "cross validation folds", "fit transform", "regularization alpha ridge"]
    for q in queries:
        tokens = tokenize(q)
        expected = ref.get_scores(tokens)
        np.testing.assert_allclose(ours.scores(tokens), expected, rtol=1e-5, atol=1e-6)
        assert expected.max() > 0


def test_negative_idf_floor_matches_rank_bm25():
    corpus = [["common", "rare"], ["common"], ["common", "x"], ["common"]]  # "common" has idf < 0
    np.testing.assert_allclose(build_index(corpus).scores(["common", "rare"]),
                               BM25Okapi(corpus).get_scores(["common", "rare"]), rtol=1e-6)


def test_stored_postings_score_like_rank_bm25(demo_html):
    """The shards hold BM25Okapi over the chunks' index tokens (header counted twice), each
    impact in one byte with a scale per term: scores within 1/255 of the terms' top impacts."""
    reader = IndexReader(demo_html)
    corpus = [document_tokens(c["text"]) for c in chunks_of(demo_html)]
    ref = BM25Okapi(corpus)
    for q in (["imputer"], tokenize("strategy of the dummy classifier"), tokenize("cross validation folds")):
        expansions = {t: [(reader.postings(t), 1.0)] for t in q}
        got = bm25_scores(reader.n_chunks, q, expansions)
        tolerance = sum(reader.postings(t).impacts.max() for t in q) / 255
        np.testing.assert_allclose(got, ref.get_scores(q), atol=tolerance)
        assert np.argmax(got) == np.argmax(ref.get_scores(q))


def test_typo_tolerance():
    assert edit_distance("stratgey", "strategy", 2) == 1  # transposition
    assert edit_distance("imputer", "imputation", 1) == 2  # over the limit
    vocab = sorted(["strategy", "stratify", "imputer", "scaler"])
    assert typo_candidates("stratgy", vocab, lambda t: 1) == [(1, "strategy")]
    assert typo_candidates("abc", vocab, lambda t: 1) == []  # short terms: no guessing
    index = build_index([["strategy", "prior"], ["imputer"], ["mean"], ["median"]])
    scores = index.scores(["stratgey"])
    assert scores[0] > 0 and scores[1] == 0
    assert scores[0] == pytest.approx(index.scores(["strategy"])[0] / 2)


def test_tail_levels_fit_where_the_impacts_are():
    """A tail's impacts are skewed (most postings low, a few high): Lloyd-Max levels give
    each posting its nearest level, each level the mean of its postings, and a smaller
    squared error than equal ranges of the same count; the same input gives the same levels."""
    rng = np.random.default_rng(0)
    impacts = np.concatenate([rng.gamma(2.0, 0.05, 5000), rng.uniform(0.8, 1.0, 50)])
    codes, values = impact_levels(impacts, 8)
    assert codes.max() < 8 and np.array_equal(codes, impact_levels(impacts, 8)[0])
    nearest = np.abs(impacts[:, None] - values[None, :]).argmin(axis=1)
    assert np.array_equal(codes, nearest)
    for level in np.unique(codes):
        assert values[level] == pytest.approx(impacts[codes == level].mean())
    edges = np.linspace(impacts.min(), impacts.max(), 9)
    equal = np.clip(np.searchsorted(edges, impacts, side="right") - 1, 0, 7)
    equal_error = sum(((impacts[equal == c] - impacts[equal == c].mean()) ** 2).sum() for c in np.unique(equal))
    assert ((impacts - values[codes]) ** 2).sum() < 0.5 * equal_error
    assert len(np.unique(impact_levels(np.full(10, 0.3), 8)[0])) == 1  # one distinct impact: one level


@pytest.mark.parametrize("bits", range(1, 9))
def test_level_codes_round_trip_at_any_width(bits):
    codes = np.random.default_rng(bits).integers(0, 1 << bits, 37)
    packed = b"xx" + pack_codes(codes, bits) + b"yy"
    assert len(packed) == 4 + -(-37 * bits // 8)
    got, end = unpack_codes(packed, 2, 37, bits)
    assert got.tolist() == codes.tolist() and packed[end:] == b"yy"
    assert code_bits(2) == 1 and code_bits(4) == 2 and code_bits(8) == 3 and code_bits(5) == 3
