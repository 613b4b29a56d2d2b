"""Browser benchmark: the search as a reader gets it, in headless Debian Chromium.

Not a test (not run in CI): prints numbers beside the targets they are judged by. For
the demo docs and for a generated API corpus of >= 20,000 chunks, each served over HTTP
on 127.0.0.1 by Python's http.server (no gzip, like `python -m http.server`):

- warm query latency (median, p95) in keyword and hybrid mode, measured inside the
  search worker with performance.now() (the worker's optional `timings` field of its
  "results" message: embed_ms, retrieve_ms) and as the page's postMessage round trip;
- time from the first focus of the search button to the first keyword results and to
  hybrid-ready, cold (fresh profile, empty Cache Storage) and warm (same profile,
  second visit after a browser restart);
- bytes downloaded by a cold first query (JS, wasm, model, index), counted by the
  server (status line + headers + body as sent) and by Playwright's response sizes,
  with gzip sizes computed locally;
- a breakdown of one hybrid query (spelling + WordPiece, onnxruntime, BM25, dense,
  fusion) and the cosine of the browser's query vector with Python's
  (Searcher.embedder.embed([Searcher.embedding_query(q)])), from a benchmark page that
  drives the client modules (js/src) directly.

Chromium is /usr/bin/chromium driven by Python Playwright (never `playwright install`).
The page side is JS beside this file: bench_browser_hooks.js (init script: worker
timings, the focus-to-results and query runs) and bench_browser_page.js (the benchmark
page's module, bundled with esbuild).

    python benchmarks/bench_browser.py                       # builds the demo docs and the corpus
    python benchmarks/bench_browser.py --corpus-html /tmp/bench_corpus/html
    python benchmarks/bench_browser.py --skip-corpus

Building the corpus (~1,200 objects of scikit-learn's and numpy's public API) embeds
~20k+ chunks: ~10+ minutes on 2 cores the first time, then the embedding cache
($SPHINX_RAG_CACHE, default ~/.cache/sphinx-rag) makes rebuilds quick.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
JS = REPO / "js"
sys.path[:0] = [str(HERE), str(REPO / "tests")]  # make_api_corpus; site_helpers (shared with the tests)

from site_helpers import (  # noqa: E402
    CHROMIUM, CLIENT_DIR, DEMO, QuietHandler, StaticServer, build_site, chromium_options,
    client_is_current, client_missing, manifest_of,
)

HOOKS = HERE / "bench_browser_hooks.js"  # init script: worker hook, focusAndTime, runQueries
BENCH_PAGE = HERE / "bench_browser_page.js"  # the benchmark page's module (js/src driven directly)

TARGETS = {
    "hybrid_p50_ms": 25.0,      # warm hybrid query, median, at 20k chunks
    "retrieve_ms": 5.0,         # retrieval beyond the embedding
    "first_keyword_ms": 300.0,  # first keyword results from focus, localhost
    "cosine": 0.99999,          # browser vs Python query vector
}

# scikit-learn's public modules (its API reference) and numpy's numpydoc-documented ones.
CORPUS_MODULES = ",".join([
    "sklearn.base", "sklearn.calibration", "sklearn.cluster", "sklearn.compose", "sklearn.covariance",
    "sklearn.cross_decomposition", "sklearn.datasets", "sklearn.decomposition", "sklearn.discriminant_analysis",
    "sklearn.dummy", "sklearn.ensemble", "sklearn.exceptions", "sklearn.feature_extraction",
    "sklearn.feature_extraction.image", "sklearn.feature_extraction.text", "sklearn.feature_selection",
    "sklearn.frozen", "sklearn.gaussian_process", "sklearn.gaussian_process.kernels", "sklearn.impute",
    "sklearn.inspection", "sklearn.isotonic", "sklearn.kernel_approximation", "sklearn.kernel_ridge",
    "sklearn.linear_model", "sklearn.manifold", "sklearn.metrics", "sklearn.metrics.cluster",
    "sklearn.metrics.pairwise", "sklearn.mixture", "sklearn.model_selection", "sklearn.multiclass",
    "sklearn.multioutput", "sklearn.naive_bayes", "sklearn.neighbors", "sklearn.neural_network",
    "sklearn.pipeline", "sklearn.preprocessing", "sklearn.random_projection", "sklearn.semi_supervised",
    "sklearn.svm", "sklearn.tree", "sklearn.utils", "sklearn.utils.class_weight", "sklearn.utils.extmath",
    "sklearn.utils.graph", "sklearn.utils.multiclass", "sklearn.utils.sparsefuncs", "sklearn.utils.validation",
    "sklearn.utils.parallel", "sklearn.utils.discovery", "sklearn.utils.estimator_checks", "sklearn.callback",
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.polynomial", "numpy.polynomial.polynomial",
    "numpy.polynomial.chebyshev", "numpy.polynomial.legendre", "numpy.polynomial.hermite",
    "numpy.polynomial.hermite_e", "numpy.polynomial.laguerre", "numpy.ma", "numpy.testing", "numpy.strings",
    "numpy.char", "numpy.rec", "numpy.lib.stride_tricks", "numpy.lib.npyio", "numpy.lib.format",
    "numpy.lib.recfunctions", "numpy.lib.mixins", "numpy.lib.array_utils", "numpy.exceptions", "numpy.dtypes",
])

# 100 varied queries: identifiers, keyword pairs, questions, typos; short and long.
QUERIES = [
    "What are the values of the strategy parameter in a dummy classifier?",
    "StandardScaler with_mean", "how do I impute missing values", "KFold n_splits",
    "regularization strength of ridge regression", "random_state", "fit_transform",
    "cross validation with shuffled folds", "scale features to unit variance", "number of neighbors",
    "confusion matrix", "pipeline of transformers", "n_estimators", "learning rate of gradient boosting",
    "how to split data into train and test sets", "precision recall curve", "one hot encoding of categories",
    "principal component analysis explained variance", "kernel of a support vector machine", "max_depth",
    "early stopping", "class_weight balanced", "sample weights in fit", "predict_proba",
    "What does the alpha parameter control in Lasso?", "silhouette score of a clustering",
    "mean squared error", "grid search over hyperparameters", "decision function of a classifier",
    "valeus of the stratgey paramter", "standrad scaler", "logisitc regression penalty",
    "clasifier probability calibration", "imputer strategy median", "tol", "verbose output during fitting",
    "number of jobs to run in parallel", "n_jobs", "warm_start", "feature importances of a random forest",
    "how are missing values handled by trees", "polynomial features degree", "normalize rows to unit norm",
    "quantile transformer output distribution", "nearest neighbors radius", "ball tree leaf size",
    "kmeans number of clusters", "DBSCAN eps", "gaussian mixture covariance type",
    "t-SNE perplexity", "isotonic regression increasing", "multi-output regression",
    "one-vs-rest classifier", "label encoding of targets", "text feature extraction tf-idf",
    "stop words", "hashing vectorizer", "permutation importance", "partial dependence plot",
    "roc auc score for multiclass", "f1 score average", "r2 score", "log loss",
    "cosine similarity between samples", "pairwise distances", "train test split stratify",
    "time series split", "learning curve", "validation curve", "cross_val_score scoring",
    "make a classification dataset", "load iris dataset", "sparse matrix input",
    "convergence warning", "ValueError if the input contains NaN", "matrix inverse",
    "singular value decomposition", "eigenvalues of a symmetric matrix", "fast fourier transform",
    "random number generator seed", "normal distribution samples", "sort an array along an axis",
    "concatenate arrays", "reshape without copying", "masked array fill value", "polynomial fit least squares",
    "chebyshev series", "save an array to a .npy file", "load text file", "broadcast arrays",
    "cumulative sum", "histogram bins", "unique values with counts", "argmax along axis",
    "dtype of the output", "assert arrays almost equal", "structured arrays with named fields",
    "string operations on arrays", "how can I compute the median ignoring NaN?",
    "Which solver should I use for a large sparse logistic regression problem?",
]
assert len(QUERIES) == 100, len(QUERIES)
# The cosine check: 20 of them (questions, identifiers, typos).
COSINE_QUERIES = QUERIES[:16] + QUERIES[29:33]
WARMUP = 10


def log(msg: str = "") -> None:
    print(msg, flush=True)


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, int(np.ceil(p / 100 * len(s))) - 1))
    return s[k]


def fmt_ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"median {statistics.median(values):7.2f} ms   p95 {percentile(values, 95):7.2f} ms"


def size(n: float) -> str:
    return f"{n / 1e6:7.2f} MB" if n >= 1e6 else f"{n / 1e3:7.1f} KB"


def verdict(value: float, target: float, *, at_least: bool = False) -> str:
    ok = value >= target if at_least else value <= target
    return f"[target {'>=' if at_least else '<='} {target:g}: {'met' if ok else 'MISSED'}]"


# -- HTTP server ------------------------------------------------------------------------------


@dataclass
class Hit:
    t: float  # time.monotonic() when the response was complete
    path: str
    status: int
    sent: int  # bytes written to the socket: status line + headers + body
    encoding: str  # Content-Encoding sent ("" = identity)


class _CountingWriter:
    def __init__(self, inner):
        self.inner = inner
        self.count = 0

    def write(self, data):
        self.count += len(data)
        return self.inner.write(data)

    def __getattr__(self, name):  # closed, fileno, ...
        return getattr(self.inner, name)


def client_file(path: str) -> Path | None:
    """The current client build's file served for the URL path /_static/sphinx_rag/<name>, if any."""
    name = path.rsplit("/", 1)[-1]
    if path.startswith("/_static/sphinx_rag/") and path.count("/") == 3 and (CLIENT_DIR / name).is_file():
        return CLIENT_DIR / name
    return None


