"""`sphinx-rag search SITE SITE... QUERY`: several sites (a directory, a published URL)
merged by reciprocal rank (merge.py, the browser's and the MCP server's merge), each
result naming its site with an absolute URL; a site that fails is one line, the others
still answer."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import StaticServer, build_site, free_port
from sphinx_rag.merge import merge_ranked

QUERY = "strategy of a baseline classifier"
ROOTS = Path(__file__).parent / "roots"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "sphinx_rag", *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def api_site(tmp_path_factory):
    """tests/roots/test-api built and served on 127.0.0.1 (a published site)."""
    base = tmp_path_factory.mktemp("api")
    shutil.copytree(ROOTS / "test-api", base / "src")
    html = build_site(base / "src", base / "html", "-d", str(base / "dt"))
    with StaticServer(html) as server:
        yield html, server.url


def test_two_sites_merged_by_rank(demo_html, api_site):
    api_html, api_url = api_site
    proc = run_cli("search", demo_html, api_url, QUERY, "--k", "6", "--json")
    assert proc.returncode == 0, proc.stderr
    merged = json.loads(proc.stdout)
    assert [r["rank"] for r in merged] == list(range(1, 7))
    alone = [json.loads(run_cli("search", site, QUERY, "--k", "6", "--json").stdout) for site in (demo_html, api_html)]
    roots = [demo_html.resolve().as_uri() + "/", api_url]
    expected = merge_ranked([[{**r, "url": root + r["url"]} for r in ranking] for root, ranking in zip(roots, alone)],
                            key=lambda r: (r["url"], r["id"]), k=6)
    assert [(r["site"], r["url"], r["id"]) for r in merged] == [
        ([str(demo_html), api_url][n], r["url"], r["id"]) for n, r in expected]
    assert {r["site"] for r in merged} == {str(demo_html), api_url}
    assert merged[0]["site"] == str(demo_html)  # both sites' first results tie: the first site given wins
    assert all(r["url"].startswith(("file:///", "http://127.0.0.1:")) for r in merged)  # absolute

    text = run_cli("search", demo_html, api_url, QUERY, "--k", "6")
    assert text.returncode == 0 and f"({api_url}, its #1)" in text.stdout and f"    {api_url}" in text.stdout


def test_a_site_that_fails_is_one_line_and_the_others_answer(demo_html, api_site):
    down = f"http://127.0.0.1:{free_port()}/"
    proc = run_cli("search", down, demo_html, QUERY, "--k", "3", "--json")
    assert proc.returncode == 0
    assert [r["site"] for r in json.loads(proc.stdout)] == [str(demo_html)] * 3
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("[sphinx-rag] not searched: cannot fetch " + down)
    both_down = run_cli("search", down, "/nonexistent/site", QUERY)
    assert both_down.returncode == 2 and len(both_down.stderr.strip().splitlines()) == 2
    assert both_down.stdout == ""
