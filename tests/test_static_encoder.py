"""The static query encoder: its fit, its asset, and sites built with each setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sphinx_rag.index import encoder_fit
from sphinx_rag.search.index import ASSET_DIR, IndexReader
from sphinx_rag.search.retrieve import Searcher
from sphinx_rag.search.static_encoder import StaticEncoder
from sphinx_rag.index.encoder_fit import MIN_CHUNKS, TrainingTooSmall, pseudo_queries, train_encoder

ROOTS = Path(__file__).parent / "roots"


def test_pseudo_queries_are_cut_from_the_chunks_deterministically():
    texts = [f"Chunk {i}: the estimator number {i} fits a model. It also predicts targets well." for i in range(40)]
    titles = [f"Page {i // 10}" for i in range(40)]
    pairs = pseudo_queries(texts, titles, 200)
    assert pairs == pseudo_queries(texts, titles, 200)
    assert len(pairs) == len({q for q, _ in pairs}) <= 200
    assert [q for q, _ in pairs[:4]] == ["Page 0", "Page 1", "Page 2", "Page 3"]
    for query, source in pairs[4:]:
        assert query in " ".join(texts[source].split()), (query, source)
        assert 1 <= len(query.split()) <= 20


def test_the_sample_per_chunk_and_its_seed_are_parameters():
    """The benchmarks vary them (benchmarks/static_encoder_sweep.py); the defaults are the build's."""
    texts = [f"Chunk {i}: the estimator number {i} fits a model on data. It also predicts targets well "
             f"and scores them with metric {i} on held out folds." for i in range(30)]
    titles = [""] * 30
    assert pseudo_queries(texts, titles, 10_000) == pseudo_queries(
        texts, titles, 10_000, encoder_fit.SEED, encoder_fit.QUERIES_PER_CHUNK)
    two = pseudo_queries(texts, titles, 10_000, per_chunk=2)
    assert [sum(1 for _, s in two if s == i) for i in range(30)] == [2] * 30
    assert set(two) != set(pseudo_queries(texts, titles, 10_000, seed=1, per_chunk=2))


def test_an_added_chunk_leaves_the_other_chunks_pseudo_queries_alone():
    """A page edit that adds a chunk must not re-draw every pseudo-query (each one not in
    the embedding cache costs a model call at build time)."""
    texts = [f"Chunk {i}: the estimator number {i} fits a model on data. It also predicts targets well "
             f"and scores them with metric {i}." for i in range(300)]
    titles = [""] * 300
    before = pseudo_queries(texts, titles, 1000)
    after = pseudo_queries(texts[:150] + ["A new paragraph about cross validation of estimators."] + texts[150:],
                           titles + [""], 1000)
    by_text = lambda pairs, shift: {(q, s - (shift and s > 150)) for q, s in pairs}  # noqa: E731
    kept = by_text(before, False) & by_text(after, True)
    assert len(kept) >= 0.95 * len(before), (len(kept), len(before))
    assert 900 <= len(before) <= 1000 and 900 <= len(after) <= 1000


def test_too_few_chunks_is_refused():
    with pytest.raises(TrainingTooSmall, match=f"at least {MIN_CHUNKS}"):
        train_encoder(["a b c"] * 5, [""] * 5, np.ones((5, 4)), lambda t: [[1]] * len(t),
                      lambda t: np.ones((len(t), 4)), b"", [])


def test_the_fits_features_are_the_encoders_own():
    """The fit builds its feature matrix for all queries at once: each row must be what
    ``encode_ids`` computes for that query (idf bag, a repeated token summed, unit length)
    plus the bias; queries without a known token are left out."""
    from sphinx_rag.index.encoder_fit import _feature_matrix, _known_tokens

    token_ids = np.array([3, 7, 9, 20], dtype=np.int64)
    idf = np.array([1.0, 2.0, 0.5, 3.0], dtype=np.float32)
    queries = [[7, 3, 7], [1, 2], [20], [], [9, 100, 3]]
    owner, _ = _known_tokens(token_ids, queries)
    assert sorted(set(owner.tolist())) == [0, 2, 4]
    x = _feature_matrix(token_ids, idf, [queries[i] for i in (0, 2, 4)]).toarray()
    expected = np.array([[1.0, 4.0, 0, 0], [0, 0, 0, 3.0], [1.0, 0, 0.5, 0]])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(x, np.hstack([expected, np.ones((3, 1))]))


def test_the_main_directions_are_the_svds():
    from sphinx_rag.index.encoder_fit import _main_directions

    rng = np.random.default_rng(3)
    docs = rng.normal(size=(300, 24)) * np.linspace(4, 0.2, 24)
    basis = _main_directions(docs, 8)
    _, _, vt = np.linalg.svd(docs, full_matrices=False)
    assert np.allclose(np.abs((basis * vt[:8].T).sum(axis=0)), 1.0)
    assert np.allclose(basis.T @ basis, np.eye(8))


def test_the_asset_round_trips(demo_html):
    index = IndexReader(demo_html)
    data = index.binary(index.manifest["encoder"]["file"])
    encoder = StaticEncoder.from_bytes(data)
    assert encoder.to_bytes() == data
    assert encoder.weights.min() >= -7 and encoder.weights.max() <= 7  # int4
    assert encoder.rank % 2 == 0 and encoder.dim == index.dim


