"""The dense tier (sphinx_rag/dense.py) and the Searcher over shards (sphinx_rag/retrieve.py)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

from sphinx_rag.search import dense, retrieve
from sphinx_rag.index.write import write_assets
from sphinx_rag.search.index import IndexReader, Layout
from sphinx_rag.search.bm25 import build_index, document_tokens
from sphinx_rag.model.embed import quantize_vectors
from sphinx_rag.search.keyword_scoring import Postings, expand_tokens
from sphinx_rag.search.lexical import tokenize

from site_helpers import chunks_of

FIXTURES = Path(__file__).parent / "fixtures"
sys.path.insert(0, str(FIXTURES))

import generate  # noqa: E402


def test_dense_scores_sum_dimensions_in_order():
    rng = np.random.default_rng(0)
    unit = rng.standard_normal((50, 37))
    vectors, scales = quantize_vectors((unit / np.linalg.norm(unit, axis=1, keepdims=True)).astype(np.float32))
    query = rng.standard_normal(37).astype(np.float32)
    query /= np.linalg.norm(query)
    got = dense.dense_scores(query, vectors, scales)
    for i in (0, 17, 49):
        acc = 0.0
        for j in range(37):
            acc += float(vectors[i, j]) * float(query[j])
        assert got[i] == acc * float(scales[i])  # bit-identical to the JS loop
    np.testing.assert_allclose(got, (vectors.astype(np.float64) @ query.astype(np.float64)) * scales, rtol=1e-12)


def test_clusters_are_deterministic_and_cover_every_chunk():
    rng = np.random.default_rng(1)
    centres = rng.standard_normal((8, 32))
    x = np.repeat(centres, 60, axis=0) + 0.3 * rng.standard_normal((480, 32))
    q, s = quantize_vectors((x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32))
    clusters = dense.cluster_vectors(q, s, exact_up_to=100, cluster_size=60)
    again = dense.cluster_vectors(q, s, exact_up_to=100, cluster_size=60)
    assert [c.tolist() for c in clusters] == [c.tolist() for c in again]
    assert sorted(np.concatenate(clusters).tolist()) == list(range(480))
    assert dense.cluster_vectors(q, s, exact_up_to=480, cluster_size=60)[0].tolist() == list(range(480))
    # the planted groups come out as clusters: most clusters hold one group only
    pure = sum(len(set((c // 60).tolist())) == 1 for c in clusters)
    assert pure >= len(clusters) // 2


def _nearest_stored_centroid(q, s, shard: bytes) -> np.ndarray:
    cq, cs = dense.read_centroid_shard(shard, q.shape[1])
    x = q.astype(np.float64) * s[:, None]
    return np.argmax(x @ (cq.astype(np.float64) * cs[:, None]).T, axis=1)


def test_each_chunk_is_in_the_cluster_of_its_nearest_stored_centroid():
    """What a query's probe ranks by (the stored int8 centroids) is what placed the chunks,
    so keeping the centroids (an incremental build) and assigning again changes nothing,
    and assigning changed vectors moves only the chunks whose nearest centroid changed."""
    rng = np.random.default_rng(2)
    x = np.repeat(rng.standard_normal((6, 24)), 50, axis=0) + 0.4 * rng.standard_normal((300, 24))
    q, s = quantize_vectors((x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32))
    shard, clusters = dense.fit_clusters(q, s, exact_up_to=100, cluster_size=40)
    assert len(clusters) > 3 and sorted(np.concatenate(clusters).tolist()) == list(range(300))
    nearest = _nearest_stored_centroid(q, s, shard)
    for c, ids in enumerate(clusters):
        assert (nearest[ids] == c).all() and ids.tolist() == sorted(ids.tolist())
    kept, again = dense.assign_clusters(q, s, shard)
    assert kept == shard and [c.tolist() for c in again] == [c.tolist() for c in clusters]

    edited = q.copy()
    edited[:10] = q[-10:]  # ten chunks now read like the last group
    kept, moved = dense.assign_clusters(edited, s, shard)
    assert kept == shard
    where = {i: c for c, ids in enumerate(moved) for i in ids.tolist()}
    before = {i: c for c, ids in enumerate(clusters) for i in ids.tolist()}
    assert [where[i] for i in range(10)] == [before[i] for i in range(290, 300)]
    assert all(where[i] == before[i] for i in range(10, 300))


def test_a_centroid_no_chunk_is_nearest_to_is_dropped():
    q = np.array([[127, 0], [120, 10], [0, 127]], dtype=np.int8)
    s = np.ones(3, dtype=np.float32)
    shard = dense.centroid_shard(np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    kept, clusters = dense.assign_clusters(q, s, shard)
    assert [c.tolist() for c in clusters] == [[0, 1], [2]]
    cq, _ = dense.read_centroid_shard(kept, 2)
    assert cq.tolist() == [[127, 0], [0, 127]]


def test_probe_reads_the_nearest_clusters_until_enough_vectors():
    centroids = np.array([[127, 0], [0, 127], [90, 90]], dtype=np.int8)
    scales = np.full(3, 1 / 127, dtype=np.float32)  # unit vectors: cosines within [-1, 1]
    query = np.array([1.0, 0.1], dtype=np.float32) / np.float32(np.hypot(1.0, 0.1))
    assert dense.probe_order(query, centroids, scales, [5, 5, 5], probe=1) == [0]
    assert dense.probe_order(query, centroids, scales, [5, 5, 5], probe=6) == [0, 2]
    assert dense.probe_order(query, centroids, scales, [5, 5, 5], probe=100) == [0, 2, 1]


def test_probing_everything_equals_exact_scores(demo_html, tmp_path):
    """The demo re-indexed with small clusters: probing all of them gives exact scores, and
    the default probe keeps the fused top-10 of nearly every query."""
    reader = IndexReader(demo_html)
    records = chunks_of(demo_html)
    cluster = reader.cluster(0)
    out = tmp_path / "index"
    write_assets(out, chunks=records, bm25=build_index([document_tokens(r["text"]) for r in records]),
                 vectors_i8=cluster.vectors, scales=cluster.scales, model_dir=reader.model_dir,
                 model_info=reader.manifest["model"], settings=reader.manifest["settings"],
                 layout=Layout(texts_per_shard=16, exact_up_to=100, cluster_size=40, probe=200))
    small = IndexReader(out)
    assert len(small.cluster_sizes) > 10
    queries = generate.load(FIXTURES / "rankings.json")["queries"]
    exact = retrieve.Searcher(demo_html)
    everything = retrieve.Searcher(out, probe=len(records))
    probed = retrieve.Searcher(out)
    overlap = []
    for q in queries[:40]:
        vector = np.asarray(q["vector"], dtype=np.float32)
        want = exact.dense_scores(q["query"], vector)
        np.testing.assert_array_equal(everything.dense_scores(q["query"], vector), want)
        got = probed.dense_scores(q["query"], vector)
        assert ((got == want) | (got == 0)).all()  # a probed chunk's score is its exact score
        a, b = ([r.id for r in s.search(q["query"], k=10, vector=vector)] for s in (exact, probed))
        overlap.append(len(set(a) & set(b)) / max(1, len(a)))
    assert np.mean(overlap) >= 0.9, np.mean(overlap)


def test_searcher_takes_a_precomputed_vector(demo_html):
    searcher = retrieve.Searcher(demo_html)
    q = generate.load(FIXTURES / "rankings.json")["queries"][0]
    results = searcher.search(q["query"], k=5, vector=np.asarray(q["vector"], dtype=np.float32))
    assert len(results) == 5 and searcher._embedder is None  # nothing embedded


def test_weak_match_flags_nonsense_not_questions(demo_html):
    searcher = retrieve.Searcher(demo_html)
    queries = {q["query"]: q for q in generate.load(FIXTURES / "rankings.json")["queries"]}
    for query, weak in (("banana smoothie recipe", True), ("xyzzy plugh", True),
                        ("What are the values of the strategy parameter in a dummy classifier?", False),
                        ("mean squred eror", False)):
        vector = np.asarray(queries[query]["vector"], dtype=np.float32)
        assert searcher.weak_match(query, vector) is weak, query
    keyword = retrieve.Searcher(demo_html, fusion="bm25")
    assert keyword.weak_match("banana smoothie recipe") and not keyword.weak_match("SimpleImputer strategy")


def test_rrf_votes_weigh_each_ranking():
    """The static encoder's dense ranking votes with DENSE_VOTE["static"] (eval/RESULTS.md:
    at full weight it pulled the fused ranking below keyword-only on scikit-learn's API)."""
    weights = np.array([1.0, 0.5, 1.0])
    assert retrieve.rrf_fuse([[2, 0], [0, 1]], 60, weights) == {2: 1 / 61, 0: 1 / 62 + 1 / 61, 1: 0.5 / 62}
    vote = retrieve.DENSE_VOTE["static"]
    assert 0 < vote < retrieve.DENSE_VOTE["model"] == 1.0
    voted = retrieve.rrf_fuse([[2, 0], [0, 1]], 60, weights, [1.0, vote])
    assert voted == {2: 1 / 61, 0: 1 / 62 + vote / 61, 1: vote / 62 * 0.5}


