"""Python and JS agree by construction: fixtures generated here, checked by the JS tests.

- the committed fixtures (tests/fixtures/*.json, js/src/search/unicode_tables.js) are what
  tests/fixtures/generate.py gives from the current code and demo docs;
- ``node --test js/test`` passes against them and a fresh demo build.

The demo's chunk vectors are the model's int8 output, and another CPU's kernels may round
one of their values the other way (seen: an AMD EPYC with AVX2, December 2026). Cosines then
move by about 1e-4 and near ties deep in a dense top 100 swap places. So rankings.json is
checked for staleness within that noise (``_assert_same_rankings``), and the JS tests compare
JS with Python's rankings of the same local build (``demo_rankings``): the same assets, the
same ranking, bit for bit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sphinx_rag.search.index import IndexReader

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
sys.path.insert(0, str(FIXTURES))

import generate  # noqa: E402

REGENERATE = "python tests/fixtures/generate.py demo_docs/_build/html (after building the demo docs)"


@pytest.fixture(scope="module")
def committed_rankings():
    return generate.load(FIXTURES / "rankings.json")


@pytest.mark.slow
def test_fixtures_are_what_the_current_code_generates(demo_html, committed_rankings):
    # The committed query vectors are reused: embedding noise across machines must not
    # count as drift (test_query_vectors_are_current checks them with a tolerance).
    vectors = {q["query"]: q["vector"] for q in committed_rankings["queries"]}
    missing = [q for q in generate.demo_queries() if q not in vectors]
    assert not missing, f"new queries {missing[:3]}: regenerate the fixtures with {REGENERATE}"
    for name, content in generate.generate(demo_html, query_vectors=vectors).items():
        path = generate.destination(name, FIXTURES)
        if name == "cross_encoder.json":  # logits: another CPU's kernels may differ in the last digits
            _assert_same_reranking(json.loads(path.read_text(encoding="utf-8")), json.loads(content))
            continue
        if name == "rankings.json":  # cosines of the chunk vectors this CPU embedded
            _assert_same_rankings(json.loads(path.read_text(encoding="utf-8")), json.loads(content))
            continue
        assert path.read_text(encoding="utf-8") == content, (
            f"{path.relative_to(REPO)} is stale: regenerate it with {REGENERATE}")


def _assert_same_reranking(committed: dict, fresh: dict):
    """cross_encoder.json as generated now: the same candidates and orders, logits within
    generate.CROSS_ENCODER_TOLERANCE."""
    stale = f"tests/fixtures/cross_encoder.json is stale: regenerate it with {REGENERATE}"
    logits = lambda data: [x for q in data.get("queries", []) for x in q["logits"]]  # noqa: E731
    strip = lambda data: {**data, "queries": [{k: v for k, v in q.items() if k != "logits"}  # noqa: E731
                                              for q in data.get("queries", [])]}
    assert strip(committed) == strip(fresh), stale
    assert np.allclose(logits(committed), logits(fresh), atol=generate.CROSS_ENCODER_TOLERANCE, rtol=0), stale


#: How far a cosine of rankings.json may move with the CPU that embedded the demo.
COSINE_NOISE = 5e-4


def _floats_and_shape(value, key=""):
    """(the floats in ``value``, ``value`` with each float as None and each dense top 100 as
    its sorted ids, those lists with their key)."""
    floats, lists = [], []

    def walk(v, k):
        if isinstance(v, float):
            floats.append(v)
            return None
        if isinstance(v, dict):
            return {kk: walk(vv, kk) for kk, vv in v.items()}
        if isinstance(v, list):
            if k.endswith("dense_top100"):
                lists.append(v)
                return sorted(v)
            return [walk(x, k) for x in v]
        return v

    return floats, walk(value, key), lists


def _assert_same_rankings(committed: dict, fresh: dict):
    """rankings.json as generated now: the same hits in the same orders, cosines within
    COSINE_NOISE, each dense top 100 the same ids with none moved by more than one place."""
    stale = f"tests/fixtures/rankings.json is stale: regenerate it with {REGENERATE}"
    old_floats, old_shape, old_lists = _floats_and_shape(committed)
    new_floats, new_shape, new_lists = _floats_and_shape(fresh)
    assert old_shape == new_shape, stale
    assert np.allclose(old_floats, new_floats, atol=COSINE_NOISE, rtol=0), stale
    for old, new in zip(old_lists, new_lists):
        where = {i: k for k, i in enumerate(old)}
        assert all(abs(where[i] - k) <= 1 for k, i in enumerate(new)), stale


@pytest.fixture(scope="module")
def demo_rankings(demo_html, committed_rankings, tmp_path_factory) -> Path:
    """Python's rankings of this machine's demo build (the committed query vectors): what the
    JS tests compare JS's with (``$SPHINX_RAG_RANKINGS``)."""
    vectors = {q["query"]: q["vector"] for q in committed_rankings["queries"]}
    out = tmp_path_factory.mktemp("rankings") / "rankings.json"
    out.write_text(generate.dumps(generate.rankings_fixture(demo_html, generate.demo_queries(), vectors)),
                   encoding="utf-8")
    return out


