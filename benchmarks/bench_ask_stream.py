"""Browser benchmark: how long the Ask panel takes to show a long streamed answer.

Not a test: prints, for each client (this checkout's, and optionally a baseline build of
the browser client, e.g. main's ``sphinx_rag/static/sphinx_rag``) and each answer size,
the median time from Ask to the rendered answer, the page's longest task while it
streams, and the ratio of the largest size's time to the smallest's (linear: their size
ratio; quadratic: its square).

The site is tests/roots/test-searchbar (keyword-only), built once with
``sphinx_rag_llm["max_answer_chars"]`` raised so that no answer is cut; the answers come
from tests/fake_llm_server.py (its ``md<N>t<T>`` modes: N characters of Markdown in
T-character tokens, as fast as the page reads them). Chromium is /usr/bin/chromium
driven by Python Playwright.

    python benchmarks/bench_ask_stream.py
    python benchmarks/bench_ask_stream.py --baseline /tmp/main-client --sizes 500000,2000000 \\
        --token 1000 --runs 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from harness import REPO, launch_chromium
from site_helpers import CLIENT_DIR, StaticServer, build_site, fake_llm_server

CLIENT_FILES = ("searchbar.js", "searchbar.css", "worker.js")
LONG_TASKS = """window.__longest = 0; new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
}).observe({type: 'longtask', buffered: true});"""


def build(out: Path, endpoint: str) -> Path:
    src = out / "src"
    shutil.copytree(REPO / "tests" / "roots" / "test-searchbar", src)
    with open(src / "conf.py", "a") as f:
        f.write(f'\nsphinx_rag_llm = {{"endpoint": "{endpoint}/v1", "model": "m", "max_answer_chars": 100000000}}\n')
    return build_site(src, out / "html", "-d", str(out / "doctrees"))


def with_client(html: Path, client: Path, dest: Path) -> Path:
    """A copy of the site whose browser client is `client`'s build."""
    shutil.copytree(html, dest)
    for name in CLIENT_FILES:
        shutil.copy(client / name, dest / "_static" / "sphinx_rag" / name)
    return dest


def ask_once(browser, url: str, endpoint: str, mode: str, timeout_s: float) -> tuple[float, float]:
    """(seconds from Ask to the answer rendered, longest task in ms) for one answer."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        context.add_init_script(f"localStorage.setItem('sphinx-rag-llm', "
                                f"JSON.stringify({{endpoint: '{endpoint}/{mode}/v1', model: 'm'}}));")
        context.add_init_script(LONG_TASKS)
        page = context.new_page()
        page.goto(url + "index.html")
        page.locator("#searchbox input[name=q]").click()
        page.fill("dialog.sphinx-rag input[role=combobox]", "searchbar")
        page.wait_for_function("document.querySelector('#sphinx-rag-listbox').dataset.query === 'searchbar'")
        page.keyboard.press("Control+Enter")
        page.wait_for_function("['done', 'error'].includes(document.querySelector('section.sphinx-rag-ask')"
                               ".dataset.state)", timeout=timeout_s * 1000, polling=250)
        timings = page.evaluate("window.sphinxRag.ask.timings")
        page.evaluate("new Promise((r) => requestAnimationFrame(() => r()))")  # the last render is painted
        return (timings["end"] - timings["start"]) / 1000, page.evaluate("window.__longest")
    finally:
        context.close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, help="a directory with another build of searchbar.js, "
                        "searchbar.css and worker.js (e.g. main's sphinx_rag/static/sphinx_rag)")
    parser.add_argument("--sizes", default="500000,1000000,2000000", help="answer sizes in characters")
    parser.add_argument("--token", type=int, default=20, help="characters per streamed token (default 20)")
    parser.add_argument("--runs", type=int, default=3, help="runs per size (median shown)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds before one answer is given up")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, fake_llm_server(idle_minutes=60) as endpoint, \
            sync_playwright() as p:
        tmp = Path(tmp)
        html = build(tmp / "site", endpoint)
        clients = {"this checkout": with_client(html, CLIENT_DIR, tmp / "current")}
        if args.baseline:
            clients["baseline"] = with_client(html, args.baseline, tmp / "baseline")
        browser = launch_chromium(p)
        print("| client | answer | tokens of | median s (runs) | longest task ms |\n|---|---|---|---|---|")
        for name, root in clients.items():
            server = StaticServer(root)
            medians = {}
            for size in sizes:
                runs = [ask_once(browser, server.url, endpoint, f"md{size}t{args.token}", args.timeout)
                        for _ in range(args.runs)]
                medians[size] = statistics.median(s for s, _ in runs)
                print(f"| {name} | {size:,} | {args.token} | {medians[size]:.2f} "
                      f"({', '.join(f'{s:.2f}' for s, _ in runs)}) | {max(t for _, t in runs):.0f} |", flush=True)
            server.stop()
            lo, hi = sizes[0], sizes[-1]
            print(f"| {name} | time ratio {hi:,} / {lo:,} | | {medians[hi] / medians[lo]:.1f} "
                  f"(linear {hi / lo:.0f}, quadratic {(hi / lo) ** 2:.0f}) | |", flush=True)
        browser.close()


if __name__ == "__main__":
    main()
