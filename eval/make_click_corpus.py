"""Make the mixed API + guide evaluation corpus: Click's docs, from its pinned sdist on PyPI.

Usage::

    python eval/make_click_corpus.py OUT_DIR
    python -m sphinx -b html -j 2 OUT_DIR OUT_DIR/_build/html
    python eval/check_questions.py OUT_DIR/_build/html eval/click_questions.json
    sphinx-rag evaluate OUT_DIR/_build/html eval/click_questions.json

Why Click: a well-known project's documentation that nobody in this project wrote,
with both kinds of page readers search: an API reference written with autodoc over
Sphinx field-list docstrings (``:param x:``, ``:return:``; about 100 classes,
functions and exceptions on one page) and some 30 guide pages (tutorial, how-to,
concepts, reference prose) in MyST Markdown. The changelog, the license and the
contributing guide are left out.

The docstrings are those of the sdist: its ``src/click`` is copied next to the docs
and put first on ``sys.path``, so autodoc and the examples read Click 8.4.0 whatever
Click is installed. The project's own conf.py needs pallets-sphinx-themes and
sphinxcontrib-log-cabinet; the conf.py written here uses a stock theme, myst-parser
and sphinx-tabs (both in sphinx-rag's dev extras) and a stand-in, defined in it, for
the theme's ``click:example`` / ``click:run`` directives: an example's code is shown
and run into the page's namespace, and a run's ``invoke(...)`` calls are made with
``click.testing.CliRunner`` and shown as the terminal session they give (the command
line, what was typed, the output), as on Click's own site.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from make_narrative_corpus import copy_pages, fetch_sdist

PACKAGE, VERSION = "click", "8.4.0"
LEFT_OUT = ("changes.rst", "license.md", "contributing.md")
SOURCE_DIR = "_click_src"

CONF = '''\
"""Click {version}'s docs (docs/ of its sdist), built with sphinx_rag and a stock theme.

Written by eval/make_click_corpus.py; the theme's click domain is replaced by the
stand-in below, and autodoc reads the sdist's own source ({source}/click).
"""

import shlex
import subprocess
import sys
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.domains import Domain

sys.path.insert(0, str(Path(__file__).parent / "{source}"))

project = "Click"
author = "Pallets"
copyright = "2014 Pallets"
version = release = "{version}"
master_doc = "index"
default_role = "code"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.extlinks", "sphinx_tabs.tabs", "myst_parser", "sphinx_rag"]
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_preserve_defaults = True
extlinks = {{
    "issue": ("https://github.com/pallets/click/issues/%s", "#%s"),
    "pr": ("https://github.com/pallets/click/pull/%s", "#%s"),
}}
myst_heading_anchors = 3
exclude_patterns = ["_build", "{source}"]
html_theme = "alabaster"
html_static_path = ["_static"]
suppress_warnings = ["ref.python", "ref.doc", "ref.ref", "myst.xref_missing"]


def _runner(document):
    """One CliRunner and one namespace per page: a run sees the examples above it."""
    import click
    from click.testing import CliRunner

    if not hasattr(document, "click_runner"):
        document.click_runner = (CliRunner(), {{"click": click, "__file__": "example.py"}})
    return document.click_runner


def _literal(text, language):
    node = nodes.literal_block(text, text)
    node["language"] = language
    return node


def _echoed_call(*args, **kwargs):
    """``subprocess.call`` as an example sees it: the command's output goes to click.echo,
    so that a run shows it (an example that imports ``call`` binds this one)."""
    import click

    proc = subprocess.run(*args, capture_output=True, **kwargs)
    click.echo((proc.stdout + proc.stderr).decode("utf-8", "replace").rstrip())
    return proc.returncode


class Example(Directive):
    """``click:example``: the code, shown, and run into the page's namespace."""

    has_content = True

    def run(self):
        source = "\\n".join(self.content)
        _, namespace = _runner(self.state.document)
        call, subprocess.call = subprocess.call, _echoed_call
        try:
            exec(compile(source, "<example>", "exec"), namespace)
        finally:
            subprocess.call = call
        return [_literal(source, "python")]


class Run(Directive):
    """``click:run``: each ``invoke(cli, args, prog_name=, input=, env=)`` of its code made
    with CliRunner, shown as a terminal session ("$ prog args", what was typed, the output)."""

    has_content = True

    def run(self):
        runner, namespace = _runner(self.state.document)
        lines = []

        def invoke(cli, args=None, prog_name=None, input=None, terminate_input=False, env=None, **extra):
            args = list(args or [])
            for key, value in sorted((env or {{}}).items()):
                lines.append(f"$ export {{key}}={{shlex.quote(value)}}")
            prog_name = prog_name or cli.name.replace("_", "-")
            lines.append(f"$ {{prog_name}} {{' '.join(shlex.quote(a) for a in args)}}".rstrip())
            if isinstance(input, (list, tuple)):
                input = "\\n".join(input) + "\\n"
            result = runner.invoke(cli, args, input=input, env=env, prog_name=prog_name.rsplit(" ", 1)[-1],
                                   **extra)
            lines.extend(result.output.splitlines())
            return result

        def println(text=""):
            lines.append(text)

        exec(compile("\\n".join(self.content), "<run>", "exec"), namespace,
             {{"invoke": invoke, "println": println, "isolated_filesystem": runner.isolated_filesystem}})
        return [_literal("\\n".join(lines), "shell-session")]


class ClickDomain(Domain):
    name = "click"
    label = "Click"
    directives = {{"example": Example, "run": Run}}

    def merge_domaindata(self, docnames, otherdata):
        pass  # no data: the runners live on the documents being read


def _forget_runner(app, doctree):
    """The runner holds modules: it must not be pickled with the doctree."""
    if hasattr(doctree, "click_runner"):
        del doctree.click_runner


def setup(app):
    app.add_domain(ClickDomain)
    app.connect("doctree-read", _forget_runner)
'''


def drop_left_out_links(text: str) -> str:
    """Links to pages left out of the corpus become their plain text."""
    text = re.sub(r"^   (changes|license|contributing)\n", "", text, flags=re.M)  # index.rst's toctree
    return re.sub(r"\{doc\}`/?(changes|license|contributing)`", r"the \1 page", text)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to write the Sphinx project into (replaced)")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        archive = fetch_sdist(Path(tmp), PACKAGE, VERSION)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        root = Path(tmp) / f"{PACKAGE}-{VERSION}"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        copy_pages(root / "docs", out, LEFT_OUT, drop_left_out_links)
        shutil.copytree(root / "src" / "click", out / SOURCE_DIR / "click")
    (out / "conf.py").write_text(CONF.format(version=VERSION, source=SOURCE_DIR), encoding="utf-8")
    pages = len(list(out.glob("*.md"))) + len(list(out.glob("*.rst")))
    print(f"{PACKAGE} {VERSION} docs -> {out} ({pages} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
