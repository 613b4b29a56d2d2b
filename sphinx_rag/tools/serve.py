"""``sphinx-rag serve DIR``: a built site on 127.0.0.1 with the headers its search needs.

``python -m http.server`` guesses content types from the system's tables (``.mjs`` and
``.wasm`` vary with the machine, and the onnxruntime module must come as JavaScript),
sends no ``Access-Control-Allow-Origin`` (another site's dialog cannot read this one's
index: federation cannot be tried locally) and no compression. This server sends:

* fixed content types (``TYPES``), UTF-8 for text, and ``X-Content-Type-Options: nosniff``;
* gzip for text, JSON, JavaScript and WebAssembly of ``GZIP_MIN`` bytes or more when the
  client accepts it, compressed as it is sent (chunked: the first byte at once, a few
  hundred KB of memory per request whatever the file's size);
* ``Cache-Control: no-cache`` (a rebuild shows at the next load; unchanged files answer
  304 by their Last-Modified);
* with ``cors``: ``Access-Control-Allow-Origin: *`` (and an answer to preflights), so that
  a page on another origin (port) may search this site (``sphinx_rag_federation``);
* with ``isolated``: ``Cross-Origin-Opener-Policy: same-origin`` and
  ``Cross-Origin-Embedder-Policy: require-corp`` (cross-origin isolation: onnxruntime-web
  may use threads), off by default since they block embedding resources of other origins
  that do not allow it.

It is the server our docs tell readers to run, so it holds what a browser on the same
machine may throw at it (``tests/test_serve.py``):

* only files whose real path (symlinks followed) is inside the folder (404 otherwise);
* bound to a loopback address, only requests whose ``Host`` names it (400 otherwise): a
  page of another site whose name was made to resolve to 127.0.0.1 (DNS rebinding)
  cannot read the folder through the reader's browser;
* no folder listings unless ``list_dirs``;
* a request line or header that does not arrive whole within ``timeout`` seconds closes
  its connection, and at most ``MAX_CONNECTIONS`` connections have a thread (``_Slots``);
* a file that shrinks while it is sent ends its connection (the client sees a short body
  rather than waiting for bytes that will never come);
* a path with a control character (``%00``) or bytes that are not UTF-8: 400.

The standard library, not a package: the static-file servers on PyPI either need an
ASGI/WSGI server beside them (starlette and uvicorn, whitenoise) or bring their own
caching and listing rules, and a local preview needs none of that.
"""

from __future__ import annotations

import contextlib
import email.utils
import errno
import http.server
import ipaddress
import io
import os
import socket
import sys
import threading
import time
import unicodedata
import urllib.parse
import zlib
from functools import partial
from pathlib import Path

__all__ = ["TYPES", "GZIP_MIN", "MAX_CONNECTIONS", "READ_TIMEOUT", "QuietServer", "SiteServer", "loopback_hosts",
           "make_server", "serve", "site_dir", "url_path"]

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
CHUNK = 256 << 10  # bytes read from a file at a time when compressing it
READ_TIMEOUT = 15.0  # seconds a request may take to arrive (and the longest a write may stall)
MAX_CONNECTIONS = 32  # connections served at once, one thread each (a browser opens 6 per site)
IDLE_GRACE = 0.25  # seconds a connection waits for its request before a new one may take its thread
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


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


def loopback_hosts(address: str, port: int) -> frozenset[str] | None:
    """The ``Host`` values a server bound to ``address``:``port`` answers when that address
    is a loopback one: the loopback names, with and without the port, lowercase. None (any
    Host) for another address: a server on 0.0.0.0 is reached by names it cannot know."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    if not ip.is_loopback:
        return None
    names = {*LOOPBACK_NAMES, str(ip) if ip.version == 4 else f"[{ip.compressed}]"}
    return frozenset(names | {f"{name}:{port}" for name in names})


def url_path(target: str) -> str | None:
    """The decoded path of a request target; None for one to refuse with a 400: not a path
    (an absolute URL, ``*``), percent-escapes that are not UTF-8, or a control character
    once decoded (``%00`` reached ``os.stat`` as a ValueError: a traceback, no answer)."""
    if not target.startswith("/"):
        return None
    try:
        path = urllib.parse.unquote(target.split("?", 1)[0].split("#", 1)[0], errors="strict")
    except UnicodeDecodeError:
        return None
    if any(unicodedata.category(c) == "Cc" for c in path):
        return None
    return path


def accepts_gzip(header: str) -> bool:
    """Whether an Accept-Encoding value allows gzip (``gzip`` or ``*``, not with q=0)."""
    for item in header.lower().split(","):
        name, _, params = item.partition(";")
        if name.strip() in ("gzip", "x-gzip", "*"):
            q = params.strip()
            try:
                return not q.startswith("q=") or float(q[2:]) > 0
            except ValueError:
                return False
    return False


def _printable(text: str) -> str:
    """``text`` with control characters as ``\\xNN``: a request line is the client's text,
    and the log goes to a terminal (escape sequences would drive it)."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


