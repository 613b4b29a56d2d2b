"""Sphinx event handlers: the only module that wires sphinx-rag into a build.

read phase (parallel-safe):  autodoc events keep each page's raw docstrings and
                             signatures on the environment (purged/merged per doc).
                             A serial read also chunks each page, only to embed
                             its texts ahead on the idle core (``embed_ahead.py``).
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

import contextlib
import fnmatch
import gc
import hashlib
import itertools
import json
import os
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from sphinx.util import logging
from sphinx.util.console import terminal_supports_colour
from sphinx.util.display import status_iterator

from . import __version__, assets, carry, filehash
from .build import write_index
from .chunk import CHUNKER_VERSION, Chunk
from .chunk.page import chunk_page
from .config import CONFIG, ConfigError, unknown_names, validate
from .embed import embedding_input
from .export_model import ExportUnavailable
from .llm.settings import browser_settings
from .locate import deferred_location
from .markdown import LlmsSite
from .searchbar import copy_model_runtime, wants_search_bar

logger = logging.getLogger(__name__)

ENV_KEY = "sphinx_rag_docstrings"  # env attribute: {docname: {fullname: ApiSource}}


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
        _warm_start_url(config)  # $SPHINX_RAG_WARM_START is checked now, not after the pages are written
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
        self.budget = 256
        self.fresh: dict[str, list[Chunk]] = {}
        self.pending = False  # the pending marker is written (pages are being written)
        self.interrupted = False  # a previous build stopped between its pages and its index
        self.federation: list[dict] = []  # the other sites the dialog searches (federation.py)
        self.ahead = None  # embed_ahead.EmbedAhead: chunks embedded while pages are read and written
        self.ahead_checked = False  # whether this build decided to embed ahead
        self.twins: dict = {}  # docname -> twins.Twin: the Markdown twins of the pages written
        self.twins_only = False  # doctree-resolved makes a twin only (pages resolved for their twin)


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
    from .embed import token_counter
    from .model import cached_model_dir
    from .model_source import (is_model_dir, packaged_model_dir, read_sentence_transformers_config,
                               resolve_model_source)

    state.interrupted = _pending_marker(app).exists()
    if cfg.sphinx_rag_embeddings:
        cache = Path(cfg.sphinx_rag_model_cache).expanduser() if cfg.sphinx_rag_model_cache else None
        started = time.perf_counter()
        state.model_dir = cached_model_dir(cfg.sphinx_rag_model, cache, announce=logger.info)
        if time.perf_counter() - started > 2:
            logger.info(f"[sphinx-rag] model exported to {state.model_dir}")
        max_len = int(assets.read_json(state.model_dir / "model_info.json")["max_seq_length"])
    else:  # keyword-only: the model's tokenizer still sizes chunks; no export, no torch
        state.model_dir = packaged_model_dir(cfg.sphinx_rag_model) or resolve_model_source(cfg.sphinx_rag_model)
        if is_model_dir(state.model_dir):
            max_len = int(assets.read_json(state.model_dir / "model_info.json")["max_seq_length"])
        else:
            max_len = int(read_sentence_transformers_config(state.model_dir)["max_seq_length"])
    state.count = token_counter(state.model_dir)
    state.budget = cfg.sphinx_rag_chunk_tokens or max_len


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
    """Runs before numpydoc rewrites the lines, so we get the raw docstring."""
    source = _page_sources(app.env).setdefault(name, {})
    previous = source.get("docstring", "")
    source["docstring"] = (previous + "\n\n" if previous else "") + "\n".join(lines)
    source["what"] = what
    source["location"] = deferred_location(obj)  # a class's line: only if a warning names it


def _excluded(app, docname: str) -> bool:
    """Left out of the index and the agents' files: ``sphinx_rag_exclude``, or ``:nosearch:``
    (file-wide metadata that keeps a page out of Sphinx's own search too)."""
    return ("nosearch" in app.env.metadata.get(docname, {})
            or any(fnmatch.fnmatch(docname, p) for p in app.config.sphinx_rag_exclude))


def _gallery_source(app, docname: str) -> Path | None:
    """The example script behind a sphinx-gallery page, if this is one."""
    conf = getattr(app.config, "sphinx_gallery_conf", None) or {}
    examples, galleries = conf.get("examples_dirs", []), conf.get("gallery_dirs", [])
    examples = [examples] if isinstance(examples, str) else list(examples)
    galleries = [galleries] if isinstance(galleries, str) else list(galleries)
    srcdir = Path(app.srcdir)
    for ex_dir, gal_dir in zip(examples, galleries):
        prefix = Path(gal_dir).as_posix().strip("/") + "/"
        if docname.startswith(prefix):
            script = (srcdir / ex_dir / docname[len(prefix):]).with_suffix(".py")
            if script.is_file():
                return script
    return None


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
            or _excluded(app, docname)):
        return
    if _ahead(app, state) is None:
        return
    try:
        chunks = chunk_page(doctree, doc=docname, count=state.count, budget=state.budget,
                            overlap=app.config.sphinx_rag_chunk_overlap,
                            docstrings=getattr(app.env, ENV_KEY, {}).get(docname, {}),
                            gallery_source=_gallery_source(app, docname), source_path=str(app.env.doc2path(docname)))
    except Exception:  # noqa: BLE001 - a guess only: the page is chunked (and any fault reported) as written
        return
    state.ahead.add([embedding_input(c) for c in chunks])


