"""Build-time benchmark: chunk counts, build time ratio, embedding throughput,
asset size and CLI query latency, on the demo docs and on a larger API corpus.

Not a test: prints numbers (medians and ratios; these machines are noisy).

    python benchmarks/bench_build.py [--corpus-modules sklearn.linear_model,...] [--skip-corpus]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(HERE), str(REPO / "tests")]  # make_api_corpus; site_helpers (shared with the tests)

from site_helpers import DEMO, build_site, manifest_of  # noqa: E402

QUERIES = [
    "what values can the strategy parameter take", "how to impute missing values",
    "regularization strength of ridge", "cross validation folds shuffle", "scale features to unit variance",
    "number of neighbors", "confusion matrix", "pipeline of transformers", "fit_transform", "random_state",
]


def build(src: Path, out: Path, *, with_rag: bool, jobs: int = 1, embed_cache: bool = False) -> float:
    """Seconds of a clean build into out (removed first)."""
    env = {"SPHINX_RAG_EMBED_CACHE": "1" if embed_cache else "0"}  # "0": real embedding work
    if not with_rag:
        env["SPHINX_RAG_DISABLE"] = "1"
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    build_site(src, out, "-j", str(jobs), fresh=False, env=env)
    return time.perf_counter() - start


def embedding_throughput(html: Path, sample: int = 2000, rounds: int = 3) -> tuple[float, float]:
    """Median chunks/s of Embedder vs a bare onnxruntime loop over the same chunks and batches.

    Both are warmed up first and measured in alternating rounds, so neither pays
    the session's first-run cost or gets a quieter moment of the shared machine.
    """
    import onnxruntime as ort

    from sphinx_rag.assets import load_assets
    from sphinx_rag.chunk import Chunk
    from sphinx_rag.embed import SESSION_CONFIG, Embedder, embedding_input, load_tokenizer

    assets = load_assets(html)
    chunks = assets.chunks[:: max(1, len(assets.chunks) // sample)]  # what the build embeds, sampled
    texts = [embedding_input(Chunk(doc=c["doc"], anchor="", headings=[], kind=c["kind"], text=c["text"]))
             for c in chunks]
    model_dir = assets.model_dir
    embedder = Embedder(model_dir)

    tok = load_tokenizer(model_dir)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    for key, value in SESSION_CONFIG.items():  # same graph optimisation settings as Embedder
        so.add_session_config_entry(key, value)
    sess = ort.InferenceSession(str(model_dir / "model.onnx"), so, providers=["CPUExecutionProvider"])

    def raw_loop(batch_texts):
        enc = tok.encode_batch(batch_texts)
        order = sorted(range(len(enc)), key=lambda i: -len(enc[i].ids))
        for s in range(0, len(order), 32):
            batch = [enc[i] for i in order[s:s + 32]]
            w = max(len(e.ids) for e in batch)
            ids = np.zeros((len(batch), w), np.int64)
            mask = np.zeros_like(ids)
            for i, e in enumerate(batch):
                ids[i, :len(e.ids)] = e.ids
                mask[i, :len(e.ids)] = 1
            sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})

    embedder.embed(texts[:64], batch_size=32)  # warm-up
    raw_loop(texts[:64])
    ours, raw = [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        embedder.embed(texts, batch_size=32)
        ours.append(len(texts) / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        raw_loop(texts)
        raw.append(len(texts) / (time.perf_counter() - t0))
    return statistics.median(ours), statistics.median(raw)


def asset_bytes_per_chunk(html: Path) -> float:
    manifest = manifest_of(html)
    total = sum(f["bytes"] for name, f in manifest["files"].items() if not name.startswith("model/"))
    return total / manifest["counts"]["chunks"]


def cli_latency(html: Path, n: int = 50) -> tuple[float, float]:
    """(median seconds of `sphinx-rag search` as a process, median in-process search)."""
    from sphinx_rag.retrieve import Searcher

    times = []
    for i in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sphinx_rag", "search", str(html), QUERIES[i % len(QUERIES)], "--json"],
                       check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    searcher = Searcher(html)
    searcher.search("warm up")
    inproc = []
    for i in range(n):
        t0 = time.perf_counter()
        searcher.search(QUERIES[i % len(QUERIES)] + f" {i}")
        inproc.append(time.perf_counter() - t0)
    return statistics.median(times), statistics.median(inproc)


def bench(name: str, src: Path, work: Path, jobs: int):
    plain = build(src, work / "plain", with_rag=False, jobs=jobs)
    rag = build(src, work / "rag", with_rag=True, jobs=jobs)
    build(src, work / "rag-cached", with_rag=True, jobs=jobs, embed_cache=True)  # fills the cache
    cached = build(src, work / "rag-cached", with_rag=True, jobs=jobs, embed_cache=True)
    html = work / "rag"
    n = manifest_of(html)["counts"]["chunks"]
    ours, raw = embedding_throughput(html)
    cli, inproc = cli_latency(html)
    print(f"\n## {name}")
    print(f"chunks:                        {n}")
    print(f"build time without sphinx_rag: {plain:.1f} s")
    print(f"build time with sphinx_rag:    {rag:.1f} s   (ratio {rag / plain:.2f}x, -j {jobs}, every chunk embedded)")
    print(f"  same, embedding cache warm:  {cached:.1f} s   (ratio {cached / plain:.2f}x: a full rebuild after an edit)")
    print(f"embedding throughput:          {ours:.1f} chunks/s   raw onnxruntime: {raw:.1f} chunks/s   "
          f"(ratio {ours / raw:.2f}, medians of 3 alternating rounds on the same {min(n, 2000)} chunks, 2 threads)")
    print(f"asset bytes per chunk:         {asset_bytes_per_chunk(html):.0f} B (excluding the model)")
    load = os.getloadavg()[0]
    print(f"load average during the run:   {load:.1f} (2 cores; other work competes for them)")
    print(f"CLI query latency (median/50): {cli * 1000:.0f} ms per process   in-process search: {inproc * 1000:.1f} ms")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--corpus-modules", default=None)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sphinx-rag-bench-"))
    bench("demo docs", DEMO, work / "demo", args.jobs)
    if not args.skip_corpus:
        from make_api_corpus import DEFAULT_MODULES, write_project

        src = work / "corpus-src"
        n = write_project(src, (args.corpus_modules or DEFAULT_MODULES).split(","))
        bench(f"scikit-learn API corpus ({n} objects, autosummary)", src, work / "corpus", args.jobs)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
