"""The model a build embeds with: the default model from its package (``sphinx-rag-minilm``,
pinned by sha256), never from a published site.

Real Sphinx builds in subprocesses where torch, onnx, optimum and transformers cannot be
imported (a CI runner without the export extra), an empty model cache, and a real HTTP
server serving a previous build: the build needs no export, asks the site for no model
file (even one that claims to be this model), and writes the bytes of a build whose
model was exported here.
"""

from __future__ import annotations

import filecmp
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import LoggedHandler, StaticServer, index_files
from sphinx_rag.search.index import ASSET_DIR
from sphinx_rag.model.cache import cached_model_dir
from sphinx_rag.model.source import DEFAULT_MODEL, PACKAGED_SHA256, packaged_model_dir
from test_config import _WITHOUT
from test_warm_start import COLD, EMPTY, _make_source, _sphinx

#: sphinx-build in an interpreter where what an export imports cannot be imported
WITHOUT_EXPORT = _WITHOUT.replace("BLOCKED", '("torch", "onnx", "optimum", "transformers")')


def _build(src: Path, out: Path, cache: Path, site: str, *options: str) -> subprocess.CompletedProcess:
    """A build without the export's modules, with ``cache`` as its model cache, starting from ``site``."""
    return subprocess.run([sys.executable, "-c", WITHOUT_EXPORT, "-b", "html", "-D", f"sphinx_rag_model_cache={cache}",
                           "-D", f"sphinx_rag_warm_start={site}", *options, str(src), str(out)],
                          capture_output=True, text=True, env={**os.environ, **EMPTY})


def _entries(cache: Path) -> list[str]:
    """Everything in the model cache (a temp directory left behind included)."""
    return sorted(p.name for p in cache.iterdir()) if cache.exists() else []


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("warm-model") / "src"
    _make_source(src)
    return src


@pytest.fixture(scope="module")
def published(source) -> Path:
    """The site as deployed: a cold build."""
    out = source.parent / "published"
    _sphinx(source, out, env=COLD)
    return out


def test_the_packaged_model_is_the_pinned_export():
    """The package's files are the pinned ones, and the model a site ships is that file."""
    packaged = packaged_model_dir(DEFAULT_MODEL)
    assert packaged is not None, "sphinx-rag-minilm is a dependency of sphinx-rag"
    for name, sha in PACKAGED_SHA256.items():
        assert hashlib.sha256((packaged / name).read_bytes()).hexdigest() == sha
    entry = cached_model_dir(DEFAULT_MODEL)
    assert filecmp.cmp(entry / "model.onnx", packaged / "model.onnx", shallow=False)


@pytest.mark.slow
def test_a_build_without_torch_takes_no_model_from_the_site_and_writes_an_exported_builds_bytes(
        source, published, tmp_path):
    """The published site claims a model.onnx with this model's info but other bytes (its
    manifest names their sha256): the build never asks for it, embeds with the package's
    pinned model, and writes what a build with the model exported here writes."""
    site = tmp_path / "site"
    shutil.copytree(published, site)
    manifest_path = site / ASSET_DIR / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    model_dir = site / ASSET_DIR / manifest["model_files"]["dir"]
    fake = b"\0" * 1024
    (model_dir / "model.onnx").write_bytes(fake)
    manifest["model_files"]["files"]["model.onnx"] = {"bytes": len(fake), "sha256": hashlib.sha256(fake).hexdigest()}
    manifest_path.write_text(json.dumps(manifest))
    requests: list[str] = []
    cache = tmp_path / "cache"
    with StaticServer(site, LoggedHandler, requests=requests) as server:
        proc = _build(source, tmp_path / "html", cache, server.url)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    assert "exporting" not in log and "Traceback" not in log, log[-3000:]
    assert not [p for p in requests if "/model-" in p], requests
    (entry,) = _entries(cache)  # one entry, no temp directory
    assert hashlib.sha256((cache / entry / "model.onnx").read_bytes()).hexdigest() == PACKAGED_SHA256["model.onnx"]
    assert (cache / entry).name == cached_model_dir(DEFAULT_MODEL).name  # the entry an export of these weights fills
    _sphinx(source, tmp_path / "cold", "-D", f"sphinx_rag_model_cache={tmp_path / 'cold-cache'}", env={**COLD, **EMPTY})
    assert index_files(tmp_path / "html") == index_files(tmp_path / "cold")  # every file, byte for byte


def test_a_package_whose_model_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    """A tampered or mismatched package: one line naming the file, no vectors from it."""
    import sphinx_rag_minilm

    from sphinx_rag.model import source as model_source

    fake = tmp_path / "model"
    shutil.copytree(sphinx_rag_minilm.MODEL_DIR, fake)
    (fake / "model.onnx").write_bytes(b"not the model")
    monkeypatch.setattr(sphinx_rag_minilm, "MODEL_DIR", fake)
    model_source._SHA_CACHE.clear()
    with pytest.raises(RuntimeError) as exc:
        cached_model_dir(DEFAULT_MODEL, tmp_path / "cache")
    assert str(exc.value).startswith("[sphinx-rag] ") and "model.onnx" in str(exc.value)
    assert "pip install --force-reinstall sphinx-rag-minilm" in str(exc.value) and "\n" not in str(exc.value)
    assert _entries(tmp_path / "cache") == []


def test_an_entry_exported_before_holds_its_embedding_cache(tmp_path):
    """An export of the same weights filled the entry the package's copy goes to: its
    embedding cache is kept (the vectors are the same), the files completed."""
    entry = tmp_path / "cache" / cached_model_dir(DEFAULT_MODEL).name
    entry.mkdir(parents=True)
    for name in PACKAGED_SHA256:
        shutil.copyfile(packaged_model_dir(DEFAULT_MODEL) / name, entry / name)
    (entry / "embedding_cache.sqlite").write_bytes(b"kept")
    assert cached_model_dir(DEFAULT_MODEL, tmp_path / "cache") == entry
    assert (entry / "embedding_cache.sqlite").read_bytes() == b"kept"
    assert (entry / "query_table.bin").is_file()
    assert sorted(p.name for p in entry.parent.iterdir()) == [entry.name]
