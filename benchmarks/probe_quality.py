"""What a smaller probe costs: fused MRR@10 / Recall@10 and the cluster bytes a query reads.

The browser's frugal readers (Save-Data or a slow connection, js/src/ui/model_policy.js)
probe a quarter of the layout's vectors (worker.js FRUGAL_PROBE_SHARE); Python's
``Searcher(probe=N)`` ranks exactly as the browser does with that probe. For each site
and question set, each probe and each query encoder the site has:

    python benchmarks/probe_quality.py SITE_HTML QUESTIONS.json [QUESTIONS.json ...] \\
        [--probes 4096,2048,1024] [--encoders static,model]

Cluster bytes: the raw size of the cluster shards the dense pass reads (whole clusters:
the keyword hits' clusters first, then the nearest), median over the questions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from sphinx_rag.search.index import IndexReader
from sphinx_rag.search.dense import probe_order
from sphinx_rag.tools.evaluate import _score_question
from sphinx_rag.search.retrieve import CANDIDATES, Searcher, top_k


def cluster_bytes(searcher: Searcher, query: str) -> int:
    """Raw bytes of the cluster shards `query`'s dense pass reads (u32 count, then per
    vector a u32 id, an f32 scale and dim int8 values)."""
    vector = searcher.query_vector(query)
    first = searcher.guided_clusters(top_k(searcher.bm25_scores(query), CANDIDATES))
    centroids, scales = searcher.index.centroids()
    sizes = searcher.index.cluster_sizes
    order = probe_order(vector, centroids, scales, sizes, searcher.probe, first)
    return sum(4 + sizes[c] * (8 + searcher.index.dim) for c in order)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", type=Path)
    parser.add_argument("questions", type=Path, nargs="+")
    parser.add_argument("--probes", default="4096,2048,1024,512")
    parser.add_argument("--encoders", default="static,model")
    args = parser.parse_args()
    reader = IndexReader(args.site)
    encoders = [e for e in args.encoders.split(",")
                if (e == "static" and reader.has_encoder) or (e == "model" and reader.model_dir is not None)]
    probes = [int(p) for p in args.probes.split(",")]
    m = reader.manifest
    print(f"# {args.site}: {m['counts']['chunks']} chunks, {m['counts']['clusters']} clusters, layout probe "
          f"{m['layout']['probe']}")
    for path in args.questions:
        questions = json.loads(path.read_text())
        print(f"\n## {path.name} ({len(questions)} questions)\n")
        print("| encoder | probe | MRR@10 | Recall@10 | cluster bytes per query, median (raw KB) |")
        print("|---|---|---|---|---|")
        for encoder in encoders:
            for probe in probes:
                start = time.perf_counter()
                searcher = Searcher(args.site, fusion="rrf", encoder=encoder, probe=probe)
                rows = [_score_question(searcher.search(q["question"], k=10), q, q.get("relevant") or [])
                        for q in questions]
                mrr = statistics.fmean(r.get("mrr@10", 0.0) for r in rows)
                recall = statistics.fmean(r.get("recall@10", 0.0) for r in rows)
                kb = statistics.median(cluster_bytes(searcher, q["question"]) for q in questions) / 1000
                print(f"| rrf-{encoder} | {probe} | {mrr:.3f} | {recall:.3f} | {kb:.0f} |"
                      f"  <!-- {time.perf_counter() - start:.0f} s -->", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
