"""What a cheaper way of embedding the chunks costs in retrieval quality (issue 26, item 2).

Not a test. Every chunk of a built site is embedded again with a variant of the model
or of its settings, quantized as a build does (``embed.quantize_vectors``), and put in
place of the published vectors (the clusters, their centroids and the static encoder
stay the site's). Queries keep the published model (the browser's query model), so
this measures what a build that embedded its chunks that way would give readers.
Printed per question set: MRR@10 and Recall@10 of dense (the model), rrf (the model)
and rrf-static, the published vectors' and the variant's, and the difference in rrf
MRR@10 with a 95% paired-bootstrap interval over the questions.

Variants: ``dynamic`` (activations quantized at run time, ``bench_embed.dynamic_int8``),
``max128`` (truncated at 128 tokens instead of the model's 256), ``plain`` (an API
chunk's embedding input with its reST inline markup rendered, ``chunk.display.rst_inline``:
``*cls*`` -> ``cls``, ``:class:`~a.B``` -> ``B``; the same model).

    python benchmarks/chunk_vectors_quality.py /work/out/NAME/demo eval/demo_questions.json --variant dynamic
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np
from bench_embed import Raw, dynamic_int8, session
from fit_variants import per_question

from sphinx_rag.search.index import IndexReader, load_chunk_records
from sphinx_rag.model.embed import Embedder, embedding_text, quantize_vectors
from sphinx_rag.tools.evaluate import load_questions
from sphinx_rag.search.retrieve import Searcher


def variant_vectors(html: Path, model_dir: Path, variant: str, work: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """int8 vectors and scales of every chunk embedded with the variant, and its CPU seconds."""
    records = load_chunk_records(html)
    texts = [embedding_text(r["kind"], r["text"]) for r in records]
    embedder = Embedder(model_dir, threads=2)
    if variant == "dynamic":
        run = Raw(session(dynamic_int8(model_dir, work)), embedder, texts)
    elif variant == "max128":
        run = Raw(embedder.session, embedder, texts, max_len=128)
    elif variant == "plain":
        from sphinx_rag.chunk.display import rst_inline

        plain = [rst_inline(t) if r["kind"] == "api" else t for r, t in zip(records, texts)]
        print(f"{sum(a != b for a, b in zip(plain, texts))} of {len(texts)} embedding inputs change")
        run = lambda: embedder.embed(plain)  # noqa: E731
    else:
        raise SystemExit(f"unknown variant {variant!r}")
    start = time.process_time()
    vectors = run()
    return (*quantize_vectors(vectors), time.process_time() - start)


def swap_vectors(searcher: Searcher, vectors: np.ndarray, scales: np.ndarray) -> None:
    """The searcher's clusters read the given vectors instead of the published ones."""
    index = searcher.index
    original = index.cluster

    def cluster(c: int):
        published = original(c)
        return type(published)(published.ids, scales[published.ids], vectors[published.ids])

    index.cluster = cluster


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--variant", default="dynamic")
    args = parser.parse_args(argv)
    sets = {p.stem: load_questions(p) for p in args.questions}
    model_dir = Path(os.environ.get("SPHINX_RAG_MODEL_DIR") or IndexReader(args.site).model_dir)
    with tempfile.TemporaryDirectory() as tmp:
        vectors, scales, cpu = variant_vectors(args.site, model_dir, args.variant, Path(tmp))
    methods = [("dense", "model"), ("rrf", "model"), ("rrf", "static")]
    print(f"{args.site}: {len(vectors)} chunks embedded with {args.variant} in {cpu:.0f} CPU s; "
          f"load {os.getloadavg()[0]:.1f}\n")
    print("| set | method | published MRR@10 (R@10) | " + args.variant + " MRR@10 (R@10) | MRR diff (95%) |")
    print("|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for name, qs in sets.items():
        for fusion, encoder in methods:
            base = per_question(Searcher(args.site, fusion=fusion, encoder=encoder), qs)
            changed = Searcher(args.site, fusion=fusion, encoder=encoder)
            swap_vectors(changed, vectors, scales)
            other = per_question(changed, qs)
            d = other[:, 0] - base[:, 0]
            low, high = np.percentile(d[rng.integers(0, len(d), (10_000, len(d)))].mean(axis=1), [2.5, 97.5])
            label = fusion if encoder == "model" else f"{fusion}-static"
            print(f"| {name} ({len(qs)}) | {label} | {base[:, 0].mean():.3f} ({base[:, 1].mean():.3f}) | "
                  f"{other[:, 0].mean():.3f} ({other[:, 1].mean():.3f}) | {d.mean():+.3f} ({low:+.3f} to {high:+.3f}) |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
