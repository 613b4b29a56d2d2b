"""Real-Chromium fixtures: built sites served over a real HTTP server, a browser.

Chromium is Debian's (/usr/bin/chromium), driven by Python Playwright; never run
`playwright install`. Each test gets a fresh browser context (empty Cache Storage).
Set SPHINX_RAG_E2E_SITE=/path/to/html to reuse a built demo site instead of the
session build of demo_docs.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from site_helpers import (CHROMIUM, CorsHandler, StaticServer, build_site, chromium_options, client_missing,
                          free_port, without_reranker)

ROOTS = Path(__file__).resolve().parent.parent / "roots"

# What the brief asks for; 'self' covers every Sphinx/theme file. The only addition is
# per page: the sha256 of the *theme's* inline <script>s (pydata-sphinx-theme sets its
# colour mode and DOCUMENTATION_OPTIONS.pagename inline). sphinx-rag needs none.
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; worker-src 'self'; "
       "style-src 'self' 'unsafe-inline'")
INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S)


def pytest_collection_modifyitems(items):
    """Without Chromium the browser tests fail (CI must install it), except locally on request."""
    if not Path(CHROMIUM).exists() and os.environ.get("SPHINX_RAG_SKIP_BROWSER"):
        skip = pytest.mark.skip(reason=f"no Chromium at {CHROMIUM} and SPHINX_RAG_SKIP_BROWSER set")
        for item in items:
            if "tests/browser" in str(item.fspath):
                item.add_marker(skip)


def inline_script_hashes(html: bytes) -> list[str]:
    return ["'sha256-" + base64.b64encode(hashlib.sha256(body).digest()).decode() + "'"
            for body in INLINE_SCRIPT.findall(html)]


class _Handler(CorsHandler):
    csp: str | None = None  # a policy template with {hashes}
    cors: bool = False  # Access-Control-Allow-Origin: * (a site other sites' pages may read)

    def end_headers(self):
        if self.csp:
            hashes = ""
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if path.suffix == ".html" and path.is_file():
                hashes = "".join(" " + h for h in inline_script_hashes(path.read_bytes()))
            self.send_header("Content-Security-Policy", self.csp.format(hashes=hashes))
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def do_GET(self):
        if self.path == "/favicon.ico":  # Chromium asks for it; a 404 would log a console error
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()


@pytest.fixture(scope="session")
def serve():
    """serve(directory, csp=None, cors=False) -> StaticServer on 127.0.0.1:<ephemeral>; stopped at
    session end.

    csp: True for the policy CSP above, or a policy template ({hashes}: the page's inline scripts).
    cors: send Access-Control-Allow-Origin: * (a federated site, read by other sites' pages).
    """
    servers = []

    def start(directory: Path, *, csp: bool | str | None = None, cors: bool = False) -> StaticServer:
        servers.append(StaticServer(directory, _Handler, csp=CSP if csp is True else (csp or None), cors=cors))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def site(request, tmp_path_factory) -> Path:
    """The built demo docs (with embeddings), without its reranker (as sphinx_rag_rerank =
    False publishes it): the model tier's order is the fused one, which these tests compare
    with Python's; test_rerank_e2e.py searches the demo with its reranker (``reranked_site``)."""
    return without_reranker(request.getfixturevalue("reranked_site"), tmp_path_factory.mktemp("fused-demo") / "html")


@pytest.fixture(scope="session")
def reranked_site(request) -> Path:
    """The built demo docs as published: the reranker reorders the model tier's results."""
    if client_missing():
        pytest.fail(client_missing())
    override = os.environ.get("SPHINX_RAG_E2E_SITE")
    if override:
        return Path(override)
    return request.getfixturevalue("demo_html")


@pytest.fixture(scope="session")
def alabaster_site(tmp_path_factory) -> Path:
    """tests/roots/test-searchbar: alabaster, keyword-only index, a page with markup in its text."""
    out = tmp_path_factory.mktemp("alabaster") / "html"
    src = tmp_path_factory.mktemp("alabaster-src")
    shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
    return build_site(src, out, "-d", str(out.parent / "dt"))


@pytest.fixture(scope="session")
def builder_site(tmp_path_factory):
    """builder_site(name) -> tests/roots/test-searchbar built with ``-b name`` (dirhtml:
    every page is a directory; singlehtml: one page), once per session for each."""
    built: dict[str, Path] = {}

    def build(builder: str) -> Path:
        if builder not in built:
            out = tmp_path_factory.mktemp(builder) / "html"
            src = tmp_path_factory.mktemp(f"{builder}-src")
            shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
            built[builder] = build_site(src, out, "-b", builder, "-d", str(out.parent / "dt"))
        return built[builder]

    return build


@pytest.fixture(scope="session")
def theme_site(tmp_path_factory):
    """theme_site(theme, *options) -> tests/roots/test-searchbar built with that html_theme
    (keyword-only index: a few seconds), once per session for each (theme, options)."""
    built: dict[tuple, Path] = {}

    def build(theme: str, *options: str) -> Path:
        key = (theme, *options)
        if key not in built:
            out = tmp_path_factory.mktemp(theme) / "html"
            src = tmp_path_factory.mktemp(f"{theme}-src")
            shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
            built[key] = build_site(src, out, "-d", str(out.parent / "dt"), "-D", f"html_theme={theme}", *options)
        return built[key]

    return build


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_options())
        yield browser
        browser.close()


#: Chromium's own diagnostics, not the page's: the Prompt API's availability() (Ask asks it
#: whether the browser's built-in model can answer, when no LLM server is set) warns this when
#: the on-device model service does not run, as in this test browser (--disable-component-update).
BROWSER_NOISE = {"Unable to create a text session because the service is not running."}


@dataclass
class PageLog:
    console: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """Console errors and warnings, and uncaught exceptions (but BROWSER_NOISE)."""
        return [f"{t}: {m}" for t, m in self.console
                if t in ("error", "warning") and m not in BROWSER_NOISE] + self.errors


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.set_default_timeout(60_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    """A page whose console messages (page and workers), page errors and requests (all
    origins, workers included) are recorded in page.log."""
    pg = context.new_page()
    log = PageLog()
    context.on("console", lambda m: log.console.append((m.type, m.text)))  # the worker's too
    pg.on("pageerror", lambda e: log.errors.append(str(e)))
    context.on("request", lambda r: log.requests.append(r.url))
    pg.log = log
    return pg


# -- federated search: three sites of different test roots, and sites that fail -----------------


@dataclass
class Federated:
    """The home site (tests/roots/test-searchbar) and the sites it federates, each served on a
    port of its own. ``urls``: name -> site root URL, as the home's conf.py names them."""
    home: Path
    urls: dict[str, str]
    serve_home: object  # serve_home(csp=None) -> StaticServer of the home site


def _damage_dir_shard(index: Path):
    """The directory shard keeps its name and holds other bytes: it no longer matches its hash."""
    manifest = json.loads((index / "manifest.json").read_text())
    stream = base64.b64encode(gzip.compress(b"{}", mtime=0)).decode()
    name = manifest["dir"].removesuffix(".js")
    (index / manifest["dir"]).write_text(f'sphinxRagShard("{name}","{stream}");\n')


@pytest.fixture(scope="session")
def federated(tmp_path_factory, serve) -> Federated:
    """Home: tests/roots/test-searchbar ("searchbar"). It federates tests/roots/test-api
    ("apidemo", searched from the first query) and tests/roots/test-llms ("widgets", off until
    the reader turns it on), both served with CORS; and, all off by default, "down" (a port
    nothing listens on), "badhash" (test-api whose directory shard does not match its hash),
    "format2" (test-api whose manifest says format 2) and "nocors" (test-widgets served
    without Access-Control-Allow-Origin)."""
    if client_missing():
        pytest.fail(client_missing())
    base = tmp_path_factory.mktemp("federated")

    def built(root: str) -> Path:
        src = base / f"{root}-src"
        shutil.copytree(ROOTS / root, src)
        return build_site(src, base / root / "html", "-d", str(base / root / "dt"))

    api, widgets = built("test-api"), built("test-llms")
    hostile = {}
    for name in ("badhash", "format2"):
        hostile[name] = base / name
        shutil.copytree(api, hostile[name])
    _damage_dir_shard(hostile["badhash"] / "_static" / "sphinx_rag" / "index")
    manifest = hostile["format2"] / "_static" / "sphinx_rag" / "index" / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "format_version": 2}))
    urls = {
        "apidemo": serve(api, cors=True).url,
        "widgets": serve(widgets, cors=True).url,
        "down": f"http://127.0.0.1:{free_port()}/",
        "badhash": serve(hostile["badhash"], cors=True).url,
        "format2": serve(hostile["format2"], cors=True).url,
        "nocors": serve(widgets).url,
    }
    src = base / "home-src"
    shutil.copytree(ROOTS / "test-searchbar", src)
    entries = {name: ({"url": url, "enabled": True} if name == "apidemo" else url) for name, url in urls.items()}
    with open(src / "conf.py", "a") as conf:
        conf.write(f"\nsphinx_rag_federation = {entries!r}\n")
    home = build_site(src, base / "home" / "html", "-d", str(base / "home" / "dt"))
    return Federated(home=home, urls=urls, serve_home=lambda csp=None: serve(home, csp=csp))


