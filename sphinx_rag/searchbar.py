"""Sphinx glue of the browser search bar (HTML builders only).

builder-inited:  copies the built client (``sphinx_rag/static/sphinx_rag/``, made by
                 ``npm run build`` in ``js/``) to ``<html>/_static/sphinx_rag/`` (files
                 that changed only; not through ``html_static_path``, whose change
                 would make every incremental build report a changed configuration;
                 onnxruntime-web's wasm only once the index is written, if it ships the
                 query model: ``copy_model_runtime``; wllama's bundle and wasm unless
                 ``sphinx_rag_llm_browser`` is False), and adds its CSS and script to
                 every page. Runtime config reaches the script as ``data-`` attributes of its ``<script>`` tag, never by templating JS:
                 ``data-sphinx-rag`` (version; also how the script finds its tag),
                 ``data-search-page`` (Sphinx's search page, from the site root) and
                 ``data-project`` (the project name, for the LLM prompt of "Ask"
                 when only the reader configured an LLM server) and
                 ``data-theme-search`` (``sphinx_rag_theme_search``) and
                 ``data-feedback-url`` (``sphinx_rag_feedback_url``, when set).
html-page-context: a page with a Markdown twin (``sphinx_rag_llms_txt``, the page not left
                 out of the index) names it in its head, ``<link rel="alternate"
                 type="text/markdown" href="page.html.md">``: agents find it there, and the
                 client adds "View as Markdown · Copy as Markdown" from it (markdown_link.js).
The index step (``index.build.write_index``) also writes ``index/manifest.js`` for the
pages that get the bar (``wants_search_bar``): the entry of the index as a classic
script for pages opened from ``file://``, where fetch and workers fail (the
keyword shards are classic scripts already, see ``search/shards.py``).

The client script is a classic (non-module) script on purpose: Chromium refuses
module scripts from ``file://``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sphinx.util import logging

from ._version import __version__
from .config import llm_browser_settings

__all__ = ["CLIENT_DIR", "wants_search_bar", "on_builder_inited", "on_html_page_context", "copy_model_runtime"]

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
CLIENT_DIR = STATIC / "sphinx_rag"  # package data; its content comes from `npm run build`


def wants_search_bar(app) -> bool:
    """HTML pages get the bar; e-books (epub, also an "html" format) do not."""
    builder = app.builder
    return getattr(builder, "format", "") == "html" and not builder.name.startswith("epub")


def on_builder_inited(app):
    if not wants_search_bar(app):
        return
    app.connect("html-page-context", on_html_page_context)
    if not (CLIENT_DIR / "searchbar.js").is_file():
        logger.warning(
            f"[sphinx-rag] the browser client is missing from {CLIENT_DIR}: run `npm ci && npm run build` "
            "in the js/ directory of the sphinx-rag sources (or install a released wheel); "
            "the search bar is left out of this build",
            type="sphinx_rag", subtype="client",
        )
        return
    dest = Path(app.outdir) / "_static" / "sphinx_rag"
    _copy_client(dest, lambda name: not _is_runtime(name) and not _is_wllama(name))
    _copy_wllama(dest, llm_browser_settings(app.config.sphinx_rag_llm_browser)["gguf"])
    app.add_css_file("sphinx_rag/searchbar.css")
    app.add_js_file(
        "sphinx_rag/searchbar.js",
        loading_method="defer",  # before the theme's deferred scripts: it must see Ctrl+K first
        **{
            "data-sphinx-rag": __version__,
            # Sphinx's own search page, relative to the site root (the fallback link)
            "data-search-page": app.builder.get_target_uri("search"),
            "data-project": str(app.config.project or ""),
            # "replace": the theme's search box opens the dialog; "both": a button beside it
            "data-theme-search": app.config.sphinx_rag_theme_search,
            # "Report a bad result": the URL template, or no attribute (no link)
            **({"data-feedback-url": app.config.sphinx_rag_feedback_url} if app.config.sphinx_rag_feedback_url else {}),
        },
    )


def on_html_page_context(app, pagename, templatename, context, doctree):
    """A page with a Markdown twin links to it from its head (its name: the page's file
    name with ``.md``, in the same directory, as ``agents.markdown_text.twin_name`` places it)."""
    from posixpath import basename

    from .agents.markdown import twin_name
    from .pages import excluded

    if (doctree is None or not app.config.sphinx_rag_llms_txt or pagename not in app.env.found_docs
            or excluded(app, pagename) or app.builder.name == "singlehtml"):
        return
    uri = app.builder.get_target_uri(pagename)
    name = basename(twin_name(uri)) if not uri.startswith("#") else ""
    if name:
        from html import escape

        context["metatags"] = context.get("metatags", "") + (
            f'\n<link rel="alternate" type="text/markdown" href="{escape(name)}" title="This page as Markdown" />')


def _is_runtime(name: str) -> bool:
    """onnxruntime-web's wasm runtime: only sites that ship the query model need it (3.7 MB gzip)."""
    return name.startswith("ort-")


def _is_wllama(name: str) -> bool:
    """wllama (llama.cpp in wasm: its bundle and wasm, 10 MB) for Ask's in-browser model: only
    sites that allow one (``sphinx_rag_llm_browser`` not False) ship it; a reader's browser
    fetches it only once that reader agreed to run a model."""
    return name.startswith("wllama")


def _copy_wllama(dest: Path, needed: bool):
    if needed:
        _copy_client(dest, _is_wllama)
    else:
        for path in dest.glob("wllama*"):
            path.unlink(missing_ok=True)


def copy_model_runtime(app, needed: bool):
    """After the index is written: copy onnxruntime-web's files if the index ships the
    model, remove them if it does not (``sphinx_rag_query_encoder = "static"``)."""
    if not wants_search_bar(app) or not (CLIENT_DIR / "searchbar.js").is_file():
        return
    dest = Path(app.outdir) / "_static" / "sphinx_rag"
    if needed:
        _copy_client(dest, _is_runtime)
    else:
        for path in dest.glob("ort-*"):
            path.unlink(missing_ok=True)


def _copy_client(dest: Path, wanted):
    """The client files named ``wanted`` into the site (unchanged files are not copied)."""
    dest.mkdir(parents=True, exist_ok=True)
    for src in sorted(CLIENT_DIR.iterdir()):
        if not src.is_file() or not wanted(src.name):
            continue
        target, stat = dest / src.name, src.stat()
        if not (target.is_file() and (target.stat().st_size, target.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)):
            shutil.copyfile(src, target)  # not copy2: a read-only installed file must not stay read-only
            os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the next build compares, not reads
