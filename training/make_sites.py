"""Write and build one Sphinx site per training project, indexed by sphinx-rag.

The reranker must learn on passages exactly as sphinx-rag chunks them, so each project's
documentation goes through a real Sphinx build with ``sphinx_rag`` in its extensions:

* its public API (``Project.modules``): one autosummary page per module, one page per
  object, the installed package's docstrings as the project wrote them (numpydoc, Sphinx
  fields, Google sections: sphinx-rag's API chunker reads them all);
* its narrative pages (``Project.docs``), taken from its pinned sdist: the user guide,
  tutorials, how-tos, with the project's own ``automodule``/``autoclass`` pages. The
  project's ``conf.py`` is replaced by a stock one (autodoc, autosummary, numpydoc,
  myst-parser): directives of the project's own extensions are reported and skipped, the
  rest of the page is kept. Release notes, licences and contributing guides are left out.

Usage (in the training environment, ``training/README.md``)::

    python training/make_sites.py OUT_DIR                 # every project
    python training/make_sites.py OUT_DIR --only jinja2,pluggy

Each site lands in ``OUT_DIR/<project>/`` (sources) and ``OUT_DIR/<project>/_build/html``
(the built site with its index); ``OUT_DIR/sites.json`` lists them with their chunk counts
and build times. A site already built with the same inputs is kept.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "benchmarks"))
sys.path.insert(0, str(HERE))

from projects import EXCLUDED, HOUSEKEEPING, PROJECTS, Project  # noqa: E402

CONF = '''\
"""{name} {version}: written by training/make_sites.py (stock configuration)."""
project = "{name}"
release = "{version}"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", "myst_parser",
              "sphinx.ext.mathjax", "sphinx.ext.todo", "sphinx.ext.doctest", "sphinx_rag"]
source_suffix = {{".rst": "restructuredtext", ".md": "markdown"}}
master_doc = "index"
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "basic"
# what the training pairs need: the chunks and the model's vectors (no static encoder, no
# agents' files, no suggested questions: they cost most of a build's time)
sphinx_rag_query_encoder = "model"
sphinx_rag_llms_txt = False
sphinx_rag_suggestions = []
suppress_warnings = ["autodoc", "autosummary", "ref", "toc", "docutils", "misc", "myst", "sphinx_rag", "app",
                     "toc.not_included", "image"]

'''

CLASS_TEMPLATE = """{{ fullname | escape | underline}}

.. currentmodule:: {{ module }}

.. autoclass:: {{ objname }}
   :members:
   :inherited-members: no
"""

PAGE_SUFFIXES = (".rst", ".md", ".txt")


def fetch_sdist(project: Project, dest: Path) -> Path:
    """The project's pinned sdist (pip, PyPI), its sha256 checked when the project pins one."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps", "-q",
                    "-d", str(dest), f"{project.name}=={project.version}"], check=True)
    stem = project.name.replace("-", "_").lower()
    (archive,) = [p for p in dest.glob("*.tar.gz") if p.name.lower().replace("-", "_").startswith(stem)]
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if project.sdist_sha256 and digest != project.sdist_sha256:
        raise SystemExit(f"[make_sites] {archive.name}: sha256 {digest}, expected {project.sdist_sha256}")
    print(f"  {archive.name} sha256 {digest}", flush=True)
    return archive


def skipped(rel: str, project: Project) -> bool:
    return any(fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel.rsplit("/", 1)[-1], pattern)
               for pattern in (*HOUSEKEEPING, *project.skip))