class _Handler(QuietHandler):
    """http.server as `python -m http.server` serves (no gzip, no Cache-Control), plus:
    the client files from the package's current build (CLIENT_DIR) and /__bench__/ from a
    directory, and every response counted."""

    hits: list[Hit]
    bench_dir: str
    lock: threading.Lock
    isolated = False  # --isolated: COOP/COEP headers, so onnxruntime-web may use threads

    def end_headers(self):
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def setup(self):
        super().setup()
        self.wfile = _CountingWriter(self.wfile)

    def translate_path(self, path):
        clean = unquote(urlsplit(path).path)
        if clean.startswith("/__bench__/"):
            return str(Path(self.bench_dir) / clean[len("/__bench__/"):])
        client = client_file(clean)  # the current client build, whatever the site was built with
        return str(client) if client else super().translate_path(path)

    def guess_type(self, path):
        if str(path).endswith((".mjs", ".js")):
            return "text/javascript"
        if str(path).endswith(".wasm"):
            return "application/wasm"
        return super().guess_type(path)

    def send_header(self, keyword, value):
        if keyword.lower() == "content-encoding":
            self._encoding = value
        super().send_header(keyword, value)

    def handle_one_request(self):
        before = self.wfile.count
        self._encoding = ""
        self.path = ""
        super().handle_one_request()
        if self.path:
            with self.lock:
                self.hits.append(Hit(time.monotonic(), urlsplit(self.path).path, getattr(self, "_status", 0),
                                     self.wfile.count - before, self._encoding))

    def send_response(self, code, message=None):
        self._status = code
        super().send_response(code, message)


