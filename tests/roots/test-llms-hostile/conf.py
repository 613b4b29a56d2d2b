project = "Gadgets <script>alert('name')</script> [home](https://evil.example/name)"
extensions = ["sphinx_rag"]
sphinx_rag_embeddings = False  # keyword-only index: a fast build
