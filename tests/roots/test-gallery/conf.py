project = "gallery"
extensions = ["sphinx_gallery.gen_gallery", "sphinx_rag"]
sphinx_gallery_conf = {"examples_dirs": "examples", "gallery_dirs": "auto_examples",
                       "plot_gallery": False, "download_all_examples": False}
sphinx_rag_embeddings = False
