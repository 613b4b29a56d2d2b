"""Index benchmark (Python only, no browser): what a format-2 index costs to store and to query.

For each index given (a built site, or an index directory):

1. **bytes per chunk by shard kind**: file bytes (what is on disk, "raw"), gzip -6 of
   the files (what a gzip-serving web server sends), whole corpus, model separate;
2. **bytes a reader fetches**, simulated by reading the index as the browser client
   does (every shard file read is recorded; nothing read twice in a visit): a cold
   visit's first query in keyword mode (manifest, directory, its term shards and near
   shards, the text shards of its top-15 hits and the chunk after each — the client's
   prefetch — plus what passage expansion reads), then the same query in hybrid mode
   (the model, the centroids, the probed clusters), then ten different queries (hybrid);
   gzip bytes, averaged over several visits with different queries;
3. **top-10 overlap with exact scoring**: the fused top-10 chunks against exact
   scoring (every vector scored, every posting of every term with float32 impacts), and
   the keyword and dense rankings alone; where the fused differences come from: the
   top-100 lists the fusion takes (``keyword100``, ``dense100``: overlap of 100) and
   the fused top-10 with one tier exact (``fused_exact_dense``, ``fused_exact_keyword``);
   with ``--questions``, MRR@10 of both;
4. ``--sweep``: re-writes the index of the first site with other ``search.format.Layout`` values
   (one field at a time) into a temporary directory and measures 1-3 for each, so the
   defaults can be chosen by measurement.

    python benchmarks/bench_index.py /tmp/scale/demo/html /tmp/scale/25k/html \\
        --questions eval/sklearn_api_questions.json
    python benchmarks/bench_index.py /tmp/scale/50k/html --sweep --visits 4 --overlap-queries 60

Queries: the questions of ``--questions`` (if given) and benchmarks/bench_browser.py's
100 varied queries (identifiers, questions, typos).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
from harness import QUERIES, gzip_size, log, scratch

from sphinx_rag.search.index import IndexReader, Layout, find_asset_dir
from sphinx_rag.search.bm25 import BM25Index, build_index, document_tokens
from sphinx_rag.tools.evaluate import _score_question
from sphinx_rag.search.expand import expand
from sphinx_rag.search.keyword_scoring import expand_tokens, keyword_scores
from sphinx_rag.search.lexical import tokenize
from sphinx_rag.search.retrieve import CANDIDATES, Searcher, rrf_fuse, top_k

TARGETS = {
    "bytes_per_chunk": 600,  # index bytes per chunk, raw, model excluded (at 200k)
    "first_keyword_kb": 300,  # gzip KB until the first keyword results, cold (JS client excluded)
    "next_query_kb": 100,  # average KB more per later query
    "dense_mb": 2.0,  # dense-tier bytes of one cold query
    "overlap": 0.98,  # fused top-10 overlap with exact scoring
}
PREFETCH = 15  # the client's prefetch: text shards of the top k + 5 hits (js/src/search/retrieve.js)


def kind_of(name: str) -> str:
    if name.startswith("model-"):
        return "model"
    if name in ("manifest.json", "manifest.js"):
        return name
    return name.split("-", 1)[0]


class Sizes:
    """File and gzip -6 bytes of the files of one index directory (cached)."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[str, tuple[int, int]] = {}

    def __call__(self, name: str) -> tuple[int, int]:
        if name not in self._cache:
            data = (self.root / name).read_bytes()
            self._cache[name] = (len(data), gzip_size(data))
        return self._cache[name]

    def gz(self, names) -> int:
        return sum(self(n)[1] for n in names)

    def all_files(self) -> list[str]:
        return sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*") if p.is_file())


# -- 1. bytes per chunk ------------------------------------------------------------------------


def storage_table(root: Path, sizes: Sizes, n_chunks: int) -> dict:
    by_kind: dict[str, list[int]] = {}
    for name in sizes.all_files():
        raw, gz = sizes(name)
        entry = by_kind.setdefault(kind_of(name), [0, 0, 0])
        entry[0] += 1
        entry[1] += raw
        entry[2] += gz
    return by_kind


