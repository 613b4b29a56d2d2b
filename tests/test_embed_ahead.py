"""Chunks embedded while Sphinx reads and writes pages (``embed_ahead.py``, issue 26).

What must hold: the vectors made ahead are the ones the index step would make (so the
published bytes do not depend on it), texts already cached are not embedded again, a
parallel build and a build whose published site offers the vectors embed nothing ahead.
The builds below let the worker finish at ``build-finished`` (a ``setup`` in their
conf.py, run before sphinx_rag's handler), so what they check does not depend on the
machine's speed.
"""

from __future__ import annotations

import filecmp
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from site_helpers import QuietHandler, StaticServer

from sphinx_rag.model import cache as models
from sphinx_rag.model import source as model_source
from sphinx_rag.model.embed import EmbeddingCache, Embedder, quantize_vectors
from sphinx_rag.index.embed_ahead import SLICE, EmbedAhead

TEXTS = [f"Option {i} sets how the solver treats case {i} of the input: {'long ' * (i % 40)}words."
         for i in range(70)]

#: Lets the worker finish before the index step stops it: everything queued is embedded.
DRAIN = '''
def setup(app):
    def drain(app, exception):
        ahead = getattr(app, "sphinx_rag", None) and app.sphinx_rag.ahead
        if ahead is not None:
            print(f"the worker made {len(ahead.stop(finish=True))} vectors")
    app.connect("build-finished", drain, priority=400)
'''

AHEAD = re.compile(r"chunk vectors from the embedding cache, (\d+) embedded while the pages were read and written")
EMBEDDED = re.compile(r"of (\d+) chunk vectors from the embedding cache.*?; embedding (\d+) new chunk texts")


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return models.cached_model_dir(model_source.DEFAULT_MODEL)


@pytest.mark.parametrize("threads", [1, 3])  # 3: a 4-core runner's worker (Sphinx keeps one core)
def test_the_worker_makes_the_vectors_the_index_step_would(model_dir, threads):
    ahead = EmbedAhead(model_dir, threads=threads)
    for start in range(0, len(TEXTS), 9):  # pages of different sizes, one text twice
        ahead.add(TEXTS[start:start + 9] + TEXTS[:1])
    done = ahead.stop(finish=True)
    assert ahead.error == ""
    q, s = quantize_vectors(Embedder(model_dir, threads=2).embed(TEXTS))  # the index step's session
    assert sorted(done) == sorted(EmbeddingCache.key(t) for t in TEXTS)
    for i, text in enumerate(TEXTS):
        vector, scale = done[EmbeddingCache.key(text)]
        assert vector == q[i].tobytes() and scale == float(s[i])


def test_cached_texts_are_not_embedded_again_and_a_stop_waits_for_nothing(model_dir, tmp_path):
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    cache.put([(EmbeddingCache.key(t), b"\0" * 384, 1.0) for t in TEXTS[:50]])
    ahead = EmbedAhead(model_dir, cache_path=tmp_path / "cache.sqlite")
    ahead.add(TEXTS)
    assert sorted(ahead.stop(finish=True)) == sorted(EmbeddingCache.key(t) for t in TEXTS[50:])

    stopped = EmbedAhead(model_dir)
    for k in range(200):  # 200 pages, 2,800 texts: stop() kills the worker, keeping the slices it sent
        stopped.add([f"{t} ({k})" for t in TEXTS[:14]])
    done = stopped.stop()
    assert len(done) < 2800 and len(done) % SLICE == 0 and stopped.error == ""
    stopped.add(TEXTS)  # after stop: ignored
    assert stopped.stop() is done


