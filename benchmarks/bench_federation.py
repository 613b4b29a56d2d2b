"""Browser benchmark of federated search: bytes and latency of a query over three sites
against the same query over one site alone, cold and warm, in headless Debian Chromium.

Not a test. One built site is served from the same directory on three ports (three
origins, with Access-Control-Allow-Origin): the home site on the first, and its
``sphinx_rag_federation`` names the other two, enabled (benchmarks/make_api_corpus.py
--preset 25k, with in conf.py::

    sphinx_rag_federation = {"copy-b": {"url": "http://127.0.0.1:18732/", "enabled": True},
                             "copy-c": {"url": "http://127.0.0.1:18733/", "enabled": True}}

). Three builds of 25k chunks would cost three times the build for the same index bytes:
the remote sites here are that index again, on other origins (no shard is shared across
origins: Cache Storage keys them by their site's URL, so nothing is counted twice less).
"One site alone" is the same home page with the reader's choice turning both off (the
source filter's localStorage entry): a site nobody turns on costs no request.

For each condition, ``--runs`` times:
- cold: a fresh profile; the dialog opened with a query typed (the worker starts then);
  the time to the first results shown and to the results of every site (merged), by tier
  (keyword; then semantic: the static encoder, or the model once loaded), and the index
  bytes fetched until then (raw, and gzip -6 as a compressing server would send them; the
  model and onnxruntime apart: the model is the home site's only, whatever the sites);
- ten later queries in each cold visit, once the model is loaded (hybrid: the home query
  vector searches the other sites too, the same model): bytes and time per query;
- warm: the browser restarted on that profile (Cache Storage kept): the first query.

    python benchmarks/bench_federation.py --site /work/out/h31/html25k --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from harness import INDEX, gzip_size, write_json
from site_helpers import CorsHandler, StaticServer, fresh_profile, manifest_of, persistent_context

QUERIES = [
    "What are the values of the strategy parameter in a dummy classifier?",
    "StandardScaler with_mean", "how do I impute missing values", "KFold n_splits",
    "regularization strength of ridge regression", "singular value decomposition",
    "fast fourier transform", "sort an array along an axis", "masked array fill value",
    "how can I compute the median ignoring NaN?", "cross validation with shuffled folds",
]
KEY = "sphinx-rag-sources:/"

HOOK = """(() => {
  const fed = (window.__fed = { events: [] });
  const Original = window.Worker;
  window.Worker = class extends Original {
    constructor(url, options) {
      super(url, options);
      if (!String(url).includes("/_static/sphinx_rag/worker.js")) return;
      this.addEventListener("message", (e) => {
        const m = e.data || {};
        fed.events.push({ t: performance.now(), wall: Date.now(), type: m.type, mode: m.mode, id: m.id,
          sources: Array.isArray(m.results) ? [...new Set(m.results.map((r) => r.source ?? ""))] : null });
      });
    }
  };
  fed.type = (query) => {
    const dialog = window.sphinxRag.dialog;
    const t0 = performance.now();
    dialog.open();
    dialog.input.value = query;
    dialog.input.dispatchEvent(new Event("input"));
    return { t0, id: dialog.requestId };
  };
})();"""


class Bytes:
    """Index files fetched, by origin, with the wall time each response arrived."""

    def __init__(self, root: Path):
        self.root = root
        self.seen: list[tuple[float, str, str]] = []
        self._gzip: dict[str, int] = {}
        self.lock = threading.Lock()

    def on_response(self, response):
        url = urlsplit(response.url)
        if INDEX in url.path and "/model-" not in url.path and response.status == 200:
            with self.lock:
                self.seen.append((time.time() * 1000, f"{url.scheme}://{url.netloc}", url.path))

    def size(self, path: str) -> tuple[int, int]:
        file = self.root / path.lstrip("/")
        if path not in self._gzip:
            self._gzip[path] = gzip_size(file.read_bytes())
        return file.stat().st_size, self._gzip[path]

    def between(self, start_wall: float, end_wall: float) -> dict[str, tuple[int, int, int]]:
        """origin -> (requests, raw bytes, gzip bytes) of responses in [start, end]."""
        out: dict[str, list[int]] = {}
        with self.lock:
            seen = list(self.seen)
        for wall, origin, path in seen:
            if start_wall <= wall <= end_wall:
                raw, gz = self.size(path)
                entry = out.setdefault(origin, [0, 0, 0])
                entry[0] += 1
                entry[1] += raw
                entry[2] += gz
        return {o: tuple(v) for o, v in out.items()}


def wait_results(page, id_: int, sources: set[str], modes: tuple[str, ...], timeout_s: float = 180) -> dict | None:
    """The first results message of request ``id_`` in one of ``modes`` whose results come
    from every one of ``sources``."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        events = page.evaluate("window.__fed.events.filter((e) => e.type === 'results')")
        for e in events:
            if e["id"] == id_ and e["mode"] in modes and sources <= set(e["sources"] or []):
                return e
        time.sleep(0.02)
    return None


def first_results(page, id_: int) -> dict | None:
    events = page.evaluate("window.__fed.events.filter((e) => e.type === 'results')")
    return next((e for e in events if e["id"] == id_), None)


