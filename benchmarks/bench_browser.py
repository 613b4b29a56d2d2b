"""Browser benchmark: the search as a reader gets it, in headless Debian Chromium (index format 2).

Not a test (not run in CI): prints the numbers of issue 9 beside its targets. For each
site (the demo docs, and built or replicated corpora of ~25k, 50k, 200k chunks, see
benchmarks/make_api_corpus.py and benchmarks/replicate_index.py), served over HTTP on
127.0.0.1 by Python's http.server (no gzip: gzip sizes are computed locally from the
files served, gzip -6):

- a cold visit (fresh profile, empty Cache Storage), from the first focus of the
  search button with a query typed: time to the first keyword results and to the
  first hybrid results, and the bytes (gzip) transferred until each (JS client and
  wasm apart; responses completed before the results message); then ten different
  queries, the bytes each fetched (term, text shards and clusters);
- a warm visit (same profile, browser restarted): time to the first keyword results
  and the bytes transferred;
- warm query latency p50/p95, measured inside the worker (its "results" message's
  timings {embed_ms, retrieve_ms}): keyword mode (model held back) and hybrid mode, each
  query's first run (it fetches its shards from localhost) and a repeat (all in memory),
  and the part of a hybrid query beyond the query embedding;
- optionally (--typed) the bytes of one query typed key by key on a cold visit, with
  Save-Data on and off (bench_typed.py);
- optionally (--breakdown) a breakdown of one hybrid query from a benchmark page that
  drives the client modules directly, and the cosine of the browser's query vector with
  Python's.

The reader's model setting is "always" here (the model loads when the search starts,
whatever the first query); benchmarks/bench_model_bytes.py measures the default, which
waits for a query that wants the model.

Chromium is /usr/bin/chromium driven by Python Playwright (never `playwright install`).
The page side is JS beside this file: bench_browser_hooks.js (init script: worker
timings, the focus-to-results and query runs) and bench_browser_page.js (the benchmark
page's module, bundled with esbuild).

    python benchmarks/bench_browser.py                               # builds and measures the demo docs
    python benchmarks/bench_browser.py --demo-html /tmp/scale/demo/html \
        --site 25k=/tmp/scale/25k/html --site 50k=/tmp/scale/50k/html --site 200k=/tmp/scale/200k/html
    python benchmarks/bench_browser.py --skip-demo --site 200k=/tmp/scale/200k/html --runs 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from harness import (
    CLIENT, HERE, INDEX, QUERIES, REPO, BenchHandler, BenchServer, Hit, chromium_version, client_dir, gzip_size, load_average, log, p50_p95,
    percentile, use_client, verdict,
)
from site_helpers import (
    CHROMIUM, DEMO, build_site, client_is_current, client_missing, fresh_profile, manifest_of, persistent_context,
)

JS = REPO / "js"

PROFILE = "sphinx-rag-bench-profile-"  # prefix of the throwaway Chromium profiles
HOOKS = HERE / "bench_browser_hooks.js"  # init script: worker hook, focusAndTime, runQueries
BENCH_PAGE = HERE / "bench_browser_page.js"  # the benchmark page's module (js/src driven directly)

TARGETS = {  # issue 9, at 200k chunks (demo, 25k and 50k are printed against them too)
    "first_keyword_kb": 300.0,  # gzip KB transferred until the first keyword results, cold, JS client excluded
    "first_keyword_ms": 300.0,  # first keyword results from focus, cold
    "next_query_kb": 100.0,     # gzip KB a later query fetches, on average
    "retrieve_p50_ms": 10.0,    # hybrid, warm: everything beyond the query embedding, median
    "dense_mb": 2.0,            # dense-tier bytes of one cold query
    "cosine": 0.99999,          # browser vs Python query vector (--breakdown)
}

# The cosine check: 20 of the QUERIES (questions, identifiers, typos).
COSINE_QUERIES = QUERIES[:16] + QUERIES[29:33]
WARMUP = 10


# -- categories of downloaded bytes ------------------------------------------------------------

CATEGORIES = ("client", "index", "model", "page")


def category(path: str) -> str:
    if path.startswith(INDEX + "model-"):
        return "model"
    if path.startswith(INDEX):
        return "index"
    if path.startswith(CLIENT):
        return "client"  # searchbar.js/.css, worker.js, onnxruntime-web's .mjs and .wasm
    return "page"


KEYWORD_SHARDS = ("manifest.json", "manifest.js", "dir", "terms", "near", "texts")


def _shard_kind(path: str) -> str:
    """"terms" for .../index/terms-0123456789abcdef.js; the name of a manifest."""
    name = path.rsplit("/", 1)[-1]
    return name if name.startswith("manifest.") else name.split("-")[0] if path.startswith(INDEX) else ""


class GzipSizes:
    """gzip -6 size of each file served (computed locally: http.server sends no Content-Encoding)."""

    def __init__(self, server: BenchServer):
        self.server = server
        self._cache: dict[str, int] = {}

    def __call__(self, hit: Hit) -> int:
        if hit.status != 200:
            return hit.sent  # 304 and errors: headers only
        if hit.path not in self._cache:
            local = self.server.local_file(hit.path)
            self._cache[hit.path] = gzip_size(local.read_bytes()) if local else hit.sent
        return self._cache[hit.path]

    def by_category(self, hits: list[Hit]) -> dict[str, int]:
        out = {c: 0 for c in CATEGORIES}
        for h in hits:
            out[category(h.path)] += self(h)
        return out


# -- the benchmark page ------------------------------------------------------------------------


def build_bench_page(out: Path) -> None:
    """Bundle BENCH_PAGE with esbuild (js/node_modules) into out/bench.js + bench.html."""
    out.mkdir(parents=True, exist_ok=True)
    script = (
        "import { build } from 'esbuild';\n"
        f"await build({{ entryPoints: [{json.dumps(str(BENCH_PAGE))}], outfile: {json.dumps(str(out / 'bench.js'))},"
        f" bundle: true, format: 'esm', target: ['es2022'], platform: 'browser', logLevel: 'warning',"
        f" nodePaths: [{json.dumps(str(JS / 'node_modules'))}] }});\n"
    )
    subprocess.run(["node", "--input-type=module", "-e", script], cwd=JS, check=True, timeout=300)
    (out / "bench.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>sphinx-rag bench</title>'
        '<script type="module" src="/__bench__/bench.js"></script>\n')


# -- the runs -----------------------------------------------------------------------------------


@dataclass
class Visit:
    kind: str  # cold | warm
    timing: dict  # bench_browser_hooks.js focusAndTime
    hits: list[Hit] = field(default_factory=list)  # responses completed after the focus
    later: list[list[Hit]] = field(default_factory=list)  # per later query (cold visits)
    later_ms: list[float] = field(default_factory=list)


# The reader's "always" (js/src/ui/model_policy.js): the model loads when the search starts, as
# "automatic" did before issue 36, whatever the first query. By default it waits for a query
# that wants it (benchmarks/bench_model_bytes.py measures that).
ALWAYS = "try { localStorage.setItem('sphinx-rag-model:/', 'always'); } catch {}"


def new_context(playwright, profile: Path):
    ctx = persistent_context(playwright, profile, viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(120_000)
    ctx.add_init_script(path=HOOKS)
    ctx.add_init_script(ALWAYS)
    return ctx


def open_page(ctx, server: BenchServer):
    page = ctx.new_page()
    page.goto(server.url + "index.html", wait_until="load")
    page.wait_for_function("() => window.sphinxRag && window.sphinxRag.dialog", timeout=30_000)
    return page


def run_queries(page, queries: list[str], timeout_ms: float = 60_000) -> list[dict]:
    return page.evaluate("([q, t]) => window.__ragBench.runQueries(q, t)", [queries, timeout_ms])


def visit(ctx, server: BenchServer, kind: str, first_query: str, later: list[str], timeout_s: float) -> Visit:
    """Load index.html, focus the search button with a query typed, time the first results;
    on a cold visit, then run the later queries one by one and record what each fetched."""
    page = open_page(ctx, server)
    try:
        page.wait_for_timeout(300)  # let the page settle (fonts, theme scripts)
        start = time.time()
        timing = page.evaluate("([q, t]) => window.__ragBench.focusAndTime(q, t)", [first_query, timeout_s * 1000])
        page.wait_for_timeout(300)  # trailing requests of the first query
        run = Visit(kind, timing, server.since(start))
        for q in later:
            t = time.time()
            rows = run_queries(page, [q])
            page.wait_for_timeout(50)
            run.later.append(server.since(t))
            run.later_ms.append(rows[0].get("roundTrip") or float("nan"))
        return run
    finally:
        page.close()


def load_runs(playwright, server: BenchServer, runs: int, timeout_s: float, n_later: int) -> list[Visit]:
    out = []
    for r in range(runs):
        # A different first query and different later queries on each run (all cold).
        first = QUERIES[(r * 13) % len(QUERIES)]
        later = [q for q in QUERIES[50 + r * n_later:][:n_later] if q != first]
        with fresh_profile(PROFILE) as profile:
            for kind in ("cold", "warm"):  # warm: the same profile, browser restarted
                ctx = new_context(playwright, profile)
                try:
                    out.append(visit(ctx, server, kind, first, later if kind == "cold" else [], timeout_s))
                finally:
                    ctx.close()
    return out


def query_runs(playwright, server: BenchServer, timeout_s: float, queries: list[str]) -> tuple[dict, dict]:
    """Warm query latencies in the worker: keyword mode (the model held back) and hybrid mode,
    each query's first run (fetches its shards) and a repeat (in memory)."""
    with fresh_profile(PROFILE) as profile:
        ctx = new_context(playwright, profile)
        held = []
        try:
            ctx.route("**/model.onnx", lambda route: held.append(route))
            page = open_page(ctx, server)
            page.evaluate("() => window.sphinxRag.dialog.warmUp()")
            page.wait_for_function("() => window.__ragBench.events.some(e => e.type === 'status' && e.mode === 'keyword')",
                                   timeout=timeout_s * 1000)
            warm, measured = QUERIES[-WARMUP:], queries
            run_queries(page, warm)
            keyword = {"first": run_queries(page, measured), "repeat": run_queries(page, measured)}
            for _ in range(int(timeout_s * 10)):
                if held:
                    break
                page.wait_for_timeout(100)
            for route in held:
                route.continue_()
            page.wait_for_function("() => window.__ragBench.events.some(e => e.type === 'status' && e.mode === 'hybrid')",
                                   timeout=timeout_s * 1000)
            page.wait_for_timeout(300)
            run_queries(page, warm)
            hybrid = {"first": run_queries(page, measured), "repeat": run_queries(page, measured)}
            info = page.evaluate("() => ({isolated: globalThis.crossOriginIsolated, cores: navigator.hardwareConcurrency})")
            keyword["info"] = info
            return keyword, hybrid
        finally:
            ctx.close()