class Server(StaticServer):
    def __init__(self, root: Path, bench_dir: Path):
        self.hits: list[Hit] = []
        super().__init__(root, _Handler, hits=self.hits, bench_dir=str(bench_dir), lock=threading.Lock())

    def since(self, t: float) -> list[Hit]:
        return [h for h in list(self.hits) if h.t >= t]

    def local_file(self, path: str) -> Path | None:
        f = client_file(path) or self.root / path.lstrip("/")
        return f if f.is_file() else None


# -- categories of downloaded bytes ------------------------------------------------------------

CATEGORIES = ("JS", "wasm", "model", "index", "other")


def client_stages(html: Path) -> dict[str, set[str]]:
    """The site's index files (its manifest.json) by the client's loading stage: "keyword"
    (first results) and "vectors"; names relative to _static/sphinx_rag/. The stages are
    the client's own lists (js/src/worker/loader.js), read with node."""
    script = ("const a = await import(process.argv[1]); "
              "console.log(JSON.stringify({keyword: a.KEYWORD_FILES, vectors: a.VECTOR_FILES}))")
    proc = subprocess.run(["node", "--input-type=module", "-e", script, (JS / "src" / "worker" / "loader.js").as_uri()],
                          capture_output=True, text=True, check=True, timeout=60)
    listed = set(manifest_of(html)["files"])
    stages = {stage: set(names) & listed for stage, names in json.loads(proc.stdout).items()}
    stages["keyword"].add("manifest.json")  # not in its own list; fetched first
    return stages


