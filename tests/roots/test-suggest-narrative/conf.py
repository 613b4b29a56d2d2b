# A narrative-only site (no API): a task queue's user docs, with the pages every project
# has besides (changelog, contributing, license, development) that no suggestion asks about.
project = "quaylane"
extensions = ["sphinx_rag"]
sphinx_rag_embeddings = False
