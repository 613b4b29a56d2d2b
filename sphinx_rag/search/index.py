"""Reading the static index (``format.py`` says what it holds), lazily: a query reads the
manifest, then only the shards it needs. ``js/src/search/index.js`` is the browser's
reader of the same files."""

from __future__ import annotations

import bisect
import hashlib
import json
import struct
from pathlib import Path

import numpy as np

from . import dense, keyword_shards
from .checks import (
    dense_directory_problem,
    directory_problem,
    invalid_records,
    is_shard_name,
    json_containers,
    manifest_problem,
    pages_listing,
    payload_limits,
    shard_kind,
    text_records,
)
from .format import ASSET_DIR, FORMAT_VERSION, MODEL_FILES, IndexDamaged, IndexMissing, Layout, read_json, site_root_of
from .keyword_scoring import Postings
from .shards import ShardError, check_binary_shard, read_script_shard
from .static_encoder import StaticEncoder

__all__ = ["FORMAT_VERSION", "ASSET_DIR", "Layout", "MODEL_FILES", "IndexMissing", "IndexDamaged", "IndexReader",
           "find_asset_dir", "read_json", "load_chunk_records", "site_root_of"]


def find_asset_dir(path: Path) -> Path:
    """Accept the HTML output dir, or the index dir itself."""
    path = Path(path)
    for candidate in (path / ASSET_DIR, path, path / "_build" / "html" / ASSET_DIR):
        if (candidate / "manifest.json").is_file():
            return candidate
    if (path / "_static" / "sphinx_rag" / "manifest.json").is_file():
        raise IndexMissing(f"[sphinx-rag] the index in {path} is from an older sphinx-rag (format 1): rebuild the "
                           "docs with this version")
    raise IndexMissing(
        f"[sphinx-rag] no search index in {path}: add \"sphinx_rag\" to extensions in conf.py and "
        f"build with `sphinx-build -b html SOURCE_DIR {path}`"
    )


