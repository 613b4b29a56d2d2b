"""The warm start of a build: the published site's chunk vectors and encoder, reused.

CI services start every build with empty caches, while the previous version of the docs
is online with each chunk's int8 vector, its text and the static encoder, in shards named
by the hash of their content. ``load`` fetches the deployed manifest, then every text
shard (which chunk holds which text) and every cluster shard (chunk ids, f32 scales, int8
vectors), and the encoder when it was fitted the same way, each verified against its
hash (``remote.py``); ``build.write_index`` then reuses the vector of every chunk whose
embedded text is unchanged and embeds only the others. An int8 vector depends only on
the text embedded and the model (embedding does not depend on the batch), so with an
unchanged corpus every vector, hence the encoder's digest, hence every file of the index
is what a cold build writes.

Only a site of the same model (its ``model_info``), index format and chunker version is
used. Never partial trust: a shard that does not match its hash is refused, and the
chunks it would have given are embedded. The cost is bounded: ``REQUEST_TIMEOUT`` per
request, ``TOTAL_TIMEOUT`` for all of it; what arrived in time is used.

Reported in one line each (``Outcome``): an info line when the site does not answer
(down, not yet published, a 404 page) or holds another model, format or chunker version
(an upgrade or a configuration change, which the next deploy resolves: a build with
``-W`` must not fail for it, nor be kept from deploying the fix); a warning
(``sphinx_rag.warm_start``) when the site answers with something that is not what it
names (a manifest that is not one, a shard that fails its hash): its readers are
refused those files too.

The model too (``PublishedModel``): a build whose model cache has no entry for its
model takes the site's model.onnx instead of exporting one (torch, optimum, 20-60 s),
when the site's model is what an export here would write (the same ``model_info``:
model id, source weights' hash, export settings) with this source's tokenizer files.
Each file is verified by its sha256 in the manifest and installed whole or not at all
(``model.cached_model_dir``); anything else costs one line, then the export.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from struct import error as struct_error
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

import numpy as np

__all__ = ["ENV", "WarmStart", "PublishedModel", "site_url", "load", "REQUEST_TIMEOUT", "TOTAL_TIMEOUT",
           "MODEL_TIMEOUT"]

ENV = "SPHINX_RAG_WARM_START"  # "0" (or off, false, no): no warm start; an http(s) URL: this site
REQUEST_TIMEOUT = 5.0  # seconds per request (connecting, and between two reads)
TOTAL_TIMEOUT = 60.0  # seconds for the whole warm start (13.7k chunks: 8 MB; 200k: about 110 MB)
#: seconds for the site's model (23 MB: a site slower than 0.8 MB/s is no faster than
#: exporting it here, 20-60 s; past it, the export runs and what arrived is dropped)
MODEL_TIMEOUT = 30.0
THREADS = 8  # requests at once (each shard is a request; latency, not bandwidth, bounds them)
_OFF = {"0", "off", "false", "no"}
_ON = {"", "1", "on", "true", "yes"}


def site_url(configured: str | None, html_baseurl: str, environ=os.environ) -> str:
    """The site a build starts from ("": none): ``$SPHINX_RAG_WARM_START`` when it is set,
    else ``sphinx_rag_warm_start``, else (None) ``html_baseurl``. ValueError (one line)
    for an environment value that is neither off, on nor a URL."""
    from .remote import is_url

    value = environ.get(ENV)
    if value is not None and value.strip().lower() in _OFF:
        return ""
    if value is not None and value.strip().lower() not in _ON:
        if not is_url(value.strip()):
            raise ValueError(f"[sphinx-rag] ${ENV} = {value!r} is neither 0 (no warm start) nor the http(s) URL "
                             f"of the published docs, e.g. {ENV}=0 or {ENV}=https://docs.example.org/en/stable/")
        return value.strip()
    return (html_baseurl or "").strip() if configured is None else configured.strip()


@dataclass
class WarmStart:
    """What a build took from the published site (``load``)."""

    url: str
    texts: list[str]  # the embedded text (``embed.embedding_text``) of each chunk whose vector arrived
    vectors: np.ndarray  # int8, a row per text
    scales: np.ndarray  # f32
    chunk_texts: list[str] | None  # the text of every published chunk (None: some text shard is missing)
    encoder: tuple[bytes, dict] | None  # the published encoder's file and manifest entry (same fit), or None
    encoder_note: str = ""  # why there is none
    fetched: int = 0  # bytes
    seconds: float = 0.0
    shortfall: str = ""  # why some shards are missing (the site stopped answering), for the report
    published: int = 0  # chunks in the published index

    def known(self):
        """``embed.Known``: the vectors by embedded text."""
        return self.texts, self.vectors, self.scales

    def changed(self, texts: list[str]) -> int | None:
        """Chunks added or removed since the published index (an edited chunk is one of each),
        as ``build.REFIT_SHARE`` counts them; None when not every published text arrived."""
        if self.chunk_texts is None:
            return None
        published, now = Counter(self.chunk_texts), Counter(texts)
        return sum((published - now).values()) + sum((now - published).values())

    def report(self, reused: int, total: int, encoder: str, model: str = "") -> str:
        """The one info line: what was reused (``model``: ``PublishedModel.report``), what it cost."""
        parts = [f"{reused:,} of {total:,} chunk vectors reused"]
        if self.shortfall:
            parts[0] += f" ({self.shortfall})"
        parts += [part for part in (encoder, model) if part]
        parts.append(f"{self.fetched / 1e6:.1f} MB fetched in {self.seconds:.1f} s")
        return f"[sphinx-rag] warm start from {self.url}: " + ", ".join(parts)


@dataclass
class _Fetch:
    """The shards asked for, what arrived, and the first reason something did not."""

    reader: object
    stop: bool = False  # the site stopped answering: ask for nothing more
    failed: str = ""  # the first network failure
    refused: list[str] = field(default_factory=list)  # shards that do not match their hash

    def get(self, name: str) -> bytes | None:
        from .assets import IndexDamaged
        from .remote import RemoteError

        if self.stop:
            return None
        try:
            return self.reader.shard(name)
        except RemoteError as exc:
            self.stop = True
            self.failed = self.failed or str(exc).removeprefix("[sphinx-rag] ")
        except IndexDamaged:
            self.refused.append(name)
        return None

    def all(self, names: list[str]) -> list[bytes | None]:
        with ThreadPoolExecutor(max_workers=THREADS) as pool:
            return list(pool.map(self.get, names))


def load(site: str, model_info: dict, chunker: int, *, fit: str | None, note, warn,
         timeout: float = REQUEST_TIMEOUT, total: float = TOTAL_TIMEOUT) -> WarmStart | None:
    """The vectors (and encoder, if fitted as ``fit`` says; None: not wanted) of the index
    published at ``site`` for a build with ``model_info`` and chunker version ``chunker``.

    None when nothing can be reused: then ``note`` (info) or ``warn`` (warning) got one
    line saying why. Never raises for what the site does or sends.
    """
    from .embed import embedding_text
    from .remote import RemoteError, RemoteIndexReader

    start = time.monotonic()
    deadline = start + total

    def skip(reason: str, *, warning: bool = False):
        line = f"[sphinx-rag] warm start from {site} skipped: {reason}; building without it"
        (warn if warning else note)(line)

    try:
        url = _manifest_url(site)
        raw = _fetch_manifest(url, timeout, deadline)
    except RemoteError as exc:
        if getattr(exc, "status", None) == 404:
            return skip(f"it has no sphinx-rag index yet ({url}: HTTP 404)")
        return skip(str(exc).removeprefix("[sphinx-rag] "))
    manifest, problem, warning = _usable_manifest(raw, url, model_info, chunker)
    if manifest is None:
        return skip(problem, warning=warning)
    reader = RemoteIndexReader(site, cache_dir=False, timeout=timeout, deadline=deadline, manifest=manifest)
    shards = _Fetch(reader)
    texts, clusters = _directories(shards, manifest)
    if texts is None or clusters is None:
        if shards.refused:
            return skip(f"{', '.join(shards.refused)} of its index are not what their names say (the published "
                        "index is damaged)", warning=True)
        return skip(shards.failed)
    encoder_entry = manifest.get("encoder") or {}
    want_encoder = fit is not None and encoder_entry.get("fit") == fit and isinstance(encoder_entry.get("file"), str)
    names = texts + clusters + ([encoder_entry["file"]] if want_encoder else [])
    files = shards.all(names)
    records = _records(shards, texts, files[:len(texts)])
    ids, vectors, scales = _vectors(shards, clusters, files[len(texts):len(texts) + len(clusters)], reader.dim)
    keep = [i for i, chunk in enumerate(ids.tolist()) if chunk in records]
    encoder = (files[-1], encoder_entry) if want_encoder and files[-1] is not None else None
    if encoder is not None or fit is None:
        encoder_note = ""
    elif not encoder_entry:
        encoder_note = "the site has none"
    elif not want_encoder:
        encoder_note = "the site's was fitted with other parameters"
    else:
        encoder_note = "the site's did not arrive"
    if shards.refused:
        warn(_refused_line(site, shards.refused, len(names) + 2))
    shortfall = ""
    if shards.failed:
        arrived = sum(f is not None for f in files) + 2
        shortfall = f"the site stopped answering after {arrived} of {len(names) + 2} shards: {shards.failed}"
    complete = all(i in records for i in range(reader.n_chunks))
    return WarmStart(
        url=site,
        texts=[embedding_text(*records[int(ids[i])]) for i in keep],
        vectors=np.ascontiguousarray(vectors[keep], dtype=np.int8),
        scales=np.ascontiguousarray(scales[keep], dtype=np.float32),
        chunk_texts=[records[i][1] for i in range(reader.n_chunks)] if complete else None,
        encoder=encoder,
        encoder_note=encoder_note,
        fetched=len(raw) + reader.fetched["bytes"],
        seconds=time.monotonic() - start,
        shortfall=shortfall,
        published=reader.n_chunks,
    )


def offers_vectors(site: str, model_info: dict, chunker: int, timeout: float = REQUEST_TIMEOUT) -> bool:
    """Whether the site's manifest promises vectors this build can reuse (one request, no
    line printed: ``load`` says what it finds). ``embed_ahead.py`` embeds nothing when it does."""
    from .remote import RemoteError

    try:
        raw = _fetch_manifest(_manifest_url(site), timeout, time.monotonic() + timeout)
    except RemoteError:
        return False
    return _usable_manifest(raw, "", model_info, chunker)[0] is not None


def _manifest_url(site: str) -> str:
    from .remote import index_url

    return urljoin(index_url(site), "manifest.json")


def _fetch_manifest(url: str, timeout: float, deadline: float) -> bytes:
    """The published manifest's bytes (at most ``remote.MAX_MANIFEST_BYTES``); RemoteError."""
    from .remote import MAX_MANIFEST_BYTES, fetch

    return fetch(url, max_bytes=MAX_MANIFEST_BYTES, timeout=timeout, deadline=deadline)


