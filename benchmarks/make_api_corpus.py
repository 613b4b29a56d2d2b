"""Generate a Sphinx project documenting an installed package's public API.

Used by the benchmarks (and the cross-corpus evaluation) as a larger, real
numpydoc corpus that sphinx-rag was never tuned on. By default: scikit-learn's
public estimators and functions (numpydoc docstrings, thousands of chunks).

    python benchmarks/make_api_corpus.py OUT_DIR [--modules sklearn.linear_model,...]
"""

from __future__ import annotations

import argparse
import importlib
import inspect
from pathlib import Path

DEFAULT_MODULES = (
    "sklearn.linear_model,sklearn.preprocessing,sklearn.impute,sklearn.ensemble,sklearn.cluster,"
    "sklearn.decomposition,sklearn.model_selection,sklearn.metrics,sklearn.neighbors,sklearn.svm,"
    "sklearn.tree,sklearn.dummy,sklearn.pipeline,sklearn.feature_selection,sklearn.naive_bayes"
)

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
suppress_warnings = ["autodoc", "autosummary", "ref", "toc", "docutils", "misc"]
'''

CLASS_TEMPLATE = """{{ fullname | escape | underline}}

.. currentmodule:: {{ module }}

.. autoclass:: {{ objname }}
   :members:
   :inherited-members: no
"""


def public_objects(module_name: str) -> list[str]:
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    out = []
    for name in sorted(names):
        try:
            obj = getattr(module, name, None)
        except ImportError:  # e.g. experimental objects behind an enable_* import
            continue
        defined_here = getattr(obj, "__module__", "").startswith(module_name)  # not re-exports
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and defined_here and inspect.getdoc(obj):
            out.append(name)
    return out


def write_project(out: Path, modules: list[str]) -> int:
    out.mkdir(parents=True, exist_ok=True)
    (out / "_templates" / "autosummary").mkdir(parents=True, exist_ok=True)
    (out / "_templates" / "autosummary" / "class.rst").write_text(CLASS_TEMPLATE)
    (out / "conf.py").write_text(CONF.format(title=modules[0].split(".")[0] + " API"))
    pages, count = [], 0
    seen: set[int] = set()  # an object re-exported by a later module is documented once, at its first
    for module_name in modules:
        module = importlib.import_module(module_name)
        names = [n for n in public_objects(module_name) if id(getattr(module, n)) not in seen]
        seen.update(id(getattr(module, n)) for n in names)
        count += len(names)
        page = module_name.replace(".", "_")
        body = [f"{module_name}", "=" * len(module_name), "", f".. currentmodule:: {module_name}", "",
                ".. autosummary::", "   :toctree: generated/", ""] + [f"   {n}" for n in names]
        (out / f"{page}.rst").write_text("\n".join(body) + "\n")
        pages.append(page)
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", ""]
    (out / "index.rst").write_text("\n".join(index + [f"   {p}" for p in pages]) + "\n")
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--modules", default=DEFAULT_MODULES)
    args = parser.parse_args()
    n = write_project(args.out_dir, args.modules.split(","))
    print(f"wrote a project documenting {n} objects into {args.out_dir}")


if __name__ == "__main__":
    main()
