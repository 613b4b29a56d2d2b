"""What a reader downloads before and after asking for meaning (issue 36, item 4).

Not a test (not run in CI): prints, for the demo docs in headless Debian Chromium over HTTP
on 127.0.0.1, the bytes fetched at each step of one cold visit (a fresh browser context:
empty HTTP cache and Cache Storage), split by what they are:

- page: the HTML page, the theme's and Sphinx's files (everything outside _static/sphinx_rag/);
- search bar: the search bar's own code (searchbar.js, searchbar.css, worker.js);
- index: the index files (manifest, directory, term, text and near shards, the static
  encoder, centroids, clusters);
- model: the model's files (index/model-*/);
- runtime: onnxruntime-web's wasm and its loader (ort-wasm-*);
- ask model: Ask's in-browser model runtime (wllama-ask.js, wllama.wasm), fetched only
  once a reader agrees to run a model (0 here).

The steps, each counting what was fetched since the previous one: the page load; opening
the dialog (Ctrl+K) and waiting past the moment the model would start; searching an
identifier (`SimpleImputer`), then waiting again; asking a question, until its results
are re-ranked by the model. Each step waits for a state (results of a query in a mode),
then for WAIT_S seconds of quiet.

Bytes are counted from the browser's responses (`BrowserContext.on("response")`, which
reports the worker's requests too): raw (Python's http.server sends no Content-Encoding:
the file's size) and gzip -6 (computed locally from the file served).

Target (issue 36): the identifier search fetches no model or runtime bytes, and at most
1 MB (raw) beyond the page and the search bar's code, dialog open included.

    python benchmarks/bench_model_bytes.py                    # the demo's current build (client refreshed)
    python benchmarks/bench_model_bytes.py --build            # the demo built fresh first
    python benchmarks/bench_model_bytes.py --html /path/to/html --identifier KFold --question "..."
    python benchmarks/bench_model_bytes.py --html /path/to/html --as-built   # the site's own client (e.g. an older one)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

from harness import CLIENT, INDEX, gzip_size, launch_chromium
from site_helpers import CLIENT_DIR, DEMO, QuietHandler, StaticServer, build_site, client_missing

CATEGORIES = ("page", "search bar", "index", "model", "runtime", "ask model")
TARGET_BEYOND = 1_000_000  # bytes beyond the page and the search bar's code, dialog open + identifier
WAIT_S = 4.0  # quiet after each step: the worker would start the model within a second of an answer
STATUS = ".sphinx-rag-status"


def category(path: str) -> str:
    if path.startswith(INDEX + "model-"):
        return "model"
    if path.startswith(INDEX):
        return "index"
    if path.startswith(CLIENT + "ort-"):
        return "runtime"
    if path.startswith(CLIENT + "wllama"):
        return "ask model"
    if path.startswith(CLIENT):
        return "search bar"
    return "page"


class Fetched:
    """Every response of the context: (path, status), raw and gzip sizes from the files served."""

    def __init__(self, root: Path):
        self.root = root
        self.seen: list[tuple[str, int]] = []
        self._gzip: dict[str, int] = {}

    def on_response(self, response) -> None:
        self.seen.append((unquote(urlsplit(response.url).path), response.status))

    def sizes(self, path: str) -> tuple[int, int]:
        local = self.root / path.lstrip("/")
        if local.is_dir():
            local = local / "index.html"
        if not local.is_file():
            return 0, 0
        if path not in self._gzip:
            self._gzip[path] = gzip_size(local.read_bytes())
        return local.stat().st_size, self._gzip[path]

    def mark(self) -> int:
        return len(self.seen)

    def split(self, since: int) -> dict[str, tuple[int, int]]:
        out = {c: (0, 0) for c in CATEGORIES}
        for path, status in self.seen[since:]:
            if status != 200:
                continue
            raw, gz = self.sizes(path)
            c = category(path)
            out[c] = (out[c][0] + raw, out[c][1] + gz)
        return out


def site_copy(html: Path, into: Path) -> Path:
    """The site with the current client (CLIENT_DIR: the last `npm run build`)."""
    out = into / "html"
    shutil.copytree(html, out)
    for f in CLIENT_DIR.iterdir():
        if f.is_file():
            shutil.copy2(f, out / "_static" / "sphinx_rag" / f.name)
    return out


def wait_results(page, query: str, modes: tuple[str, ...], timeout_ms: int = 180_000) -> str:
    """Wait for results of `query` in one of `modes`; the mode shown."""
    page.wait_for_function(
        """([q, modes]) => { const box = document.getElementById("sphinx-rag-listbox");
            return box && box.dataset.query === q && modes.includes(box.dataset.mode); }""",
        arg=[query, list(modes)], timeout=timeout_ms)
    return page.evaluate("document.getElementById('sphinx-rag-listbox').dataset.mode")


def measure(html: Path, identifier: str, question: str) -> list[tuple[str, dict[str, tuple[int, int]], str]]:
    from playwright.sync_api import sync_playwright

    steps = []
    with StaticServer(html, QuietHandler) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        fetched = Fetched(html)
        context.on("response", fetched.on_response)
        page = context.new_page()
        status = lambda: page.locator(STATUS).text_content()  # noqa: E731

        mark = fetched.mark()
        page.goto(server.url + "index.html")
        page.wait_for_load_state("networkidle")
        steps.append(("page load", fetched.split(mark), ""))

        mark = fetched.mark()
        page.keyboard.press("Control+k")
        page.wait_for_function(f"() => ['static', 'hybrid'].includes(document.querySelector('{STATUS}')?.dataset.mode)",
                               timeout=120_000)
        page.wait_for_timeout(WAIT_S * 1000)
        steps.append(("dialog open", fetched.split(mark), status()))

        mark = fetched.mark()
        page.keyboard.type(identifier)
        wait_results(page, identifier, ("static", "hybrid"))  # hybrid: a client that loaded the model already
        page.wait_for_timeout(WAIT_S * 1000)
        steps.append((f"search `{identifier}`", fetched.split(mark), status()))

        mark = fetched.mark()
        page.fill("dialog.sphinx-rag input[role=combobox]", question)
        wait_results(page, question, ("static", "hybrid"))
        static_status = status()
        wait_results(page, question, ("hybrid",))
        page.wait_for_timeout(WAIT_S * 1000)
        steps.append((f"question {question!r}", fetched.split(mark), f"{static_status} -> {status()}"))
        browser.close()
    return steps


def report(steps) -> bool:
    def mb(n: int) -> str:
        return f"{n / 1e6:7.3f}"

    print(f"{'step':58s} " + " ".join(f"{c + ' raw/gz MB':>22s}" for c in CATEGORIES))
    for name, split, _ in steps:
        print(f"{name[:58]:58s} " + " ".join(f"{mb(split[c][0])} /{mb(split[c][1])}      " for c in CATEGORIES))
    print()
    for name, _, status in steps:
        if status:
            print(f"status after {name[:40]}: {status}")
    opened, ident = steps[1][1], steps[2][1]
    heavy = sum(s[c][0] for s in (opened, ident) for c in ("model", "runtime", "ask model"))
    beyond = sum(s[c][0] for s in (opened, ident) for c in ("index",))
    question = steps[3][1]
    ok = heavy == 0 and beyond <= TARGET_BEYOND and question["model"][0] > 0 and question["ask model"][0] == 0
    print(f"\ndialog open + identifier: model + runtime + ask model {heavy} bytes (target 0); beyond the page and the search "
          f"bar's code {beyond / 1e6:.3f} MB raw, {sum(s['index'][1] for s in (opened, ident)) / 1e6:.3f} MB gzip "
          f"(target <= {TARGET_BEYOND / 1e6:.0f} MB)")
    print(f"question: model {question['model'][0] / 1e6:.1f} MB + runtime {question['runtime'][0] / 1e6:.1f} MB raw "
          f"({question['model'][1] / 1e6:.1f} + {question['runtime'][1] / 1e6:.1f} MB gzip)")
    print("target met" if ok else "TARGET MISSED")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=DEMO / "_build" / "html", help="a built site (default: the demo's build)")
    parser.add_argument("--build", action="store_true", help="build the demo docs fresh into a temp dir first")
    parser.add_argument("--identifier", default="SimpleImputer")
    parser.add_argument("--question", default="How do I fill in missing values before fitting a model?")
    parser.add_argument("--as-built", action="store_true", help="keep the site's own client (do not copy the current build)")
    args = parser.parse_args()
    if client_missing():
        print(client_missing(), file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sphinx-rag-bytes-") as tmp:
        html = args.html
        if args.build:
            html = build_site(DEMO, Path(tmp) / "built", "-d", str(Path(tmp) / "doctrees"))
        site = html if args.as_built else site_copy(html, Path(tmp))
        return 0 if report(measure(site, args.identifier, args.question)) else 1


if __name__ == "__main__":
    sys.exit(main())
