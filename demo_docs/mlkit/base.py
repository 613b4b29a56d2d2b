"""Base classes and utilities shared by all mlkit estimators."""

import copy
import inspect

import numpy as np

__all__ = ["BaseEstimator", "clone", "check_array"]


def check_array(X, *, ensure_2d=True, allow_nan=False, dtype=float):
    """Validate an input array and convert it to a NumPy array.

    Lists, tuples and nested sequences are converted to a NumPy array of
    the requested ``dtype``. One-dimensional input is rejected when
    ``ensure_2d`` is true, because estimators always expect a matrix of
    shape ``(n_samples, n_features)``.

    Parameters
    ----------
    X : array-like
        Input data to validate.

    ensure_2d : bool, default=True
        Whether to raise an error when ``X`` is not two-dimensional.

    allow_nan : bool, default=False
        Whether ``NaN`` entries are accepted. Estimators that handle missing
        values themselves, such as :class:`~mlkit.impute.SimpleImputer`,
        set this to ``True``.

    dtype : data-type or None, default=float
        Data type of the returned array. If ``None``, the data type of the
        input is preserved (object arrays are kept as they are).

    Returns
    -------
    X_converted : ndarray
        The validated array.

    Raises
    ------
    ValueError
        If ``X`` is not 2D while ``ensure_2d=True``, is empty, or contains
        ``NaN`` while ``allow_nan=False``.

    Examples
    --------
    >>> from mlkit.base import check_array
    >>> check_array([[1, 2], [3, 4]])
    array([[1., 2.],
           [3., 4.]])
    """
    X = np.asarray(X, dtype=dtype)
    if ensure_2d and X.ndim != 2:
        raise ValueError(
            f"Expected 2D array, got {X.ndim}D array instead. Reshape your "
            "data using X.reshape(-1, 1) if it has a single feature."
        )
    if X.size == 0:
        raise ValueError("Found array with 0 samples.")
    if not allow_nan and X.dtype.kind == "f" and np.isnan(X).any():
        raise ValueError("Input contains NaN.")
    return X


def check_is_fitted(estimator, attribute):
    """Raise an error if ``estimator`` has no fitted ``attribute``."""
    if not hasattr(estimator, attribute):
        raise NotFittedError(
            f"This {type(estimator).__name__} instance is not fitted yet. "
            "Call 'fit' with appropriate arguments before using this estimator."
        )


class NotFittedError(ValueError, AttributeError):
    """Exception raised when an estimator is used before fitting."""


class BaseEstimator:
    """Base class for all estimators in mlkit.

    Every estimator stores its hyper-parameters as public attributes with
    the same name as the arguments of ``__init__``. This convention makes it
    possible to inspect and change hyper-parameters generically with
    :meth:`get_params` and :meth:`set_params`, and to copy unfitted
    estimators with :func:`clone`.

    Read more in the :ref:`User Guide <estimator_api>`.

    See Also
    --------
    clone : Construct a new unfitted estimator with the same parameters.

    Notes
    -----
    All estimators should specify all the parameters that can be set at the
    class level in their ``__init__`` as explicit keyword arguments (no
    ``*args`` or ``**kwargs``). The constructor must not validate or modify
    the parameters: validation happens in ``fit``.

    Examples
    --------
    >>> from mlkit.base import BaseEstimator
    >>> class MyEstimator(BaseEstimator):
    ...     def __init__(self, *, param=1):
    ...         self.param = param
    >>> MyEstimator().get_params()
    {'param': 1}
    >>> MyEstimator(param=2)
    MyEstimator(param=2)
    """

    @classmethod
    def _get_param_names(cls):
        init = cls.__init__
        if init is object.__init__:
            return []
        signature = inspect.signature(init)
        return sorted(
            p.name
            for p in signature.parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        )

    def get_params(self, deep=True):
        """Get parameters for this estimator.

        Parameters
        ----------
        deep : bool, default=True
            If True, will return the parameters for this estimator and
            contained subobjects that are estimators (for example the steps
            of a :class:`~mlkit.pipeline.Pipeline`).

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                for sub_key, sub_value in value.get_params().items():
                    out[f"{key}__{sub_key}"] = sub_value
            out[key] = value
        return out

    def set_params(self, **params):
        """Set the parameters of this estimator.

        Nested parameters use the ``<component>__<parameter>`` syntax, so that
        it is possible to update each component of a nested object such as a
        pipeline step.

        Parameters
        ----------
        **params : dict
            Estimator parameters.

        Returns
        -------
        self : estimator instance
            Estimator instance.
        """
        valid = self.get_params(deep=True)
        for key, value in params.items():
            name, delim, sub_key = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {self}. "
                    f"Valid parameters are: {sorted(self._get_param_names())!r}."
                )
            if delim:
                getattr(self, name).set_params(**{sub_key: value})
            else:
                setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {}
        init = type(self).__init__
        if init is not object.__init__:
            for p in inspect.signature(init).parameters.values():
                if p.default is not p.empty:
                    defaults[p.name] = p.default
        changed = []
        for key in self._get_param_names():
            value = getattr(self, key)
            default = defaults.get(key, inspect.Parameter.empty)
            same = False
            try:
                same = bool(value == default) or (
                    isinstance(value, float)
                    and isinstance(default, float)
                    and value != value
                    and default != default
                )
            except Exception:  # arrays and other exotic values
                same = False
            if not same:
                changed.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"


def clone(estimator):
    """Construct a new unfitted estimator with the same parameters.

    Clone does a deep copy of the model in an estimator without actually
    copying attached data. It returns a new estimator with the same
    parameters that has not been fitted on any data. Cloning is what
    :func:`~mlkit.model_selection.cross_val_score` does before fitting the
    estimator on each training fold, so that folds never share state.

    Read more in the :ref:`User Guide <estimator_api>`.

    Parameters
    ----------
    estimator : estimator object, or list, tuple or set of objects
        The estimator or group of estimators to be cloned.

    Returns
    -------
    estimator : object
        The deep copy of the input, an estimator if input is an estimator.

    Notes
    -----
    If the estimator's ``random_state`` parameter is an integer, an exact
    clone is returned: the clone and the original estimator will give the
    exact same results.

    Examples
    --------
    >>> from mlkit.base import clone
    >>> from mlkit.linear_model import Ridge
    >>> reg = Ridge(alpha=3.0)
    >>> reg_copy = clone(reg)
    >>> reg_copy.alpha
    3.0
    >>> reg_copy is reg
    False
    """
    if isinstance(estimator, (list, tuple, set, frozenset)):
        return type(estimator)(clone(e) for e in estimator)
    if not hasattr(estimator, "get_params") or isinstance(estimator, type):
        return copy.deepcopy(estimator)
    klass = type(estimator)
    params = estimator.get_params(deep=False)
    new_params = {name: clone(value) for name, value in params.items()}
    return klass(**new_params)


def _r2(y_true, y_pred):
    y_true = np.asarray(y_true, dtype=float)
    y_pred = np.asarray(y_pred, dtype=float)
    ss_res = np.sum((y_true - y_pred) ** 2)
    ss_tot = np.sum((y_true - y_true.mean()) ** 2)
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return float(1 - ss_res / ss_tot)


def _accuracy(y_true, y_pred):
    return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))