def test_query_vectors_are_current(demo_html, committed_rankings):
    from sphinx_rag.search.index import IndexReader
    from sphinx_rag.model.embed import Embedder

    queries = committed_rankings["queries"]
    embedder = Embedder(IndexReader(demo_html).model_dir)
    fresh = embedder.embed([q["embedding_query"] for q in queries])  # spelling-corrected, as embedded
    stored = np.array([q["vector"] for q in queries], dtype=np.float32)
    cosine = (fresh * stored).sum(axis=1) / np.linalg.norm(fresh, axis=1) / np.linalg.norm(stored, axis=1)
    assert cosine.min() >= 0.99999, f"query vectors changed (min cosine {cosine.min()}): {REGENERATE}"


def test_fixture_sizes():
    sizes = {p.name: p.stat().st_size for p in FIXTURES.glob("*.json")}
    assert set(generate.FILES) <= set(sizes)
    assert sum(sizes.values()) < 2_250_000, sizes  # issue 42's agents' Markdown, page parts and records: 2.0 MB


@pytest.fixture(scope="module")
def small_index(demo_html, committed_rankings, tmp_path_factory):
    """The demo re-indexed into many small shards, and Python's rankings over it."""
    out = generate.write_small_index(demo_html, tmp_path_factory.mktemp("small") / "index")
    vectors = {q["query"]: q["vector"] for q in committed_rankings["queries"]}
    rankings = generate.rankings_fixture(out, list(vectors), vectors)
    (out.parent / "rankings.json").write_text(generate.dumps(rankings), encoding="utf-8")
    static = generate.static_encoder_fixture(demo_html, [*generate.demo_queries(), "☃ ☄"])
    (out.parent / "static_encoder.json").write_text(generate.dumps(static), encoding="utf-8")
    return out


@pytest.mark.slow
def test_small_layout_probes_and_cuts(small_index, committed_rankings):
    rankings = generate.load(small_index.parent / "rankings.json")
    manifest = json.loads((small_index / "manifest.json").read_text())
    assert manifest["counts"]["clusters"] > 10 and len(manifest["near"]) > 1
    # the probed dense top-100 differs from the exact one for some queries: the JS side
    # must reproduce the approximation, not only the exact search
    assert any(q["dense_top100"] != q["exact_dense_top100"] for q in rankings["queries"])
    # the rrf probe reads the clusters of the best keyword hits first (cluster map
    # shards): for some queries that changes the dense ranking the fusion takes
    assert manifest["layout"]["guide_clusters"] > 0 and len(IndexReader(small_index).dense_directory["cluster_map"]) > 1
    assert any(q["guided_dense_top100"] != q["dense_top100"] for q in rankings["queries"])
    # terms in more than head_postings chunks store a tail (ids and 4-bit impact levels):
    # the JS side must decode and merge it, and the fixture's queries must reach one
    reader = IndexReader(small_index)
    head = manifest["layout"]["head_postings"]
    tailed = {t for q in rankings["queries"] for t in q["tokens"]
              if (p := reader.postings(t)) is not None and p.df > head}
    assert tailed and all(len(reader.postings(t).docs) == reader.postings(t).df for t in tailed)


@pytest.fixture(scope="module")
def long_pages(longpages_html, tmp_path_factory):
    """Python's rrf rankings of names written once on tests/roots/test-longpages."""
    out = tmp_path_factory.mktemp("longpages") / "long_pages.json"
    out.write_text(generate.dumps(generate.long_pages_fixture(longpages_html)), encoding="utf-8")
    return out


@pytest.mark.slow
def test_js_tests_pass(demo_html, small_index, longpages_html, long_pages, demo_rankings):
    node = shutil.which("node")
    assert node, "node (>= 20) is needed for the JS tests: see scripts/setup_and_build.sh"
    assert (REPO / "js" / "node_modules" / "onnxruntime-web").is_dir(), (
        "js/node_modules is missing: run `npm ci` in js/ (scripts/setup_and_build.sh does)")
    env = dict(os.environ, SPHINX_RAG_DEMO_HTML=str(demo_html), SPHINX_RAG_REQUIRE_DEMO="1",
               SPHINX_RAG_SMALL_INDEX=str(small_index), SPHINX_RAG_LONGPAGES_HTML=str(longpages_html),
               SPHINX_RAG_LONGPAGES_RANKINGS=str(long_pages), SPHINX_RAG_RANKINGS=str(demo_rankings),
               PYTHON=sys.executable)
    proc = subprocess.run([node, "--test", "test/"], cwd=REPO / "js", env=env, capture_output=True, text=True,
                          timeout=900)
    summary = [line for line in proc.stdout.splitlines() if line.startswith("# ")]
    failures = [line for line in proc.stdout.splitlines() if line.lstrip().startswith("not ok")]
    assert proc.returncode == 0, "\n".join(failures + summary) + "\n" + proc.stdout[-6000:] + proc.stderr[-2000:]
    assert not any(line.startswith("# skipped") and line != "# skipped 0" for line in summary), summary
