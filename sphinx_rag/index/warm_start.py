"""The warm start of a build: the published site's chunk vectors and encoder, reused.

CI services start every build with empty caches, while the previous version of the docs
is online with each chunk's int8 vector, its text and the static encoder, in shards named
by the hash of their content. ``load`` fetches the deployed manifest, then every text
shard (which chunk holds which text) and every cluster shard (chunk ids, f32 scales, int8
vectors), and the encoder when it was fitted the same way, each verified against its
hash (``search/remote.py``); ``build.write_index`` then reuses the vector of every chunk whose
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
(``sphinx_rag.index.warm_start``) when the site answers with something that is not what it
names (a manifest that is not one, a shard that fails its hash): its readers are
refused those files too.

Hashes prove that the bytes are the ones the site's manifest names, not that its vectors
belong to its texts: ``check_sample`` re-embeds a random sample of the chunks a build
would reuse (``SAMPLE`` or ``SAMPLE_SHARE`` of them, chosen by the operating system's
random source, so the site cannot know which) and requires the vectors this model gives
them, else the build goes cold with one warning. A reused encoder is checked the same
way (``encoder_fit.check_published``). A model is never taken from a site: the
default model comes from its package, pinned by sha256, and any other is exported here.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from struct import error as struct_error
from urllib.parse import urljoin

import numpy as np

__all__ = ["ENV", "WarmStart", "site_url", "load", "check_sample", "REQUEST_TIMEOUT", "TOTAL_TIMEOUT",
           "SAMPLE", "SAMPLE_SHARE",
           "SAMPLE_MAX"]

ENV = "SPHINX_RAG_WARM_START"  # "0" (or off, false, no): no warm start; an http(s) URL: this site
REQUEST_TIMEOUT = 5.0  # seconds per request (connecting, and between two reads)
TOTAL_TIMEOUT = 60.0  # seconds for the whole warm start (13.7k chunks: 8 MB; 200k: about 110 MB)
#: Reused vectors re-embedded here before any is trusted: SAMPLE_SHARE of them, at least
#: SAMPLE and at most SAMPLE_MAX (a site that swapped or faked 10% of its vectors is caught
#: with probability 1 - 0.9^32 > 0.96, and from 6,400 chunks on 1 - 0.9^128 > 0.9999;
#: SAMPLE_MAX chunks cost 2-3 s on 2 cores)
SAMPLE = 32
SAMPLE_SHARE = 0.02
SAMPLE_MAX = 128
THREADS = 8  # requests at once (each shard is a request; latency, not bandwidth, bounds them)
_OFF = {"0", "off", "false", "no"}
_ON = {"", "1", "on", "true", "yes"}


def site_url(configured: str | None, html_baseurl: str, environ=os.environ) -> str:
    """The site a build starts from ("": none): ``$SPHINX_RAG_WARM_START`` when it is set,
    else ``sphinx_rag_warm_start``, else (None) ``html_baseurl``. ValueError (one line)
    for an environment value that is neither off, on nor a URL."""
    from ..search.remote import is_url

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
    texts: list[str]  # the embedded text (``model.embed.embedding_text``) of each chunk whose vector arrived
    vectors: np.ndarray  # int8, a row per text
    scales: np.ndarray  # f32
    chunk_texts: list[str] | None  # the text of every published chunk (None: some text shard is missing)
    encoder: tuple[bytes, dict] | None  # the published encoder's file and manifest entry (same fit), or None
    encoder_note: str = ""  # why there is none
    fetched: int = 0  # bytes
    seconds: float = 0.0
    shortfall: str = ""  # why some shards are missing (the site stopped answering), for the report
    published: int = 0  # chunks in the published index
    checked: int = 0  # reused vectors re-embedded here (``check_sample``)

    def known(self):
        """``model.embed.Known``: the vectors by embedded text."""
        return self.texts, self.vectors, self.scales

    def changed(self, texts: list[str]) -> int | None:
        """Chunks added or removed since the published index (an edited chunk is one of each),
        as ``build.REFIT_SHARE`` counts them; None when not every published text arrived."""
        if self.chunk_texts is None:
            return None
        published, now = Counter(self.chunk_texts), Counter(texts)
        return sum((published - now).values()) + sum((now - published).values())

    def report(self, reused: int, total: int, encoder: str) -> str:
        """The one info line: what was reused (its sample re-embedded here), what it cost."""
        parts = [f"{reused:,} of {total:,} chunk vectors reused ({self.checked} re-embedded here to check them)"]
        if self.shortfall:
            parts[0] += f" ({self.shortfall})"
        parts += [encoder] if encoder else []
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
        from ..search.index import IndexDamaged
        from ..search.remote import RemoteError

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
    from ..model.embed import embedding_text
    from ..search.index import IndexDamaged
    from ..search.remote import RemoteError, RemoteIndexReader

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
    try:
        reader = RemoteIndexReader(site, cache_dir=False, timeout=timeout, deadline=deadline, manifest=manifest)
    except IndexDamaged as exc:  # the manifest's own checks (search.checks.manifest_problem)
        return skip(str(exc).removeprefix("[sphinx-rag] "), warning=True)
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
    from ..search.remote import RemoteError

    try:
        raw = _fetch_manifest(_manifest_url(site), timeout, time.monotonic() + timeout)
    except RemoteError:
        return False
    return _usable_manifest(raw, "", model_info, chunker)[0] is not None


def _manifest_url(site: str) -> str:
    from ..search.remote import index_url

    return urljoin(index_url(site), "manifest.json")


def _fetch_manifest(url: str, timeout: float, deadline: float) -> bytes:
    """The published manifest's bytes (at most ``search.fetch.MAX_MANIFEST_BYTES``); RemoteError."""
    from ..search.remote import MAX_MANIFEST_BYTES, fetch

    return fetch(url, max_bytes=MAX_MANIFEST_BYTES, timeout=timeout, deadline=deadline)