def bench_page_runs(playwright, server: BenchServer) -> tuple[dict, list[dict]]:
    with fresh_profile(PROFILE) as profile:
        ctx = new_context(playwright, profile)
        try:
            page = ctx.new_page()
            page.goto(server.url + "__bench__/bench.html", wait_until="load")
            page.wait_for_function("() => typeof window.benchInit === 'function'", timeout=30_000)
            base = server.url + "_static/sphinx_rag/"
            info = page.evaluate("([b, o]) => window.benchInit(b, o)", [base + "index/", base])
            page.evaluate("(q) => window.benchQueries(q, false)", QUERIES[:WARMUP])
            rows = page.evaluate("(q) => window.benchQueries(q, true)", COSINE_QUERIES)
            return info, rows
        finally:
            ctx.close()


# -- reporting ----------------------------------------------------------------------------------


def report_queries(keyword: dict, hybrid: dict, summary: dict) -> None:
    for label, rows in (("keyword, first run of each query (fetches its term + text shards)", keyword["first"]),
                        ("keyword, repeated (in memory)", keyword["repeat"])):
        ok = [r for r in rows if not r.get("timeout")]
        vals = [r["retrieve"] for r in ok if r.get("retrieve") is not None]
        log(f"  {label:72s} {p50_p95(vals)}   ({len(ok)} queries, modes {','.join(sorted({r['mode'] for r in ok}))})")
        summary.setdefault("keyword", {})["first" if "first" in label else "repeat"] = vals
    for label, rows in (("hybrid, first run of each query (fetches its clusters)", hybrid["first"]),
                        ("hybrid, repeated (in memory)", hybrid["repeat"])):
        ok = [r for r in rows if not r.get("timeout") and r.get("embed") is not None]
        total = [r["embed"] + r["retrieve"] for r in ok]
        embed = [r["embed"] for r in ok]
        retrieve = [r["retrieve"] for r in ok]
        key = "first" if "first" in label else "repeat"
        summary.setdefault("hybrid", {})[key] = total
        summary.setdefault("beyond", {})[key] = retrieve
        log(f"  {label:72s} {p50_p95(total)}   ({len(ok)} queries, modes {','.join(sorted({r['mode'] for r in ok}))})")
        log(f"    - query embedding{'':55s} {p50_p95(embed)}")
        r50 = statistics.median(retrieve) if retrieve else float("nan")
        log(f"    - everything beyond the embedding{'':39s} {p50_p95(retrieve)}   "
            f"{verdict(r50, TARGETS['retrieve_p50_ms'])} (p50)")


