"""The warm start (warm_start.py): a build with empty caches starts from the published site.

Real Sphinx builds in subprocesses, the real model, a real HTTP server serving a previous
build: the same sources give the same bytes without embedding a chunk, an edit embeds
only what changed, and a site that is down, dies partway, sends wrong bytes or holds
another model or format costs one line and a correct cold build.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from site_helpers import LoggedHandler, QuietHandler, StaticServer, free_port, index_files, vectors_of
from sphinx_rag.search.index import ASSET_DIR, IndexReader
from sphinx_rag.model.embed import embedding_text
from sphinx_rag.index.encoder_fit import MIN_CHUNKS
from sphinx_rag.index.warm_start import ENV, SAMPLE, site_url

ROOTS = Path(__file__).parent / "roots"
COLD = {ENV: "0"}  # the published build: no warm start
EMPTY = {"SPHINX_RAG_EMBED_CACHE": "0"}  # a CI runner: no embedding cache (the model export stays cached)


def _make_source(src: Path):
    """The narrative test root with embeddings and enough chunks for a static encoder."""
    shutil.copytree(ROOTS / "test-narrative", src)
    conf = (src / "conf.py").read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True")
    (src / "conf.py").write_text(conf)
    (src / "topics.rst").write_text("Topics\n======\n\n" + "\n\n".join(
        f"Topic {i}\n{'-' * (6 + len(str(i)))}\n\nOption number {i} sets how the solver treats case {i} of the input."
        for i in range(150)))
    (src / "index.rst").write_text((src / "index.rst").read_text().replace("   guide\n", "   guide\n   topics\n"))


def _sphinx(src: Path, out: Path, *options: str, env: dict | None = None) -> str:
    """A real build (without -q: the info lines are the report); returns stdout + stderr."""
    env = {**{k: v for k, v in os.environ.items() if k != ENV}, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", *options, str(src), str(out)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout + proc.stderr


def _warm_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if "warm start" in line]


def _embedded(log: str) -> int:
    """How many chunk texts the build embedded (the embedding step's own line)."""
    found = re.findall(r"chunk vectors from the embedding cache; embedding (\d+) new chunk texts", log)
    return sum(int(n) for n in found)


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("warm") / "src"
    _make_source(src)
    return src


@pytest.fixture(scope="module")
def published(source) -> Path:
    """The site as deployed: a cold build of the sources."""
    out = source.parent / "published"
    log = _sphinx(source, out, env=COLD)
    assert "static query encoder" in log and not _warm_lines(log)
    assert IndexReader(out).n_chunks >= MIN_CHUNKS
    return out


@pytest.mark.slow
def test_same_sources_give_the_published_bytes_without_embedding(source, published, tmp_path):
    requests: list[str] = []
    with StaticServer(published, LoggedHandler, requests=requests) as server:
        out = tmp_path / "html"
        log = _sphinx(source, out, "-j", "2", "-D", f"sphinx_rag_warm_start={server.url}", env=EMPTY)
        n = IndexReader(published).n_chunks
        (line,) = _warm_lines(log)
        assert re.fullmatch(rf"\[sphinx-rag\] warm start from {server.url}: {n} of {n} chunk vectors reused "
                            rf"\({SAMPLE} re-embedded here to check them\), encoder reused, [0-9.]+ MB fetched in "
                            r"[0-9.]+ s", line), line
        assert _embedded(log) == 0 and "chunk vectors from the embedding cache" not in log
        assert "static query encoder fitted" not in log and "WARNING" not in log
        assert index_files(out) == index_files(published)  # every file, byte for byte
        assert not any("model-" in p for p in requests), "the model is in the cache: not fetched"
        # a build with an index of its own starts from it, not from the site
        before = len(requests)
        page = source / "install.rst"
        page.write_text(page.read_text())
        log = _sphinx(source, out, "-D", f"sphinx_rag_warm_start={server.url}", env=EMPTY)
        assert requests[before:] == [] and not _warm_lines(log)


@pytest.mark.slow
def test_a_one_page_edit_embeds_only_that_page(source, published, tmp_path):
    edited = tmp_path / "src"
    shutil.copytree(source, edited)
    guide = edited / "guide.rst"
    assert "short introduction paragraph" in guide.read_text()
    guide.write_text(guide.read_text().replace("short introduction paragraph", "brand new opening paragraph"))
    with StaticServer(published) as server:
        out = tmp_path / "html"
        log = _sphinx(edited, out, "-D", f"sphinx_rag_warm_start={server.url}", env=EMPTY)
    old = {embedding_text(r["kind"], r["text"]) for r in IndexReader(published).chunks()}
    records = IndexReader(out).chunks()
    new = [i for i, r in enumerate(records) if embedding_text(r["kind"], r["text"]) not in old]
    assert new and {records[i]["doc"] for i in new} == {"guide"}
    assert _embedded(log) == len(new)
    (line,) = _warm_lines(log)
    manifest = json.loads((out / ASSET_DIR / "manifest.json").read_text())
    stale = manifest["encoder"]["stale_chunks"]
    assert f"{len(records) - len(new)} of {len(records)} chunk vectors reused ({SAMPLE} re-embedded here to check " \
           f"them), encoder kept ({stale} chunks changed since its fit)" in line
    assert manifest["encoder"]["file"] == json.loads((published / ASSET_DIR / "manifest.json").read_text())[
        "encoder"]["file"]
    # the reused vectors are the published ones, the others what the model gives them
    vectors, scales = vectors_of(out)
    published_vectors, published_scales = vectors_of(published)
    by_text = {embedding_text(r["kind"], r["text"]): i for i, r in enumerate(IndexReader(published).chunks())}
    for i, r in enumerate(records):
        j = by_text.get(embedding_text(r["kind"], r["text"]))
        if j is not None:
            assert np.array_equal(vectors[i], published_vectors[j]) and scales[i] == published_scales[j]
    from sphinx_rag.model.embed import Embedder, quantize_vectors

    q, s = quantize_vectors(Embedder(out / ASSET_DIR / manifest["model_files"]["dir"]).embed(
        [embedding_text(records[i]["kind"], records[i]["text"]) for i in new]))
    assert np.array_equal(vectors[new], q) and np.array_equal(scales[new], s)


@pytest.mark.slow
def test_past_the_refit_share_the_encoder_is_fitted_again(source, published, tmp_path):
    """More than REFIT_SHARE of the chunks changed since the site's fit: the encoder is fitted
    on this corpus (as an incremental build would), the vectors of the rest still reused."""
    from sphinx_rag.index.build import REFIT_SHARE

    edited = tmp_path / "src"
    shutil.copytree(source, edited)
    topics = edited / "topics.rst"
    text = topics.read_text()
    for i in range(20):
        text = text.replace(f"treats case {i} of", f"handles case {i} of")
    topics.write_text(text)
    with StaticServer(published) as server:
        log = _sphinx(edited, tmp_path / "html", "-D", f"sphinx_rag_warm_start={server.url}")  # embedding cache on
    n = IndexReader(published).n_chunks
    (line,) = _warm_lines(log)
    changed = int(re.search(r"encoder fitted \((\d+) chunks changed since the site's, over 5%\)", line).group(1))
    assert changed == 40 > REFIT_SHARE * n  # 20 edited chunks: each one gone and one new
    assert f"{n - 20} of {n} chunk vectors reused" in line and "static query encoder fitted" in log
    manifest = json.loads((tmp_path / "html" / ASSET_DIR / "manifest.json").read_text())
    assert "stale_chunks" not in manifest["encoder"]


class _Dying(QuietHandler):
    """Serves ``alive`` requests, then closes every connection without an answer."""

    alive: int
    served: list
    lock = threading.Lock()

    def do_GET(self):
        with self.lock:
            self.served.append(self.path)
            dead = len(self.served) > self.alive
        if dead:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        super().do_GET()


class _Truncating(QuietHandler):
    """Sends shard files' full Content-Length but only half their bytes, then hangs up."""

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.name.startswith(("texts-", "cluster-")):
            return super().do_GET()
        data = path.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


class _Tampering(QuietHandler):
    """Serves the first text shard with one byte changed (same length): not what its name says."""

    victim: str

    def do_GET(self):
        if not self.path.endswith(self.victim):
            return super().do_GET()
        data = bytearray(Path(self.translate_path(self.path)).read_bytes())
        data[len(data) // 2] ^= 0x01
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(bytes(data))


@pytest.mark.slow
@pytest.mark.parametrize("case", ["dies", "truncates", "tampers"])
def test_a_site_that_fails_partway_costs_one_line_and_no_wrong_vector(source, published, tmp_path, case):
    reference = vectors_of(published)
    first_texts = json.loads(IndexReader(published).script(IndexReader(published).manifest["dir"]))["texts"][0]
    handler, attrs = {"dies": (_Dying, {"alive": 4, "served": []}), "truncates": (_Truncating, {}),
                      "tampers": (_Tampering, {"victim": first_texts})}[case]
    with StaticServer(published, handler, **attrs) as server:
        out = tmp_path / "html"
        log = _sphinx(source, out, "-D", f"sphinx_rag_warm_start={server.url}", "-D", "sphinx_rag_query_encoder=model",
                      env=EMPTY)
    vectors, scales = vectors_of(out)
    assert np.array_equal(vectors, reference[0]) and np.array_equal(scales, reference[1])
    lines = _warm_lines(log)
    n = IndexReader(published).n_chunks
    reused = int(re.search(r"(\d+) of \d+ chunk vectors reused", log).group(1))
    assert reused + _embedded(log) == n  # what did not arrive whole was embedded
    if case == "tampers":  # the site sent wrong bytes: one warning (its readers are refused that shard too)
        (warning,) = [line for line in lines if "WARNING" in line]
        (report,) = [line for line in lines if line != warning]
        assert "WARNING" in warning and "[sphinx_rag.warm_start]" in warning
        assert ": 1 of " in warning and first_texts in warning and "refused" in warning
        assert reused == n - IndexReader(published).manifest["layout"]["texts_per_shard"]
    else:  # the site stopped answering: an info line (a -W build must not fail for it)
        (report,) = lines
        assert "WARNING" not in log
        assert "the site stopped answering after" in report and reused < n
    assert report.startswith("[sphinx-rag] warm start from")


def _served_copy(published: Path, root: Path, change) -> Path:
    """A copy of the published index whose manifest.json is ``change(text)``."""
    shutil.copytree(published / ASSET_DIR, root / ASSET_DIR)
    manifest = root / ASSET_DIR / "manifest.json"
    manifest.write_text(change(manifest.read_text()))
    return root


def _other_model(text: str) -> str:
    manifest = json.loads(text)
    manifest["model"]["model_id"] = "sentence-transformers/all-mpnet-base-v2"
    return json.dumps(manifest)


@pytest.mark.parametrize("case, change, expected, warning", [
    ("unreachable", None, r"skipped: cannot fetch http://127\.0\.0\.1:\d+/_static/sphinx_rag/index/manifest\.json "
                          r"\(.*refused\)", False),
    ("no index yet", lambda text: text, "skipped: it has no sphinx-rag index yet", False),
    ("another model", _other_model, "skipped: its vectors come from another model (model_id "
                                    "'sentence-transformers/all-mpnet-base-v2', here "
                                    "'sentence-transformers/all-MiniLM-L6-v2'); building", False),
    ("another format", lambda text: json.dumps({**json.loads(text), "format_version": 2}),
     "skipped: its index has format 2, this sphinx-rag writes 3", False),
    ("another chunker", lambda text: json.dumps({**json.loads(text), "settings": {
        **json.loads(text)["settings"], "chunker": 1}}), "skipped: its chunks come from chunker version 1", False),
    ("an HTML page", lambda text: "<!doctype html><title>Not found</title>", "it has no sphinx-rag index (", False),
    ("not JSON", lambda text: text[: len(text) // 2], "manifest.json is not JSON", True),
])
def test_a_site_that_cannot_be_used_costs_one_line_then_a_cold_build(published, source, tmp_path, case, change,
                                                                     expected, warning):
    root = tmp_path / "site"
    root.mkdir()
    if change is not None and case != "no index yet":
        _served_copy(published, root, change)
    with StaticServer(root) as server:
        url = f"http://127.0.0.1:{free_port()}/" if change is None else server.url
        out = tmp_path / "html"
        options = ["-D", f"sphinx_rag_warm_start={url}", "-D", "sphinx_rag_query_encoder=model"]
        log = _sphinx(source, out, *options, *([] if warning else ["-W"]))  # -W: an info line fails no build
    (line,) = _warm_lines(log)
    assert re.search(re.escape(expected) if case != "unreachable" else expected, line), line
    assert line.rstrip().endswith("building without it" + (" [sphinx_rag.warm_start]" if warning else ""))
    assert ("WARNING" in line) == warning
    vectors, scales = vectors_of(out)
    reference = vectors_of(published)
    assert np.array_equal(vectors, reference[0]) and np.array_equal(scales, reference[1])


@pytest.mark.slow
def test_the_environment_turns_it_off_or_names_the_site(published, source, tmp_path):
    requests: list[str] = []
    with StaticServer(published, LoggedHandler, requests=requests) as server:
        log = _sphinx(source, tmp_path / "off", "-D", f"sphinx_rag_warm_start={server.url}",
                      "-D", "sphinx_rag_query_encoder=model", env=COLD)
        assert requests == [] and not _warm_lines(log)
        log = _sphinx(source, tmp_path / "on", "-D", "sphinx_rag_query_encoder=model", env={ENV: server.url})
        assert requests and "warm start from " + server.url in _warm_lines(log)[0]
    # by default html_baseurl; "" turns it off; the environment wins
    assert site_url(None, "https://docs.example.org/", environ={}) == "https://docs.example.org/"
    assert site_url("", "https://docs.example.org/", environ={}) == ""
    assert site_url("https://a.org/", "", environ={ENV: "https://b.org/"}) == "https://b.org/"
    assert site_url("https://a.org/", "", environ={ENV: "1"}) == "https://a.org/"
    for off in ("0", "off", "false", "no", " NO "):
        assert site_url("https://a.org/", "https://b.org/", environ={ENV: off}) == ""
    with pytest.raises(ValueError, match=f"\\${ENV} = 'maybe' is neither 0"):
        site_url(None, "", environ={ENV: "maybe"})


def test_bad_settings_stop_the_build_in_one_line(source, tmp_path):
    for options, env, fragment in ((["-D", "sphinx_rag_warm_start=docs.example.org"], {},
                                    "sphinx_rag_warm_start must be the http(s) URL of the published docs"),
                                   ([], {ENV: "ftp://x"}, f"${ENV} = 'ftp://x' is neither 0")):
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", *options, str(source),
                               str(tmp_path / "out")], capture_output=True, text=True, env={**os.environ, **env})
        assert proc.returncode == 2 and fragment in proc.stderr, proc.stderr
        assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr, proc.stderr


# -- a site that serves what its hashes allow but its texts deny ---------------------------

def _rewritten_vectors(published: Path, root: Path, change) -> Path:
    """A copy of the published site whose cluster shards hold ``change(ids, vectors, scales)``'s
    vectors instead, under new hash names (the manifest and dense directory renamed too): every
    file still matches its name."""
    from sphinx_rag.search.dense import cluster_shard, read_cluster_shard
    from sphinx_rag.search.shards import binary_shard, dumps

    shutil.copytree(published, root)
    index = root / ASSET_DIR
    manifest = json.loads((index / "manifest.json").read_text())
    directory = json.loads((index / manifest["dense"]["directory"]).read_bytes())
    for entry in directory["clusters"]:
        cluster = read_cluster_shard((index / entry[0]).read_bytes(), manifest["counts"]["dim"])
        vectors, scales = change(cluster.ids, cluster.vectors.copy(), cluster.scales.copy())
        data = cluster_shard(cluster.ids, vectors, scales)
        (index / entry[0]).unlink()
        entry[0] = binary_shard("cluster", data)
        (index / entry[0]).write_bytes(data)
    data = dumps(directory)
    (index / manifest["dense"]["directory"]).unlink()
    manifest["dense"]["directory"] = binary_shard("ddir", data)
    (index / manifest["dense"]["directory"]).write_bytes(data)
    (index / "manifest.json").write_text(json.dumps(manifest))
    return root


def _swapped(ids, vectors, scales):
    """Every chunk's vector moved to the next chunk (a rotation: each vector is real, none is its own)."""
    return np.roll(vectors, 1, axis=0), np.roll(scales, 1)


def _garbage(ids, vectors, scales):
    rng = np.random.default_rng(0)
    return rng.integers(-127, 128, vectors.shape, dtype=np.int8), scales


@pytest.mark.slow
@pytest.mark.parametrize("change", [_swapped, _garbage])
def test_vectors_that_do_not_belong_to_their_texts_are_refused(source, published, tmp_path, change):
    """Shard hashes prove bytes, not that a vector is its text's: the sample re-embedded here
    catches vectors swapped between chunks, or garbage, and the build goes cold (one warning),
    writing what a cold build writes."""
    site = _rewritten_vectors(published, tmp_path / "site", change)
    with StaticServer(site) as server:
        log = _sphinx(source, tmp_path / "html", "-D", f"sphinx_rag_warm_start={server.url}", env=EMPTY)
    lines = [line for line in log.splitlines() if "refused" in line]
    assert len(lines) == 1 and "sampled chunk vectors are not what this model gives their texts" in lines[0], log[-3000:]
    assert "chunk vectors reused" not in log
    assert index_files(tmp_path / "html") == index_files(published)  # the cold build's bytes


@pytest.mark.slow
def test_an_encoder_of_random_bytes_under_the_sites_digest_is_fitted_again(source, published, tmp_path):
    """The manifest names the digest of this very corpus, the file under it is random bytes
    (hash-named as the manifest says): it is not reused, the encoder is fitted here."""
    from sphinx_rag.search.shards import binary_shard

    site = tmp_path / "site"
    shutil.copytree(published, site)
    index = site / ASSET_DIR
    manifest = json.loads((index / "manifest.json").read_text())
    original = (index / manifest["encoder"]["file"]).read_bytes()
    data = np.random.default_rng(1).integers(0, 256, len(original), dtype=np.uint8).tobytes()
    (index / manifest["encoder"]["file"]).unlink()
    manifest["encoder"]["file"] = binary_shard("encoder", data)
    (index / manifest["encoder"]["file"]).write_bytes(data)
    (index / "manifest.json").write_text(json.dumps(manifest))
    with StaticServer(site) as server:
        log = _sphinx(source, tmp_path / "html", "-D", f"sphinx_rag_warm_start={server.url}", env=EMPTY)
    assert "the published static query encoder is not reused (its file is not a static encoder)" in log, log[-3000:]
    out = json.loads((tmp_path / "html" / ASSET_DIR / "manifest.json").read_text())
    assert out["encoder"]["file"] == json.loads((published / ASSET_DIR / "manifest.json").read_text())["encoder"]["file"]


@pytest.mark.slow
def test_another_sites_encoder_weights_under_this_corpus_digest_are_fitted_again(source, published, tmp_path):
    """A well-formed encoder with this corpus's rows and projection but weights that point
    elsewhere (another fit's, scrambled): the sample shows it is farther from the model than
    the query table alone, so it is fitted again."""
    from sphinx_rag.search.shards import binary_shard
    from sphinx_rag.search.static_encoder import StaticEncoder

    site = tmp_path / "site"
    shutil.copytree(published, site)
    index = site / ASSET_DIR
    manifest = json.loads((index / "manifest.json").read_text())
    encoder = StaticEncoder.from_bytes((index / manifest["encoder"]["file"]).read_bytes())
    rows = np.random.default_rng(2).permutation(len(encoder.weights) - 1)
    encoder.weights = np.vstack([encoder.weights[:-1][rows], encoder.weights[-1:]])
    encoder.row_scales = np.concatenate([encoder.row_scales[:-1][rows], encoder.row_scales[-1:]])
    data = encoder.to_bytes()
    (index / manifest["encoder"]["file"]).unlink()
    manifest["encoder"]["file"] = binary_shard("encoder", data)
    (index / manifest["encoder"]["file"]).write_bytes(data)
    (index / "manifest.json").write_text(json.dumps(manifest))
    with StaticServer(site) as server:
        log = _sphinx(source, tmp_path / "html", "-D", f"sphinx_rag_warm_start={server.url}", env=EMPTY)
    assert "the published static query encoder is not reused (on 64 sampled pseudo-queries it is farther" in log, \
        log[-3000:]
    out = json.loads((tmp_path / "html" / ASSET_DIR / "manifest.json").read_text())
    assert out["encoder"]["file"] == json.loads((published / ASSET_DIR / "manifest.json").read_text())["encoder"]["file"]
