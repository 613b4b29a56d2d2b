"""The dense pass of sphinx_rag/retrieve.py: exact order of summation, binary-first option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from sphinx_rag import retrieve
from sphinx_rag.assets import load_assets

FIXTURES = Path(__file__).parent / "fixtures"


def test_dense_scores_sum_dimensions_in_order():
    rng = np.random.default_rng(0)
    vectors = rng.integers(-127, 128, size=(50, 37), dtype=np.int8)
    query = rng.standard_normal(37).astype(np.float32)
    scales = rng.random(50).astype(np.float32)
    got = retrieve.dense_scores(query, vectors, scales)
    for i in (0, 17, 49):
        acc = 0.0
        for j in range(37):
            acc += float(vectors[i, j]) * float(query[j])
        assert got[i] == acc * float(scales[i])  # bit-identical to the JS loop
    np.testing.assert_allclose(got, (vectors.astype(np.float64) @ query.astype(np.float64)) * scales, rtol=1e-12)


def test_hamming_candidates_match_brute_force():
    rng = np.random.default_rng(1)
    vectors = rng.integers(-127, 128, size=(300, 70), dtype=np.int8)
    query = rng.standard_normal(70).astype(np.float32)
    distance = ((vectors > 0) != (query > 0)).sum(axis=1)
    want = sorted(range(300), key=lambda i: (distance[i], i))[:50]
    got = retrieve.hamming_candidates(query, retrieve.pack_signs(vectors), 50)
    assert got.tolist() == want


def test_binary_first_rule():
    assert not retrieve.use_binary_first(retrieve.BINARY_FIRST_ABOVE)
    assert retrieve.use_binary_first(retrieve.BINARY_FIRST_ABOVE + 1)
    assert retrieve.binary_candidate_count(100) == 100
    assert retrieve.binary_candidate_count(6000) == retrieve.BINARY_CANDIDATES
    assert retrieve.binary_candidate_count(80000) == 10000


def test_binary_first_keeps_the_exact_top_candidates(demo_html):
    assets = load_assets(demo_html)
    signs = retrieve.pack_signs(assets.vectors_i8)
    queries = json.loads((FIXTURES / "rankings.json").read_text(encoding="utf-8"))["queries"]
    for q in queries:
        vector = np.asarray(q["vector"], dtype=np.float32)
        exact = retrieve.dense_candidate_scores(vector, assets.vectors_i8, assets.scales, binary_first=False)
        binary = retrieve.dense_candidate_scores(vector, assets.vectors_i8, assets.scales, binary_first=True,
                                                 signs=signs)
        assert retrieve.top_k(binary, retrieve.CANDIDATES) == retrieve.top_k(exact, retrieve.CANDIDATES)


def test_searcher_takes_a_precomputed_vector(demo_html):
    searcher = retrieve.Searcher(demo_html, binary_first=True, binary_candidates=50)
    q = json.loads((FIXTURES / "rankings.json").read_text(encoding="utf-8"))["queries"][0]
    results = searcher.search(q["query"], k=5, vector=np.asarray(q["vector"], dtype=np.float32))
    assert len(results) == 5 and searcher.binary_first and searcher._signs is not None