def report_loads(runs: list[Visit], sizes: GzipSizes, summary: dict) -> None:
    for kind in ("cold", "warm"):
        rs = [r for r in runs if r.kind == kind]
        if not rs:
            continue
        log(f"  {kind} visits ({len(rs)}; {'fresh profile, empty Cache Storage' if kind == 'cold' else 'same profile, browser restarted'}):")
        errs = [r.timing.get("status") for r in rs if r.timing.get("error") or r.timing.get("keywordResults") is None]
        if errs:
            log(f"    ERRORS / no results: {errs}")

        def vals(key, rs=rs):
            return [r.timing[key] for r in rs if r.timing.get(key) is not None]

        for key, label in (("keywordResults", "first keyword results (worker message)"),
                           ("keywordShown", "first keyword results shown (DOM)"),
                           ("hybridReady", "hybrid-ready (status message)"),
                           ("hybridShown", "first hybrid results shown (DOM)")):
            v = vals(key)
            med = f"median {statistics.median(v):7.0f} ms" if v else "n/a"
            extra = ""
            if key == "keywordShown" and v:
                summary[f"{kind}_first_keyword_ms"] = statistics.median(v)
                if kind == "cold":
                    extra = "  " + verdict(statistics.median(v), TARGETS["first_keyword_ms"]) + " (median)"
            log(f"    {label:42s} {med}   runs: {', '.join(f'{x:.0f}' for x in v)} ms{extra}")
        # Bytes until the first keyword / hybrid results: responses completed before the results message.
        for stage, wall_key in (("keyword", "keywordResultsWall"), ("hybrid", "hybridResultsWall")):
            per_run = []
            for r in rs:
                wall = r.timing.get(wall_key) or r.timing.get(f"{stage}ShownWall")
                if wall is None:
                    continue
                done = [h for h in r.hits if h.t * 1000 <= wall + 5]
                per_run.append((sizes.by_category(done), done))
            if not per_run:
                continue
            index_kb = [(c["index"] + c["model"]) / 1000 for c, _ in per_run]
            client_kb = statistics.median(c["client"] for c, _ in per_run) / 1000
            files = statistics.median(len([h for h in d if category(h.path) in ("index", "model")]) for _, d in per_run)
            tail = ""
            if stage == "keyword" and kind == "cold":
                summary["first_keyword_kb"] = statistics.median(index_kb)
                tail = "  " + verdict(max(index_kb), TARGETS["first_keyword_kb"]) + " (max)"
            if stage == "hybrid" and kind == "cold":
                model_kb = statistics.median(c["model"] for c, _ in per_run) / 1000
                summary["first_hybrid_kb"] = statistics.median(index_kb)
                tail = f"  (model {model_kb:.0f} KB of it)"
            only_index = statistics.median(c["index"] for c, _ in per_run) / 1000
            kinds = sorted({h.path.rsplit("/", 1)[-1].split("-")[0] if category(h.path) == "index"
                            else h.path.rsplit("/", 1)[-1] for _, d in per_run for h in d
                            if category(h.path) in ("index", "model")})
            log(f"    bytes until first {stage:7s} results (gzip -6, index + model, JS client excluded): "
                f"median {statistics.median(index_kb):8.1f} KB (index shards {only_index:.1f} KB), max "
                f"{max(index_kb):8.1f} KB; {files:.0f} files; JS client + wasm {client_kb:.0f} KB{tail}")
            log(f"      completed before the results: {', '.join(kinds)}")
        if kind == "cold":
            later = [sizes.by_category(hits) for r in rs for hits in r.later]
            if later:
                kb = [(c["index"] + c["model"]) / 1000 for c in later]
                summary["later_kb"] = statistics.fmean(kb)
                clusters = [sum(sizes(h) for h in hits if "/cluster-" in h.path) / 1000 for r in rs for hits in r.later]
                keyword = [sum(sizes(h) for h in hits if _shard_kind(h.path) in KEYWORD_SHARDS) / 1000
                           for r in rs for hits in r.later]
                summary["later_kw_kb"] = statistics.fmean(keyword)
                ms = [m for r in rs for m in r.later_ms]
                log(f"    each later query ({len(kb)}: hybrid, different queries): mean {statistics.fmean(kb):.1f} KB, "
                    f"median {statistics.median(kb):.1f} KB, max {max(kb):.1f} KB (clusters: mean "
                    f"{statistics.fmean(clusters):.1f} KB); round trip median {statistics.median(ms):.0f} ms")
                # the 100 KB: a later query's keyword results (the dense tier's budget is its 2 MB)
                log(f"      of which term/near/text shards: mean {statistics.fmean(keyword):.1f} KB, max "
                    f"{max(keyword):.1f} KB  " + verdict(statistics.fmean(keyword), TARGETS["next_query_kb"]) + " (mean)")
            first = rs[0]
            names = sorted({h.path.rsplit("/", 1)[-1].split("-")[0] for h in first.hits if category(h.path) == "index"})
            log(f"    (cold run 1 fetched index shard kinds: {', '.join(names)})")
        else:
            kb = [sum(sizes.by_category([h for h in r.hits if r.timing.get('keywordResultsWall') and
                                         h.t * 1000 <= r.timing['keywordResultsWall'] + 5]).values()) / 1000 for r in rs]
            log(f"    bytes until first keyword results, all files (gzip -6): median {statistics.median(kb):.1f} KB")


