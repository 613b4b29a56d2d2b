"""sphinx-rag: serverless semantic + keyword search for Sphinx documentation.

Add ``"sphinx_rag"`` to ``extensions``; ``sphinx-build -b html`` then writes a
static search index under ``_static/sphinx_rag/``. See ARCHITECTURE.md.
"""

from ._version import __version__

__all__ = ["__version__", "setup"]


def setup(app):
    """Register config values and event handlers (the handlers live in extension.py)."""
    from . import extension, searchbar
    from .config import CONFIG

    app.setup_extension("sphinx.ext.autodoc")  # its events carry the raw docstrings
    for option in CONFIG:
        app.add_config_value(option.name, option.default, option.rebuild, types=option.types)
    app.connect("config-inited", extension.on_config_inited)
    app.connect("builder-inited", extension.on_builder_inited)
    app.connect("autodoc-process-signature", extension.on_autodoc_signature, priority=400)
    app.connect("autodoc-process-docstring", extension.on_autodoc_docstring, priority=400)
    app.connect("doctree-read", extension.on_doctree_read)
    app.connect("doctree-resolved", extension.on_doctree_resolved)
    app.connect("env-purge-doc", extension.on_env_purge_doc)
    app.connect("env-merge-info", extension.on_env_merge_info)
    app.connect("build-finished", extension.on_build_finished)
    app.connect("builder-inited", searchbar.on_builder_inited)
    return {"version": __version__, "env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
