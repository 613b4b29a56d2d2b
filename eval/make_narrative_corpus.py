"""Make the narrative evaluation corpus: Flask's user guide, from its pinned sdist on PyPI.

Usage::

    python eval/make_narrative_corpus.py OUT_DIR
    python -m sphinx -b html -j 2 OUT_DIR OUT_DIR/_build/html
    sphinx-rag evaluate OUT_DIR/_build/html eval/flask_questions.json

Why Flask: long-form narrative documentation (quickstart, tutorial, patterns,
deployment, design notes; about 80 pages) that nobody in this project wrote, in
plain reStructuredText, shipped in the sdist. The API reference, the changelog,
the license and the contributing guide are left out: the corpus is the prose.

The project's own conf.py needs its theme and extensions (pallets-sphinx-themes,
sphinx-tabs, log_cabinet, intersphinx over the network). The conf.py written here
uses a stock theme and sphinx_rag only, plus two small stand-ins defined in it: the
``tabs``/``tab``/``group-tab`` directives render each tab as a titled block, and the
``gh`` role renders its text. Links to the left-out pages become plain text.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGE, VERSION = "flask", "3.0.3"
LEFT_OUT = ("api.rst", "changes.rst", "license.rst", "contributing.rst")

CONF = '''\
"""Flask {version}'s user guide (docs/ of its sdist), built with sphinx_rag and a stock theme.

Written by eval/make_narrative_corpus.py; Flask's own extensions are replaced by the
stand-ins below.
"""

from docutils import nodes
from docutils.parsers.rst import Directive, directives

project = "Flask"
author = "Pallets"
copyright = "2010 Pallets"
version = release = "{version}"
extensions = ["sphinx.ext.extlinks", "sphinx_rag"]
extlinks = {{
    "issue": ("https://github.com/pallets/flask/issues/%s", "#%s"),
    "pr": ("https://github.com/pallets/flask/pull/%s", "#%s"),
}}
default_role = "code"
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = ["_static"]


class Tabs(Directive):
    """sphinx-tabs' container: its tabs one after the other."""

    has_content = True

    def run(self):
        node = nodes.container()
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


class Tab(Directive):
    """One tab: its title as a paragraph, then its content."""

    has_content = True
    required_arguments = 1
    final_argument_whitespace = True

    def run(self):
        node = nodes.container()
        node += nodes.paragraph(text=self.arguments[0])
        self.state.nested_parse(self.content, self.content_offset, node)
        return [node]


def gh_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    words = text[:-1].rsplit("<", 1)[0].strip() if text.endswith(">") else text
    return [nodes.literal(rawtext, words)], []


def setup(app):
    directives.register_directive("tabs", Tabs)
    directives.register_directive("tab", Tab)
    directives.register_directive("group-tab", Tab)
    app.add_role("gh", gh_role)
'''


def fetch_sdist(dest: Path, package: str = PACKAGE, version: str = VERSION) -> Path:
    """Download a pinned sdist with pip (PyPI only) and return the archive
    (make_click_corpus.py uses it too)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q",
                    "-d", str(dest), f"{package}=={version}"], check=True)
    (archive,) = dest.glob(f"{package}-{version}.tar.gz")
    return archive


def copy_pages(src: Path, out: Path, left_out: tuple[str, ...], rewrite) -> None:
    """A docs tree copied for a corpus (make_click_corpus.py, make_attrs_corpus.py): its
    own build files and the pages ``left_out`` skipped, each .rst/.md page's text passed
    through ``rewrite`` (links to left-out pages made plain text), the rest copied as is."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] == "_build" or path.is_dir() or rel.name in ("conf.py", "Makefile", "make.bat"):
            continue
        if rel.as_posix() in left_out:
            continue
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in (".rst", ".md"):
            target.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
        else:
            shutil.copy2(path, target)


def drop_left_out_links(text: str) -> str:
    """Links to pages left out of the corpus become their plain text."""
    text = re.sub(r":doc:`(api|changes|license|contributing)`", r"the \1 reference", text)
    text = re.sub(r":ref:`(notes-on-proxies|core-signals-list)`", r"``\1``", text)  # labels of api.rst
    # pages of other projects' docs (intersphinx is off: no network at build time)
    return re.sub(r":doc:`(?:([^<`]+?)\s*<)?(?:werkzeug|click):([^>`]+)>?`",
                  lambda m: m[1] or f"``{m[2]}``", text)


def copy_docs(src: Path, out: Path):
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] in ("_build",) or path.is_dir() or rel.name in ("conf.py", "Makefile", "make.bat"):
            continue
        if rel.as_posix() in LEFT_OUT:
            continue
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".rst":
            text = path.read_text(encoding="utf-8")
            if rel.as_posix() == "index.rst":
                text = re.sub(r"^   (api|changes|license|contributing)\n", "", text, flags=re.M)
            target.write_text(drop_left_out_links(text), encoding="utf-8")
        else:
            shutil.copy2(path, target)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to write the Sphinx project into (replaced)")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        archive = fetch_sdist(Path(tmp))
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        docs = Path(tmp) / f"{PACKAGE}-{VERSION}" / "docs"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        copy_docs(docs, out)
    (out / "conf.py").write_text(CONF.format(version=VERSION), encoding="utf-8")
    print(f"{PACKAGE} {VERSION} docs -> {out} ({len(list(out.rglob('*.rst')))} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