def report_bench_page(info: dict, rows: list[dict], html: Path) -> None:
    from sphinx_rag.search.retrieve import Searcher

    log(f"  benchmark page (client modules driven directly, main thread, 1 onnxruntime thread; "
        f"probe {info.get('probe')}, fusion {info.get('fusion')}; shards fetched by an untimed first pass):")
    for key, label in (("spell", "spelling correction"), ("wordpiece", "WordPiece tokenization"),
                       ("embed", "embed() (WordPiece + onnxruntime + pooling)"), ("bm25", "BM25 scores + top-100"),
                       ("dense", "dense scores (centroids + probed clusters) + top-100"),
                       ("fuse", "RRF fusion of the two top-100"),
                       ("hybridSearch", "search() (BM25 + dense + fusion + passages)")):
        log(f"    {label:56s} {p50_p95([r[key] for r in rows])}")
    searcher = Searcher(html)
    cosines, changed = [], 0
    for r in rows:
        text = searcher.embedding_query(r["query"])
        py = np.asarray(searcher.embedder.embed([text])[0], dtype=np.float64)
        br = np.asarray(r["vector"], dtype=np.float64)
        changed += r["text"] != text
        cosines.append(float(py @ br / (np.linalg.norm(py) * np.linalg.norm(br))))
    log(f"  cosine(browser query vector, Python's) over {len(cosines)} queries: min {min(cosines):.7f}  "
        f"{verdict(min(cosines), TARGETS['cosine'], at_least=True)}"
        + (f"   WARNING: spelling-corrected text differs for {changed} queries" if changed else ""))