def category(path: str) -> str:
    if "/_static/sphinx_rag/model/" in path:
        return "model"
    if path.endswith(".wasm"):
        return "wasm"
    if path.endswith((".js", ".mjs")):
        return "JS"
    if "/_static/sphinx_rag/" in path:
        return "index"
    return "other"


# -- the benchmark page ------------------------------------------------------------------------


def build_bench_page(out: Path) -> None:
    """Bundle BENCH_PAGE with esbuild (js/node_modules) into out/bench.js + bench.html."""
    out.mkdir(parents=True, exist_ok=True)
    entry = BENCH_PAGE
    script = (
        "import { build } from 'esbuild';\n"
        f"await build({{ entryPoints: [{json.dumps(str(entry))}], outfile: {json.dumps(str(out / 'bench.js'))},"
        f" bundle: true, format: 'esm', target: ['es2022'], platform: 'browser', logLevel: 'warning',"
        f" nodePaths: [{json.dumps(str(JS / 'node_modules'))}] }});\n"
    )
    subprocess.run(["node", "--input-type=module", "-e", script], cwd=JS, check=True, timeout=300)
    (out / "bench.html").write_text(
        '<!doctype html><meta charset="utf-8"><title>sphinx-rag bench</title>'
        '<script type="module" src="/__bench__/bench.js"></script>\n')


# -- the runs -----------------------------------------------------------------------------------


@dataclass
class LoadRun:
    kind: str  # cold | warm
    timing: dict
    hits: list[Hit] = field(default_factory=list)  # after focus
    page_hits: list[Hit] = field(default_factory=list)  # while the page loaded (before focus)
    start: float = 0.0  # time.monotonic() just before the focus
    pw_bytes: dict = field(default_factory=dict)  # path -> bytes (Playwright sizes), after focus


def new_context(playwright, profile: Path):
    ctx = playwright.chromium.launch_persistent_context(
        str(profile), **chromium_options(viewport={"width": 1280, "height": 900}))
    ctx.set_default_timeout(120_000)
    ctx.add_init_script(path=HOOKS)
    return ctx


def visit(ctx, server: Server, kind: str, timeout_s: float) -> LoadRun:
    """One visit: load index.html, then focus the search button and time the first results."""
    page = ctx.new_page()
    requests = []

    def on_finished(request):
        requests.append(request)

    ctx.on("requestfinished", on_finished)
    try:
        loading = time.monotonic()
        page.goto(server.url + "index.html", wait_until="load")
        page.wait_for_function("() => window.sphinxRag && window.sphinxRag.dialog", timeout=30_000)
        page.wait_for_timeout(300)  # let the page settle (fonts, theme scripts)
        start = time.monotonic()
        page_hits = [h for h in server.since(loading) if h.t < start]
        n_before = len(requests)
        timing = page.evaluate("([q, t]) => window.__ragBench.focusAndTime(q, t)",
                               ["DummyClassifier strategy", timeout_s * 1000])
        page.wait_for_timeout(500)  # trailing requests (none expected)
        run = LoadRun(kind, timing, server.since(start), page_hits, start=start)
        for r in requests[n_before:]:
            try:
                sizes = r.sizes()
            except Exception:  # noqa: BLE001 - a request without sizes (e.g. served from cache)
                continue
            path = urlsplit(r.url).path
            run.pw_bytes[path] = run.pw_bytes.get(path, 0) + sizes["responseBodySize"] + sizes["responseHeadersSize"]
        return run
    finally:
        ctx.remove_listener("requestfinished", on_finished)
        page.close()


def load_runs(playwright, server: Server, runs: int, timeout_s: float) -> list[LoadRun]:
    out = []
    for _ in range(runs):
        profile = Path(tempfile.mkdtemp(prefix="sphinx-rag-bench-profile-"))
        try:
            for kind in ("cold", "warm"):  # warm: the same profile, browser restarted
                ctx = new_context(playwright, profile)
                try:
                    out.append(visit(ctx, server, kind, timeout_s))
                finally:
                    ctx.close()
        finally:
            shutil.rmtree(profile, ignore_errors=True)
    return out


