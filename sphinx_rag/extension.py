"""Sphinx event handlers: the only module that wires sphinx-rag into a build.

read phase (parallel-safe):  autodoc events stash raw docstrings and signatures;
                             ``doctree-read`` turns each page into chunks kept on
                             the environment (purged/merged per document).
build-finished (main process, HTML builders only): weights, BM25, embeddings and
                             the static assets under ``_static/sphinx_rag/``.
"""

from __future__ import annotations

import fnmatch
import inspect
import os
import time
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

from . import __version__, assets, index
from .chunk import Chunk, number_chunks
from .chunk.api import DocstringError, api_chunk_texts
from .chunk.gallery import gallery_chunk_texts
from .chunk.narrative import chunk_doctree, page_title
from .config import CONFIG, ConfigError, unknown_names, validate

logger = logging.getLogger(__name__)

ENV_KEY = "sphinx_rag_chunks"
_DOCSTRINGS = "sphinx_rag_docstrings"  # env.temp_data: raw docstrings of the page being read
_SIGNATURES = "sphinx_rag_signatures"


def _is_html(app) -> bool:
    return getattr(app.builder, "format", "") == "html"


def on_config_inited(app, config):
    try:
        validate({o.name: config[o.name] for o in CONFIG})
    except ConfigError as exc:
        from sphinx.errors import ConfigError as SphinxConfigError

        raise SphinxConfigError(str(exc)) from None
    for message in unknown_names(getattr(config, "_raw_config", {})):
        logger.warning(message, type="sphinx_rag", subtype="config")


class _State:
    """Per-build objects (tokenizer, model dir); created once, before workers fork."""

    model_dir: Path | None = None
    tokenizer = None
    budget = 256


def on_builder_inited(app):
    state = app.sphinx_rag = _State()
    if not _is_html(app):
        return
    from .embed import count_tokens, load_tokenizer
    from .export_model import cached_model_dir

    cfg = app.config
    cache = Path(cfg.sphinx_rag_model_cache).expanduser() if cfg.sphinx_rag_model_cache else None
    started = time.perf_counter()
    state.model_dir = cached_model_dir(cfg.sphinx_rag_model, cache)
    if time.perf_counter() - started > 2:
        logger.info(f"[sphinx-rag] model exported to {state.model_dir}")
    tokenizer = load_tokenizer(state.model_dir)
    state.count = lambda text: count_tokens(tokenizer, text)
    info = assets.read_json(state.model_dir / "model_info.json")
    state.budget = cfg.sphinx_rag_chunk_tokens or int(info["max_seq_length"])


# -- read phase ---------------------------------------------------------------

def on_autodoc_signature(app, what, name, obj, options, signature, return_annotation):
    app.env.temp_data.setdefault(_SIGNATURES, {})[name] = signature


def on_autodoc_docstring(app, what, name, obj, options, lines):
    """Runs before numpydoc rewrites the lines, so we get the raw docstring."""
    store = app.env.temp_data.setdefault(_DOCSTRINGS, {})
    previous = store.get(name, (what, "", obj))[1]
    store[name] = (what, (previous + "\n\n" if previous else "") + "\n".join(lines), obj)


def _excluded(docname: str, patterns) -> bool:
    return any(fnmatch.fnmatch(docname, p) for p in patterns)


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


def _object_location(obj, docname: str, env) -> str:
    try:
        return f"{inspect.getsourcefile(obj)}:{inspect.getsourcelines(obj)[1]}"
    except (TypeError, OSError):
        return env.doc2path(docname)