@pytest.fixture(scope="session")
def federated_semantic(tmp_path_factory, serve, demo_html) -> Federated:
    """Home: tests/roots/test-llms with embeddings (the model, no static encoder: too few
    chunks). It federates, all enabled, the demo ("mlkit": the same model), a copy of the
    demo's index whose manifest names another model ("othermodel": it has its own static
    encoder) and one that names another model and no encoder ("bare")."""
    if client_missing():
        pytest.fail(client_missing())
    base = tmp_path_factory.mktemp("federated-semantic")
    index = demo_html / "_static" / "sphinx_rag" / "index"
    manifest = json.loads((index / "manifest.json").read_text())
    copies = {}
    for name, edit in (("othermodel", {}), ("bare", {"encoder": None})):
        target = base / name / "_static" / "sphinx_rag" / "index"
        shutil.copytree(index, target, ignore=shutil.ignore_patterns("model-*"))  # never fetched by another site
        other = {**manifest, "model": {**manifest["model"], "model_id": "another/model"}, **edit}
        (target / "manifest.json").write_text(json.dumps(other))
        copies[name] = serve(base / name, cors=True).url
    urls = {"mlkit": serve(demo_html, cors=True).url, **copies}
    src = base / "home-src"
    shutil.copytree(ROOTS / "test-llms", src)
    with open(src / "conf.py", "a") as conf:
        conf.write("\nsphinx_rag_embeddings = True\nsphinx_rag_federation = "
                   f"{ {name: {'url': url, 'enabled': True} for name, url in urls.items()}!r}\n")
    home = build_site(src, base / "home" / "html", "-d", str(base / "home" / "dt"))
    return Federated(home=home, urls=urls, serve_home=lambda csp=None: serve(home, csp=csp))
