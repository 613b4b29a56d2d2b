"""Sphinx event handlers: the only module that wires sphinx-rag into a build.

read phase (parallel-safe):  autodoc events keep each page's raw docstrings and
                             signatures on the environment (purged/merged per doc).
                             A serial read also chunks each page, only to embed
                             its texts ahead on the idle core (``index/embed_ahead.py``).
write phase (main process):  ``doctree-resolved`` turns each written page into
                             chunks (references and ``only`` nodes are resolved by
                             then, so chunk text reads like the HTML page).
build-finished (HTML only):  pages not rewritten keep their chunks from the previous
                             index (as Sphinx's own search index does); pages whose
                             chunks cannot be had that way (no, an unreadable or an
                             older index, or a build stopped before its index step) are
                             re-chunked from their doctrees; then weights, BM25,
                             embeddings and ``_static/sphinx_rag/index/``. A build
                             that wrote no page and changed no input (the manifest's
                             ``inputs``) keeps the index as it is.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.util import logging
from sphinx.util.display import status_iterator

from .agent_files import make_twin, page_twins
from .chunk import CHUNKER_VERSION, Chunk
from .chunk.page import chunk_page
from .config import CONFIG, ConfigError, unknown_names, validate
from .index import carry
from .index_step import (
    OTHER_CHUNKER,
    build_threads,
    changed_chunks,
    check_golden,
    index_inputs,
    index_is_current,
    previous_chunks,
    warm_start_url,
    without_cyclic_gc,
    write_site_index,
)
from .locate import deferred_location
from .model import filehash
from .model.embed import embedding_input
from .model.export import ExportUnavailable
from .pages import excluded, gallery_source, page_weight
from .search.index import ASSET_DIR, read_json
from .searchbar import copy_model_runtime, wants_search_bar

logger = logging.getLogger(__name__)

ENV_KEY = "sphinx_rag_docstrings"  # env attribute: {docname: {fullname: ApiSource}}
#: The line numpydoc adds to the lines it has rewritten (numpydoc.numpydoc.DEDUPLICATION_TAG)
NUMPYDOC_DONE = "!! processed by numpydoc !!"


def _is_html(app) -> bool:
    return getattr(app.builder, "format", "") == "html"


class ConfigStop(SystemExit):
    """Stops the build after a one-line error. Sphinx prints a crash report (traceback,
    "please open an issue at sphinx-doc") for any exception, its own ConfigError included;
    a SystemExit passes through its event handlers and its error handler untouched."""

    def __init__(self, message: str):
        logger.error(message)
        super().__init__(2)
        self.message = message

    def __str__(self):
        return self.message


def on_config_inited(app, config):
    try:
        values = validate({o.name: config[o.name] for o in CONFIG})
    except ConfigError as exc:
        raise ConfigStop(str(exc)) from None
    for name, value in values.items():
        if value != config[name]:
            config[name] = value  # normalised ("RRF" -> "rrf")
    try:
        warm_start_url(config)  # $SPHINX_RAG_WARM_START is checked now, not after the pages are written
    except ValueError as exc:
        raise ConfigStop(str(exc)) from None
    for message in unknown_names(getattr(config, "_raw_config", {})):
        logger.warning(message, type="sphinx_rag", subtype="config")
    _exclude_output_dir(app, config)


def _exclude_output_dir(app, config):
    """Output is never read as sources: the Markdown twins written for coding agents
    (``*.html.md``) would be pages of the next build wherever ``.md`` is a source suffix
    (MyST) and the output lies inside the sources, this builder's or another's (``make
    html`` then ``make singlehtml``); Sphinx excludes only what ``exclude_patterns`` names."""
    wanted = ["**.html.md"]
    for directory in (app.outdir, app.doctreedir):
        try:
            relative = Path(directory).resolve().relative_to(Path(app.srcdir).resolve()).as_posix()
        except ValueError:
            continue  # outside the sources
        if relative not in (".", ""):
            wanted.append(relative)
    missing = [p for p in wanted if p not in config.exclude_patterns]
    if missing:
        config.exclude_patterns = [*config.exclude_patterns, *missing]


class _State:
    """Per-build objects (tokenizer, model dir) and the chunks of the pages written."""

    def __init__(self):
        self.model_dir: Path | None = None
        self.reranker_dir: Path | None = None  # published with the model (sphinx_rag_rerank)
        self.budget = 256
        self.fresh: dict[str, list[Chunk]] = {}
        self.pending = False  # the pending marker is written (pages are being written)
        self.interrupted = False  # a previous build stopped between its pages and its index
        self.federation: list[dict] = []  # the other sites the dialog searches (federation.py)
        self.ahead = None  # index.embed_ahead.EmbedAhead: chunks embedded while pages are read and written
        self.ahead_checked = False  # whether this build decided to embed ahead
        self.twins: dict = {}  # docname -> agents.twins.Twin: the Markdown twins of the pages written
        self.twins_only = False  # doctree-resolved makes a twin only (pages resolved for their twin)
        self.narrative_docstrings = 0  # docstrings numpydoc could not parse, in the pages chunked now


def on_builder_inited(app):
    state = app.sphinx_rag = _State()
    if not _is_html(app):
        return
    filehash.use_store(app.doctreedir)  # the model's hashes, as the last build found them
    try:
        _load_model(app, state)
    except ExportUnavailable as exc:  # what to install, or the settings that need no export
        raise ConfigStop(f"{exc}; or set sphinx_rag_model to a directory made by `sphinx-rag export-model` where "
                         "they are installed, or sphinx_rag_embeddings = False (keyword search only)") from None
    except RuntimeError as exc:  # the model cannot be found or exported: a config problem, said in one line
        value = repr(app.config.sphinx_rag_model)
        raise ConfigStop(str(exc) if value in str(exc) else f"{exc} (sphinx_rag_model = {value})") from None
    filehash.save()


#: What a build imports besides Sphinx (dependencies of sphinx-rag itself, not extras):
#: checked when the build starts, so that a broken install stops with one line, not in
#: Sphinx's crash report once every page is written.
BUILD_MODULES = ("numpy", "tokenizers")
EMBEDDING_MODULES = ("onnxruntime",)


def _require(modules: tuple[str, ...]):
    import importlib.util

    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise ConfigStop(f"[sphinx-rag] this build needs the Python package {module!r}, which is not installed "
                             f"(a dependency of sphinx-rag): pip install {module}, or reinstall sphinx-rag")


def _load_model(app, state):
    """The exported model (or, keyword-only, its tokenizer) and the tokenizer that sizes
    chunks. The default model comes ready from its package (no export, no torch)."""
    cfg = app.config
    _require(BUILD_MODULES + (EMBEDDING_MODULES if cfg.sphinx_rag_embeddings else ()))
    from .model.cache import cached_model_dir
    from .model.embed import token_counter
    from .model.source import is_model_dir, packaged_model_dir, read_sentence_transformers_config, resolve_model_source

    state.interrupted = _pending_marker(app).exists()
    if cfg.sphinx_rag_embeddings:
        cache = Path(cfg.sphinx_rag_model_cache).expanduser() if cfg.sphinx_rag_model_cache else None
        started = time.perf_counter()
        state.model_dir = cached_model_dir(cfg.sphinx_rag_model, cache, announce=logger.info)
        if time.perf_counter() - started > 2:
            logger.info(f"[sphinx-rag] model exported to {state.model_dir}")
        max_len = int(read_json(state.model_dir / "model_info.json")["max_seq_length"])
        if cfg.sphinx_rag_rerank:
            state.reranker_dir = _reranker_dir()
    else:  # keyword-only: the model's tokenizer still sizes chunks; no export, no torch
        state.model_dir = packaged_model_dir(cfg.sphinx_rag_model) or resolve_model_source(cfg.sphinx_rag_model)
        if is_model_dir(state.model_dir):
            max_len = int(read_json(state.model_dir / "model_info.json")["max_seq_length"])
        else:
            max_len = int(read_sentence_transformers_config(state.model_dir)["max_seq_length"])
    state.count = token_counter(state.model_dir)
    state.budget = cfg.sphinx_rag_chunk_tokens or max_len


def _reranker_dir() -> Path | None:
    """The reranker of the default model's package, checked against its pins; a missing or
    mismatched file is one warning (the site keeps the fused order: nothing else changes)."""
    from .model.source import packaged_reranker_dir

    directory, why = packaged_reranker_dir()
    if directory is None and why:
        logger.warning(f"[sphinx-rag] no reranker is published ({why}): results stay in the fused order; "
                       "reinstall sphinx-rag-minilm, or set sphinx_rag_rerank = False",
                       type="sphinx_rag", subtype="reranker")
    return directory


# -- read phase ---------------------------------------------------------------

def _page_sources(env) -> dict:
    store = getattr(env, ENV_KEY, None)
    if store is None:
        store = {}
        setattr(env, ENV_KEY, store)
    return store.setdefault(env.docname, {})


def on_autodoc_signature(app, what, name, obj, options, signature, return_annotation):
    _page_sources(app.env).setdefault(name, {})["signature"] = signature


def on_autodoc_docstring(app, what, name, obj, options, lines):
    """Runs before numpydoc rewrites the lines, so we get the raw docstring. A docstring of
    several parts (a class's and its ``__init__``'s) comes one part per event; the same
    object documented again on the page (an autosummary row, then its ``automethod``)
    sends its parts again, and numpydoc may have rewritten them by then: those are not
    added (twice the Parameters section is a docstring numpydoc refuses)."""
    text = "\n".join(lines)
    if NUMPYDOC_DONE in text:
        return
    source = _page_sources(app.env).setdefault(name, {})
    previous = source.get("docstring", "")
    if text and (text == previous or f"\n\n{text}\n\n" in f"\n\n{previous}\n\n"):
        return
    source["docstring"] = (previous + "\n\n" if previous else "") + text
    source["what"] = what
    source["location"] = deferred_location(obj)  # a class's line: only if a warning names it


def on_env_purge_doc(app, env, docname):
    getattr(env, ENV_KEY, {}).pop(docname, None)


def on_env_merge_info(app, env, docnames, other):
    theirs = getattr(other, ENV_KEY, {})
    mine = getattr(env, ENV_KEY, None)
    if mine is None:
        mine = {}
        setattr(env, ENV_KEY, mine)
    mine.update({d: theirs[d] for d in docnames if d in theirs})


def on_doctree_read(app, doctree):
    """Serial reads: chunk each page as read too, only to embed its texts ahead (those
    whose references resolve to other words are embedded again at the index step)."""
    state = getattr(app, "sphinx_rag", None)
    docname = app.env.docname
    if (state is None or state.model_dir is None or app.parallel > 1  # parallel reads: in forked processes
            or excluded(app, docname)):
        return
    if _ahead(app, state) is None:
        return
    try:
        chunks = chunk_page(doctree, doc=docname, count=state.count, budget=state.budget,
                            overlap=app.config.sphinx_rag_chunk_overlap,
                            docstrings=getattr(app.env, ENV_KEY, {}).get(docname, {}),
                            gallery_source=gallery_source(app, docname), source_path=str(app.env.doc2path(docname)))
    except Exception:  # noqa: BLE001 - a guess only: the page is chunked (and any fault reported) as written
        return
    state.ahead.add([embedding_input(c) for c in chunks])


# -- write phase ----------------------------------------------------------------

def on_doctree_resolved(app, doctree, docname):
    """Chunk each page as it is written (always in the main process)."""
    state = getattr(app, "sphinx_rag", None)
    if state is None or state.model_dir is None or excluded(app, docname):
        return
    if app.config.sphinx_rag_llms_txt:
        make_twin(app, state, doctree, docname)
    if state.twins_only:
        return
    if not state.pending:
        _pending_marker(app).parent.mkdir(parents=True, exist_ok=True)
        _pending_marker(app).touch()
        state.pending = True
    chunks = state.fresh[docname] = chunk_page(
        doctree, doc=docname, count=state.count, budget=state.budget, overlap=app.config.sphinx_rag_chunk_overlap,
        docstrings=getattr(app.env, ENV_KEY, {}).get(docname, {}), gallery_source=gallery_source(app, docname),
        source_path=str(app.env.doc2path(docname)),
        warn=lambda message: _narrative_docstring(app, docname, message),
    )
    if _ahead(app, state) is not None:
        state.ahead.add([embedding_input(c) for c in chunks])


def _narrative_docstring(app, docname: str, message: str):
    """A docstring numpydoc could not parse, chunked as narrative text instead: no error in
    the user's docs (Sphinx and its extensions accepted it), so a `-W` build must not fail
    for it. Listed with ``-v`` and counted at the end of the build; a warning each only
    with ``sphinx_rag_docstring_warnings``."""
    if app.config.sphinx_rag_docstring_warnings:
        logger.warning(message, location=docname, type="sphinx_rag", subtype="docstring")
    else:
        app.sphinx_rag.narrative_docstrings += 1
        logger.verbose(message, location=docname)


def narrative_docstrings_line(count: int) -> str:
    """The end-of-build line for the docstrings chunked as narrative text ("" for none)."""
    if not count:
        return ""
    noun, it = ("docstring", "it") if count == 1 else ("docstrings", "them")
    return (f"[sphinx-rag] {count} {noun} chunked as narrative text (numpydoc could not parse {it}); "
            f"`-v` lists {it}, sphinx_rag_docstring_warnings = True makes {it} warnings")


#: "0" turns off embedding while pages are written (benchmarks compare with and without).
EMBED_AHEAD_ENV = "SPHINX_RAG_EMBED_AHEAD"


def _ahead(app, state):
    """The build's ``EmbedAhead``, started (or found not wanted) by the first page chunked."""
    if not state.ahead_checked:
        state.ahead_checked = True
        state.ahead = _embed_ahead(app)
    return state.ahead


