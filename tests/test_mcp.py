"""`sphinx-rag mcp` driven by a real MCP client of the official SDK over stdio: the demo
as a directory and served over HTTP on 127.0.0.1 (the same top 5 as `sphinx-rag search`,
the page's Markdown twin, a second session that fetches nothing new), the HTTP server
stopped in the middle of a session, and hostile sites, each failure one tool error line
after which the server still answers."""

from __future__ import annotations

import asyncio
import threading
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from site_helpers import LoggedHandler, StaticServer
from sphinx_rag.assets import ASSET_DIR

QUERY = "strategy of a dummy classifier"
PAGE = "api/generated/mlkit.dummy.DummyClassifier.html"


def _run(coroutine):
    """``asyncio.run`` in a thread of its own: Playwright's sync API (the browser tests, in
    the same pytest process) leaves an event loop running in the main thread."""
    out: dict = {}

    def target():
        try:
            out["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            out["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def _env(cache: Path) -> dict:
    return {**os.environ, "SPHINX_RAG_CACHE": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}


@contextlib.asynccontextmanager
async def _session(*sites, cache: Path, options: tuple = ()):
    params = StdioServerParameters(command=sys.executable, args=["-m", "sphinx_rag", "mcp", *map(str, sites), *options],
                                   env=_env(cache))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def _call(session, tool: str, **arguments) -> tuple[bool, str]:
    result = await session.call_tool(tool, arguments)
    return bool(result.is_error), "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def _urls(text: str) -> list[str]:
    return re.findall(r"^URL: (\S+)$", text, re.M)


def _cli_top5(site) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "sphinx_rag", "search", str(site), QUERY, "--k", "5", "--json"],
                         capture_output=True, text=True, check=True, env=_env(Path(os.devnull)))
    return [r["url"] for r in json.loads(out.stdout)]


def test_mcp_over_the_demo_directory(demo_html, tmp_path):
    async def main():
        async with _session(demo_html, cache=tmp_path / "cache") as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert sorted(tools) == ["lookup_api", "read_page", "search_docs"]
            assert all(len(t.description) > 150 for t in tools.values())  # tell an agent when to use each
            assert set(tools["search_docs"].input_schema["properties"]) == {"query", "k", "kind"}
            error, text = await _call(session, "search_docs", query=QUERY, k=5)
            root = demo_html.resolve().as_uri() + "/"
            assert not error and [u.removeprefix(root) for u in _urls(text)] == _cli_top5(demo_html)
            assert "Kind: " in text and "```" in text or "strategy" in text
            error, page = await _call(session, "read_page", url=root + PAGE + "#mlkit.dummy.DummyClassifier")
            assert not error and page.endswith((demo_html / (PAGE + ".md")).read_text(encoding="utf-8"))
            error, api = await _call(session, "lookup_api", name="DummyClassifier")
            assert not error and "class DummyClassifier(*, strategy='prior'" in api and "### Parameters" in api
            assert "mlkit.dummy.DummyClassifier.fit" in api  # its members are named
            error, kinds = await _call(session, "search_docs", query=QUERY, k=3, kind="example")
            assert not error and set(re.findall(r"^Kind: (\w+)", kinds, re.M)) == {"example"}
            error, message = await _call(session, "lookup_api", name="fit")
            assert error and "names several objects" in message and "\n" not in message
            error, nonsense = await _call(session, "search_docs", query="zzqx blorptang vexillology")
            assert not error and nonsense.startswith(("No good match", "No results"))

    _run(main())


@pytest.mark.slow
def test_mcp_over_a_served_site_reuses_its_cache(demo_html, tmp_path):
    requests: list[str] = []
    cache = tmp_path / "cache"

    async def session_run(url: str) -> tuple[str, str]:
        async with _session(url, cache=cache) as session:
            _, text = await _call(session, "search_docs", query=QUERY, k=5)
            error, page = await _call(session, "read_page", url=url + PAGE)
            assert not error
            return text, page

    with StaticServer(demo_html, LoggedHandler, requests=requests) as server:
        text, page = _run(session_run(server.url))
        assert [u.removeprefix(server.url) for u in _urls(text)] == _cli_top5(demo_html)
        assert page.endswith((demo_html / (PAGE + ".md")).read_text(encoding="utf-8"))
        assert f"/{PAGE}.md" in requests
        first = len(requests)
        again, page_again = _run(session_run(server.url))
        assert (again, page_again) == (text, page)
        assert requests[first:] == [f"/{ASSET_DIR.as_posix()}/manifest.json"]  # every other file from the cache


def test_mcp_when_the_site_stops_mid_session(demo_html, tmp_path):
    async def main(server: StaticServer):
        async with _session(server.url, cache=tmp_path / "cache", options=("--timeout", "3")) as session:
            error, text = await _call(session, "search_docs", query=QUERY, k=5)
            assert not error
            server.stop()
            again = await _call(session, "search_docs", query=QUERY, k=5)
            assert again == (False, text)  # the shards it needs are cached
            error, message = await _call(session, "read_page", url=server.url + "user_guide/impute.html")
            assert error and "cannot fetch" in message and "\n" not in message
            tools = await session.list_tools()  # still running
            assert len(tools.tools) == 3
            assert await _call(session, "search_docs", query=QUERY, k=5) == (False, text)

    _run(main(StaticServer(demo_html)))