def _usable_manifest(raw: bytes, url: str, model_info: dict, chunker: int) -> tuple[dict | None, str, bool]:
    """(the manifest, "", False) if its index can give this build vectors, else (None, why,
    whether that is a warning: the site answered with something that is not a manifest)."""
    from .assets import FORMAT_VERSION

    manifest, problem, warning = _parsed(raw, url)
    if manifest is None:
        return None, problem, warning
    if manifest["format_version"] != FORMAT_VERSION:
        return None, f"its index has format {manifest['format_version']!r}, this sphinx-rag writes {FORMAT_VERSION}", \
            False
    published_chunker = (manifest.get("settings") or {}).get("chunker")
    if published_chunker != chunker:
        return None, f"its chunks come from chunker version {published_chunker!r}, this sphinx-rag's is {chunker}", \
            False
    if not isinstance(manifest.get("dense"), dict) or not manifest.get("model"):
        return None, "its index has no vectors (a keyword-only site)", False
    if manifest["model"] != model_info:
        return None, f"its vectors come from another model ({_model_difference(manifest['model'], model_info)})", False
    try:
        well_formed = (isinstance(manifest["dir"], str) and isinstance(manifest["dense"]["directory"], str)
                       and int(manifest["counts"]["chunks"]) >= 0 and int(manifest["counts"]["dim"]) == model_info["dim"])
    except (KeyError, TypeError, ValueError):
        well_formed = False
    if not well_formed:
        return None, f"{url} is not a sphinx-rag manifest (its directories or counts are missing)", True
    return manifest, "", False


