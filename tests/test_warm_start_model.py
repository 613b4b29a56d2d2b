"""The warm start's model (warm_start.PublishedModel): a build whose model cache is empty
takes the published site's model instead of exporting one, only when it is what an export
here would write.

Real Sphinx builds in subprocesses where torch, onnx, optimum and transformers cannot be
imported (a CI runner without the export extra), an empty model cache, a real HTTP server
serving a previous build: the build needs no export and writes the bytes a build that
exported the model writes; another model or export settings fetch no model, and a site
that dies or lies partway leaves no cache entry behind, then the export runs as before.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from site_helpers import LoggedHandler, QuietHandler, StaticServer, index_files
from sphinx_rag.assets import ASSET_DIR
from sphinx_rag.model import cached_model_dir
from sphinx_rag.model_source import DEFAULT_MODEL, EXPORT_SETTINGS, is_model_dir
from sphinx_rag.warm_start import PublishedModel
from test_config import _WITHOUT
from test_warm_start import COLD, EMPTY, _make_source, _served_copy, _sphinx, _warm_lines

#: sphinx-build in an interpreter where what an export imports cannot be imported
WITHOUT_EXPORT = _WITHOUT.replace("BLOCKED", '("torch", "onnx", "optimum", "transformers")')
EXPORT_MISSING = 'needs torch and the export extra (No module named \'torch\'): pip install torch==2.13.0'


def _build(src: Path, out: Path, cache: Path, site: str, *options: str, blocked: bool = True,
           env: dict | None = None) -> subprocess.CompletedProcess:
    """A build with ``cache`` as its model cache, starting from ``site`` (without -q: the info
    lines are the report); ``blocked``: without the export's modules."""
    command = ["-c", WITHOUT_EXPORT] if blocked else ["-m", "sphinx"]
    return subprocess.run([sys.executable, *command, "-b", "html", "-D", f"sphinx_rag_model_cache={cache}",
                           "-D", f"sphinx_rag_warm_start={site}", *options, str(src), str(out)],
                          capture_output=True, text=True, env={**os.environ, **EMPTY, **(env or {})})


def _entries(cache: Path) -> list[str]:
    """Everything in the model cache (a temp directory left behind included)."""
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


def _entry_files(entry: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(entry.iterdir()) if p.name != "embedding_cache.sqlite"}


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("warm-model") / "src"
    _make_source(src)
    return src


@pytest.fixture(scope="module")
def published(source) -> Path:
    """The site as deployed: a cold build with the model exported where torch is installed."""
    out = source.parent / "published"
    _sphinx(source, out, env=COLD)
    return out


@pytest.mark.slow
def test_a_build_without_torch_takes_the_sites_model_and_writes_an_exported_builds_bytes(source, published, tmp_path):
    requests: list[str] = []
    cache = tmp_path / "cache"
    with StaticServer(published, LoggedHandler, requests=requests) as server:
        proc = _build(source, tmp_path / "html", cache, server.url)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "exporting" not in log and "WARNING" not in log and "Traceback" not in log, log[-3000:]
    (line,) = _warm_lines(log)
    n = json.loads((published / ASSET_DIR / "manifest.json").read_text())["counts"]["chunks"]
    assert re.fullmatch(rf"\[sphinx-rag\] warm start from {server.url}: {n} of {n} chunk vectors reused, encoder "
                        r"reused, model from the site \(2\d\.\d MB in [0-9.]+ s\), [0-9.]+ MB fetched in [0-9.]+ s",
                        line), line
    model = [p for p in requests if "/model-" in p]
    assert len(model) == 1 and model[0].endswith("/model.onnx")  # the tokenizer files come from the source
    (entry,) = _entries(cache)  # one entry, no temp directory
    fetched = _entry_files(cache / entry)
    site_model = next((published / ASSET_DIR).glob("model-*"))
    assert fetched["model.onnx"] == (site_model / "model.onnx").read_bytes()
    info = json.loads(fetched["model_info.json"])
    assert {k: info[k] for k in EXPORT_SETTINGS} == EXPORT_SETTINGS  # opset, min_quant_elements, export_version
    # the same cache entry exported here (torch installed) is the same files, and its build the same index
    shutil.rmtree(cache)
    exported = cached_model_dir(DEFAULT_MODEL, cache)
    assert exported.name == entry and _entry_files(exported) == fetched
    _sphinx(source, tmp_path / "exported", "-D", f"sphinx_rag_model_cache={cache}", env={**COLD, **EMPTY})
    assert index_files(tmp_path / "html") == index_files(tmp_path / "exported")  # every file, byte for byte


