"""Transformers for missing value imputation."""

import numpy as np

from .base import BaseEstimator, check_array, check_is_fitted

__all__ = ["SimpleImputer"]


def _is_missing(X, missing_values):
    if missing_values is None or (
        isinstance(missing_values, float) and np.isnan(missing_values)
    ):
        if X.dtype.kind == "f":
            return np.isnan(X)
        return np.array(
            [[v is None or (isinstance(v, float) and np.isnan(v)) for v in row] for row in X],
            dtype=bool,
        ).reshape(X.shape)
    return X == missing_values


def _most_frequent(values):
    uniques, counts = np.unique(values, return_counts=True)
    if len(uniques) == 0:
        return np.nan
    # np.unique sorts the values, so argmax returns the smallest of the
    # most frequent values in case of ties.
    return uniques[np.argmax(counts)]


class SimpleImputer(BaseEstimator):
    """Univariate imputer for completing missing values with simple strategies.

    Replace missing values using a descriptive statistic (e.g. mean, median,
    or most frequent) along each column, or using a constant value. The
    statistic of each column is learned on the training set during ``fit``
    and reused by ``transform``, so that the same replacement value is used
    for training and test data.

    Read more in the :ref:`User Guide <impute>`.

    Parameters
    ----------
    missing_values : int, float, str, np.nan or None, default=np.nan
        The placeholder for the missing values. All occurrences of
        ``missing_values`` will be imputed. For pandas' dataframes with
        nullable integer dtypes with missing values, ``missing_values``
        should be set to ``np.nan``, since ``pd.NA`` will be converted to
        ``np.nan``.

    strategy : str, default='mean'
        The imputation strategy.

        - If "mean", then replace missing values using the mean along
          each column. Can only be used with numeric data.
        - If "median", then replace missing values using the median along
          each column. Can only be used with numeric data.
        - If "most_frequent", then replace missing using the most frequent
          value along each column. Can be used with strings or numeric data.
          If there is more than one such value, only the smallest is
          returned.
        - If "constant", then replace missing values with fill_value. Can be
          used with strings or numeric data.

    fill_value : str or numerical value, default=None
        When strategy == "constant", ``fill_value`` is used to replace all
        occurrences of missing_values. For string or object data types,
        ``fill_value`` must be a string.
        If ``None``, ``fill_value`` will be 0 when imputing numerical
        data and "missing_value" for strings or object data types.

    keep_empty_features : bool, default=False
        If True, features that consist exclusively of missing values when
        ``fit`` is called are returned in results when ``transform`` is
        called. The imputed value is always ``0`` except when
        ``strategy="constant"`` in which case ``fill_value`` will be used
        instead. If False, such columns are dropped from the output.

    Attributes
    ----------
    statistics_ : array of shape (n_features,)
        The imputation fill value for each feature. Computing statistics can
        result in ``np.nan`` values. During ``transform``, features
        corresponding to ``np.nan`` statistics will be discarded.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    mlkit.preprocessing.StandardScaler : Scale features after imputation.
    mlkit.pipeline.make_pipeline : Chain an imputer with a model.

    Notes
    -----
    Columns which only contained missing values at ``fit`` are discarded
    upon ``transform`` if strategy is not ``"constant"``, unless
    ``keep_empty_features=True``.

    Imputing with the mean or the median is a *univariate* method: it
    ignores the relationship between features. It tends to shrink the
    variance of the imputed column, which is worth keeping in mind when
    the fraction of missing entries is large [1]_.

    References
    ----------
    .. [1] Little, R. J. A. and Rubin, D. B. (2019). "Statistical Analysis
       with Missing Data", 3rd edition. Wiley.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.impute import SimpleImputer
    >>> imp_mean = SimpleImputer(missing_values=np.nan, strategy='mean')
    >>> imp_mean.fit([[7, 2, 3], [4, np.nan, 6], [10, 5, 9]])
    SimpleImputer()
    >>> X = [[np.nan, 2, 3], [4, np.nan, 6], [10, np.nan, 9]]
    >>> imp_mean.transform(X)
    array([[ 7. ,  2. ,  3. ],
           [ 4. ,  3.5,  6. ],
           [10. ,  3.5,  9. ]])
    """

    def __init__(
        self,
        *,
        missing_values=np.nan,
        strategy="mean",
        fill_value=None,
        keep_empty_features=False,
    ):
        self.missing_values = missing_values
        self.strategy = strategy
        self.fill_value = fill_value
        self.keep_empty_features = keep_empty_features

    def _validate(self, X):
        numeric = self.strategy in ("mean", "median")
        try:
            X = check_array(X, allow_nan=True, dtype=float)
        except (TypeError, ValueError):
            if numeric:
                raise ValueError(
                    f"Cannot use {self.strategy} strategy with non-numeric data."
                ) from None
            X = check_array(X, allow_nan=True, dtype=object)
        return X

    def fit(self, X, y=None):
        """Fit the imputer on X.

        Computes one statistic per column, ignoring the missing entries.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data, where ``n_samples`` is the number of samples and
            ``n_features`` is the number of features.

        y : Ignored
            Not used, present here for API consistency by convention.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if self.strategy not in ("mean", "median", "most_frequent", "constant"):
            raise ValueError(
                "Can only use these strategies: ['mean', 'median', "
                f"'most_frequent', 'constant'] got strategy={self.strategy}"
            )
        X = self._validate(X)
        mask = _is_missing(X, self.missing_values)
        self.n_features_in_ = X.shape[1]
        stats = []
        for j in range(X.shape[1]):
            observed = X[~mask[:, j], j]
            if self.strategy == "constant":
                if self.fill_value is not None:
                    stats.append(self.fill_value)
                else:
                    stats.append(0 if X.dtype.kind == "f" else "missing_value")
            elif observed.size == 0:
                stats.append(0 if self.keep_empty_features else np.nan)
            elif self.strategy == "mean":
                stats.append(np.mean(observed))
            elif self.strategy == "median":
                stats.append(np.median(observed))
            else:
                stats.append(_most_frequent(observed))
        self.statistics_ = np.asarray(stats, dtype=X.dtype)
        self._valid_columns = np.array(
            [
                not (isinstance(s, float) and np.isnan(s))
                for s in self.statistics_.tolist()
            ]
        )
        return self

    def transform(self, X):
        """Impute all missing values in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The input data to complete.

        Returns
        -------
        X_imputed : ndarray of shape (n_samples, n_features_out)
            ``X`` with imputed values. ``n_features_out`` is smaller than
            ``n_features`` when some columns were entirely missing during
            ``fit`` and ``keep_empty_features=False``.
        """
        check_is_fitted(self, "statistics_")
        X = self._validate(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but SimpleImputer is expecting "
                f"{self.n_features_in_} features as input."
            )
        X = X.copy()
        mask = _is_missing(X, self.missing_values)
        for j in range(X.shape[1]):
            X[mask[:, j], j] = self.statistics_[j]
        return X[:, self._valid_columns]

    def fit_transform(self, X, y=None):
        """Fit the imputer on X and return the completed data.

        Equivalent to ``fit(X).transform(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data with missing values.

        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        X_imputed : ndarray of shape (n_samples, n_features_out)
            Data with every missing entry replaced by the learned statistic
            of its column.
        """
        return self.fit(X, y).transform(X)