def _parsed(raw: bytes, url: str) -> tuple[dict | None, str, bool]:
    """(the manifest, "", False), or (None, why, whether that is a warning) when ``raw`` is
    not a manifest: an HTML page is a host's "not found" (info), anything else a warning."""
    try:
        manifest = json.loads(raw)
    except ValueError:
        if raw.lstrip()[:1] == b"<":  # a host's "not found" page served as 200: no index there
            return None, f"it has no sphinx-rag index ({url} is an HTML page)", False
        return None, f"{url} is not JSON: not a sphinx-rag manifest", True
    if not isinstance(manifest, dict) or "format_version" not in manifest:
        return None, f"{url} is not a sphinx-rag manifest", True
    return manifest, "", False


def _directories(shards: _Fetch, manifest: dict) -> tuple[list[str] | None, list[str] | None]:
    """The names of the text shards and of the cluster shards (None: not to be had)."""
    from .shards import read_script_shard

    keyword, dense = shards.all([manifest["dir"], manifest["dense"]["directory"]])
    texts = clusters = None
    try:
        if keyword is not None:
            texts = [str(name) for name in json.loads(read_script_shard(manifest["dir"], keyword))["texts"]]
        if dense is not None:
            clusters = [str(name) for name, _ in json.loads(dense)["clusters"]]
    except (ValueError, KeyError, TypeError):
        shards.refused.append(manifest["dir"] if texts is None else manifest["dense"]["directory"])
    return texts, clusters


