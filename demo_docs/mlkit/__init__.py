"""mlkit: a small machine learning toolkit built on NumPy.

mlkit mirrors the estimator API popularized by scikit-learn: every model
is an object with ``fit`` and ``predict`` (or ``transform``) methods, and
hyper-parameters are passed to the constructor.
"""

__version__ = "0.4.0"

__all__ = [
    "base",
    "datasets",
    "dummy",
    "impute",
    "linear_model",
    "metrics",
    "model_selection",
    "neighbors",
    "pipeline",
    "preprocessing",
]

from . import (  # noqa: E402,F401
    base,
    datasets,
    dummy,
    impute,
    linear_model,
    metrics,
    model_selection,
    neighbors,
    pipeline,
    preprocessing,
)
