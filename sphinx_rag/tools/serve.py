"""``sphinx-rag serve DIR``: a built site on 127.0.0.1 with the headers its search needs.

``python -m http.server`` guesses content types from the system's tables (``.mjs`` and
``.wasm`` vary with the machine, and the onnxruntime module must come as JavaScript),
sends no ``Access-Control-Allow-Origin`` (another site's dialog cannot read this one's
index: federation cannot be tried locally) and no compression. This server sends:

* fixed content types (``TYPES``), UTF-8 for text;
* gzip for text, JSON, JavaScript and WebAssembly larger than ``GZIP_MIN`` bytes when the
  client accepts it (compressed once per file version, kept in memory up to
  ``GZIP_CACHE`` bytes);
* ``Cache-Control: no-cache`` (a rebuild shows at the next load; unchanged files answer
  304 by their Last-Modified);
* with ``cors``: ``Access-Control-Allow-Origin: *`` (and an answer to preflights), so that
  a page on another origin (port) may search this site (``sphinx_rag_federation``);
* with ``isolated``: ``Cross-Origin-Opener-Policy: same-origin`` and
  ``Cross-Origin-Embedder-Policy: require-corp`` (cross-origin isolation: onnxruntime-web
  may use threads), off by default since they block embedding resources of other origins
  that do not allow it.

It listens on 127.0.0.1 only: a preview, not a production server.
"""

from __future__ import annotations

import email.utils
import gzip
import http.server
import os
import sys
import threading
from functools import partial
from pathlib import Path

__all__ = ["TYPES", "GZIP_MIN", "QuietServer", "make_server", "serve", "site_dir"]

TYPES = {
    ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8", ".json": "application/json", ".map": "application/json",
    ".wasm": "application/wasm", ".md": "text/markdown; charset=utf-8", ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml", ".xml": "application/xml", ".inv": "application/octet-stream",
    ".onnx": "application/octet-stream", ".bin": "application/octet-stream", ".png": "image/png",
    ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".ico": "image/x-icon",
    ".webp": "image/webp", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf",
    ".eot": "application/vnd.ms-fontobject", ".pdf": "application/pdf", ".zip": "application/zip",
    ".ipynb": "application/x-ipynb+json", ".py": "text/plain; charset=utf-8", ".rst": "text/plain; charset=utf-8",
}
#: Content types worth compressing (an int8 model or a PNG is not).
COMPRESSIBLE = ("text/", "application/json", "application/wasm", "image/svg+xml", "application/xml",
                "application/x-ipynb+json")
GZIP_MIN = 1024  # bytes: a smaller file is sent as it is
GZIP_CACHE = 256 << 20  # bytes of compressed files kept in memory


def site_dir(given: str) -> Path:
    """The HTML directory to serve: ``given``, or its ``_build/html`` when ``given`` is a
    Sphinx source directory (it has conf.py). ValueError (one line) if neither."""
    path = Path(given)
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise ValueError(f"[sphinx-rag] {given} {what}: give the HTML output directory of sphinx-build "
                         "(e.g. docs/_build/html)")
    if (path / "conf.py").is_file() and (path / "_build" / "html").is_dir():
        return path / "_build" / "html"
    return path


