"""A page longer than a read_page part in one line, and one in one code block (issue 42,
items 10 and 13): a paragraph of about 320 KB (one line of its twin) and a code block of
about 300 KB.

The pages' bodies are written here, on ``source-read``, from a fixed seed: the root stays
small, every build gets the same text. Keyword-only: it builds in seconds.
"""

import random

project = "longlines"
extensions = ["sphinx_rag"]
html_theme = "alabaster"
sphinx_rag_embeddings = False

WORDS = ["sensor", "reading", "calibrated", "offset", "storm", "mast", "battery", "probe", "station", "night"]


def paragraph_page() -> str:
    rng = random.Random(42)
    words = [f"value_{n}_{rng.choice(WORDS)}" if n % 7 == 0 else rng.choice(WORDS) for n in range(36000)]
    return ("Long paragraph\n==============\n\nIt starts here.\n\n" + " ".join(words)
            + " lastwordofthelongparagraph.\n\nAnd it ends here.\n")


def code_page() -> str:
    rng = random.Random(43)
    lines = [f"line_{n} = transform(state, weight={rng.randint(1, 9)}, mode='{rng.choice(WORDS)}')"
             for n in range(5400)]
    return ("Long code\n=========\n\nOne transform per line.\n\n.. code-block:: python\n\n"
            + "\n".join("   " + line for line in lines) + "\n\nAfter the code.\n")


PAGES = {"paragraph": paragraph_page, "code": code_page}


def write_page(app, docname, source):
    if docname in PAGES:
        source[0] = PAGES[docname]()


def setup(app):
    app.connect("source-read", write_page)