def run_queries(page, queries: list[str]) -> list[dict]:
    return page.evaluate("([q, t]) => window.__ragBench.runQueries(q, t)", [queries, 60_000])


def query_runs(playwright, server: Server, timeout_s: float) -> tuple[list[dict], list[dict], dict]:
    """Warm keyword-mode (model held back) and hybrid-mode query latencies."""
    profile = Path(tempfile.mkdtemp(prefix="sphinx-rag-bench-profile-"))
    ctx = new_context(playwright, profile)
    held = []
    try:
        ctx.route("**/_static/sphinx_rag/model/model.onnx", lambda route: held.append(route))
        page = ctx.new_page()
        page.goto(server.url + "index.html", wait_until="load")
        page.wait_for_function("() => window.sphinxRag && window.sphinxRag.dialog", timeout=30_000)
        page.evaluate("() => window.sphinxRag.dialog.warmUp()")
        page.wait_for_function("() => window.__ragBench.events.some(e => e.type === 'status' && e.mode === 'keyword')",
                               timeout=timeout_s * 1000)
        page.wait_for_timeout(1000)  # let the vectors download and hash (the model is held)
        run_queries(page, QUERIES[:WARMUP])
        keyword = run_queries(page, QUERIES)
        for _ in range(int(timeout_s * 10)):
            if held:
                break
            page.wait_for_timeout(100)
        for route in held:
            route.continue_()
        page.wait_for_function("() => window.__ragBench.events.some(e => e.type === 'status' && e.mode === 'hybrid')",
                               timeout=timeout_s * 1000)
        page.wait_for_timeout(500)
        run_queries(page, QUERIES[:WARMUP])
        hybrid = run_queries(page, QUERIES)
        info = page.evaluate("() => ({isolated: globalThis.crossOriginIsolated, cores: navigator.hardwareConcurrency})")
        return keyword, hybrid, info
    finally:
        ctx.close()
        shutil.rmtree(profile, ignore_errors=True)


def bench_page_runs(playwright, server: Server, timeout_s: float) -> tuple[dict, list[dict]]:
    profile = Path(tempfile.mkdtemp(prefix="sphinx-rag-bench-profile-"))
    ctx = new_context(playwright, profile)
    try:
        page = ctx.new_page()
        page.goto(server.url + "__bench__/bench.html", wait_until="load")
        page.wait_for_function("() => typeof window.benchInit === 'function'", timeout=30_000)
        base = server.url + "_static/sphinx_rag/"
        info = page.evaluate("([b, o]) => window.benchInit(b, o)", [base, base])
        page.evaluate("(q) => window.benchQueries(q, false)", QUERIES[:WARMUP])
        rows = page.evaluate("(q) => window.benchQueries(q, true)", QUERIES)
        return info, rows
    finally:
        ctx.close()
        shutil.rmtree(profile, ignore_errors=True)


# -- reporting ----------------------------------------------------------------------------------


def report_queries(title: str, rows: list[dict], *, hybrid: bool, n_chunks: int) -> None:
    ok = [r for r in rows if not r.get("timeout")]
    timeouts = len(rows) - len(ok)
    modes = sorted({r["mode"] for r in ok})
    log(f"  {title}: {len(ok)} queries (modes {','.join(modes)}; {timeouts} timed out)")
    embed = [r["embed"] for r in ok if r["embed"] is not None]
    retrieve = [r["retrieve"] for r in ok if r["retrieve"] is not None]
    total = [r["embed"] + r["retrieve"] for r in ok if r["embed"] is not None]
    rt = [r["roundTrip"] for r in ok]
    big = n_chunks >= 20_000
    if hybrid:
        p50 = statistics.median(total) if total else float("nan")
        log(f"    in worker, total       {fmt_ms(total)}   "
            + (verdict(p50, TARGETS['hybrid_p50_ms']) if big else f"(target p50 <= {TARGETS['hybrid_p50_ms']:g} ms at 20k chunks)"))
        log(f"    - query embedding      {fmt_ms(embed)}   (spelling + WordPiece + onnxruntime + pooling)")
        r50 = statistics.median(retrieve) if retrieve else float("nan")
        log(f"    - retrieval beyond it  {fmt_ms(retrieve)}   {verdict(r50, TARGETS['retrieve_ms'])} (median)")
        if total:
            share = sum(embed) / sum(total)
            log(f"    share of hybrid query time in the embedding: {share:.0%} (sum over queries), "
                f"{statistics.median(e / t for e, t in zip(embed, total) if t > 0):.0%} (median per query)")
    else:
        log(f"    in worker (BM25 + result assembly) {fmt_ms(retrieve)}")
    log(f"    page round trip (postMessage -> results message) {fmt_ms(rt)}")