def bench_site(playwright, name: str, html: Path, bench_dir: Path, args) -> dict:
    manifest = manifest_of(html)
    n_chunks = manifest["counts"]["chunks"]
    log(f"\n## {name}: {n_chunks} chunks ({html})")
    log(f"layout: {manifest['layout']}; {manifest['counts']['clusters']} clusters")
    if not client_is_current(html):
        log(f"note: serving the client build in {client_dir()}, not the site's copy")
    summary: dict = {"name": name, "chunks": n_chunks}
    with ExitStack() as stack:
        server = BenchServer(html, bench_dir)
        stack.callback(server.stop)
        sizes = GzipSizes(server)
        log(f"server: {server.url} (http.server: no gzip, no Cache-Control; gzip -6 sizes computed locally)")

        log("\n### cold and warm visits: from the first focus of the search button (query typed) to results")
        t = time.monotonic()
        runs = load_runs(playwright, server, args.runs, args.timeout, args.later)
        report_loads(runs, sizes, summary)
        log(f"  ({time.monotonic() - t:.0f} s; {load_average()})")

        log(f"\n### warm query latency in the worker ({args.queries} queries; performance.now(), "
            "coarsened to 0.1 ms without cross-origin isolation)")
        t = time.monotonic()
        keyword, hybrid = query_runs(playwright, server, args.timeout, QUERIES[:args.queries])
        report_queries(keyword, hybrid, summary)
        log(f"  ({time.monotonic() - t:.0f} s; {load_average()})")

        if args.typed:
            import bench_typed

            log("\n### one query typed key by key, cold visits (bench_typed.py)")
            t = time.monotonic()
            for saving in (True, False):
                rows = bench_typed.typed_runs(
                    playwright, server.url, queries=bench_typed.TYPED_QUERIES[:4], delay_ms=150.0, saving=saving,
                    timeout_s=args.timeout)
                summary[f"typed_{'save_data' if saving else 'plain'}"] = bench_typed.report(
                    rows, delay_ms=150.0, saving=saving, log=log)
            log(f"  ({time.monotonic() - t:.0f} s; {load_average()})")

        if args.breakdown:
            log("\n### breakdown of a hybrid query, and query-vector parity with Python")
            info, rows = bench_page_runs(playwright, server)
            report_bench_page(info, rows, html)
    return summary


