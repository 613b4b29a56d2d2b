"""The static index (format 2): content-named shards, determinism, atomic replacement."""

import collections
import gc
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sphinx_rag.search import shards
from sphinx_rag.index.write import write_assets
from sphinx_rag.search.index import ASSET_DIR, FORMAT_VERSION, IndexDamaged, IndexReader, Layout
from sphinx_rag.search.bm25 import build_index
from sphinx_rag.chunk import CHUNKER_VERSION
from sphinx_rag.model.embed import quantize_vectors

from site_helpers import DEMO, build_site, chunks_of

ROOTS = Path(__file__).parent / "roots"


def _files(html: Path) -> dict[str, bytes]:
    root = html / ASSET_DIR
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_file_is_named_by_its_content(demo_html):
    root = demo_html / ASSET_DIR
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["model"]["dim"] == 384 and manifest["model"]["max_seq_length"] == 256
    reader = IndexReader(demo_html)
    for name, data in _files(demo_html).items():
        assert (root / name).stat().st_mode & 0o044 == 0o044, name  # readable by a web server
        if name.endswith(".js") and not name.startswith("manifest"):
            reader.script(name)  # raises unless the payload hashes to the name
        elif name.endswith(".bin"):
            assert shards.binary_shard(name.split("-")[0], data) == name
    model = manifest["model_files"]
    reader.verify_model()
    assert sorted(model["files"]) == ["model.onnx", "model_info.json", "tokenizer.json", "vocab.txt"]
    assert set(_files(demo_html)) == {"manifest.json", "manifest.js", *reader.directory_names(),
                                      *(f"{model['dir']}/{n}" for n in model["files"])}


def test_records_vectors_and_postings_round_trip(demo_html):
    reader = IndexReader(demo_html)
    records = chunks_of(demo_html)
    assert len(records) == reader.n_chunks and records[0]["id"].startswith(records[0]["doc"] + "#")
    assert {r["kind"] for r in records} == {"api", "example", "guide"}
    sizes = reader.cluster_sizes
    assert sizes == [reader.n_chunks]  # a small site: one cluster, exact dense search
    cluster = reader.cluster(0)
    assert cluster.ids.tolist() == list(range(reader.n_chunks))
    norms = np.linalg.norm(cluster.vectors.astype(np.float64) * cluster.scales[:, None], axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=0.01)  # normalized vectors survive int8
    postings = reader.postings("imputer")
    assert postings is not None and postings.df == len(postings.docs) > 5
    assert all("imputer" in records[d]["text"].lower() for d in postings.docs.tolist())
    assert reader.postings("no-such-term") is None


@pytest.mark.slow
def test_rebuild_in_parallel_is_byte_identical(demo_html, tmp_path):
    again = build_site(DEMO, tmp_path / "html", "-j", "2", "-d", str(tmp_path / "doctrees"))
    assert _files(demo_html) == _files(again)