class _Compressed:
    """Gzip bodies by (path, size, mtime), the oldest dropped past GZIP_CACHE bytes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items: dict[tuple, bytes] = {}
        self.size = 0

    def get(self, path: str, stat: os.stat_result) -> bytes:
        key = (path, stat.st_size, stat.st_mtime_ns)
        with self.lock:
            body = self.items.get(key)
        if body is not None:
            return body
        with open(path, "rb") as f:
            body = gzip.compress(f.read(), compresslevel=6, mtime=0)
        with self.lock:
            if key not in self.items:
                self.items[key] = body
                self.size += len(body)
            while self.size > GZIP_CACHE and self.items:
                self.size -= len(self.items.pop(next(iter(self.items))))
        return body


class Handler(http.server.SimpleHTTPRequestHandler):
    """SimpleHTTPRequestHandler with fixed types, gzip, no-cache, and optional CORS and
    cross-origin isolation (class attributes ``cors``, ``isolated``, ``compressed``)."""

    cors = False
    isolated = False
    compressed: _Compressed | None = None
    server_version = "sphinx-rag"
    protocol_version = "HTTP/1.1"  # keep-alive: a search fetches several shards
    extensions_map = {"": "application/octet-stream", **TYPES}

    def guess_type(self, path) -> str:
        return TYPES.get(os.path.splitext(str(path))[1].lower()) or super().guess_type(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        if self.cors:
            self.send_header("Access-Control-Allow-Origin", "*")
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "cross-origin" if self.cors else "same-origin")
        super().end_headers()

    def do_OPTIONS(self):  # noqa: N802 - http.server's naming
        """A CORS preflight (a fetch with headers of its own): allowed with ``cors``."""
        self.send_response(204 if self.cors else 405)
        if self.cors:
            self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", self.headers.get("Access-Control-Request-Headers", "*"))
            self.send_header("Access-Control-Max-Age", "600")
        else:
            self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_head(self):
        """A compressible file as gzip when the client accepts it; else as the base class does."""
        path = self.translate_path(self.path)
        if os.path.isdir(path) and self.path.partition("?")[0].partition("#")[0].endswith("/"):
            path = os.path.join(path, "index.html")  # what the base class sends for a directory
        ctype = self.guess_type(path)
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if (not accepts or self.compressed is None or not os.path.isfile(path)
                or not ctype.startswith(COMPRESSIBLE) or "Range" in self.headers):
            return super().send_head()
        stat = os.stat(path)
        if stat.st_size < GZIP_MIN:
            return super().send_head()
        since = self.headers.get("If-Modified-Since")
        if since and "If-None-Match" not in self.headers:
            try:
                if int(stat.st_mtime) <= email.utils.parsedate_to_datetime(since).timestamp():
                    self.send_response(304)
                    self.end_headers()
                    return None
            except (TypeError, ValueError, OverflowError, IndexError):
                pass
        try:
            body = self.compressed.get(path, stat)
        except OSError:
            self.send_error(404, "File not found")
            return None
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        self.end_headers()
        return _Body(body)

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        sys.stderr.write(f"{self.address_string()} - {format % args}\n")


class _Body:
    """What send_head returns for copyfile: a body already in memory."""

    def __init__(self, data: bytes):
        self.data = data

    def read(self, n: int = -1) -> bytes:
        data, self.data = (self.data, b"") if n < 0 else (self.data[:n], self.data[n:])
        return data

    def close(self):
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that went away (a closed tab, a cancelled fetch) is not an error to print
        (http.server prints a traceback for it)."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def make_server(directory: Path, port: int = 8000, *, cors: bool = False, isolated: bool = False) -> QuietServer:
    """The server, bound on 127.0.0.1:``port`` (0: any free port), not yet serving."""
    handler = type("SiteHandler", (Handler,), {"cors": cors, "isolated": isolated, "compressed": _Compressed()})
    return QuietServer(("127.0.0.1", port), partial(handler, directory=str(directory)))


def serve(given: str, port: int = 8000, *, cors: bool = False, isolated: bool = False) -> int:
    """Serve until interrupted; a one-line error (exit status 2) when it cannot start."""
    try:
        directory = site_dir(given)
        server = make_server(directory, port, cors=cors, isolated=isolated)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"[sphinx-rag] cannot listen on 127.0.0.1:{port}: {exc.strerror or exc} "
              "(another server on that port? give --port N, or --port 0 for any free port)", file=sys.stderr)
        return 2
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    if not (directory / "_static" / "sphinx_rag" / "index" / "manifest.json").is_file():
        print(f"[sphinx-rag] {directory} has no sphinx-rag index: its pages are served, their search will not work "
              "(build it with \"sphinx_rag\" in extensions)", file=sys.stderr)
    notes = [n for n, on in (("CORS: any origin may read it", cors), ("cross-origin isolated", isolated)) if on]
    print(f"Serving {directory} at {url}" + (f" ({'; '.join(notes)})" if notes else "") + "  (Ctrl+C stops)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
