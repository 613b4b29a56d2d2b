"""The build's index step, Sphinx's side (``build-finished``): whether the published
index is still current, what the previous build's chunks were and how many changed,
``index.build.write_index`` called with the site's configuration and progress bars, and
the golden set checked against what was published."""

from __future__ import annotations

__all__ = ["OTHER_CHUNKER", "NOT_INPUTS", "LOG_STEPS", "previous_chunks", "changed_chunks", "without_cyclic_gc",
           "index_inputs", "index_is_current", "write_site_index", "progress_bar", "check_golden", "warm_start_url",
           "build_threads"]

import contextlib
import gc
import hashlib
import itertools
import json
from collections import Counter
from pathlib import Path

from sphinx.util import logging
from sphinx.util.console import terminal_supports_colour
from sphinx.util.display import status_iterator

from ._version import __version__
from .agent_files import llms_site
from .chunk import CHUNKER_VERSION, Chunk
from .config import CONFIG, llm_browser_settings
from .index import carry
from .index.build import write_index
from .llm.settings import browser_settings
from .model import filehash
from .pages import page_url
from .search.index import (
    FORMAT_VERSION,
    IndexDamaged,
    IndexMissing,
    IndexReader,
    load_chunk_records,
    read_json,
    site_root_of,
)
from .searchbar import wants_search_bar

logger = logging.getLogger(__name__)


OTHER_CHUNKER = "its pages were chunked by another version of the chunker"


def previous_chunks(out_dir: Path, carried: carry.Carried | None) -> tuple[dict[str, list[Chunk]], str]:
    """Chunks of the last build by page, and why there are none ("" when read): from what
    that build left in the doctree directory (``carried``), else from the index's shards."""
    if not (out_dir / "manifest.json").is_file():
        return {}, "there is none"
    by_doc: dict[str, list[Chunk]] = {}
    try:
        manifest = read_json(out_dir / "manifest.json")
        settings = manifest.get("settings") if isinstance(manifest, dict) else None
        chunker = settings.get("chunker", 1) if isinstance(settings, dict) else 1
        if chunker != CHUNKER_VERSION:
            return {}, f"{OTHER_CHUNKER} ({chunker}, now {CHUNKER_VERSION})"
        for record in carried.records if carried is not None else load_chunk_records(out_dir):
            by_doc.setdefault(record["doc"], []).append(Chunk.from_record(record))
    except KeyError as exc:  # an index of an earlier sphinx-rag (no display form, say)
        return {}, f"its records have no {exc} field"
    except (OSError, ValueError) as exc:
        return {}, str(exc).removeprefix("[sphinx-rag] ")
    return by_doc, ""


@contextlib.contextmanager
def without_cyclic_gc():
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


def changed_chunks(previous: dict[str, list[Chunk]], fresh: dict[str, list[Chunk]], wanted: list[str]) -> int:
    """Chunks added or removed since the previous index (an edited chunk is one of each),
    by what the fits and vectors read of a chunk (kind, text, title), page by page over the
    pages written and those gone: a page Sphinx rewrites without a change to its text (a
    toctree, a neighbour's title) changes none, so a one-page edit of a small site keeps
    the encoder and the suggestions (``index.build.REFIT_SHARE``)."""
    kept = set(wanted)
    changed = sum(len(chunks) for doc, chunks in previous.items() if doc not in kept)
    for doc, chunks in fresh.items():
        before = Counter((c.kind, c.text, c.title) for c in previous.get(doc, []))
        now = Counter((c.kind, c.text, c.title) for c in chunks)
        changed += sum((before - now).values()) + sum((now - before).values())
    return changed


def check_golden(app, out_dir: Path):
    """The golden set (``sphinx_rag_golden``) against the index just published: a warning
    per entry that falls short (``-W`` fails the build), then a summary line."""
    if not app.config.sphinx_rag_golden:
        return
    from .search.retrieve import Searcher
    from .tools import golden

    path = Path(app.confdir) / app.config.sphinx_rag_golden
    try:
        entries = golden.load(path)
    except ValueError as exc:
        logger.warning(str(exc), type="sphinx_rag", subtype="golden")
        return
    outcomes = golden.check(Searcher(out_dir), entries, site_dir=Path(app.outdir))  # the pages, not the index
    for outcome in outcomes:
        if not outcome.ok:
            logger.warning(f"[sphinx-rag] {golden.shortfall(outcome)}", type="sphinx_rag", subtype="golden")
    met = sum(o.ok for o in outcomes)
    logger.info(f"[sphinx-rag] golden set: {met}/{len(outcomes)} within rank ({path.name})")