def _other_opset(text: str) -> str:
    manifest = json.loads(text)
    manifest["model"]["opset"] = 18
    return json.dumps(manifest)


def _published_before(text: str) -> str:
    """A site built before model_info named the export settings."""
    manifest = json.loads(text)
    for key in ("opset", "min_quant_elements", "export_version"):
        del manifest["model"][key]
    return json.dumps(manifest)


@pytest.mark.parametrize("change, expected", [
    (_other_opset, "it holds another model or export (opset '18', here '17')"),
    (_published_before, "it holds another model or export (export_version 'None', here '1', and 2 more fields)"),
])
def test_another_export_fetches_no_model(source, published, tmp_path, change, expected):
    """Without torch: one info line, then the export's one-line error; nothing in the cache."""
    requests: list[str] = []
    root = _served_copy(published, tmp_path / "site", change)
    cache = tmp_path / "cache"
    with StaticServer(root, LoggedHandler, requests=requests) as server:
        proc = _build(source, tmp_path / "html", cache, server.url)
    assert proc.returncode == 2, proc.stderr
    (line,) = _warm_lines(proc.stdout)
    assert line == (f"[sphinx-rag] warm start from {server.url}: the model is not taken from the site ({expected}); "
                    "exporting it here"), line
    assert not any("/model-" in p for p in requests), requests
    (error,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert EXPORT_MISSING in error and "Traceback" not in proc.stderr, proc.stderr
    assert _entries(cache) == []


@pytest.mark.slow
def test_a_site_published_before_the_export_settings_were_named_costs_an_export_and_an_info_line(
        source, published, tmp_path):
    """With torch: the model is exported as before (a -W build does not fail for the line)."""
    root = _served_copy(published, tmp_path / "site", _published_before)
    cache = tmp_path / "cache"
    with StaticServer(root) as server:
        proc = _build(source, tmp_path / "html", cache, server.url, "-W", blocked=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    model_lines = [line for line in _warm_lines(proc.stdout) if "model" in line]
    assert len(model_lines) == 2 and "the model is not taken from the site" in model_lines[0], model_lines
    assert "its vectors come from another model (export_version 'None'" in model_lines[1]  # vectors skipped too
    assert "[sphinx-rag] exporting the embedding model" in proc.stdout
    (entry,) = _entries(cache)
    assert is_model_dir(cache / entry)


class _DyingModel(QuietHandler):
    """Sends model.onnx's full Content-Length but a third of its bytes, then hangs up."""

    def do_GET(self):
        if not self.path.endswith("/model.onnx"):
            return super().do_GET()
        data = Path(self.translate_path(self.path)).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 3])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