@pytest.mark.slow
def test_mcp_refuses_hostile_sites(demo_html, tmp_path):
    def copy(name: str) -> Path:
        site = tmp_path / "www" / name
        shutil.copytree(demo_html / ASSET_DIR, site / ASSET_DIR)
        shutil.copy(demo_html / (PAGE + ".md"), (site / PAGE).parent.mkdir(parents=True) or site / (PAGE + ".md"))
        return site / ASSET_DIR / "manifest.json"

    manifest = json.loads((demo_html / ASSET_DIR / "manifest.json").read_text())
    copy("badhash").parent.joinpath(manifest["dir"]).write_text('sphinxRagShard("x","");\n')
    copy("huge").write_bytes(b" " * (5 << 20))
    copy("notjson").write_text("<html>not json</html>")
    copy("format").write_text(json.dumps({**manifest, "format_version": 99}))
    copy("badtwin")
    (tmp_path / "www" / "badtwin" / (PAGE + ".md")).write_text("# Something else\n")
    (tmp_path / "www" / "nosite").mkdir()
    expected = {"badhash": f"{manifest['dir']} does not match its hash: refused", "huge": "too large",
                "notjson": "is not JSON", "format": "index format 99", "nosite": "is not a sphinx-rag site"}

    async def main(base: str):
        for name, words in expected.items():
            async with _session(base + name + "/", cache=tmp_path / f"cache-{name}") as session:
                error, message = await _call(session, "search_docs", query=QUERY)
                assert error and words in message and "\n" not in message, (name, message)
                page_error, _ = await _call(session, "read_page", url=base + name + "/" + PAGE)
                assert page_error == (name != "badhash")  # a broken shard does not stop its twin being read
                assert len((await session.list_tools()).tools) == 3  # the server goes on
        async with _session(base + "badtwin/", cache=tmp_path / "cache-twin") as session:
            assert (await _call(session, "search_docs", query=QUERY))[0] is False
            error, message = await _call(session, "read_page", url=base + "badtwin/" + PAGE)
            assert error and f"{PAGE}.md does not match its hash in the index: refused" in message
        assert not any((tmp_path / "cache-badhash" / "remote" / "shards").glob(manifest["dir"]))  # never cached

    with StaticServer(tmp_path / "www") as server:
        _run(main(server.url))


@pytest.mark.slow
def test_several_sites_are_merged_and_named(demo_html, static_site, tmp_path):
    async def main():
        async with _session(demo_html, static_site, cache=tmp_path / "cache") as session:
            error, text = await _call(session, "search_docs", query=QUERY, k=6)
            assert not error
            named = re.findall(r"^Kind: \w+ \| Site: (.+)$", text, re.M)
            assert set(named) == {str(demo_html), str(static_site)}  # reciprocal rank: both sites' best first
            assert named[:2] == [str(demo_html), str(static_site)]
            error, page = await _call(session, "read_page", url=static_site.resolve().as_uri() + "/" + PAGE)
            assert not error and f"(site: {static_site})" in page

    _run(main())


def test_mcp_argument_errors_are_one_line_in_the_tools_words(demo_html, tmp_path):
    cases = [("search_docs", {"query": QUERY, "k": 0}, "k (how many passages) must be a whole number from 1 to 20 (got 0)"),
             ("search_docs", {"query": QUERY, "k": "many"}, "must be a whole number from 1 to 20 (got 'many')"),
             ("search_docs", {"query": QUERY, "kind": "tutorial"}, "kind must be one of any, api, guide, example"),
             ("search_docs", {}, "query is missing"),
             ("search_docs", {"query": ["a", "b"], "k": 99}, "query must be text"),
             ("read_page", {"url": 3}, "url must be a page URL"),
             ("lookup_api", {}, "name is missing")]

    async def main():
        async with _session(demo_html, cache=tmp_path / "cache", options=("--encoder", "static")) as session:
            for tool, arguments, words in cases:
                error, text = await _call(session, tool, **arguments)
                assert error and words in text, (tool, arguments, text)
                assert "\n" not in text and "validation error" not in text and "pydantic" not in text, text
                assert text.count("[sphinx-rag]") == 1
            assert (await _call(session, "search_docs", query=QUERY, k=3))[0] is False  # still answers

    _run(main())


def test_mcp_a_slow_site_costs_its_timeout_and_a_line(demo_html, tmp_path):
    """A site that sends a byte a second: the call ends at --timeout (+2 s at most), with
    this site's results and one line naming the slow site as slow, not damaged."""
    import time

    from test_hostile_sites import Stall

    async def main(url: str):
        async with _session(demo_html, url, cache=tmp_path / "cache",
                            options=("--timeout", "3", "--encoder", "static")) as session:
            alone_error, _ = await _call(session, "lookup_api", name="DummyClassifier")
            started = time.monotonic()
            error, text = await _call(session, "search_docs", query=QUERY, k=5)
            elapsed = time.monotonic() - started
            assert not error and not alone_error
            lines = [line for line in text.splitlines() if line.startswith("Not searched: ")]
            assert len(lines) == 1 and "did not answer within 3 s" in lines[0] and "damaged" not in lines[0]
            assert {site for site in re.findall(r"\| Site: (.+)$", text, re.M)} == {str(demo_html)}
            assert elapsed < 3 + 2, elapsed

    with StaticServer(tmp_path, Stall) as server:
        _run(main(server.url))