def index_inputs(app, docnames: list[str]) -> str:
    """A digest of what the index is built from besides the pages' content: which pages,
    every sphinx_rag_* value, the model, the builder, the versions. A build that writes no
    page and changes none of this would write the same index (``on_build_finished`` keeps it)."""
    cfg = app.config
    model = app.sphinx_rag.model_dir
    info = model / "model_info.json"
    table = model / "query_table.bin"  # what the static encoder starts from (index.build.query_table)
    parts = {"docs": docnames, "config": {o.name: repr(cfg[o.name]) for o in CONFIG if o.name not in NOT_INPUTS},
             "model": [info.read_text(encoding="utf-8") if info.is_file() else str(model),
                       filehash.sha256(table) if table.is_file() else ""],
             "reranker": _reranker_digest(app.sphinx_rag.reranker_dir),
             "builder": app.builder.name, "search_bar": wants_search_bar(app),
             "llms": repr(llms_site(app)), "federation": app.sphinx_rag.federation,
             "versions": [__version__, CHUNKER_VERSION, FORMAT_VERSION]}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()[:32]


def _reranker_digest(directory: Path | None) -> list[str]:
    """The published reranker's files by their sha256 (a new reranker is a new index)."""
    if directory is None:
        return []
    from .search.cross_encoder import RERANKER_FILES

    return [filehash.sha256(directory / name) for name in RERANKER_FILES]


def index_is_current(out_dir: Path, inputs: str, keyword_script: bool) -> bool:
    """The published index was built from ``inputs`` and every file it names is there."""
    try:
        reader = IndexReader(out_dir)
        if reader.manifest.get("inputs") != inputs:
            return False
        names = reader.directory_names() + (["manifest.js"] if keyword_script else [])
        for key in ("model_files", "reranker_files"):
            entry = reader.manifest.get(key)
            names += [f"{entry['dir']}/{name}" for name in entry["files"]] if entry else []
        if not all((out_dir / name).is_file() for name in names):
            return False
        listing = reader.pages()  # the agents' files at the site root: there, with their sizes
        root = site_root_of(out_dir)
        return listing is None or all((root / name).is_file() and (root / name).stat().st_size == size
                                      for name, (size, _digest) in listing["files"].items())
    except (IndexMissing, IndexDamaged, OSError, ValueError, KeyError, TypeError):
        return False


def warm_start_url(config) -> str:
    """The published site a build starts from ("": none): the environment, else the
    config value, else html_baseurl (``index.warm_start.site_url``)."""
    from .index.warm_start import site_url

    return site_url(config.sphinx_rag_warm_start, getattr(config, "html_baseurl", "") or "")


#: Config values that do not change the index (a build that changes only these keeps it).
#: Values that do not change the index: the warm start gives the index a cold build gives,
#: and where the model is cached does not change the model (its info and table are inputs).
NOT_INPUTS = {"sphinx_rag_warm_start", "sphinx_rag_model_cache"}


def write_site_index(app, chunks: list[Chunk], out_dir: Path, changed: int | None, inputs: str,
                 carried: carry.Carried | None, twins: dict | None = None) -> dict:
    """``index.build.write_index`` with the site's configuration."""
    cfg = app.config
    urls = {d: page_url(app, d) for d in {c.doc for c in chunks}}
    return write_index(
        chunks,
        urls=urls,
        out_dir=out_dir,
        model_dir=app.sphinx_rag.model_dir,
        reranker_dir=app.sphinx_rag.reranker_dir,
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
            "llm_browser": llm_browser_settings(cfg.sphinx_rag_llm_browser),
            "federation": app.sphinx_rag.federation,
        },
        batch_size=cfg.sphinx_rag_embed_batch_size,
        threads=build_threads(cfg),
        progress=progress_bar(app, "chunks"),
        encoder_progress=progress_bar(app, "pseudo-queries"),
        keyword_script=wants_search_bar(app),
        changed_chunks=changed,
        work_dir=Path(app.doctreedir),
        carried=carried,
        inputs=inputs,
        suggestions=cfg.sphinx_rag_suggestions,
        note=logger.info,
        llms=llms_site(app, twins),
        warn=warn_warm_start,
        warm_start=warm_start_url(cfg),
        ahead=app.sphinx_rag.ahead,
    )


def warn_warm_start(message: str):
    logger.warning(message, type="sphinx_rag", subtype="warm_start")


#: Without a terminal (a CI log) Sphinx's bar prints a line per step: at most this many.
LOG_STEPS = 20


def progress_bar(app, what: str):
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


def build_threads(config) -> int:
    """onnxruntime threads for the build's embeddings: ``sphinx_rag_threads``, or every
    core the build may use (``model.embed.usable_cores``)."""
    from .model.embed import usable_cores

    return int(config.sphinx_rag_threads) or usable_cores()
