"""A published sphinx-rag index, read over HTTP: the manifest, then only the shards a query needs.

Every shard name carries the hash of its content (``shards.py``), so a shard fetched
once is verified by that hash and kept in a disk cache under its name: a second session
reads it from disk, and a site that has gone offline still answers from what was
fetched before (its last manifest is kept too). Nothing unverified is ever cached.

Users: ``sphinx-rag search URL`` and the MCP server (``Searcher`` over a
``RemoteIndexReader``), the federation check of a build (``federation.check_site``), and
the warm start of a build (``index/warm_start.py``), which reads the deployed index of the
previous version of the docs.

Its requests are ``fetch.py``'s, bounded in redirects, size and time. The index's records are checked before use (``checks.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote, urljoin

from .checks import is_shard_name, payload_limits, shard_kind, url_under
from .fetch import (
    CALL_TIMEOUT,
    MAX_MANIFEST_BYTES,
    MAX_SHARD_BYTES,
    QUERY_BYTES,
    TIMEOUT,
    Fetched,
    RemoteError,
    download,
    fetch,
    fetch_response,
    index_url,
    is_url,
    may_redirect,
    origin_of,
)
from .index import ASSET_DIR, MODEL_FILES, IndexDamaged, IndexReader
from .shards import ShardError, check_binary_shard, check_script_shard, dumps

__all__ = ["RemoteError", "RemoteIndexReader", "Fetched", "open_index", "fetch", "fetch_response", "download",
           "index_url", "is_url", "origin_of", "may_redirect", "default_cache_dir", "MAX_MANIFEST_BYTES",
           "MAX_SHARD_BYTES", "TIMEOUT", "CALL_TIMEOUT", "QUERY_BYTES"]

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
        self._reranker_path: Path | None = None
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

        try:
            if name.endswith(".js"):
                check_script_shard(name, data)
            else:
                check_binary_shard(name, data)
        except (ShardError, ValueError):
            return False
        return True

    # -- the model and the reranker: their files are checked against the manifest's sha256 ----
    @property
    def model_dir(self) -> Path | None:
        """The site's model, fetched once into the cache under the hash of its files' sha256
        (not under the directory name the site chose: two sites share a model only if it is
        the same bytes), each cached file checked by its sha256 once per reader."""
        if self._model_path is None:
            self._model_path = self._fetched_files("model_files", MODEL_FILES, "models")
        return self._model_path

    @property
    def reranker_dir(self) -> Path | None:
        """The site's reranker (``cross_encoder.RERANKER_FILES``), fetched and kept as the model is."""
        from .cross_encoder import RERANKER_FILES

        if self._reranker_path is None:
            self._reranker_path = self._fetched_files("reranker_files", RERANKER_FILES, "rerankers")
        return self._reranker_path

    def verify_reranker(self):
        """The reranker's files were verified when they were fetched or found (``reranker_dir``)."""
        self.reranker_dir  # noqa: B018

    def _fetched_files(self, key: str, names: tuple[str, ...], folder: str) -> Path | None:
        """The files a manifest entry (``model_files``, ``reranker_files``) lists, in the cache
        under the hash of their sha256, each downloaded unless a file with its sha256 is there."""
        entry = self.manifest.get(key)
        if not entry:
            return None
        if self.cache is None:
            raise IndexDamaged(f"[sphinx-rag] a remote site's {key.split('_')[0]} needs a disk cache")

        files = {name: entry["files"][name] for name in names}  # checked by the manifest's checks
        digest = hashlib.sha256(dumps({n: meta["sha256"] for n, meta in files.items()})).hexdigest()[:32]
        target = self.cache / folder / digest
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
                raise IndexDamaged(f"[sphinx-rag] cannot write {path} ({exc.strerror}): a remote site's "
                                   f"{key.split('_')[0]} needs a writable cache") from None
            with self._count:
                self.fetched["bytes"] += meta["bytes"]
                self.fetched["requests"] += 1
        return target

    def verify_model(self):
        """The model's files were verified when they were fetched or found (``model_dir``)."""
        self.model_dir  # noqa: B018
