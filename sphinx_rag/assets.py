"""The static index: written at build time, read by the Python and JS searches.

Plain JSON (sorted keys, no timestamps) plus little-endian binary arrays, so
that JavaScript needs no Python-specific parser and two builds of the same
sources are byte-identical. Every file is listed in ``manifest.json`` with its
sha256 (the browser caches by hash). Layout: ARCHITECTURE.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .bm25 import BM25Index

__all__ = ["FORMAT_VERSION", "ASSET_DIR", "write_assets", "load_assets", "Assets", "read_json", "IndexMissing"]

FORMAT_VERSION = 1
ASSET_DIR = Path("_static") / "sphinx_rag"
_UMASK = os.umask(0)
os.umask(_UMASK)
MODEL_FILES = ("model.onnx", "model_info.json", "tokenizer.json", "vocab.txt")


class IndexMissing(FileNotFoundError):
    pass


def read_json(path: Path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _dumps(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _write(path: Path, data: bytes) -> dict:
    """Atomic write (temp file + replace); returns the manifest entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600: web servers run as other users
    os.replace(tmp, path)
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def write_assets(out_dir: Path, *, chunks: list[dict], bm25: BM25Index, vectors_i8: np.ndarray | None,
                 scales: np.ndarray | None, model_dir: Path | None, model_info: dict | None,
                 settings: dict) -> dict:
    """Write every asset then the manifest (last, so readers never see a half index)."""
    out_dir = Path(out_dir)
    files: dict[str, dict] = {}
    files["chunks.json"] = _write(out_dir / "chunks.json", _dumps(chunks))
    files["bm25.json"] = _write(out_dir / "bm25.json", _dumps({
        "k1": bm25.k1, "b": bm25.b, "epsilon": bm25.epsilon, "n_docs": bm25.n_docs,
        "avgdl": bm25.avgdl, "vocab": bm25.vocab,
    }))
    files["bm25_offsets.u32"] = _write(out_dir / "bm25_offsets.u32", bm25.offsets.astype("<u4").tobytes())
    files["bm25_docs.u32"] = _write(out_dir / "bm25_docs.u32", bm25.docs.astype("<u4").tobytes())
    files["bm25_impacts.f32"] = _write(out_dir / "bm25_impacts.f32", bm25.impacts.astype("<f4").tobytes())
    if vectors_i8 is not None:
        files["embeddings.i8"] = _write(out_dir / "embeddings.i8", vectors_i8.astype(np.int8).tobytes())
        files["embeddings_scale.f32"] = _write(out_dir / "embeddings_scale.f32", scales.astype("<f4").tobytes())
        for name in MODEL_FILES:
            files[f"model/{name}"] = _write(out_dir / "model" / name, (Path(model_dir) / name).read_bytes())
    elif (out_dir / "model").exists():
        shutil.rmtree(out_dir / "model")
    manifest = {
        "format_version": FORMAT_VERSION,
        "model": model_info,
        "counts": {"chunks": len(chunks), "vocab": len(bm25.vocab), "postings": int(len(bm25.docs)),
                   "dim": int(vectors_i8.shape[1]) if vectors_i8 is not None else 0},
        "files": files,
        "settings": settings,
    }
    _write(out_dir / "manifest.json", _dumps(manifest))
    return manifest


@dataclass
class Assets:
    root: Path
    manifest: dict
    chunks: list[dict]
    bm25: BM25Index
    vectors_i8: np.ndarray | None
    scales: np.ndarray | None

    @property
    def model_dir(self) -> Path | None:
        return self.root / "model" if self.vectors_i8 is not None else None


def find_asset_dir(path: Path) -> Path:
    """Accept the HTML output dir, or the asset dir itself."""
    path = Path(path)
    for candidate in (path / ASSET_DIR, path):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise IndexMissing(
        f"[sphinx-rag] no search index in {path}: add \"sphinx_rag\" to extensions in conf.py and "
        f"build with `sphinx-build -b html SOURCE_DIR {path}`"
    )


def load_chunk_records(asset_dir: Path) -> list[dict]:
    """chunks.json of an existing index of this format (ValueError otherwise)."""
    manifest = read_json(Path(asset_dir) / "manifest.json")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise ValueError("other index format")
    return read_json(Path(asset_dir) / "chunks.json")


def load_assets(path: Path) -> Assets:
    root = find_asset_dir(path)
    manifest = read_json(root / "manifest.json")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise IndexMissing(f"[sphinx-rag] index format {manifest.get('format_version')} in {root} is not "
                           f"{FORMAT_VERSION}: rebuild the docs with this sphinx-rag version")
    meta = read_json(root / "bm25.json")
    bm25 = BM25Index(
        vocab=meta["vocab"],
        offsets=np.fromfile(root / "bm25_offsets.u32", dtype="<u4"),
        docs=np.fromfile(root / "bm25_docs.u32", dtype="<u4"),
        impacts=np.fromfile(root / "bm25_impacts.f32", dtype="<f4"),
        n_docs=meta["n_docs"], avgdl=meta["avgdl"], k1=meta["k1"], b=meta["b"], epsilon=meta["epsilon"],
    )
    vectors = scales = None
    if "embeddings.i8" in manifest["files"]:
        dim = manifest["counts"]["dim"]
        vectors = np.fromfile(root / "embeddings.i8", dtype=np.int8).reshape(-1, dim)
        scales = np.fromfile(root / "embeddings_scale.f32", dtype="<f4")
    return Assets(root, manifest, read_json(root / "chunks.json"), bm25, vectors, scales)
