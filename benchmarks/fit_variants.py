"""Cheaper static encoder fits against today's, on the fused ranking (issue 26, item 2).

Not a test. The encoder is fitted again, in-process, from a built site's chunks and
vectors, once per variant and pseudo-query seed, and scored on each question set:
rrf-static MRR@10 and Recall@10 (the fused ranking readers get before the model has
loaded; ``rrf`` with the model does not use the encoder), and dense-static MRR@10.
Each cell is the mean over the seeds. The last columns give, per set, the difference
in rrf-static MRR@10 against the first variant with a 95% interval from a paired
bootstrap over the questions (each question's score averaged over the seeds first).

Variants (``--variants``, comma-separated):

- ``now``: today's fit (the model embeds every pseudo-query; 24 per chunk, at most 16,000);
- ``pcN``: N pseudo-queries per chunk instead of 24;
- ``capN``: at most N pseudo-queries;
- ``chunk``: every pseudo-query's target is its source chunk's vector (nothing embedded);
- ``mix``: titles embedded by the model, spans and sentences targeted at their chunk;
- ``dyn``: the pseudo-queries embedded by a dynamically quantized copy of the model
  (int8 activations: faster, a little off the model; only the targets move);
- combinations with ``+``: ``pc8+dyn``.

The fit time printed is one fit with the embedding cache off (default seed), under
whatever load the machine has; compare rows, not runs.

    python benchmarks/fit_variants.py /work/out/NAME/demo eval/demo_questions.json \\
        eval/demo_which_questions.json --variants now,pc8,dyn,mix --seeds default,1,2
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
from bench_static_encoder import site_corpus

from sphinx_rag.index import build
from sphinx_rag.index import encoder_fit
from sphinx_rag.tools.evaluate import _score_question, load_questions
from sphinx_rag.search.retrieve import Searcher


def dynamic_model_dir(model_dir: Path, root: Path) -> Path:
    """A model directory like ``model_dir`` whose model.onnx is dynamically quantized
    (its own embedding cache: its vectors are not the model's)."""
    from bench_embed import dynamic_int8

    out = root / "dynamic-model"
    if (out / "model.onnx").is_file():
        return out
    out.mkdir(parents=True, exist_ok=True)
    for f in model_dir.iterdir():
        if f.name not in ("model.onnx", "embedding_cache.sqlite"):
            (out / f.name).write_bytes(f.read_bytes())
    dynamic_int8(model_dir, root).replace(out / "model.onnx")
    return out


def fit(variant: str, texts, titles, docs, model_dir: Path, info: dict, seed: int, work: Path):
    params = {"seed": seed}
    parts = variant.split("+")
    target_model = model_dir
    targets = "model"
    for p in parts:
        if p.startswith("pc"):
            params["queries_per_chunk"] = int(p[2:])
        elif p.startswith("cap"):
            params["max_queries"] = int(p[3:])
        elif p == "dyn":
            target_model = dynamic_model_dir(model_dir, work)
        elif p in ("chunk", "mix"):
            targets = p
        elif p != "now":
            raise SystemExit(f"unknown variant part {p!r}")
    if targets == "model":
        return build.fit_static_encoder(texts, titles, docs, target_model, info, **params)
    # chunk / mix: wrap train_encoder's embed callable; pseudo-queries are unique, so
    # each one's source chunk is known from the same deterministic sample.
    qpc = params.get("queries_per_chunk", encoder_fit.QUERIES_PER_CHUNK)
    budget = min(params.get("max_queries", encoder_fit.MAX_QUERIES), qpc * len(texts))
    pairs = encoder_fit.pseudo_queries(texts, titles, budget, seed, qpc)
    source = {q: i for q, i in pairs}
    title_set = {t.strip() for t in titles}
    unit = docs / np.maximum(np.linalg.norm(docs, axis=1, keepdims=True), 1e-12)
    original = encoder_fit.train_encoder

    def train(*args, **kwargs):
        model_embed = args[4]

        def embed(queries: list[str]) -> np.ndarray:
            out = unit[[source[q] for q in queries]].astype(np.float32)
            if targets == "mix":
                asked = [i for i, q in enumerate(queries) if q in title_set]
                if asked:
                    out[asked] = model_embed([queries[i] for i in asked])
            return out

        return original(*args[:4], embed, *args[5:], **kwargs)

    build.train_encoder = train
    try:
        return build.fit_static_encoder(texts, titles, docs, model_dir, info, **params)
    finally:
        build.train_encoder = original


def per_question(searcher: Searcher, questions: list[dict]) -> np.ndarray:
    """(questions, 2): MRR@10 and Recall@10 of each question."""
    rows = [_score_question(searcher.search(q["question"], k=10), q, q.get("relevant") or []) for q in questions]
    return np.array([[r["mrr@10"], r["recall@10"]] for r in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--variants", default="now,pc8,dyn,mix")
    parser.add_argument("--seeds", default="default,1,2")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "sphinx-rag-fit-variants")
    parser.add_argument("--time", action="store_true", help="also time one fit per variant with the cache off")
    args = parser.parse_args(argv)
    seeds = [encoder_fit.SEED if s == "default" else int(s) for s in args.seeds.split(",")]
    variants = args.variants.split(",")
    sets = {p.stem: load_questions(p) for p in args.questions}
    index, chunks, vectors, scales, model_dir = site_corpus(args.site)
    texts, titles = [c.text for c in chunks], [c.title for c in chunks]
    docs = vectors.astype(np.float32) * scales[:, None]
    info = index.manifest["model"]
    rrf = Searcher(args.site, fusion="rrf", encoder="static")
    dense = Searcher(args.site, fusion="dense", encoder="static")
    print(f"{args.site}: {len(chunks)} chunks; seeds {seeds}; load {os.getloadavg()[0]:.1f}\n", flush=True)
    scores: dict[str, dict[str, np.ndarray]] = {}
    dense_mrr: dict[str, dict[str, float]] = {}
    fit_s: dict[str, float] = {}
    for v in variants:
        if args.time:
            os.environ["SPHINX_RAG_EMBED_CACHE"] = "0"
            start = time.perf_counter()
            fit(v, texts, titles, docs, model_dir, info, seeds[0], args.work)
            fit_s[v] = time.perf_counter() - start
            os.environ["SPHINX_RAG_EMBED_CACHE"] = "1"
        runs = {name: [] for name in sets}
        dense_runs = {name: [] for name in sets}
        for seed in seeds:
            encoder = fit(v, texts, titles, docs, model_dir, info, seed, args.work)
            for s in (rrf, dense):
                s.index.encoder = lambda encoder=encoder: encoder  # this fit, not the site's
            for name, qs in sets.items():
                runs[name].append(per_question(rrf, qs))
                dense_runs[name].append(per_question(dense, qs)[:, 0].mean())
        scores[v] = {name: np.mean(r, axis=0) for name, r in runs.items()}
        dense_mrr[v] = {name: statistics.mean(r) for name, r in dense_runs.items()}
        print(f"{v}: " + ", ".join(f"{n} {scores[v][n][:, 0].mean():.3f}" for n in sets)
              + (f"  (fit {fit_s[v]:.1f} s, cache off)" if v in fit_s else ""), flush=True)
    base = variants[0]
    rng = np.random.default_rng(0)
    print("\nrrf-static MRR@10 (Recall@10) [dense-static MRR@10], mean of the seeds; "
          f"difference to {base} with its 95% paired-bootstrap interval\n")
    print("| variant | fit s, cache off | " + " | ".join(f"{n} ({len(q)})" for n, q in sets.items())
          + " | " + " | ".join(f"{n}: diff (95%)" for n in sets) + " |")
    print("|---|---|" + "---|" * (2 * len(sets)))
    for v in variants:
        cells, diffs = [], []
        for n in sets:
            s = scores[v][n]
            cells.append(f"{s[:, 0].mean():.3f} ({s[:, 1].mean():.3f}) [{dense_mrr[v][n]:.3f}]")
            d = s[:, 0] - scores[base][n][:, 0]
            picks = rng.integers(0, len(d), (10_000, len(d)))
            low, high = np.percentile(d[picks].mean(axis=1), [2.5, 97.5])
            diffs.append(f"{d.mean():+.3f} ({low:+.3f} to {high:+.3f})")
        t = f"{fit_s[v]:.0f}" if v in fit_s else "-"
        print(f"| {v} | {t} | " + " | ".join(cells) + " | " + " | ".join(diffs) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
