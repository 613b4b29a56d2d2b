"""Dummy estimators that implement simple rules of thumb.

These estimators ignore the input features and are useful as baselines to
compare against real models.
"""

import numpy as np

from .base import BaseEstimator, _accuracy, _r2, check_is_fitted

__all__ = ["DummyClassifier", "DummyRegressor"]


def _num_samples(X):
    if hasattr(X, "shape"):
        return X.shape[0]
    return len(X)


class DummyClassifier(BaseEstimator):
    """DummyClassifier makes predictions that ignore the input features.

    This classifier serves as a simple baseline to compare against other more
    complex classifiers. A real model that does not clearly outperform a
    dummy classifier has not learned anything useful from the features.

    The specific behavior of the baseline is selected with the ``strategy``
    parameter.

    All strategies make predictions that ignore the input feature values
    passed as the ``X`` argument to ``fit`` and ``predict``. The predictions,
    however, typically depend on values observed in the ``y`` parameter
    passed to ``fit``.

    Note that the "stratified" and "uniform" strategies lead to
    non-deterministic predictions that can be rendered deterministic by
    setting the ``random_state`` parameter if needed. The other strategies
    are naturally deterministic and, once fit, always return the same
    constant prediction for any value of ``X``.

    Read more in the :ref:`User Guide <dummy_estimators>`.

    Parameters
    ----------
    strategy : {"most_frequent", "prior", "stratified", "uniform", \
            "constant"}, default="prior"
        Strategy to use to generate predictions.

        * "most_frequent": the ``predict`` method always returns the most
          frequent class label in the observed ``y`` argument passed to
          ``fit``. The ``predict_proba`` method returns the matching one-hot
          encoded vector.
        * "prior": the ``predict`` method always returns the most frequent
          class label in the observed ``y`` argument passed to ``fit`` (like
          "most_frequent"). ``predict_proba`` always returns the empirical
          class distribution of ``y`` also known as the empirical class prior
          distribution.
        * "stratified": the ``predict_proba`` method randomly samples one-hot
          vectors from a multinomial distribution parametrized by the
          empirical class prior probabilities. The ``predict`` method returns
          the class label which got probability one in the one-hot vector of
          ``predict_proba``. Each sampled row of both methods is therefore
          independent and identically distributed.
        * "uniform": generates predictions uniformly at random from the list
          of unique classes observed in ``y``, i.e. each class has equal
          probability.
        * "constant": always predicts a constant label that is provided by
          the user. This is useful for metrics that evaluate a non-majority
          class.

    random_state : int or None, default=None
        Controls the randomness to generate the predictions when
        ``strategy='stratified'`` or ``strategy='uniform'``. Pass an int for
        reproducible output across multiple function calls.

    constant : int or str, default=None
        The explicit constant as predicted by the "constant" strategy. This
        parameter is useful only for the "constant" strategy, and is required
        in that case.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Unique class labels observed in ``y``, sorted in increasing order.

    n_classes_ : int
        Number of distinct labels seen during ``fit``.

    class_prior_ : ndarray of shape (n_classes,)
        Frequency of each class observed in ``y``, i.e. the empirical prior
        probability of each label.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    DummyRegressor : Regressor that makes predictions using simple rules.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.dummy import DummyClassifier
    >>> X = np.array([-1, 1, 1, 1]).reshape(-1, 1)
    >>> y = np.array([0, 1, 1, 1])
    >>> dummy_clf = DummyClassifier(strategy="most_frequent")
    >>> dummy_clf.fit(X, y)
    DummyClassifier(strategy='most_frequent')
    >>> dummy_clf.predict(X)
    array([1, 1, 1, 1])
    >>> dummy_clf.score(X, y)
    0.75
    """

    _estimator_type = "classifier"

    _STRATEGIES = ("most_frequent", "prior", "stratified", "uniform", "constant")

    def __init__(self, *, strategy="prior", random_state=None, constant=None):
        self.strategy = strategy
        self.random_state = random_state
        self.constant = constant

    def fit(self, X, y):
        """Fit the baseline classifier.

        Only the targets are used: the class labels and their frequencies
        are stored so that predictions can be generated later.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data. Only the number of samples is used.

        y : array-like of shape (n_samples,)
            Target values (class labels).

        Returns
        -------
        self : object
            Returns the instance itself.
        """
        if self.strategy not in self._STRATEGIES:
            raise ValueError(
                f"Unknown strategy {self.strategy!r}; expected one of "
                f"{self._STRATEGIES}."
            )
        y = np.asarray(y)
        if _num_samples(X) != y.shape[0]:
            raise ValueError("X and y have inconsistent numbers of samples.")
        X = np.asarray(X)
        self.n_features_in_ = 1 if X.ndim == 1 else X.shape[1]
        self.classes_, counts = np.unique(y, return_counts=True)
        self.n_classes_ = len(self.classes_)
        self.class_prior_ = counts / counts.sum()
        if self.strategy == "constant":
            if self.constant is None:
                raise ValueError(
                    "Constant target value has to be specified when the "
                    "constant strategy is used."
                )
            if self.constant not in self.classes_:
                raise ValueError(
                    f"The constant target value {self.constant!r} must be one "
                    "of the classes seen during fit."
                )
        return self

    def predict(self, X):
        """Perform classification on test vectors X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data. The feature values are ignored; only the number of
            rows determines the length of the output.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted target values for X.
        """
        check_is_fitted(self, "classes_")
        n = _num_samples(X)
        rng = np.random.default_rng(self.random_state)
        if self.strategy in ("most_frequent", "prior"):
            return np.repeat(self.classes_[np.argmax(self.class_prior_)], n)
        if self.strategy == "stratified":
            return self.classes_[rng.choice(self.n_classes_, size=n, p=self.class_prior_)]
        if self.strategy == "uniform":
            return self.classes_[rng.integers(0, self.n_classes_, size=n)]
        return np.repeat(np.asarray(self.constant, dtype=self.classes_.dtype), n)

    def predict_proba(self, X):
        """Return probability estimates for the test vectors X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class for each sample, where classes are
            ordered as they are in ``classes_``. With the "prior"
            strategy every row equals ``class_prior_``.
        """
        check_is_fitted(self, "classes_")
        n = _num_samples(X)
        k = self.n_classes_
        if self.strategy == "prior":
            return np.tile(self.class_prior_, (n, 1))
        if self.strategy == "uniform":
            return np.full((n, k), 1.0 / k)
        proba = np.zeros((n, k))
        labels = self.predict(X)
        idx = np.searchsorted(self.classes_, labels)
        proba[np.arange(n), idx] = 1.0
        return proba

    def score(self, X, y):
        """Return the mean accuracy on the given test data and labels.

        Because a dummy classifier ignores ``X``, the score only depends on
        how well the chosen strategy matches the distribution of ``y``. With
        ``strategy="most_frequent"`` it equals the proportion of the majority
        class, which is the accuracy any useful model must beat.

        Parameters
        ----------
        X : None or array-like of shape (n_samples, n_features)
            Test samples. Passing None as test samples gives the same result
            as passing real test samples, since DummyClassifier operates
            independently of the sampled observations.

        y : array-like of shape (n_samples,)
            True labels for X.

        Returns
        -------
        score : float
            Mean accuracy of ``self.predict(X)`` with respect to ``y``.
        """
        if X is None:
            X = np.zeros((len(y), 1))
        return _accuracy(y, self.predict(X))