def report_loads(runs: list[LoadRun], server: Server, stages: dict[str, set[str]]) -> None:
    for kind in ("cold", "warm"):
        rs = [r for r in runs if r.kind == kind]
        if not rs:
            continue
        log(f"  {kind} ({len(rs)} runs{'; fresh profile, empty Cache Storage' if kind == 'cold' else '; same profile, browser restarted'}):")

        def col(key, rs=rs):
            vals = [r.timing.get(key) for r in rs]
            return [v for v in vals if v is not None], sum(v is None for v in vals)

        for key, label in (("keywordResults", "first keyword results (worker message)"),
                           ("keywordShown", "first keyword results shown (DOM)"),
                           ("hybridReady", "hybrid-ready (status message)"),
                           ("hybridShown", "first hybrid results shown (DOM)")):
            vals, missing = col(key)
            text = ", ".join(f"{v:.0f}" for v in vals) + (f" ({missing} missing)" if missing else "")
            extra = ""
            if key == "keywordShown" and vals:
                extra = "  " + verdict(statistics.median(vals), TARGETS["first_keyword_ms"]) + " (median)"
            med = f"median {statistics.median(vals):7.0f} ms" if vals else "n/a"
            log(f"    {label:42s} {med}   runs: {text} ms{extra}")
        errs = [r.timing.get("error") or r.timing.get("status") for r in rs if r.timing.get("error")]
        if errs:
            log(f"    ERRORS: {errs}")
        # Bytes of the first run of this kind: what the first query downloaded.
        run = rs[0]
        by_cat = {c: 0 for c in CATEGORIES}
        pw_cat = {c: 0 for c in CATEGORIES}
        gz_cat = {c: 0 for c in CATEGORIES}
        raw_cat = {c: 0 for c in CATEGORIES}
        files = {c: [] for c in CATEGORIES}
        encodings = set()
        for h in run.hits:
            c = category(h.path)
            by_cat[c] += h.sent
            encodings.add(h.encoding or "identity")
            files[c].append(f"{h.path.rsplit('/', 1)[-1]} ({h.status})")
            local = server.local_file(h.path) if h.status == 200 else None
            if local is not None:
                data = local.read_bytes()
                raw_cat[c] += len(data)
                gz_cat[c] += len(gzip.compress(data, compresslevel=6))
        for path, n in run.pw_bytes.items():
            pw_cat[category(path)] += n
        log(f"    bytes downloaded after focus (counted by the server: status line + headers + body; "
            f"Content-Encoding: {', '.join(sorted(encodings)) or 'none'}):")
        for c in CATEGORIES:
            if not files[c]:
                continue
            gz = f"   gzip -6 (computed locally) {size(gz_cat[c])} of {size(raw_cat[c])}" if raw_cat[c] else ""
            log(f"      {c:6s} {size(by_cat[c])}   (Playwright sizes {size(pw_cat[c])}){gz}")
            log(f"             {', '.join(files[c])}")
        log(f"      total  {size(sum(by_cat.values()))}   (Playwright sizes {size(sum(pw_cat.values()))})"
            + (f"   gzip -6 total {size(sum(gz_cat.values()))}" if sum(raw_cat.values()) else ""))
        served = {}
        for h in run.hits:
            served[h.path] = served.get(h.path, 0) + h.sent
        differ = [f"{path.rsplit('/', 1)[-1]} {size(run.pw_bytes.get(path, 0)).strip()} vs {size(n).strip()}"
                  for path, n in served.items() if abs(run.pw_bytes.get(path, 0) - n) > 1000]
        if differ:
            log(f"      (Playwright's sizes differ from the server's for: {'; '.join(differ)})")
        if kind == "cold" and run.hits:
            # Server clock, relative to just before the focus (IPC adds a few ms).
            def done(names, run=run):  # names relative to _static/sphinx_rag/
                ts = [h.t for h in run.hits if h.path.split("/_static/sphinx_rag/", 1)[-1] in names]
                return f"+{(max(ts) - run.start) * 1000:.0f} ms" if ts else "n/a"
            log(f"      last byte sent (server clock, from focus): keyword files {done(stages['keyword'])}, "
                f"embeddings {done(stages['vectors'])}, wasm {done({'ort-wasm-simd-threaded.wasm'})}, "
                f"model.onnx {done({'model/model.onnx'})}")
        if kind == "cold":
            ours = [h for h in run.page_hits if "/_static/sphinx_rag/" in h.path]
            log(f"    loaded with the page, before focus: {size(sum(h.sent for h in ours))} "
                f"({', '.join(h.path.rsplit('/', 1)[-1] for h in ours)})")


