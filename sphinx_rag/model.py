"""Where the exported model a build embeds with lives: the cache.

``sphinx_rag_model`` is a Hugging Face id or a local directory (``model_source.py`` finds
and describes it). ``cached_model_dir`` gives the exported int8 ONNX directory every build
embeds with: a cache entry named by the model, its source weights and the export settings,
filled once by the published site's model (the warm start) or by an export
(``export_model.py``, torch + optimum), and never importing torch on a cache hit. An
already exported directory is used as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

from .model_source import (EXPORT_SETTINGS, TOKENIZER_FILES, canonical_id, is_model_dir, model_id_for_info,
                           model_info, read_json, resolve_model_source, sha256_file, source_sha256, write_model_info)

__all__ = ["default_cache_dir", "cache_key", "cached_model_dir"]


def default_cache_dir() -> Path:
    env = os.environ.get("SPHINX_RAG_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/sphinx-rag/models").expanduser()


def cache_key(model: str, src: Path) -> str:
    """Short hash naming the cache entry: model, source weights and export settings."""
    p = Path(model).expanduser()
    ident = str(p.resolve()) if p.is_dir() else canonical_id(model)
    payload = json.dumps({"model": ident, "source_sha256": source_sha256(src), **EXPORT_SETTINGS}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def cached_model_dir(model: str, cache_dir: str | os.PathLike | None = None, *,
                     announce=lambda message: None, published=None) -> Path:
    """Exported model directory for ``model``, exporting it once into the cache.

    ``model`` may itself be an exported directory (model.onnx + model_info.json): then it
    is used directly. A cache hit never imports torch/optimum. ``announce`` is told
    before an export starts (the longest step of a first build). ``published``: on a
    cache miss, the published site's model is tried first (``warm_start.PublishedModel``:
    called with the info a local export would write and a directory to fill; True when it
    did): a CI runner with an empty cache then needs neither torch nor an export.
    """
    if is_model_dir(model):
        return Path(model).expanduser().resolve()
    src = resolve_model_source(model)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", model_id_for_info(model).split("/")[-1]).strip("-")
    final = root / f"{slug or 'model'}-{cache_key(model, src)}"
    if is_model_dir(final):
        _complete_info(final)
        return final
    if published is not None and _install(final, lambda tmp: _from_site(model, src, tmp, published)):
        return final
    from .export_model import export_model, require_export_dependencies

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


def _from_site(model: str, src: Path, tmp: Path, published) -> bool:
    """Fill ``tmp`` as an export of ``model`` would, with the published site's model.onnx:
    the site's model must have the info a local export writes (model id, source weights'
    hash, export settings: ``model_source.model_info``, no torch needed) and this
    source's tokenizer files (``published`` checks both and fetches only what differs
    from the source: the model, about 23 MB). The rest comes from the source, as in an export."""
    info = model_info(model, src)
    local = {name: sha256_file(src / name) for name in ("tokenizer.json", "vocab.txt") if (src / name).is_file()}
    if not published(info, local, tmp):
        return False
    for name in TOKENIZER_FILES:
        if (src / name).is_file():
            shutil.copyfile(src / name, tmp / name)
    write_model_info(info, tmp)
    return is_model_dir(tmp) and (tmp / "tokenizer.json").is_file() and (tmp / "vocab.txt").is_file()


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
