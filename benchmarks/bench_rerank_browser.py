"""The reranker in the reader's browser: how long after the fused order the reranked one
arrives, what it weighs and how long it takes to load (issue 43).

Not a test (not run in CI). The demo docs in headless Debian Chromium over HTTP on
127.0.0.1, the model setting "always" (so that the model and then the reranker load at
once). For each question of the list (filled at once, not typed: no settling wait), the
worker's two answers are recorded: the model tier's fused results and the same query's
reranked ones ({reranked: true}); the delay is the difference of their ``posted_at``, and
``rerank_ms`` the worker's own time for the reranking (texts read, the model run, the
passages). Printed: medians and 90th percentiles, the reranker's files (raw and gzip -6),
its load time (files + onnxruntime session), one thread, and two threads on a cross-origin
isolated page (``--isolated``: COOP/COEP headers, as ``sphinx-rag serve --isolated`` sends).

Budget (issue 43): the reranked order at most 300 ms (median) after the fused one, the
reranker at most 10 MB gzip.

    python benchmarks/bench_rerank_browser.py [--html demo_docs/_build/html] [--runs 3] [--isolated]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import threading

from harness import gzip_size, launch_chromium, log, percentile
from site_helpers import DEMO

QUESTIONS = [
    "How do I fill in missing values with the median?",
    "which estimator predicts the most frequent class?",
    "what does the strategy parameter of the dummy classifier do",
    "how can I scale features to unit variance?",
    "split data into training and test sets",
    "which class chains transformers and an estimator?",
    "how do I choose the number of neighbors?",
    "cross validation score of a model",
    "what is regularization strength in logistic regression",
    "how to encode categorical features as integers",
    "which metric measures classification accuracy?",
    "reduce dimensionality with principal components",
]
BUDGET_MS = 300
BUDGET_GZIP = 10_000_000
RECORDER = """(() => { const W = window.Worker; window.__answers = [];
  window.Worker = class extends W { constructor(...args) { super(...args);
    this.addEventListener("message", (e) => { const d = e.data;
      if (d && d.type === "results") __answers.push({id: d.id, mode: d.mode, reranked: !!d.reranked,
        timings: d.timings || {}}); }); } }; })()"""
STORAGE_KEY = "sphinx-rag-model:/"  # js/src/ui/model_policy.js ModelChoiceStore, the site root "/"
INPUT = "dialog.sphinx-rag input[role=combobox]"


def reranker_files(html: Path) -> list[Path]:
    index = html / "_static" / "sphinx_rag" / "index"
    entry = json.loads((index / "manifest.json").read_text())["reranker_files"]
    if not entry:
        sys.exit(f"{html} ships no reranker (sphinx_rag_rerank = False, or an older build): rebuild it")
    return [index / entry["dir"] / name for name in ("reranker.onnx", "reranker_info.json")]


def serve_site(html: Path, isolated: bool):
    """`sphinx-rag serve` (gzip, no-cache; COOP + COEP with isolated) in a thread: (server, url)."""
    from sphinx_rag.tools.serve import make_server

    server = make_server(html, 0, isolated=isolated)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def one_visit(playwright, html: Path, isolated: bool) -> dict:
    server, url = serve_site(html, isolated)
    browser = launch_chromium(playwright)
    try:
        context = browser.new_context()
        context.add_init_script(RECORDER)
        context.add_init_script(f"localStorage.setItem({json.dumps(STORAGE_KEY)}, 'always')")
        page = context.new_page()
        page.goto(url + "index.html")
        page.keyboard.press("Control+k")
        page.wait_for_selector(INPUT)
        delays, worker_ms, load_ms = [], [], None
        for n, question in enumerate(QUESTIONS):
            page.fill(INPUT, question)
            deadline = time.time() + (240 if n == 0 else 30)  # the first waits for the model and the reranker
            fused = reranked = None
            while time.time() < deadline and reranked is None:
                answers = page.evaluate("window.__answers")
                ids = [a["id"] for a in answers]
                if not ids:
                    page.wait_for_timeout(100)
                    continue
                last = max(ids)
                mine = [a for a in answers if a["id"] == last]
                fused = next((a for a in mine if a["mode"] == "hybrid" and not a["reranked"]), None)
                reranked = next((a for a in mine if a["reranked"]), None)
                if reranked is None:
                    page.wait_for_timeout(50)
            if fused is None or reranked is None:
                if n == 0:  # the model or reranker never came: fill again later
                    continue
                log(f"  no reranked answer for {question!r}")
                continue
            if n == 0:
                load_ms = reranked["timings"].get("reranker_load_ms")
                continue  # the first question paid the loading: measured apart
            delays.append(reranked["timings"]["posted_at"] - fused["timings"]["posted_at"])
            worker_ms.append(reranked["timings"]["rerank_ms"])
        return {"delays": delays, "worker_ms": worker_ms, "load_ms": load_ms}
    finally:
        browser.close()
        server.shutdown()
        server.server_close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=DEMO / "_build" / "html")
    parser.add_argument("--runs", type=int, default=3, help="cold visits (a fresh browser each)")
    parser.add_argument("--isolated", action="store_true", help="also measure a cross-origin isolated page (2 threads)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    files = reranker_files(args.html)
    raw = sum(p.stat().st_size for p in files)
    packed = sum(gzip_size(p.read_bytes()) for p in files)
    log(f"reranker files: {raw / 1e6:.2f} MB raw, {packed / 1e6:.2f} MB gzip (budget {BUDGET_GZIP / 1e6:.0f} MB gzip)")
    modes = [False, True] if args.isolated else [False]
    with sync_playwright() as playwright:
        for isolated in modes:
            delays, worker, loads = [], [], []
            for _ in range(args.runs):
                visit = one_visit(playwright, args.html, isolated)
                delays += visit["delays"]
                worker += visit["worker_ms"]
                if visit["load_ms"] is not None:
                    loads.append(visit["load_ms"])
            if not delays:
                log(f"{'isolated (2 threads)' if isolated else 'one thread'}: no reranked answer measured")
                continue
            median = statistics.median(delays)
            log(f"{'isolated (2 threads)' if isolated else 'one thread'}: reranked after fused: median {median:.0f} ms, "
                f"p90 {percentile(delays, 90):.0f} ms over {len(delays)} questions; the worker's reranking "
                f"median {statistics.median(worker):.0f} ms; reranker load median "
                f"{statistics.median(loads) if loads else float('nan'):.0f} ms "
                f"({'within' if median <= BUDGET_MS else 'OVER'} the {BUDGET_MS} ms budget)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