def report_bench_page(info: dict, rows: list[dict], html: Path) -> None:
    from sphinx_rag.retrieve import Searcher

    log(f"  benchmark page (client modules driven directly, main thread, 1 onnxruntime thread; "
        f"binary-first dense: {info.get('binaryFirst')}, fusion {info.get('fusion')}):")
    for key, label in (("spell", "spelling correction"), ("wordpiece", "WordPiece tokenization"),
                       ("embed", "embed() (WordPiece + onnxruntime + pooling)"), ("bm25", "BM25 scores + top-100"),
                       ("dense", "dense scores + top-100"), ("fuse", "RRF fusion of the two top-100"),
                       ("hybridSearch", "hybridSearch() (BM25 + dense + fusion + results)")):
        log(f"    {label:48s} {fmt_ms([r[key] for r in rows])}")
    log(f"    query length: median {statistics.median(r['tokens'] for r in rows):.0f} WordPiece tokens "
        f"(max {max(r['tokens'] for r in rows)}) incl. [CLS]/[SEP]")

    searcher = Searcher(html)
    by_query = {r["query"]: r for r in rows}
    cosines, changed = [], 0
    for q in COSINE_QUERIES:
        text = searcher.embedding_query(q)
        py = np.asarray(searcher.embedder.embed([text])[0], dtype=np.float64)
        br = np.asarray(by_query[q]["vector"], dtype=np.float64)
        if by_query[q]["text"] != text:
            changed += 1
        cosines.append(float(py @ br / (np.linalg.norm(py) * np.linalg.norm(br))))
    worst = min(cosines)
    log(f"  cosine(browser query vector, Python Searcher vector) over {len(cosines)} queries: "
        f"min {worst:.7f}  mean {statistics.fmean(cosines):.7f}  "
        f"{sum(c >= TARGETS['cosine'] for c in cosines)}/{len(cosines)} >= {TARGETS['cosine']}  "
        f"{verdict(worst, TARGETS['cosine'], at_least=True)} (min)")
    if changed:
        log(f"    WARNING: the spelling-corrected text differs between browser and Python for {changed} queries")


