"""Build-time benchmark (index format 2): build time with and without sphinx_rag, cold
and with a warm embedding cache, a one-page edit rebuilt incrementally, embedding
throughput, index bytes per chunk and CLI query latency; on the demo docs and on an
API corpus of about 25,000 chunks (benchmarks/make_api_corpus.py --preset 25k).

Not a test: prints numbers (medians and ratios; these machines are noisy).

    python benchmarks/bench_build.py                              # demo + the 25k corpus
    python benchmarks/bench_build.py --skip-corpus                # demo only
    python benchmarks/bench_build.py --corpus-preset default      # the smaller scikit-learn corpus
    python benchmarks/bench_build.py --no-cold-embedding          # skip the builds that embed every chunk

Builds go to a temporary directory under /tmp. "cold" = a fresh output and doctree
directory; "no cache" = SPHINX_RAG_EMBED_CACHE=0 (every chunk embedded); "warm cache"
= the embedding cache holds every chunk (a full rebuild after an edit); "one-page edit" =
an incremental rebuild (same doctrees, no -E) after appending a paragraph to one page,
also measured without sphinx_rag (SPHINX_RAG_DISABLE=1). Target (issue 9): a one-page
edit at most 1.2x plain Sphinx at 25k chunks.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from harness import Stopwatch, copy_sources, edit_page, load, scratch
from site_helpers import DEMO, build_site, manifest_of

from sphinx_rag.search.index import ASSET_DIR

EDIT_TARGET = 1.2  # one-page edit rebuild, sphinx_rag / plain, at 25k chunks

QUERIES = [
    "what values can the strategy parameter take", "how to impute missing values",
    "regularization strength of ridge", "cross validation folds shuffle", "scale features to unit variance",
    "number of neighbors", "confusion matrix", "pipeline of transformers", "fit_transform", "random_state",
]


def build(src: Path, out: Path, *, with_rag: bool, jobs: int = 1, embed_cache: bool = False,
          clean: bool = True) -> float:
    """Seconds of a build into out (out/.doctrees); clean: out removed first (a cold build)."""
    env = {"SPHINX_RAG_EMBED_CACHE": "1" if embed_cache else "0"}  # "0": real embedding work
    if not with_rag:
        env["SPHINX_RAG_DISABLE"] = "1"
    if clean:
        shutil.rmtree(out, ignore_errors=True)
    with Stopwatch() as t:
        build_site(src, out, "-j", str(jobs), "-d", str(out / ".doctrees"), fresh=False, env=env)
    return t.seconds


def edit_rebuild(src: Path, out: Path, *, with_rag: bool, jobs: int, rounds: int = 2) -> list[float]:
    """Seconds of incremental rebuilds after a one-page edit (out built first if needed)."""
    if not (out / ".doctrees").is_dir():
        build(src, out, with_rag=with_rag, jobs=jobs, embed_cache=True)
    build(src, out, with_rag=with_rag, jobs=jobs, embed_cache=True, clean=False)  # settle: nothing to do
    times = []
    for r in range(rounds):
        page, old = edit_page(src)
        try:
            times.append(build(src, out, with_rag=with_rag, jobs=jobs, embed_cache=True, clean=False))
        finally:
            page.write_text(old)
        if r + 1 < rounds:
            build(src, out, with_rag=with_rag, jobs=jobs, embed_cache=True, clean=False)  # back to the original
    return times


def embedding_throughput(html: Path, sample: int = 2000, rounds: int = 3) -> tuple[float, float]:
    """Median chunks/s of Embedder vs a bare onnxruntime loop over the same chunks and batches.

    Both are warmed up first and measured in alternating rounds, so neither pays
    the session's first-run cost or gets a quieter moment of the shared machine.
    """
    import onnxruntime as ort

    from sphinx_rag.search.index import IndexReader, load_chunk_records
    from sphinx_rag.chunk import Chunk
    from sphinx_rag.model.embed import SESSION_CONFIG, Embedder, embedding_input, load_tokenizer

    records = load_chunk_records(html)
    chunks = records[:: max(1, len(records) // sample)]  # what the build embeds, sampled
    texts = [embedding_input(Chunk(doc=c["doc"], anchor="", headings=[], kind=c["kind"], text=c["text"]))
             for c in chunks]
    model_dir = IndexReader(html).model_dir
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
    """Index file bytes per chunk, the model excluded (manifest.json and manifest.js included)."""
    root = html / ASSET_DIR
    total = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.relative_to(root).parts[0].startswith("model-"))
    return total / manifest_of(html)["counts"]["chunks"]


def cli_latency(html: Path, n: int = 50) -> tuple[float, float]:
    """(median seconds of `sphinx-rag search` as a process, median in-process search)."""
    from sphinx_rag.search.retrieve import Searcher

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


def bench(name: str, src: Path, work: Path, jobs: int, *, cold_embedding: bool, edit_rounds: int,
          cache_is_warm: bool = False):
    log = lambda msg: print(msg, flush=True)  # noqa: E731
    log(f"\n## {name}")
    plain = build(src, work / "plain", with_rag=False, jobs=jobs)
    log(f"build time without sphinx_rag (cold):  {plain:.1f} s")
    if cold_embedding:
        rag = build(src, work / "rag-nocache", with_rag=True, jobs=jobs)
        log(f"with sphinx_rag, cold, no embedding cache: {rag:.1f} s   (ratio {rag / plain:.2f}x, -j {jobs}, every chunk embedded)")
        shutil.rmtree(work / "rag-nocache", ignore_errors=True)
    if not cache_is_warm:
        found = build(src, work / "rag", with_rag=True, jobs=jobs, embed_cache=True)  # fills the cache if it is not
        log(f"with sphinx_rag, cold, embedding cache as found: {found:.1f} s   (ratio {found / plain:.2f}x)")
    cached = build(src, work / "rag", with_rag=True, jobs=jobs, embed_cache=True)
    log(f"with sphinx_rag, cold, warm embedding cache: {cached:.1f} s   (ratio {cached / plain:.2f}x: a full rebuild)")
    html = work / "rag"
    n = manifest_of(html)["counts"]["chunks"]
    log(f"chunks:                                {n}")
    if edit_rounds:
        e_plain = edit_rebuild(src, work / "plain", with_rag=False, jobs=jobs, rounds=edit_rounds)
        e_rag = edit_rebuild(src, html, with_rag=True, jobs=jobs, rounds=edit_rounds)
        ratio = statistics.median(e_rag) / statistics.median(e_plain)
        ok = "met" if ratio <= EDIT_TARGET else "MISSED"
        log(f"one-page edit, incremental rebuild:    plain {statistics.median(e_plain):.1f} s "
            f"({', '.join(f'{t:.1f}' for t in e_plain)}), with sphinx_rag {statistics.median(e_rag):.1f} s "
            f"({', '.join(f'{t:.1f}' for t in e_rag)})   ratio {ratio:.2f}x [target <= {EDIT_TARGET}x at 25k: {ok}]")
    ours, raw = embedding_throughput(html)
    log(f"embedding throughput:                  {ours:.1f} chunks/s   raw onnxruntime: {raw:.1f} chunks/s   "
        f"(ratio {ours / raw:.2f}, medians of 3 alternating rounds on {min(n, 2000)} chunks, 2 threads)")
    log(f"index bytes per chunk:                 {asset_bytes_per_chunk(html):.0f} B (files on disk, model excluded)")
    cli, inproc = cli_latency(html, n=10)
    log(f"CLI query latency (median of 10):      {cli * 1000:.0f} ms per process   in-process search: {inproc * 1000:.1f} ms")
    log(f"load average:                          {load():.1f} (2 cores; other work competes for them)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--corpus-preset", default="25k", help="make_api_corpus preset (default 25k)")
    parser.add_argument("--corpus-modules", default=None, help="modules instead of the preset's")
    parser.add_argument("--corpus-src", type=Path, default=None,
                        help="an existing corpus project to use (it is edited and restored)")
    parser.add_argument("--no-cold-embedding", action="store_true",
                        help="skip the cold builds without the embedding cache (every chunk embedded)")
    parser.add_argument("--demo-cold-embedding", action="store_true",
                        help="with --no-cold-embedding: still measure it on the demo docs")
    parser.add_argument("--corpus-cache-is-warm", action="store_true",
                        help="the embedding cache already holds the corpus's chunks (e.g. the 50k corpus was built): "
                        "skip the build that fills it")
    parser.add_argument("--edit-rounds", type=int, default=4,
                        help="one-page edits timed with and without sphinx_rag (plain Sphinx alone varies by 10%% "
                        "between edits: the median of 4)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="parent of the temporary build directory")
    parser.add_argument("--keep", action="store_true", help="keep the builds (their directory is printed)")
    args = parser.parse_args()
    with scratch("sphinx-rag-bench-", args.work, keep=args.keep, kept=" (<name>/rag is the site with sphinx_rag)") as work:
        if not args.skip_demo:
            src = copy_sources(DEMO, work / "demo-src")
            bench("demo docs", src, work / "demo", args.jobs,
                  cold_embedding=not args.no_cold_embedding or args.demo_cold_embedding,
                  edit_rounds=args.edit_rounds)
        if not args.skip_corpus:
            from make_api_corpus import PRESETS, write_project

            if args.corpus_src:
                src, label = args.corpus_src, f"API corpus {args.corpus_src}"
            else:
                modules, target = PRESETS[args.corpus_preset]
                src = work / "corpus-src"
                n = write_project(src, args.corpus_modules.split(",") if args.corpus_modules else modules, target)
                label = f"API corpus, preset {args.corpus_preset} ({n} objects, autosummary)"
            bench(label, src, work / "corpus", args.jobs, cold_embedding=not args.no_cold_embedding,
                  edit_rounds=args.edit_rounds, cache_is_warm=args.corpus_cache_is_warm)


if __name__ == "__main__":
    main()
