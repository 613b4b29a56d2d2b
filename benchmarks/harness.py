"""What the benchmark scripts share, so that none imports another for it (no import circle):

- paths: importing it puts the repository and tests/ on sys.path (``sphinx_rag``, and
  ``site_helpers``, the helpers shared with the tests);
- printing: log(), the machine's load, medians/percentiles, sizes, a target's verdict;
- timing: Stopwatch, and interleaved() rounds (the order rotates each round, so no row
  always gets the quieter moment of a shared machine);
- sites: a scratch directory, a copy of a site's sources, a one-page edit;
- serving: BenchServer, a directory on 127.0.0.1 with the current client build and every
  response counted; Chromium with the project's flags; the 100 varied QUERIES;
- JSON output (write_json).

Scripts run as ``python benchmarks/X.py`` (benchmarks/ is then on sys.path) and start with
``import harness``. It imports neither playwright nor onnxruntime.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
for _path in (str(REPO / "tests"), str(REPO), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import site_helpers  # noqa: E402
from site_helpers import CHROMIUM, QuietHandler, StaticServer, chromium_options  # noqa: E402

CLIENT = "/_static/sphinx_rag/"  # the URL path of the search bar's files
INDEX = CLIENT + "index/"  # ... and of the index


# -- printing ---------------------------------------------------------------------------------


def log(msg: str = "") -> None:
    print(msg, flush=True)


def load() -> float:
    """The 1-minute load average (2 shared cores: other work competes for them)."""
    return os.getloadavg()[0]


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    s = sorted(values)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))
    return s[k]


def p50_p95(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"p50 {statistics.median(values):7.2f} ms   p95 {percentile(values, 95):7.2f} ms"


def run_list(values: list[float], fmt: str = ".1f") -> str:
    """Each run's value, for a table's "runs" column: ``12.3, 12.9, 13.4``."""
    return ", ".join(format(v, fmt) for v in values)


def size(n: float) -> str:
    return f"{n / 1e6:7.2f} MB" if n >= 1e6 else f"{n / 1e3:7.1f} KB"


def gzip_size(data: bytes) -> int:
    """gzip -6: what a server that compresses would send (http.server does not)."""
    return len(gzip.compress(data, compresslevel=6))


def verdict(value: float, target: float, *, at_least: bool = False) -> str:
    ok = value >= target if at_least else value <= target
    return f"[target {'>=' if at_least else '<='} {target:g}: {'met' if ok else 'MISSED'}]"


def write_json(path: Path, data) -> Path:
    Path(path).write_text(json.dumps(data, indent=1))
    return Path(path)


# -- timing -----------------------------------------------------------------------------------


class Stopwatch:
    """``with Stopwatch() as t: ...``, then ``t.seconds``; ``t.now()`` while it runs."""

    def __enter__(self) -> Stopwatch:
        self.start = time.perf_counter()
        self.seconds = float("nan")
        return self

    def now(self) -> float:
        return time.perf_counter() - self.start

    def __exit__(self, *exc) -> None:
        self.seconds = self.now()


def interleaved(rows: list, rounds: int):
    """(round, row) for each row of each round, the order rotated by one each round."""
    for r in range(rounds):
        k = r % len(rows)
        for row in rows[k:] + rows[:k]:
            yield r, row


# -- sites ------------------------------------------------------------------------------------


@contextlib.contextmanager
def scratch(prefix: str, parent: Path | None = None, *, keep: bool = False, kept: str = ""):
    """A new temporary directory, removed afterwards unless ``keep`` (then its path is printed,
    with ``kept`` after it)."""
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        yield work
    finally:
        if keep:
            print(f"\nbuilds kept in {work}{kept}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def copy_sources(src: Path, dest: Path, *ignore: str, **options) -> Path:
    """A copy of a site's sources without its _build (and ``ignore``'s patterns): a benchmark
    may edit and build it."""
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("_build", *ignore), **options)
    return dest


def first_listed_page(src: Path) -> Path:
    """The first page the root toctree lists, else index.rst: the page a benchmark edits."""
    for line in (src / "index.rst").read_text().splitlines():
        name = line.strip()
        if line.startswith("   ") and name and not name.startswith(":") and (src / f"{name}.rst").is_file():
            return src / f"{name}.rst"
    return src / "index.rst"


def edit_page(src: Path) -> tuple[Path, str]:
    """Append a paragraph to one page (first_listed_page); (the page, its old text)."""
    page = first_listed_page(src)
    old = page.read_text()
    stamp = time.time_ns()
    page.write_text(old + f"\n\nA benchmark edit ({stamp}): the estimator's warm start keeps the fitted "
                    "coefficients between calls, so a second fit starts from them.\n")
    return page, old


# -- serving ----------------------------------------------------------------------------------

_client = {"dir": site_helpers.CLIENT_DIR}  # the client build served (--client: another checkout's)


def client_dir() -> Path:
    return _client["dir"]


def use_client(path: Path | None) -> None:
    """Serve the client build in ``path`` (e.g. another checkout's sphinx_rag/static/sphinx_rag)."""
    if path is not None:
        _client["dir"] = Path(path)


def client_file(path: str) -> Path | None:
    """The current client build's file served for the URL path /_static/sphinx_rag/<name>, if any."""
    name = path.rsplit("/", 1)[-1]
    if path.startswith(CLIENT) and path.count("/") == 3 and (client_dir() / name).is_file():
        return client_dir() / name
    return None


@dataclass
class Hit:
    t: float  # time.time() when the response was complete (the page's Date.now() is the same clock)
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


class BenchHandler(QuietHandler):
    """http.server as `python -m http.server` serves (no gzip, no Cache-Control), plus:
    the client files from the current build (client_dir()) and /__bench__/ from a
    directory, and every response counted."""

    hits: list[Hit]
    bench_dir: str
    lock: threading.Lock
    isolated = False  # COOP/COEP headers, so onnxruntime-web may use threads

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
                self.hits.append(Hit(time.time(), urlsplit(self.path).path, getattr(self, "_status", 0),
                                     self.wfile.count - before, self._encoding))

    def send_response(self, code, message=None):
        self._status = code
        super().send_response(code, message)


class BenchServer(StaticServer):
    """A built site on 127.0.0.1 (BenchHandler); ``bench_dir`` is served as /__bench__/."""

    def __init__(self, root: Path, bench_dir: Path | None = None):
        self.hits: list[Hit] = []
        bench = bench_dir or Path(tempfile.gettempdir()) / "sphinx-rag-no-bench-page"
        super().__init__(root, BenchHandler, hits=self.hits, bench_dir=str(bench), lock=threading.Lock())

    def since(self, t: float) -> list[Hit]:
        return [h for h in list(self.hits) if h.t >= t]

    def local_file(self, path: str) -> Path | None:
        f = client_file(path) or self.root / path.lstrip("/")
        return f if f.is_file() else None


# -- Chromium ---------------------------------------------------------------------------------


def launch_chromium(playwright, **extra):
    """Debian's Chromium with the project's flags (site_helpers.CHROMIUM_ARGS), headless."""
    return playwright.chromium.launch(**chromium_options(**extra))


def chromium_version() -> str:
    return subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()


# -- queries ----------------------------------------------------------------------------------

# 100 varied queries: identifiers, keyword pairs, questions, typos; short and long
# (the browser benchmark's and the index sweep's).
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
