"""Another site's index is untrusted input, and every remote read is bounded (issue 35).

Misbehaving servers on 127.0.0.1: a redirect to another port, a gzip bomb under its own
hash (and one sent as Content-Encoding), a byte a second, an endless body, damaged and
hostile records. Each costs one line (or, for one bad record, that record), never a
traceback, and this site's own results stay what they are alone."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from site_helpers import LoggedHandler, QuietHandler, StaticServer, claim_cosines
from sphinx_rag.search.index import ASSET_DIR, IndexDamaged
from sphinx_rag.agents.docs_tools import DocsError, Library, Site
from sphinx_rag.federation import check_site
from sphinx_rag.search.remote import RemoteError, RemoteIndexReader, fetch
from sphinx_rag.search.shards import REGISTER, binary_shard, check_binary_shard, dumps, read_script_shard, script_shard, \
    shard_hash

QUERY = "strategy of a dummy classifier"
PAGE = "api/generated/mlkit.dummy.DummyClassifier.html"


# -- a copy of a built site whose index is changed, names and hashes kept consistent -----------

class SiteCopy:
    """``html`` hard-linked into ``dest`` (files are replaced, never written in place)."""

    def __init__(self, html: Path, dest: Path):
        shutil.copytree(html, dest, copy_function=os.link)
        self.root = dest
        self.index = dest / ASSET_DIR
        self.manifest = json.loads((self.index / "manifest.json").read_text())

    def write(self, name: str, data: bytes):
        path = self.index / name
        path.unlink(missing_ok=True)
        path.write_bytes(data)

    def script(self, name: str) -> bytes:
        return read_script_shard(name, (self.index / name).read_bytes())

    def put_script(self, kind: str, payload: bytes) -> str:
        name, data = script_shard(kind, payload)
        self.write(name, data)
        return name

    def put_stream(self, kind: str, stream: bytes) -> str:
        """A script shard holding this gzip stream as it is (its name: the stream's hash)."""
        import base64

        name = f"{kind}-{shard_hash(stream)}"
        self.write(name + ".js", f'{REGISTER}("{name}","{base64.b64encode(stream).decode()}");\n'.encode())
        return name + ".js"

    def put_binary(self, kind: str, data: bytes) -> str:
        name = binary_shard(kind, data)
        self.write(name, data)
        return name

    def directory(self) -> dict:
        return json.loads(self.script(self.manifest["dir"]))

    def set_directory(self, d: dict):
        self.manifest["dir"] = self.put_script("dir", dumps(d))

    def edit_texts(self, edit):
        """``edit(record, i)`` on every chunk record (in place)."""
        d = self.directory()
        for at, name in enumerate(d["texts"]):
            shard = json.loads(self.script(name))
            for j, record in enumerate(shard["chunks"]):
                edit(record, shard["first"] + j)
            d["texts"][at] = self.put_script("texts", dumps(shard))
        self.set_directory(d)

    def save(self):
        path = self.index / "manifest.json"
        path.unlink(missing_ok=True)
        path.write_text(json.dumps(self.manifest))
        (self.index / "manifest.js").unlink(missing_ok=True)


def gzip_bomb(megabytes: int = 1024) -> bytes:
    """A gzip stream of ``megabytes`` MB of zeros in about a thousandth of it (64 MB members)."""
    member = gzip.compress(bytes(64 << 20), compresslevel=9, mtime=0)
    return member * (megabytes // 64)


def run_cli(*args, cache: Path, timeout: float = 120):
    env = {**os.environ, "SPHINX_RAG_CACHE": str(cache)}
    return subprocess.run([sys.executable, "-m", "sphinx_rag", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def peak_rss_kb(*args, cache: Path) -> int:
    """The peak resident memory of ``sphinx-rag ARGS`` in a process of its own (KB)."""
    code = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "sphinx_rag", *map(str, args)],
                         capture_output=True, text=True, env={**os.environ, "SPHINX_RAG_CACHE": str(cache)},
                         check=True, timeout=300)
    return int(out.stdout.strip())


# -- misbehaving servers -----------------------------------------------------------------------

class Stall(QuietHandler):
    """Answers every GET a byte a second (``headers``: the status line and headers too;
    else the headers at once, then the body), for ``seconds`` at most."""

    headers = True
    seconds = 120

    def do_GET(self):
        body = b'{"format_version": 3}' + b" " * 4096
        head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        if not self.headers:
            self.wfile.write(head)
            head = b""
        try:
            for byte in (head + body)[: self.seconds]:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass
        self.close_connection = True


class Endless(QuietHandler):
    """A 200 with no Content-Length and a body that never ends (``encoding``: sent as
    Content-Encoding, the body then a gzip bomb)."""

    encoding = ""

    def do_GET(self):
        self.send_response(200)
        if self.encoding:
            self.send_header("Content-Encoding", self.encoding)
        self.end_headers()
        try:
            if self.encoding:
                self.wfile.write(gzip_bomb())
            else:
                while True:
                    self.wfile.write(bytes(1 << 16))
        except OSError:
            pass
        self.close_connection = True


class GzipEverything(QuietHandler):
    """Sends every file gzip-encoded, whether or not the client asked for it."""

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            return super().do_GET()
        data = gzip.compress(path.read_bytes())
        self.send_response(200)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def redirect_to(target: str):
    class Redirect(QuietHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", target + self.path.lstrip("/"))
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Redirect


@pytest.fixture(scope="module")
def served_demo(demo_html):
    with StaticServer(demo_html) as server:
        yield server.url


# -- 1. one guarded fetch ------------------------------------------------------------------------

def test_a_redirect_to_another_port_is_refused_everywhere(served_demo, tmp_path):
    """Same host, another port: another origin (only the host was compared before)."""
    with StaticServer(tmp_path, redirect_to(served_demo)) as server:
        with pytest.raises(RemoteError, match="redirects to another origin"):
            fetch(server.url + "_static/sphinx_rag/index/manifest.json")
        with pytest.raises(RemoteError, match="redirects to another origin"):
            RemoteIndexReader(server.url, cache_dir=False)
        entry, line = check_site("moved", server.url, origin="https://mysite.org", timeout=3)
        assert entry is None and "redirects to another origin" in line and line.endswith(": left out")
        with pytest.raises(DocsError, match="redirects to another origin"):
            Site(server.url, cache_dir=tmp_path / "cache").search(QUERY, 3)


def test_a_redirect_within_the_origin_is_followed(demo_html, tmp_path):
    www = tmp_path / "www"
    shutil.copytree(demo_html / ASSET_DIR, www / "new" / ASSET_DIR)

    class Moved(QuietHandler):
        def do_GET(self):
            if self.path.startswith("/old/"):
                self.send_response(301)
                self.send_header("Location", "/new/" + self.path[len("/old/"):])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_GET()

    with StaticServer(www, Moved) as server:
        assert json.loads(fetch(server.url + "old/_static/sphinx_rag/index/manifest.json"))["format_version"] == 3


def test_content_encoding_is_decoded_and_capped(served_demo, demo_html, tmp_path):
    """A server may gzip what was asked as identity: decoded (the hashes still match), and
    its decoded size is what the cap counts (a 1 GB bomb is refused after the cap)."""
    with StaticServer(demo_html, GzipEverything) as server:
        reader = RemoteIndexReader(server.url, cache_dir=False)
        assert [r.url for r in Site(server.url, cache_dir=tmp_path / "c1", encoder="static").search(QUERY, 3)[0]]
        assert reader.directory["texts"]
    with StaticServer(tmp_path, Endless, encoding="gzip") as server:
        started = time.monotonic()
        with pytest.raises(RemoteError, match="too large"):
            fetch(server.url + "x", max_bytes=1 << 20, timeout=20)
        with pytest.raises(RemoteError, match="too large"):
            RemoteIndexReader(server.url, cache_dir=False)
        assert time.monotonic() - started < 20  # refused at the cap, not after a GB


def test_an_endless_body_stops_at_the_cap(tmp_path):
    with StaticServer(tmp_path, Endless) as server:
        with pytest.raises(RemoteError, match="too large"):
            RemoteIndexReader(server.url, cache_dir=False)
        entry, line = check_site("endless", server.url, origin="https://mysite.org")
        assert entry is None and "too large" in line


@pytest.mark.parametrize("headers", [True, False], ids=["headers", "body"])
def test_a_byte_a_second_ends_at_the_deadline(tmp_path, headers):
    """A total deadline, headers included: a read timeout alone never fires when a byte
    comes every second."""
    with StaticServer(tmp_path, Stall, headers=headers) as server:
        started = time.monotonic()
        with pytest.raises(RemoteError, match="too slow") as info:
            fetch(server.url + "manifest.json", timeout=5, deadline=time.monotonic() + 2)
        assert info.value.slow and time.monotonic() - started < 2 + 2
        started = time.monotonic()
        entry, line = check_site("slow", server.url, origin="https://mysite.org", timeout=3)
        assert time.monotonic() - started < 3 + 2  # documented: CHECK_TIMEOUT (3 s) in all
        assert entry is None and "no complete answer within 3 s" in line and line.endswith(": left out")
        started = time.monotonic()
        with pytest.raises(DocsError) as info:
            Site(server.url, cache_dir=tmp_path / "cache", timeout=3).search(QUERY, 3)
        assert time.monotonic() - started < 3 + 2
        message = str(info.value)
        assert "did not answer within 3 s" in message and "damaged" not in message and "rebuild" not in message


def test_cli_search_of_a_slow_site_ends_in_time_and_the_others_answer(demo_html, tmp_path):
    with StaticServer(tmp_path, Stall) as server:
        alone = run_cli("search", demo_html, QUERY, "--k", "5", "--json", cache=tmp_path / "c")
        started = time.monotonic()
        proc = run_cli("search", demo_html, server.url, QUERY, "--k", "5", "--json", "--timeout", "3",
                       cache=tmp_path / "c", timeout=60)
        elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1 and "did not answer within 3 s" in errors[0] and "damaged" not in errors[0]
    root = demo_html.resolve().as_uri() + "/"
    assert [r["url"] for r in json.loads(proc.stdout)] == [root + r["url"] for r in json.loads(alone.stdout)]
    assert elapsed < 3 + 10  # the process's start and the local search besides the 3 s


# -- 2. validation of every remote record ------------------------------------------------------

def _no_layout(copy: SiteCopy):
    del copy.manifest["layout"]


def _huge_count(copy: SiteCopy):
    copy.manifest["counts"]["chunks"] = 10 ** 12


def _cluster_ids_out_of_range(copy: SiteCopy):
    ddir_name = copy.manifest["dense"]["directory"]
    ddir = json.loads(check_binary_shard(ddir_name, (copy.index / ddir_name).read_bytes()))
    import numpy as np

    name = ddir["clusters"][0][0]
    data = bytearray((copy.index / name).read_bytes())
    count = int.from_bytes(data[:4], "little")
    ids = np.frombuffer(bytes(data[4:4 + 4 * count]), dtype="<u4") + np.uint32(copy.manifest["counts"]["chunks"])
    data[4:4 + 4 * count] = ids.astype("<u4").tobytes()
    ddir["clusters"][0][0] = copy.put_binary("cluster", bytes(data))
    copy.manifest["dense"]["directory"] = copy.put_binary("ddir", dumps(ddir))


def _texts_bomb(copy: SiteCopy):
    d = copy.directory()
    d["texts"] = [copy.put_stream("texts", gzip_bomb())] * len(d["texts"])  # 1 GB each, 1.4 MB files
    copy.set_directory(d)


def _directory_bomb(copy: SiteCopy):
    copy.manifest["dir"] = copy.put_stream("dir", gzip_bomb(384))  # 400 KB: within the file's limit


SITE_DAMAGE = {"no-layout": (_no_layout, "has no layout"),
               "count-1e12": (_huge_count, "counts 1000000000000 chunks"),
               "cluster-ids": (_cluster_ids_out_of_range, "naming chunk"),
               "texts-bomb": (_texts_bomb, "inflates to more than"),
               "dir-bomb": (_directory_bomb, "inflates to more than")}


def _display_not_strings(record, i):
    record["display"] = [[1, 2]] if i % 2 else [["p", None]]


def _no_headings(record, i):
    del record["headings"]


RECORD_DAMAGE = {"display": _display_not_strings, "headings": _no_headings}


@pytest.fixture(scope="module")
def hostile(demo_html, tmp_path_factory):
    """name -> URL of a copy of the demo with that damage, on one server."""
    www = tmp_path_factory.mktemp("hostile")
    for name, (damage, _) in SITE_DAMAGE.items():
        copy = SiteCopy(demo_html, www / name)
        damage(copy)
        copy.save()
    for name, edit in RECORD_DAMAGE.items():
        copy = SiteCopy(demo_html, www / name)
        copy.edit_texts(edit)
        copy.save()
    with StaticServer(www) as server:
        yield {name: server.url + name + "/" for name in [*SITE_DAMAGE, *RECORD_DAMAGE]}


@pytest.mark.parametrize("name", list(SITE_DAMAGE))
def test_cli_a_damaged_site_is_one_line_and_this_site_answers_as_alone(name, hostile, demo_html, tmp_path):
    alone = run_cli("search", demo_html, QUERY, "--k", "5", "--json", "--encoder", "static", cache=tmp_path)
    proc = run_cli("search", demo_html, hostile[name], QUERY, "--k", "5", "--json", "--encoder", "static",
                   cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("[sphinx-rag] not searched: "), proc.stderr
    assert SITE_DAMAGE[name][1] in errors[0] and "Traceback" not in proc.stderr
    root = demo_html.resolve().as_uri() + "/"
    assert [r["url"] for r in json.loads(proc.stdout)] == [root + r["url"] for r in json.loads(alone.stdout)]
    single = run_cli("search", hostile[name], QUERY, "--encoder", "static", cache=tmp_path)
    assert single.returncode == 2 and len(single.stderr.strip().splitlines()) == 1, single.stderr


INVALID = re.compile(r"(\d[\d,]*) of (?:the )?\1 records(?: read)? invalid \(a record's (?:display blocks|headings) ")


@pytest.mark.parametrize("name", list(RECORD_DAMAGE))
def test_cli_damaged_records_are_dropped_and_said(name, hostile, demo_html, tmp_path):
    """Every record of the site fails its checks: its records are dropped, the other site's
    results are as alone, and one line names the site and how many records were invalid
    (previously nothing: as if the site had no match); asked alone, it is that line and
    exit status 2 (previously "no results" and 0). No traceback."""
    alone = run_cli("search", demo_html, QUERY, "--k", "5", "--json", "--encoder", "static", cache=tmp_path)
    proc = run_cli("search", hostile[name], demo_html, QUERY, "--k", "5", "--json", "--encoder", "static",
                   cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith(f"[sphinx-rag] not searched: {hostile[name]}: "), proc.stderr
    assert INVALID.search(errors[0]), errors[0]
    root = demo_html.resolve().as_uri() + "/"
    assert [r["url"] for r in json.loads(proc.stdout)] == [root + r["url"] for r in json.loads(alone.stdout)]
    for args in ((), ("--json",)):
        single = run_cli("search", hostile[name], QUERY, "--encoder", "static", *args, cache=tmp_path)
        assert single.returncode == 2 and single.stdout == "", (single.stdout, single.stderr)
        line, = single.stderr.strip().splitlines()
        assert line.startswith(f"[sphinx-rag] not searched: {hostile[name]}: ") and INVALID.search(line), line
        assert "Traceback" not in single.stderr


@pytest.mark.parametrize("name", list(RECORD_DAMAGE))
def test_mcp_a_site_whose_records_are_all_invalid_is_an_error_not_no_results(name, hostile, demo_html, tmp_path):
    with pytest.raises(DocsError) as info:
        Library([Site(hostile[name], encoder="static", cache_dir=tmp_path)]).search(QUERY, k=5)
    message = str(info.value)
    assert message.startswith(f"[sphinx-rag] {hostile[name]}: ") and INVALID.search(message) and "\n" not in message
    text = Library([Site(hostile[name], encoder="static", cache_dir=tmp_path),
                    Site(demo_html, encoder="static")]).search(QUERY, k=5)
    not_searched = [line for line in text.splitlines() if line.startswith("Not searched: ")]
    assert len(not_searched) == 1 and hostile[name] in not_searched[0] and INVALID.search(not_searched[0]), text
    alone = Library([Site(demo_html, encoder="static")]).search(QUERY, k=5)
    assert [u for u in text.splitlines() if u.startswith("URL: ")] == [
        u for u in alone.splitlines() if u.startswith("URL: ")]


def test_a_site_with_some_invalid_records_answers_and_says_how_many(demo_html, tmp_path):
    """One record in three without headings: the others answer (CLI exit 0, MCP), and one
    line says how many of the records read were invalid and why (previously nothing)."""
    www = tmp_path / "www"
    copy = SiteCopy(demo_html, www / "some")

    def edit(record, i):
        if i % 3 == 0:
            del record["headings"]

    copy.edit_texts(edit)
    copy.save()
    some = re.compile(r"(\d[\d,]*) of (?:the )?(\d[\d,]*) records(?: read)? invalid \(a record's headings [^)]*\); "
                      r"left out$")
    with StaticServer(www) as server:
        url = server.url + "some/"
        proc = run_cli("search", url, QUERY, "--k", "5", "--json", "--encoder", "static", cache=tmp_path / "c")
        assert proc.returncode == 0 and json.loads(proc.stdout), proc.stderr
        line, = proc.stderr.strip().splitlines()
        found = some.search(line)
        assert line.startswith(f"[sphinx-rag] {url}: ") and found, line
        dropped, read = (int(x.replace(",", "")) for x in found.groups())
        assert 0 < dropped < read
        both = run_cli("search", demo_html, url, QUERY, "--k", "5", "--encoder", "static", cache=tmp_path / "c")
        assert both.returncode == 0 and len(both.stderr.strip().splitlines()) == 1 and some.search(both.stderr.strip())
        text = Library([Site(url, encoder="static", cache_dir=tmp_path / "c")]).search(QUERY, k=5)
        notes = [line for line in text.splitlines() if some.search(line)]
        assert len(notes) == 1 and url in notes[0] and "URL: " + url in text, text


def test_result_urls_stay_on_the_remote_site(demo_html, tmp_path):
    """Records whose URL is javascript:, data:, another host, or ../ out of the site's
    path are dropped; the others answer, each URL under the site's root."""
    www = tmp_path / "www"
    copy = SiteCopy(demo_html, www / "docs")
    hostile_urls = ["javascript:alert(document.domain)", "data:text/html,<script>alert(1)</script>",
                    "http://127.0.0.2/phish.html", "//127.0.0.2/phish.html", "../../outside.html",
                    "%2e%2e/outside.html", "/\\127.0.0.2/x.html", " javascript:alert(1)"]
    bad = {}

    def edit(record, i):
        if i % 2 == 0:
            record["url"] = hostile_urls[i // 2 % len(hostile_urls)]
            bad[record["id"]] = record["url"]

    copy.edit_texts(edit)
    copy.save()
    with StaticServer(www) as server:
        site = server.url + "docs/"
        library = Library([Site(demo_html, encoder="static"), Site(site, encoder="static", cache_dir=tmp_path / "c")])
        text = library.search(QUERY, k=20)
        urls = [line.removeprefix("URL: ") for line in text.splitlines() if line.startswith("URL: ")]
        remote = [u for u in urls if u.startswith("http")]
        assert remote and all(u.startswith(site) and ".." not in u for u in remote)
        assert "javascript:" not in text and "127.0.0.2" not in text and "data:" not in text
        notes = [line for line in text.splitlines() if "a record's url must be a page of the site" in line]
        assert len(notes) == 1 and notes[0].startswith(f"[sphinx-rag] {site}: ") and notes[0].endswith("left out")
        reader = RemoteIndexReader(site, cache_dir=False)
        reader.chunks()
        assert reader.dropped == len(bad)
        assert reader.invalid_records() == (f"{len(bad)} of {reader.n_chunks} records invalid "
                                            "(a record's url must be a page of the site)")


def test_mcp_search_of_several_sites_survives_a_malformed_one(hostile, demo_html, tmp_path):
    library = Library([Site(demo_html, encoder="static"), Site(hostile["display"], encoder="static",
                                                              cache_dir=tmp_path),
                       Site(hostile["no-layout"], cache_dir=tmp_path)])
    text = library.search(QUERY, k=5)
    alone = Library([Site(demo_html, encoder="static")]).search(QUERY, k=5)
    not_searched = [line for line in text.splitlines() if line.startswith("Not searched: ")]
    assert len(not_searched) == 2 and "has no layout" in not_searched[1], text  # in the sites' order
    assert hostile["display"] in not_searched[0] and INVALID.search(not_searched[0]), text
    assert [u for u in text.splitlines() if u.startswith("URL: ")] == [
        u for u in alone.splitlines() if u.startswith("URL: ")]


# -- 2b. a site's claimed cosines (issue 42, item 8) --------------------------------------------

COSINE_QUERY = "strategy of a dummy classifier"  # every word on the demo's DummyClassifier page


def _nothing_of_the_query(record, i):
    """A record whose passage holds none of the query's words (its index still finds it)."""
    record["text"] = "Nothing to see here, only filler."
    record["display"] = [["p", record["text"]]]
    record["headings"] = ["Filler"]


@pytest.fixture(scope="module")
def claimed(demo_html, tmp_path_factory):
    """name -> URL of a copy of the demo whose passages hold none of the query's words and
    whose every vector claims a cosine near a million ("million": scale 1e6 / 127) or
    infinite ("infinite")."""
    www = tmp_path_factory.mktemp("claimed")
    for name, scale in (("million", 1e6 / 127), ("infinite", math.inf)):
        copy = SiteCopy(demo_html, www / name)
        copy.edit_texts(_nothing_of_the_query)
        copy.save()
        claim_cosines(copy.index, scale)
    with StaticServer(www) as server:
        yield {name: server.url + name + "/" for name in ("million", "infinite")}


def test_claimed_cosines_never_outrank_a_page_holding_every_query_word(claimed, demo_html, tmp_path):
    """A site whose scales claim cosines near a million, and whose hits hold none of the
    query's words: its cosines count as 1 at most (clamped), and no more than the merge's
    UNBACKED_SIMILARITY beyond the words backing them, so the demo's page holding every
    word is #1 in `sphinx-rag search SITE SITE` and in the MCP server's merge, in either
    order (previously the site's six hits came first, the page 7th of 7)."""
    from sphinx_rag.search.merge import UNBACKED_SIMILARITY, match_words

    url = claimed["million"]
    hits, _ = Site(url, encoder="static", cache_dir=tmp_path / "c").search(COSINE_QUERY, 6)
    assert len(hits) == 6 and all(-1 <= h.result.similarity <= 1 for h in hits), [h.result.similarity for h in hits]
    assert max(h.result.similarity for h in hits) == 1.0  # what the claim comes to, clamped
    words = match_words(COSINE_QUERY)
    assert words and not any(w in h.result.text.lower() for h in hits for w in words)
    alone = json.loads(run_cli("search", demo_html, COSINE_QUERY, "--k", "7", "--json", "--encoder", "static",
                               cache=tmp_path / "c").stdout)
    root = demo_html.resolve().as_uri() + "/"
    for sites in ((demo_html, url), (url, demo_html)):
        proc = run_cli("search", *sites, COSINE_QUERY, "--k", "20", "--json", "--encoder", "static",
                       cache=tmp_path / "c")
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        merged = json.loads(proc.stdout)
        assert len(merged) == 20 and merged[0]["url"] == root + alone[0]["url"], merged[0]  # this site's #1 stays #1
        remote = [n for n, r in enumerate(merged) if r["site"] == url]
        home_all_words = [n for n, r in enumerate(merged) if r["site"] == str(demo_html)
                          and all(w in r["text"].lower() for w in words)]
        assert len(home_all_words) >= 7 and not [n for n in remote if n < max(home_all_words)], [
            (r["site"], r["title"]) for r in merged]  # previously the site's six hits were #1 to #6
    home, other = Site(demo_html, encoder="static"), Site(url, encoder="static", cache_dir=tmp_path / "c")
    for sites in ([home, other], [other, home]):
        text = Library(sites).search(COSINE_QUERY, k=7)
        first = text.split("## 2.")[0]
        assert f"Site: {demo_html}" in first and f"URL: {root}{alone[0]['url']}" in first, text
    assert UNBACKED_SIMILARITY < 1  # a hit holding every word counts at least 1 + its cosine


def test_scales_are_checked_and_scores_clamped_and_the_merge_counts_claims_within_bounds():
    """dense.py (as dense.js, tests in js/test/records.test.js): Infinity, NaN or a negative
    scale refuses its shard; a score is clamped to [-1, 1]. merge.py (as merge.js): a claimed
    cosine of Infinity or a million counts 1 and at most UNBACKED_SIMILARITY above its words,
    NaN counts 0; the order is the same whatever the sites' order."""
    import struct

    import numpy as np

    from sphinx_rag.search import dense
    from sphinx_rag.search.merge import Entry, merge_answers

    def shard(scale):
        return struct.pack("<I", 1) + struct.pack("<I", 0) + struct.pack("<f", scale) + bytes([64, 0])

    for bad, problem in ((math.inf, "not finite"), (-math.inf, "not finite"), (math.nan, "not finite"),
                         (-0.5, "negative")):
        with pytest.raises(ValueError, match=problem):
            dense.read_cluster_shard(shard(bad), 2, n_chunks=1)
        with pytest.raises(ValueError, match=problem):
            dense.read_centroid_shard(struct.pack("<I", 1) + struct.pack("<f", bad) + bytes([64, 0]), 2)
    cluster = dense.read_cluster_shard(shard(1e6 / 64), 2, n_chunks=1)
    assert dense.dense_scores(np.array([1.0, 0.0]), cluster.vectors, cluster.scales).tolist() == [1.0]
    assert dense.dense_scores(np.array([-1.0, 0.0]), cluster.vectors, cluster.scales).tolist() == [-1.0]
    home = ([Entry("home", "alpha beta", "", 0.0)], False)
    for claim in (math.inf, 1e6, 1.0):
        evil = ([Entry("evil", "nothing", "", claim)], False)
        for answers, names in (([evil, home], ["e", "h"]), ([home, evil], ["h", "e"])):
            assert [answers[n][0][i].key for n, i in merge_answers("alpha beta", answers, names)] == ["home", "evil"]
    nan, low, neg = ([Entry("nan", "x", "", math.nan)], False), ([Entry("low", "x", "", 0.1)], False), (
        [Entry("neg", "x", "", -0.1)], False)
    for answers in ([nan, low, neg], [neg, nan, low], [low, neg, nan]):
        names = [a[0][0].key for a in answers]
        assert [answers[n][0][i].key for n, i in merge_answers("alpha", answers, names)] == ["low", "nan", "neg"]


def test_infinite_scales_are_refused_in_one_line(claimed, demo_html, tmp_path):
    """Scales of Infinity: the site's cluster shards are refused (one line: not searched),
    and this site's results are as alone (the browser refuses them too: validate.js)."""
    url = claimed["infinite"]
    alone = run_cli("search", demo_html, COSINE_QUERY, "--k", "5", "--json", "--encoder", "static", cache=tmp_path)
    proc = run_cli("search", demo_html, url, COSINE_QUERY, "--k", "5", "--json", "--encoder", "static", cache=tmp_path)
    assert proc.returncode == 0, proc.stderr
    line, = proc.stderr.strip().splitlines()
    assert line.startswith(f"[sphinx-rag] not searched: {url}") and "scales that are not finite numbers" in line, line
    root = demo_html.resolve().as_uri() + "/"
    assert [r["url"] for r in json.loads(proc.stdout)] == [root + r["url"] for r in json.loads(alone.stdout)]


def test_a_query_asking_for_too_many_bytes_is_refused(demo_html, tmp_path):
    """Shards each within their own cap, too many for one query: the per-query budget."""
    www = tmp_path / "www"
    copy = SiteCopy(demo_html, www / "site")
    copy.manifest["near"] = [[0, 1 << 20, copy.put_script("near", dumps({"terms": [chr(97 + n % 26) * (900_000 + n)],
                                                                          "df": [1]}))] for n in range(40)]
    copy.save()
    with StaticServer(www) as server:
        reader = RemoteIndexReader(server.url + "site/", cache_dir=False)
        with pytest.raises(IndexDamaged, match="for one query: refused"):
            reader.near("clasifier")
        assert reader.spent <= reader.query_budget + (2 << 20)


def test_peak_memory_under_a_gzip_bomb_stays_that_of_an_honest_site(hostile, served_demo, tmp_path):
    """A CLI search of a site whose directory inflates to 1 GB (under a matching hash)."""
    honest = peak_rss_kb("search", served_demo, QUERY, "--fusion", "bm25", cache=tmp_path / "a")
    bombed = peak_rss_kb("search", hostile["dir-bomb"], QUERY, "--fusion", "bm25", cache=tmp_path / "b")
    texts = peak_rss_kb("search", hostile["texts-bomb"], QUERY, "--fusion", "bm25", cache=tmp_path / "c")
    assert bombed <= 2 * honest and texts <= 2 * honest, (honest, bombed, texts)


# -- 3. the model cache and read_page --------------------------------------------------------

def test_the_model_cache_is_keyed_and_checked_by_content(demo_html, tmp_path):
    www = tmp_path / "www"
    shutil.copytree(demo_html / ASSET_DIR, www / "a" / ASSET_DIR, copy_function=os.link)
    other = SiteCopy(demo_html, www / "b")
    entry = other.manifest["model_files"]
    info = json.loads((other.index / entry["dir"] / "model_info.json").read_text())
    changed = json.dumps({**info, "note": "another site's model"}).encode()
    (other.index / entry["dir"] / "model_info.json").unlink()
    (other.index / entry["dir"] / "model_info.json").write_bytes(changed)
    entry["files"]["model_info.json"] = {"bytes": len(changed), "sha256": hashlib.sha256(changed).hexdigest()}
    other.save()  # the same directory name, other bytes
    requests: list[str] = []
    with StaticServer(www, LoggedHandler, requests=requests) as server:
        a = RemoteIndexReader(server.url + "a/", cache_dir=tmp_path / "cache").model_dir
        b = RemoteIndexReader(server.url + "b/", cache_dir=tmp_path / "cache").model_dir
        assert a != b and (b / "model_info.json").read_bytes() == changed
        assert (a / "model_info.json").read_bytes() == (demo_html / ASSET_DIR / entry["dir"] / "model_info.json"
                                                        ).read_bytes()
        # a cached file of the right size but other bytes is fetched again
        vocab = (a / "vocab.txt").read_bytes()
        (a / "vocab.txt").write_bytes(b"x" * len(vocab))
        before = len(requests)
        again = RemoteIndexReader(server.url + "a/", cache_dir=tmp_path / "cache").model_dir
        assert again == a and (a / "vocab.txt").read_bytes() == vocab
        assert [p for p in requests[before:] if p.endswith("vocab.txt")]


def _listing(copy: SiteCopy) -> dict:
    name = copy.manifest["llms"]["pages"]
    return json.loads(check_binary_shard(name, (copy.index / name).read_bytes()))


def _set_listing(copy: SiteCopy, listing: dict):
    copy.manifest["llms"]["pages"] = copy.put_binary("pages", dumps(listing))


def test_read_page_never_leaves_the_site(demo_html, tmp_path):
    secret = b"# secret\n\nnot part of any site\n"
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "secret.md").write_bytes(secret)
    copy = SiteCopy(demo_html, tmp_path / "www" / "site")
    listing = _listing(copy)
    listing["files"]["../secret.md"] = [len(secret), hashlib.sha256(secret).hexdigest()[:16]]
    listing["files"]["/etc/hostname.md"] = [1, "0" * 16]
    _set_listing(copy, listing)
    copy.save()
    twin = copy.root / (PAGE + ".md")
    original = twin.read_bytes()
    twin.unlink()
    twin.write_bytes(original.replace(b"DummyClassifier", b"Tampered"))
    local = Library([Site(copy.root)])
    root = copy.root.resolve().as_uri() + "/"
    for url in (root + "../secret.md", root + "%2e%2e/secret.md"):
        with pytest.raises(DocsError) as info:
            local.read_page(url)
        assert "secret" not in str(info.value).replace(url, "") or "not" in str(info.value)
    with pytest.raises(DocsError, match="does not match its hash"):
        local.read_page(root + PAGE)
    with StaticServer(tmp_path / "www") as server:
        remote = Library([Site(server.url + "site/", cache_dir=tmp_path / "cache")])
        with pytest.raises(DocsError, match="not a page of|not an indexed page"):
            remote.read_page(server.url + "site/../secret.md")
        with pytest.raises(DocsError, match="does not match its hash"):
            remote.read_page(server.url + "site/" + PAGE)
        reader = RemoteIndexReader(server.url + "site/", cache_dir=False)
        assert "../secret.md" not in reader.pages()["files"] and "/etc/hostname.md" not in reader.pages()["files"]


# -- 4. small items --------------------------------------------------------------------------

def test_a_long_query_is_not_echoed_whole(demo_html, tmp_path):
    """30,000 words: the message quotes their first 80 characters (keyword search: the query
    vector's spelling correction takes minutes over 30,000 words, retrieve.py)."""
    query = "strategy " + " ".join(["zzqx", "blorptang", "vexillology"] * 10_000)
    argument = query[:120_000]  # the longest argument Linux passes a program is 128 KB
    for text in (Library([Site(demo_html, fusion="bm25")]).search(query),
                 run_cli("search", demo_html, argument, "--fusion", "bm25", cache=tmp_path).stdout,
                 run_cli("search", demo_html, demo_html, argument, "--fusion", "bm25", cache=tmp_path).stdout):
        first = text.splitlines()[0]
        assert first.startswith("No good match for 'strategy zzqx") and "\u2026'" in first and len(first) < 160, first


def test_a_card_offset_to_a_plain_chunk_is_no_traceback(demo_html, tmp_path):
    """expand.py reads ``members`` of the chunk a ``card`` offset points at: every record
    read has it (0 unless a card), a local index's as another site's."""
    copy = SiteCopy(demo_html, tmp_path / "site")

    def edit(record, i):
        record.pop("members", None)
        record["card"] = 1 if i % 3 == 1 else record.get("card", 0)
        if not record["card"]:
            del record["card"]

    copy.edit_texts(edit)
    copy.save()
    proc = run_cli("search", copy.root, QUERY, "--k", "5", "--json", "--encoder", "static", cache=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "" and len(json.loads(proc.stdout)) == 5, proc.stderr
