"""Sphinx configuration for the mlkit demo documentation.

This site documents a small scikit-learn-like library (``mlkit``, shipped
next to this file) and is used to exercise and evaluate ``sphinx_rag``.

Set the environment variable ``SPHINX_RAG_DISABLE=1`` to build without the
``sphinx_rag`` extension (useful to compare build times, or to build the
site before ``sphinx_rag`` is installed).
"""

import os
import sys

sys.path.insert(0, os.path.abspath("."))

import mlkit  # noqa: E402

# -- Project information -----------------------------------------------------

project = "mlkit"
author = "The mlkit developers"
copyright = "2024, The mlkit developers"
version = mlkit.__version__
release = mlkit.__version__

# -- General configuration ---------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.mathjax",
]
if not os.environ.get("SPHINX_RAG_DISABLE"):
    extensions.append("sphinx_rag")

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "examples"]
root_doc = "index"

# -- autodoc / autosummary / numpydoc ----------------------------------------

autosummary_generate = True
numpydoc_show_class_members = False

# -- sphinx-gallery ------------------------------------------------------------

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    # The examples are rendered, never executed, at build time.
    "plot_gallery": False,
    "download_all_examples": False,
}

# -- HTML output -------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"mlkit {release} documentation"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# Follow the reader's OS light/dark preference (this also silences the theme's
# "invalid theme mode" console message on a fresh browser profile).
html_context = {"default_mode": "auto"}

# -- sphinx-rag ----------------------------------------------------------------

# The searches this site's readers depend on, checked by every build (README: "The
# golden set"); `sphinx-rag golden add search_golden.json "QUERY" URL` adds one.
sphinx_rag_golden = "search_golden.json"
