"""What one typed query downloads: a reader opens the search dialog on a cold visit and
types a query key by key, in headless Debian Chromium over HTTP (issue 26: a phone with
Save-Data on must download under 1 MB raw for one typed query, keyword and semantic,
on the 25k preset).

For each query, a fresh profile (empty caches): the page loads, the dialog opens, the
run waits for the site's static encoder (semantic results), then types the query with
`keyboard.type(delay=...)` (or, with --jitter, with a human rhythm: log-normal gaps
around the delay, twice as long after a space), waits for its semantic results and for
the network to be quiet. Bytes are counted from the browser's own responses (`BrowserContext.on("response")`,
which also reports the worker's requests; Content-Length, raw: Python's http.server sends
no gzip), split by what they are:

- typed query: the index files fetched from the first keystroke on: term shards (terms +
  near), text shards, cluster maps, clusters, and any other;
- cold visit: every index file since the page load; the client's JS; the model and its
  runtime (onnxruntime-web's wasm) apart.

Also the time from the last keystroke to its first results (any mode) and to its
semantic results (the cost of letting a typed query settle), measured in the page.

    python benchmarks/bench_typed.py --site 25k=/tmp/scale/25k/html
    python benchmarks/bench_typed.py --site 25k=... --save-data --delay 120 --delay 250 --queries 4
    python benchmarks/bench_browser.py --skip-demo --site 25k=... --typed   # the same, as a section
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from pathlib import Path
from urllib.parse import urlsplit

from harness import CLIENT, INDEX, BenchServer, load_average, use_client
from site_helpers import fresh_profile, persistent_context, save_data

TYPED_QUERIES = [
    "impute missing values with the median",
    "regularization strength of ridge regression",
    "number of neighbors",
    "cross validation with shuffled folds",
    "how to scale features to unit variance",
    "precision recall curve",
]
QUERY_KINDS = ("terms", "texts", "cluster maps", "clusters", "other")
TARGET_KB = 1000.0  # issue 26: one typed query, Save-Data on, 25k preset, raw

# The page side: the time of each keystroke and of each change of the results list.
WATCH = """() => {
  const box = document.getElementById("sphinx-rag-listbox");
  const input = document.querySelector("dialog.sphinx-rag input[role=combobox]");
  const log = (window.__typed = { inputs: [], shown: [] });
  input.addEventListener("input", () => log.inputs.push(performance.now()));
  new MutationObserver(() => log.shown.push({ t: performance.now(), q: box.dataset.query, mode: box.dataset.mode }))
    .observe(box, { attributes: true, attributeFilter: ["data-mode", "data-query"] });
}"""


def kind_of(path: str) -> str:
    """What a response is: a query's shard kind, a per-visit index file, the model, ..."""
    name = path.rsplit("/", 1)[-1]
    if path.startswith(INDEX + "model-"):
        return "model"
    if name.startswith("ort-"):
        return "runtime"
    if path.startswith(INDEX):
        prefix = name.split("-")[0]
        return {"terms": "terms", "near": "terms", "texts": "texts", "cmap": "cluster maps",
                "cluster": "clusters"}.get(prefix, "per-visit")
    if path.startswith(CLIENT):
        return "client"
    return "page"


def key_delays(query: str, delay_ms: float, jitter: bool) -> list[float]:
    """The wait after each key: `delay_ms`, or with `jitter` a human rhythm around it
    (log-normal, sigma 0.4, seeded by the query) with twice as long a pause after a space."""
    if not jitter:
        return [delay_ms] * len(query)
    rng = random.Random(query)
    return [delay_ms * math.exp(rng.gauss(0.0, 0.4)) * (2.0 if ch == " " else 1.0) for ch in query]


def one_run(playwright, server_url: str, query: str, *, delay_ms: float, saving: bool, timeout_s: float,
            jitter: bool = False) -> dict:
    with fresh_profile("sphinx-rag-bench-typed-") as profile:
        ctx = persistent_context(playwright, profile, viewport={"width": 1280, "height": 900})
        ctx.set_default_timeout(timeout_s * 1000)
        responses: list[tuple[float, str, int]] = []

        def on_response(r):
            try:
                n = int(r.headers.get("content-length") or 0)
            except ValueError:
                n = 0
            responses.append((time.time(), urlsplit(r.url).path, n))

        ctx.on("response", on_response)
        try:
            page = ctx.new_page()
            session = save_data(ctx, page) if saving else None
            page.goto(server_url + "index.html", wait_until="load")
            page.wait_for_function("() => window.sphinxRag && window.sphinxRag.dialog")
            page.evaluate("() => window.sphinxRag.dialog.open()")
            page.wait_for_function("() => ['static', 'hybrid'].includes(document.querySelector('.sphinx-rag-status')"
                                   "?.dataset.mode)")
            page.wait_for_timeout(300)
            page.evaluate(WATCH)
            start = time.time()
            if jitter:
                for ch, wait in zip(query, key_delays(query, delay_ms, jitter)):
                    page.keyboard.type(ch)
                    page.wait_for_timeout(wait)
            else:
                page.keyboard.type(query, delay=delay_ms)
            page.wait_for_function(
                "(q) => { const b = document.getElementById('sphinx-rag-listbox');"
                " return b.dataset.query === q && ['static', 'hybrid'].includes(b.dataset.mode); }", arg=query)
            quiet_since = time.time()
            seen = len(responses)
            while time.time() - quiet_since < 1.5 and time.time() - start < timeout_s:
                page.wait_for_timeout(100)
                if len(responses) != seen:
                    seen, quiet_since = len(responses), time.time()
            log = page.evaluate("() => window.__typed")
            status = page.evaluate("() => document.querySelector('.sphinx-rag-status').textContent")
            del session
        finally:
            ctx.close()
    last_key = log["inputs"][-1]
    final = [s["t"] for s in log["shown"] if s["q"] == query and s["mode"] in ("static", "hybrid")]
    first = [s["t"] for s in log["shown"] if s["q"] == query]
    typed: dict[str, int] = {k: 0 for k in QUERY_KINDS}
    visit: dict[str, int] = {}
    for t, path, n in responses:
        k = kind_of(path)
        visit[k] = visit.get(k, 0) + n
        if t >= start and k not in ("model", "runtime", "client", "page"):
            typed[k if k in QUERY_KINDS else "other"] += n
    return {
        "query": query, "typed": typed, "visit": visit, "status": status,
        "settle_ms": (final[0] - last_key) if final else float("nan"),
        "first_ms": (first[0] - last_key) if first else float("nan"),
        "answers": len([s for s in log["shown"] if s["q"]]),
    }