def print_storage(title: str, by_kind: dict, n_chunks: int) -> float:
    log(f"\n  bytes by shard kind ({title}, {n_chunks} chunks):")
    log(f"    {'kind':14s} {'files':>6s} {'raw bytes':>12s} {'gzip -6':>12s} {'raw/chunk':>10s} {'gzip/chunk':>10s}")
    tot = [0, 0, 0]
    for kind in sorted(by_kind, key=lambda k: (k == "model", k)):
        files, raw, gz = by_kind[kind]
        log(f"    {kind:14s} {files:6d} {raw:12,d} {gz:12,d} {raw / n_chunks:10.1f} {gz / n_chunks:10.1f}")
        if kind != "model":
            tot = [tot[0] + files, tot[1] + raw, tot[2] + gz]
    per = tot[1] / n_chunks
    log(f"    {'index (no model)':14s} {tot[0]:6d} {tot[1]:12,d} {tot[2]:12,d} {per:10.1f} {tot[2] / n_chunks:10.1f}"
        f"   [target raw/chunk <= {TARGETS['bytes_per_chunk']} at 200k: {'met' if per <= TARGETS['bytes_per_chunk'] else 'MISSED'}]")
    return per


# -- 2. what a query reads -----------------------------------------------------------------------


class TrackedSearcher(Searcher):
    """A Searcher whose index records every file it reads (a visit: nothing is read twice)."""

    def __init__(self, path, **kw):
        super().__init__(path, **kw)
        self.read: list[str] = []
        inner = self.index._read

        def _read(name, inner=inner):
            self.read.append(name)
            return inner(name)

        self.index._read = _read

    def take(self) -> list[str]:
        out, self.read = self.read, []
        return out


def simulate_query(s: TrackedSearcher, query: str, vector: np.ndarray | None, *, hybrid: bool,
                   k: int = 10) -> list[str]:
    """What the client reads for one query (keyword or hybrid mode), as shard names."""
    s.take()
    s.fusion = "rrf" if hybrid else "bm25"
    if hybrid:
        s.embedding_query(query)  # spelling correction reads postings and near shards
    scored = s.scores(query, vector)
    ranked = sorted(scored, key=lambda i: (-scored[i], i))
    for i in ranked[:PREFETCH]:  # the client prefetches these text shards in parallel
        s.index.chunk(i)
    expand(ranked, s.index.chunk, s.index.n_chunks, k)  # and the neighbours a passage may take
    return s.take()


def model_files(reader: IndexReader) -> list[str]:
    entry = reader.manifest.get("model_files")
    return [f"{entry['dir']}/{n}" for n in entry["files"]] if entry else []


def visit(path: Path, queries: list[str], vectors: dict[str, np.ndarray], sizes: Sizes) -> dict:
    """One cold visit: queries[0] in keyword mode, then hybrid, then queries[1:] in hybrid mode."""
    s = TrackedSearcher(path)
    hybrid = s.index.has_vectors
    start = ["manifest.json", s.index.manifest["dir"]]
    s.index.directory  # noqa: B018 - reads the directory shard
    s.take()
    first = simulate_query(s, queries[0], None, hybrid=False)
    kw_names = start + first
    out = {"first_keyword_gz": sizes.gz(kw_names),
           "first_keyword_by_kind": _by_kind(kw_names, sizes),
           "first_keyword_files": len(kw_names)}
    if hybrid:
        again = simulate_query(s, queries[0], vectors[queries[0]], hybrid=True)
        dense = [n for n in again if kind_of(n) in ("centroids", "cluster", "cmap")]
        model = model_files(s.index)
        out["first_hybrid_gz"] = out["first_keyword_gz"] + sizes.gz(again) + sizes.gz(model)
        out["model_gz"] = sizes.gz(model)
        out["dense_gz"] = sizes.gz(dense)
        out["dense_raw"] = sum(sizes(n)[0] for n in dense)
    later = []
    later_dense = []
    for q in queries[1:]:
        names = simulate_query(s, q, vectors.get(q), hybrid=hybrid)
        later.append(sizes.gz(names))
        later_dense.append(sizes.gz([n for n in names if kind_of(n) in ("cluster", "cmap")]))
    out["later_gz"] = later
    out["later_dense_gz"] = later_dense
    return out