class _RequestReader(io.RawIOBase):
    """The connection's bytes, each request (its line and headers) due within ``timeout``
    seconds of the server waiting for it: a client that sends nothing, half a request, or
    a byte every few seconds cannot hold a thread for ever. A connection that stays idle
    ends quietly (a browser keeps several open); one that stalls mid-request raises
    TimeoutError (logged by http.server)."""

    def __init__(self, sock: socket.socket, timeout: float):
        self.sock, self.timeout = sock, timeout
        self.deadline: float | None = None
        self.received = 0

    def readable(self) -> bool:
        return True

    def start_request(self) -> None:
        self.deadline, self.received = time.monotonic() + self.timeout, 0

    def end_request(self) -> None:
        """Headers read: writes get the whole timeout again."""
        self.deadline = None
        self.sock.settimeout(self.timeout)

    def readinto(self, buffer) -> int:
        if self.deadline is not None:
            self.sock.settimeout(max(self.deadline - time.monotonic(), 0.001))
        try:
            n = self.sock.recv_into(buffer)
        except TimeoutError:
            if self.received == 0:
                return 0  # idle: the end of the connection, as if the client had closed it
            raise
        if n == 0 and self.received:
            raise ConnectionAbortedError("the connection ended mid-request")
        self.received += n
        return n


class _Slots:
    """At most ``size`` connections at once, one thread each. A new connection that finds
    them all taken closes the one that has waited longest for its next request (idle, or
    half sent; for at least IDLE_GRACE seconds), else waits for one to end: 200 idle
    connections cost no more than ``size`` threads and do not keep a new client waiting.
    Closing a kept-alive connection between requests is allowed by HTTP (clients retry)."""

    def __init__(self, size: int):
        self.free = threading.Semaphore(size)
        self.lock = threading.Lock()
        self.waiting: dict[socket.socket, float] = {}  # connection -> since when it waits

    def take(self) -> None:
        """A slot for a new connection: a free one, else one freed by closing a waiting one
        (its thread returns the slot within milliseconds), else wait for one."""
        while not self.free.acquire(blocking=False):
            self.close_longest_waiting()
            if self.free.acquire(timeout=0.05):
                return

    def give_back(self, sock: socket.socket) -> None:
        self.answering(sock)
        self.free.release()

    def waiting_for_request(self, sock: socket.socket) -> None:
        with self.lock:
            self.waiting[sock] = time.monotonic()

    def answering(self, sock: socket.socket) -> None:
        with self.lock:
            self.waiting.pop(sock, None)

    def close_longest_waiting(self) -> None:
        """Shut the connection down (its thread sees the end and returns its slot); never
        close it here: its thread owns the file descriptor."""
        with self.lock:
            if not self.waiting:
                return
            sock, since = min(self.waiting.items(), key=lambda item: item[1])
            if time.monotonic() - since < IDLE_GRACE:
                return
            del self.waiting[sock]
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


class _FileBody:
    """The ``size`` bytes of an open file, sent with ``socket.sendfile``. Fewer (the file
    shrank while it was sent) end the connection: on a kept-alive one the client would
    wait for the rest for ever. More (it grew) are not sent."""

    def __init__(self, file, size: int):
        self.file, self.size = file, size

    def close(self) -> None:
        self.file.close()

    def send(self, handler: Handler) -> None:
        sent = handler.connection.sendfile(self.file, 0, self.size) if self.size else 0
        if sent < self.size:
            handler.close_connection = True


class _GzipBody(_FileBody):
    """The file gzipped as it is read (chunked transfer encoding: the size is not known
    before the end), CHUNK bytes at a time: compressing a 64 MB file whole took 64 MB and
    more per request and sent nothing until done. A file that shrinks ends the connection
    without the last chunk, so the client knows the body is short."""

    def send(self, handler: Handler) -> None:
        compressor = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: a gzip header and trailer
        left = self.size
        while left:
            data = self.file.read(min(CHUNK, left))
            if not data:
                handler.close_connection = True
                return
            left -= len(data)
            self._chunk(handler, compressor.compress(data))
        self._chunk(handler, compressor.flush())
        handler.wfile.write(b"0\r\n\r\n")

    @staticmethod
    def _chunk(handler: Handler, data: bytes) -> None:
        if data:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


class _BytesBody:
    """A body already in memory (a folder's listing)."""

    def __init__(self, data: bytes):
        self.data = data

    def close(self) -> None:
        pass

    def send(self, handler: Handler) -> None:
        handler.wfile.write(self.data)


