"""Redirects and long pages in real Chromium (issue 42, items 7, 10 and 13).

The home site is tests/roots/test-longlines (a paragraph whose twin is one line of over
300 KB, a 300 KB code block), served by a server that redirects some twins: to a
recorder on another port (another origin), or within the site. It federates two sites
whose manifest.json redirects to that recorder, one whose 302 carries CORS headers and
one whose does not. The recorder keeps every request it receives: it must receive none
(previously the browser followed each redirect, then refused the answer).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import expect

from site_helpers import CorsHandler, RedirectHandler, StaticServer, build_site, client_missing
from sphinx_rag.search.index import ASSET_DIR
from test_search_e2e import problems
from test_webmcp import STUB, _execute, _tools

ROOTS = Path(__file__).resolve().parent.parent / "roots"
UNSEEN = "it redirects, and a browser cannot check where to before following: refused (give the address it moved to)"
UNREADABLE = ("it cannot be reached or read from this page (down, offline, not allowed by this page's "
              "Content-Security-Policy connect-src, no Access-Control-Allow-Origin header, or a redirect without one: a "
              "browser does not tell which)")


class Home(RedirectHandler):
    """The home site: RedirectHandler, and no 404 for the favicon Chromium asks for."""

    def do_GET(self):
        if self.path == "/favicon.ico":
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()


class Recorder(CorsHandler):
    """Keeps "METHOD path" of every request it receives in ``requests``."""

    requests: list

    def parse_request(self):
        ok = super().parse_request()
        self.requests.append(f"{self.command} {self.path}")
        return ok


@dataclass
class Served:
    html: Path
    home: StaticServer
    recorder: StaticServer
    received: list


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if client_missing():
        pytest.fail(client_missing())
    base = tmp_path_factory.mktemp("redirects")
    (base / "empty").mkdir()
    received: list = []
    recorder = StaticServer(base / "empty", Recorder, requests=received)
    manifest = f"/{Path(ASSET_DIR).as_posix()}/manifest.json"
    away = {manifest: recorder.url + "stolen/manifest.json"}
    moved = StaticServer(base / "empty", RedirectHandler, redirects=away)  # its 302 with Access-Control-Allow-Origin
    bare = StaticServer(base / "empty", RedirectHandler, redirects=away, cors=False)  # its 302 without
    shutil.copytree(ROOTS / "test-longlines", base / "src")
    entries = {"moved": {"url": moved.url, "enabled": True}, "bare": {"url": bare.url, "enabled": True}}
    with open(base / "src" / "conf.py", "a") as conf:
        conf.write(f"\nsphinx_rag_federation = {entries!r}\n")
    html = build_site(base / "src", base / "html", "-d", str(base / "doctrees"))
    home = StaticServer(html, Home, redirects={
        "/moved.html.md": recorder.url + "stolen.html.md",  # another origin
        "/old.html.md": "/paragraph.html.md",  # within the site
    })
    yield Served(html, home, recorder, received)
    for server in (home, moved, bare, recorder):
        server.stop()


def test_read_page_refuses_a_redirect_to_another_origin_before_requesting_it(served, page):
    """A twin that redirects to another port: refused, and nothing reaches that port
    (previously it was fetched there, then refused); one that redirects within the site is
    followed (the browser's opaque redirect, asked again in same-origin mode)."""
    page.add_init_script(STUB % "document")
    page.goto(served.home.url + "index.html")
    _tools(page)
    answer = _execute(page, "read_page", {"url": "moved.html"})
    assert answer.get("error", "").startswith(f"sphinx-rag: read_page: {served.home.url}moved.html.md redirects off "
                                              "this site: refused"), answer
    old = _execute(page, "read_page", {"url": "old.html"})
    assert "text" in old and "It starts here." in old["text"], old
    assert served.received == []  # (Chromium's DevTools still lists the hop it refused, as a request that failed)


def test_a_federated_manifest_that_redirects_reaches_nothing(served, page):
    """Two federated sites whose manifest.json redirects to the recorder (another origin):
    each is left out with one line, and the recorder receives nothing, whether the 302
    carries CORS headers (an opaque redirect: "it redirects") or not (a CORS failure, which
    a browser does not tell apart from a site that is down; no no-cors probe, which would
    follow the redirect: previously it did)."""
    page.goto(served.home.url + "index.html")
    page.keyboard.press("/")
    page.fill("dialog.sphinx-rag input[role=combobox]", "transform state weight")  # both sites are on (enabled)
    for name, why in (("moved", UNSEEN), ("bare", UNREADABLE)):
        line = page.locator(f"ul.sphinx-rag-source-lines > li[data-source='{name}']")
        expect(line).to_have_text(f"{name}: not searched: {why}", timeout=60_000)
    assert served.received == []


def _parts(page, url: str) -> tuple[list[str], float]:
    """Every part of read_page(url) without its head and size lines; the longest call in seconds."""
    text = _execute(page, "read_page", {"url": url})["text"]
    total = re.search(r"<!-- part 1 of (\d+)", text)
    answers, slowest = [], 0.0
    for n in range(1, int(total.group(1)) + 1 if total else 2):
        timed = page.evaluate("""async ([url, part]) => {
            const start = performance.now();
            const answer = await window.__tools.read_page.execute({ url, part });
            return { text: answer.content[0].text, seconds: (performance.now() - start) / 1000 };
        }""", [url, n])
        answers.append(timed["text"])
        slowest = max(slowest, timed["seconds"])
    bodies = []
    for answer in answers:
        size = re.search(r"\n\n\(\u2248[\d,]+ tokens\)\n$", answer)
        assert size, answer[-200:]
        bodies.append(re.sub(r"\A(<!--.*-->\n)+", "", answer[: size.start()]))
    return bodies, slowest


def test_read_page_gives_every_character_of_a_long_line_and_cuts_a_long_code_block_quickly(served, page):
    """In the page: every character of a line of over 300 KB is in some part (previously one
    part held its first 60,000 characters); a 300 KB code block comes in parts, every line
    once and in order, its fence closed and reopened, each call in well under a second
    (previously 9 to 12 s, the page frozen)."""
    page.add_init_script(STUB % "document")
    page.goto(served.home.url + "index.html")
    _tools(page)
    twin = (served.html / "paragraph.html.md").read_text(encoding="utf-8")
    assert max(len(line) for line in twin.split("\n")) > 300_000
    paragraph, _ = _parts(page, "paragraph.html")
    assert len(paragraph) >= 4
    pos = 0
    for piece in paragraph:  # each part where the last ended, newlines only between: all of the twin
        piece = piece.rstrip("\n")
        at = twin.find(piece, pos)
        assert at >= 0 and not twin[pos:at].strip("\n"), (pos, at, piece[:80])
        pos = at + len(piece)
    assert not twin[pos:].strip("\n")
    code, slowest = _parts(page, "code.html")
    assert len(code) >= 4 and all(len(re.findall(r"^```", piece, re.M)) % 2 == 0 for piece in code)
    assert re.findall(r"^ *line_(\d+) = ", "".join(code), re.M) == [str(n) for n in range(5_400)]
    assert slowest < 5, slowest  # about 0.05 s
    assert problems(page) == []