def test_a_frugal_probe_is_a_quarter_of_the_layouts():
    """The browser's frugal readers (Save-Data, a slow connection) probe this many vectors
    (js/src/search/retrieve.js frugalProbe; tests/browser/test_model_policy.py checks the
    clusters it reads against Searcher(probe=frugal_probe(...)))."""
    assert retrieve.FRUGAL_PROBE_SHARE == 4
    assert retrieve.frugal_probe(Layout().probe) == 1024
    assert retrieve.frugal_probe(150) == 37
    assert retrieve.frugal_probe(3) == 1


def _postings(term: str, docs: list[int]) -> Postings:
    return Postings(term, len(docs), np.asarray(docs, dtype=np.int64), np.ones(len(docs)))


def test_a_rare_token_names_its_chunks_when_it_is_an_identifier_or_the_whole_query():
    """Matched exactly and in at most RARE_DF chunks: an identifier or a code names every chunk
    holding it; a plain word only a chunk that has every other query word too (not a rare
    word asked in passing); a typo's near terms and a word in many chunks never do."""
    table = {"sn0421": [(_postings("sn0421", [7]), 1.0)], "offset": [(_postings("offset", [1, 7]), 1.0)],
                  "create_app": [(_postings("create_app", [3, 4]), 1.0)], "create": [], "app": [],
                  "n_neighbor": [(_postings("n_neighbor", [1, 2, 5]), 1.0)], "n": [], "neighbor": [],
                  "codelin1999": [(_postings("codeline1999", [9]), 0.5)],
                  "emit": [(_postings("emit", [8]), 1.0)],
                  "warning": [(_postings("warning", [2, 5, 6, 9]), 1.0)],
                  "sesion": [(_postings("session", [2, 8]), 0.5)]}

    def hits(query):  # the expansions of the query's own tokens, as expand_tokens gives them
        return retrieve.decisive_hits(query, {t: table[t] for t in tokenize(query)})

    assert hits("offset of SN0421") == {7}  # the key names 7 (and so does "offset": 7 has both)
    assert hits("create_app offset SN0421") == {3, 4, 7}
    assert hits("n_neighbors") == set()  # in three chunks
    assert hits("codelin1999") == set()  # a typo: near terms only
    assert hits("offset") == {1, 7}  # a plain word, the whole query
    assert hits("emit warning") == set()  # in passing: chunk 8 lacks "warning"
    assert hits("emit sesion") == {8}  # a typo's near term counts as held


