"""What a rebuild pays that does not depend on the change (issue 36, item 3).

A one-page edit of a small site cost 1.5-2.6x a plain Sphinx edit: the model's 80 MB
hashed again, the encoder refitted and the suggestions re-verified because the chunks of
every rewritten page counted as changed, the model loaded for one paragraph. These
tests pin what replaced that, with real builds in subprocesses (``benchmarks/bench_first_hour.py``
measures the time).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from sphinx_rag.model import filehash
from sphinx_rag.search.index import ASSET_DIR
from sphinx_rag.chunk import Chunk

from site_helpers import vectors_of

ROOTS = Path(__file__).parent / "roots"

#: sphinx-build, then (at exit) which model modules the process imported and how many
#: files it hashed, as JSON in $RECORD.
_RECORDING = """
import atexit, json, os, sys

def record():
    from sphinx_rag.model import filehash
    modules = sorted({m.split(".")[0] for m in sys.modules} & {"onnxruntime", "scipy"})
    with open(os.environ["RECORD"], "w") as f:
        json.dump({"modules": modules, "hashed": filehash.computed}, f)

atexit.register(record)
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""

AHEAD = re.compile(r"(\d+) of (\d+) chunk vectors from the embedding cache, (\d+) embedded while the pages were read")


def _site(tmp_path: Path) -> Path:
    """The narrative test root with embeddings (the default model, its query table) and the
    mined suggestions."""
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-narrative", src)
    conf = (src / "conf.py").read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True")
    (src / "conf.py").write_text(conf + "\nsphinx_rag_threads = 2\n")  # embedding ahead: one core for it
    (src / "topics.rst").write_text("Topics\n======\n\n" + "\n\n".join(  # enough chunks for a fitted encoder
        f"Topic {i}\n{'-' * (6 + len(str(i)))}\n\n{['The solver', 'A plot', 'The reader'][i % 3]} handles case {i} "
        f"of the {['input', 'figure', 'file'][i % 3]}." for i in range(80)))
    (src / "index.rst").write_text((src / "index.rst").read_text().replace("   guide\n", "   guide\n   topics\n"))
    return src


def _build(src: Path, out: Path, tmp_path: Path, **env) -> tuple[dict, str]:
    record = tmp_path / "record.json"
    proc = subprocess.run([sys.executable, "-c", _RECORDING, "-b", "html", "-d", str(out / ".doctrees"), str(src),
                           str(out)], capture_output=True, text=True,
                          env={**os.environ, "SPHINX_RAG_WARM_START": "0", "RECORD": str(record), **env})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return json.loads(record.read_text()), proc.stdout + proc.stderr


def _files(out: Path) -> dict[str, bytes]:
    root = out / ASSET_DIR
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_rebuild_that_changes_no_chunk_text_loads_no_model_and_keeps_the_index(tmp_path):
    """A page Sphinx reads and writes again with the same text (touched, or its toctree
    changed): no chunk changed, so nothing is embedded, fitted, verified or hashed, the
    model's runtime is not even imported, and every file of the index is what it was.
    Before: the rewritten page's chunks counted as changed (a refit on a small site) and
    the suggestions were verified again by searching them (the model loaded)."""
    src, out = _site(tmp_path), tmp_path / "html"
    _build(src, out, tmp_path)
    before = _files(out)
    stamp = time.time_ns() + 2 * 10**9  # newer than the last read
    os.utime(src / "guide.rst", ns=(stamp, stamp))  # Sphinx reads and writes it again
    record, log = _build(src, out, tmp_path)
    assert re.search(r"writing output\.\.\. \[[ 0-9]+%\] guide", log), log  # read and written again
    assert record == {"modules": [], "hashed": 0}, record
    assert not AHEAD.search(log) and "new chunk texts" not in log and "fitted" not in log, log
    assert _files(out) == before


def test_a_one_page_edit_embeds_its_text_ahead_and_the_index_step_loads_no_model(tmp_path):
    """A new paragraph: its chunk is embedded on a thread while Sphinx reads and writes
    (no worker process for one text), so the index step embeds nothing; the vectors are
    the ones a build that embeds nothing ahead publishes, the encoder is kept."""
    src, out = _site(tmp_path), tmp_path / "html"
    _build(src, out, tmp_path)
    shutil.copytree(out, tmp_path / "same")  # the same state, for the build without embedding ahead
    guide = src / "guide.rst"
    guide.write_text(guide.read_text() + f"\n\nA paragraph added ({time.time_ns()}): the solver keeps its state.\n")
    record, log = _build(src, out, tmp_path)
    cached, total, ahead = map(int, AHEAD.search(log).groups())
    assert ahead >= 1 and cached + ahead == total and "new chunk texts" not in log, log
    assert "static query encoder kept" in log and "fitted in" not in log, log
    assert record["hashed"] == 0, record
    _, reference = _build(src, tmp_path / "same", tmp_path, SPHINX_RAG_EMBED_AHEAD="0", SPHINX_RAG_EMBED_CACHE="0")
    assert "new chunk texts" in reference and "embedded while" not in reference, reference
    mine, theirs = vectors_of(out), vectors_of(tmp_path / "same")
    assert np.array_equal(mine[0], theirs[0]) and np.array_equal(mine[1], theirs[1])
    assert _files(out) == _files(tmp_path / "same")


def _chunk(doc: str, text: str, heading: str = "Guide") -> Chunk:
    return Chunk(doc=doc, anchor="", headings=[heading], kind="guide", text=text)


