"""Make the fifth evaluation corpus: attrs's docs, from its pinned sdist on PyPI.

Usage::

    python eval/make_attrs_corpus.py OUT_DIR [--sdist attrs-26.1.0.tar.gz]
    python -m sphinx -b html -j 2 OUT_DIR OUT_DIR/_build/html
    python eval/check_questions.py OUT_DIR/_build/html eval/attrs_questions.json
    sphinx-rag evaluate OUT_DIR/_build/html eval/attrs_questions.json

Why attrs: a well-known project's documentation that nobody in this project wrote, for
questions written before any ranking was looked at (issue 27: the older sets were tuned
on). Two API pages made by autodoc and hand-written ``function::`` entries (``attrs``
and the classic ``attr`` namespace, 110 objects; docstrings in Sphinx field lists
and Napoleon sections) and 12 narrative pages in MyST Markdown (overview, examples,
initialization, comparison, hashing, type annotations, extending, how it works, the
glossary, names). The changelog and the license page are left out.

The docstrings are those of the sdist: its ``src/attr`` and ``src/attrs`` are copied
next to the docs and put first on ``sys.path``, so autodoc reads attrs 26.1.0 whatever
attrs is installed. The README that index.md and overview.md include is copied there
too. The project's conf.py is followed (furo, myst-parser with its extensions,
napoleon, doctest, todo) except for what cannot run here: ``notfound.extension`` (a 404
page) and ``sphinxcontrib.towncrier`` (the changelog's draft entries, a page left out)
are not installed and are dropped, intersphinx is off (no network at build time), and
the release comes from this pin, not from the installed package's metadata.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from make_narrative_corpus import copy_pages, fetch_sdist

PACKAGE, VERSION = "attrs", "26.1.0"
SHA256 = "d03ceb89cb322a8fd706d4fb91940737b6642aa36998fe130a9bc96c985eff32"
LEFT_OUT = ("changelog.md", "license.md")
SOURCE_DIR = "_attrs_src"

CONF = '''\
"""attrs {version}'s docs (docs/ of its sdist), built with sphinx_rag.

Written by eval/make_attrs_corpus.py from the project's conf.py: furo, myst-parser,
napoleon; notfound, towncrier and intersphinx dropped; autodoc reads the sdist's own
source ({source}/attr, {source}/attrs).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "{source}"))

project = "attrs"
author = "Hynek Schlawack"
copyright = f"2015, {{author}}"
release = "{version}"
version = release.rsplit(".", 1)[0]
master_doc = "index"
source_suffix = {{".rst": "restructuredtext", ".md": "markdown"}}
extensions = [
    "myst_parser",
    "sphinx.ext.napoleon",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.todo",
    "sphinx_rag",
]
myst_enable_extensions = ["colon_fence", "smartquotes", "deflist"]
doctest_global_setup = """
from attr import define, frozen, field, validators, Factory
"""
exclude_patterns = ["_build", "{source}"]
default_role = "any"
add_function_parentheses = True
html_theme = "furo"
html_theme_options = {{
    "sidebar_hide_name": True,
    "light_logo": "attrs_logo.svg",
    "dark_logo": "attrs_logo_white.svg",
    "top_of_page_buttons": [],
}}
html_css_files = ["custom.css"]
html_static_path = ["_static"]
html_show_sourcelink = False
suppress_warnings = ["image.nonlocal_uri", "ref.any", "ref.python", "ref.doc", "myst.xref_missing"]
'''


def drop_left_out_links(text: str) -> str:
    """Links to pages left out of the corpus become their plain text; the README that
    pages include is read from the copied source."""
    text = re.sub(r"^(license|changelog)\n", "", text, flags=re.M)  # index.md's toctree
    text = text.replace("([What's new?](changelog.md))", "")
    return text.replace("{include} ../README.md", f"{{include}} {SOURCE_DIR}/README.md")




def check_sha256(archive: Path):
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"[sphinx-rag] {archive} has sha256 {digest}, expected {SHA256} "
                         f"(the {PACKAGE} {VERSION} sdist on PyPI)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to write the Sphinx project into (replaced)")
    parser.add_argument("--sdist", help=f"a local {PACKAGE}-{VERSION}.tar.gz instead of downloading it")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(args.sdist) if args.sdist else fetch_sdist(Path(tmp), PACKAGE, VERSION)
        check_sha256(archive)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        root = Path(tmp) / f"{PACKAGE}-{VERSION}"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        copy_pages(root / "docs", out, LEFT_OUT, drop_left_out_links)
        for package in ("attr", "attrs"):
            shutil.copytree(root / "src" / package, out / SOURCE_DIR / package)
        shutil.copy2(root / "README.md", out / SOURCE_DIR / "README.md")
    (out / "conf.py").write_text(CONF.format(version=VERSION, source=SOURCE_DIR), encoding="utf-8")
    pages = len(list(out.glob("*.md"))) + len(list(out.glob("*.rst")))
    print(f"{PACKAGE} {VERSION} docs -> {out} ({pages} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