def test_a_few_texts_the_cache_lacks_are_embedded_here_without_a_worker(model_dir, tmp_path):
    """A one-page edit: its few new texts are embedded on a thread of the build's process
    (no worker process), the vectors the index step would make, before the index step."""
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    cache.put([(EmbeddingCache.key(t), b"\0" * 384, 1.0) for t in TEXTS[:20]])
    ahead = EmbedAhead(model_dir, cache_path=tmp_path / "cache.sqlite")
    ahead.add(TEXTS[:20])  # its texts are cached
    new = TEXTS[20:20 + SLICE - 1]  # and fewer new ones than a slice
    ahead.add(new)
    deadline = time.monotonic() + 300  # not a timing: only how long this test waits at most
    while len(ahead._made) < len(new) and time.monotonic() < deadline and not ahead.error:
        time.sleep(0.05)
    done = ahead.stop()
    assert ahead._proc is None and ahead.error == ""
    q, s = quantize_vectors(Embedder(model_dir, threads=2).embed(new))
    assert sorted(done) == sorted(EmbeddingCache.key(t) for t in new)
    for i, text in enumerate(new):
        assert done[EmbeddingCache.key(text)] == (q[i].tobytes(), float(s[i]))

    without = EmbedAhead(model_dir)  # no cache to tell the new texts from the others: nothing here
    without.add(new)
    assert without.stop() == {} and without._proc is None and without._here is None


def test_a_worker_that_fails_says_why(tmp_path):
    ahead = EmbedAhead(tmp_path / "no-model-here")
    ahead.add(TEXTS)
    assert ahead.stop(finish=True) == {}
    assert "no-model-here" in ahead.error or "model_info.json" in ahead.error, ahead.error


def test_a_site_that_offers_the_vectors_gets_nothing_embedded_ahead(model_dir):
    asked = []
    ahead = EmbedAhead(model_dir, not_needed=lambda: asked.append(1) or True)
    ahead.add(TEXTS)
    assert ahead.stop(finish=True) == {} and asked == [1] and ahead._proc is None


#: The chunker fails on a page as read (its references unresolved), not as written.
FAILS_AS_READ = '''
import sphinx_rag.extension as _ext
from sphinx import addnodes as _addnodes
_real = _ext.chunk_page
def _as_read_fails(doctree, **kw):
    if any(True for _ in doctree.findall(_addnodes.pending_xref)):
        raise RuntimeError("an unresolved reference")
    return _real(doctree, **kw)
_ext.chunk_page = _as_read_fails
'''


