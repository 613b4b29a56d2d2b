import os
import sys

sys.path.insert(0, os.path.abspath("."))

project = "Escapes"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx_rag"]
sphinx_rag_embeddings = False  # keyword-only index: a fast build