def _records(shards: _Fetch, names: list[str], files: list[bytes | None]) -> dict[int, tuple[str, str]]:
    """(kind, text) of each chunk id of the text shards that arrived."""
    from .shards import read_script_shard

    records: dict[int, tuple[str, str]] = {}
    for name, data in zip(names, files):
        if data is None:
            continue
        try:
            shard = json.loads(read_script_shard(name, data))
            records.update((shard["first"] + j, (r["kind"], r["text"])) for j, r in enumerate(shard["chunks"]))
        except (ValueError, KeyError, TypeError):
            shards.refused.append(name)
    return records


def _vectors(shards: _Fetch, names: list[str], files: list[bytes | None], dim: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chunk ids, int8 vectors and scales of the cluster shards that arrived."""
    from .dense import read_cluster_shard

    ids, vectors, scales = [np.zeros(0, dtype=np.int64)], [np.zeros((0, dim), dtype=np.int8)], \
        [np.zeros(0, dtype=np.float32)]
    for name, data in zip(names, files):
        if data is None:
            continue
        try:
            cluster = read_cluster_shard(data, dim)
        except (ValueError, IndexError, struct_error):
            shards.refused.append(name)
            continue
        ids.append(cluster.ids)
        vectors.append(cluster.vectors)
        scales.append(cluster.scales)
    return np.concatenate(ids), np.concatenate(vectors), np.concatenate(scales)


def _refused_line(site: str, refused: list[str], asked: int) -> str:
    shown = ", ".join(refused[:3]) + (f" and {len(refused) - 3} more" if len(refused) > 3 else "")
    return (f"[sphinx-rag] warm start from {site}: {len(refused)} of {asked} files refused, not what their names "
            f"say ({shown}): the published index is damaged; the chunks they hold are embedded here")


def _model_difference(published: dict, ours: dict) -> str:
    """The first ``model_info`` field that differs (the model id first), and how many others do."""
    if not isinstance(published, dict):
        return "no model information"
    keys = sorted(k for k in published.keys() | ours.keys() if published.get(k) != ours.get(k))
    keys.sort(key=lambda k: k != "model_id")
    key = keys[0]
    shown = f"{key} {str(published.get(key))[:60]!r}, here {str(ours.get(key))[:60]!r}"
    return shown + (f", and {len(keys) - 1} more field{'s' * (len(keys) > 2)}" if len(keys) > 1 else "")


class _NotTaken(Exception):
    """Why the site's model is not taken (``warning``: the site sent what its names deny)."""

    def __init__(self, reason: str, warning: bool = False):
        super().__init__(reason)
        self.warning = warning


@dataclass
class PublishedModel:
    """The published site's model instead of a local export (``model.cached_model_dir``'s
    ``published``): called on a cache miss with the ``model_info`` an export here would
    write, the sha256 of the source's tokenizer files, and a directory to fill; True when
    it holds the site's verified model.onnx (and the tokenizer files the source lacks).
    Else ``note`` or ``warn`` got one line and the caller exports. ``report``: the
    warm start's words for it."""

    site: str
    note: object
    warn: object
    timeout: float = REQUEST_TIMEOUT
    total: float = MODEL_TIMEOUT
    fetched: int = 0  # bytes of the model's files
    seconds: float = 0.0

    def __call__(self, info: dict, local: dict[str, str], into: Path) -> bool:
        start = time.monotonic()
        try:
            self.fetched = self._fetch(info, local, Path(into), deadline=start + self.total)
        except _NotTaken as exc:
            (self.warn if exc.warning else self.note)(
                f"[sphinx-rag] warm start from {self.site}: the model is not taken from the site ({exc}); "
                "exporting it here")
            return False
        self.seconds = time.monotonic() - start
        return True

    def report(self) -> str:
        return f"model from the site ({self.fetched / 1e6:.1f} MB in {self.seconds:.1f} s)" if self.fetched else ""

    def _fetch(self, info: dict, local: dict[str, str], into: Path, deadline: float) -> int:
        """Write the model's files that the source lacks into ``into``; their bytes. _NotTaken."""
        from .remote import RemoteError, fetch, index_url

        try:
            base, url = index_url(self.site), _manifest_url(self.site)
            raw = _fetch_manifest(url, self.timeout, deadline)
        except RemoteError as exc:
            if getattr(exc, "status", None) == 404:
                raise _NotTaken(f"it has no sphinx-rag index yet ({url}: HTTP 404)") from None
            raise _NotTaken(str(exc).removeprefix("[sphinx-rag] ")) from None
        manifest, problem, warning = _parsed(raw, url)
        if manifest is None:
            raise _NotTaken(problem, warning)
        files = _model_files(manifest, info, local)
        fetched = 0
        for name, (sha256, size) in files.items():
            file_url = urljoin(base, f"{manifest['model_files']['dir']}/{name}")
            try:
                data = fetch(file_url, timeout=self.timeout, deadline=deadline)
            except RemoteError as exc:
                raise _NotTaken(str(exc).removeprefix("[sphinx-rag] ")) from None
            if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
                raise _NotTaken(f"{file_url} does not match its sha256 in the manifest: refused", warning=True)
            (into / name).write_bytes(data)
            fetched += len(data)
        return fetched


def _model_files(manifest: dict, info: dict, local: dict[str, str]) -> dict[str, tuple[str, int]]:
    """The site's model files to fetch, ``{name: (sha256, bytes)}``: model.onnx, and the
    tokenizer files the source lacks (``local``: the sha256 of those it has, which the
    site's must match). _NotTaken when the site's model is not what an export here writes."""
    from .assets import MODEL_FILES
    from .remote import MAX_SHARD_BYTES

    if not manifest.get("model"):
        raise _NotTaken("its index has no model (a keyword-only site)")
    if manifest["model"] != info:
        raise _NotTaken(f"it holds another model or export ({_model_difference(manifest['model'], info)})")
    entry = manifest.get("model_files")
    if not entry:
        raise _NotTaken("it ships no model (sphinx_rag_query_encoder = 'static')")
    try:
        listed = {name: (str(entry["files"][name]["sha256"]), int(entry["files"][name]["bytes"]))
                  for name in MODEL_FILES}
        well_formed = (isinstance(entry["dir"], str) and re.fullmatch(r"model-[0-9a-f]{16}", entry["dir"])
                       and all(re.fullmatch(r"[0-9a-f]{64}", sha) and 0 < size <= MAX_SHARD_BYTES
                               for sha, size in listed.values()))
    except (KeyError, TypeError, ValueError):
        well_formed = False
    if not well_formed:
        raise _NotTaken("its manifest lists the model's files without a valid directory, size or sha256",
                        warning=True)
    for name, sha256 in local.items():
        if listed[name][0] != sha256:
            raise _NotTaken(f"its {name} is not this model's")
    return {name: listed[name] for name in ("model.onnx", "tokenizer.json", "vocab.txt") if name not in local}
