"""The least a cold build can take on this machine: Sphinx's CPU plus the model's, spread
over every core with nothing idle (issue 26's cold target, set against it).

A cold build (empty model and embedding caches, no warm start) must run the model over
every chunk's embedding input and over the static encoder's pseudo-queries, whatever
the scheduling. This script measures, on a built site and its sources:

1. a plain Sphinx build (``sphinx_rag`` off), its wall time and its CPU time;
2. the model's cost per chunk and per pseudo-query in core-seconds with every core busy
   (``embed.Embedder`` on one onnxruntime thread per core, the build's batching: wall
   time x cores; two busy cores each run slower than one alone), over a sample,
   extrapolated to the site's chunks and to the fit's pseudo-queries
   (``static_encoder``'s budget);

and prints the floor: (Sphinx's CPU + the model's CPU) / cores, as a multiple of the
plain build's wall time. No overlap can beat it; the build as shipped reaches it only
if the model runs on every core Sphinx leaves idle, all the time.

Usage::

    python benchmarks/cold_floor.py SITE_HTML --corpus-src SRC [--jobs 1] [--sample 1500]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
from bench_static_encoder import site_corpus

from sphinx_rag.index import encoder_fit
from sphinx_rag.model.embed import Embedder, embedding_input


def plain_build(src: Path, jobs: int) -> tuple[float, float]:
    """(wall, CPU) seconds of ``sphinx-build`` without sphinx_rag, in a fresh output directory."""
    out = Path(tempfile.mkdtemp(prefix="cold-floor-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-j", str(jobs), "-d",
                        str(out / ".doctrees"), str(src), str(out)], cwd=src, check=True,
                       env={**os.environ, "SPHINX_RAG_DISABLE": "1"}, stdout=subprocess.DEVNULL)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def core_seconds_per_text(embedder: Embedder, texts: list[str], cores: int) -> float:
    """Core-seconds per text with ``embedder`` on every core (a warm-up, then the median of 3)."""
    embedder.embed(texts[:64])
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        embedder.embed(texts)
        runs.append(time.perf_counter() - start)
    return sorted(runs)[1] * cores / len(texts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a site built with sphinx_rag (its chunks and model)")
    parser.add_argument("--corpus-src", type=Path, required=True, help="its Sphinx source directory")
    parser.add_argument("--jobs", type=int, default=1, help="sphinx-build -j (default 1)")
    parser.add_argument("--sample", type=int, default=1500, help="texts sampled per kind (default 1,500)")
    args = parser.parse_args(argv)

    _, chunks, _, _, model_dir = site_corpus(args.site)
    texts = [embedding_input(c) for c in chunks]
    unique = sorted(set(texts))
    budget = min(encoder_fit.MAX_QUERIES, encoder_fit.QUERIES_PER_CHUNK * len(chunks))
    queries = sorted({q for q, _ in encoder_fit.pseudo_queries([c.text for c in chunks],
                                                                   [c.title for c in chunks], budget)})
    rng = random.Random(0)
    cores = os.cpu_count() or 1
    embedder = Embedder(model_dir, threads=cores)
    per_chunk = core_seconds_per_text(embedder, rng.sample(unique, min(args.sample, len(unique))), cores)
    per_query = core_seconds_per_text(embedder, rng.sample(queries, min(args.sample, len(queries))), cores)
    wall, cpu = plain_build(args.corpus_src.resolve(), args.jobs)
    chunk_cpu, query_cpu = per_chunk * len(unique), per_query * len(queries)
    floor = (cpu + chunk_cpu + query_cpu) / cores
    print(f"| {args.corpus_src.name}, -j {args.jobs}, {cores} cores | seconds |")
    print("|---|---|")
    print(f"| plain Sphinx: wall | {wall:.1f} |")
    print(f"| plain Sphinx: CPU | {cpu:.1f} |")
    print(f"| the model over {len(unique):,} chunk texts ({per_chunk * 1000:.2f} core-ms each) | {chunk_cpu:.1f} |")
    print(f"| the model over the fit's {len(queries):,} pseudo-queries ({per_query * 1000:.2f} core-ms each) | {query_cpu:.1f} |")
    print(f"| **floor of a cold build** (all CPU / {cores} cores) | **{floor:.1f} = {floor / wall:.2f}x plain** |")


if __name__ == "__main__":
    main()
