"""Benchmark of the static query encoder (issue 10): size, fit cost, encoding speed, cold visit.

Not a test (not run in CI). For each site given (a built HTML directory):

- the encoder asset's size (raw, gzip -6), rows and rank; with ``--fit``, the encoder is
  fitted again from the site's chunks and vectors with the embedding cache off (the
  cost of a first build), beside the time the model takes to embed the chunks
  (measured on a sample of ``--sample`` chunks, extrapolated);
- query encoding in Chromium (tokenization included): median and p95 over the
  benchmark queries, after a warm-up, from js/src/search/static_encoder.js itself;
- with ``--cold``: a cold visit (fresh profile) of the site, from the first focus of the
  search button with a question typed to the first results of the static tier, and
  every byte transferred until then (gzip sizes computed locally: http.server does
  not compress).

    python benchmarks/bench_static_encoder.py --site demo=demo_docs/_build/html --cold
    python benchmarks/bench_static_encoder.py --site 25k=/tmp/scale/25k/html --fit
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harness import REPO, launch_chromium
from harness import gzip_size as gz
from site_helpers import QuietHandler, StaticServer, fresh_profile, persistent_context, vectors_of

from sphinx_rag.search.index import IndexReader

QUESTIONS = [q["question"] for f in ("demo_questions.json", "sklearn_api_questions.json")
             for q in json.loads((REPO / "eval" / f).read_text())]


def asset_size(data: bytes, chunks: int) -> dict:
    from sphinx_rag.search.static_encoder import StaticEncoder

    enc = StaticEncoder.from_bytes(data)
    return {"chunks": chunks, "raw": len(data), "gzip": gz(data), "rows": len(enc.token_ids), "rank": enc.rank}


def site_corpus(html: Path):
    """A built site's index, chunks, int8 vectors and scales (in chunk order), and model directory."""
    import os

    from sphinx_rag.search.index import load_chunk_records
    from sphinx_rag.chunk import Chunk

    index = IndexReader(html)
    model_dir = Path(os.environ.get("SPHINX_RAG_MODEL_DIR") or index.model_dir)
    chunks = [Chunk.from_record({"display": [], **r}) for r in load_chunk_records(html)]  # older indexes: no display
    vectors, scales = vectors_of(index)
    return index, chunks, vectors, scales, model_dir


def fit_cost(html: Path, sample: int) -> dict:
    """Fit again with the embedding cache off; the chunks' embedding time, extrapolated."""
    import os

    from sphinx_rag.index import build
    from sphinx_rag.model.embed import Embedder, embedding_input

    os.environ["SPHINX_RAG_EMBED_CACHE"] = "0"
    index, chunks, vectors, scales, model_dir = site_corpus(html)
    picked = random.Random(0).sample(chunks, min(sample, len(chunks)))
    embedder = Embedder(model_dir)
    start = time.perf_counter()
    embedder.embed([embedding_input(c) for c in picked])
    per_chunk = (time.perf_counter() - start) / len(picked)
    start = time.perf_counter()
    data, _ = build._query_encoder(chunks, vectors, scales, model_dir, index.manifest["model"], (None, {}),
                                   batch_size=32, threads=None, progress=None, note=print)  # no previous encoder
    fit_s = time.perf_counter() - start
    embed_s = per_chunk * len(chunks)
    return {"fit_s": fit_s, "embed_s": embed_s, "ratio": fit_s / embed_s, "data": data}


PAGE = """<!doctype html><meta charset="utf-8"><script type="module">
import { StaticEncoder } from "/js/src/search/static_encoder.js";
window.bench = async (asset, queries) => {
  const bytes = new Uint8Array(await (await fetch(asset)).arrayBuffer());
  const t0 = performance.now();
  const enc = StaticEncoder.fromBytes(bytes);
  const loadMs = performance.now() - t0;
  for (const q of queries) enc.encode(q);  // warm-up
  const times = [];
  for (const q of queries) { const t = performance.now(); enc.encode(q); times.push(performance.now() - t); }
  return { loadMs, times };
};
</script>"""


