"""Chaining transformers and a final estimator into a single object."""

from .base import BaseEstimator, check_is_fitted

__all__ = ["Pipeline", "make_pipeline"]


class Pipeline(BaseEstimator):
    """A sequence of data transformers with a final predictor.

    ``Pipeline`` allows you to sequentially apply a list of transformers to
    preprocess the data and conclude the sequence with a final predictor
    for predictive modeling.

    Intermediate steps of the pipeline must be transformers, that is, they
    must implement ``fit`` and ``transform`` methods. The final estimator
    only needs to implement ``fit``.

    The purpose of the pipeline is to assemble several steps that can be
    cross-validated together while setting different parameters. For this,
    it enables setting parameters of the various steps using their names and
    the parameter name separated by a ``'__'``, as in the example below.
    Because the whole chain is refit on each training fold, the statistics
    learned by the transformers never see the validation data, which
    prevents data leakage.

    Read more in the :ref:`User Guide <pipeline>`.

    Parameters
    ----------
    steps : list of tuples
        List of (name of step, estimator) tuples that are to be chained in
        sequential order. To be compatible with the mlkit API, all steps
        must define ``fit``. All non-last steps must also define
        ``transform``.

    verbose : bool, default=False
        If True, the name of each step will be printed as it is fitted.

    Attributes
    ----------
    named_steps : dict
        Read-only attribute to access any step parameter by user given name.
        Keys are step names and values are steps parameters.

    classes_ : ndarray of shape (n_classes,)
        The classes labels. Only exist if the last step of the pipeline is a
        classifier.

    n_features_in_ : int
        Number of features seen during first step ``fit`` method.

    See Also
    --------
    make_pipeline : Convenience function for simplified pipeline
        construction.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.pipeline import Pipeline
    >>> from mlkit.preprocessing import StandardScaler
    >>> from mlkit.linear_model import LogisticRegression
    >>> X = np.array([[1.0, 200.0], [2.0, 180.0], [3.0, 220.0], [4.0, 260.0]])
    >>> y = np.array([0, 0, 1, 1])
    >>> pipe = Pipeline([('scaler', StandardScaler()), ('clf', LogisticRegression())])
    >>> pipe.fit(X, y).score(X, y)
    1.0
    >>> pipe.set_params(clf__C=10.0).named_steps['clf'].C
    10.0
    """

    def __init__(self, steps, *, verbose=False):
        self.steps = steps
        self.verbose = verbose

    @property
    def named_steps(self):
        """Dictionary mapping each step name to its estimator object.

        The mapping is rebuilt from ``steps`` on every access, so it always
        reflects the current steps. Use it to inspect a fitted step, e.g.
        ``pipe.named_steps["standardscaler"].mean_``.
        """
        return dict(self.steps)

    @property
    def _estimator_type(self):
        return getattr(self.steps[-1][1], "_estimator_type", None)

    @property
    def classes_(self):
        """Class labels of the final step, when that step is a classifier."""
        return self.steps[-1][1].classes_

    def get_params(self, deep=True):
        """Get parameters for this pipeline, including those of its steps.

        Parameters
        ----------
        deep : bool, default=True
            If True, will return the parameters for this pipeline and its
            steps, using the ``<step name>__<parameter>`` syntax for the
            parameters of the steps.

        Returns
        -------
        params : mapping of string to any
            Parameter names mapped to their values.
        """
        out = {"steps": self.steps, "verbose": self.verbose}
        if deep:
            for name, step in self.steps:
                out[name] = step
                if hasattr(step, "get_params"):
                    for key, value in step.get_params(deep=True).items():
                        out[f"{name}__{key}"] = value
        return out

    def set_params(self, **params):
        """Set the parameters of this pipeline.

        Valid parameter keys can be listed with :meth:`get_params`. Note
        that you can directly set the parameters of the estimators contained
        in ``steps``, e.g. ``pipe.set_params(ridge__alpha=10.0)``.

        Parameters
        ----------
        **params : keyword arguments
            Parameters of this pipeline or of its steps.

        Returns
        -------
        self : object
            Pipeline class instance.
        """
        steps = dict(self.steps)
        for key, value in params.items():
            name, delim, sub_key = key.partition("__")
            if delim:
                if name not in steps:
                    raise ValueError(f"Invalid step name {name!r}.")
                steps[name].set_params(**{sub_key: value})
            elif key in steps:
                self.steps = [(n, value if n == key else s) for n, s in self.steps]
            elif key in ("steps", "verbose"):
                setattr(self, key, value)
            else:
                raise ValueError(f"Invalid parameter {key!r} for Pipeline.")
        return self

    def __repr__(self):
        inner = ", ".join(f"({name!r}, {step!r})" for name, step in self.steps)
        return f"Pipeline(steps=[{inner}])"

    def _transform_all_but_last(self, X, fit, y=None):
        for name, step in self.steps[:-1]:
            if fit:
                if self.verbose:
                    print(f"[Pipeline] fitting step {name!r}")
                if hasattr(step, "fit_transform"):
                    X = step.fit_transform(X, y)
                else:
                    X = step.fit(X, y).transform(X)
            else:
                X = step.transform(X)
        return X

    def fit(self, X, y=None):
        """Fit the model.

        Fit all the transformers one after the other and sequentially
        transform the data. Finally, fit the transformed data using the
        final estimator.

        Parameters
        ----------
        X : iterable
            Training data. Must fulfill input requirements of first step of
            the pipeline.

        y : iterable, default=None
            Training targets. Must fulfill label requirements for all steps
            of the pipeline.

        Returns
        -------
        self : object
            Pipeline with fitted steps.
        """
        first = self.steps[0][1]
        Xt = self._transform_all_but_last(X, fit=True, y=y)
        name, last = self.steps[-1]
        if self.verbose:
            print(f"[Pipeline] fitting step {name!r}")
        last.fit(Xt, y)
        self.n_features_in_ = getattr(first, "n_features_in_", None)
        self._fitted = True
        return self

    def predict(self, X):
        """Transform the data, and apply ``predict`` with the final estimator.

        Call ``transform`` of each transformer in the pipeline. The
        transformed data are finally passed to the final estimator that
        calls its ``predict`` method. Only valid if the final estimator
        implements ``predict``.

        Parameters
        ----------
        X : iterable
            Data to predict on. Must fulfill input requirements of first step
            of the pipeline.

        Returns
        -------
        y_pred : ndarray
            Result of calling ``predict`` on the final estimator.
        """
        check_is_fitted(self, "_fitted")
        return self.steps[-1][1].predict(self._transform_all_but_last(X, fit=False))

    def predict_proba(self, X):
        """Transform the data, and apply ``predict_proba`` with the final estimator.

        Parameters
        ----------
        X : iterable
            Data to predict on. Must fulfill input requirements of first step
            of the pipeline.

        Returns
        -------
        y_proba : ndarray of shape (n_samples, n_classes)
            Result of calling ``predict_proba`` on the final estimator.
        """
        check_is_fitted(self, "_fitted")
        return self.steps[-1][1].predict_proba(self._transform_all_but_last(X, fit=False))

    def transform(self, X):
        """Transform the data with every step, the last one included.

        Only valid if the final estimator implements ``transform``, i.e. if
        the pipeline is made only of transformers.

        Parameters
        ----------
        X : iterable
            Data to transform.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_transformed_features)
            Transformed data.
        """
        check_is_fitted(self, "_fitted")
        return self.steps[-1][1].transform(self._transform_all_but_last(X, fit=False))

    def score(self, X, y=None):
        """Transform the data, and apply ``score`` with the final estimator.

        Parameters
        ----------
        X : iterable
            Data to predict on. Must fulfill input requirements of first step
            of the pipeline.

        y : iterable, default=None
            Targets used for scoring.

        Returns
        -------
        score : float
            Result of calling ``score`` on the final estimator, for example
            accuracy for a classifier or :math:`R^2` for a regressor.
        """
        check_is_fitted(self, "_fitted")
        return self.steps[-1][1].score(self._transform_all_but_last(X, fit=False), y)