def _embed_ahead(app):
    """What embeds chunks while Sphinx reads and writes the rest (``index/embed_ahead.py``), or
    None: no embeddings, one core, or Sphinx writes pages on several processes (no core
    is idle then)."""
    threads = build_threads(app.config)
    if (not app.config.sphinx_rag_embeddings or getattr(app.builder, "parallel_ok", False)
            or threads < 2 or os.environ.get(EMBED_AHEAD_ENV, "1") == "0"):
        return None
    from .index.embed_ahead import EmbedAhead
    from .index.warm_start import offers_vectors
    from .model.embed import cache_path

    model_dir = app.sphinx_rag.model_dir
    site = warm_start_url(app.config)
    published = None
    if site and not (Path(app.outdir) / ASSET_DIR / "manifest.json").is_file():  # the index step tries it
        info = read_json(model_dir / "model_info.json")
        published = lambda: offers_vectors(site, info, CHUNKER_VERSION)  # noqa: E731
    return EmbedAhead(model_dir, batch_size=app.config.sphinx_rag_embed_batch_size, cache_path=cache_path(model_dir),
                      not_needed=published, threads=threads - 1)  # Sphinx keeps one core


def _chunks_of_unwritten_pages(app, docnames: list[str]):
    """Resolve the doctrees of pages this build did not write: that emits doctree-resolved,
    so ``on_doctree_resolved`` chunks them as if they had been written."""
    for docname in status_iterator(docnames, "re-chunking pages... ", "darkgreen", len(docnames), app.verbosity):
        app.env.get_and_resolve_doctree(docname, app.builder, tags=app.builder.tags)


