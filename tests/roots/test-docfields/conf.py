import os
import sys

sys.path.insert(0, os.path.abspath("."))
project = "docfields"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx_rag"]
sphinx_rag_embeddings = False