def _name_estimators(estimators):
    names = [type(est).__name__.lower() for est in estimators]
    counts = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    seen = {}
    out = []
    for name, est in zip(names, estimators):
        if counts[name] > 1:
            seen[name] = seen.get(name, 0) + 1
            name = f"{name}-{seen[name]}"
        out.append((name, est))
    return out


def make_pipeline(*steps, verbose=False):
    """Construct a pipeline from the given estimators.

    This is a shorthand for the :class:`Pipeline` constructor; it does not
    require, and does not permit, naming the estimators. Instead, their
    names will be set to the lowercase of their types automatically.

    Read more in the :ref:`User Guide <pipeline>`.

    Parameters
    ----------
    *steps : list of Estimator objects
        List of the mlkit estimators that are chained together.

    verbose : bool, default=False
        If True, the name of each step will be printed as it is fitted.

    Returns
    -------
    p : Pipeline
        Returns an mlkit :class:`Pipeline` object.

    See Also
    --------
    Pipeline : Class for creating a pipeline of transforms with a final
        estimator.

    Examples
    --------
    >>> from mlkit.impute import SimpleImputer
    >>> from mlkit.preprocessing import StandardScaler
    >>> from mlkit.linear_model import Ridge
    >>> from mlkit.pipeline import make_pipeline
    >>> pipe = make_pipeline(SimpleImputer(), StandardScaler(), Ridge(alpha=0.5))
    >>> list(pipe.named_steps)
    ['simpleimputer', 'standardscaler', 'ridge']
    """
    if not steps:
        raise ValueError("make_pipeline needs at least one estimator.")
    return Pipeline(_name_estimators(steps), verbose=verbose)
