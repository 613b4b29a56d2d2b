"""A published sphinx-rag index, read over HTTP: the manifest, then only the shards a query needs.

Every shard name carries the hash of its content (``shards.py``), so a shard fetched
once is verified by that hash and kept in a disk cache under its name: a second session
reads it from disk, and a site that has gone offline still answers from what was
fetched before (its last manifest is kept too). Nothing unverified is ever cached.

Users: ``sphinx-rag search URL`` and the MCP server (``Searcher`` over a
``RemoteIndexReader``), the federation check of a build (``federation.check_site``), and
the warm start of a build (``warm_start.py``), which reads the deployed index of the
previous version of the docs.

Every remote read in Python is one ``fetch`` (or ``download``, to a file), with three limits
(a hostile or broken site costs one error line, never a crash, a full disk or a hung caller):

- redirects: followed only within the request's origin (scheme, host and port), and from
  ``http://host`` to ``https://host`` at the default ports (the same host, now over TLS);
  any other is refused, naming where it went;
- size: ``max_bytes`` of body after any Content-Encoding is undone (gzip and deflate;
  others refused), whatever Content-Length says; a reader sizes it from the manifest
  (``index_checks.payload_limits``), the manifest itself ``MAX_MANIFEST_BYTES``;
- time: ``timeout`` for each wait and a total ``deadline`` (default: ``timeout`` after the
  start), at which a watchdog shuts the connection, even while headers trickle in. A
  reader's calls get ``CALL_TIMEOUT`` seconds each in all (``RemoteIndexReader.begin_call``).

The index's records are checked before use (``index_checks.py``).
"""

from __future__ import annotations

import functools
import hashlib
import http.client
import json
import os
import re
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
from urllib.parse import quote, urljoin, urlsplit

from .assets import ASSET_DIR, MODEL_FILES, IndexDamaged, IndexMissing, IndexReader

__all__ = ["RemoteError", "RemoteIndexReader", "Fetched", "open_index", "fetch", "fetch_response", "download",
           "index_url", "is_url", "origin_of", "may_redirect", "default_cache_dir", "MAX_MANIFEST_BYTES",
           "MAX_SHARD_BYTES", "TIMEOUT", "CALL_TIMEOUT", "QUERY_BYTES"]

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


def open_index(site: str | Path, **options) -> IndexReader:
    """The index of a local HTML directory, or of a published site given by its URL."""
    return RemoteIndexReader(str(site), **options) if is_url(str(site)) else IndexReader(Path(site))


