# The docstring shapes of a real numpydoc site that Sphinx and numpydoc accept and
# sphinx-rag's numpydoc parse may not (issue 44): imageio's class template documents each
# method twice on its page (an autosummary row, then its automethod), and a class's and
# its __init__'s docstrings each with a Parameters section (autoclass_content = "both").
import os
import sys

sys.path.insert(0, os.path.abspath("."))
project = "shapes"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", "sphinx_rag"]
autosummary_generate = True
autoclass_content = "both"
templates_path = ["_templates"]
numpydoc_show_class_members = False
sphinx_rag_embeddings = False