def visit(playwright, profile: Path, home: str, choices: dict, sources: set[str], bytes_: Bytes, *,
          later: bool) -> dict:
    ctx = persistent_context(playwright, profile, viewport={"width": 1200, "height": 900})
    ctx.on("response", bytes_.on_response)
    ctx.add_init_script(HOOK + f"\nlocalStorage.setItem({KEY!r}, {json.dumps(json.dumps(choices))});")
    out: dict = {}
    try:
        page = ctx.new_page()
        page.goto(home)
        page.wait_for_function("window.sphinxRag && window.__fed")
        start_wall = page.evaluate("Date.now()")
        typed = page.evaluate("(q) => window.__fed.type(q)", QUERIES[0])
        keyword = wait_results(page, typed["id"], sources, ("keyword", "static", "hybrid"))
        semantic = wait_results(page, typed["id"], sources, ("static", "hybrid"))
        first = first_results(page, typed["id"])
        for name, e in (("first", first), ("keyword", keyword), ("semantic", semantic)):
            out[name] = None if e is None else {"ms": e["t"] - typed["t0"], "mode": e["mode"],
                                                "bytes": bytes_.between(start_wall, e["wall"])}
        if later:
            page.wait_for_function("document.querySelector('.sphinx-rag-status')?.dataset.mode === 'hybrid'",
                                   timeout=300_000)
            time.sleep(1.0)  # Cache Storage writes and pruning settle
            runs = []
            for query in QUERIES[1:]:
                wall0 = page.evaluate("Date.now()")
                typed = page.evaluate("(q) => window.__fed.type(q)", query)
                e = wait_results(page, typed["id"], sources, ("hybrid",))
                if e is not None:
                    runs.append({"ms": e["t"] - typed["t0"], "bytes": bytes_.between(wall0, e["wall"])})
            out["later"] = runs
        time.sleep(1.5)  # let the deferred Cache Storage writes finish before the profile closes
    finally:
        ctx.close()
    return out


def kb(n: float) -> str:
    return f"{n / 1000:,.1f}"


def summarise(label: str, runs: list[dict], key: str, origins: list[str]) -> str:
    got = [r[key] for r in runs if r.get(key)]
    if not got:
        return f"| {label} | (no results) | | | |"
    ms = statistics.median(g["ms"] for g in got)
    per = [sum(g["bytes"].get(o, (0, 0, 0))[2] for o in origins) for g in got]
    raw = [sum(g["bytes"].get(o, (0, 0, 0))[1] for o in origins) for g in got]
    req = [sum(g["bytes"].get(o, (0, 0, 0))[0] for o in origins) for g in got]
    return (f"| {label} | {ms:,.0f} ({min(g['ms'] for g in got):,.0f}-{max(g['ms'] for g in got):,.0f}) | "
            f"{kb(statistics.median(per))} | {kb(statistics.median(raw))} | {statistics.median(req):.0f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True, help="the built home site (its conf federates the ports)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ports", default="18731,18732,18733")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    ports = [int(p) for p in args.ports.split(",")]
    federation = manifest_of(args.site)["settings"].get("federation") or []
    names = [e["name"] for e in federation]
    assert [e["url"] for e in federation] == [f"http://127.0.0.1:{p}/" for p in ports[1:]], federation
    servers = [StaticServer(args.site, CorsHandler, port=port) for port in ports]
    home = servers[0].url
    origins = [s.url.rstrip("/") for s in servers]
    chunks = manifest_of(args.site)["counts"]["chunks"]
    conditions = {"one site alone": ({n: False for n in names}, {""}),
                  "three sites (federated)": ({}, {"", *names})}
    results: dict = {}
    try:
        with sync_playwright() as p:
            for label, (choices, sources) in conditions.items():
                results[label] = {"cold": [], "warm": []}
                for run in range(args.runs):
                    with fresh_profile("fed-bench-") as profile:
                        bytes_ = Bytes(args.site)
                        results[label]["cold"].append(visit(p, profile, home, choices, sources, bytes_, later=True))
                        results[label]["warm"].append(visit(p, profile, home, choices, sources, Bytes(args.site), later=False))
                    print(f"{label}, run {run + 1}: done", flush=True)
    finally:
        for s in servers:
            s.stop()

    print(f"\n{chunks:,} chunks per site; query: {QUERIES[0]!r}; {args.runs} runs, medians (min-max ms)\n")
    print("| | ms from typing | gzip KB fetched | raw KB | requests |")
    print("|---|---|---|---|---|")
    for label, data in results.items():
        for visit_kind in ("cold", "warm"):
            for key, what in (("first", "first results shown"), ("keyword", "every site's keyword results"),
                              ("semantic", "every site's semantic results")):
                print(summarise(f"{label}, {visit_kind}: {what}", data[visit_kind], key, origins))
        later = [q for run in data["cold"] for q in run.get("later") or []]
        if later:
            ms = statistics.median(r["ms"] for r in later)
            gz = statistics.median(sum(v[2] for v in r["bytes"].values()) for r in later)
            raw = statistics.median(sum(v[1] for v in r["bytes"].values()) for r in later)
            req = statistics.median(sum(v[0] for v in r["bytes"].values()) for r in later)
            per_site = statistics.median(v[2] for r in later for v in r["bytes"].values())
            print(f"| {label}: a later query, hybrid ({len(later)} queries; a site's median {kb(per_site)} KB) | "
                  f"{ms:,.0f} | {kb(gz)} | {kb(raw)} | {req:.0f} |")
    print("\nper origin, cold semantic results (gzip KB):")
    for label, data in results.items():
        first = data["cold"][0].get("semantic")
        if first:
            print(f"  {label}: " + ", ".join(f"{o}: {kb(v[2])}" for o, v in sorted(first["bytes"].items())))
    write_json(Path(tempfile.gettempdir()) / "bench_federation.json", results)


if __name__ == "__main__":
    main()