class IndexReader:
    """A built index: the manifest at once, every shard on first use (verified, checked, cached).

    Reads a local directory; ``remote.RemoteIndexReader`` reads a published site over
    HTTP through the same methods (it overrides ``_read``, ``where``, ``url_root`` and the
    model's files). Everything read is checked before use (``checks.py``): a wrong
    structure is one ``IndexDamaged`` line, a wrong chunk record is dropped (``dropped``
    counts them; ``chunk`` gives ``checks.DROPPED``, which has no URL). Each shard's
    payload is capped by its kind (``checks.payload_limits``); ``budget``, when set,
    caps the bytes decoded until it is reset (``spent``: a remote reader's per-call cap).
    """

    budget: int | None = None  # bytes of shard payloads that may still be decoded (None: no cap)

    def __init__(self, path: Path | str):
        self.root = find_asset_dir(Path(path))
        try:
            manifest = read_json(self.root / "manifest.json")
        except (OSError, ValueError) as exc:
            raise IndexDamaged(
                f"[sphinx-rag] {self.root / 'manifest.json'} is unreadable ({exc}): rebuild the docs") from None
        self._open(manifest)

    def _open(self, manifest):
        """Check the manifest (format, counts, layout, names: ``IndexDamaged`` if it is not ours)."""

        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if version != FORMAT_VERSION:
            raise IndexDamaged(f"[sphinx-rag] index format {str(version)[:40]} in {self.where('')} is not "
                               f"{FORMAT_VERSION}: {self.rebuild_hint}")
        problem = manifest_problem(manifest)
        if problem:
            raise IndexDamaged(f"[sphinx-rag] {self.where('manifest.json')} {problem}: {self.rebuild_hint}")
        self.n_chunks = manifest["counts"]["chunks"]
        self.dim = manifest["counts"]["dim"]
        self.manifest = manifest
        self._cache: dict[str, object] = {}
        self._dir: dict | None = None
        self._dense_dir: dict | None = None
        self._weights: np.ndarray | None = None
        self.spent = 0  # bytes of shard payloads decoded (``budget``)
        self.dropped = 0  # chunk records dropped by the checks
        self.records_read = 0  # chunk records read (of text shards decoded), dropped or not
        self.record_problem: str | None = None  # why the first record dropped was (checks.record_problem)

    #: what the reader of a damaged index should do (a remote site's reader cannot rebuild it)
    rebuild_hint = "rebuild the docs with this sphinx-rag version"
    #: the site root a record's URL must stay under (a local index's URLs are relative)
    url_root = "https://index.invalid/"

    def where(self, name: str) -> str:
        """Where shard ``name`` lives, for messages."""
        return str(self.root / name) if name else str(self.root)

    def _damaged(self, name: str, problem) -> IndexDamaged:
        return IndexDamaged(f"[sphinx-rag] {self.where(name)}: {problem}; {self.rebuild_hint}")

    # raw shards
    def _read(self, name: str) -> bytes:
        try:
            return (self.root / name).read_bytes()
        except OSError as exc:
            raise IndexDamaged(f"[sphinx-rag] {self.root / name} is missing ({exc.strerror}): the index is "
                               "incomplete; rebuild the docs") from None

    def _charge(self, name: str, size: int):
        self.spent += size
        if self.budget is not None and self.spent > self.budget:
            raise IndexDamaged(f"[sphinx-rag] {self.where(name)}: the index asks for more than {self.budget:,} "
                               "bytes for one query: refused")

    def _checked_name(self, name, ext: str) -> str:

        if not is_shard_name(name) or not name.endswith(ext):  # names come from the index: never a path
            raise IndexDamaged(f"[sphinx-rag] {self.where('')} names a shard {str(name)[:80]!r}, which is not a "
                               f"shard name: {self.rebuild_hint}")
        return name

    def limits(self, name: str) -> tuple[int, int]:
        """(most payload bytes, most JSON containers) of shard ``name`` (``checks.payload_limits``)."""

        return payload_limits(self.manifest, shard_kind(name))

    def script(self, name: str) -> bytes:
        name = self._checked_name(name, ".js")
        data = self._read(name)  # a remote site that does not answer is not a damaged index
        try:
            payload = read_script_shard(name, data, self.limits(name)[0])
        except (ShardError, ValueError, EOFError) as exc:
            raise self._damaged(name, exc) from None
        self._charge(name, len(payload))
        return payload

    def binary(self, name: str) -> bytes:
        name = self._checked_name(name, ".bin")
        data = self._read(name)
        try:
            check_binary_shard(name, data)
        except ShardError as exc:
            raise self._damaged(name, exc) from None
        if len(data) > self.limits(name)[0]:
            raise self._damaged(name, f"{len(data):,} bytes, more than its index allows")
        self._charge(name, len(data))
        return data

    def _json(self, name: str, payload: bytes):
        """A shard's JSON, its containers counted first (``checks.json_containers``)."""

        if json_containers(payload) > self.limits(name)[1]:
            raise self._damaged(name, "more lists and objects than its index allows")
        try:
            return json.loads(payload)
        except ValueError as exc:
            raise self._damaged(name, f"not JSON ({exc})") from None

    def _decoded(self, name: str, decode):
        """``decode(name)``, any failure of a shard that is not what it should be as IndexDamaged."""
        try:
            return decode(name)
        except IndexDamaged:
            raise
        except (ValueError, KeyError, TypeError, IndexError, OverflowError, AttributeError, struct.error) as exc:
            raise self._damaged(name, " ".join(str(exc).split())[:200] or type(exc).__name__) from None

    def _memo(self, name: str, decode):
        if name not in self._cache:
            self._cache[name] = self._decoded(name, decode)
        return self._cache[name]

    @property
    def directory(self) -> dict:
        if self._dir is None:

            name = self.manifest["dir"]
            d = self._json(name, self.script(name))
            problem = directory_problem(d, self.n_chunks, self.manifest["layout"]["texts_per_shard"])
            if problem:
                raise self._damaged(name, f"the directory {problem}")
            self._dir = d
        return self._dir

    # keyword tier
    def postings(self, term: str) -> Postings | None:
        shards = self.directory["terms"]
        if not shards:
            return None
        at = max(0, bisect.bisect_right([first for first, _ in shards], term) - 1)
        table = self._memo(shards[at][1], lambda n: keyword_shards.read_term_shard(self.script(n), self.n_chunks))
        return table.get(term)

    def near(self, term: str) -> list[tuple[str, int]]:
        """Vocabulary terms (with df) of the lengths a typo lookup of ``term`` reads."""
        lengths = keyword_shards.near_lengths(term)
        if lengths is None:
            return []
        lo, hi = lengths
        out = []
        for first, last, name in self.manifest["near"]:
            if last >= lo and first <= hi:
                out += [(t, df) for t, df in self._memo(name, lambda n: keyword_shards.read_near_shard(self.script(n)))
                        if lo <= keyword_shards.term_length(t) <= hi]
        return out

    def chunk(self, i: int) -> dict:
        """Record of chunk ``i`` (``title`` added: the heading path; ``checks.DROPPED``
        for a record that fails its checks)."""
        if not 0 <= i < self.n_chunks:
            raise IndexError(f"chunk {i} of {self.n_chunks}")
        per = self.manifest["layout"]["texts_per_shard"]
        name = self.directory["texts"][i // per]
        shard = self._memo(name, lambda n: self._texts(n, i // per))
        return shard[i - (i // per) * per]

    def _texts(self, name: str, at: int) -> list[dict]:

        records, dropped = text_records(self._json(name, self.script(name)), at,
                                        self.manifest["layout"]["texts_per_shard"], self.n_chunks, self.url_root,
                                        fill=True)
        if records is None:
            raise self._damaged(name, f"not text shard {at} of the directory")
        self.dropped += dropped
        self.records_read += len(records)
        if dropped and self.record_problem is None:
            self.record_problem = next(r["problem"] for r in records if r.get("dropped"))
        return records

    def invalid_records(self) -> str | None:
        """How many of the records read were invalid and why the first was, in a few words
        (None: none was): ``checks.invalid_records``."""
        if not self.dropped:
            return None
        return f"{invalid_records(self.dropped, self.records_read, self.n_chunks)} ({self.record_problem})"

    @property
    def every_record_invalid(self) -> bool:
        """Every record read failed its checks: nothing of the index can be shown."""
        return self.records_read > 0 and self.dropped == self.records_read

    def chunks(self) -> list[dict]:
        return [self.chunk(i) for i in range(self.n_chunks)]

    @property
    def weights(self) -> np.ndarray:
        if self._weights is None:
            w = np.ones(self.n_chunks, dtype=np.float64)
            for start, end, weight in self.directory["weights"]:
                w[start:end] = weight
            self._weights = w
        return self._weights

    # dense tier
    @property
    def has_vectors(self) -> bool:
        return self.manifest.get("dense") is not None

    def centroids(self) -> tuple[np.ndarray, np.ndarray]:
        name = self.manifest["dense"]["centroids"]

        def decode(n):
            vectors, scales = dense.read_centroid_shard(self.binary(n), self.dim)
            if len(vectors) != len(self.dense_directory["clusters"]):
                raise ValueError(f"{len(vectors)} centroids for {len(self.dense_directory['clusters'])} clusters")
            return vectors, scales

        return self._memo(name, decode)

    @property
    def dense_directory(self) -> dict:
        """Cluster shard names and sizes, cluster map names: out of the keyword directory,
        which every first query reads (at 200,000 chunks they are 20 KB of its 70 KB gzip)."""
        if self._dense_dir is None:

            name = self.manifest["dense"]["directory"]
            d = self._json(name, self.binary(name))
            problem = dense_directory_problem(d, self.n_chunks, self.manifest["counts"]["clusters"],
                                              self.manifest["layout"]["cluster_map_chunks"])
            if problem:
                raise self._damaged(name, f"the dense directory {problem}")
            self._dense_dir = d
        return self._dense_dir

    def cluster(self, c: int) -> dense.Cluster:
        name, size = self.dense_directory["clusters"][c]

        def decode(n):
            cluster = dense.read_cluster_shard(self.binary(n), self.dim, self.n_chunks)
            if len(cluster.ids) != size:
                raise ValueError(f"{len(cluster.ids)} chunks, its directory says {size}")
            return cluster

        return self._memo(name, decode)

    @property
    def cluster_sizes(self) -> list[int]:
        return [size for _, size in self.dense_directory["clusters"]]

    def cluster_of(self, i: int) -> int | None:
        """The cluster holding chunk ``i`` (None: the index has no cluster map)."""
        names = self.dense_directory["cluster_map"]
        if not names:
            return None
        per = self.manifest["layout"]["cluster_map_chunks"]
        clusters = len(self.dense_directory["clusters"])

        def decode(n):
            shard = dense.read_cluster_map_shard(self.binary(n), clusters)
            if len(shard) != min(per, self.n_chunks - (i // per) * per):
                raise ValueError(f"a cluster map of {len(shard)} chunks")
            return shard

        shard = self._memo(names[i // per], decode)
        return int(shard[i % per])

    def directory_names(self) -> list[str]:
        """Every shard file the manifest and the directory name (the model excepted)."""
        d = self.directory
        names = [self.manifest["dir"], *(n for _, _, n in self.manifest["near"]), *(n for _, n in d["terms"]),
                 *d["texts"]]
        if self.has_vectors:
            dd = self.dense_directory
            names += [self.manifest["dense"]["centroids"], self.manifest["dense"]["directory"],
                      *(n for n, _ in dd["clusters"]), *dd["cluster_map"]]
        names += [self.manifest["llms"]["pages"]] if self.manifest.get("llms") else []
        return names + ([self.manifest["encoder"]["file"]] if self.has_encoder else [])

    def pages(self) -> dict | None:
        """The pages and the agents' files (``{"pages": [[doc, url, twin, first chunk,
        chunks]], "files": {name: [bytes, hash]}}``), or None: the site writes none. Entries
        that fail their checks (a name out of the site, a URL off it) are left out."""

        entry = self.manifest.get("llms")
        if not entry:
            return None

        def decode(n):
            listing = pages_listing(self._json(n, self.binary(n)), self.n_chunks, self.url_root)
            if listing is None:
                raise ValueError("not a pages listing")
            return listing

        return self._memo(entry["pages"], decode)

    @property
    def has_encoder(self) -> bool:
        return bool(self.manifest.get("encoder"))

    def encoder(self) -> StaticEncoder:
        name = self.manifest["encoder"]["file"]
        return self._memo(name, lambda n: StaticEncoder.from_bytes(self.binary(n)))

    @property
    def model_dir(self) -> Path | None:
        entry = self.manifest.get("model_files")
        return self.root / entry["dir"] if entry else None

    @property
    def reranker_dir(self) -> Path | None:
        """The reranker's files (``cross_encoder.RERANKER_FILES``), None when the site ships none."""
        entry = self.manifest.get("reranker_files")
        return self.root / entry["dir"] if entry else None

    def verify_reranker(self):
        """Check the reranker's files against the manifest's sha256 (IndexDamaged naming the
        file and the hashes: the caller keeps the fused order)."""
        from .cross_encoder import RERANKER_FILES

        entry = self.manifest["reranker_files"]
        for name in RERANKER_FILES:
            meta = entry["files"][name]
            path = self.root / entry["dir"] / name
            got = hashlib.sha256(self._read(f"{entry['dir']}/{name}")).hexdigest()
            if got != meta["sha256"]:
                raise IndexDamaged(f"[sphinx-rag] {path} has sha256 {got[:16]}, the manifest says {meta['sha256'][:16]}")

    def verify_model(self):
        """Check the model files against their sha256 (they are large: once per process)."""
        entry = self.manifest["model_files"]
        for name in MODEL_FILES:
            meta = entry["files"][name]
            data = self._read(f"{entry['dir']}/{name}")
            if hashlib.sha256(data).hexdigest() != meta["sha256"]:
                raise IndexDamaged(f"[sphinx-rag] {self.root / entry['dir'] / name} does not match the manifest "
                                  "(corrupted): rebuild the docs")


def load_chunk_records(asset_dir: Path) -> list[dict]:
    """Every chunk record of an existing index (ValueError if it is not a readable format 2)."""
    try:
        reader = IndexReader(asset_dir)
        records = reader.chunks()
        weights = reader.weights
    except (IndexMissing, IndexDamaged) as exc:
        raise ValueError(str(exc)) from None
    if reader.dropped:
        raise ValueError(f"[sphinx-rag] {reader.where('')}: {reader.dropped} chunk records fail their checks: "
                         "rebuild the docs")
    out, position = [], {}
    for i, r in enumerate(records):  # ``order``: the chunk's position in its page
        order = position[r["doc"]] = position.get(r["doc"], -1) + 1
        record = {k: v for k, v in r.items() if k != "members" or v}  # as written: a card's only
        out.append(dict(record, weight=float(weights[i]), order=order))
    return out
