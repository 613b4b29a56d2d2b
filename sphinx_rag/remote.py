"""A published sphinx-rag index, read over HTTP: the manifest, then only the shards a query needs.

Every shard name carries the hash of its content (``shards.py``), so a shard fetched
once is verified by that hash and kept in a disk cache under its name: a second session
reads it from disk, and a site that has gone offline still answers from what was
fetched before (its last manifest is kept too). Nothing unverified is ever cached.

Users: ``sphinx-rag search URL`` and the MCP server (``Searcher`` over a
``RemoteIndexReader``), and the warm start of a build (``warm_start.py``), which
reads the deployed index of the previous version of the docs.

Limits (a hostile or broken site costs one error line, never a crash or a full disk):
``MAX_MANIFEST_BYTES`` for the manifest, ``MAX_SHARD_BYTES`` for any other file, a
timeout per request, and a redirect only to the same host.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

from .assets import ASSET_DIR, MODEL_FILES, IndexDamaged, IndexMissing, IndexReader

__all__ = ["RemoteError", "RemoteIndexReader", "open_index", "fetch", "index_url", "is_url", "default_cache_dir",
           "MAX_MANIFEST_BYTES", "MAX_SHARD_BYTES"]

MAX_MANIFEST_BYTES = 4 << 20  # a 200k-chunk site's manifest is about 20 KB
MAX_SHARD_BYTES = 256 << 20  # the largest file of an index is the model (23 MB for all-MiniLM-L6-v2)
TIMEOUT = 10.0  # seconds per request (connect, and between two reads)
USER_AGENT = "sphinx-rag"
_SHARD_NAME = re.compile(r"[a-z]+-[0-9a-f]{16}\.(js|bin)")
_MODEL_DIR = re.compile(r"model-[0-9a-f]{16}")


class RemoteError(IndexMissing):
    """A remote index that cannot be reached or read: one line naming the URL and the cause."""


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


class _SameHostRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect to the same host only (http -> https included): a docs site
    that moved elsewhere is reported, not followed."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        old, new = urlsplit(req.full_url), urlsplit(newurl)
        if new.hostname != old.hostname or new.scheme not in ("http", "https"):
            raise RemoteError(f"[sphinx-rag] {req.full_url} redirects to another host ({new.hostname}): "
                              "give the site's new URL")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_SameHostRedirects())


def fetch(url: str, *, max_bytes: int = MAX_SHARD_BYTES, timeout: float = TIMEOUT,
          deadline: float | None = None) -> bytes:
    """GET ``url``; raises RemoteError (one line) on any failure, a 404 included (``.status``).

    ``timeout`` bounds each wait (connecting, each read); ``deadline`` (a ``time.monotonic()``
    value) bounds the whole transfer, so a server that trickles bytes cannot hold a caller
    past it (the warm start caps its fetches so). A body shorter than its Content-Length (the
    connection closed partway) is a failure to fetch, not a file.
    """
    def wait() -> float:
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise RemoteError(f"[sphinx-rag] cannot fetch {url} (out of the time allowed)")
        return min(timeout, left)

    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"})
    try:
        with _OPENER.open(request, timeout=wait()) as response:
            declared = response.headers.get("Content-Length")
            declared = int(declared) if declared and declared.isdigit() else None
            if declared is not None and declared > max_bytes:
                raise _too_large(url, declared, max_bytes)
            parts, size = [], 0
            while block := response.read1(min(1 << 16, max_bytes + 1 - size)):  # what has arrived
                parts.append(block)
                size += len(block)
                if size > max_bytes:
                    raise _too_large(url, size, max_bytes)
                wait()
            if declared is not None and size != declared:
                raise RemoteError(f"[sphinx-rag] cannot fetch {url} (the connection closed after {size:,} of "
                                  f"{declared:,} bytes)")
            return b"".join(parts)
    except RemoteError:
        raise
    except urllib.error.HTTPError as exc:
        error = RemoteError(f"[sphinx-rag] {url}: HTTP {exc.code} {exc.reason}")
        error.status = exc.code
        raise error from None
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
            reason = f"no answer within {timeout:g} s"
        raise RemoteError(f"[sphinx-rag] cannot fetch {url} ({reason})") from None


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


class RemoteIndexReader(IndexReader):
    """``IndexReader`` over a published site. ``cache_dir``: the disk cache (None: the
    default; False: none). ``offline``: use the cached manifest and shards only.

    ``fetched`` counts the bytes and requests that went to the network (the rest came
    from the cache): the MCP server and the benchmarks report them. ``deadline`` (a
    ``time.monotonic()`` value): no request runs past it (``fetch``). ``manifest``: the
    site's manifest, already fetched and checked by the caller (the warm start compares its
    model and versions first); it is not fetched again. Shards may be read from several
    threads at once.
    """

    rebuild_hint = "the site's index is damaged or being replaced; try again later"

    def __init__(self, site: str, *, cache_dir: Path | None | bool = None, timeout: float = TIMEOUT,
                 offline: bool = False, deadline: float | None = None, manifest: dict | None = None):
        self.url = index_url(site)
        self.site = site
        self.timeout = timeout
        self.deadline = deadline
        self.cache = None if cache_dir is False else Path(cache_dir or default_cache_dir())
        self.fetched = {"bytes": 0, "requests": 0}
        self._count = threading.Lock()
        self.from_cache = False  # the manifest came from the cache (the site did not answer)
        self.root = None
        self._open(manifest if manifest is not None else self._manifest(offline))

    def where(self, name: str) -> str:
        return urljoin(self.url, name) if name else self.url

    @property
    def site_url(self) -> str:
        """The site's root URL (ending in /): the index directory's URL without ``ASSET_DIR``."""
        return self.url[: -len(ASSET_DIR.as_posix() + "/")]

    def site_file(self, name: str, size: int, digest: str) -> bytes:
        """A file at the site root that the index names with its size and hash (the agents'
        Markdown, ``pages()``): from the cache, else fetched and verified; IndexDamaged
        naming the URL if it does not match."""
        if not re.fullmatch(r"[0-9a-f]{16}", str(digest)) or not isinstance(size, int) or size > MAX_SHARD_BYTES:
            raise IndexDamaged(f"[sphinx-rag] {self.url} lists {name[:80]!r} without a valid size and hash")
        path = self.cache / "files" / f"{digest}.bin" if self.cache is not None else None
        if path is not None and path.is_file():
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest()[:16] == digest:
                return data
        url = urljoin(self.site_url, quote(name, safe="/"))
        try:
            data = self._get(url, max(size, 1))
        except RemoteError as exc:
            raise IndexDamaged(str(exc)) from None
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
                if getattr(exc, "status", None) == 404:
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
        data = fetch(url, max_bytes=max_bytes, timeout=self.timeout, deadline=self.deadline)
        with self._count:
            self.fetched["bytes"] += len(data)
            self.fetched["requests"] += 1
        return data

    # -- shards: from the cache, else fetched and verified against the hash in their name -------
    def shard(self, name: str) -> bytes:
        """The file of shard ``name``, verified: RemoteError when the site does not answer,
        IndexDamaged when what it sent is not that shard (then it is not cached)."""
        if not _SHARD_NAME.fullmatch(name):  # names come from the site: never a path of ours
            raise IndexDamaged(f"[sphinx-rag] {self.url} names a shard {name[:80]!r}, which is not a shard name")
        path = self.cache / "shards" / name if self.cache is not None else None
        if path is not None and path.is_file():
            data = path.read_bytes()
            if self._verified(name, data):
                return data
        data = self._get(urljoin(self.url, name), MAX_SHARD_BYTES)
        if not self._verified(name, data):
            raise IndexDamaged(f"[sphinx-rag] {self.where(name)} does not match its hash: refused")
        if path is not None:
            _store(path, data)
        return data

    def _read(self, name: str) -> bytes:
        try:
            return self.shard(name)
        except RemoteError as exc:  # to a search, a shard it cannot have is a damaged index
            raise IndexDamaged(str(exc)) from None

    @staticmethod
    def _verified(name: str, data: bytes) -> bool:
        from .shards import ShardError, check_binary_shard, read_script_shard

        try:
            if name.endswith(".js"):
                read_script_shard(name, data)
            else:
                check_binary_shard(name, data)
        except (ShardError, ValueError, OSError, EOFError):
            return False
        return True

    # -- the model: its files are checked against the manifest's sha256 -----------------------
    @property
    def model_dir(self) -> Path | None:
        """The site's model, fetched once into the cache (verified file by file)."""
        entry = self.manifest.get("model_files")
        if not entry:
            return None
        if not isinstance(entry.get("dir"), str) or not _MODEL_DIR.fullmatch(entry["dir"]):
            raise IndexDamaged(f"[sphinx-rag] {self.url} names a model directory that is not one")
        if self.cache is None:
            raise IndexDamaged("[sphinx-rag] a remote site's model needs a disk cache")
        target = self.cache / "models" / entry["dir"]
        for name in MODEL_FILES:
            meta = entry["files"].get(name)
            if meta is None:
                raise IndexDamaged(f"[sphinx-rag] {self.where(entry['dir'])} has no {name}")
            path = target / name
            if path.is_file() and path.stat().st_size == meta["bytes"]:
                continue  # written only after its sha256 matched
            try:
                data = self._get(urljoin(self.url, f"{entry['dir']}/{name}"), MAX_SHARD_BYTES)
            except RemoteError as exc:
                raise IndexDamaged(str(exc)) from None
            if hashlib.sha256(data).hexdigest() != meta["sha256"]:
                raise IndexDamaged(f"[sphinx-rag] {self.where(entry['dir'] + '/' + name)} does not match its "
                                   "sha256 in the manifest: refused")
            _store(path, data)
        return target

    def verify_model(self):
        """The model's files were verified when they were fetched (``model_dir``)."""
        self.model_dir  # noqa: B018
