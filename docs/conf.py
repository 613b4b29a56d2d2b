"""Sphinx configuration of sphinx-rag's own documentation, searched by sphinx-rag.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` (``.ci/run`` does, after the
tests). The default model comes from its package: no torch. ``SPHINX_RAG_DOCS_URL`` (set
by .github/workflows/docs.yml to the GitHub Pages URL) becomes ``html_baseurl``, which
is also where the build's warm start fetches the published index from.
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import sphinx_rag  # noqa: E402

project = "sphinx-rag"
author = "The sphinx-rag developers"
copyright = "2026, The sphinx-rag developers"
version = release = sphinx_rag.__version__
REPO = "https://github.com/sphinx-rag/sphinx-rag"

extensions = [
    "myst_parser",
    "sphinx_design",
    "sphinx.ext.extlinks",
    "sphinx_rag",
    "sphinx_rag_docs",  # _ext/: the settings, the CLI and the MCP tools rendered from the code
    "sphinx_rag_plots",  # _ext/: benchmark figures drawn as SVG at build time
    "sphinx_rag_figures",  # _ext/: {figure}`key`, a value of eval/RESULTS.md's current figures
]

root_doc = "index"
exclude_patterns = ["_build", "screenshots/README*"]
nitpicky = True
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
extlinks = {"repo": (f"{REPO}/blob/main/%s", "%s")}

html_theme = "pydata_sphinx_theme"
html_title = f"sphinx-rag {release}"
html_baseurl = os.environ.get("SPHINX_RAG_DOCS_URL", "")
html_theme_options = {
    "github_url": REPO,
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "auto"}
# Pages without subpages need no left sidebar: their wide tables get the room.
html_sidebars = {page: [] for page in ("index", "getting-started", "benchmarks", "development")}

# -- sphinx-rag, on its own docs ------------------------------------------------------

# The searches a reader of these docs depends on, checked by every build: -W fails it.
sphinx_rag_golden = "search_golden.json"
sphinx_rag_suggestions = ["How do I install sphinx-rag?", "auto"]
sphinx_rag_feedback_url = f"{REPO}/issues/new?title=Docs+search:+{{query}}&body={{results}}"