def copy_docs(project: Project, out: Path, cache: Path) -> int:
    """The sdist's narrative pages into ``out`` (its index renamed: ours lists every page)."""
    archive = fetch_sdist(project, cache)
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        (root,) = Path(tmp).iterdir()
        src = root / project.docs
        for path in sorted(src.rglob("*")):
            rel = path.relative_to(src).as_posix()
            if path.is_dir() or rel.split("/")[0] in ("_build", "_templates") or path.name in (
                    "conf.py", "Makefile", "make.bat", "conftest.py"):
                continue
            if path.suffix in PAGE_SUFFIXES and skipped(rel, project):
                continue
            if path.suffix == ".ipynb":
                continue
            target = out / ("docs_home" + path.suffix if rel in ("index.rst", "index.md") else rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            n += path.suffix in (".rst", ".md")
    return n


def write_api(project: Project, out: Path) -> int:
    """One autosummary page per module of ``project.modules`` (at most ``max_objects``)."""
    from make_api_corpus import select

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selection = select(list(project.modules), None)
    (out / "_templates" / "autosummary").mkdir(parents=True, exist_ok=True)
    (out / "_templates" / "autosummary" / "class.rst").write_text(CLASS_TEMPLATE, encoding="utf-8")
    left = project.max_objects
    for module, names in selection:
        names = names[:left]
        left -= len(names)
        if not names:
            break
        title = f"{module} API"
        body = [title, "=" * len(title), "", f".. currentmodule:: {module}", "", ".. autosummary::",
                "   :toctree: generated/", "", *(f"   {n}" for n in names)]
        (out / f"api_{module.replace('.', '_')}.rst").write_text("\n".join(body) + "\n", encoding="utf-8")
    return project.max_objects - left


def write_site(project: Project, out: Path, cache: Path) -> dict:
    if any(project.name.lower().startswith(x) for x in EXCLUDED):
        raise SystemExit(f"[make_sites] {project.name} is an evaluation corpus's project")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    pages = copy_docs(project, out, cache) if project.docs else 0
    objects = write_api(project, out) if project.modules else 0
    (out / "conf.py").write_text(CONF.format(name=project.name, version=project.version), encoding="utf-8")
    index = [f"{project.name}", "=" * len(project.name), "", ".. toctree::", "   :glob:", "   :maxdepth: 1", "",
             "   docs_home", "   api_*", "   *", "   */*", "   */*/*", "   */*/*/*"]
    (out / "index.rst").write_text("\n".join(index) + "\n", encoding="utf-8")
    return {"pages": pages, "api_objects": objects}


def build(out: Path, jobs: int) -> dict:
    html = out / "_build" / "html"
    started = time.time()
    with open(out / "build.log", "w", encoding="utf-8") as log:
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-j", str(jobs), "-q", str(out), str(html)],
                              stdout=log, stderr=subprocess.STDOUT)
    seconds = round(time.time() - started, 1)
    manifest = html / "_static" / "sphinx_rag" / "index" / "manifest.json"
    if proc.returncode or not manifest.is_file():
        raise SystemExit(f"[make_sites] the build of {out} failed (exit {proc.returncode}): see {out / 'build.log'}")
    from sphinx_rag.search.index import IndexReader

    chunks = IndexReader(html).n_chunks
    return {"html": str(html), "build_seconds": seconds, "chunks": chunks}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--only", default="", help="comma-separated project names (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="sphinx-build -j")
    args = parser.parse_args(argv)
    chosen = [p for p in PROJECTS if not args.only or p.name in args.only.split(",")]
    args.out_dir.mkdir(parents=True, exist_ok=True)
    listing = args.out_dir / "sites.json"
    sites = json.loads(listing.read_text(encoding="utf-8")) if listing.is_file() else {}
    cache = args.out_dir / "_sdists"
    cache.mkdir(exist_ok=True)
    for project in chosen:
        key = f"{project}"
        if sites.get(project.name, {}).get("key") == key and Path(sites[project.name]["html"]).is_dir():
            print(f"{project.name}: built already ({sites[project.name]['chunks']} chunks)", flush=True)
            continue
        print(f"{project.name} {project.version}: writing the site", flush=True)
        info = write_site(project, args.out_dir / project.name, cache)
        print(f"  {info['pages']} narrative pages, {info['api_objects']} API objects; building", flush=True)
        info |= build(args.out_dir / project.name, args.jobs)
        info |= {"split": project.split, "version": project.version, "key": key}
        print(f"  {info['chunks']} chunks in {info['build_seconds']} s", flush=True)
        # read again: another make_sites may have added sites meanwhile (--only)
        sites = json.loads(listing.read_text(encoding="utf-8")) if listing.is_file() else {}
        sites[project.name] = info
        listing.write_text(json.dumps(sites, indent=1), encoding="utf-8")
    total = sum(s["chunks"] for s in sites.values())
    print(f"{len(sites)} sites, {total} chunks -> {listing}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