def test_static_vectors_point_where_the_model_does(demo_html):
    """Cosine between the static encoder's and the model's vector of the same query."""
    static, model = Searcher(demo_html, encoder="static"), Searcher(demo_html, encoder="model")
    queries = ["how do I fill missing values with the median", "strategy of a dummy classifier",
               "number of folds in cross validation", "scale features to a range"]
    cosines = [float(static.query_vector(q) @ model.query_vector(q)) for q in queries]
    assert min(cosines) > 0.5, cosines
    assert not static.query_vector("☃ ☄").any()  # no known token ([UNK] only): no semantic neighbour


def _kinds(html: Path) -> set[str]:
    return {p.name.split("-")[0] for p in (html / ASSET_DIR).iterdir()}


def test_a_static_site_ships_neither_the_model_nor_onnxruntime(static_site):
    manifest = json.loads((static_site / ASSET_DIR / "manifest.json").read_text())
    assert manifest["model_files"] is None and manifest["encoder"]
    assert manifest["settings"]["query_encoder"] == "static"
    assert "model" not in _kinds(static_site) and "encoder" in _kinds(static_site)
    client = {p.name for p in (static_site / "_static" / "sphinx_rag").iterdir()}
    assert {"searchbar.js", "worker.js"} <= client and not any(n.startswith("ort-") for n in client)
    searcher = Searcher(static_site)  # the site's own encoder by default
    assert searcher.encoder == "static"
    assert searcher.search("strategy of a dummy classifier", k=3)
    with pytest.raises(ValueError, match="ships no query model"):
        Searcher(static_site, encoder="model").search("strategy of a dummy classifier")


def test_cli_says_in_one_line_which_encoder_a_site_lacks(static_site):
    proc = subprocess.run([sys.executable, "-m", "sphinx_rag", "search", str(static_site), "imputer strategy",
                           "--encoder", "model"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "use the encoder 'static'" in proc.stderr
    ok = subprocess.run([sys.executable, "-m", "sphinx_rag", "search", str(static_site), "imputer strategy",
                         "--encoder", "static", "--json"], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)


def _tiny_site(tmp_path, *conf_lines: str) -> tuple[subprocess.CompletedProcess, Path, dict]:
    """The narrative test root (fewer than MIN_CHUNKS chunks) built with embeddings."""
    import shutil

    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    conf = (src / "conf.py").read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True")
    (src / "conf.py").write_text(conf + "".join(f"\n{line}\n" for line in conf_lines))
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", str(src), str(out)],
                          capture_output=True, text=True, env={**os.environ, "SPHINX_RAG_EMBED_CACHE": "0"})
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / ASSET_DIR / "manifest.json").read_text())
    assert 0 < manifest["counts"]["chunks"] < encoder_fit.MIN_CHUNKS
    return proc, out, manifest


def test_a_corpus_too_small_to_fit_takes_the_query_table_as_it_is(tmp_path):
    """Too few chunks to fit a correction: the default model's query table answers alone (no
    pseudo-query embedded), in the model's own axes, and finds what the model finds first."""
    proc, out, manifest = _tiny_site(tmp_path)
    (line,) = [line for line in proc.stdout.splitlines() if "static query encoder" in line]
    n = manifest["counts"]["chunks"]
    assert line.startswith(f"[sphinx-rag] static query encoder from the model's query table ({n} chunks are too few "
                           f"to correct it, at least {encoder_fit.MIN_CHUNKS})"), line
    assert "pseudo-quer" not in proc.stdout  # nothing was embedded for a fit
    assert manifest["encoder"] and manifest["model_files"] and manifest["settings"]["query_encoder"] == "both"
    encoder = IndexReader(out).encoder()
    assert encoder.rank == encoder.dim == 384
    static, model = (Searcher(out, fusion="dense", encoder=e) for e in ("static", "model"))
    for query in ("install the package with pip", "shell completion", "what backends are there",
                  "how to release a new version"):  # no fit, yet the model's own first hit
        assert static.search(query, k=1)[0].url == model.search(query, k=1)[0].url, query