# -- write phase ----------------------------------------------------------------

def on_doctree_resolved(app, doctree, docname):
    """Chunk each page as it is written (always in the main process)."""
    state = getattr(app, "sphinx_rag", None)
    if state is None or state.model_dir is None or _excluded(app, docname):
        return
    if app.config.sphinx_rag_llms_txt:
        _make_twin(app, state, doctree, docname)
    if state.twins_only:
        return
    if not state.pending:
        _pending_marker(app).parent.mkdir(parents=True, exist_ok=True)
        _pending_marker(app).touch()
        state.pending = True
    chunks = state.fresh[docname] = chunk_page(
        doctree, doc=docname, count=state.count, budget=state.budget, overlap=app.config.sphinx_rag_chunk_overlap,
        docstrings=getattr(app.env, ENV_KEY, {}).get(docname, {}), gallery_source=_gallery_source(app, docname),
        source_path=str(app.env.doc2path(docname)),
        warn=lambda message: logger.warning(message, location=docname, type="sphinx_rag", subtype="docstring"),
    )
    if _ahead(app, state) is not None:
        state.ahead.add([embedding_input(c) for c in chunks])


def _make_twin(app, state, doctree, docname: str):
    """The page's Markdown twin (``twins.py``), from the doctree the HTML page is written from."""
    from .twins import page_twin, toctree_children

    env = app.env

    def entry(doc: str):
        if doc not in env.found_docs or _excluded(app, doc):
            return None
        title = env.titles.get(doc)
        return (title.astext() if title is not None else doc), page_url(app, doc), toctree_children(env.tocs.get(doc))

    try:
        state.twins[docname] = page_twin(doctree, page_url(app, docname), entry)
    except Exception as exc:  # noqa: BLE001 - the chunks' twin stands in; the build goes on
        logger.warning(f"[sphinx-rag] the Markdown twin of {docname} is made from its chunks: its doctree could not "
                       f"be read ({type(exc).__name__}: {exc})", location=docname, type="sphinx_rag", subtype="llms")


def _page_twins(app, wanted: list[str]) -> dict:
    """Every indexed page's twin: the pages written now, the others' from what the previous
    build kept in the doctree directory (``twins.TWINS_FILE``), else their doctrees resolved
    again; kept there for the next build. {} when ``sphinx_rag_llms_txt`` is off."""
    from .twins import TWINS_FILE, load_twins, save_twins

    if not app.config.sphinx_rag_llms_txt:
        return {}
    state = app.sphinx_rag
    path = Path(app.doctreedir) / TWINS_FILE
    kept = load_twins(path) if not state.interrupted else {}
    missing = [d for d in wanted if d not in state.twins and d not in kept]
    if missing:
        state.twins_only = True
        try:
            for docname in status_iterator(missing, "writing Markdown twins... ", "darkgreen", len(missing),
                                           app.verbosity):
                app.env.get_and_resolve_doctree(docname, app.builder, tags=app.builder.tags)
        finally:
            state.twins_only = False
    twins = {d: state.twins.get(d) or kept.get(d) for d in wanted}
    twins = {d: t for d, t in twins.items() if t is not None}
    try:
        save_twins(path, twins)
    except OSError as exc:
        logger.info(f"[sphinx-rag] the Markdown twins are not kept for the next build: {exc}")
    return twins


