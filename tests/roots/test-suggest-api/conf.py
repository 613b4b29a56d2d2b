# An API-only site: one page of autodoc'd objects whose summaries are written as many
# projects write them (a noun phrase for a class, "Return ..." for a function).
import os
import sys

sys.path.insert(0, os.path.abspath("."))
project = "planar"
extensions = ["sphinx.ext.autodoc", "numpydoc", "sphinx_rag"]
numpydoc_show_class_members = False
sphinx_rag_embeddings = False
