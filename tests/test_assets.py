"""The static index: hashes in the manifest, determinism, parallel builds."""

import hashlib
import json
from pathlib import Path

import numpy as np

from sphinx_rag.assets import ASSET_DIR, load_assets
from sphinx_rag.embed import quantize_vectors

from site_helpers import DEMO, build_site


def _files(html: Path) -> dict[str, bytes]:
    root = html / ASSET_DIR
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_manifest_lists_every_index_file_with_its_hash(demo_html):
    manifest = json.loads((demo_html / ASSET_DIR / "manifest.json").read_text())
    assert manifest["format_version"] == 1
    assert manifest["model"]["dim"] == 384 and manifest["model"]["max_seq_length"] == 256
    for name, entry in manifest["files"].items():
        data = (demo_html / ASSET_DIR / name).read_bytes()
        assert entry == {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}, name
        assert (demo_html / ASSET_DIR / name).stat().st_mode & 0o044 == 0o044, name  # readable by a web server
    assets = load_assets(demo_html)
    assert assets.vectors_i8.shape == (manifest["counts"]["chunks"], 384)
    norms = np.linalg.norm(assets.vectors_i8.astype(np.float64) * assets.scales[:, None], axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=0.01)  # normalized vectors survive int8


def test_rebuild_in_parallel_is_byte_identical(demo_html, tmp_path):
    again = build_site(DEMO, tmp_path / "html", "-j", "2", "-d", str(tmp_path / "doctrees"))
    first, second = _files(demo_html), _files(again)
    index_files = {k for k in first if not k.endswith((".js", ".mjs", ".wasm", ".css"))}
    assert index_files and index_files <= set(second)
    for name in sorted(index_files):
        assert first[name] == second[name], name


def test_int8_vectors_keep_the_direction():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(20, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    q, s = quantize_vectors(v)
    approx = q.astype(np.float32) * s[:, None]
    cos = (approx * v).sum(1) / np.linalg.norm(approx, axis=1)
    assert cos.min() > 0.9999


def test_incremental_build_keeps_unchanged_pages(tmp_path):
    """Pages Sphinx does not rewrite keep their chunks from the previous index."""
    import shutil
    import subprocess
    import sys

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-narrative", src)
    out = tmp_path / "html"

    def build():
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(out)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return {c["id"]: c["text"] for c in json.loads((out / ASSET_DIR / "chunks.json").read_text())}

    first = build()
    guide = src / "guide.rst"
    guide.write_text(guide.read_text().replace("short introduction paragraph", "brand new opening paragraph"))
    second = build()
    assert second["guide#user-guide:0"].endswith("The guide starts with a brand new opening paragraph.")
    unchanged = {k: v for k, v in first.items() if not k.startswith("guide#")}
    assert unchanged and all(second[k] == v for k, v in unchanged.items())  # changelog, index kept
    assert set(second) == set(first)


def test_keyword_only_build_needs_no_model_export(tmp_path):
    """sphinx_rag_embeddings = False: the tokenizer comes from the model source, nothing is exported."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "empty-cache"
    cache.mkdir()
    out = tmp_path / "html"
    src = Path(__file__).parent / "roots" / "test-narrative"  # sets sphinx_rag_embeddings = False
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "-d", str(tmp_path / "dt"),
                           str(src), str(out)], capture_output=True, text=True,
                          env=dict(os.environ, SPHINX_RAG_CACHE=str(cache)))
    assert proc.returncode == 0, proc.stderr
    assert list(cache.iterdir()) == []  # no export, so no torch needed
    manifest = json.loads((out / ASSET_DIR / "manifest.json").read_text())
    assert manifest["model"] is None and "embeddings.i8" not in manifest["files"]
    assert manifest["counts"]["chunks"] > 0
