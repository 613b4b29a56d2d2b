"""Generate a Sphinx project documenting installed packages' public API (autosummary).

Used by the benchmarks (and the cross-corpus evaluation) as a larger, real numpydoc
corpus that sphinx-rag was never tuned on. By default: scikit-learn's main estimator
modules (numpydoc docstrings, thousands of chunks). For the scale benchmarks (issue 9)
a preset documents several packages (scikit-learn, numpy, scipy) and can be cut to a
chunk budget:

    python benchmarks/make_api_corpus.py OUT_DIR                       # default modules
    python benchmarks/make_api_corpus.py OUT_DIR --modules sklearn.svm,sklearn.tree
    python benchmarks/make_api_corpus.py OUT_DIR --preset scale        # every module, ~50k+ chunks
    python benchmarks/make_api_corpus.py OUT_DIR --preset 25k          # about 25,000 chunks
    python benchmarks/make_api_corpus.py OUT_DIR --preset 50k          # about 50,000 chunks
    python benchmarks/make_api_corpus.py OUT_DIR --preset scale --target-chunks 30000
    python benchmarks/make_api_corpus.py - --preset scale --estimate   # chunk estimate per module

The estimate runs sphinx-rag's own API chunker (``chunk.api.api_chunk_texts``) on each
object's docstring, and on the docstrings of its public methods and properties (the
class template documents members, inherited ones included), without Sphinx: it is
within a few percent of a real build's count. ``--target-chunks`` keeps whole modules,
in the preset's order, until the estimate reaches the target (the last one is cut by
objects), so a subset is always a prefix of the bigger corpus: the 25k corpus is the
first half of the 50k one.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import warnings
from pathlib import Path

DEFAULT_MODULES = (
    "sklearn.linear_model,sklearn.preprocessing,sklearn.impute,sklearn.ensemble,sklearn.cluster,"
    "sklearn.decomposition,sklearn.model_selection,sklearn.metrics,sklearn.neighbors,sklearn.svm,"
    "sklearn.tree,sklearn.dummy,sklearn.pipeline,sklearn.feature_selection,sklearn.naive_bayes"
)

SKLEARN_MODULES = [
    "sklearn.base", "sklearn.calibration", "sklearn.cluster", "sklearn.compose", "sklearn.covariance",
    "sklearn.cross_decomposition", "sklearn.datasets", "sklearn.decomposition", "sklearn.discriminant_analysis",
    "sklearn.dummy", "sklearn.ensemble", "sklearn.exceptions", "sklearn.feature_extraction",
    "sklearn.feature_extraction.image", "sklearn.feature_extraction.text", "sklearn.feature_selection",
    "sklearn.frozen", "sklearn.gaussian_process", "sklearn.gaussian_process.kernels", "sklearn.impute",
    "sklearn.inspection", "sklearn.isotonic", "sklearn.kernel_approximation", "sklearn.kernel_ridge",
    "sklearn.linear_model", "sklearn.manifold", "sklearn.metrics", "sklearn.metrics.cluster",
    "sklearn.metrics.pairwise", "sklearn.mixture", "sklearn.model_selection", "sklearn.multiclass",
    "sklearn.multioutput", "sklearn.naive_bayes", "sklearn.neighbors", "sklearn.neural_network",
    "sklearn.pipeline", "sklearn.preprocessing", "sklearn.random_projection", "sklearn.semi_supervised",
    "sklearn.svm", "sklearn.tree", "sklearn.utils", "sklearn.utils.class_weight", "sklearn.utils.extmath",
    "sklearn.utils.graph", "sklearn.utils.multiclass", "sklearn.utils.sparsefuncs", "sklearn.utils.validation",
    "sklearn.utils.parallel", "sklearn.utils.discovery", "sklearn.utils.estimator_checks",
]
NUMPY_MODULES = [
    "numpy", "numpy.linalg", "numpy.fft", "numpy.random", "numpy.polynomial", "numpy.polynomial.polynomial",
    "numpy.polynomial.chebyshev", "numpy.polynomial.legendre", "numpy.polynomial.hermite",
    "numpy.polynomial.hermite_e", "numpy.polynomial.laguerre", "numpy.ma", "numpy.testing", "numpy.strings",
    "numpy.char", "numpy.rec", "numpy.lib.stride_tricks", "numpy.lib.npyio", "numpy.lib.format",
    "numpy.lib.recfunctions", "numpy.lib.mixins", "numpy.lib.array_utils", "numpy.exceptions", "numpy.dtypes",
]
SCIPY_MODULES = [
    "scipy.linalg", "scipy.sparse", "scipy.sparse.linalg", "scipy.sparse.csgraph", "scipy.stats",
    "scipy.stats.qmc", "scipy.stats.mstats", "scipy.stats.contingency", "scipy.signal", "scipy.signal.windows",
    "scipy.optimize", "scipy.integrate", "scipy.interpolate", "scipy.special", "scipy.spatial",
    "scipy.spatial.distance", "scipy.spatial.transform", "scipy.ndimage", "scipy.fft", "scipy.fftpack",
    "scipy.io", "scipy.io.wavfile", "scipy.io.arff", "scipy.cluster.vq", "scipy.cluster.hierarchy",
    "scipy.odr", "scipy.differentiate", "scipy.datasets", "scipy.constants",
]
NETWORKX_MODULES = ["networkx"] + [f"networkx.algorithms.{m}" for m in (
    "approximation", "bipartite", "community", "connectivity", "flow", "isomorphism", "tree", "coloring",
    "centrality", "assortativity", "link_analysis", "minors", "operators", "shortest_paths", "traversal",
    "components")] + ["networkx.utils", "networkx.drawing", "networkx.readwrite"]
#: Every module of the scale corpus, in the order subsets are taken (sympy, whose docstrings
#: are mostly not numpydoc and whose classes inherit hundreds of methods, only fills up).
SCALE_MODULES = SKLEARN_MODULES + NUMPY_MODULES + SCIPY_MODULES + NETWORKX_MODULES + ["sympy"]
PRESETS = {
    "default": (DEFAULT_MODULES.split(","), None),
    "scale": (SCALE_MODULES, None),
    "25k": (SCALE_MODULES, 25_000),
    "50k": (SCALE_MODULES, 53_000),  # a little over: the estimate is within a few percent
}

CONF = '''
project = "{title}"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "numpydoc", "sphinx_rag"]
import os
if os.environ.get("SPHINX_RAG_DISABLE"):
    extensions.remove("sphinx_rag")
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
templates_path = ["_templates"]
html_theme = "basic"
suppress_warnings = ["autodoc", "autosummary", "ref", "toc", "docutils", "misc", "sphinx_rag"]
'''

CLASS_TEMPLATE = """{{ fullname | escape | underline}}