class Handler(http.server.SimpleHTTPRequestHandler):
    """SimpleHTTPRequestHandler with fixed types, streamed gzip, no-cache, optional CORS,
    cross-origin isolation and listings, and the checks of the module's docstring. Class
    attributes (set per server by ``make_server``): ``root`` (the folder's real path),
    ``hosts`` (``loopback_hosts``), ``cors``, ``isolated``, ``list_dirs``, ``timeout``."""

    root = ""
    hosts: frozenset[str] | None = None
    cors = False
    isolated = False
    list_dirs = False
    timeout = READ_TIMEOUT
    server_version = "sphinx-rag"
    protocol_version = "HTTP/1.1"  # keep-alive: a search fetches several shards
    extensions_map = {"": "application/octet-stream", **TYPES}

    # -- connections and requests ---------------------------------------------------------

    def setup(self):
        """The base class's streams, the reader replaced by one with a deadline per request."""
        super().setup()
        self.rfile.close()  # else the socket's file descriptor outlives the connection
        self.reader = _RequestReader(self.connection, self.timeout)
        self.rfile = io.BufferedReader(self.reader)

    def handle(self):
        """Requests one after another on a kept-alive connection; between them the
        connection may lose its thread to a new one (``_Slots``)."""
        self.close_connection = True
        while True:
            self.reader.start_request()
            self.server.slots.waiting_for_request(self.connection)
            self.handle_one_request()
            if self.close_connection:
                return

    def parse_request(self) -> bool:
        """http.server's parsing, then this server's refusals: a Host that does not name
        it, a target that is not a clean path (400, and the connection closes)."""
        ok = super().parse_request()
        self.server.slots.answering(self.connection)
        self.reader.end_request()
        if not ok:
            return False
        problem = self.host_problem() or (None if url_path(self.path) is not None else
                                          "The path holds a control character, is not UTF-8 or is not a path.")
        if problem:
            self.send_error(400, explain=problem)
            return False
        return True

    def host_problem(self) -> str | None:
        """Why the Host header is refused, if it is (only on a loopback bind: ``hosts``)."""
        if self.hosts is None:
            return None
        values = self.headers.get_all("Host") or []
        if not values:
            return None if self.request_version in ("HTTP/0.9", "HTTP/1.0") else "An HTTP/1.1 request needs a Host."
        if len(values) > 1 or values[0].strip().lower() not in self.hosts:
            return "This server answers only the names of this machine (localhost, 127.0.0.1, [::1])."
        return None

    # -- answers ------------------------------------------------------------------------------

    def do_GET(self):  # noqa: N802 - http.server's naming
        body = self.send_head()
        if body is not None:
            with contextlib.closing(body):
                body.send(self)

    def do_HEAD(self):  # noqa: N802 - http.server's naming
        body = self.send_head()
        if body is not None:
            body.close()

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
        """The headers of what the path names (a file, a folder's index.html or, with
        ``list_dirs``, its listing), and its body to send; None when there is none (an
        error, a redirect, a 304)."""
        target = self.inside(self.path)
        if target is not None and os.path.isdir(target):
            return self.send_folder(target)
        if target is None or url_path(self.path).endswith("/"):
            self.send_error(404, "File not found")
            return None
        return self.send_file(target)

    def send_folder(self, folder: str):
        """A folder's index.html (or index.htm) at the folder's URL with its slash; with
        ``list_dirs``, its listing when it has none; else 404, as for a missing file."""
        index = next((p for p in map(self.inside, self._index_urls()) if p and os.path.isfile(p)), None)
        if index is None and not self.list_dirs:
            self.send_error(404, "File not found")
            return None
        if not url_path(self.path).endswith("/"):
            self.redirect_to_folder()
            return None
        if index is not None:
            return self.send_file(index)
        listing = self.list_directory(folder)
        return _BytesBody(listing.read()) if listing else None

    def inside(self, url: str) -> str | None:
        """The real path (symlinks followed) of what ``url`` names, if it exists and is
        inside the served folder: a symlink to a file or folder elsewhere serves nothing."""
        real = os.path.realpath(self.translate_path(url))
        if real != self.root and not real.startswith(self.root + os.sep):
            return None
        return real if os.path.exists(real) else None

    def _index_urls(self) -> list[str]:
        base = self.path.split("?", 1)[0].split("#", 1)[0].rstrip("/")
        return [f"{base}/index.html", f"{base}/index.htm"]

    def redirect_to_folder(self) -> None:
        """301 to the folder's URL with its slash (relative links in its page need it);
        one leading slash only: ``//host/`` would send the browser to another site."""
        path, mark, query = self.path.split("#", 1)[0].partition("?")
        self.send_response(301)
        self.send_header("Location", "/" + path.lstrip("/") + "/" + mark + query)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def send_file(self, path: str):
        """A file's headers, and its body: gzipped as it is sent when that pays and the
        client takes it (chunked needs HTTP/1.1), else as it is with its length."""
        try:
            file = open(path, "rb")  # closed by the body, once sent
        except OSError:
            self.send_error(404, "File not found")
            return None
        stat = os.fstat(file.fileno())
        if self.not_modified(stat):
            file.close()
            self.send_response(304)
            self.end_headers()
            return None
        ctype = self.guess_type(path)
        compressible = ctype.startswith(COMPRESSIBLE) and stat.st_size >= GZIP_MIN
        gzipped = (compressible and self.request_version not in ("HTTP/0.9", "HTTP/1.0")
                   and accepts_gzip(self.headers.get("Accept-Encoding", "")))
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        if compressible:
            self.send_header("Vary", "Accept-Encoding")
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(stat.st_size))
        self.end_headers()
        return (_GzipBody if gzipped else _FileBody)(file, stat.st_size)

    def not_modified(self, stat: os.stat_result) -> bool:
        """If-Modified-Since at or after the file's time (and no If-None-Match), as http.server."""
        since = self.headers.get("If-Modified-Since")
        if not since or "If-None-Match" in self.headers:
            return False
        try:
            return int(stat.st_mtime) <= email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError, OverflowError, IndexError):
            return False

    def guess_type(self, path) -> str:
        return TYPES.get(os.path.splitext(str(path))[1].lower()) or super().guess_type(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.cors:
            self.send_header("Access-Control-Allow-Origin", "*")
        if self.isolated:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "cross-origin" if self.cors else "same-origin")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        sys.stderr.write(f"{self.address_string()} - {_printable(format % args)}\n")


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """A client that went away (a closed tab, a cancelled fetch) is not an error to print
        (http.server prints a traceback for it)."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class SiteServer(QuietServer):
    """QuietServer on IPv4 or IPv6, one thread per connection up to MAX_CONNECTIONS
    (``_Slots``), and a listen backlog that holds a burst of connections."""

    request_queue_size = 256

    def __init__(self, address: tuple[str, int], handler, family: int = socket.AF_INET):
        self.address_family = family
        self.slots = _Slots(MAX_CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        self.slots.take()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.slots.give_back(request)
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.give_back(request)


def _bind_address(host: str, port: int) -> tuple[int, tuple[str, int]]:
    """The address family and (address, port) to bind for ``host``, a name or an address;
    IPv4 first (``localhost`` may also resolve to ::1; browsers try 127.0.0.1)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, address = min(infos, key=lambda info: info[0] != socket.AF_INET)
    return family, address[:2]


