"""Turn a sentence-transformers model into the small ONNX model directory sphinx-rag ships.

The browser and the Python indexer must compute the *same* vectors, so the model is
exported once (torch + optimum, only at export time) to fp32 ONNX and then rewritten to
weight-only int8: weights are stored as int8 with per-channel scales and dequantized
inside the graph, so every runtime still computes in fp32. This keeps the download at
~23 MB while staying within ~0.9995 cosine of the original (dynamic int8 quantization
changes rankings; see FACTS.md).

Reading an exported directory (``embed.py``) needs only onnxruntime + tokenizers;
finding the source and describing an export is ``source.py``, caching one
``cache.py``.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Collection
from pathlib import Path

import numpy as np

from .source import (
    MIN_QUANT_ELEMENTS,
    OPSET,
    TOKENIZER_FILES,
    model_id_for_info,
    model_info,
    read_sentence_transformers_config,
    resolve_model_source,
    source_sha256,
    write_model_info,
)


def _err(msg: str) -> RuntimeError:
    return RuntimeError(f"[sphinx-rag] {msg}")


class ExportUnavailable(RuntimeError):
    """Exporting needs torch and the ``export`` extra, and one of them cannot be imported."""


#: What an export imports (torch first: optimum imports it).
EXPORT_MODULES = ("torch", "onnx", "transformers", "optimum.exporters.onnx")
INSTALL_HINT = 'pip install torch==2.13.0, then pip install "sphinx-rag[export]"'
EXTRA_HINT = 'pip install "sphinx-rag[export]"'


def require_export_dependencies(model: str):
    """Raise ExportUnavailable, one line naming what to install (torch only when it is
    what is missing), unless every module an export needs imports (a machine without
    the extra would stop deep inside the export)."""
    for module in EXPORT_MODULES:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 -- ImportError, or a broken install failing as it loads
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            hint = INSTALL_HINT if module == "torch" else EXTRA_HINT
            raise ExportUnavailable(
                f"[sphinx-rag] exporting the model {model_id_for_info(model)!r} to int8 ONNX needs the export extra "
                f"({reason}): {hint}") from None


@contextlib.contextmanager
def _quiet_exporters():
    """torch/optimum/transformers' notes about a known-good export ("Opset 17 is lower
    than the recommended minimum", TracerWarning, ...) are not the reader's business."""
    from transformers.utils import logging as hf_logging  # configures its loggers on first use

    verbosity = hf_logging.get_verbosity()
    names = ("optimum", "torch", "torch.onnx")
    levels = {n: logging.getLogger(n).level for n in names}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hf_logging.set_verbosity_error()
            for n in names:
                logging.getLogger(n).setLevel(logging.ERROR)
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)


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


def quantize_weights_int8(model, keep: Collection[str] = ()):
    """Rewrite an fp32 ONNX model (in place) to weight-only int8; the graph still computes fp32.

    * MatMul weights [K, N] (input 1): int8 + per-column scale, ``DequantizeLinear(axis=1)``
      restores the fp32 tensor under its original name.
    * Gather tables [V, D] (input 0): int8 + per-row scale; rows are gathered as int8 and
      only those rows are scaled (Gather, Cast, Mul), so a 30k-row vocabulary is never
      dequantized as a whole at run time.
    Tensors smaller than ``MIN_QUANT_ELEMENTS``, anything used otherwise and the initializers
    named in ``keep`` stay fp32.
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
            or name in keep
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
    from optimum.exporters.onnx import main_export

    with _quiet_exporters():
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


def export_model(model: str, out_dir: str | os.PathLike) -> Path:
    """Export ``model`` (id or directory) to a weight-int8 ONNX model directory ``out_dir``.

    Needs torch + optimum (ExportUnavailable otherwise). Deterministic: the same source
    gives a byte-identical model.onnx.
    """
    require_export_dependencies(model)
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
    write_model_info(model_info(model, src, cfg, sha), out_dir)
    return out_dir