def test_int8_vectors_keep_the_direction():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(20, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q, s = quantize_vectors(v)
    approx = q.astype(np.float32) * s[:, None]
    cos = (approx * v).sum(1) / np.linalg.norm(approx, axis=1)
    assert cos.min() > 0.9999


def _records(n: int, text=lambda i: f"chunk number {i} about topic{i % 7}") -> list[dict]:
    return [{"id": f"p{i // 10}#a:{i % 10}", "doc": f"p{i // 10}", "url": f"p{i // 10}.html#a", "headings": ["P"],
             "kind": "guide", "text": text(i), "display": [["p", text(i)]], "weight": 1.0 if i % 10 else 0.5} for i in range(n)]


SMALL = Layout(texts_per_shard=8, term_shard_bytes=200)


def _write(out: Path, records: list[dict], layout=SMALL):
    bm25 = build_index([r["text"].split() for r in records])
    return write_assets(out, chunks=records, bm25=bm25, vectors_i8=None, scales=None, model_dir=None,
                        model_info=None, settings={}, layout=layout)


def test_a_rebuild_writes_only_the_shards_that_changed(tmp_path):
    out = tmp_path / "index"
    records = _records(40)
    _write(out, records)
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    records[35]["text"] = records[35]["text"].replace("number", "numero")  # same length: BM25 stats unchanged
    _write(out, records)
    after = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    new = sorted(set(after) - set(before))
    # the edited chunk's text shard, the shards of the terms "number"/"numero", the
    # vocabulary's near shard and the directory that names them; nothing else is written
    kinds = [n.split("-")[0] for n in new]
    assert set(kinds) == {"dir", "near", "terms", "texts"} and kinds.count("texts") == 1, new
    assert kinds.count("terms") <= 2, new  # content-defined cuts: other term shards keep their names
    assert all(after[n] == before[n] for n in after if n in before and not n.startswith("manifest."))
    gone = set(before) - set(after)
    assert {n.split("-")[0] for n in gone} == {"dir", "near", "terms", "texts"}  # removed after the switch


def test_a_failed_write_keeps_the_previous_index(tmp_path, monkeypatch):
    """Disk full while writing shards: the old manifest and every file it names stay."""
    out = tmp_path / "index"
    _write(out, _records(40))
    old = _files_flat(out)
    from sphinx_rag.index import write as assets

    real = assets._write_file
    calls = []

    def failing(path, data):
        calls.append(path.name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(path, data)

    monkeypatch.setattr(assets, "_write_file", failing)
    with pytest.raises(OSError):
        _write(out, _records(40, text=lambda i: f"all new text {i}"))
    leftovers = _files_flat(out)
    assert {k: v for k, v in leftovers.items() if k in old} == old  # nothing of the old index changed
    assert not [n for n in leftovers if n.startswith(".tmp-")]  # no temporary file left behind
    reader = IndexReader(out)
    assert [reader.chunk(i)["text"] for i in (0, 39)] == ["chunk number 0 about topic0", "chunk number 39 about topic4"]


def _files_flat(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}


def test_damaged_shards_are_named_in_one_line(tmp_path):
    out = tmp_path / "index"
    _write(out, _records(40))
    reader = IndexReader(out)
    victim = reader.directory["texts"][1]
    data = (out / victim).read_bytes()
    (out / victim).write_bytes(data[:-40] + b'");\n')  # truncated
    with pytest.raises(IndexDamaged, match=rf"{victim}.*rebuild the docs"):
        IndexReader(out).chunk(10)
    (out / victim).unlink()
    with pytest.raises(IndexDamaged, match=rf"{victim} is missing.*rebuild the docs"):
        IndexReader(out).chunk(10)
    (out / "manifest.json").write_text("{not json")
    with pytest.raises(IndexDamaged, match="manifest.json is unreadable"):
        IndexReader(out)
    (out / "manifest.json").write_text(json.dumps({"format_version": FORMAT_VERSION - 1}))
    with pytest.raises(IndexDamaged, match=f"format {FORMAT_VERSION - 1} .* is not {FORMAT_VERSION}"):
        IndexReader(out)


def test_weights_and_heads(tmp_path):
    out = tmp_path / "index"
    records = _records(40, text=lambda i: "common " * (1 + i % 3) + f"rare{i}")
    _write(out, records, Layout(texts_per_shard=8, head_postings=10))
    reader = IndexReader(out)
    assert reader.weights.tolist() == [0.5 if i % 10 == 0 else 1.0 for i in range(40)]
    common = reader.postings("common")
    assert common.df == 40 and common.docs.tolist() == list(range(40))  # head and tail: coverage is exact
    exact = build_index([r["text"].split() for r in records]).postings("common")
    best = np.argsort(-exact.impacts, kind="stable")[:10]
    head = np.isin(exact.docs, exact.docs[best])
    # the 10 highest impacts as bytes, the other 30 as levels (3 term frequencies among
    # them: 3 distinct impacts, each its own level, exact up to float32)
    np.testing.assert_allclose(common.impacts[head], exact.impacts[head], rtol=0.01)
    tail = exact.impacts[~head]
    assert len(set(tail.tolist())) == 3 and len(set(common.impacts[~head].tolist())) == 3
    np.testing.assert_allclose(common.impacts[~head], tail, rtol=1e-6)
    assert common.impacts[~head].max() <= common.impacts[head].min() * 1.01  # ties may fall either side


def test_cluster_map_and_guided_probe(tmp_path):
    """Each chunk's cluster is in the map shards; the rrf probe reads the clusters of the
    best keyword hits first, within the same budget of vectors."""
    from sphinx_rag.search.retrieve import Searcher

    records = _records(300, text=lambda i: f"chunk {i} about topic{i % 7} word{i}")
    vectors, scales = quantize_vectors(np.random.default_rng(0).standard_normal((300, 16)).astype(np.float32))
    layout = Layout(exact_up_to=50, cluster_size=20, probe=60, guide_hits=5, guide_clusters=2, cluster_map_chunks=64)
    out = tmp_path / "index"
    write_assets(out, chunks=records, bm25=build_index([r["text"].split() for r in records]), vectors_i8=vectors,
                 scales=scales, model_dir=None, model_info=None, settings={}, layout=layout)
    # a keyword query reads the directory and its own shards, nothing of the dense tier
    keyword = Searcher(out, fusion="bm25")
    read: list[str] = []
    binary, script = keyword.index.binary, keyword.index.script
    keyword.index.binary = lambda name: read.append(name) or binary(name)
    keyword.index.script = lambda name: read.append(name) or script(name)
    assert keyword.search("topic3 word10", k=3)
    assert read and not [n for n in read if n.split("-")[0] in ("ddir", "centroids", "cluster", "cmap")]
    assert "clusters" not in keyword.index.directory and "cluster_map" not in keyword.index.directory
    reader = IndexReader(out)
    assert len(reader.dense_directory["cluster_map"]) == 5  # 300 chunks, 64 per shard
    holder = {int(i): c for c in range(len(reader.cluster_sizes)) for i in reader.cluster(c).ids}
    assert [reader.cluster_of(i) for i in range(300)] == [holder[i] for i in range(300)]

    s = Searcher(out, fusion="rrf")
    hits = [299, 298, 0, 150]
    first = s.guided_clusters(hits)
    assert first == list(dict.fromkeys(holder[i] for i in hits))[:2]
    query = vectors[10].astype(np.float32) * scales[10]
    scored = np.flatnonzero(s.dense_scores("", query, hits))
    assert {holder[i] for i in hits[:2]} <= {holder[int(i)] for i in scored}  # the hits' clusters are read
    covered = sum(reader.cluster_sizes[c] for c in {holder[int(i)] for i in scored})
    assert covered == len(scored) and covered - max(reader.cluster_sizes) < 60  # the same budget
    # guided clusters never take the probe past its budget: a cluster that would is skipped
    tight = Searcher(out, fusion="rrf", probe=reader.cluster_sizes[holder[299]])
    assert tight.guided_clusters(hits) == [holder[299]]
    assert len(np.flatnonzero(tight.dense_scores("", query, hits))) == reader.cluster_sizes[holder[299]]


@pytest.mark.slow
def test_incremental_build_keeps_unchanged_pages(tmp_path):
    """Pages Sphinx does not rewrite keep their chunks from the previous index."""
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    out = tmp_path / "html"

    def build():
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(out)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return {c["id"]: c["text"] for c in chunks_of(out)}

    first = build()
    guide = src / "guide.rst"
    guide.write_text(guide.read_text().replace("short introduction paragraph", "brand new opening paragraph"))
    second = build()
    assert second["guide#user-guide:0"].endswith("The guide starts with a brand new opening paragraph.")
    unchanged = {k: v for k, v in first.items() if not k.startswith("guide#")}
    assert unchanged and all(second[k] == v for k, v in unchanged.items())  # changelog, index kept
    assert set(second) == set(first)


def _clustered_site(tmp_path, monkeypatch):
    """The narrative test root with embeddings and enough chunks that one page is under 5%,
    given a small layout (many clusters and shards); and a function that builds it in this process."""
    from sphinx.cmd.build import build_main

    import sphinx_rag.index.build

    monkeypatch.setattr(sphinx_rag.index.build, "LAYOUT", Layout(exact_up_to=32, cluster_size=16, texts_per_shard=8,
                                                           term_shard_bytes=1000))
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    conf = (src / "conf.py").read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True")
    (src / "conf.py").write_text(conf + '\nsphinx_rag_query_encoder = "model"\n')
    (src / "topics.rst").write_text("Topics\n======\n\n" + "\n\n".join(
        f"Topic {i}\n{'-' * (6 + len(str(i)))}\n\n{['The solver', 'A plot', 'The reader'][i % 3]} handles case {i} "
        f"of the {['input', 'figure', 'file'][i % 3]}." for i in range(150)))
    (src / "index.rst").write_text((src / "index.rst").read_text().replace("   guide\n", "   guide\n   topics\n"))

    def build(out, *options):
        assert build_main(["-b", "html", "-q", "-d", str(out.parent / f"{out.name}-doctrees"), *options,
                           str(src), str(out)]) == 0
        return json.loads((out / ASSET_DIR / "manifest.json").read_text())

    return src, build


@pytest.mark.slow
def test_an_incremental_build_keeps_the_clusters_until_enough_has_changed(tmp_path, monkeypatch):
    """A one-page edit assigns the chunks to the stored centroids (no k-means: 1.5 s of an
    edit at 25k chunks) and counts the chunks changed since; a build with nothing to do
    keeps the index without re-indexing (unless a file of it is gone); a build that writes
    every page clusters again, as a clean build does.
    Real builds (in this process, to give the site a small layout: many clusters)."""
    import sphinx_rag.index.build
    import sphinx_rag.index_step

    src, build = _clustered_site(tmp_path, monkeypatch)

    def clusters(out) -> list[list[int]]:
        reader = IndexReader(out)
        return [reader.cluster(c).ids.tolist() for c in range(len(reader.cluster_sizes))]

    out = tmp_path / "html"
    first = build(out)
    assert first["counts"]["clusters"] > 4 and "stale_chunks" not in first["dense"]
    guide = src / "guide.rst"
    guide.write_text(guide.read_text().replace("short introduction paragraph", "brand new opening paragraph"))
    edited = build(out)
    assert 0 < edited["dense"]["stale_chunks"] <= sphinx_rag.index.build.REFIT_SHARE * edited["counts"]["chunks"]
    assert edited["dense"]["centroids"] == first["dense"]["centroids"]
    reader = IndexReader(out)
    centroids, scales = reader.centroids()
    for c, ids in enumerate(clusters(out)):  # every chunk with the stored centroid nearest to it
        cluster = reader.cluster(c)
        x = cluster.vectors.astype(np.float64) * cluster.scales[:, None]
        assert (np.argmax(x @ (centroids.astype(np.float64) * scales[:, None]).T, axis=1) == c).all(), ids
    files = _files(out)

    def not_called(*args, **kwargs):
        raise AssertionError("a build that writes no page re-indexed the site")

    with monkeypatch.context() as m:  # nothing to do: the index is kept as it is, without re-indexing
        m.setattr(sphinx_rag.index_step, "write_index", not_called)
        assert build(out) == edited and _files(out) == files
    lost = next((out / ASSET_DIR).glob("cluster-*.bin"))
    lost.unlink()  # ... unless a file of it is gone: then it is written again
    assert build(out) == edited and _files(out) == files
    refitted = build(out, "-E")
    assert "stale_chunks" not in refitted["dense"]
    clean = build(tmp_path / "clean")  # nothing left by a previous build: the same index
    assert (clean["dense"], clean["dir"], clean["near"]) == (refitted["dense"], refitted["dir"], refitted["near"])
    assert gc.isenabled()  # off only while the index is read and written


def test_an_edit_built_from_what_the_last_build_left_equals_one_built_from_the_shards(tmp_path, monkeypatch):
    """The carry file (records, tokens, vectors, shards by payload) is exactly the index it
    was left with, so an incremental build from it writes the same index as one that reads
    the shards and tokenizes everything; and it compresses only the shards that changed."""
    from sphinx_rag.index import carry
    from sphinx_rag.index import write as assets
    from sphinx_rag.search.index import load_chunk_records
    from sphinx_rag.search.bm25 import document_tokens

    src, build = _clustered_site(tmp_path, monkeypatch)
    out, work = tmp_path / "html", tmp_path / "html-doctrees"
    first = build(out)
    carried = carry.load(work, out / ASSET_DIR)
    assert carried.records == load_chunk_records(out / ASSET_DIR)
    assert carried.tokens == [document_tokens(r["text"]) for r in carried.records]
    reader = IndexReader(out)
    for c in range(len(reader.cluster_sizes)):
        cluster = reader.cluster(c)
        assert (carried.vectors[cluster.ids] == cluster.vectors).all()
        assert (carried.scales[cluster.ids] == cluster.scales).all()
    assert len(carried.shards) == sum(1 for f in (out / ASSET_DIR).glob("*.js") if f.name != "manifest.js")

    compressed = collections.Counter()
    real = assets.script_shards

    def counting(kind, payloads):
        compressed[kind] += len(payloads)
        return real(kind, payloads)

    guide = src / "guide.rst"
    original = guide.read_text()
    with monkeypatch.context() as m:
        m.setattr(assets, "script_shards", counting)
        guide.write_text(original.replace("short introduction paragraph", "brand new opening paragraph"))
        from_carry = build(out)
    texts = len(IndexReader(out).directory["texts"])
    assert texts > 10 and compressed["texts"] == 1  # the edited page's shard, and no other
    guide.write_text(original)
    build(out)
    (work / carry.CARRY_FILE).unlink()
    guide.write_text(original.replace("short introduction paragraph", "brand new opening paragraph"))
    from_shards = build(out)
    from_carry["dense"].pop("stale_chunks"), from_shards["dense"].pop("stale_chunks")  # counts the edits since
    assert from_shards == from_carry and from_carry["dir"] != first["dir"]


def test_what_a_build_leaves_is_read_back_only_for_its_own_index(tmp_path):
    """The carry file holds what the index step computed, and it is used only while the
    index it was left with is the one published: another manifest or a torn file give None."""
    from sphinx_rag.index import carry

    out = tmp_path / "index"
    out.mkdir()
    manifest = b'{"format_version": 2}'
    (out / "manifest.json").write_bytes(manifest)
    records = [{"id": "p#:0", "doc": "p", "text": "Ridge regression", "kind": "guide", "weight": 1.0}]
    vectors, scales = np.array([[3, -127, 5]], dtype=np.int8), np.array([0.25], dtype=np.float32)
    shards = {"texts:" + "0" * 64: ("texts-0123456789abcdef.js", 120)}
    carry.save(tmp_path, manifest, records, [["ridg", "regress"]], {"dim": 3}, vectors, scales, shards)
    carried = carry.load(tmp_path, out)
    assert (carried.records, carried.tokens, carried.model, carried.shards) == (
        records, [["ridg", "regress"]], {"dim": 3}, shards)
    assert carried.vectors.tolist() == vectors.tolist() and carried.scales.tolist() == scales.tolist()
    assert carried.tokens_by_text() == {"Ridge regression": ["ridg", "regress"]}
    (out / "manifest.json").write_bytes(manifest + b" ")  # another index was published since
    assert carry.load(tmp_path, out) is None
    (out / "manifest.json").write_bytes(manifest)
    path = tmp_path / carry.CARRY_FILE
    path.write_bytes(path.read_bytes()[:-10])  # torn
    assert carry.load(tmp_path, out) is None
    carry.save(tmp_path, manifest, records, [["ridg", "regress"]], None, None, None, {})  # keyword only
    assert carry.load(tmp_path, out).vectors is None


def test_keyword_only_build_needs_no_model_export(tmp_path):
    """sphinx_rag_embeddings = False: the tokenizer comes from the model source, nothing is exported."""
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    out = tmp_path / "html"
    src = ROOTS / "test-narrative"  # sets sphinx_rag_embeddings = False
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "-d", str(tmp_path / "dt"),
                           str(src), str(out)], capture_output=True, text=True,
                          env=dict(os.environ, SPHINX_RAG_CACHE=str(cache)))
    assert proc.returncode == 0, proc.stderr
    assert list(cache.iterdir()) == []  # no export, so no torch needed
    manifest = json.loads((out / ASSET_DIR / "manifest.json").read_text())
    assert manifest["model"] is None and manifest["dense"] is None and manifest["model_files"] is None
    assert manifest["counts"]["chunks"] > 0
    assert not any(p.name.startswith(("cluster-", "centroids-", "model-")) for p in (out / ASSET_DIR).iterdir())