def make_server(directory: Path, port: int = 8000, *, host: str = "127.0.0.1", cors: bool = False,
                isolated: bool = False, list_dirs: bool = False, timeout: float = READ_TIMEOUT) -> SiteServer:
    """The server, bound on ``host``:``port`` (0: any free port), not yet serving."""
    family, address = _bind_address(host, port)
    attrs = {"root": os.path.realpath(directory), "cors": cors, "isolated": isolated, "list_dirs": list_dirs,
             "timeout": timeout}
    handler = type("SiteHandler", (Handler,), attrs)
    server = SiteServer(address, partial(handler, directory=str(directory)), family)
    handler.hosts = loopback_hosts(*server.server_address[:2])
    return server


def _url(server: SiteServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(given: str, port: int = 8000, *, host: str = "127.0.0.1", cors: bool = False, isolated: bool = False,
          list_dirs: bool = False, timeout: float = READ_TIMEOUT) -> int:
    """Serve until interrupted; a one-line error (exit status 2) when it cannot start."""
    try:
        directory = site_dir(given)
        server = make_server(directory, port, host=host, cors=cors, isolated=isolated, list_dirs=list_dirs,
                             timeout=timeout)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except OSError as exc:
        hint = ("another server on that port? give --port N, or --port 0 for any free port"
                if exc.errno == errno.EADDRINUSE else "give --host an address of this machine, e.g. 127.0.0.1")
        print(f"[sphinx-rag] cannot listen on {host}:{port}: {exc.strerror or exc} ({hint})", file=sys.stderr)
        return 2
    if not (directory / "_static" / "sphinx_rag" / "index" / "manifest.json").is_file():
        print(f"[sphinx-rag] {directory} has no sphinx-rag index: its pages are served, their search will not work "
              "(build it with \"sphinx_rag\" in extensions)", file=sys.stderr)
    notes = [n for n, on in (("CORS: any origin may read it", cors), ("cross-origin isolated", isolated),
                             ("folders listed", list_dirs),
                             ("not a loopback address: other machines may read it",
                              loopback_hosts(*server.server_address[:2]) is None)) if on]
    print(f"Serving {directory} at {_url(server)}" + (f" ({'; '.join(notes)})" if notes else "") + "  (Ctrl+C stops)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
