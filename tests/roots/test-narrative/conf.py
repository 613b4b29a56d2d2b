project = "narrative"
extensions = ["myst_parser", "sphinx_design", "sphinx_tabs.tabs", "sphinx_rag"]
sphinx_rag_embeddings = False
sphinx_rag_chunk_tokens = 80
sphinx_rag_chunk_overlap = 16
sphinx_rag_exclude = ["private/*"]
