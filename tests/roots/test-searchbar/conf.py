project = "searchbar"
extensions = ["sphinx_rag"]
html_theme = "alabaster"
sphinx_rag_embeddings = False  # keyword-only index: a fast build
smartquotes = False  # keep the markup-like text below byte for byte