def _chunk_page(app, docname: str, doctree) -> list[Chunk]:
    state: _State = app.sphinx_rag
    cfg = app.config
    common = dict(doc=docname, count=state.count, budget=state.budget, overlap=cfg.sphinx_rag_chunk_overlap)
    title = page_title(doctree)
    section_ids = {
        s[0].astext().strip(): s["ids"][0]
        for s in doctree.findall(nodes.section) if s.get("ids") and isinstance(s[0], nodes.title)
    }

    script = _gallery_source(app, docname)
    if script is not None:
        chunks = []
        for section, texts in gallery_chunk_texts(script, count=state.count, budget=state.budget,
                                                  overlap=cfg.sphinx_rag_chunk_overlap):
            anchor = section_ids.get(section or "", section_ids.get(title, ""))
            headings = [title] if section in (None, title) else [title, section]
            chunks += [Chunk(doc=docname, anchor=anchor, headings=headings, kind="example", text=t) for t in texts]
        return chunks

    docstrings = app.env.temp_data.get(_DOCSTRINGS, {})
    signatures = app.env.temp_data.get(_SIGNATURES, {})

    def api_object(node, headings):
        if not (isinstance(node, addnodes.desc) and node.get("domain") == "py"):
            return None
        sig = next(iter(node.findall(addnodes.desc_signature)), None)
        fullname = (sig.get("ids") or [""])[0] if sig is not None else ""
        if not fullname:
            return None
        owner = headings if headings and headings[-1] == fullname else headings + [fullname]
        content = next((c for c in node.children if isinstance(c, addnodes.desc_content)), None)
        out: list[Chunk] = []
        what, raw, obj = docstrings.get(fullname, (node.get("objtype", ""), None, None))
        if raw is not None:
            try:
                texts = api_chunk_texts(fullname, node.get("objtype", what), raw, signatures.get(fullname))
                out = [Chunk(doc=docname, anchor=fullname, headings=owner, kind="api", text=t) for t in texts]
            except DocstringError as exc:
                logger.warning(
                    f"[sphinx-rag] numpydoc could not parse the docstring of {fullname} "
                    f"({_object_location(obj, docname, app.env)}): {exc}; falling back to narrative chunks",
                    location=docname, type="sphinx_rag", subtype="docstring",
                )
                raw = None
        if content is None:
            return out
        if raw is None:  # no docstring from autodoc, or unparsable: chunk the rendered text
            return out + chunk_doctree(content, headings=owner, anchor=fullname, kind="api",
                                       special=api_object, **common)
        nested = [d for d in content.children if isinstance(d, addnodes.desc)]
        for desc in nested:  # methods and attributes of a class
            out += api_object(desc, headings) or []
        return out

    return chunk_doctree(doctree, kind="guide", special=api_object, **common)


def on_doctree_read(app, doctree):
    if app.sphinx_rag.model_dir is None:
        return
    docname = app.env.docname
    if _excluded(docname, app.config.sphinx_rag_exclude):
        return
    chunks = [c for c in _chunk_page(app, docname, doctree) if c.text.strip()]
    if not hasattr(app.env, ENV_KEY):
        setattr(app.env, ENV_KEY, {})
    getattr(app.env, ENV_KEY)[docname] = number_chunks(chunks)


def on_env_purge_doc(app, env, docname):
    getattr(env, ENV_KEY, {}).pop(docname, None)


def on_env_merge_info(app, env, docnames, other):
    mine = getattr(env, ENV_KEY, None)
    if mine is None:
        mine = {}
        setattr(env, ENV_KEY, mine)
    theirs = getattr(other, ENV_KEY, {})
    mine.update({d: theirs[d] for d in docnames if d in theirs})


# -- write phase ----------------------------------------------------------------

def _weight(docname: str, patterns: dict) -> float:
    weights = [w for p, w in patterns.items() if fnmatch.fnmatch(docname, p)]
    return float(min(weights)) if weights else 1.0


def on_build_finished(app, exception):
    if exception is not None or not _is_html(app) or app.sphinx_rag.model_dir is None:
        return
    cfg = app.config
    per_doc = getattr(app.env, ENV_KEY, {})
    chunks: list[Chunk] = []
    for docname in sorted(d for d in per_doc if d in app.env.found_docs):
        if _excluded(docname, cfg.sphinx_rag_exclude):
            continue
        weight = _weight(docname, cfg.sphinx_rag_downweight)
        for chunk in per_doc[docname]:
            chunk.weight = weight
            chunks.append(chunk)
    urls = {d: app.builder.get_target_uri(d) for d in {c.doc for c in chunks}}
    out_dir = Path(app.outdir) / "_static" / "sphinx_rag"
    index.build(
        chunks,
        urls=urls,
        out_dir=out_dir,
        model_dir=app.sphinx_rag.model_dir,
        embeddings=cfg.sphinx_rag_embeddings,
        settings={
            "fusion": cfg.sphinx_rag_fusion,
            "rrf_k": cfg.sphinx_rag_rrf_k,
            "chunk_tokens": app.sphinx_rag.budget,
            "chunk_overlap": cfg.sphinx_rag_chunk_overlap,
            "sphinx_rag_version": __version__,
        },
        batch_size=cfg.sphinx_rag_embed_batch_size,
        threads=cfg.sphinx_rag_threads or None,
        progress=_progress_printer(),
    )
    logger.info(f"[sphinx-rag] indexed {len(chunks)} chunks into {out_dir}")


def _progress_printer():
    """A Sphinx-style progress line for long steps (embedding)."""
    from sphinx.util.console import bold, term_width_line  # type: ignore[attr-defined]

    def report(label: str, done: int, total: int):
        pct = 100 * done // max(total, 1)
        line = f"{bold(label)}[{pct:3d}%] {done}/{total} chunks"
        if os.environ.get("CI") or not logging.getLogger("sphinx").isEnabledFor(20):
            if done == total:
                logger.info(line)
            return
        logger.info(term_width_line(line), nonl=done < total)

    return report