def default_cache_dir() -> Path:
    """Where fetched shards are kept: $SPHINX_RAG_CACHE/remote, else ~/.cache/sphinx-rag/remote."""
    base = os.environ.get("SPHINX_RAG_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "sphinx-rag")
    return Path(base) / "remote"


def _store(path: Path, data: bytes):
    """Write a verified file into the cache (temp file, rename: never a partial file)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full cache only costs a fetch next time


def _sha256_file(path: Path) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


class RemoteIndexReader(IndexReader):
    """``IndexReader`` over a published site. ``cache_dir``: the disk cache (None: the
    default; False: none). ``offline``: use the cached manifest and shards only.

    ``fetched`` counts the bytes and requests that went to the network (the rest came
    from the cache): the MCP server and the benchmarks report them. ``deadline`` (a
    ``time.monotonic()`` value): no request runs past it (``fetch``); None: each request
    gets ``call_timeout`` seconds in all, until a caller starts a call (``begin_call``).
    ``timeout``: the longest single wait. ``manifest``: the site's manifest, already
    fetched by the caller (the warm start compares its model and versions first); it is
    not fetched again, only checked. Shards may be read from several threads at once.
    """

    rebuild_hint = "the site's index is damaged or being replaced; try again later"

    def __init__(self, site: str, *, cache_dir: Path | None | bool = None, timeout: float = TIMEOUT,
                 offline: bool = False, deadline: float | None = None, manifest: dict | None = None,
                 call_timeout: float = CALL_TIMEOUT):
        self.url = index_url(site)
        self.site = site
        self.timeout = timeout
        self.call_timeout = call_timeout
        self.deadline = deadline
        self.cache = None if cache_dir is False else Path(cache_dir or default_cache_dir())
        self.fetched = {"bytes": 0, "requests": 0}
        self._count = threading.Lock()
        self.from_cache = False  # the manifest came from the cache (the site did not answer)
        self.root = None
        self._model_path: Path | None = None
        self._open(manifest if manifest is not None else self._manifest(offline))
        self.budget = self.query_budget

    def where(self, name: str) -> str:
        return urljoin(self.url, name) if name else self.url

    @property
    def site_url(self) -> str:
        """The site's root URL (ending in /): the index directory's URL without ``ASSET_DIR``."""
        return self.url[: -len(ASSET_DIR.as_posix() + "/")]

    @property
    def url_root(self) -> str:  # a record's URL must stay under the site's root
        return self.site_url

    @property
    def query_budget(self) -> int:
        """The shard payload one call may decode: ``QUERY_BYTES``, less for a small index
        (8 MB and 1 KB a chunk: an honest query of the demo's 702 chunks decodes ~1 MB)."""
        return min(QUERY_BYTES, (8 << 20) + 1024 * self.n_chunks)

    def begin_call(self, deadline: float | None, budget: int | None = None):
        """A new call on this site (a tool call, a search): its requests end by ``deadline``,
        and it may decode ``budget`` bytes of shards (None: ``query_budget``)."""
        self.deadline = deadline
        self.spent = 0
        self.budget = self.query_budget if budget is None else budget

    def _deadline(self) -> float:
        return self.deadline if self.deadline is not None else time.monotonic() + self.call_timeout

    def site_file(self, name: str, size: int, digest: str) -> bytes:
        """A file at the site root that the index names with its size and hash (the agents'
        Markdown, ``pages()``): from the cache, else fetched and verified; IndexDamaged
        naming the URL if it does not match."""
        from .index_checks import url_under

        if not re.fullmatch(r"[0-9a-f]{16}", str(digest)) or not isinstance(size, int) or size > MAX_SHARD_BYTES:
            raise IndexDamaged(f"[sphinx-rag] {self.url} lists {name[:80]!r} without a valid size and hash")
        url = urljoin(self.site_url, quote(name, safe="/"))
        if not url_under(url, self.site_url):
            raise IndexDamaged(f"[sphinx-rag] {self.url} lists {name[:80]!r}, which is not in the site: refused")
        path = self.cache / "files" / f"{digest}.bin" if self.cache is not None else None
        if path is not None and path.is_file():
            data = path.read_bytes()
            if len(data) == size and hashlib.sha256(data).hexdigest()[:16] == digest:
                return data
        data = self._get(url, max(size, 1))
        if len(data) != size or hashlib.sha256(data).hexdigest()[:16] != digest:
            raise IndexDamaged(f"[sphinx-rag] {url} does not match its hash in the index: refused")
        if path is not None:
            _store(path, data)
        return data

    # -- the manifest: fresh when the site answers, the last one kept when it does not ----------
    def _manifest_cache(self) -> Path | None:
        if self.cache is None:
            return None
        return self.cache / "manifests" / (hashlib.sha256(self.url.encode()).hexdigest()[:32] + ".json")

    def _manifest(self, offline: bool) -> dict:
        kept = self._manifest_cache()
        url = urljoin(self.url, "manifest.json")
        if not offline:
            try:
                data = self._get(url, MAX_MANIFEST_BYTES)
            except RemoteError as exc:
                if exc.status == 404:
                    raise RemoteError(f"[sphinx-rag] {self.site} is not a sphinx-rag site (no {url})") from None
                if kept is None or not kept.is_file():
                    raise
                self.from_cache = True
            else:
                manifest = self._parse_manifest(data, url)
                if kept is not None:
                    _store(kept, data)
                return manifest
        if kept is None or not kept.is_file():
            raise RemoteError(f"[sphinx-rag] no cached copy of {url}")
        return self._parse_manifest(kept.read_bytes(), url)

    def _parse_manifest(self, data: bytes, url: str) -> dict:
        try:
            manifest = json.loads(data)
        except ValueError:
            raise IndexDamaged(f"[sphinx-rag] {url} is not JSON: not a sphinx-rag index") from None
        if not isinstance(manifest, dict) or "format_version" not in manifest:
            raise IndexDamaged(f"[sphinx-rag] {url} is not a sphinx-rag manifest")
        return manifest

    def _get(self, url: str, max_bytes: int) -> bytes:
        data = fetch(url, max_bytes=max_bytes, timeout=self.timeout, deadline=self._deadline())
        with self._count:
            self.fetched["bytes"] += len(data)
            self.fetched["requests"] += 1
        return data

    # -- shards: from the cache, else fetched and verified against the hash in their name -------
    def shard(self, name: str) -> bytes:
        """The file of shard ``name``, verified by the hash in its name (a script shard is not
        decompressed here: ``script`` does it, capped): RemoteError when the site does not
        answer, IndexDamaged when what it sent is not that shard (then it is not cached)."""
        from .index_checks import is_shard_name

        if not is_shard_name(name):  # names come from the site: never a path of ours
            raise IndexDamaged(f"[sphinx-rag] {self.url} names a shard {str(name)[:80]!r}, which is not a shard name")
        path = self.cache / "shards" / name if self.cache is not None else None
        if path is not None and path.is_file():
            data = path.read_bytes()
            if self._verified(name, data):
                return data
        data = self._get(urljoin(self.url, name), self.file_limit(name))
        if not self._verified(name, data):
            raise IndexDamaged(f"[sphinx-rag] {self.where(name)} does not match its hash: refused")
        if path is not None:
            _store(path, data)
        return data

    def file_limit(self, name: str) -> int:
        """The most bytes shard ``name``'s file may have: a binary shard's size as the index
        declares it (a cluster's from its directory, when read), a script shard's payload
        limit gzipped (at worst slightly larger) in base64."""
        from .index_checks import payload_limits, shard_kind

        kind = shard_kind(name)
        if kind == "cluster" and self._dense_dir is not None:
            sizes = {n: size for n, size in self._dense_dir["clusters"]}
            if name in sizes:
                return 4 + sizes[name] * (8 + self.dim)
        limit = payload_limits(self.manifest, kind)[0]
        if name.endswith(".js"):
            return 4 * ((limit + limit // 500 + 1024) // 3 + 1) + 64
        return limit

    def _read(self, name: str) -> bytes:
        return self.shard(name)  # RemoteError (not answering, too slow) stays one: it is not damage

    @staticmethod
    def _verified(name: str, data: bytes) -> bool:
        from .shards import ShardError, check_binary_shard, check_script_shard

        try:
            if name.endswith(".js"):
                check_script_shard(name, data)
            else:
                check_binary_shard(name, data)
        except (ShardError, ValueError):
            return False
        return True

    # -- the model: its files are checked against the manifest's sha256 -----------------------
    @property
    def model_dir(self) -> Path | None:
        """The site's model, fetched once into the cache under the hash of its files' sha256
        (not under the directory name the site chose: two sites share a model only if it is
        the same bytes), each cached file checked by its sha256 once per reader."""
        if self._model_path is not None:
            return self._model_path
        entry = self.manifest.get("model_files")
        if not entry:
            return None
        if self.cache is None:
            raise IndexDamaged("[sphinx-rag] a remote site's model needs a disk cache")
        from .shards import dumps

        files = {name: entry["files"][name] for name in MODEL_FILES}  # checked by the manifest's checks
        key = hashlib.sha256(dumps({n: meta["sha256"] for n, meta in files.items()})).hexdigest()[:32]
        target = self.cache / "models" / key
        for name, meta in files.items():
            path = target / name
            if _sha256_file(path) == meta["sha256"]:
                continue
            url = urljoin(self.url, f"{entry['dir']}/{name}")
            try:
                download(url, path, size=meta["bytes"], sha256=meta["sha256"], timeout=self.timeout,
                         deadline=self._deadline())
            except OSError as exc:
                if isinstance(exc, RemoteError):
                    raise
                raise IndexDamaged(f"[sphinx-rag] cannot write {path} ({exc.strerror}): a remote site's model "
                                   "needs a writable cache") from None
            with self._count:
                self.fetched["bytes"] += meta["bytes"]
                self.fetched["requests"] += 1
        self._model_path = target
        return target

    def verify_model(self):
        """The model's files were verified when they were fetched or found (``model_dir``)."""
        self.model_dir  # noqa: B018
