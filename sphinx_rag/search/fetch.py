"""Remote reads, bounded: every request Python makes to a site (a published index, a
warm start's site, a federated site, an MCP server's sites) is one ``fetch`` (or
``download``, to a file). js/src/worker/loader.js ``guardedFetch`` is the browser's.

Three limits (a hostile or broken site costs one error line, never a crash, a full disk
or a hung caller):

- redirects: followed only within the request's origin (scheme, host and port), and from
  ``http://host`` to ``https://host`` at the default ports (the same host, now over TLS);
  any other is refused, naming where it went;
- size: ``max_bytes`` of body after any Content-Encoding is undone (gzip and deflate;
  others refused), whatever Content-Length says; a reader sizes it from the manifest
  (``checks.payload_limits``), the manifest itself ``MAX_MANIFEST_BYTES``;
- time: ``timeout`` for each wait and a total ``deadline`` (default: ``timeout`` after the
  start), at which a watchdog shuts the connection, even while headers trickle in. A
  reader's calls get ``CALL_TIMEOUT`` seconds each in all (``remote.RemoteIndexReader.begin_call``).
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import os
import socket
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zlib
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

from .format import ASSET_DIR, IndexDamaged, IndexMissing

__all__ = ["RemoteError", "Fetched", "fetch", "fetch_response", "download", "index_url", "is_url", "origin_of",
           "may_redirect", "MAX_MANIFEST_BYTES", "MAX_SHARD_BYTES", "TIMEOUT", "CALL_TIMEOUT", "QUERY_BYTES",
           "MAX_REDIRECTS"]

MAX_MANIFEST_BYTES = 4 << 20  # a 200k-chunk site's manifest is about 20 KB
MAX_SHARD_BYTES = 256 << 20  # the largest file of an index is the model (23 MB for all-MiniLM-L6-v2)
TIMEOUT = 10.0  # seconds a request waits at a time (connecting, each read)
CALL_TIMEOUT = 30.0  # seconds one call on a site (a search, a page) may take in all: every request in it
QUERY_BYTES = 64 << 20  # the most shard payload one call may decode (a 200k-chunk site's query: ~10 MB)
MAX_REDIRECTS = 5
USER_AGENT = "sphinx-rag"
_DEFAULT_PORTS = {"http": 80, "https": 443}


class RemoteError(IndexMissing):
    """A remote index that cannot be reached or read: one line naming the URL and the cause.
    ``status``: the HTTP status, if the site answered with one; ``slow``: it did not answer
    (or not completely) in the time allowed."""

    status: int | None = None
    slow: bool = False


def is_url(text: str) -> bool:
    return str(text).startswith(("http://", "https://"))


def index_url(site: str) -> str:
    """The URL of a site's index directory (ending in /) from its root URL, the URL of a
    page of it (``.../index.html``), the index directory itself or its manifest.json."""
    url = site.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteError(f"[sphinx-rag] {site!r} is not an http(s) URL")
    url = url.split("#", 1)[0].split("?", 1)[0]
    if url.endswith("/manifest.json"):
        return url[: -len("manifest.json")]
    asset = ASSET_DIR.as_posix() + "/"
    if url.rstrip("/").endswith(ASSET_DIR.as_posix()):
        return url.rstrip("/") + "/"
    if url.endswith(".html"):
        url = url.rsplit("/", 1)[0] + "/"
    return urljoin(url if url.endswith("/") else url + "/", asset)


def origin_of(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme, 0)


def may_redirect(old: str, new: str) -> bool:
    """A redirect ``fetch`` follows: to the same origin, or http -> https on the same host at
    the default ports (TLS added to the same host; never https -> http, never another port)."""
    a, b = origin_of(old), origin_of(new)
    return a == b or (a == ("http", a[1], 80) and b == ("https", a[1], 443))


def _origin_text(url: str) -> str:
    scheme, host, port = origin_of(url)
    return f"{scheme}://{host}:{port}"


class _Watch:
    """The deadline of one request: a timer shuts its socket down when it passes, so a
    read that waits (for a header or a body byte) ends then."""

    def __init__(self, deadline: float):
        self.fired = False
        self._sock = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def attach(self, sock):
        with self._lock:
            self._sock = sock
            fired = self.fired
        if fired:
            self._shut(sock)
        return sock

    def wait_at_most(self, seconds: float):
        with self._lock:
            sock = self._sock
        if sock is not None:
            try:
                sock.settimeout(max(seconds, 0.01))
            except OSError:
                pass

    def _fire(self):
        with self._lock:
            self.fired = True
            sock = self._sock
        if sock is not None:
            self._shut(sock)

    @staticmethod
    def _shut(sock):
        try:
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's: an SSL socket's is not thread-safe
        except (OSError, TypeError):
            pass

    def cancel(self):
        self._timer.cancel()


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args, watch: _Watch, **kwargs):
        super().__init__(*args, **kwargs)
        self._watch = watch

    def connect(self):
        super().connect()
        self._watch.attach(self.sock)


class _HTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args, watch: _Watch, **kwargs):
        super().__init__(*args, **kwargs)
        self._watch = watch

    def connect(self):  # http.client's, with the handshake watched too
        http.client.HTTPConnection.connect(self)
        self._watch.attach(self.sock)
        server_hostname = self._tunnel_host or self.host
        self.sock = self._context.wrap_socket(self.sock, server_hostname=server_hostname,
                                              do_handshake_on_connect=False)
        self._watch.attach(self.sock)
        self.sock.do_handshake()


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch):
        super().__init__()
        self._watch = watch

    def http_open(self, req):
        return self.do_open(functools.partial(_HTTPConnection, watch=self._watch), req)


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()  # loading the CAs takes ms: once a process


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watch):
        super().__init__(context=_tls())
        self._watch = watch

    def https_open(self, req):
        return self.do_open(functools.partial(_HTTPSConnection, watch=self._watch), req, context=self._context)


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the origin only (``may_redirect``): a docs site that moved
    elsewhere is reported, not followed."""

    max_redirections = MAX_REDIRECTS

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        newurl = urljoin(req.full_url, newurl)
        if urlsplit(newurl).scheme not in ("http", "https") or not may_redirect(req.full_url, newurl):
            fp.close()
            raise RemoteError(f"[sphinx-rag] {req.full_url} redirects to another origin "
                              f"({_origin_text(newurl) if is_url(newurl) else newurl[:80]}): refused; give the "
                              "site's own URL")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class Fetched(NamedTuple):
    data: bytes
    headers: object  # the response's headers (email.message.Message)
    url: str  # after redirects