def _by_kind(names, sizes: Sizes) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in names:
        out[kind_of(n)] = out.get(kind_of(n), 0) + sizes(n)[1]
    return out


def query_vectors(path: Path, queries: list[str]) -> dict[str, np.ndarray]:
    s = Searcher(path)
    if not s.index.has_vectors:
        return {}
    texts = [s.embedding_query(q) for q in queries]
    vecs = s.embedder.embed(texts)
    return {q: np.asarray(v) for q, v in zip(queries, vecs)}


def print_fetches(visits: list[dict], hybrid: bool) -> dict:
    kb = lambda b: b / 1000  # noqa: E731
    first_kw = [v["first_keyword_gz"] for v in visits]
    later = [x for v in visits for x in v["later_gz"]]
    res = {"first_keyword_kb": kb(statistics.median(first_kw)), "first_keyword_kb_max": kb(max(first_kw)),
           "later_kb": kb(statistics.fmean(later)) if later else float("nan")}
    log(f"\n  bytes fetched (gzip -6), {len(visits)} cold visits of {len(visits[0]['later_gz']) + 1} queries:")
    log(f"    first keyword results (manifest + dir + term/near/text shards): median {res['first_keyword_kb']:.1f} KB, "
        f"max {res['first_keyword_kb_max']:.1f} KB   [target <= {TARGETS['first_keyword_kb']} KB at 200k: "
        f"{'met' if res['first_keyword_kb_max'] <= TARGETS['first_keyword_kb'] else 'MISSED'} (max)]")
    kinds = sorted({k for v in visits for k in v["first_keyword_by_kind"]})
    log("      by kind (median): " + ", ".join(
        f"{k} {statistics.median(v['first_keyword_by_kind'].get(k, 0) for v in visits) / 1000:.1f} KB" for k in kinds)
        + f"; files {statistics.median(v['first_keyword_files'] for v in visits):.0f}")
    if hybrid:
        fh = [v["first_hybrid_gz"] for v in visits]
        dense = [v["dense_gz"] for v in visits]
        res["first_hybrid_kb"] = kb(statistics.median(fh))
        res["model_kb"] = kb(visits[0]["model_gz"])
        res["dense_kb"] = kb(max(dense))
        log(f"    first hybrid results (+ model {res['model_kb']:.0f} KB, centroids, probed clusters, texts): "
            f"median {res['first_hybrid_kb']:.0f} KB;  without the model {res['first_hybrid_kb'] - res['model_kb']:.0f} KB")
        log(f"    dense tier of the first query (centroids + probed clusters): median {kb(statistics.median(dense)):.0f} KB, "
            f"max {res['dense_kb']:.0f} KB (raw max {kb(max(v['dense_raw'] for v in visits)):.0f} KB)   "
            f"[target <= {TARGETS['dense_mb']} MB: {'met' if res['dense_kb'] <= TARGETS['dense_mb'] * 1000 else 'MISSED'}]")
    ld = [x for v in visits for x in v["later_dense_gz"]]
    kw = [a - b for a, b in zip(later, ld)]
    res["later_kw_kb"] = kb(statistics.fmean(kw)) if kw else float("nan")
    res["later_dense_kb"] = kb(statistics.fmean(ld)) if ld else 0.0
    # The 100 KB is what a later query's keyword results cost (term, near and text
    # shards); the dense tier's own budget is the 2 MB of a cold query (above).
    target = f"[target mean <= {TARGETS['next_query_kb']} KB (keyword shards): " + (
        "met]" if res["later_kw_kb"] <= TARGETS["next_query_kb"] else "MISSED]")
    log(f"    each later query ({'hybrid' if hybrid else 'keyword'}): mean {res['later_kb']:.1f} KB, median "
        f"{kb(statistics.median(later)):.1f} KB, max {kb(max(later)):.1f} KB" + ("" if hybrid else f"   {target}"))
    if hybrid:
        log(f"      of which term/near/text shards: mean {res['later_kw_kb']:.1f} KB, max {kb(max(kw)):.1f} KB   {target}")
        log(f"      of which clusters: mean {res['later_dense_kb']:.1f} KB, max {kb(max(ld)):.1f} KB")
    return res