def _pending_marker(app) -> Path:
    """Exists from the first page written until the index is published: if a build stops
    in between, the next one cannot trust the pages Sphinx considers done."""
    return Path(app.doctreedir) / "sphinx_rag.pending"


def on_build_finished(app, exception):
    try:
        _build_finished(app, exception)
        filehash.save()
        state = getattr(app, "sphinx_rag", None)
        if exception is None and state is not None and state.narrative_docstrings:
            logger.info(narrative_docstrings_line(state.narrative_docstrings))
    finally:
        ahead = getattr(app, "sphinx_rag", None) and app.sphinx_rag.ahead
        if ahead is not None:  # the index step stopped it, unless it did not run
            ahead.stop()


def _build_finished(app, exception):
    if exception is not None or not _is_html(app) or app.sphinx_rag.model_dir is None:
        return
    cfg = app.config
    out_dir = Path(app.outdir) / ASSET_DIR
    fresh = app.sphinx_rag.fresh
    wanted = [d for d in sorted(app.env.found_docs) if not excluded(app, d)]
    app.sphinx_rag.federation = _federated_sites(app)
    inputs = index_inputs(app, wanted)
    if not fresh and not app.sphinx_rag.interrupted and index_is_current(out_dir, inputs, wants_search_bar(app)):
        logger.info("[sphinx-rag] no page was written and the configuration is the same: the search index is kept")
        copy_model_runtime(app, read_json(out_dir / "manifest.json").get("model_files") is not None)
        check_golden(app, out_dir)
        return
    with without_cyclic_gc():
        carried = carry.load(app.doctreedir, out_dir)
        if app.sphinx_rag.interrupted:  # its pages may be newer than its index: trust none of it
            previous, problem = {}, "the previous build stopped before its search index was written"
        elif set(fresh) >= set(wanted):
            previous, problem = {}, ""
        else:
            previous, problem = previous_chunks(out_dir, carried)
    missing = [d for d in wanted if d not in fresh and d not in previous]
    if missing:
        if problem.startswith(OTHER_CHUNKER):  # an upgrade, not a fault: no warning (-W builds pass)
            logger.info(f"[sphinx-rag] the previous search index cannot be reused ({problem}): "
                        f"re-chunking {len(missing)} pages")
        elif problem and problem != "there is none":
            logger.warning(f"[sphinx-rag] the previous search index cannot be reused ({problem}): "
                           f"re-chunking {len(missing)} pages", type="sphinx_rag", subtype="index")
        _chunks_of_unwritten_pages(app, missing)
    chunks: list[Chunk] = []
    for docname in sorted(app.env.found_docs):
        if excluded(app, docname):
            continue
        weight = page_weight(docname, cfg.sphinx_rag_downweight)
        for chunk in fresh.get(docname, previous.get(docname, [])):
            chunk.weight = weight
            chunks.append(chunk)
    changed = changed_chunks(previous, fresh, wanted) if previous else None  # None: every page written
    twins = page_twins(app, wanted)
    with without_cyclic_gc():
        manifest = write_site_index(app, chunks, out_dir, changed, inputs, carried, twins)
    copy_model_runtime(app, manifest.get("model_files") is not None)
    _pending_marker(app).unlink(missing_ok=True)
    logger.info(f"[sphinx-rag] indexed {len(chunks)} chunks into {out_dir}")
    check_golden(app, out_dir)


def _federated_sites(app) -> list[dict]:
    """The other sites the dialog searches (``federation.py``): ``sphinx_rag_federation``'s,
    or with True the intersphinx sites that publish a sphinx-rag index (checked now)."""
    from .federation import resolve

    base = urlsplit(str(getattr(app.config, "html_baseurl", "") or ""))
    origin = f"{base.scheme}://{base.netloc}" if base.scheme in ("http", "https") and base.netloc else "null"
    return resolve(app.config.sphinx_rag_federation, getattr(app.config, "intersphinx_mapping", None),
                   origin=origin, note=logger.info)