def _sphinx(src: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(out), *extra],
                          capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["writing pages", "embedding chunks"])
def test_a_killed_build_is_redone_by_the_next(tmp_path, stage):
    """Sphinx marks pages done as it writes them; a build killed (SIGKILL) while writing
    pages or while embedding must not leave the next build publishing old chunks."""
    import signal
    import time

    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    with open(src / "conf.py", "a") as f:  # the model export is cached by the setup
        f.write("\nsphinx_rag_embeddings = True\nsphinx_rag_embed_batch_size = 1\n")
    # enough to embed that the kill lands inside the embedding step, even on a fast machine
    (src / "long.rst").write_text("Long page\n=========\n\n" + "\n\n".join(
        f"Paragraph {i} explains option number {i} of the estimator in its own words." for i in range(300)))
    (src / "index.rst").write_text((src / "index.rst").read_text().replace("   guide\n", "   guide\n   long\n"))
    out, doctrees = tmp_path / "html", tmp_path / "doctrees"
    env = dict(os.environ, SPHINX_RAG_EMBED_CACHE="0", PYTHONUNBUFFERED="1")  # embed every time, print at once
    assert _sphinx(src, out, "-d", str(doctrees)).returncode == 0
    guide = src / "guide.rst"
    guide.write_text(guide.read_text().replace("short introduction paragraph", "brand new opening paragraph"))
    marker = doctrees / "sphinx_rag.pending"
    proc = subprocess.Popen([sys.executable, "-m", "sphinx", "-b", "html", "-d", str(doctrees), str(src), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    if stage == "writing pages":
        deadline = time.monotonic() + 120
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
    else:
        for line in proc.stdout:  # "[sphinx-rag] 0 of N chunk vectors ...; embedding N new chunk texts"
            if "new chunk texts" in line:  # printed as the embedding starts (the bar itself may
                break  # redraw one line without newlines, as it does under CI)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    assert marker.exists()
    again = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-d", str(doctrees), str(src),
                            str(out)], capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert "the previous build stopped before its search index was written" in again.stderr
    assert not marker.exists()
    texts = {c["id"]: c["text"] for c in chunks_of(out)}
    assert texts["guide#user-guide:0"].endswith("The guide starts with a brand new opening paragraph.")
    fresh = tmp_path / "fresh"
    assert _sphinx(src, fresh, "-E", "-d", str(tmp_path / "dt2")).returncode == 0
    assert _files(out) == _files(fresh)  # the same index, byte for byte, as a clean build's


def test_disk_full_at_any_write_keeps_the_previous_index(tmp_path, monkeypatch):
    """A write that fails (ENOSPC) at each of the index's files in turn: the previous
    index stays whole and readable, no temporary file is left, the next build works."""
    from sphinx_rag.index import write as assets

    pristine = tmp_path / "pristine"
    _write(pristine, _records(40))
    old = _files_flat(pristine)
    new_records = _records(40, text=lambda i: f"all new text {i}")
    real = assets._write_file
    writes = []
    monkeypatch.setattr(assets, "_write_file", lambda path, data: (writes.append(path.name), real(path, data)))
    shutil.copytree(pristine, tmp_path / "count")
    _write(tmp_path / "count", new_records)  # shards whose content did not change are not written again
    n_writes = len(writes)
    assert n_writes >= 10
    for fail_at in range(1, n_writes + 1):
        out = tmp_path / f"index-{fail_at}"
        shutil.copytree(pristine, out)
        calls = []

        def failing(path, data, fail_at=fail_at, calls=calls):
            calls.append(path.name)
            if len(calls) == fail_at:
                raise OSError(28, "No space left on device")
            real(path, data)

        monkeypatch.setattr(assets, "_write_file", failing)
        with pytest.raises(OSError):
            _write(out, new_records)
        leftovers = _files_flat(out)
        assert not [n for n in leftovers if n.startswith(".tmp-")], fail_at
        if calls[-1] != "manifest.js":  # up to the switch: the old index, untouched
            assert {k: v for k, v in leftovers.items() if k in old} == old, fail_at
            assert IndexReader(out).chunk(39)["text"] == "chunk number 39 about topic4"
        else:  # after it: the new index is live; file:// readers still have the old, whole
            assert IndexReader(out).chunk(39)["text"] == "all new text 39"
            assert leftovers["manifest.js"] == old["manifest.js"]
            assert all(name in leftovers for name in old)
    monkeypatch.setattr(assets, "_write_file", real)
    _write(out, new_records)
    assert IndexReader(out).chunk(39)["text"] == "all new text 39"


@pytest.mark.parametrize("kind", ["manifest", "dir", "terms", "near", "texts", "centroids", "cluster", "model"])
def test_each_damaged_file_is_named(demo_html, tmp_path, kind):
    """Truncate one file of each kind: the search stops with one line naming it."""
    from sphinx_rag.search.retrieve import Searcher

    copy = tmp_path / "index"
    shutil.copytree(demo_html / ASSET_DIR, copy, symlinks=False)
    reader = IndexReader(copy)
    if kind == "manifest":
        victims = [copy / "manifest.json"]
    elif kind == "model":
        victims = [reader.model_dir / "model.onnx"]
    else:  # every file of the kind: whichever the query reads is damaged
        victims = [copy / n for n in reader.directory_names() if n.startswith(kind + "-")]
    for victim in victims:
        victim.write_bytes(victim.read_bytes()[: len(victim.read_bytes()) // 2])
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1
    with pytest.raises(IndexDamaged) as info:
        searcher = Searcher(copy)
        searcher.search("imputation strategy mean", k=5, vector=vector if kind != "model" else None)
        searcher.search("imputashun strategee", k=5, vector=vector)  # a typo reads the near shards
    message = str(info.value)
    assert any(v.name in message for v in victims) and "rebuild the docs" in message and "\n" not in message


@pytest.mark.slow
def test_a_damaged_previous_index_is_not_merged(tmp_path):
    """Damaged text shards are never read into the next index: without the carry file the
    build says so and re-chunks; with it (the records as written) the build needs none of
    them, and writes the damaged shards again."""
    from sphinx_rag.index import carry

    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    out, doctrees = tmp_path / "html", tmp_path / "doctrees"
    assert _sphinx(src, out, "-d", str(doctrees)).returncode == 0
    before = {c["id"]: c["text"] for c in chunks_of(out)}
    guide = src / "guide.rst"
    for left_carry in (False, True):
        for shard in (out / ASSET_DIR).glob("texts-*.js"):
            shard.write_text(shard.read_text()[:50])  # truncated
        if not left_carry:
            (doctrees / carry.CARRY_FILE).unlink()
        guide.write_text(guide.read_text() + "\nOne more paragraph at the end.\n")
        proc = _sphinx(src, out, "-d", str(doctrees))
        assert proc.returncode == 0, proc.stderr
        assert ("the previous search index cannot be reused" in proc.stderr) == (not left_carry)
        assert ("re-chunking" in proc.stderr) == (not left_carry)
        after = {c["id"]: c["text"] for c in chunks_of(out)}  # every shard verifies
        assert set(after) >= set(before) and all(after[k] == v for k, v in before.items() if not k.startswith("guide#"))


def test_cli_names_a_damaged_index_in_one_line(demo_html, tmp_path):
    copy = tmp_path / "html"
    shutil.copytree(demo_html / ASSET_DIR, copy / ASSET_DIR)
    for shard in (copy / ASSET_DIR).glob("terms-*.js"):
        shard.write_text(shard.read_text()[:-20] + '");\n')
    proc = subprocess.run([sys.executable, "-m", "sphinx_rag", "search", str(copy), "imputer strategy", "--fusion",
                           "bm25"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "terms-" in proc.stderr and "rebuild the docs" in proc.stderr


@pytest.mark.slow
def test_switching_embeddings_off_removes_the_vectors_and_model(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    conf = (src / "conf.py").read_text()
    (src / "conf.py").write_text(conf.replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True"))
    out = tmp_path / "html"
    assert _sphinx(src, out, "-d", str(tmp_path / "dt")).returncode == 0
    kinds = {p.name.split("-")[0] for p in (out / ASSET_DIR).iterdir()}
    assert {"cluster", "centroids", "model"} <= kinds
    (src / "conf.py").write_text(conf)  # embeddings off again
    assert _sphinx(src, out, "-d", str(tmp_path / "dt")).returncode == 0
    kinds = {p.name.split("-")[0] for p in (out / ASSET_DIR).iterdir()}
    assert not {"cluster", "centroids", "model"} & kinds
    assert json.loads((out / ASSET_DIR / "manifest.json").read_text())["dense"] is None


@pytest.mark.slow
def test_an_index_chunked_by_another_chunker_is_rechunked_without_a_warning(tmp_path):
    """A new sphinx-rag that chunks differently (object cards, say) re-chunks the pages an
    incremental build did not write, and says so as information: -W builds keep passing."""
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    out, doctrees = tmp_path / "html", tmp_path / "doctrees"
    assert _sphinx(src, out, "-d", str(doctrees)).returncode == 0
    manifest_path = out / ASSET_DIR / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    assert manifest["settings"]["chunker"] == CHUNKER_VERSION
    del manifest["settings"]["chunker"]  # as an index of sphinx-rag before the chunker had a version
    manifest_path.write_text(json.dumps(manifest))
    guide = src / "guide.rst"
    guide.write_text(guide.read_text() + "\nOne more paragraph at the end.\n")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", str(src), str(out), "-d", str(doctrees)],
                          capture_output=True, text=True)  # not quiet: the message is information
    assert proc.returncode == 0, proc.stderr
    message = re.search(r"chunked by another version of the chunker \(1, now (\d+)\)\): re-chunking (\d+) pages",
                        proc.stdout)
    assert message and int(message[1]) == CHUNKER_VERSION and int(message[2]) > 0
    assert "cannot be reused" not in proc.stderr
