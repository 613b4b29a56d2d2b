"""Embedding throughput: ``embed.Embedder`` against raw onnxruntime, and export settings (issue 26).

Not a test. On a built site, two kinds of input are embedded, as a build embeds them:
the chunks (``embedding_input``, a sample) and the static encoder's pseudo-queries (a
sample of what the fit cuts). Each variant runs on one thread in alternating rounds after
a warm-up, and the table gives the median CPU seconds per 1,000 texts (the work: robust
when other jobs share the cores, unlike wall time, also printed), the speed-up over
``Embedder`` (batch 32), and how far its vectors are from ``Embedder``'s (cosine, mean
and min):

- ``raw onnxruntime``: the same batches, tokenized beforehand, session.run alone
  (what tokenization, padding and pooling cost);
- ``batch by tokens``: batches cut by a budget of padded tokens instead of 32 texts;
- ``batch 8`` / ``batch 128``: other batch sizes (texts sorted by length, as now);
- ``graph opt basic`` / ``graph opt extended``: other onnxruntime optimization levels;
- ``max 128 tokens``: truncation at 128 tokens instead of the model's 256;
- ``QDQ fused``: the shipped model without ``embed.SESSION_CONFIG``: onnxruntime fuses
  each int8 weight with its MatMul (MatMulNBits, int8 activations), no other file;
- ``dynamic int8``: activations quantized at run time (``quantize_dynamic``, per channel),
  from the fp32 graph of the shipped model (its int8 weights dequantized).

    python benchmarks/bench_embed.py /work/out/NAME/demo --sample 700 --queries 3000
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np

from sphinx_rag.model.embed import SESSION_CONFIG, Embedder, embedding_text, load_tokenizer


def site_texts(html: Path, sample: int, queries: int) -> tuple[Path, list[str], list[str]]:
    """(model directory, a sample of chunk inputs, a sample of the fit's pseudo-queries)."""
    from sphinx_rag.index import encoder_fit
    from sphinx_rag.search.index import IndexReader, load_chunk_records

    records = load_chunk_records(html)
    model_dir = Path(os.environ.get("SPHINX_RAG_MODEL_DIR") or IndexReader(html).model_dir)
    rng = np.random.default_rng(0)
    picked = sorted(rng.choice(len(records), min(sample, len(records)), replace=False).tolist())
    chunks = [embedding_text(records[i]["kind"], records[i]["text"]) for i in picked]
    texts = [r["text"] for r in records]
    titles = [r.get("title", "") for r in records]
    budget = min(encoder_fit.MAX_QUERIES, encoder_fit.QUERIES_PER_CHUNK * len(texts))
    pairs = encoder_fit.pseudo_queries(texts, titles, budget)
    chosen = sorted(rng.choice(len(pairs), min(queries, len(pairs)), replace=False).tolist())
    return model_dir, chunks, [pairs[i][0] for i in chosen]


def session(path: Path, threads: int = 2, level: str = "all", config: dict | None = None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.graph_optimization_level = {"basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                   "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[level]
    for key, value in (SESSION_CONFIG if config is None else config).items():
        so.add_session_config_entry(key, value)
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def dynamic_int8(model_dir: Path, work: Path) -> Path:
    """The shipped model's graph with its weights in fp32 (DequantizeLinear folded by onnxruntime),
    then dynamically quantized (int8 weights per channel, activations quantized per run)."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = work / "fp32.onnx"
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(fp32)
    for key, value in SESSION_CONFIG.items():
        so.add_session_config_entry(key, value)
    ort.InferenceSession(str(model_dir / "model.onnx"), so, providers=["CPUExecutionProvider"])
    out = work / "dynamic.onnx"
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
    return out


class Raw:
    """Pre-tokenized, pre-padded batches through session.run: onnxruntime's own speed."""

    def __init__(self, sess, embedder: Embedder, texts: list[str], token_budget: int | None = None,
                 batch: int = 32, max_len: int | None = None):
        tok = load_tokenizer(embedder.model_dir, max_len or embedder.max_seq_length)
        enc = tok.encode_batch(texts)
        self.sess, self.n = sess, len(texts)
        self.names = {i.name for i in sess.get_inputs()}
        order = sorted(range(len(enc)), key=lambda i: -len(enc[i].ids))
        self.batches, self.orders = [], []
        at = 0
        while at < len(order):
            width = len(enc[order[at]].ids)
            size = max(1, token_budget // width) if token_budget else batch
            idx = order[at:at + size]
            at += len(idx)
            ids = np.zeros((len(idx), width), np.int64)
            mask = np.zeros_like(ids)
            for r, i in enumerate(idx):
                ids[r, :len(enc[i].ids)] = enc[i].ids
                mask[r, :len(enc[i].ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            self.batches.append({k: v for k, v in feed.items() if k in self.names})
            self.orders.append(idx)

    def __call__(self) -> np.ndarray:
        out = np.zeros((self.n, 384), np.float32)
        for feed, idx in zip(self.batches, self.orders):
            hidden = self.sess.run(None, feed)[0]
            m = feed["attention_mask"][:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / m.sum(axis=1)
            out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out


def measure(variants: dict, n: int, rounds: int) -> dict[str, tuple[float, float, np.ndarray]]:
    """Each variant's median CPU seconds per 1,000 texts and median texts/s (wall) over
    alternating rounds, and its vectors. Every session runs on one thread, so CPU time is
    the work done (no spinning thread pool in it), whatever else the machine is running."""
    cpu: dict[str, list[float]] = {k: [] for k in variants}
    wall: dict[str, list[float]] = {k: [] for k in variants}
    vectors = {}
    for fn in variants.values():  # warm-up
        fn()
    for _ in range(rounds):
        for name, fn in variants.items():
            c0, t0 = time.process_time(), time.perf_counter()
            vectors[name] = fn()
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - t0)
    return {k: (1000 * statistics.median(cpu[k]) / n, n / statistics.median(wall[k]), vectors[k]) for k in variants}


def table(label: str, texts: list[str], model_dir: Path, dynamic: Path | None, rounds: int, token_budget: int):
    embedder = Embedder(model_dir, threads=1)
    sess = embedder.session
    variants = {
        "Embedder, batch 32 (now)": lambda: embedder.embed(texts, batch_size=32),
        "raw onnxruntime, same batches": Raw(sess, embedder, texts),
        "raw, batch 8": Raw(sess, embedder, texts, batch=8),
        "raw, batch 128": Raw(sess, embedder, texts, batch=128),
        f"raw, batch by tokens ({token_budget})": Raw(sess, embedder, texts, token_budget),
        "raw, graph opt basic": Raw(session(model_dir / "model.onnx", 1, "basic"), embedder, texts),
        "raw, graph opt extended": Raw(session(model_dir / "model.onnx", 1, "extended"), embedder, texts),
        "raw, max 128 tokens": Raw(sess, embedder, texts, max_len=128),
    }
    # without session.disable_quant_qdq, onnxruntime fuses each int8 weight's DequantizeLinear
    # and MatMul into MatMulNBits, whose default accuracy level quantizes activations to int8
    variants["raw, QDQ fused (MatMulNBits)"] = Raw(session(model_dir / "model.onnx", 1, config={}), embedder, texts)
    if dynamic is not None:
        variants["raw, dynamic int8"] = Raw(session(dynamic, 1), embedder, texts)
    lengths = [len(e.ids) for e in embedder.tokenizer.encode_batch(texts)]
    results = measure(variants, len(texts), rounds)
    ref_cpu, _, ref = results["Embedder, batch 32 (now)"]
    print(f"\n### {label}: {len(texts)} texts, tokens median {statistics.median(lengths):.0f}, "
          f"max {max(lengths)}; one thread, medians of {rounds} alternating rounds, load {os.getloadavg()[0]:.1f}\n")
    print("| variant | CPU s per 1,000 texts | speed vs Embedder (CPU) | texts/s (wall, noisy) "
          "| cosine to Embedder's vectors: mean / min |")
    print("|---|---|---|---|---|")
    for name, (cpu, speed, vec) in results.items():
        cos = (vec * ref).sum(axis=1) / np.maximum(np.linalg.norm(vec, axis=1) * np.linalg.norm(ref, axis=1), 1e-12)
        print(f"| {name} | {cpu:.2f} | {ref_cpu / cpu:.2f}x | {speed:.0f} | {cos.mean():.4f} / {cos.min():.4f} |",
              flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built HTML directory")
    parser.add_argument("--sample", type=int, default=600, help="chunks embedded")
    parser.add_argument("--queries", type=int, default=2000, help="pseudo-queries embedded")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--token-budget", type=int, default=4096, help="padded tokens per batch (batch by tokens)")
    parser.add_argument("--no-dynamic", action="store_true", help="skip the dynamic int8 variant")
    args = parser.parse_args(argv)
    model_dir, chunks, queries = site_texts(args.site, args.sample, args.queries)
    with tempfile.TemporaryDirectory() as tmp:
        dynamic = None if args.no_dynamic else dynamic_int8(model_dir, Path(tmp))
        table("pseudo-queries", queries, model_dir, dynamic, args.rounds, args.token_budget)
        table("chunks (embedding inputs)", chunks, model_dir, dynamic, args.rounds, args.token_budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