def _source(root: Path, pages: int = 12, conf: str = "") -> Path:
    src = root / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text('project = "ahead"\nextensions = ["sphinx_rag"]\nsphinx_rag_query_encoder = "model"\n'
                                 + DRAIN + conf)
    names = [f"page{i}" for i in range(pages)]
    (src / "index.rst").write_text("Ahead\n=====\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in names))
    for i, name in enumerate(names):
        (src / f"{name}.rst").write_text(
            f"Page {i}\n{'=' * (5 + len(str(i)))}\n\n" + "\n\n".join(
                f"Section {i}.{j}\n{'-' * (10 + len(str(i)) + len(str(j)))}\n\n"
                f"Setting {j} of page {i} tells the solver how to treat case {j}"
                + ("; see :doc:`index`." if j % 2 else ".") for j in range(6)))
    return src


def _build(src: Path, out: Path, *options: str, env: dict | None = None) -> str:
    env = {**os.environ, "SPHINX_RAG_EMBED_CACHE": "0", "SPHINX_RAG_WARM_START": "0", **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", *options, str(src), str(out)],
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def _same_tree(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)[1:] != ([], []):
        return False
    return all(_same_tree(a / d, b / d) for d in cmp.common_dirs)


@pytest.mark.slow
def test_a_serial_build_embeds_ahead_and_publishes_the_same_bytes(tmp_path):
    src = _source(tmp_path)
    with_ahead = _build(src, tmp_path / "ahead")
    without = _build(src, tmp_path / "plain", env={"SPHINX_RAG_EMBED_AHEAD": "0"})
    total, _ = map(int, EMBEDDED.search(without).groups())
    assert "embedded while" not in without and "new chunk texts" not in with_ahead
    assert int(AHEAD.search(with_ahead).group(1)) == total  # every chunk's vector was made ahead
    # As read, a :doc: link reads "index"; once written, the page's title: the worker made
    # both versions of those texts, and only the written one is used.
    made = int(re.search(r"the worker made (\d+) vectors", with_ahead).group(1))
    assert made > total
    assert _same_tree(tmp_path / "ahead" / "_static" / "sphinx_rag", tmp_path / "plain" / "_static" / "sphinx_rag")


@pytest.mark.slow
def test_a_page_the_chunker_cannot_read_ahead_is_chunked_as_written(tmp_path):
    src = _source(tmp_path, pages=4, conf=FAILS_AS_READ)
    log = _build(src, tmp_path / "out")
    reference = _build(_source(tmp_path / "plain", pages=4), tmp_path / "plain-out", env={"SPHINX_RAG_EMBED_AHEAD": "0"})
    total, _ = map(int, EMBEDDED.search(reference).groups())
    assert "Traceback" not in log and int(AHEAD.search(log).group(1)) == total
    # Every page but the root failed as read, so the worker got their texts as written
    # only: no read-time versions of the :doc: texts this time (the test above has them).
    assert int(re.search(r"the worker made (\d+) vectors", log).group(1)) == total
    assert _same_tree(tmp_path / "out" / "_static" / "sphinx_rag", tmp_path / "plain-out" / "_static" / "sphinx_rag")


@pytest.mark.slow
def test_parallel_builds_and_warm_started_builds_embed_nothing_ahead(tmp_path):
    src = _source(tmp_path, pages=4)
    parallel = _build(src, tmp_path / "parallel", "-j", "2")
    assert "embedded while" not in parallel and EMBEDDED.search(parallel)

    with StaticServer(tmp_path / "parallel", QuietHandler) as server:
        warm = _build(src, tmp_path / "warm", env={"SPHINX_RAG_WARM_START": server.url})
    assert "embedded while" not in warm and "warm start from" in warm
    assert _same_tree(tmp_path / "warm" / "_static" / "sphinx_rag", tmp_path / "parallel" / "_static" / "sphinx_rag")


def test_a_worker_that_reads_nothing_cannot_hold_the_build(model_dir):
    ahead = EmbedAhead(model_dir)
    ahead._args = [sys.executable, "-c", "import time; time.sleep(120)"]  # never reads its stdin
    for k in range(40):  # about 1 MB: far more than a pipe holds, so the feeder blocks
        ahead.add([f"{t} {k} {'padding ' * 40}" for t in TEXTS])
    result = []
    stopper = threading.Thread(target=lambda: result.append(ahead.stop()))
    stopper.start()
    stopper.join(timeout=60)  # FEEDER_TIMEOUT (5 s), then the worker is killed
    assert not stopper.is_alive() and result == [{}]


def test_a_line_that_is_not_a_list_of_texts_does_not_end_the_workers_input(model_dir):
    """``null`` (or a number, an object, a line that is not JSON) on the worker's stdin is
    skipped with one line on stderr: what came before and after it is embedded."""
    import json

    before, after = TEXTS[:10], TEXTS[10:20]
    lines = [json.dumps(before), "null", "42", '{"texts": ["x"]}', "not json", json.dumps([None, *after, 7]),
             json.dumps("finish")]
    proc = subprocess.run([sys.executable, "-m", "sphinx_rag.index.embed_ahead", str(model_dir), "32", "1"],
                          input="\n".join(lines).encode() + b"\n", capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    made, out = {}, proc.stdout
    while out:
        head, _, out = out.partition(b"\n")
        head = json.loads(head)
        size = len(head["keys"]) * head["dim"]
        body, out = out[:size], out[size:]
        made.update({key: body[i * head["dim"]:(i + 1) * head["dim"]] for i, key in enumerate(head["keys"])})
    assert sorted(made) == sorted(EmbeddingCache.key(t) for t in before + after)
    q, _ = quantize_vectors(Embedder(model_dir, threads=1).embed(before + after))
    assert all(made[EmbeddingCache.key(t)] == q[i].tobytes() for i, t in enumerate(before + after))
    skipped = [line for line in proc.stderr.decode().splitlines() if "skipped" in line]
    assert [line.split(" of its input")[0].rsplit(" ", 2)[-2:] for line in skipped] == [["line", str(n)] for n in (2, 3, 4, 5)]
