import os
import sys

sys.path.insert(0, os.path.abspath("."))
project = "malformed"
extensions = ["sphinx.ext.autodoc", "sphinx_rag"]
sphinx_rag_embeddings = False
