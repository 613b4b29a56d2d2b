import os
import sys

sys.path.insert(0, os.path.abspath("."))
project = "apidemo"
extensions = ["sphinx.ext.autodoc", "numpydoc", "sphinx_rag"]
numpydoc_show_class_members = False
sphinx_rag_embeddings = False