#: "0" turns off embedding while pages are written (benchmarks compare with and without).
EMBED_AHEAD_ENV = "SPHINX_RAG_EMBED_AHEAD"


def _ahead(app, state):
    """The build's ``EmbedAhead``, started (or found not wanted) by the first page chunked."""
    if not state.ahead_checked:
        state.ahead_checked = True
        state.ahead = _embed_ahead(app)
    return state.ahead


def build_threads(config) -> int:
    """onnxruntime threads for the build's embeddings: ``sphinx_rag_threads``, or every
    core the build may use (``embed.usable_cores``)."""
    from .embed import usable_cores

    return int(config.sphinx_rag_threads) or usable_cores()


def _embed_ahead(app):
    """What embeds chunks while Sphinx reads and writes the rest (``embed_ahead.py``), or
    None: no embeddings, one core, or Sphinx writes pages on several processes (no core
    is idle then)."""
    threads = build_threads(app.config)
    if (not app.config.sphinx_rag_embeddings or getattr(app.builder, "parallel_ok", False)
            or threads < 2 or os.environ.get(EMBED_AHEAD_ENV, "1") == "0"):
        return None
    from .embed import cache_path
    from .embed_ahead import EmbedAhead
    from .warm_start import offers_vectors

    model_dir = app.sphinx_rag.model_dir
    site = _warm_start_url(app.config)
    published = None
    if site and not (Path(app.outdir) / assets.ASSET_DIR / "manifest.json").is_file():  # the index step tries it
        info = assets.read_json(model_dir / "model_info.json")
        published = lambda: offers_vectors(site, info, CHUNKER_VERSION)  # noqa: E731
    return EmbedAhead(model_dir, batch_size=app.config.sphinx_rag_embed_batch_size, cache_path=cache_path(model_dir),
                      not_needed=published, threads=threads - 1)  # Sphinx keeps one core


OTHER_CHUNKER = "its pages were chunked by another version of the chunker"


def _previous_chunks(out_dir: Path, carried: carry.Carried | None) -> tuple[dict[str, list[Chunk]], str]:
    """Chunks of the last build by page, and why there are none ("" when read): from what
    that build left in the doctree directory (``carried``), else from the index's shards."""
    if not (out_dir / "manifest.json").is_file():
        return {}, "there is none"
    by_doc: dict[str, list[Chunk]] = {}
    try:
        manifest = assets.read_json(out_dir / "manifest.json")
        settings = manifest.get("settings") if isinstance(manifest, dict) else None
        chunker = settings.get("chunker", 1) if isinstance(settings, dict) else 1
        if chunker != CHUNKER_VERSION:
            return {}, f"{OTHER_CHUNKER} ({chunker}, now {CHUNKER_VERSION})"
        for record in carried.records if carried is not None else assets.load_chunk_records(out_dir):
            by_doc.setdefault(record["doc"], []).append(Chunk.from_record(record))
    except KeyError as exc:  # an index of an earlier sphinx-rag (no display form, say)
        return {}, f"its records have no {exc} field"
    except (OSError, ValueError) as exc:
        return {}, str(exc).removeprefix("[sphinx-rag] ")
    return by_doc, ""


def _chunks_of_unwritten_pages(app, docnames: list[str]):
    """Resolve the doctrees of pages this build did not write: that emits doctree-resolved,
    so ``on_doctree_resolved`` chunks them as if they had been written."""
    for docname in status_iterator(docnames, "re-chunking pages... ", "darkgreen", len(docnames), app.verbosity):
        app.env.get_and_resolve_doctree(docname, app.builder, tags=app.builder.tags)


def _pending_marker(app) -> Path:
    """Exists from the first page written until the index is published: if a build stops
    in between, the next one cannot trust the pages Sphinx considers done."""
    return Path(app.doctreedir) / "sphinx_rag.pending"


def _weight(docname: str, patterns: dict) -> float:
    weights = [w for p, w in patterns.items() if fnmatch.fnmatch(docname, p)]
    return float(min(weights)) if weights else 1.0