# -- 3. overlap with exact scoring -----------------------------------------------------------------


class ExactSearcher(Searcher):
    """Exact scoring: every vector (probe = all chunks), every posting with float32 impacts."""

    def __init__(self, path, bm25: BM25Index, **kw):
        super().__init__(path, **kw)
        self.probe = self.index.n_chunks
        self.exact_bm25 = bm25

    def bm25_scores(self, query: str) -> np.ndarray:
        tokens = tokenize(query)
        return keyword_scores(self.index.n_chunks, tokens,
                              expand_tokens(tokens, self.exact_bm25.postings, self.index.near))


def exact_bm25(path: Path) -> BM25Index:
    reader = IndexReader(path)
    return build_index([document_tokens(c["text"]) for c in reader.chunks()])


def rankings(s: Searcher, query: str, vector) -> dict[str, list[int]]:
    """Top-10 keyword, dense and fused chunks; the top-100 keyword and dense lists the
    fusion took ("keyword100", "dense100": its probe reads the keyword hits' clusters first)."""
    out = {"keyword": top_k(s.bm25_scores(query) * s.index.weights, 10)}
    if s.index.has_vectors:
        out["keyword100"] = top_k(s.bm25_scores(query), CANDIDATES)
        out["dense"] = top_k(s.dense_scores(query, vector), 10)  # the dense ranking alone: nearest clusters
        out["dense100"] = top_k(s.dense_scores(query, vector, out["keyword100"]), CANDIDATES)  # what rrf takes
        out["fused"] = fused_top10(s, out["keyword100"], out["dense100"])
    return out


def fused_top10(s: Searcher, keyword100: list[int], dense100: list[int]) -> list[int]:
    fused = rrf_fuse([keyword100, dense100], s.rrf_k, s.index.weights)
    return sorted(fused, key=lambda i: (-fused[i], i))[:10]


def exact_rankings(path: Path, bm25: BM25Index, queries: list[str], vectors) -> list[dict]:
    s = ExactSearcher(path, bm25)
    return [rankings(s, q, vectors.get(q)) for q in queries]


def overlaps(path: Path, queries: list[str], vectors, exact: list[dict]) -> dict[str, float]:
    s = Searcher(path)
    acc: dict[str, list[float]] = {}
    for q, ex in zip(queries, exact):
        got = rankings(s, q, vectors.get(q))
        if "fused" in got:  # where the fused ranking's differences come from: one tier exact at a time
            got["fused_exact_dense"] = fused_top10(s, got["keyword100"], ex["dense100"])
            got["fused_exact_keyword"] = fused_top10(s, ex["keyword100"], got["dense100"])
            ex = {**ex, "fused_exact_dense": ex["fused"], "fused_exact_keyword": ex["fused"]}
        for key, ranking in got.items():
            if ex[key]:
                acc.setdefault(key, []).append(len(set(ranking) & set(ex[key])) / len(ex[key]))
    out = {k: statistics.fmean(v) for k, v in acc.items()}
    if "fused" in acc:
        out["fused_low"], out["fused_high"] = bootstrap_interval(acc["fused"])
    return out


