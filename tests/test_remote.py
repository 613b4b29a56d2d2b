"""A published index read over HTTP (remote.py): the same ranking as the local directory,
only the shards a query needs, verified and cached by hash, and one-line errors for a
site that is down, not a sphinx-rag site, or hostile."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from site_helpers import LoggedHandler, QuietHandler, StaticServer
from sphinx_rag.search.index import ASSET_DIR, IndexDamaged
from sphinx_rag.search.remote import RemoteError, RemoteIndexReader, index_url
from sphinx_rag.search.retrieve import Searcher

QUERY = "strategy of a dummy classifier"


def test_index_url_forms():
    assert index_url("https://docs.example.org/en/stable") == "https://docs.example.org/en/stable/_static/sphinx_rag/index/"
    assert index_url("https://x.org/a/index.html") == "https://x.org/a/_static/sphinx_rag/index/"
    assert index_url("https://x.org/a/_static/sphinx_rag/index/manifest.json") == "https://x.org/a/_static/sphinx_rag/index/"
    with pytest.raises(RemoteError, match="not an http"):
        index_url("ftp://x.org/")


def test_remote_search_equals_local_and_reuses_the_cache(demo_html, tmp_path):
    requests: list[str] = []
    with StaticServer(demo_html, LoggedHandler, requests=requests) as server:
        local = Searcher(demo_html, fusion="bm25").search(QUERY, k=5)
        reader = RemoteIndexReader(server.url, cache_dir=tmp_path / "cache")
        remote = Searcher(reader, fusion="bm25").search(QUERY, k=5)
        assert [(r.url, r.score) for r in remote] == [(r.url, r.score) for r in local]
        assert reader.fetched["requests"] >= 3  # manifest, directory, term and text shards
        assert not any("cluster-" in p or "model-" in p for p in requests), "a keyword query fetches no vectors"
        before = len(requests)
        again = RemoteIndexReader(server.url, cache_dir=tmp_path / "cache")
        assert [r.url for r in Searcher(again, fusion="bm25").search(QUERY, k=5)] == [r.url for r in local]
        assert requests[before:] == ["/_static/sphinx_rag/index/manifest.json"]  # every shard from the cache
    # the site is down: the cached manifest and shards still answer
    offline = RemoteIndexReader(server.url, cache_dir=tmp_path / "cache")
    assert offline.from_cache
    assert [r.url for r in Searcher(offline, fusion="bm25").search(QUERY, k=5)] == [r.url for r in local]


def test_remote_errors_are_one_line(demo_html, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(demo_html / ASSET_DIR, site / ASSET_DIR)
    with StaticServer(tmp_path) as server:
        with pytest.raises(RemoteError, match="not a sphinx-rag site") as exc:
            RemoteIndexReader(server.url + "nowhere/", cache_dir=False)
        assert "\n" not in str(exc.value)
        manifest_path = site / ASSET_DIR / "manifest.json"
        manifest = json.loads(manifest_path.read_text())
        # a shard replaced by other bytes: refused, named, never cached
        victim = manifest["dir"]
        (site / ASSET_DIR / victim).write_text('sphinxRagShard("x","");\n')
        reader = RemoteIndexReader(server.url + "site/", cache_dir=tmp_path / "cache")
        with pytest.raises(IndexDamaged, match=victim) as exc:
            reader.directory  # noqa: B018
        assert "\n" not in str(exc.value)
        assert not (tmp_path / "cache" / "shards" / victim).exists()
        # a manifest that is not JSON, one of another format, one too large, a name that is a path
        manifest_path.write_text("<html>not json</html>")
        with pytest.raises(IndexDamaged, match="not JSON"):
            RemoteIndexReader(server.url + "site/", cache_dir=False)
        manifest_path.write_text(json.dumps({**manifest, "format_version": 99}))
        with pytest.raises(IndexDamaged, match="format 99"):
            RemoteIndexReader(server.url + "site/", cache_dir=False)
        manifest_path.write_text(json.dumps({**manifest, "dir": "../../../etc/passwd"}))
        with pytest.raises(IndexDamaged, match="names no directory shard"):
            RemoteIndexReader(server.url + "site/", cache_dir=False)
        manifest_path.write_bytes(b" " * (5 << 20))
        with pytest.raises(RemoteError, match="too large"):
            RemoteIndexReader(server.url + "site/", cache_dir=False)
    with pytest.raises(RemoteError, match="cannot fetch"):
        RemoteIndexReader(server.url + "site/", cache_dir=False, timeout=2)


def test_redirect_to_another_host_is_refused(tmp_path):
    class Redirect(QuietHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", "http://localhost:9/elsewhere/manifest.json")
            self.end_headers()

    with StaticServer(tmp_path, Redirect) as server, pytest.raises(RemoteError, match="another origin"):
        RemoteIndexReader(server.url, cache_dir=False)


def test_searcher_takes_a_url(demo_html):
    with StaticServer(demo_html) as server:
        searcher = Searcher(server.url, fusion="bm25")
        assert searcher.index.where("").startswith(server.url)
        assert searcher.search(QUERY, k=1)[0].url == Searcher(Path(demo_html), fusion="bm25").search(QUERY, k=1)[0].url


def test_fetch_is_bounded_and_a_short_body_is_no_file(tmp_path):
    """A server that trickles bytes is given up at the deadline (the per-read timeout alone
    would wait forever), and a body cut short of its Content-Length is a failure to fetch."""
    import socket
    import time

    from sphinx_rag.search.remote import fetch

    class Trickle(QuietHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            if self.path == "/short":
                self.wfile.write(b"x" * 500)
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            try:
                for _ in range(1000):  # 1000 s at this pace
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:  # the client gave up
                pass

    with StaticServer(tmp_path, Trickle) as server:
        started = time.monotonic()
        with pytest.raises(RemoteError, match="too slow"):
            fetch(server.url + "slow", timeout=5, deadline=time.monotonic() + 2)
        assert time.monotonic() - started < 30
        with pytest.raises(RemoteError, match="closed after 500 of 1,000 bytes"):
            fetch(server.url + "short", timeout=5)