@contextlib.contextmanager
def _without_cyclic_gc():
    """Python's cycle collector off while the index is read and written: those steps make
    hundreds of thousands of objects, and each full collection would scan Sphinx's whole
    heap (the doctrees of every page) again: at 25k chunks, a third of a one-page edit's
    index step. Reference counting still frees what they drop (chunks, records and tokens
    hold no cycles; doctrees do, so re-chunking runs with the collector on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def on_build_finished(app, exception):
    try:
        _build_finished(app, exception)
        filehash.save()
    finally:
        ahead = getattr(app, "sphinx_rag", None) and app.sphinx_rag.ahead
        if ahead is not None:  # the index step stopped it, unless it did not run
            ahead.stop()


def _build_finished(app, exception):
    if exception is not None or not _is_html(app) or app.sphinx_rag.model_dir is None:
        return
    cfg = app.config
    out_dir = Path(app.outdir) / assets.ASSET_DIR
    fresh = app.sphinx_rag.fresh
    wanted = [d for d in sorted(app.env.found_docs) if not _excluded(app, d)]
    app.sphinx_rag.federation = _federated_sites(app)
    inputs = _index_inputs(app, wanted)
    if not fresh and not app.sphinx_rag.interrupted and _index_is_current(out_dir, inputs, wants_search_bar(app)):
        logger.info("[sphinx-rag] no page was written and the configuration is the same: the search index is kept")
        copy_model_runtime(app, assets.read_json(out_dir / "manifest.json").get("model_files") is not None)
        _check_golden(app, out_dir)
        return
    with _without_cyclic_gc():
        carried = carry.load(app.doctreedir, out_dir)
        if app.sphinx_rag.interrupted:  # its pages may be newer than its index: trust none of it
            previous, problem = {}, "the previous build stopped before its search index was written"
        elif set(fresh) >= set(wanted):
            previous, problem = {}, ""
        else:
            previous, problem = _previous_chunks(out_dir, carried)
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
        if _excluded(app, docname):
            continue
        weight = _weight(docname, cfg.sphinx_rag_downweight)
        for chunk in fresh.get(docname, previous.get(docname, [])):
            chunk.weight = weight
            chunks.append(chunk)
    changed = _changed_chunks(previous, fresh, wanted) if previous else None  # None: every page written
    twins = _page_twins(app, wanted)
    with _without_cyclic_gc():
        manifest = _write_index(app, chunks, out_dir, changed, inputs, carried, twins)
    copy_model_runtime(app, manifest.get("model_files") is not None)
    _pending_marker(app).unlink(missing_ok=True)
    logger.info(f"[sphinx-rag] indexed {len(chunks)} chunks into {out_dir}")
    _check_golden(app, out_dir)


def _changed_chunks(previous: dict[str, list[Chunk]], fresh: dict[str, list[Chunk]], wanted: list[str]) -> int:
    """Chunks added or removed since the previous index (an edited chunk is one of each),
    by what the fits and vectors read of a chunk (kind, text, title), page by page over the
    pages written and those gone: a page Sphinx rewrites without a change to its text (a
    toctree, a neighbour's title) changes none, so a one-page edit of a small site keeps
    the encoder and the suggestions (``build.REFIT_SHARE``)."""
    kept = set(wanted)
    changed = sum(len(chunks) for doc, chunks in previous.items() if doc not in kept)
    for doc, chunks in fresh.items():
        before = Counter((c.kind, c.text, c.title) for c in previous.get(doc, []))
        now = Counter((c.kind, c.text, c.title) for c in chunks)
        changed += sum((before - now).values()) + sum((now - before).values())
    return changed


def _federated_sites(app) -> list[dict]:
    """The other sites the dialog searches (``federation.py``): ``sphinx_rag_federation``'s,
    or with True the intersphinx sites that publish a sphinx-rag index (checked now)."""
    from .federation import resolve

    base = urlsplit(str(getattr(app.config, "html_baseurl", "") or ""))
    origin = f"{base.scheme}://{base.netloc}" if base.scheme in ("http", "https") and base.netloc else "null"
    return resolve(app.config.sphinx_rag_federation, getattr(app.config, "intersphinx_mapping", None),
                   origin=origin, note=logger.info)


def _check_golden(app, out_dir: Path):
    """The golden set (``sphinx_rag_golden``) against the index just published: a warning
    per entry that falls short (``-W`` fails the build), then a summary line."""
    if not app.config.sphinx_rag_golden:
        return
    from . import golden
    from .retrieve import Searcher

    path = Path(app.confdir) / app.config.sphinx_rag_golden
    try:
        entries = golden.load(path)
    except ValueError as exc:
        logger.warning(str(exc), type="sphinx_rag", subtype="golden")
        return
    outcomes = golden.check(Searcher(out_dir), entries, site_dir=out_dir)
    for outcome in outcomes:
        if not outcome.ok:
            logger.warning(f"[sphinx-rag] {golden.shortfall(outcome)}", type="sphinx_rag", subtype="golden")
    met = sum(o.ok for o in outcomes)
    logger.info(f"[sphinx-rag] golden set: {met}/{len(outcomes)} within rank ({path.name})")


def _llms_site(app, twins: dict | None = None) -> LlmsSite | None:
    """What llms.txt says besides the pages (None: ``sphinx_rag_llms_txt`` is off): the
    project, the theme's description if it has one (else the root page's first paragraph),
    and the root toctree's captions with the documents each reaches, in reading order;
    ``twins``: the pages' twins made from their doctrees (``_page_twins``)."""
    cfg = app.config
    if not cfg.sphinx_rag_llms_txt:
        return None
    description = (getattr(cfg, "html_theme_options", None) or {}).get("description")
    return LlmsSite(project=str(cfg.project or ""), summary=description if isinstance(description, str) else "",
                    sections=_toctree_sections(app), root=cfg.root_doc,
                    base_url=str(getattr(cfg, "html_baseurl", "") or ""), full_bytes=cfg.sphinx_rag_llms_full_bytes,
                    twins=twins)


