"""The agents' files at build time (Sphinx's side of ``agents/``): each page's Markdown
twin from the doctree its HTML page is written from, and what llms.txt says besides the
pages (the project, a summary, the root toctree's sections)."""

from __future__ import annotations

from pathlib import Path

from sphinx.util import logging
from sphinx.util.display import status_iterator

from .agents.markdown import LlmsSite
from .pages import excluded, page_url

logger = logging.getLogger(__name__)

__all__ = ["make_twin", "page_twins", "llms_site"]


def make_twin(app, state, doctree, docname: str):
    """The page's Markdown twin (``agents/twins.py``), from the doctree the HTML page is written from."""
    from .agents.twins import page_twin, toctree_children

    env = app.env

    def entry(doc: str):
        if doc not in env.found_docs or excluded(app, doc):
            return None
        title = env.titles.get(doc)
        return (title.astext() if title is not None else doc), page_url(app, doc), toctree_children(env.tocs.get(doc))

    try:
        state.twins[docname] = page_twin(doctree, page_url(app, docname), entry)
    except Exception as exc:  # noqa: BLE001 - the chunks' twin stands in; the build goes on
        logger.warning(f"[sphinx-rag] the Markdown twin of {docname} is made from its chunks: its doctree could not "
                       f"be read ({type(exc).__name__}: {exc})", location=docname, type="sphinx_rag", subtype="llms")


def page_twins(app, wanted: list[str]) -> dict:
    """Every indexed page's twin: the pages written now, the others' from what the previous
    build kept in the doctree directory (``agents.twins.TWINS_FILE``), else their doctrees resolved
    again; kept there for the next build. {} when ``sphinx_rag_llms_txt`` is off."""
    from .agents.twins import TWINS_FILE, load_twins, save_twins

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


def llms_site(app, twins: dict | None = None) -> LlmsSite | None:
    """What llms.txt says besides the pages (None: ``sphinx_rag_llms_txt`` is off): the
    project, the theme's description if it has one (else the root page's first paragraph),
    and the root toctree's captions with the documents each reaches, in reading order;
    ``twins``: the pages' twins made from their doctrees (``page_twins``)."""
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
