"""Lighthouse's "Agentic Browsing" category against a built site served on 127.0.0.1, with
Debian's Chromium (never a downloaded browser): each audit's result per page, and an exit
status of 1 when an audit that concerns sphinx-rag fails.

Lighthouse is not a dependency of the project (npm ``lighthouse`` 13.3+, which needs no
browser of its own: it starts the one CHROME_PATH names)::

    npm install --prefix /tmp/lh lighthouse@13
    python benchmarks/lighthouse_agentic.py demo_docs/_build/html --lighthouse /tmp/lh/node_modules/.bin/lighthouse

Each page runs twice: as Chromium ships (WebMCP off) and with ``--enable-features=WebMCPTesting``
(Chromium 156's switch for the API Chrome's origin trial offers), so the WebMCP audits see
the tools the page registers.

Results on the demo (November 29, 2026; Lighthouse 13.5.0, Chromium 156), index.html,
user_guide/impute.html and api/generated/mlkit.dummy.DummyClassifier.html alike, category
score 1 (every applicable audit passes):

| audit | WebMCP off | WebMCP on | why |
|---|---|---|---|
| agent-accessibility-tree | pass | pass | the dialog's combobox/listbox roles and labels |
| llms-txt | pass | pass | /llms.txt: an H1, links to every page's twin (sphinx_rag_llms_txt) |
| cumulative-layout-shift | pass (0; 0.001 on the API page) | pass | the search button and the Markdown link move nothing |
| webmcp-registered-tools | n/a | pass (informative): search_docs, read_page | n/a: Chromium without the API; the page registers nothing then |
| webmcp-schema-validity | n/a | pass | both input schemas are JSON Schema objects with typed, described properties |
| webmcp-form-coverage | n/a | informative: 2 forms without annotations | the theme's own search form (pydata's, which the dialog replaces) and the dialog's reader-settings form: neither is a tool for an agent; the search is offered as the search_docs tool instead |
| ard-schema | n/a | n/a | no AI catalog (/.well-known/ai-catalog.json, Agentmap): a static site has no agent endpoint to list; llms.txt and the twins are its discovery |
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness import REPO
from site_helpers import CHROMIUM, CHROMIUM_ARGS, QuietHandler, StaticServer

PAGES = ("index.html", "user_guide/impute.html", "api/generated/mlkit.dummy.DummyClassifier.html")
FLAGS = " ".join(CHROMIUM_ARGS)  # the project's Chromium flags (site_helpers)
#: Audits about what sphinx-rag puts in the page or the site; the others (a catalog of
#: agent endpoints) are reported with their reason only.
OURS = {"agent-accessibility-tree", "llms-txt", "cumulative-layout-shift", "webmcp-registered-tools",
        "webmcp-schema-validity", "webmcp-form-coverage"}
REASONS = {
    "ard-schema": "no AI catalog: a static site has no agent endpoint to list (llms.txt is its discovery)",
    "webmcp-form-coverage": "the theme's search form and the dialog's settings form are not agent tools",
}


def find_lighthouse(given: str | None) -> list[str]:
    candidates = [given] if given else [str(REPO / "js" / "node_modules" / ".bin" / "lighthouse"),
                                        shutil.which("lighthouse") or ""]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return ["node", candidate] if candidate.endswith(".js") else [candidate]
    sys.exit("lighthouse_agentic: no Lighthouse: npm install --prefix /tmp/lh lighthouse@13, then "
             "--lighthouse /tmp/lh/node_modules/.bin/lighthouse")


def run(lighthouse: list[str], url: str, webmcp: bool, out: Path) -> dict:
    flags = FLAGS + (" --enable-features=WebMCPTesting" if webmcp else "")
    cmd = [*lighthouse, url, "--only-categories=agentic-browsing", f"--chrome-flags={flags}", "--output=json",
           f"--output-path={out}", "--quiet"]
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", CHROMIUM)}
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode or not out.is_file():
        sys.exit(f"lighthouse_agentic: lighthouse failed on {url}: {proc.stderr.strip()[-500:]}")
    return json.loads(out.read_text())


def rows(report: dict) -> list[tuple[str, str, str]]:
    """(audit, result, detail) for each audit of the category."""
    out = []
    for ref in report["categories"]["agentic-browsing"]["auditRefs"]:
        audit = report["audits"][ref["id"]]
        mode = audit["scoreDisplayMode"]
        if mode == "notApplicable":
            result = "n/a"
        elif audit["score"] is None:
            result = mode
        else:
            result = "pass" if audit["score"] >= 0.9 else f"FAIL ({audit['score']})"
            result += " (informative)" if mode == "informative" else ""
        detail = audit.get("displayValue") or ""
        items = (audit.get("details") or {}).get("items") or []
        if ref["id"] == "webmcp-registered-tools":
            tools = [row.get("tool") for item in items for row in (item.get("value") or {}).get("items", [])]
            detail = ", ".join(t for t in tools if t) or detail
        explanation = audit.get("explanation") or ""
        out.append((ref["id"], result, "; ".join(x for x in (detail, explanation) if x)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html", type=Path, help="a built site (sphinx-build -b html output)")
    parser.add_argument("--lighthouse", help="the lighthouse executable (or its cli/index.js)")
    parser.add_argument("--pages", default=",".join(PAGES), help="pages to audit, relative to the site root")
    args = parser.parse_args()
    lighthouse = find_lighthouse(args.lighthouse)
    failed = []
    print("| page | WebMCP | audit | result | detail |")
    print("|---|---|---|---|---|")
    with StaticServer(args.html, QuietHandler) as server, tempfile.TemporaryDirectory() as tmp:
        for page in args.pages.split(","):
            for webmcp in (False, True):
                report = run(lighthouse, server.url + page, webmcp, Path(tmp) / "report.json")
                score = report["categories"]["agentic-browsing"]["score"]
                for audit, result, detail in rows(report):
                    if result.startswith("FAIL") and audit in OURS:
                        failed.append((page, webmcp, audit))
                    why = REASONS.get(audit, "") if result in ("n/a", "pass (informative)") else ""
                    if result == "n/a" and audit.startswith("webmcp") and not webmcp:
                        why = "this Chromium without WebMCP: the page registers nothing"
                    print(f"| {page} | {'on' if webmcp else 'off'} | {audit} | {result} | "
                          f"{'; '.join(x for x in (detail, why) if x)} |".replace("\n", " "), flush=True)
                print(f"| {page} | {'on' if webmcp else 'off'} | **category score** | {score} | |", flush=True)
    if failed:
        print(f"\nfailed: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