def _toctree_sections(app) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each toctree of the root document: (its caption, the documents it reaches depth
    first through the toctrees of its pages)."""
    from sphinx import addnodes

    env = app.env
    try:
        doctree = env.get_doctree(app.config.root_doc)
    except (OSError, KeyError, ValueError):
        return ()
    seen: set[str] = {app.config.root_doc}

    def reach(doc: str, out: list[str]):
        if doc in seen or doc not in env.found_docs:
            return
        seen.add(doc)
        out.append(doc)
        for child in env.toctree_includes.get(doc, []):
            reach(child, out)

    sections = []
    for toc in doctree.findall(addnodes.toctree):
        docs: list[str] = []
        for _title, ref in toc.get("entries", []):
            reach(ref, docs)
        sections.append((str(toc.get("caption") or ""), tuple(docs)))
    return tuple(sections)


def _index_inputs(app, docnames: list[str]) -> str:
    """A digest of what the index is built from besides the pages' content: which pages,
    every sphinx_rag_* value, the model, the builder, the versions. A build that writes no
    page and changes none of this would write the same index (``on_build_finished`` keeps it)."""
    cfg = app.config
    model = app.sphinx_rag.model_dir
    info = model / "model_info.json"
    table = model / "query_table.bin"  # what the static encoder starts from (build.query_table)
    parts = {"docs": docnames, "config": {o.name: repr(cfg[o.name]) for o in CONFIG if o.name not in NOT_INPUTS},
             "model": [info.read_text(encoding="utf-8") if info.is_file() else str(model),
                       filehash.sha256(table) if table.is_file() else ""],
             "builder": app.builder.name, "search_bar": wants_search_bar(app),
             "llms": repr(_llms_site(app)), "federation": app.sphinx_rag.federation,
             "versions": [__version__, CHUNKER_VERSION, assets.FORMAT_VERSION]}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()[:32]


def _index_is_current(out_dir: Path, inputs: str, keyword_script: bool) -> bool:
    """The published index was built from ``inputs`` and every file it names is there."""
    try:
        reader = assets.IndexReader(out_dir)
        if reader.manifest.get("inputs") != inputs:
            return False
        names = reader.directory_names() + (["manifest.js"] if keyword_script else [])
        model = reader.manifest.get("model_files")
        names += [f"{model['dir']}/{name}" for name in model["files"]] if model else []
        if not all((out_dir / name).is_file() for name in names):
            return False
        listing = reader.pages()  # the agents' files at the site root: there, with their sizes
        root = assets.site_root_of(out_dir)
        return listing is None or all((root / name).is_file() and (root / name).stat().st_size == size
                                      for name, (size, _digest) in listing["files"].items())
    except (assets.IndexMissing, assets.IndexDamaged, OSError, ValueError, KeyError, TypeError):
        return False


def _warm_start_url(config) -> str:
    """The published site a build starts from ("": none): the environment, else the
    config value, else html_baseurl (``warm_start.site_url``)."""
    from .warm_start import site_url

    return site_url(config.sphinx_rag_warm_start, getattr(config, "html_baseurl", "") or "")


#: Config values that do not change the index (a build that changes only these keeps it).
#: Values that do not change the index: the warm start gives the index a cold build gives,
#: and where the model is cached does not change the model (its info and table are inputs).
NOT_INPUTS = {"sphinx_rag_warm_start", "sphinx_rag_model_cache"}


def page_url(app, docname: str) -> str:
    """A page's URL from the site root. singlehtml names each document by a fragment of
    its one file (``#document-guide``), which needs that file in front of it."""
    uri = app.builder.get_target_uri(docname)
    return f"{app.config.root_doc}{app.builder.out_suffix}{uri}" if uri.startswith("#") else uri


def _write_index(app, chunks: list[Chunk], out_dir: Path, changed: int | None, inputs: str,
                 carried: carry.Carried | None, twins: dict | None = None) -> dict:
    """``build.write_index`` with the site's configuration."""
    cfg = app.config
    urls = {d: page_url(app, d) for d in {c.doc for c in chunks}}
    return write_index(
        chunks,
        urls=urls,
        out_dir=out_dir,
        model_dir=app.sphinx_rag.model_dir,
        embeddings=cfg.sphinx_rag_embeddings,
        query_encoder=cfg.sphinx_rag_query_encoder,
        settings={
            "fusion": cfg.sphinx_rag_fusion,
            "rrf_k": cfg.sphinx_rag_rrf_k,
            "relevance_floor": float(cfg.sphinx_rag_relevance_floor),
            "chunk_tokens": app.sphinx_rag.budget,
            "chunk_overlap": cfg.sphinx_rag_chunk_overlap,
            "sphinx_rag_version": __version__,
            "chunker": CHUNKER_VERSION,
            "llm": browser_settings(cfg.sphinx_rag_llm, cfg.project),
            "federation": app.sphinx_rag.federation,
        },
        batch_size=cfg.sphinx_rag_embed_batch_size,
        threads=build_threads(cfg),
        progress=_progress_bar(app, "chunks"),
        encoder_progress=_progress_bar(app, "pseudo-queries"),
        keyword_script=wants_search_bar(app),
        changed_chunks=changed,
        work_dir=Path(app.doctreedir),
        carried=carried,
        inputs=inputs,
        suggestions=cfg.sphinx_rag_suggestions,
        note=logger.info,
        llms=_llms_site(app, twins),
        warn=_warn_warm_start,
        warm_start=_warm_start_url(cfg),
        ahead=app.sphinx_rag.ahead,
    )


def _warn_warm_start(message: str):
    logger.warning(message, type="sphinx_rag", subtype="warm_start")


#: Without a terminal (a CI log) Sphinx's bar prints a line per step: at most this many.
LOG_STEPS = 20


def _progress_bar(app, what: str):
    """Sphinx's own progress bar over the embedding batches (of ``what``): a step per
    batch on a terminal, at most ``LOG_STEPS`` lines in a log."""

    def progress(batches: list[list[int]]):
        total = sum(len(b) for b in batches)
        per_step = 1 if app.verbosity < 1 and terminal_supports_colour() else max(1, -(-len(batches) // LOG_STEPS))
        steps = [batches[i:i + per_step] for i in range(0, len(batches), per_step)]
        done = itertools.accumulate(sum(len(b) for b in step) for step in steps)
        for step, _ in status_iterator(list(zip(steps, done)), f"embedding {what}... ", "darkgreen", len(steps),
                                       app.verbosity, stringify_func=lambda item: f"{item[1]}/{total} {what}"):
            yield from step

    return progress