def fetch(url: str, *, max_bytes: int = MAX_SHARD_BYTES, timeout: float = TIMEOUT,
          deadline: float | None = None, headers: dict | None = None) -> bytes:
    """GET ``url``: its body, at most ``max_bytes`` after decoding; RemoteError (one line) on
    any failure, a 404 included (``.status``), too slow included (``.slow``).

    ``timeout`` bounds each wait (connecting, each read); ``deadline`` (a ``time.monotonic()``
    value; None: ``timeout`` from now) bounds the whole request, headers included. Redirects:
    ``may_redirect``. A body shorter than its Content-Length is a failure, not a file.
    """
    return fetch_response(url, max_bytes=max_bytes, timeout=timeout, deadline=deadline, headers=headers).data


def fetch_response(url: str, *, max_bytes: int = MAX_SHARD_BYTES, timeout: float = TIMEOUT,
                   deadline: float | None = None, headers: dict | None = None) -> Fetched:
    """``fetch``, with the response's headers and final URL (``headers``: more request
    headers, e.g. Origin)."""
    parts: list[bytes] = []
    final, response_headers = _transfer(url, max_bytes, timeout, deadline, headers, parts.append)
    return Fetched(b"".join(parts), response_headers, final)


def download(url: str, path: Path, *, size: int, sha256: str, timeout: float = TIMEOUT,
             deadline: float | None = None) -> None:
    """Fetch ``url`` into ``path`` (streamed, never whole in memory), kept only if it is
    ``size`` bytes with that sha256 (IndexDamaged naming the URL otherwise; RemoteError
    when it cannot be fetched)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as f:
            def sink(block: bytes):
                digest.update(block)
                f.write(block)

            _transfer(url, size, timeout, deadline, None, sink)
            written = f.tell()
        if written != size or digest.hexdigest() != sha256:
            raise IndexDamaged(f"[sphinx-rag] {url} does not match its size and sha256 in the manifest: refused")
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _transfer(url: str, max_bytes: int, timeout: float, deadline: float | None, headers: dict | None,
              sink) -> tuple[str, object]:
    """The guarded GET behind ``fetch`` and ``download``: the decoded body in blocks to ``sink``;
    returns (final URL, response headers)."""
    start = time.monotonic()
    deadline = start + timeout if deadline is None else deadline
    if deadline - start <= 0:
        raise _slow(url, "no time was left for it")
    watch = _Watch(deadline)
    opener = urllib.request.build_opener(_HTTPHandler(watch), _HTTPSHandler(watch), _SameOriginRedirects())
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity",
                                                   **(headers or {})})
    try:
        with opener.open(request, timeout=max(min(timeout, deadline - time.monotonic()), 0.01)) as response:
            return response.geturl(), _body(url, response, max_bytes, timeout, deadline, watch, sink)
    except RemoteError:
        raise
    except urllib.error.HTTPError as exc:
        exc.close()
        if watch.fired:
            raise _slow(url, f"not complete within the {deadline - start:.3g} s allowed") from None
        error = RemoteError(f"[sphinx-rag] {url}: HTTP {exc.code} {exc.reason}")
        error.status = exc.code
        raise error from None
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        if watch.fired:
            raise _slow(url, f"not complete within the {deadline - start:.3g} s allowed") from None
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
            raise _slow(url, f"no answer within {min(timeout, deadline - start):.3g} s") from None
        raise RemoteError(f"[sphinx-rag] cannot fetch {url} ({' '.join(str(reason).split())[:200]})") from None
    finally:
        watch.cancel()


def _body(url, response, max_bytes: int, timeout: float, deadline: float, watch: _Watch, sink):
    """Read the body of ``response`` into ``sink``, decoded and capped; its headers."""
    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        decoder = zlib.decompressobj(32 + zlib.MAX_WBITS)  # a gzip or zlib header
    elif encoding == "identity":
        decoder = None
    else:
        raise RemoteError(f"[sphinx-rag] cannot fetch {url} (it is sent with Content-Encoding {encoding[:40]!r})")
    declared = response.headers.get("Content-Length")
    declared = int(declared) if declared and declared.strip().isdigit() else None
    wire_cap = max_bytes if decoder is None else max_bytes + max_bytes // 64 + 4096
    if declared is not None and declared > wire_cap:
        raise _too_large(url, declared, max_bytes)
    wire = size = 0

    def out(block: bytes):
        nonlocal size
        size += len(block)
        if size > max_bytes:
            raise _too_large(url, size, max_bytes)
        if block:
            sink(block)

    while True:
        left = deadline - time.monotonic()
        if left <= 0 or watch.fired:
            raise _slow(url, "not complete within the time allowed")
        watch.wait_at_most(min(timeout, left))
        block = response.read1(1 << 16)
        if not block:
            break
        wire += len(block)
        if wire > wire_cap:
            raise _too_large(url, wire, max_bytes)
        if decoder is None:
            out(block)
            continue
        try:
            out(decoder.decompress(block, max_bytes + 1 - size))
            while decoder.unconsumed_tail:
                out(decoder.decompress(decoder.unconsumed_tail, max_bytes + 1 - size))
        except zlib.error as exc:
            raise RemoteError(f"[sphinx-rag] cannot fetch {url} (its {encoding} body is damaged: {exc})") from None
    if watch.fired:
        raise _slow(url, "not complete within the time allowed")
    if declared is not None and wire != declared:
        raise RemoteError(f"[sphinx-rag] cannot fetch {url} (the connection closed after {wire:,} of "
                          f"{declared:,} bytes)")
    if decoder is not None and not decoder.eof:
        raise RemoteError(f"[sphinx-rag] cannot fetch {url} (its {encoding} body is truncated)")
    return response.headers


def _slow(url: str, why: str) -> RemoteError:
    error = RemoteError(f"[sphinx-rag] cannot fetch {url} (too slow: {why})")
    error.slow = True
    return error


def _too_large(url: str, size: int, limit: int) -> RemoteError:
    return RemoteError(f"[sphinx-rag] {url} is too large ({size:,} bytes, the limit is {limit:,}): refused")
