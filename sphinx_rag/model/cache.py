"""Where the exported model a build embeds with lives: the cache.

``sphinx_rag_model`` is a Hugging Face id or a local directory (``source.py`` finds
and describes it). ``cached_model_dir`` gives the exported int8 ONNX directory every build
embeds with: a cache entry named by the model, its source weights and the export settings,
filled once from the default model's package (``sphinx-rag-minilm``: its files checked
against the sha256 this version pins) or, for any other model, by an export
(``export.py``, torch + optimum), and never importing torch on a cache hit. An
already exported directory is used as it is. The entry also holds the embedding cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from .source import (
    EXPORT_SETTINGS,
    PACKAGED_SHA256,
    canonical_id,
    is_model_dir,
    model_id_for_info,
    packaged_model_dir,
    read_json,
    resolve_model_source,
    source_sha256,
    write_model_info,
)

__all__ = ["default_cache_dir", "cache_key", "cached_model_dir"]


def default_cache_dir() -> Path:
    env = os.environ.get("SPHINX_RAG_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/sphinx-rag/models").expanduser()


def cache_key(model: str, src: Path | None = None, *, sha256: str | None = None) -> str:
    """Short hash naming the cache entry: model, source weights (``src``'s, or their
    ``sha256`` as a model_info.json names them) and export settings."""
    p = Path(model).expanduser()
    ident = str(p.resolve()) if p.is_dir() else canonical_id(model)
    payload = json.dumps({"model": ident, "source_sha256": sha256 or source_sha256(src), **EXPORT_SETTINGS},
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def cached_model_dir(model: str, cache_dir: str | os.PathLike | None = None, *,
                     announce=lambda message: None) -> Path:
    """Exported model directory for ``model``, made once in the cache.

    ``model`` may itself be an exported directory (model.onnx + model_info.json): then it
    is used directly. The default model is copied from its package (verified against the
    pinned sha256; the entry is the one an export of the same weights would fill); any
    other model is exported (torch, optimum). A cache hit never imports torch/optimum.
    ``announce`` is told before an export starts (the longest step of a first build).
    """
    if is_model_dir(model):
        return Path(model).expanduser().resolve()
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id_for_info(model).split("/")[-1]).strip("-") or "model"
    packaged = packaged_model_dir(model)
    if packaged is not None:
        final = root / f"{slug}-{cache_key(model, sha256=read_json(packaged / 'model_info.json')['source_sha256'])}"
        if not _is_packaged_copy(final, packaged):
            _install(final, lambda tmp: _copy_packaged(packaged, final, tmp))
        return final
    src = resolve_model_source(model)
    final = root / f"{slug}-{cache_key(model, src)}"
    if is_model_dir(final):
        _complete_info(final)
        return final
    from .export import export_model, require_export_dependencies

    require_export_dependencies(model)  # before saying an export starts
    announce(f"[sphinx-rag] exporting the embedding model {model_id_for_info(model)!r} to int8 ONNX, once "
             f"(about 20 s; cached in {root})")
    _install(final, lambda tmp: export_model(model, tmp))
    return final


def _install(final: Path, make) -> bool:
    """Make a cache entry: ``make(tmp)`` fills a new directory beside ``final``, which is
    then renamed to it, so a reader never sees a partial entry (a failed or interrupted
    export or download leaves nothing). False (and nothing) when ``make`` returns False."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache may be shared
    try:
        if make(tmp) is False:
            return False
        try:
            os.replace(tmp, final)
        except OSError:
            if not is_model_dir(final):  # a concurrent export won the race otherwise
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
        return True
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _copy_packaged(packaged: Path, final: Path, tmp: Path):
    """The package's files into a new cache entry, with the embedding cache of an entry of
    the same name when its model is the pinned one (an export of the same weights)."""
    from .source import _memo_sha256

    for path in sorted(packaged.iterdir()):
        if path.is_file():
            shutil.copyfile(path, tmp / path.name)
    kept = final / "embedding_cache.sqlite"
    try:
        if kept.is_file() and _memo_sha256(final / "model.onnx") == PACKAGED_SHA256["model.onnx"]:
            shutil.copyfile(kept, tmp / kept.name)
    except OSError:
        pass
    shutil.rmtree(final, ignore_errors=True)  # replaced whole by _install's rename


def _is_packaged_copy(entry: Path, packaged: Path) -> bool:
    """A cache entry holding the pinned files and the package's others (the query table):
    an export of the same weights wrote the same model bytes, so its entry and embedding
    cache are kept; an entry that differs is made again."""
    from .source import _memo_sha256

    try:
        return (all(_memo_sha256(entry / name) == sha for name, sha in PACKAGED_SHA256.items())
                and all((entry / p.name).stat().st_size == p.stat().st_size
                        for p in packaged.iterdir() if p.is_file()))
    except OSError:
        return False


def _complete_info(entry: Path):
    """Add the export settings to the model_info.json of a cache entry exported before
    model_info named them (opset, min_quant_elements, export_version). The entry's cache
    key is a hash of those very settings, so they are what made it: completing its info
    keeps its model and its embedding cache. A pre-exported directory is never changed."""
    try:
        info = read_json(entry / "model_info.json")
        if not isinstance(info, dict) or all(key in info for key in EXPORT_SETTINGS):
            return
        write_model_info({**EXPORT_SETTINGS, **info}, entry)
    except (OSError, ValueError):
        pass  # a read-only cache: its builds keep the old info (a published model never matches it)