class DummyRegressor(BaseEstimator):
    """Regressor that makes predictions using simple rules.

    This regressor is useful as a simple baseline to compare with other
    (real) regressors. Do not use it for real problems. It always predicts
    the same value, computed from the training targets, so its coefficient
    of determination is zero when ``strategy="mean"`` and the test targets
    have the same mean as the training targets.

    Read more in the :ref:`User Guide <dummy_estimators>`.

    Parameters
    ----------
    strategy : {"mean", "median", "quantile", "constant"}, default="mean"
        Strategy to use to generate predictions.

        * "mean": always predicts the mean of the training set
        * "median": always predicts the median of the training set
        * "quantile": always predicts a specified quantile of the training
          set, provided with the quantile parameter.
        * "constant": always predicts a constant value that is provided by
          the user.

    constant : int or float, default=None
        The explicit constant as predicted by the "constant" strategy. This
        parameter is useful only for the "constant" strategy.

    quantile : float in [0.0, 1.0], default=None
        The quantile to predict using the "quantile" strategy. A quantile of
        0.5 corresponds to the median, while 0.0 to the minimum and 1.0 to
        the maximum.

    Attributes
    ----------
    constant_ : float
        Mean or median or quantile of the training targets or constant value
        given by the user.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    DummyClassifier : Classifier that makes predictions using simple rules.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.dummy import DummyRegressor
    >>> X = np.array([1.0, 2.0, 3.0, 4.0]).reshape(-1, 1)
    >>> y = np.array([2.0, 3.0, 5.0, 10.0])
    >>> dummy_regr = DummyRegressor(strategy="mean")
    >>> dummy_regr.fit(X, y)
    DummyRegressor()
    >>> dummy_regr.predict(X)
    array([5., 5., 5., 5.])
    >>> dummy_regr.score(X, y)
    0.0
    """

    def __init__(self, *, strategy="mean", constant=None, quantile=None):
        self.strategy = strategy
        self.constant = constant
        self.quantile = quantile

    def fit(self, X, y):
        """Fit the baseline regressor.

        Computes the single value that will be predicted for every sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data. Ignored apart from its number of rows.

        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        y = np.asarray(y, dtype=float)
        X = np.asarray(X)
        self.n_features_in_ = 1 if X.ndim == 1 else X.shape[1]
        if self.strategy == "mean":
            self.constant_ = float(np.mean(y))
        elif self.strategy == "median":
            self.constant_ = float(np.median(y))
        elif self.strategy == "quantile":
            if self.quantile is None or not 0.0 <= self.quantile <= 1.0:
                raise ValueError(
                    "When using strategy='quantile', you have to specify the "
                    f"desired quantile in the range [0, 1], got {self.quantile}."
                )
            self.constant_ = float(np.quantile(y, self.quantile))
        elif self.strategy == "constant":
            if self.constant is None:
                raise TypeError(
                    "Constant target value has to be specified when the "
                    "constant strategy is used."
                )
            self.constant_ = float(self.constant)
        else:
            raise ValueError(f"Unknown strategy {self.strategy!r}.")
        return self

    def predict(self, X):
        """Perform regression on test vectors X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted target values for X, all equal to ``constant_``.
        """
        check_is_fitted(self, "constant_")
        return np.full(_num_samples(X), self.constant_)

    def score(self, X, y):
        """Return the coefficient of determination R^2 of the prediction.

        The coefficient R^2 is defined as ``1 - u / v``, where ``u`` is the
        residual sum of squares ``((y_true - y_pred) ** 2).sum()`` and ``v``
        is the total sum of squares ``((y_true - y_true.mean()) ** 2).sum()``.
        The best possible score is 1.0 and it can be negative (because the
        model can be arbitrarily worse). A constant model that always
        predicts the expected value of y, disregarding the input features,
        gets an R^2 score of 0.0.

        Parameters
        ----------
        X : None or array-like of shape (n_samples, n_features)
            Test samples. Passing None gives the same result, since the
            dummy regressor ignores its input.

        y : array-like of shape (n_samples,)
            True values for X.

        Returns
        -------
        score : float
            R^2 of ``self.predict(X)`` with respect to ``y``.
        """
        if X is None:
            X = np.zeros((len(y), 1))
        return _r2(y, self.predict(X))
