"""How long cutting a page in read_page's parts takes, in Python (``agents/budget.parts``,
what ``sphinx-rag mcp`` runs on every read_page call) and in Node (``js/src/ui/budget.js``,
what WebMCP's read_page runs in the page), on pages of each shape at 300 KB and 1.2 MB:
prose, one code block, one line, a table. Prints a Markdown table::

    python benchmarks/bench_page_parts.py [--runs 3]

Linear in the page's length: the 1.2 MB column is about four times the 300 KB one (the
shortest times are noise). Measured December 7, 2026 (2 shared cores), best of 3, seconds,
300 KB / 1.2 MB: Python prose 0.002 / 0.018, code 0.014 / 0.069, one line 0.0002 / 0.0006,
table 0.034 / 0.131; Node prose 0.009 / 0.024, code 0.020 / 0.040, one line 0.002 / 0.017,
table 0.005 / 0.017. Before issue 42 (items 10 and 13), a code block of 300 KB took 6.5 s
in Python (30 s a call in the MCP server, which cuts the page again for each part) and
of 1.2 MB 23 s in Python and 8 s in Node; a line longer than a part lost all but its
first 60,000 characters.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from sphinx_rag.agents.budget import parts

REPO = Path(__file__).resolve().parent.parent


def pages(size: int) -> dict[str, str]:
    """Markdown pages of about ``size`` characters, one per shape."""
    return {
        "prose": "\n\n".join(f"Paragraph {i}: " + "the estimator fits the data " * 12 for i in range(size // 350)),
        "code": "```python\n" + "".join(f"x_{i} = compute(value_{i}, other={i})\n" for i in range(size // 38)) + "```\n",
        "one line": "# Title\n\n" + " ".join(f"word{i}" for i in range(size // 9)) + "\n",
        "table": "| name | value |\n|---|---|\n" + "| cell | 12345 |\n" * (size // 17),
    }


def python_seconds(page: str, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        parts(page)
        best = min(best, time.perf_counter() - start)
    return best


def node_seconds(all_pages: dict[str, str], runs: int) -> dict[str, float]:
    script = f"""
import {{ parts }} from {json.dumps((REPO / "js" / "src" / "ui" / "budget.js").as_uri())};
import {{ readFileSync }} from "node:fs";
const pages = JSON.parse(readFileSync(0, "utf8"));
const out = {{}};
for (const [name, page] of Object.entries(pages)) {{
  let best = Infinity;
  for (let i = 0; i < {runs}; i++) {{
    const start = performance.now();
    parts(page);
    best = Math.min(best, (performance.now() - start) / 1000);
  }}
  out[name] = best;
}}
console.log(JSON.stringify(out));
"""
    proc = subprocess.run(["node", "--input-type=module", "-e", script], input=json.dumps(all_pages),
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per page; the best is kept (default 3)")
    args = parser.parse_args(argv)
    sizes = {"300 KB": 300_000, "1.2 MB": 1_200_000}
    rows: dict[str, dict[str, float]] = {}
    for label, size in sizes.items():
        shaped = pages(size)
        js = node_seconds(shaped, args.runs)
        for name, page in shaped.items():
            rows.setdefault(name, {})[f"Python {label}"] = python_seconds(page, args.runs)
            rows[name][f"Node {label}"] = js[name]
    columns = [f"{runtime} {label}" for runtime in ("Python", "Node") for label in sizes]
    print("| page | " + " | ".join(f"{c} (s)" for c in columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.4f}" for c in columns) + " |")


if __name__ == "__main__":
    main()