class _TamperedModel(QuietHandler):
    """Serves model.onnx with one byte changed (same length): not what the manifest says."""

    def do_GET(self):
        if not self.path.endswith("/model.onnx"):
            return super().do_GET()
        data = bytearray(Path(self.translate_path(self.path)).read_bytes())
        data[len(data) // 2] ^= 0x01
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(bytes(data))


@pytest.mark.parametrize("handler, expected, warning", [
    (_DyingModel, r"\(cannot fetch http://127\.0\.0\.1:\d+/_static/sphinx_rag/index/model-[0-9a-f]{16}/model\.onnx "
                  r"\(the connection closed after [\d,]+ of 22,999,403 bytes\)\)", False),
    (_TamperedModel, r"\(http://127\.0\.0\.1:\d+/_static/sphinx_rag/index/model-[0-9a-f]{16}/model\.onnx does not "
                     r"match its sha256 in the manifest: refused\)", True),
])
def test_a_site_that_fails_during_the_model_leaves_no_cache_entry(source, published, tmp_path, handler, expected,
                                                                  warning):
    cache = tmp_path / "cache"
    with StaticServer(published, handler) as server:
        proc = _build(source, tmp_path / "html", cache, server.url)
    assert proc.returncode == 2, proc.stderr
    (line,) = _warm_lines(proc.stdout + proc.stderr)
    assert re.search(expected, line) and line.startswith("WARNING" if warning else "[sphinx-rag]"), line
    assert line.rstrip().endswith("exporting it here" + (" [sphinx_rag.warm_start]" if warning else "")), line
    errors = [line for line in proc.stderr.splitlines() if line.strip() and "warm start" not in line]
    assert len(errors) == 1 and EXPORT_MISSING in errors[0], proc.stderr
    assert _entries(cache) == []  # no entry, no temp directory


def test_vectors_skipped_the_model_still_taken(source, published, tmp_path):
    """A site of another chunker version: its vectors are not reused, its model is (one line each)."""
    def other_chunker(text: str) -> str:
        manifest = json.loads(text)
        manifest["settings"]["chunker"] = 1
        return json.dumps(manifest)

    root = _served_copy(published, tmp_path / "site", other_chunker)
    with StaticServer(root) as server:
        proc = _build(source, tmp_path / "html", tmp_path / "cache", server.url,
                      "-D", "sphinx_rag_query_encoder=model")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    skipped, model = _warm_lines(proc.stdout)
    assert "skipped: its chunks come from chunker version 1" in skipped
    assert re.fullmatch(rf"\[sphinx-rag\] warm start from {server.url}: model from the site \(2\d\.\d MB in [0-9.]+ s\)",
                        model), model


class _Trickling(QuietHandler):
    """Sends model.onnx 64 KB at a time, a tenth of a second apart (0.6 MB/s)."""

    def do_GET(self):
        if not self.path.endswith("/model.onnx"):
            return super().do_GET()
        data = Path(self.translate_path(self.path)).read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            for at in range(0, len(data), 1 << 16):
                self.wfile.write(data[at: at + (1 << 16)])
                time.sleep(0.1)
        except OSError:
            pass  # the client gave up


def test_the_model_has_its_own_deadline(published, tmp_path):
    from sphinx_rag.model_source import model_info, resolve_model_source

    lines: list[str] = []
    into = tmp_path / "into"
    into.mkdir()
    src = resolve_model_source(DEFAULT_MODEL)
    local = {name: hashlib.sha256((src / name).read_bytes()).hexdigest()
             for name in ("tokenizer.json", "vocab.txt")}
    with StaticServer(published, _Trickling) as server:
        fetcher = PublishedModel(server.url, note=lines.append, warn=lines.append, total=1.5)
        started = time.monotonic()
        assert fetcher(model_info(DEFAULT_MODEL, src), local, into) is False
        assert time.monotonic() - started < 5
    (line,) = lines
    assert "model.onnx (out of the time allowed)" in line and fetcher.report() == "", line
    assert not (into / "model.onnx").exists()


def test_an_entry_exported_before_model_info_named_the_settings_is_completed(tmp_path):
    """The cache key already hashes the export settings: an older entry gets them in its
    model_info.json (atomically) and keeps its model and embedding cache."""
    exported = cached_model_dir(DEFAULT_MODEL)
    root = tmp_path / "cache"
    shutil.copytree(exported, root / exported.name, ignore=shutil.ignore_patterns("embedding_cache.sqlite"))
    entry = root / exported.name
    info = json.loads((entry / "model_info.json").read_text())
    old = {k: v for k, v in info.items() if k not in ("opset", "min_quant_elements", "export_version")}
    (entry / "model_info.json").write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")
    (entry / "embedding_cache.sqlite").write_bytes(b"kept")
    assert cached_model_dir(DEFAULT_MODEL, root) == entry
    assert (entry / "model_info.json").read_bytes() == (exported / "model_info.json").read_bytes()
    assert filecmp.cmp(entry / "model.onnx", exported / "model.onnx", shallow=False)
    assert (entry / "embedding_cache.sqlite").read_bytes() == b"kept"
    assert sorted(p.name for p in entry.iterdir() if p.name.startswith(".")) == []