.. currentmodule:: {{ module }}

.. autoclass:: {{ objname }}
   :members:
   :inherited-members: no
"""


def _is_documented_callable(obj) -> bool:
    """A class or a function (also numpy's array-function dispatchers) with a docstring."""
    if inspect.isclass(obj) or inspect.isfunction(obj):
        return True
    return callable(obj) and type(obj).__name__ == "_ArrayFunctionDispatcher"


def public_objects(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    out = []
    for name in sorted(names):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(module, name, None)
        except ImportError:  # e.g. experimental objects behind an enable_* import
            continue
        defined_here = (getattr(obj, "__module__", None) or "").startswith(module_name.split(".")[0])
        if module_name.startswith("sklearn"):  # sklearn re-exports a lot across its own modules
            defined_here = (getattr(obj, "__module__", None) or "").startswith(module_name)
        if _is_documented_callable(obj) and defined_here and inspect.getdoc(obj):
            out.append(name)
    return out


def _objects(modules: list[str]) -> list[tuple[str, list[str]]]:
    """(module, its object names), each object once (at the first module that exports it)."""
    seen: set[int] = set()
    out = []
    for module_name in modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            print(f"make_api_corpus: skipping {module_name} (not importable)", file=sys.stderr)
            continue
        names = [n for n in public_objects(module_name) if id(getattr(module, n)) not in seen]
        seen.update(id(getattr(module, n)) for n in names)
        if names:
            out.append((module_name, names))
    return out


def estimate_chunks(module_name: str, name: str) -> int:
    """Chunks sphinx-rag makes of one object's page (the object and its documented members)."""
    from sphinx_rag.chunk.api import DocstringError, api_chunk_texts

    obj = getattr(importlib.import_module(module_name), name)

    def count(fullname, objtype, thing) -> int:
        doc = inspect.getdoc(thing)
        if not doc:
            return 0
        try:
            return len(api_chunk_texts(fullname, objtype, doc, None))
        except (DocstringError, Exception):  # noqa: BLE001 - chunked as narrative: about 2
            return 2

    total = count(f"{module_name}.{name}", "class" if inspect.isclass(obj) else "function", obj)
    if inspect.isclass(obj):
        for member, value in inspect.getmembers(obj):
            if member.startswith("_"):
                continue
            if inspect.isfunction(value) or inspect.ismethod(value) or isinstance(value, property):
                total += count(f"{module_name}.{name}.{member}", "method", value)
    return total


def select(modules: list[str], target_chunks: int | None, *, verbose: bool = False) -> list[tuple[str, list[str]]]:
    """The modules' objects, cut once the chunk estimate reaches ``target_chunks`` (None: all)."""
    chosen, total = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for module_name, names in _objects(modules):
            kept = []
            for name in names:
                if target_chunks is not None and total >= target_chunks:
                    break
                if target_chunks is not None or verbose:
                    n = estimate_chunks(module_name, name)
                    total += n
                kept.append(name)
            if verbose:
                print(f"  {module_name:40s} {len(kept):5d} objects   cumulative estimate {total:7d} chunks")
            if kept:
                chosen.append((module_name, kept))
            if target_chunks is not None and total >= target_chunks:
                break
    return chosen


def write_selection(out: Path, selection: list[tuple[str, list[str]]], title: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "_templates" / "autosummary").mkdir(parents=True, exist_ok=True)
    (out / "_templates" / "autosummary" / "class.rst").write_text(CLASS_TEMPLATE)
    (out / "conf.py").write_text(CONF.format(title=title))
    pages, count = [], 0
    for module_name, names in selection:
        count += len(names)
        page = module_name.replace(".", "_")
        body = [f"{module_name}", "=" * len(module_name), "", f".. currentmodule:: {module_name}", "",
                ".. autosummary::", "   :toctree: generated/", ""] + [f"   {n}" for n in names]
        (out / f"{page}.rst").write_text("\n".join(body) + "\n")
        pages.append(page)
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    (out / "index.rst").write_text("\n".join(index + [f"   {p}" for p in pages]) + "\n")
    return count


def write_project(out: Path, modules: list[str], target_chunks: int | None = None) -> int:
    """Write the project; returns the number of documented objects."""
    selection = select(modules, target_chunks)
    packages = sorted({m.split(".")[0] for m, _ in selection})
    return write_selection(out, selection, " + ".join(packages) + " API")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path, help="the project directory ('-' with --estimate)")
    parser.add_argument("--modules", default=None, help="comma-separated modules (default: the preset's)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="default")
    parser.add_argument("--target-chunks", type=int, default=None,
                        help="keep modules (in order) until about this many chunks (estimated)")
    parser.add_argument("--estimate", action="store_true", help="print the chunk estimate per module")
    args = parser.parse_args()
    modules, target = PRESETS[args.preset]
    if args.modules:
        modules = args.modules.split(",")
    target = args.target_chunks or target
    if args.estimate:
        print(f"chunk estimate (target {target or 'none'}):")
        selection = select(modules, target, verbose=True)
    else:
        selection = select(modules, target)
    if str(args.out_dir) == "-":
        return
    packages = sorted({m.split(".")[0] for m, _ in selection})
    n = write_selection(args.out_dir, selection, " + ".join(packages) + " API")
    print(f"wrote a project documenting {n} objects ({len(selection)} modules) into {args.out_dir}")


if __name__ == "__main__":
    main()