def encode_speed(playwright, data: bytes) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "js").symlink_to(REPO / "js")
        (root / "bench.html").write_text(PAGE)
        (root / "encoder.bin").write_bytes(data)
        asset = "/encoder.bin"
        with StaticServer(root, QuietHandler) as server:
            browser = launch_chromium(playwright)
            try:
                page = browser.new_page()
                page.goto(server.url + "bench.html")
                page.wait_for_function("() => window.bench")
                out = page.evaluate("([a, q]) => window.bench(a, q)", [asset, QUESTIONS])
            finally:
                browser.close()
    times = sorted(out["times"])
    return {"load_ms": out["loadMs"], "p50_ms": statistics.median(times), "p95_ms": times[int(0.95 * len(times))]}


def cold_visit(playwright, html: Path, query: str) -> dict:
    html = html.resolve()
    with StaticServer(html, QuietHandler) as server, fresh_profile("sphinx-rag-bench-") as profile:
        ctx = persistent_context(playwright, profile)
        fetched: list[tuple[float, str]] = []
        ctx.on("requestfinished", lambda r: fetched.append((time.time(), r.url)))
        try:
            page = ctx.new_page()
            page.goto(server.url + "index.html", wait_until="load")
            page.wait_for_function("() => window.sphinxRag && window.sphinxRag.dialog")
            page.wait_for_timeout(500)
            ms = page.evaluate("""async (query) => {
                const buttons = [...document.querySelectorAll(".search-button__button, button.sphinx-rag-trigger")];
                const t0 = performance.now();
                (buttons.find((b) => b.offsetParent !== null) || buttons[0]).focus();
                const dialog = window.sphinxRag.dialog;
                dialog.open();
                dialog.input.value = query;
                dialog.input.dispatchEvent(new Event("input"));
                const box = document.getElementById("sphinx-rag-listbox");
                while (!(box.dataset.query === query && box.dataset.mode === "static")) {
                    if (performance.now() - t0 > 60000) return null;
                    await new Promise((r) => setTimeout(r, 2));
                }
                return performance.now() - t0;
            }""", query)
            done = time.time()
            page_bytes = 0
            search_bytes = 0
            for t, url in fetched:  # everything until the static results: page, theme, search
                path = html / url.split("?")[0].replace(server.url, "", 1)
                if t > done or not path.is_file():
                    continue
                size = gz(path.read_bytes())
                page_bytes += size
                search_bytes += size if "/_static/sphinx_rag/" in url else 0
        finally:
            ctx.close()
    return {"focus_to_static_ms": ms, "search_bytes": search_bytes, "all_bytes": page_bytes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", action="append", default=[], metavar="NAME=HTML_DIR", required=True)
    parser.add_argument("--fit", action="store_true", help="fit again (cache off) and compare with embedding time")
    parser.add_argument("--sample", type=int, default=300, help="chunks embedded to estimate the embedding time")
    parser.add_argument("--cold", action="store_true", help="cold visit: focus -> static results, bytes")
    parser.add_argument("--query", default="how do I fill in missing values with the median?")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as playwright:
        for spec in args.site:
            name, _, path = spec.partition("=")
            html = Path(path)
            index = IndexReader(html)
            row = {"site": name}
            if args.fit:  # the encoder fitted here (the site may have none)
                row.update(fit_cost(html, args.sample))
                data = row.pop("data")
            else:
                data = index.binary(index.manifest["encoder"]["file"])
            row.update(asset_size(data, index.n_chunks))
            row.update(encode_speed(playwright, data))
            if args.cold:
                row.update(cold_visit(playwright, html, args.query))
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print("| site | chunks | encoder gzip | rows x rank | encode p50 / p95 (Chromium) | fit / embedding time |"
          " cold: focus -> static results | cold: search bytes (gzip) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        fit = f"{r['fit_s']:.0f} s / {r['embed_s']:.0f} s = {r['ratio']:.0%}" if "fit_s" in r else "-"
        cold = (f"{r['focus_to_static_ms']:.0f} ms", f"{r['search_bytes'] / 1e3:.0f} KB") if "search_bytes" in r \
            else ("-", "-")
        print(f"| {r['site']} | {r['chunks']} | {r['gzip'] / 1e3:.0f} KB | {r['rows']} x {r['rank']} | "
              f"{r['p50_ms']:.2f} / {r['p95_ms']:.2f} ms | {fit} | {cold[0]} | {cold[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
