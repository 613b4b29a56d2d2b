project = "Widgets"
extensions = ["sphinx_rag"]
sphinx_rag_embeddings = False  # keyword-only index: a fast build
sphinx_rag_exclude = ["drafts/*"]
html_theme_options = {"description": "Widgets makes small widgets out of plain Python objects."}
