"""The static tier with and without the model's general query table (issue 36, item 2).

Not a test. For a built site, the static encoder is made again in-process three ways and
each is scored (rrf-static and dense-static MRR@10) on the question sets given:

- ``fit-24``: the fit without a table (24 pseudo-queries per chunk, at most 16,000: what
  every build did before the table);
- ``table``: the table's rows alone, projected on the site's main directions (no model call);
- ``table+fit-4``: the table as the prior of a fit on 4 pseudo-queries per chunk (the default).

It also prints how many pseudo-queries each embeds. Pseudo-query vectors go through the
embedding cache, so a second run costs seconds.

    python benchmarks/query_table_sweep.py demo_docs/_build/html eval/demo_questions.json eval/demo_which_questions.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np
from bench_static_encoder import site_corpus
from static_encoder_sweep import scores

from sphinx_rag.index import build
from sphinx_rag.tools.evaluate import _mean, load_questions
from sphinx_rag.search.retrieve import Searcher


def variants(model_dir: Path) -> dict[str, dict]:
    table = build.query_table(model_dir)
    if table is None:
        sys.exit(f"error: the model in {model_dir} has no query table ({model_dir / 'query_table.bin'})")
    return {
        "fit-24": {"prior": None},
        "table": {"prior": table, "max_queries": 0},
        "table+fit-4": {"prior": table},
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="a built HTML directory with vectors")
    parser.add_argument("questions", type=Path, nargs="+", help="question sets (eval/*.json)")
    args = parser.parse_args(argv)
    sets = {path.stem: load_questions(path) for path in args.questions}
    index, chunks, vectors, scales, model_dir = site_corpus(args.site)
    if build.query_table(model_dir) is None:  # a site ships the model, not its table: the cache entry has both
        from sphinx_rag.model.cache import cached_model_dir

        model_dir = cached_model_dir(index.manifest["model"]["model_id"])
        assert json.loads((model_dir / "model_info.json").read_text()) == index.manifest["model"], model_dir
    texts, titles = [c.text for c in chunks], [c.title for c in chunks]
    docs = vectors.astype(np.float32) * scales[:, None]
    searchers = {f: Searcher(args.site, fusion=f, encoder="static") for f in ("dense", "rrf")}
    print(f"{args.site}: {len(chunks)} chunks\n")
    print("| encoder | pseudo-queries | made in (s) | " + " | ".join(f"{n} rrf-static | {n} dense-static" for n in sets)
          + " |")
    print("|---|---|---|" + "---|---|" * len(sets))
    for name, params in variants(model_dir).items():
        seen: list[int] = []
        start = time.perf_counter()
        encoder = build.fit_static_encoder(texts, titles, docs, model_dir, index.manifest["model"],
                                           note=seen.append, **params)
        seconds = time.perf_counter() - start
        queries = next((int(m.group(1)) for line in seen if (m := re.search(r"(\d+) pseudo-queries", line))), 0)
        for searcher in searchers.values():
            searcher.index.encoder = lambda encoder=encoder: encoder
        cells = [f"{_mean(scores(searchers['rrf'], q))['mrr@10']:.3f} | {_mean(scores(searchers['dense'], q))['mrr@10']:.3f}"
                 for q in sets.values()]
        print(f"| {name} | {queries:,} | {seconds:.1f} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