def bench_site(playwright, name: str, html: Path, bench_dir: Path, args) -> None:
    n_chunks = manifest_of(html)["counts"]["chunks"]
    log(f"\n## {name}")
    log(f"site: {html}")
    log(f"chunks: {n_chunks}" + ("" if n_chunks >= 20_000 or name.startswith("demo") else "   (BELOW the 20,000 asked for)"))
    if not client_is_current(html):
        log("note: the site's copy of the client differs from the current build; serving the current build "
            f"({CLIENT_DIR.relative_to(REPO)})")
    with ExitStack() as stack:
        server = Server(html, bench_dir)
        stack.callback(server.stop)
        log(f"server: {server.url} (Python http.server: no gzip, no Cache-Control; Last-Modified only)")
        log(f"CPU contention: {load_average()}")

        log("\n### warm query latency (in the worker, performance.now())")
        t = time.monotonic()
        keyword, hybrid, info = query_runs(playwright, server, args.timeout)
        threads = f"up to {min(4, info['cores'] or 1)} threads" if info["isolated"] else "1 thread"
        log(f"  (page crossOriginIsolated={info['isolated']}: the search worker asks onnxruntime-web for {threads}; "
            f"navigator.hardwareConcurrency={info['cores']}; {WARMUP} warm-up queries first; "
            "performance.now() is coarsened to 0.1 ms in a page that is not cross-origin isolated)")
        report_queries("keyword mode (before the model loads)", keyword, hybrid=False, n_chunks=n_chunks)
        report_queries("hybrid mode", hybrid, hybrid=True, n_chunks=n_chunks)
        log(f"  ({time.monotonic() - t:.0f} s; CPU contention: {load_average()})")

        log("\n### breakdown of a hybrid query, and query-vector parity with Python")
        t = time.monotonic()
        info, rows = bench_page_runs(playwright, server, args.timeout)
        report_bench_page(info, rows, html)
        log(f"  ({time.monotonic() - t:.0f} s; CPU contention: {load_average()})")

        log("\n### from first focus of the search button (query already typed) to results")
        t = time.monotonic()
        runs = load_runs(playwright, server, args.runs, args.timeout)
        report_loads(runs, server, client_stages(html))
        log(f"  targets: first keyword results <= {TARGETS['first_keyword_ms']:g} ms from focus on localhost")
        log(f"  ({time.monotonic() - t:.0f} s; CPU contention: {load_average()})")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--demo-html", type=Path, help="a built demo_docs site to reuse (default: build one)")
    parser.add_argument("--corpus-html", type=Path, help="a built API corpus site to reuse (default: build one)")
    parser.add_argument("--corpus-dir", type=Path, default=Path("/tmp/bench_corpus"),
                        help="where to generate and build the corpus when --corpus-html is not given")
    parser.add_argument("--corpus-modules", default=CORPUS_MODULES)
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--isolated", action="store_true",
                        help="serve with COOP/COEP headers (cross-origin isolation: onnxruntime-web threads)")
    parser.add_argument("--runs", type=int, default=3, help="cold+warm load runs per site (default 3)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed for one site load")
    args = parser.parse_args()
    _Handler.isolated = args.isolated

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"no Chromium at {CHROMIUM}")
    if client_missing():
        raise SystemExit(client_missing())
    if b"embed_ms" not in (CLIENT_DIR / "worker.js").read_bytes():
        raise SystemExit("the built worker.js reports no timings: run `npm run build` in js/")

    log("# sphinx-rag browser benchmark")
    log(f"Chromium: {subprocess.run([CHROMIUM, '--version'], capture_output=True, text=True).stdout.strip()}")
    log(f"CPU contention at start: {load_average()}")
    work = Path(tempfile.mkdtemp(prefix="sphinx-rag-bench-browser-"))
    try:
        bench_dir = work / "bench"
        build_bench_page(bench_dir)
        sites = []
        if args.demo_html:
            sites.append(("demo docs", args.demo_html))
        else:
            start = time.perf_counter()
            build_site(DEMO, work / "demo" / "html", "-d", str(work / "demo" / "doctrees"), fresh=False,
                       log=work / "demo.log")
            log(f"built the demo docs in {time.perf_counter() - start:.0f} s")
            sites.append(("demo docs", work / "demo" / "html"))
        if not args.skip_corpus:
            if args.corpus_html:
                corpus = args.corpus_html
            else:
                from make_api_corpus import write_project

                n = write_project(args.corpus_dir / "src", args.corpus_modules.split(","))
                start = time.perf_counter()
                build_site(args.corpus_dir / "src", args.corpus_dir / "html", "-j", "2", "-d",
                           str(args.corpus_dir / "doctrees"), fresh=False, log=args.corpus_dir / "build.log")
                log(f"built the API corpus ({n} objects) in {time.perf_counter() - start:.0f} s (-j 2)")
                corpus = args.corpus_dir / "html"
            sites.append(("API corpus (scikit-learn + numpy public API)", corpus))

        from playwright.sync_api import sync_playwright

        with sync_playwright() as playwright:
            for name, html in sites:
                bench_site(playwright, name, html, bench_dir, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    log(f"\nCPU contention at end: {load_average()}")


if __name__ == "__main__":
    main()
