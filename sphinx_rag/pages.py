"""Which of the site's pages are searched, where each is, and how much it counts: the
questions the extension (chunks, index) and the search bar (where it goes) both ask."""

from __future__ import annotations

import fnmatch
from pathlib import Path

__all__ = ["excluded", "gallery_source", "page_url", "page_weight"]


def excluded(app, docname: str) -> bool:
    """Left out of the index and the agents' files: ``sphinx_rag_exclude``, or ``:nosearch:``
    (file-wide metadata that keeps a page out of Sphinx's own search too)."""
    return ("nosearch" in app.env.metadata.get(docname, {})
            or any(fnmatch.fnmatch(docname, p) for p in app.config.sphinx_rag_exclude))


def gallery_source(app, docname: str) -> Path | None:
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


def page_weight(docname: str, patterns: dict) -> float:
    weights = [w for p, w in patterns.items() if fnmatch.fnmatch(docname, p)]
    return float(min(weights)) if weights else 1.0


def page_url(app, docname: str) -> str:
    """A page's URL from the site root. singlehtml names each document by a fragment of
    its one file (``#document-guide``), which needs that file in front of it."""
    uri = app.builder.get_target_uri(docname)
    return f"{app.config.root_doc}{app.builder.out_suffix}{uri}" if uri.startswith("#") else uri
