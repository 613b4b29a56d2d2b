"""Check the reader-style questions (``reader_questions/*.json``) against the built sites:
each question's label must name a chunk of its project's site, its URL and a phrase of
that chunk's text (``text_contains``, matched as ``sphinx-rag evaluate`` matches it).

    python training/check_reader_questions.py SITES [PROJECT ...]

SITES is ``make_sites.py``'s folder (``SITES/<project>/_build/html``). Prints each bad
question and a count per project; exits 1 when any is bad.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sphinx_rag.chunk.display import display_text  # noqa: E402
from sphinx_rag.search.index import IndexReader  # noqa: E402
from sphinx_rag.tools.evaluate import _fold  # noqa: E402

QUESTIONS = HERE / "reader_questions"
STYLES = ("howto", "natural", "which", "paraphrase", "concept", "keyword", "typo")


def holds(chunk: dict, label: dict) -> bool:
    """Whether ``chunk`` answers a label: its URL, and the phrase in its text or in what the
    reader sees of it (as ``sphinx-rag evaluate`` matches a passage)."""
    phrase = _fold(label["text_contains"])
    return chunk["url"] == label["url"] and (
        phrase in _fold(chunk["text"]) or phrase in _fold(display_text(chunk.get("display") or [])))


def problems(project: str, html: Path) -> list[str]:
    """One line per question whose label no chunk of ``html`` carries."""
    index = IndexReader(html)
    by_url = collections.defaultdict(list)
    for i in range(index.manifest["counts"]["chunks"]):
        chunk = index.chunk(i)
        by_url[chunk["url"]].append(chunk)
    out = []
    for q in json.loads((QUESTIONS / f"{project}.json").read_text(encoding="utf-8")):
        for rel in q["relevant"]:
            if not any(holds(chunk, rel) for chunk in by_url.get(rel["url"], [])):
                out.append(f"{q['id']}: no chunk at {rel['url']} holds {rel['text_contains']!r}")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", type=Path)
    parser.add_argument("projects", nargs="*", help="default: every file in reader_questions/")
    args = parser.parse_args(argv)
    bad = 0
    for project in args.projects or sorted(p.stem for p in QUESTIONS.glob("*.json")):
        found = problems(project, args.sites / project / "_build" / "html")
        bad += len(found)
        print("\n".join([*found, f"{project}: {len(found)} bad"]))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