def test_decisive_chunks_are_placed_above_the_fusion_in_its_order():
    fused = {1: 0.03, 2: 0.032, 7: 0.016, 9: 0.02}
    pinned = retrieve.pin_decisive(fused, {7, 9, 4})
    assert sorted(pinned, key=lambda i: -pinned[i]) == [9, 7, 4, 2, 1]  # first, then the fused order
    assert pinned[7] == 0.016 + 2 * 0.032 and pinned[4] == 2 * 0.032 and pinned[2] == 0.032
    assert retrieve.pin_decisive(fused, set()) == fused
    assert retrieve.pin_decisive(fused, {2}) == fused  # first already: the scores stay as they are
    assert retrieve.pin_decisive(fused, {2, 1}) == fused


def _holds(text: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def test_a_name_written_once_ranks_first_on_long_pages(longpages_html):
    """Issue 29: a line of a 20,000-line code block, a row key of a 5,000-row table, a word
    of one of 2,000 sections. Alone or asked about in a sentence, its passage comes first by
    the default fusion, with either query encoder, and by keywords alone (where the table's
    first chunk, which holds "offset", "state" and "sensor", came first for the sentences)."""
    names = generate.long_page_names(longpages_html)
    index = IndexReader(longpages_html)
    assert len(names) == 40 and all(index.postings(t).df == 1 for t in map(str.lower, names))
    for fusion, encoder in (("bm25", None), ("rrf", "model"), ("rrf", "static")):
        searcher = retrieve.Searcher(longpages_html, fusion=fusion, encoder=encoder)
        misses = [(q, [r.id for r in searcher.search(q, k=3)]) for n in names for q in generate.long_page_queries(n)
                  if not _holds(searcher.search(q, k=1)[0].text, n)]
        assert misses == [], (fusion, encoder)
    # a typo is not a name of the docs: nothing is pinned (its near terms rank as before)
    tokens = tokenize("codelin19999")
    assert retrieve.decisive_hits("codelin19999", expand_tokens(tokens, index.postings, index.near)) == set()


def test_a_pasted_page_is_searched_by_its_first_characters(demo_html):
    """A 30,000-word query searches its first MAX_QUERY_CHARS code points, in every path
    (keyword ranking, the query's embedding text): what it ranks is what they rank."""
    from sphinx_rag.search.retrieve import MAX_QUERY_CHARS, clip_query

    head = "how do I impute missing values with the mean " * 30
    query = head + "strategy " * 30_000
    assert clip_query(query) == query[:MAX_QUERY_CHARS] and len(clip_query(query)) == MAX_QUERY_CHARS
    searcher = retrieve.Searcher(demo_html, encoder="static")
    assert searcher.embedding_query(query) == searcher.embedding_query(query[:MAX_QUERY_CHARS])
    assert [r.id for r in searcher.search(query, k=5)] == [r.id for r in searcher.search(query[:MAX_QUERY_CHARS], k=5)]