def typed_runs(playwright, server_url: str, *, queries: list[str], delay_ms: float, saving: bool,
               timeout_s: float, jitter: bool = False) -> list[dict]:
    return [one_run(playwright, server_url, q, delay_ms=delay_ms, saving=saving, timeout_s=timeout_s,
                    jitter=jitter) for q in queries]


def report(rows: list[dict], *, delay_ms: float, saving: bool, jitter: bool = False, log=print) -> dict:
    kb = lambda n: n / 1000  # noqa: E731
    rhythm = (f"keys about {delay_ms:g} ms apart (log-normal, sigma 0.4; twice after a space)" if jitter
              else f"a key every {delay_ms:g} ms")
    label = f"{'Save-Data on' if saving else 'no Save-Data'}, {rhythm}"
    log(f"  {label}: {len(rows)} queries, one cold visit each (raw KB, Content-Length of each response)")
    log("  | query | typed query (index files from the first key) | terms | texts | cluster maps | clusters "
        "| other | cold visit: index files | client JS | model + runtime | last key -> its first results "
        "| last key -> semantic results |")
    log("  |---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t, v = r["typed"], r["visit"]
        index = sum(n for k, n in v.items() if k not in ("model", "runtime", "client", "page"))
        model = v.get("model", 0) + v.get("runtime", 0)
        log(f"  | {r['query']} | {kb(sum(t.values())):.0f} | {kb(t['terms']):.0f} | {kb(t['texts']):.0f} | "
            f"{kb(t['cluster maps']):.0f} | {kb(t['clusters']):.0f} | {kb(t['other']):.0f} | {kb(index):.0f} | "
            f"{kb(v.get('client', 0)):.0f} | {kb(model):.0f} | {r['first_ms']:.0f} ms | {r['settle_ms']:.0f} ms |")
    totals = [kb(sum(r["typed"].values())) for r in rows]
    clusters = [kb(r["typed"]["clusters"]) for r in rows]
    settle = [r["settle_ms"] for r in rows]
    first = [r["first_ms"] for r in rows]
    ok = max(totals) <= TARGET_KB
    log(f"  typed query: median {statistics.median(totals):.0f} KB, max {max(totals):.0f} KB "
        f"(clusters median {statistics.median(clusters):.0f} KB); last key -> its first results median "
        f"{statistics.median(first):.0f} ms, -> semantic results median {statistics.median(settle):.0f} ms" + (f"  [target <= {TARGET_KB:.0f} KB with Save-Data: "
                                               f"{'met' if ok else 'MISSED'}]" if saving else ""))
    log(f"  status line at the end: {rows[-1]['status']!r}")
    return {"median_kb": statistics.median(totals), "max_kb": max(totals), "clusters_kb": statistics.median(clusters),
            "settle_ms": statistics.median(settle), "first_ms": statistics.median(first)}


def main():
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", action="append", required=True, metavar="NAME=HTML_DIR")
    parser.add_argument("--delay", action="append", type=float, help="ms between keys (repeatable; default 120)")
    parser.add_argument("--save-data", action="store_true", help="only with Save-Data on (default: on, then off)")
    parser.add_argument("--queries", type=int, default=4, help=f"queries per setting (max {len(TYPED_QUERIES)})")
    parser.add_argument("--jitter", action="store_true", help="type with a human rhythm around each --delay")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--client", type=Path, help="serve this client build instead of the package's "
                        "(a before/after: another checkout's sphinx_rag/static/sphinx_rag)")
    args = parser.parse_args()
    use_client(args.client)
    delays = args.delay or [120.0]
    print(f"# typed queries ({load_average()})")
    with sync_playwright() as playwright:
        for item in args.site:
            name, _, path = item.partition("=")
            server = BenchServer(Path(path))  # the current client build
            try:
                print(f"\n## {name} ({path})")
                for saving in ([True] if args.save_data else [True, False]):
                    for delay in delays:
                        rows = typed_runs(playwright, server.url, queries=TYPED_QUERIES[:args.queries],
                                          delay_ms=delay, saving=saving, timeout_s=args.timeout,
                                          jitter=args.jitter)
                        report(rows, delay_ms=delay, saving=saving, jitter=args.jitter)
            finally:
                server.stop()
    print(f"\n({load_average()})")


if __name__ == "__main__":
    main()
