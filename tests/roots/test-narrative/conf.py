project = "narrative"
extensions = ["myst_parser", "sphinx_design", "sphinx_tabs.tabs", "sphinx.ext.todo", "sphinx_rag"]
todo_include_todos = True
sphinx_rag_embeddings = False
sphinx_rag_chunk_tokens = 80
sphinx_rag_chunk_overlap = 16
sphinx_rag_exclude = ["private/*"]