def _usable_manifest(raw: bytes, url: str, model_info: dict, chunker: int) -> tuple[dict | None, str, bool]:
    """(the manifest, "", False) if its index can give this build vectors, else (None, why,
    whether that is a warning: the site answered with something that is not a manifest)."""
    from ..search.index import FORMAT_VERSION

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
    from ..search.shards import read_script_shard

    keyword, dense = shards.all([manifest["dir"], manifest["dense"]["directory"]])
    texts = clusters = None
    try:
        if keyword is not None:
            texts = [str(name) for name in json.loads(read_script_shard(manifest["dir"], keyword,
                                                                        shards.reader.limits(manifest["dir"])[0]))["texts"]]
        if dense is not None:
            clusters = [str(name) for name, _ in json.loads(dense)["clusters"]]
    except (ValueError, KeyError, TypeError):
        shards.refused.append(manifest["dir"] if texts is None else manifest["dense"]["directory"])
    return texts, clusters


def _records(shards: _Fetch, names: list[str], files: list[bytes | None]) -> dict[int, tuple[str, str]]:
    """(kind, text) of each chunk id of the text shards that arrived, every record checked
    (``search.checks.text_records``: a record that is not well-formed is not reused)."""
    from ..search.checks import text_records
    from ..search.shards import read_script_shard

    reader = shards.reader
    per = reader.manifest["layout"]["texts_per_shard"]
    records: dict[int, tuple[str, str]] = {}
    for at, (name, data) in enumerate(zip(names, files)):
        if data is None:
            continue
        try:
            shard = json.loads(read_script_shard(name, data, reader.limits(name)[0]))
        except ValueError:
            shard = None
        checked, _ = text_records(shard, at, per, reader.n_chunks, reader.site_url)
        if checked is None:
            shards.refused.append(name)
            continue
        records.update((at * per + j, (r["kind"], r["text"])) for j, r in enumerate(checked) if not r.get("dropped"))
    return records


def _vectors(shards: _Fetch, names: list[str], files: list[bytes | None], dim: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chunk ids, int8 vectors and scales of the cluster shards that arrived."""
    from ..search.dense import read_cluster_shard

    ids, vectors, scales = [np.zeros(0, dtype=np.int64)], [np.zeros((0, dim), dtype=np.int8)], \
        [np.zeros(0, dtype=np.float32)]
    for name, data in zip(names, files):
        if data is None:
            continue
        try:
            cluster = read_cluster_shard(data, dim, shards.reader.n_chunks)
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


def check_sample(warm: WarmStart, wanted: list[str], embed, rng=None) -> str | None:
    """Why the site's vectors cannot be reused (None: they can): ``embed`` (texts ->
    int8 vectors, scales: the model here) gives a random sample of the texts this build
    would take from the site (``wanted``: the chunks' embedding inputs) other vectors.
    Byte-identical is expected (the model and its export are pinned); one int8 step is
    allowed per value, for another CPU's float rounding."""
    import math
    import random

    at = {t: i for i, t in enumerate(warm.texts)}
    reused = sorted({t for t in wanted if t in at})
    if not reused:
        return None
    rng = rng or random.SystemRandom()
    picked = rng.sample(reused, min(len(reused), SAMPLE_MAX, max(SAMPLE, math.ceil(SAMPLE_SHARE * len(reused)))))
    vectors, scales = embed(picked)
    rows = [at[t] for t in picked]
    theirs = warm.vectors[rows].astype(np.int16)
    steps = np.abs(theirs - vectors.astype(np.int16)).max(axis=1)
    near = np.isclose(warm.scales[rows], scales, rtol=1e-2, atol=0)
    wrong = int(np.count_nonzero((steps > 1) | ~near))
    warm.checked = len(picked)
    if wrong:
        return (f"{wrong} of {len(picked)} sampled chunk vectors are not what this model gives their texts "
                "(the published vectors do not belong to them)")
    return None