@pytest.mark.parametrize("query_encoder", ["both", "static"])
def test_a_corpus_too_small_without_a_query_table_skips_the_fit_and_says_what_readers_get(tmp_path, query_encoder):
    """A model with no query table (exported here) and too few chunks for an encoder: no fit,
    and one line saying what readers get instead: the full model (``both``), or keyword
    search only (``static`` ships no model)."""
    import shutil

    from sphinx_rag.model.cache import cached_model_dir

    model = tmp_path / "model"
    shutil.copytree(cached_model_dir("sentence-transformers/all-MiniLM-L6-v2"), model,
                    ignore=shutil.ignore_patterns("query_table.bin", "embedding_cache.sqlite"))
    proc, out, manifest = _tiny_site(tmp_path, f'sphinx_rag_query_encoder = "{query_encoder}"',
                                     f"sphinx_rag_model = {str(model)!r}")
    n = manifest["counts"]["chunks"]
    (line,) = [line for line in proc.stdout.splitlines() if "static query encoder" in line]
    assert line.startswith(f"[sphinx-rag] no static query encoder: {n} chunks are too few to fit one (at least "
                           f"{encoder_fit.MIN_CHUNKS}), so the fit is skipped; ")
    assert "pseudo-quer" not in proc.stdout  # nothing was embedded for a fit
    ort = any(p.name.startswith("ort-") for p in (out / "_static" / "sphinx_rag").iterdir())
    if query_encoder == "both":
        assert line.endswith("readers get keyword results at once and semantic ones once the full model (23 MB) "
                             "is loaded")
        assert manifest["encoder"] is None and manifest["model_files"] and manifest["dense"]
        assert manifest["settings"]["query_encoder"] == "model" and ort
    else:  # no encoder, and the site asked for no model: keyword search, no vectors computed
        assert line.endswith("sphinx_rag_query_encoder = 'static' ships no model, so readers get keyword search "
                             "only (set it to 'both' for semantic search with the full model)")
        assert manifest["encoder"] is None and manifest["model_files"] is None and manifest["dense"] is None
        assert manifest["settings"]["query_encoder"] is None and not ort
        assert "chunk vectors" not in proc.stdout
        assert Searcher(out).search("install the package", k=3)


@pytest.mark.slow
def test_an_incremental_build_keeps_the_encoder_until_enough_has_changed(tmp_path):
    """A one-page edit keeps the previous fit (it costs seconds on every edit of a large
    site) and counts the chunks changed since; a build that writes every page fits again,
    giving the bytes a clean build gives."""
    import shutil

    from sphinx_rag.index.build import REFIT_SHARE

    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    conf = (src / "conf.py").read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True")
    (src / "conf.py").write_text(conf)
    (src / "topics.rst").write_text("Topics\n======\n\n" + "\n\n".join(  # enough chunks that one page is under 5%
        f"Topic {i}\n{'-' * (6 + len(str(i)))}\n\nOption number {i} sets how the solver treats case {i} of the input."
        for i in range(150)))
    (src / "index.rst").write_text((src / "index.rst").read_text().replace("   guide\n", "   guide\n   topics\n"))
    out, doctrees = tmp_path / "html", tmp_path / "doctrees"

    def build(*options):
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-d", str(doctrees), *options,
                               str(src), str(out)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, json.loads((out / ASSET_DIR / "manifest.json").read_text())

    log, first = build()
    assert "static query encoder fitted" in log and "stale_chunks" not in first["encoder"]
    guide = src / "guide.rst"
    guide.write_text(guide.read_text().replace("short introduction paragraph", "brand new opening paragraph"))
    log, edited = build()
    n = edited["counts"]["chunks"]
    stale = edited["encoder"]["stale_chunks"]
    assert 0 < stale <= REFIT_SHARE * n and "static query encoder fitted" not in log
    assert f"static query encoder kept from the previous build: {stale} of {n} chunks changed" in log
    assert edited["encoder"]["file"] == first["encoder"]["file"]
    assert IndexReader(out).encoder().encode("how does the solver treat a case").shape == (first["counts"]["dim"],)
    log, refitted = build("-E")  # every page read: fitted on the corpus as it is
    assert "static query encoder fitted" in log and "stale_chunks" not in refitted["encoder"]
    assert refitted["encoder"]["file"] != first["encoder"]["file"]
    clean = tmp_path / "clean"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(clean)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((clean / ASSET_DIR / "manifest.json").read_text())["encoder"] == refitted["encoder"]


def test_the_fits_sparse_products_are_scipys_without_scipy():
    """encoder_fit.SparseRows (numpy only: the base install has no SciPy) multiplies as a
    CSR matrix does, repeated entries summed, rows without entries included, over blocks."""
    from scipy.sparse import csr_matrix

    from sphinx_rag.index.encoder_fit import SparseRows

    rng = np.random.default_rng(0)
    n, m = 3000, 400
    rows, cols = rng.integers(0, n, 9000), rng.integers(0, m, 9000)
    values = rng.random(9000)
    ours = SparseRows.from_entries(rows, cols, values, (n, m))
    theirs = csr_matrix((values, (rows, cols)), shape=(n, m))
    dense, other = rng.random((m, 7)), rng.random((n, 5))
    for block in (1, 7, 1 << 10, 1 << 20):
        ours.BLOCK_NONZEROS = block
        assert np.allclose(ours @ dense, theirs @ dense) and np.allclose(ours.T @ other, theirs.T @ other)
    assert not any(name == "scipy" or name.startswith("scipy.") for name in _static_encoder_imports())


def _static_encoder_imports() -> set[str]:
    """The modules a fresh interpreter imports to fit an encoder."""
    code = ("import sys, numpy as np; from sphinx_rag.index.encoder_fit import _feature_matrix, _ridge_cg; "
            "x = _feature_matrix(np.arange(5), np.ones(5, np.float32), [[0, 1], [2, 2, 3], [9]]); "
            "_ridge_cg(x, np.ones((3, 2)), 0.3); print(' '.join(sys.modules))")
    return set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
