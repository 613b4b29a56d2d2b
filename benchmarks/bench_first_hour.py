"""A new maintainer's first hour (issue 36), side by side in one run. Not a test.

1. **The install**: the wheels built here (sphinx-rag's and the default model's,
   ``scripts/build_model_package.py``) installed into a fresh venv, the rest from PyPI:
   its size (MB), the seconds it took, and that no torch, transformers,
   sentence-transformers or optimum came with it; then what the ``[mcp]`` extra adds.
2. **A new ~200-chunk project** made from an installed library (``make_project``:
   pydata-sphinx-theme, autosummary + numpydoc over scipy.signal.windows' functions, 5
   narrative pages from SciPy's module docstrings): plain Sphinx, a cold build (empty
   model and embedding caches, the default model), and a one-page edit
   (``bench_cold.bench``), with the model's own time (the chunks' embedding and the
   encoder's fit, from the build's lines).
3. **The demo**, the same way.

    python benchmarks/bench_first_hour.py --runs 3
    python benchmarks/bench_first_hour.py --install-only
    python benchmarks/bench_first_hour.py --skip-install --skip-demo --runs 1
    python benchmarks/bench_first_hour.py --skip-install --skip-demo --edit-only --edit-rounds 7 --before /tmp/before

(``--edit-only``, ``--before``: as in ``bench_cold.py``.)

Targets: the venv <= 400 MB without torch; the small project's cold build <= plain + 10 s,
its one-page edit <= 1.2x; the demo's cold build <= 2x plain.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cold import bench
from harness import REPO as ROOT
from harness import Stopwatch, copy_sources

HEAVY = ("torch", "transformers", "sentence-transformers", "optimum", "nvidia-cublas-cu12")


def wheels(dist: Path) -> list[Path]:
    """sphinx-rag's wheel (built now) and the model package's (scripts/build_model_package.py)."""
    model = sorted(dist.glob("sphinx_rag_minilm-*.whl"))
    if not model:
        sys.exit(f"error: no sphinx_rag_minilm wheel in {dist}: run scripts/build_model_package.py {dist}")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)], check=True,
                   capture_output=True)
    return [sorted(dist.glob("sphinx_rag-*.whl"))[-1], model[-1]]


def _megabytes(path: Path) -> int:
    return int(subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True).stdout.split()[0])


def install(dist: Path, work: Path) -> None:
    venv = work / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--find-links", str(dist)]
    ours, model = wheels(dist)
    with Stopwatch() as t:
        subprocess.run([*pip, str(ours)], check=True)
    seconds = t.seconds
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True, check=True).stdout.lower()
    names = {line.split("==")[0] for line in listed.splitlines()}
    heavy = [h for h in HEAVY if h in names]
    size = _megabytes(venv)
    subprocess.run([*pip, f"{ours}[mcp]"], check=True)  # the extra the agents' server needs
    mcp = _megabytes(venv) - size
    print("\n## The install (fresh venv, the wheels built here, the rest from PyPI)\n")
    print("| venv | seconds | packages | torch, transformers, sentence-transformers, optimum | + `[mcp]` | target |")
    print("|---|---|---|---|---|---|")
    verdict = "met" if size <= 400 and not heavy else "MISSED"
    print(f"| {size} MB | {seconds:.0f} | {len(names)} | {', '.join(heavy) or 'none'} | +{mcp} MB | "
          f"<= 400 MB, no torch: {verdict} |")
    print(f"\n(wheels: {ours.name} {ours.stat().st_size / 1e6:.1f} MB, {model.name} {model.stat().st_size / 1e6:.1f} MB)")


def _narrative(doc: str) -> str:
    """A module docstring as a narrative page: its autosummary tables become lists of names
    (with ``:toctree:`` they would generate a page per function of SciPy's modules: 3,100
    chunks, and each edit of the page would import them all), its toctrees are left out."""
    out: list[str] = []
    block, indent = "", 0
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith((".. autosummary::", ".. toctree::")):
            block, indent = stripped[3:stripped.index("::")], len(line) - len(line.lstrip())
            continue
        if block and stripped and len(line) - len(line.lstrip()) <= indent:
            block = ""
        if block and stripped:
            if block == "autosummary" and not stripped.startswith(":"):
                out.append(" " * indent + f"- ``{stripped.split()[0]}``")
            continue
        out.append(line)
    return "\n".join(out)


def make_project(dest: Path, module: str = "scipy.signal.windows", objects: int = 22) -> Path:
    """A new project as a maintainer starts one: sphinx-quickstart's layout, pydata-sphinx-theme,
    autosummary + numpydoc over ``objects`` functions of ``module``, 5 narrative pages."""
    mod = importlib.import_module(module)
    names = sorted(n for n in getattr(mod, "__all__", dir(mod)) if not n.startswith("_")
                   and callable(getattr(mod, n)))[:objects]
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "_templates").mkdir(parents=True)
    (dest / "conf.py").write_text(
        'import os\n\nproject = "windows"\n'
        'extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", "sphinx_rag"]\n'
        'if os.environ.get("SPHINX_RAG_DISABLE"):  # plain Sphinx, for the benchmarks\n'
        '    extensions.remove("sphinx_rag")\n'
        'autosummary_generate = True\nnumpydoc_show_class_members = False\nhtml_theme = "pydata_sphinx_theme"\n'
        'exclude_patterns = ["_build"]\n')
    pages = []
    for i, other in enumerate(("scipy.signal", "scipy.fft", "scipy.interpolate", "scipy.integrate", "scipy.optimize")):
        doc = _narrative(importlib.import_module(other).__doc__ or other)
        title = f"Guide {i + 1}: {other}"
        bar = "#" * len(title)  # above the docstring's own title styles
        (dest / f"guide{i + 1}.rst").write_text(f"{bar}\n{title}\n{bar}\n\n.. currentmodule:: {other}\n\n"
                                                f"{doc.strip()}\n")
        pages.append(f"guide{i + 1}")
    (dest / "api.rst").write_text(f"API\n===\n\n.. currentmodule:: {module}\n\n.. autosummary::\n   :toctree: generated\n\n"
                                  + "".join(f"   {n}\n" for n in names))
    (dest / "index.rst").write_text("windows\n=======\n\n.. toctree::\n   :maxdepth: 2\n\n"
                                    + "".join(f"   {p}\n" for p in pages) + "   api\n")
    return dest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temp dir)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--edit-rounds", type=int, default=2)
    parser.add_argument("--skip-install", action="store_true")
    parser.add_argument("--install-only", action="store_true", help="only the install table (no builds)")
    parser.add_argument("--skip-demo", action="store_true")
    parser.add_argument("--edit-only", action="store_true", help="only the one-page edits (no cold builds)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a directory holding another commit's sphinx_rag package, timed beside this one")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="first-hour-"))
    if not args.skip_install:
        install(args.dist, work)
    if args.install_only:
        return 0
    project = make_project(work / "project")
    bench("a new project (22 scipy.signal.windows functions + 5 guide pages)", project, work / "project-runs",
          args.runs, args.jobs, args.edit_rounds, edit_only=args.edit_only, before=args.before)
    if not args.skip_demo:
        demo = work / "demo"
        copy_sources(ROOT / "demo_docs", demo, "auto_examples", "generated", dirs_exist_ok=True)
        bench("the demo", demo, work / "demo-runs", args.runs, args.jobs, args.edit_rounds, edit_only=args.edit_only,
              before=args.before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