def bootstrap_interval(values: list[float], rounds: int = 2000) -> tuple[float, float]:
    """95% bootstrap interval of a mean over queries: how much of a gap to a target the
    choice of queries alone could explain (one query's top-10 moves 100 queries' mean by 0.001-0.01)."""
    rng = random.Random(0)
    means = sorted(statistics.fmean(rng.choices(values, k=len(values))) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def mrr(path: Path, questions: list[dict], vectors, bm25: BM25Index | None) -> float:
    s = ExactSearcher(path, bm25) if bm25 is not None else Searcher(path)
    rows = [_score_question(s.search(q["question"], k=10, vector=vectors.get(q["question"])), q, q.get("relevant") or [])
            for q in questions]
    return statistics.fmean(r["mrr@10"] for r in rows)


# -- one index -----------------------------------------------------------------------------------


def queries_for(questions: list[dict]) -> list[str]:
    qs = [q["question"] for q in questions] + list(QUERIES)
    return list(dict.fromkeys(qs))


def measure(path: Path, queries: list[str], vectors, args, exact: list[dict] | None, *, title: str) -> dict:
    root = find_asset_dir(path)
    reader = IndexReader(path)
    n = reader.n_chunks
    sizes = Sizes(root)
    per_chunk = print_storage(title, storage_table(root, sizes, n), n)
    rng = random.Random(0)
    pool = list(queries)
    rng.shuffle(pool)
    visits = []
    for v in range(args.visits):
        qs = pool[(v * 11) % len(pool):][:11]
        if len(qs) < 11:
            qs += pool[:11 - len(qs)]
        visits.append(visit(path, qs, vectors, sizes))
    res = print_fetches(visits, reader.has_vectors)
    res["bytes_per_chunk"] = per_chunk
    if exact is not None:
        ov = overlaps(path, queries[:len(exact)], vectors, exact)
        res.update({f"overlap_{k}": v for k, v in ov.items()})
        log(f"\n  top-10 overlap with exact scoring over {len(exact)} queries: "
            + ", ".join(f"{k} {v:.3f}" for k, v in ov.items() if k not in ("fused_low", "fused_high"))
            + (f" (fused, 95% bootstrap interval over queries: {ov['fused_low']:.3f}-{ov['fused_high']:.3f})"
               if "fused_low" in ov else "")
            + (f"   [target fused >= {TARGETS['overlap']}: {'met' if ov.get('fused', 1) >= TARGETS['overlap'] else 'MISSED'}]"
               if "fused" in ov else ""))
    return res


def bench_one(path: Path, questions: list[dict], args) -> None:
    reader = IndexReader(path)
    log(f"\n## {path}  ({reader.n_chunks} chunks, vocab {reader.manifest['counts']['vocab']}, "
        f"{reader.manifest['counts']['clusters']} clusters, layout {reader.manifest['layout']})")
    queries = queries_for(questions)
    t = time.perf_counter()
    vectors = query_vectors(path, queries)
    exact = None
    if args.overlap_queries:
        bm25 = exact_bm25(path)
        exact = exact_rankings(path, bm25, queries[:args.overlap_queries], vectors)
    measure(path, queries, vectors, args, exact, title="as built")
    if questions and reader.has_vectors:
        log(f"  MRR@10 (fused) over {len(questions)} questions: stored index {mrr(path, questions, vectors, None):.3f}, "
            f"exact scoring {mrr(path, questions, vectors, bm25 if args.overlap_queries else exact_bm25(path)):.3f}")
    log(f"  ({time.perf_counter() - t:.0f} s)")


# -- 4. the layout sweep -----------------------------------------------------------------------------

SWEEP = {
    "texts_per_shard": [16, 32, 64, 128],
    "term_shard_bytes": [8_000, 16_000, 24_000, 48_000],
    "head_postings": [1024, 2048, 4096, 8192],
    "near_shard_terms": [2048, 4096, 8192],
    "cluster_size": [128, 256, 512],
    "probe": [1024, 2048, 4096, 8192],
}
#: Dense settings changed together (cluster_size, probe): the dense tier's bytes per query
#: are about probe * (dim + 8) bytes, so smaller clusters let a smaller probe keep recall.
COMBOS = [(64, 512), (64, 1024), (128, 1024), (128, 2048), (512, 8192)]


def sweep(path: Path, questions: list[dict], args) -> None:
    from replicate_index import read_index, write_index  # noqa: PLC0415

    records, vecs, scales, reader = read_index(path)
    base = Layout(**reader.manifest["layout"])
    log(f"\n## Layout sweep on {path} ({len(records)} chunks); base {asdict(base)}")
    t = time.perf_counter()
    bm25 = build_index([document_tokens(r["text"]) for r in records])
    queries = queries_for(questions)
    vectors = query_vectors(path, queries)
    exact = exact_rankings(path, bm25, queries[:args.overlap_queries], vectors) if args.overlap_queries else None
    log(f"  (BM25, query vectors and exact rankings: {time.perf_counter() - t:.0f} s)")
    fields = [f for f in (args.sweep_fields.split(",") if args.sweep_fields else SWEEP)]
    configs = [("base", base)]
    for field in fields:
        for value in SWEEP[field]:
            if value != getattr(base, field):
                configs.append((f"{field}={value}", replace(base, **{field: value})))
    if args.combos:
        for size, probe in COMBOS:
            configs.append((f"cluster_size={size},probe={probe}", replace(base, cluster_size=size, probe=probe)))
    if args.sweep_values:  # FIELD=v1/v2,... replaces SWEEP's values
        configs = [("base", base)]
        for item in args.sweep_values.split(","):
            if "+" in item:  # FIELD=v+FIELD=v: one layout with several fields changed together
                change = {f: int(v) for f, _, v in (pair.partition("=") for pair in item.split("+"))}
                configs.append((item, replace(base, **change)))
                continue
            field, _, values = item.partition("=")
            for value in values.split("/"):
                if int(value) != getattr(base, field):
                    configs.append((f"{field}={value}", replace(base, **{field: int(value)})))
        if args.combos:
            configs += [(f"cluster_size={a},probe={b}", replace(base, cluster_size=a, probe=b)) for a, b in COMBOS]
    rows = []
    with scratch("sphinx-rag-sweep-", args.work) as work:
        for label, layout in configs:
            t = time.perf_counter()
            out = work / label.replace("=", "_").replace(",", "_")
            write_index(out, records, vecs, scales, reader, layout, bm25)
            wrote = time.perf_counter() - t
            log(f"\n### {label}  (written in {wrote:.0f} s)")
            res = measure(out, queries, vectors, args, exact, title=label)
            rows.append((label, res))
            shutil.rmtree(out, ignore_errors=True)
    log(f"\n### sweep summary ({len(records)} chunks; gzip KB; one field changed from the base at a time)")
    cols = ["bytes_per_chunk", "first_keyword_kb", "first_keyword_kb_max", "later_kb", "later_kw_kb", "later_dense_kb",
            "dense_kb", "overlap_keyword",
            "overlap_dense", "overlap_fused"]
    log("| layout | " + " | ".join(cols) + " |")
    log("|---|" + "---|" * len(cols))
    for label, res in rows:
        log(f"| {label} | " + " | ".join(f"{res.get(c, float('nan')):.3f}" if c.startswith("overlap")
                                         else f"{res.get(c, float('nan')):.1f}" for c in cols) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sites", type=Path, nargs="+", help="built sites (or index directories)")
    parser.add_argument("--questions", type=Path, action="append", default=[],
                        help="question sets (eval/*.json): queries, and MRR@10 stored vs exact")
    parser.add_argument("--visits", type=int, default=5, help="cold visits of 11 queries each (default 5)")
    parser.add_argument("--overlap-queries", type=int, default=100,
                        help="queries for the overlap with exact scoring (0: skip; default 100)")
    parser.add_argument("--sweep", action="store_true", help="Layout sweep on the first site")
    parser.add_argument("--sweep-fields", default="", help=f"comma-separated subset of {','.join(SWEEP)}")
    parser.add_argument("--sweep-values", default="",
                        help="FIELD=v1/v2,... : these values instead of the built-in ones (e.g. texts_per_shard=32/128); "
                             "FIELD=v+FIELD=v: one layout with both changed")
    parser.add_argument("--combos", action="store_true", help="also (cluster_size, probe) pairs changed together")
    parser.add_argument("--work", type=Path, default=None, help="where the sweep writes its indexes (default /tmp)")
    args = parser.parse_args()
    questions = [q for p in args.questions for q in json.loads(p.read_text())]
    log("# sphinx-rag index benchmark (Python simulation of the browser client's reads)")
    if args.sweep:
        sweep(args.sites[0], questions, args)
        return
    for site in args.sites:
        bench_one(site, questions, args)


if __name__ == "__main__":
    main()