def test_changed_chunks_are_those_added_or_removed_page_by_page():
    from sphinx_rag.index_step import changed_chunks as _changed_chunks

    previous = {"a": [_chunk("a", "one"), _chunk("a", "two")], "b": [_chunk("b", "three")],
                "c": [_chunk("c", "four")]}
    same = {"a": [_chunk("a", "one"), _chunk("a", "two")]}  # rewritten, same text
    assert _changed_chunks(previous, same, ["a", "b", "c"]) == 0
    edited = {"a": [_chunk("a", "one"), _chunk("a", "two, edited")], "d": [_chunk("d", "new")]}
    # "two" -> "two, edited" (2), page d added (1), page c gone (1)
    assert _changed_chunks(previous, edited, ["a", "b", "d"]) == 4
    retitled = {"b": [_chunk("b", "three", heading="Another title")]}  # the title is read by the fit
    assert _changed_chunks(previous, retitled, ["a", "b", "c"]) == 2


def test_a_files_hash_is_remembered_until_the_file_changes(tmp_path, monkeypatch):
    """By the file's identity (path, size, mtime, ctime, inode), across processes through
    the store in the doctree directory: a same-sized rewrite with its mtime put back is
    still hashed again (its ctime moved)."""
    big = tmp_path / "model.onnx"
    big.write_bytes(b"a" * 100_000)
    store = tmp_path / "doctrees"
    store.mkdir()
    monkeypatch.setattr(filehash, "_MEMO", {})
    monkeypatch.setattr(filehash, "computed", 0)
    filehash.use_store(store)
    first = filehash.sha256(big)
    assert filehash.sha256(big) == first and filehash.computed == 1
    filehash.save()
    monkeypatch.setattr(filehash, "_MEMO", {})  # another process
    filehash.use_store(store)
    assert filehash.sha256(big) == first and filehash.computed == 1  # from the store
    stat = big.stat()
    big.write_bytes(b"b" * 100_000)
    os.utime(big, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert filehash.sha256(big) != first and filehash.computed == 2
    (store / filehash.STORE_FILE).write_text("not json")  # a torn store: hashed again, no error
    monkeypatch.setattr(filehash, "_MEMO", {})
    filehash.use_store(store)
    assert filehash.sha256(big) == hashlib.sha256(b"b" * 100_000).hexdigest()
    filehash.use_store(None)


def test_a_class_location_is_read_only_when_a_warning_names_it():
    """The docstring warning's file:line of a class costs a parse of its module: the read
    phase keeps the class's path and name (picklable, on the environment), the line is
    found when the location is printed, and is the one ``object_location`` gives."""
    import json.decoder

    from sphinx_rag import locate

    locate._definitions.cache_clear()
    where = locate.deferred_location(json.decoder.JSONDecoder)
    assert locate._definitions.cache_info().misses == 0  # nothing parsed yet
    assert str(pickle.loads(pickle.dumps(where))) == locate.object_location(json.decoder.JSONDecoder)
    assert locate._definitions.cache_info().misses == 1
    function = locate.deferred_location(json.decoder.JSONDecoder.decode)  # a code object has its line
    assert function == locate.object_location(json.decoder.JSONDecoder.decode)
    assert locate.deferred_location(len) == ""


def test_the_chunkers_token_counter_counts_past_the_models_length():
    """The build's counter loads the tokenizer once, untruncated: the same counts as
    ``count_tokens`` (which copies a truncating tokenizer), past 256 tokens too."""
    from sphinx_rag.model.embed import count_tokens, load_tokenizer, token_counter
    from sphinx_rag.model.cache import cached_model_dir
    from sphinx_rag.model.source import DEFAULT_MODEL

    model_dir = cached_model_dir(DEFAULT_MODEL)
    count, truncating = token_counter(model_dir), load_tokenizer(model_dir, 256)
    texts = ["hello world", "The solver's warm start keeps the fitted coefficients. " * 60, ""]
    assert [count(t) for t in texts] == [count_tokens(truncating, t) for t in texts]
    assert count(texts[1]) > 256


def test_suggestions_are_verified_again_once_enough_has_changed_since(monkeypatch, tmp_path):
    """Kept while the chunks changed since they were verified (summed over builds, in the
    carry file) stay within build.REFIT_SHARE and their pages are indexed; else searched again."""
    from sphinx_rag.index import build, carry, suggest
    from sphinx_rag.search import retrieve

    calls = []
    monkeypatch.setattr(suggest, "choose", lambda records, searcher: calls.append(1) or [])
    monkeypatch.setattr(retrieve, "Searcher", lambda out_dir: None)
    records = [{"url": f"p{i}.html#a"} for i in range(100)]
    previous = [["How do I fit it?", "p1.html#a"], ["Mine?", ""]]
    assert build._suggested_questions(tmp_path, records, ["auto"], previous, 5) == ([["How do I fit it?",
                                                                                       "p1.html#a"]], 5)
    assert calls == []
    for stale, indexed in ((6, records), (None, records), (0, records[2:])):  # past 5%, unknown, its page gone
        assert build._suggested_questions(tmp_path, indexed, ["auto"], previous, stale) == ([], 0)
    assert calls == [1, 1, 1]
    assert build._since(3, 2) == 5 and build._since(None, 2) is None and build._since(3, None) is None
    out = tmp_path / "index"
    out.mkdir()
    (out / "manifest.json").write_bytes(b"{}")
    carry.save(tmp_path, b"{}", [], [], None, None, None, {}, suggestions_stale=4)
    assert carry.load(tmp_path, out).suggestions_stale == 4
