"""The projects whose documentation the reranker learns from, and the ones kept apart.

None of them is an evaluation corpus's project (eval/RESULTS.md): not scikit-learn or any
scikit-learn-contrib project (imbalanced-learn is the sixth blind set), not the demo,
Click, attrs, Flask, nor sphinx-rag's own docs. Each is documented as sphinx-rag would
index it (``make_sites.py``): the public API of the installed package (autosummary, one
page per object, numpydoc / Sphinx fields / Google sections as the project writes them)
and, where its sdist carries them, its narrative pages (user guide, tutorials, how-tos).

``split``: "train" projects give the training pairs; "validation" projects are whole
projects kept apart, for early stopping and for choosing between models (their
questions are never trained on).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Project", "PROJECTS", "EXCLUDED", "by_name"]


@dataclass(frozen=True)
class Project:
    name: str  # the PyPI distribution
    version: str
    modules: tuple[str, ...] = ()  # modules whose public API is autosummarized
    #: the sdist's folder of narrative pages ("" = none), its sha256 (the sdist is pinned)
    docs: str = ""
    sdist_sha256: str = ""
    #: pages of the docs folder left out (release notes, licence, contributing, ...), as
    #: globs relative to it; ``HOUSEKEEPING`` is always left out
    skip: tuple[str, ...] = ()
    split: str = "train"
    #: cap on the number of API objects (the first ones in module order): a few huge
    #: modules (numpy's, pandas's) would otherwise be most of the data
    max_objects: int = 400
    notes: str = field(default="", compare=False)


#: Pages no reader asks about and no sphinx-rag site is searched for (any project).
HOUSEKEEPING = ("*change*", "*CHANGE*", "*history*", "*license*", "*LICENSE*", "*contribut*", "*authors*",
                "*release*", "*announce*", "*sponsor*", "*donate*", "*kudos*", "*whos_using*", "*talks*",
                "*contact*", "*backers*", "*upgrading*", "*deprecat*", "*developer*")

#: The evaluation corpora's projects (and anything of scikit-learn's): never a source of pairs.
EXCLUDED = ("scikit-learn", "sklearn", "imbalanced-learn", "imblearn", "click", "attrs", "flask", "sphinx-rag")

#: matplotlib, xarray, seaborn and Babel were listed too and left out: their builds took
#: hours on two shared cores, and NumPy, SciPy, pandas and the narrative sites cover their styles.
PROJECTS = (
    # numpydoc APIs
    Project("numpy", "2.4.6", ("numpy.linalg", "numpy.fft", "numpy.random", "numpy.polynomial.polynomial",
                               "numpy.ma", "numpy.lib.stride_tricks", "numpy.strings", "numpy")),
    Project("scipy", "1.17.1", ("scipy.signal", "scipy.interpolate", "scipy.optimize", "scipy.spatial",
                                "scipy.ndimage", "scipy.integrate", "scipy.cluster.hierarchy", "scipy.sparse.linalg",
                                "scipy.stats")),
    Project("statsmodels", "0.15.0", ("statsmodels.regression.linear_model", "statsmodels.genmod.generalized_linear_model",
                                      "statsmodels.tsa.arima.model", "statsmodels.tsa.stattools",
                                      "statsmodels.stats.multitest", "statsmodels.stats.proportion",
                                      "statsmodels.nonparametric.smoothers_lowess", "statsmodels.tsa.holtwinters",
                                      "statsmodels.discrete.discrete_model", "statsmodels.stats.diagnostic"),
            max_objects=150),
    Project("scikit-image", "0.26.0", ("skimage.filters", "skimage.morphology", "skimage.segmentation",
                                       "skimage.feature", "skimage.transform", "skimage.measure", "skimage.exposure",
                                       "skimage.restoration", "skimage.color", "skimage.util", "skimage.draw"),
            max_objects=200),
    Project("pandas", "3.1.1", ("pandas",), max_objects=60),
    # Sphinx fields, Google sections, prose docstrings; narrative docs from the sdists
    Project("jinja2", "3.1.6", docs="docs"),
    Project("werkzeug", "3.1.9", docs="docs"),
    Project("pytest", "9.2.0", docs="doc/en", skip=("announce/*", "proposals/*", "example/*", "funcarg*", "naming20*",
                                                    "historical-notes*", "adopt*", "backwards-compat*")),
    Project("requests", "2.34.2", ("requests", "requests.adapters", "requests.auth", "requests.sessions",
                                   "requests.models", "requests.exceptions")),
    Project("rich", "15.0.0", ("rich.console", "rich.table", "rich.progress", "rich.text", "rich.panel",
                               "rich.prompt", "rich.logging", "rich.syntax", "rich.markdown", "rich.tree")),
    Project("httpx", "0.29.0", ("httpx",)),
    Project("tqdm", "4.70.1", ("tqdm", "tqdm.contrib", "tqdm.contrib.concurrent")),
    Project("python-dateutil", "4.0.0", docs="docs"),
    Project("pluggy", "1.7.0", docs="docs"),
    # kept apart: early stopping and model selection
    Project("networkx", "3.6.1", docs="doc", skip=("release/*", "developer/*", "install*"), split="validation",
            max_objects=10_000),
    Project("marshmallow", "4.4.0", docs="docs", split="validation"),
    Project("more-itertools", "11.2.1", docs="docs", skip=("toctree*", "versions*", "testing*"), split="validation"),
)


def by_name(name: str) -> Project:
    for p in PROJECTS:
        if p.name == name:
            return p
    raise KeyError(f"no training project {name!r}: one of {', '.join(p.name for p in PROJECTS)}")
