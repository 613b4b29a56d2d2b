"""The indexing step of a build: chunks -> BM25 + int8 vectors (+ query encoder) -> the static assets.

Called once per build by ``index_step.write_site_index`` with every page's chunks
in index order; the format itself is ``search/format.py``.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ..agents.markdown import LlmsSite, site_files
from ..chunk import Chunk
from ..model import filehash
from ..model.embed import Progress, embed_cached, embed_chunks, embedding_input, embedding_text, load_tokenizer
from ..search import static_encoder
from ..search.bm25 import build_index, document_tokens
from ..search.format import Layout, read_json
from ..search.shards import ShardError, check_binary_shard, dumps
from . import carry, encoder_fit
from .carry import Carried
from .embed_ahead import EmbedAhead
from .encoder_fit import TrainingTooSmall, train_encoder
from .write import amend_manifest, write_assets

__all__ = ["write_index"]

_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

#: An incremental build keeps what the previous build fitted to the corpus, the static
#: encoder and the dense clusters' centroids (and the mined suggestions), until the chunks
#: changed since the fit (added or removed: ``index_step.changed_chunks``) exceed this share
#: of the site: fitting costs seconds on every edit (at 25k chunks: the encoder 5 s, the
#: k-means 1.5 s; at 250, the encoder 1-3 s). A build that writes every page (a clean
#: build, -E, a configuration change) always fits them.
REFIT_SHARE = 0.05
#: How a site's index is cut into shards (``search.format.Layout``, chosen by measurement).
LAYOUT = Layout()


def write_index(chunks: list[Chunk], *, urls: dict[str, str], out_dir: Path, model_dir: Path, embeddings: bool,
                settings: dict, query_encoder: str = "both", batch_size: int = 32, threads: int | None = None,
                progress: Progress | None = None, encoder_progress: Progress | None = None,
                keyword_script: bool = True, changed_chunks: int | None = None, work_dir: Path | None = None,
                carried: Carried | None = None, inputs: str | None = None, suggestions=("auto",),
                note=None, llms: LlmsSite | None = None, warn=None, warm_start: str = "",
                ahead: EmbedAhead | None = None, reranker_dir: Path | None = None) -> dict:
    """Index the chunks (in the given order) and write the assets; returns the manifest.

    ``urls``: docname -> page URL (the builder's target URI). ``query_encoder``: "static"
    (the fitted encoder only: no model in the site), "model" (the full model only) or
    "both" (the encoder answers first, the model takes over once loaded). ``note`` gets
    one-line reports. ``keyword_script``: also write ``manifest.js`` for pages opened
    from ``file://`` (pages with the search bar). ``changed_chunks``: on an incremental
    build, how many chunks were added or removed since the previous index (an edited chunk
    is one of each); None when every page was written. ``work_dir``: where a build leaves what the next one
    starts from (Sphinx's doctree directory, ``carry.py``; None: nothing). ``carried``: what
    the previous build left there: its chunks' tokens and vectors are not computed again.
    ``ahead``: the worker that embedded chunks while the pages were read and written
    (``embed_ahead.py``); it is stopped before the chunks are embedded here.
    ``inputs``: the digest of the pages and configuration indexed, kept in the manifest
    (``index_step.index_inputs``). ``suggestions``: ``sphinx_rag_suggestions`` (the maintainer's
    questions, "auto" standing for the mined ones, ``suggest.py``). ``llms``: write
    llms.txt, llms-full.txt and a Markdown twin of every page for coding agents
    (``agents/markdown.py``), in the same publish (None: none). ``warm_start``: the URL of the
    published site, whose vectors and encoder a build without a previous index in
    ``out_dir`` reuses (``warm_start.py``); ``warn`` gets its one-line warnings.
    ``reranker_dir``: the cross-encoder published beside the model (``search/cross_encoder.py``;
    None: none).
    """
    records = [c.to_record(urls[c.doc]) for c in chunks]
    agents, pages = site_files(records, llms) if llms is not None else (None, None)
    known = carried.tokens_by_text() if carried is not None else {}
    tokens = [known[c.text] if c.text in known else document_tokens(c.text) for c in chunks]
    bm25 = build_index(tokens)
    vectors = scales = info = encoder = centroids = None
    if (embeddings and query_encoder != "model" and 0 < len(chunks) < encoder_fit.MIN_CHUNKS
            and query_table(model_dir) is None):  # no fit, and no table to stand in for one
        if note is not None:
            note(_too_small(len(chunks), query_encoder, model_dir))
        embeddings = query_encoder != "static"  # no encoder and no model to ship: keyword search only
        query_encoder = "model"
    if embeddings and chunks:
        info = read_json(Path(model_dir) / "model_info.json")
        previous = _previous_manifest(out_dir)
        warm = None
        if warm_start and not previous:  # no index of its own to start from: the published one
            from .warm_start import load as load_warm_start

            warm = load_warm_start(warm_start, info, settings.get("chunker"), note=note or _quiet, warn=warn or _quiet,
                                   fit=_fit_digest(info, model_dir) if query_encoder != "model" else None)
            if warm is not None:
                warm = _checked(warm, chunks, model_dir, threads, warn or _quiet)
        vectors, scales, reused = _chunk_vectors(chunks, model_dir, info, carried, warm, _stopped(ahead, note),
                                                 batch_size=batch_size, threads=threads, progress=progress, note=note)
        centroids = _kept_centroids(out_dir, previous, info, changed_chunks, len(chunks))
        fitted = ""
        if query_encoder != "model":
            previous_encoder, changed = _previous_encoder(out_dir, previous), changed_chunks
            if warm is not None:  # chunks changed since the site's fit, not since this directory's
                previous_encoder, changed = warm.encoder or (None, {}), warm.changed([c.text for c in chunks])
            encoder = _query_encoder(chunks, vectors, scales, model_dir, info, previous_encoder,
                                     batch_size=batch_size, threads=threads, progress=encoder_progress, note=note,
                                     changed_chunks=changed, say_kept=warm is None, published=warm is not None)
            if encoder is None:
                query_encoder = "model"
            else:
                fitted = _encoder_outcome(encoder, previous_encoder, warm, changed)
        if warm is not None and note is not None:
            note(warm.report(reused, len(chunks), fitted))
    settings = {**settings, "query_encoder": query_encoder if vectors is not None else None}
    shards = dict(carried.shards) if carried is not None else {}
    previous_suggestions = (_previous_manifest(out_dir).get("settings") or {}).get("suggestions") or []
    manifest = write_assets(out_dir, chunks=records, bm25=bm25, vectors_i8=vectors, scales=scales,
                            model_dir=model_dir if query_encoder != "static" else None, model_info=info,
                            encoder=encoder, settings=settings, keyword_script=keyword_script,
                            kept_centroids=centroids, inputs=inputs, layout=LAYOUT, shard_memo=shards,
                            site_files=agents, pages=pages, reranker_dir=reranker_dir)
    shown, suggestions_stale = _suggested_questions(
        out_dir, records, list(suggestions), previous_suggestions,
        _since(carried.suggestions_stale if carried is not None else None, changed_chunks))
    if shown:
        manifest = amend_manifest(out_dir, manifest, keyword_script, settings={**manifest["settings"], "suggestions": shown})
    if work_dir is not None:
        carry.save(work_dir, dumps(manifest), records, tokens, info, vectors, scales, shards,
                   suggestions_stale=suggestions_stale)
    return manifest


def _since(stale: int | None, changed_chunks: int | None) -> int | None:
    """Chunks changed since the suggestions were verified (None: unknown, verify them)."""
    return None if stale is None or changed_chunks is None else stale + changed_chunks


def _suggested_questions(out_dir: Path, records: list[dict], wanted: list[str], previous: list,
                         stale: int | None) -> tuple[list[list[str]], int]:
    """The empty dialog's questions, ``[question, url]`` (url "": the maintainer's own):
    the maintainer's in order, "auto" replaced by the mined ones that the index answers
    (``suggest.py``); and the chunks changed since those were verified. An incremental
    build keeps the previous mined ones whose pages are still indexed while the chunks
    changed since they were verified (``stale``, kept in ``carry.py``) are within
    ``REFIT_SHARE``: verifying costs a search each (0.6 s of a 250-chunk site's edit, 3 s
    of scikit-learn's)."""
    if "auto" not in wanted:
        return [[q, ""] for q in wanted], 0
    urls = {r["url"] for r in records}
    urls |= {url.split("#", 1)[0] for url in urls}  # a page title's question names its page
    mined = [s for s in previous if isinstance(s, list) and len(s) == 2 and s[1]]
    if not (mined and stale is not None and stale <= REFIT_SHARE * len(records)
            and all(url in urls for _, url in mined)):
        from ..search.retrieve import Searcher
        from .suggest import choose

        mined = [[s.question, s.url] for s in choose(records, Searcher(out_dir))] if records else []
        stale = 0
    out = []
    for q in wanted:
        out += mined if q == "auto" else [[q, ""]]
    return out, stale


def _quiet(message: str):
    pass


def _too_small(n_chunks: int, query_encoder: str, model_dir: Path) -> str:
    """The one line a site too small for a static encoder gets: what its readers get instead."""
    head = (f"[sphinx-rag] no static query encoder: {n_chunks} chunks are too few to fit one "
            f"(at least {encoder_fit.MIN_CHUNKS}), so the fit is skipped; ")
    if query_encoder == "static":
        return head + ("sphinx_rag_query_encoder = 'static' ships no model, so readers get keyword search only "
                       "(set it to 'both' for semantic search with the full model)")
    size = (Path(model_dir) / "model.onnx").stat().st_size / 1e6
    return head + f"readers get keyword results at once and semantic ones once the full model ({size:.0f} MB) is loaded"


def _stopped(ahead: EmbedAhead | None, note) -> dict:
    """What the worker embedding ahead made, once it is stopped ({}: there was none)."""
    if ahead is None:
        return {}
    done = ahead.stop()
    if ahead.error and note is not None:
        note(f"[sphinx-rag] embedding while the pages were read and written stopped early: {ahead.error}")
    return done


def _chunk_vectors(chunks: list[Chunk], model_dir: Path, info: dict, carried: Carried | None, warm, early: dict, *,
                   batch_size, threads, progress, note) -> tuple[np.ndarray, np.ndarray, int]:
    """int8 vectors and scales of the chunks, and how many came from the published site:
    its vector for each text it has (``warm_start.py``), then ``embed_chunks`` for the rest
    (the previous build's vectors, the embedding cache, those embedded ahead, the model)."""
    known = _known_vectors(carried, info)
    if warm is None or not len(warm.texts):
        vectors, scales = embed_chunks(chunks, model_dir, batch_size=batch_size, threads=threads,
                                       progress=progress, note=note, known=known, ahead=early)
        return vectors, scales, 0
    at = {t: i for i, t in enumerate(warm.texts)}
    rows = np.fromiter((at.get(embedding_input(c), -1) for c in chunks), dtype=np.int64, count=len(chunks))
    have = rows >= 0
    vectors = np.zeros((len(chunks), warm.vectors.shape[1]), dtype=np.int8)
    scales = np.zeros(len(chunks), dtype=np.float32)
    vectors[have], scales[have] = warm.vectors[rows[have]], warm.scales[rows[have]]
    rest = np.flatnonzero(~have)
    if len(rest):
        vectors[rest], scales[rest] = embed_chunks([chunks[i] for i in rest], model_dir, batch_size=batch_size,
                                                   threads=threads, progress=progress, note=note, known=known,
                                                   ahead=early)
    return vectors, scales, int(have.sum())


def _encoder_outcome(encoder: tuple[bytes, dict], previous: tuple[bytes | None, dict], warm,
                     changed: int | None) -> str:
    """What the warm start's report says of the encoder: reused, kept or fitted, and why."""
    if previous[0] is not None and encoder[0] == previous[0]:
        fields = encoder[1]
        return f"encoder kept ({fields['stale_chunks']:,} chunks changed since its fit)" if "stale_chunks" in fields \
            else "encoder reused"
    if warm is not None and warm.encoder_note:
        return f"encoder fitted ({warm.encoder_note})"
    if previous[0] is not None and changed is not None:
        return f"encoder fitted ({changed:,} chunks changed since the site's, over {REFIT_SHARE:.0%})"
    return "encoder fitted"


def _known_vectors(carried: Carried | None, info: dict):
    """The previous build's vectors by embedded text, if they come from the same model."""
    if carried is None or carried.vectors is None or carried.model != info:
        return None
    return [embedding_text(r["kind"], r["text"]) for r in carried.records], carried.vectors, carried.scales


def _stale_chunks(entry: dict, changed_chunks: int | None, n_chunks: int) -> int | None:
    """The chunks changed since a fit if it is kept (``REFIT_SHARE``), else None: fit again."""
    if changed_chunks is None:
        return None
    stale = entry.get("stale_chunks", 0) + changed_chunks
    return stale if stale <= REFIT_SHARE * n_chunks else None


def _kept_centroids(out_dir: Path, previous: dict, info: dict, changed_chunks: int | None,
                    n_chunks: int) -> tuple[bytes, int] | None:
    """The previous build's centroid shard and the chunks changed since its k-means, when an
    incremental build keeps them (same model and layout, ``REFIT_SHARE``); else None."""
    entry = previous.get("dense") or {}
    if previous.get("model") != info or previous.get("layout") != asdict(LAYOUT) or "centroids" not in entry:
        return None
    stale = _stale_chunks(entry, changed_chunks, n_chunks)
    if stale is None or previous.get("counts", {}).get("clusters", 0) < 2:  # one cluster: nothing was fitted
        return None
    try:
        return check_binary_shard(entry["centroids"], (Path(out_dir) / entry["centroids"]).read_bytes()), stale
    except (OSError, ShardError):
        return None


def _query_encoder(chunks, vectors, scales, model_dir: Path, info: dict, previous_encoder: tuple[bytes | None, dict],
                   *, batch_size, threads, progress, note, changed_chunks: int | None = None,
                   say_kept: bool = True, published: bool = False) -> tuple[bytes, dict] | None:
    """The static encoder's asset and its manifest fields, or None (too few chunks).

    ``previous_encoder``: the previous index's encoder and manifest entry (this output
    directory's, or the published site's on a warm start). An unchanged corpus reuses it
    (same digest): the fit is deterministic, so it would give the same bytes. A build that
    changed few chunks since keeps it too (``REFIT_SHARE``), counting them in ``stale_chunks``
    (``say_kept``: and says so; the warm start's report says it otherwise). ``published``:
    it comes from another site, and is reused only if ``_trusted_encoder`` says so.
    """
    texts = [c.text for c in chunks]
    titles = [c.title for c in chunks]
    fit = _fit_digest(info, model_dir)
    digest = _digest(texts, titles, vectors, scales, fit)
    previous, entry = previous_encoder
    if previous is not None and published and (entry.get("digest") == digest or entry.get("fit") == fit):
        problem = _trusted_encoder(previous, texts, vectors, scales, model_dir, exact=entry.get("digest") == digest,
                                   threads=threads)
        if problem is not None:
            if note is not None:
                note(f"[sphinx-rag] the published static query encoder is not reused ({problem}): fitting it here")
            previous, entry = None, {}
    if previous is not None and entry.get("digest") == digest:
        return previous, {"digest": digest, "fit": fit}
    stale = _stale_chunks(entry, changed_chunks, len(chunks))
    if previous is not None and entry.get("fit") == fit and stale is not None:
        if note is not None and say_kept:
            note(f"[sphinx-rag] static query encoder kept from the previous build: {stale} of {len(chunks)} "
                 f"chunks changed since its fit (it is fitted again past {REFIT_SHARE:.0%}, "
                 f"and by every build that writes all pages)")
        return previous, {"digest": entry["digest"], "fit": fit, **({"stale_chunks": stale} if stale else {})}
    start = time.perf_counter()
    try:
        encoder = fit_static_encoder(texts, titles, vectors.astype(np.float32) * scales[:, None], model_dir, info,
                                     batch_size=batch_size, threads=threads, progress=progress, note=note)
    except TrainingTooSmall as exc:
        if note is not None:
            note(f"[sphinx-rag] no static query encoder: {exc}; readers get semantic results from the full model")
        return None
    data = encoder.to_bytes()
    if note is not None:
        how = f"fitted in {time.perf_counter() - start:.1f} s"
        if len(chunks) < encoder_fit.MIN_CHUNKS:  # only a model with a query table gets here
            how = (f"from the model's query table ({len(chunks)} chunks are too few to correct it, at least "
                   f"{encoder_fit.MIN_CHUNKS})")
        note(f"[sphinx-rag] static query encoder {how} ({len(data) / 1e6:.2f} MB, {len(encoder.token_ids)} tokens, "
             f"rank {encoder.rank})")
    return data, {"digest": digest, "fit": fit}


def _trusted_encoder(data: bytes, texts: list[str], vectors: np.ndarray, scales: np.ndarray, model_dir: Path, *,
                     exact: bool, threads) -> str | None:
    """Why another site's encoder may not be reused here (None: it may): without this
    model's query table there is nothing to check it against, so it is fitted again."""
    table = query_table(model_dir)
    if table is None:
        return "this model has no query table to check it against"
    tokenizer = load_tokenizer(model_dir)
    special = [i for i in (tokenizer.token_to_id(t) for t in _SPECIAL_TOKENS) if i is not None]

    def embed(queries: list[str]) -> np.ndarray:
        q, s = embed_cached(queries, model_dir, threads=threads)
        return q.astype(np.float32) * s[:, None]

    return encoder_fit.check_published(data, table, texts, vectors.astype(np.float32) * scales[:, None],
                                          lambda batch: [e.ids for e in tokenizer.encode_batch(batch)], embed,
                                          special, exact=exact)


def _checked(warm, chunks: list[Chunk], model_dir: Path, threads, warn):
    """The warm start, or None when its vectors fail ``warm_start.check_sample`` (one warning)."""
    from .warm_start import check_sample

    problem = check_sample(warm, [embedding_input(c) for c in chunks],
                           lambda texts: embed_cached(texts, model_dir, threads=threads))
    if problem is None:
        return warm
    warn(f"[sphinx-rag] warm start from {warm.url} refused: {problem}; building without it")
    return None


def fit_static_encoder(texts: list[str], titles: list[str], docs: np.ndarray, model_dir: Path, info: dict, *,
                       batch_size: int = 32, threads: int | None = None, progress: Progress | None = None,
                       note=None, **params) -> static_encoder.StaticEncoder:
    """Fit the static encoder on the chunks' texts and titles and their float vectors
    ``docs``, with the model's tokenizer and its embeddings (cached) as the targets, and
    the model's query table as the prior when it has one (``query_table``). ``params`` go
    to ``train_encoder`` (the benchmarks vary them); raises TrainingTooSmall."""
    tokenizer = load_tokenizer(model_dir)
    vocab = (Path(model_dir) / "vocab.txt").read_bytes()
    special = [i for i in (tokenizer.token_to_id(t) for t in _SPECIAL_TOKENS) if i is not None]

    def tokenize(batch: list[str]) -> list[list[int]]:
        return [e.ids for e in tokenizer.encode_batch(batch)]

    def embed(queries: list[str]) -> np.ndarray:
        def report(cached: int, total: int, todo: int, _early: int):
            if note is not None and todo:
                note(f"[sphinx-rag] {cached} of {total} pseudo-query vectors from the embedding cache; "
                     f"embedding {todo}")
        q, s = embed_cached(queries, model_dir, batch_size=batch_size, threads=threads, progress=progress,
                            report=report)
        return q.astype(np.float32) * s[:, None]

    params.setdefault("prior", query_table(model_dir))
    return train_encoder(texts, titles, docs, tokenize, embed, vocab, special,
                         max_seq_length=int(tokenizer.truncation["max_length"]),
                         lowercase=bool(info.get("do_lower_case", True)), note=note, **params)


_TABLES: dict[tuple, object] = {}


def query_table(model_dir: Path):
    """The model's general query table (``query_table.TABLE_FILE`` beside model.onnx), or
    None: a model exported here has none, and its fit starts from nothing."""
    from .query_table import TABLE_FILE, QueryTable

    path = Path(model_dir) / TABLE_FILE
    try:
        stat = path.stat()
    except OSError:
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _TABLES:
        data = path.read_bytes()
        _TABLES.clear()
        _TABLES[key] = QueryTable.from_bytes(data)
    return _TABLES[key]


def _table_digest(model_dir: Path) -> str | None:
    """The query table's hash (None: the model has none), without reading the table
    when it is the one the last build hashed (``model/filehash.py``): every build names its
    fit by it, and only a build that fits reads the table."""
    from .query_table import TABLE_FILE

    try:
        return filehash.sha256(Path(model_dir) / TABLE_FILE)[:16]
    except OSError:
        return None


def _fit_digest(model_info, model_dir: Path | None = None) -> str:
    """What an encoder's fit depends on besides the corpus: its parameters, the model, and
    the query table it starts from (its hash)."""
    params = (encoder_fit.SEED, encoder_fit.SAMPLING, encoder_fit.MAX_QUERIES, encoder_fit.QUERIES_PER_CHUNK,
              encoder_fit.RANK, encoder_fit.RIDGE, encoder_fit.CG_ITERATIONS, encoder_fit.MAX_ROWS,
              static_encoder.FORMAT)
    table = _table_digest(model_dir) if model_dir is not None else None
    if table is not None:
        params += ("prior", encoder_fit.PRIOR_QUERIES_PER_CHUNK, encoder_fit.PRIOR_RIDGE, table)
    return hashlib.sha256(repr((params, sorted(model_info.items()))).encode()).hexdigest()[:32]


def _digest(texts, titles, vectors, scales, fit: str) -> str:
    h = hashlib.sha256()
    h.update(fit.encode())
    for t in (*texts, *titles):
        h.update(t.encode("utf-8") + b"\0")
    h.update(np.ascontiguousarray(vectors).tobytes() + np.ascontiguousarray(scales).tobytes())
    return h.hexdigest()[:32]


def _previous_manifest(out_dir: Path) -> dict:
    """The manifest of the index this build replaces ({}: none, or unreadable)."""
    try:
        manifest = read_json(Path(out_dir) / "manifest.json")
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _previous_encoder(out_dir: Path, manifest: dict) -> tuple[bytes | None, dict]:
    """The previous build's encoder and its manifest entry ((None, {}): none, or its file is not intact)."""
    try:
        entry = manifest.get("encoder") or {}
        return check_binary_shard(entry["file"], (Path(out_dir) / entry["file"]).read_bytes()), entry
    except (OSError, ValueError, KeyError, AttributeError, ShardError):
        return None, {}
