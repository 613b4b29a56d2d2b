"""What an agent's query costs through `sphinx-rag mcp` against a served site: bytes fetched
and latency per search_docs call, cold (an empty cache: a fresh agent), in a session that
already answered other queries, and in a new session over a warm disk cache; against the
size of llms-full.txt, which an agent without search would read whole.

The site is served by http.server on 127.0.0.1 (no compression: raw bytes, as
FACTS.md notes); the tools are called in-process (``docs_tools.Library``, what the MCP
server runs; the protocol adds no fetch). Prints a Markdown table::

    python benchmarks/bench_agents.py SITE_HTML_DIR --questions eval/demo_questions.json --label demo

Query encoders: ``auto`` is what ``sphinx-rag mcp`` chooses by itself (a published site's
static encoder when it ships one: no model download, issue 37), ``static`` and ``model``
force one. Measured November 29, 2026 on the demo (the first 10 of its 82 questions),
served on 127.0.0.1: ``auto`` cold 0.77 MB median (0.79 MB max), 0.67 s median; the model
24.0 MB, 0.56 s (on localhost the download costs little: 24 MB takes seconds on a real
link); eval/RESULTS.md, "MCP: the first query without the model".
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import harness  # noqa: F401 - puts tests/ (site_helpers) on sys.path
from site_helpers import QuietHandler, StaticServer

from sphinx_rag.agents.docs_tools import Library, Site


class _Counted(QuietHandler):
    """Counts the bytes of every file served (the response bodies)."""

    log: list

    def copyfile(self, source, outputfile):
        data = source.read()
        self.log.append(len(data))
        outputfile.write(data)


def _search(url: str, cache: Path, encoder: str | None, query: str, k: int) -> tuple[float, dict]:
    site = Site(url, encoder=encoder, cache_dir=cache)
    library = Library([site])
    start = time.perf_counter()
    library.search(query, k)
    return time.perf_counter() - start, site.fetched


def measure(html: Path, queries: list[str], encoder: str | None, k: int = 5) -> dict:
    log: list[int] = []
    out = {"cold": [], "session": [], "warm": []}
    with StaticServer(html, _Counted, log=log) as server, tempfile.TemporaryDirectory() as tmp:
        for n, query in enumerate(queries):  # cold: each query the first of a fresh agent
            seconds, fetched = _search(server.url, Path(tmp) / f"cold{n}", encoder, query, k)
            out["cold"].append((seconds, fetched["bytes"], fetched["requests"]))
        cache = Path(tmp) / "shared"
        site = Site(server.url, encoder=encoder, cache_dir=cache)
        library = Library([site])
        before = dict(site.fetched)
        for query in queries:  # one session answering query after query
            start = time.perf_counter()
            library.search(query, k)
            seconds = time.perf_counter() - start
            now = site.fetched
            out["session"].append((seconds, now["bytes"] - before["bytes"], now["requests"] - before["requests"]))
            before = dict(now)
        for query in queries:  # a new session per query over the warm cache
            seconds, fetched = _search(server.url, cache, encoder, query, k)
            out["warm"].append((seconds, fetched["bytes"], fetched["requests"]))
    return out


def llms_full_bytes(html: Path) -> tuple[int, int]:
    """(llms-full.txt as written, every page's twin: what it would be uncapped)."""
    written = (html / "llms-full.txt").stat().st_size if (html / "llms-full.txt").is_file() else 0
    return written, sum(p.stat().st_size for p in html.rglob("*.md"))


def _row(label: str, encoder: str, phase: str, rows: list[tuple[float, int, int]]) -> str:
    ms = [s * 1000 for s, _, _ in rows]
    kb = [b / 1000 for _, b, _ in rows]
    req = [r for _, _, r in rows]
    return (f"| {label} | {encoder} | {phase} | {statistics.median(kb):,.1f} / {max(kb):,.1f} | "
            f"{statistics.median(req):.0f} | {statistics.median(ms):,.0f} / {max(ms):,.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", type=Path)
    parser.add_argument("--questions", type=Path, required=True, help="a question set (eval/*.json)")
    parser.add_argument("--n", type=int, default=10, help="questions used (the first N)")
    parser.add_argument("--label", default="")
    parser.add_argument("--encoders", default="auto,model", help="auto (the MCP server's own choice), static, model")
    args = parser.parse_args()
    queries = [q["question"] for q in json.loads(args.questions.read_text())[: args.n]]
    label = args.label or args.html.name
    print("| site | query encoder | query | KB fetched, median / max | requests | ms, median / max |")
    print("|---|---|---|---|---|---|")
    for encoder in args.encoders.split(","):
        result = measure(args.html, queries, None if encoder == "auto" else encoder)
        for phase, name in (("cold", "cold (empty cache)"), ("session", "next query, same session"),
                            ("warm", "new session, warm cache")):
            print(_row(label, encoder, name, result[phase]), flush=True)
    written, whole = llms_full_bytes(args.html)
    print(f"\nllms-full.txt of {label}: {written / 1000:,.0f} KB written; the whole site: {whole / 1000:,.0f} KB")


if __name__ == "__main__":
    main()