def print_summary(rows: list[dict]) -> None:
    def med(values):
        return statistics.median(values) if values else float("nan")

    def p95(values):
        return percentile(values, 95) if values else float("nan")

    log("\n## summary (gzip -6 KB computed locally; times in ms; warm = index loaded, repeat = shards in memory)")
    cols = ["site", "chunks", "cold 1st kw KB", "cold 1st hybrid KB", "later query KB (keyword shards)", "cold focus->kw ms",
            "warm focus->kw ms", "kw p50/p95 (1st run)", "kw p50/p95 (repeat)", "hybrid p50/p95 (repeat)",
            "beyond embed p50/p95 (1st run)", "beyond embed p50/p95 (repeat)"]
    log("| " + " | ".join(cols) + " |")
    log("|" + "---|" * len(cols))
    for r in rows:
        kw, hy, be = r.get("keyword", {}), r.get("hybrid", {}), r.get("beyond", {})
        pair = lambda v: f"{med(v):.1f} / {p95(v):.1f}"  # noqa: E731
        log(f"| {r['name']} | {r['chunks']} | {r.get('first_keyword_kb', float('nan')):.1f} | "
            f"{r.get('first_hybrid_kb', float('nan')):.0f} | {r.get('later_kb', float('nan')):.1f} "
            f"({r.get('later_kw_kb', float('nan')):.1f}) | "
            f"{r.get('cold_first_keyword_ms', float('nan')):.0f} | {r.get('warm_first_keyword_ms', float('nan')):.0f} | "
            f"{pair(kw.get('first', []))} | {pair(kw.get('repeat', []))} | {pair(hy.get('repeat', []))} | "
            f"{pair(be.get('first', []))} | {pair(be.get('repeat', []))} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo-html", type=Path, help="a built demo_docs site to reuse (default: build one)")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--site", action="append", default=[], metavar="NAME=HTML_DIR",
                        help="more built sites, e.g. 25k=/tmp/scale/25k/html (repeatable; measured in order)")
    parser.add_argument("--isolated", action="store_true",
                        help="serve with COOP/COEP headers (cross-origin isolation: onnxruntime-web threads)")
    parser.add_argument("--runs", type=int, default=2, help="cold+warm visits per site (default 2)")
    parser.add_argument("--later", type=int, default=10, help="later queries per cold visit (default 10)")
    parser.add_argument("--queries", type=int, default=60, help="queries for the warm latencies (default 60, max 100)")
    parser.add_argument("--breakdown", action="store_true", help="also the benchmark page (stages, cosine)")
    parser.add_argument("--client", type=Path, help="serve this client build instead of the package's "
                        "(a before/after: another checkout's sphinx_rag/static/sphinx_rag)")
    parser.add_argument("--typed", action="store_true",
                        help="also one query typed key by key, Save-Data on and off (bench_typed.py)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed for one site load")
    args = parser.parse_args()
    BenchHandler.isolated = args.isolated
    use_client(args.client)

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"no Chromium at {CHROMIUM}")
    if client_missing():
        raise SystemExit(client_missing())
    if b"embed_ms" not in (client_dir() / "worker.js").read_bytes():
        raise SystemExit("the built worker.js reports no timings: run `npm run build` in js/")

    log("# sphinx-rag browser benchmark (index format 2)")
    log(f"Chromium: {chromium_version()}")
    log(f"CPU contention at start: {load_average()}")
    work = Path(tempfile.mkdtemp(prefix="sphinx-rag-bench-browser-"))
    try:
        bench_dir = work / "bench"
        if args.breakdown:
            build_bench_page(bench_dir)
        sites = []
        if not args.skip_demo:
            if args.demo_html:
                sites.append(("demo", args.demo_html))
            else:
                start = time.perf_counter()
                build_site(DEMO, work / "demo" / "html", "-d", str(work / "demo" / "doctrees"), fresh=False,
                           log=work / "demo.log")
                log(f"built the demo docs in {time.perf_counter() - start:.0f} s")
                sites.append(("demo", work / "demo" / "html"))
        for item in args.site:
            name, _, path = item.partition("=")
            sites.append((name, Path(path)))

        from playwright.sync_api import sync_playwright

        summaries = []
        with sync_playwright() as playwright:
            for name, html in sites:
                summaries.append(bench_site(playwright, name, html, bench_dir, args))
        print_summary(summaries)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"\nCPU contention at end: {load_average()}")


if __name__ == "__main__":
    main()
