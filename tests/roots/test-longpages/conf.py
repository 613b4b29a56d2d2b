"""Long pages (issue 29): a 5,000-row table, a 20,000-line code block, 2,000 sections.

The pages' bodies are written here, on ``source-read``, from a fixed seed: the root stays
small, every build gets the same text. Each row key (``SN0421``), code line name
(``codeline19999``) and station code name (``brakelomiru``) is in one place only.
"""

import random

project = "longpages"
extensions = ["sphinx_rag"]
html_theme = "alabaster"

ROWS, LINES, SECTIONS = 5000, 20000, 2000
SYLLABLES = ["bra", "ke", "lo", "mi", "ru", "ven", "dor", "quil", "zet", "fo", "nik", "sa", "tor", "wel",
             "xa", "gri", "plu", "os", "mar", "tin", "vo", "ja"]
SITES = ["north", "south", "harbour", "ridge", "valley", "delta"]
STATES = ["nominal", "drifting", "offline", "replaced", "pending"]
NOTES = ["checked after the storm", "reading is noisy at night", "moved to a new mast", "battery swapped",
         "calibrated against the reference probe", "no remarks"]
MODES = ["fast", "exact", "lazy", "cached"]


def table_rows(rng: random.Random) -> list[list[str]]:
    return [[f"SN{n:04d}", f"{rng.choice(SITES)}", f"{rng.uniform(-2, 2):+.4f}", rng.choice(STATES),
             rng.choice(NOTES)] for n in range(ROWS)]


def simple_table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    rule = "  ".join("=" * w for w in widths)
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(header), rule, *map(line, rows), rule])


def code_names(rng: random.Random) -> list[str]:
    """Pseudo-words of four syllables, all distinct: no English word, no other page's."""
    seen: set[str] = set()
    while len(seen) < SECTIONS:
        seen.add("".join(rng.choice(SYLLABLES) for _ in range(4)))
    return sorted(seen, key=lambda w: rng.random())


def table_page() -> str:
    rows = table_rows(random.Random(29))
    body = simple_table(rows, ["Sensor", "Site", "Offset", "State", "Notes"])
    return ("Sensor registry\n===============\n\nEvery sensor of the plant: its site, calibration offset, "
            "state and notes.\n\n.. table:: Calibration of every sensor\n   :name: calibration-table\n\n"
            + "\n".join("   " + line for line in body.splitlines()) + "\n")


def code_page() -> str:
    rng = random.Random(30)
    lines = [f"codeline{n} = transform(state, weight={rng.randint(1, 9)}, mode=\"{rng.choice(MODES)}\")"
             for n in range(LINES)]
    return ("Code page\n=========\n\nThe whole pipeline, one transform per line.\n\n.. code-block:: python\n\n"
            + "\n".join("   " + line for line in lines) + "\n")


def sections_page() -> str:
    rng = random.Random(31)
    out = ["Stations\n========\n\nEvery weather station of the network, one section each.\n"]
    for n, name in enumerate(code_names(rng)):
        title = f"Station {n}"
        out.append(f"{title}\n{'-' * len(title)}\n\nStation {n} stands at the {rng.choice(SITES)} site; its "
                   f"code name is {name}. It reports wind, rain and temperature every "
                   f"{rng.choice([5, 10, 15, 30])} minutes.\n")
    return "\n".join(out)


PAGES = {"table": table_page, "code": code_page, "sections": sections_page}


def write_page(app, docname, source):
    if docname in PAGES:
        source[0] = PAGES[docname]()


def setup(app):
    app.connect("source-read", write_page)
