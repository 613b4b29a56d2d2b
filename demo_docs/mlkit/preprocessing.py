"""Feature scaling, centering and encoding of categorical features."""

import numpy as np

from .base import BaseEstimator, check_array, check_is_fitted

__all__ = ["StandardScaler", "MinMaxScaler", "OneHotEncoder"]


class StandardScaler(BaseEstimator):
    """Standardize features by removing the mean and scaling to unit variance.

    The standard score of a sample ``x`` is calculated as:

    .. math::

        z = \\frac{x - u}{s}

    where ``u`` is the mean of the training samples or zero if
    ``with_mean=False``, and ``s`` is the standard deviation of the training
    samples or one if ``with_std=False``.

    Centering and scaling happen independently on each feature by computing
    the relevant statistics on the samples in the training set. Mean and
    standard deviation are then stored to be used on later data using
    :meth:`transform`.

    Standardization of a dataset is a common requirement for many machine
    learning estimators: they might behave badly if the individual features
    do not more or less look like standard normally distributed data (e.g.
    Gaussian with 0 mean and unit variance). For instance, the penalty of
    :class:`~mlkit.linear_model.Ridge` and the distances computed by
    :class:`~mlkit.neighbors.KNeighborsClassifier` assume that all features
    are on a comparable scale.

    Read more in the :ref:`User Guide <preprocessing_scaler>`.

    Parameters
    ----------
    copy : bool, default=True
        If False, try to avoid a copy and do inplace scaling instead. This is
        not guaranteed to always work inplace; e.g. if the data is not a
        NumPy array of floats, a copy may still be returned.

    with_mean : bool, default=True
        If True, center the data before scaling.

    with_std : bool, default=True
        If True, scale the data to unit variance (or equivalently, unit
        standard deviation).

    Attributes
    ----------
    scale_ : ndarray of shape (n_features,) or None
        Per feature relative scaling of the data to achieve zero mean and
        unit variance. Generally this is calculated using ``np.sqrt(var_)``.
        If a variance is zero, we cannot achieve unit variance, and the data
        is left as-is, giving a scaling factor of 1. ``scale_`` is equal to
        ``None`` when ``with_std=False``.

    mean_ : ndarray of shape (n_features,) or None
        The mean value for each feature in the training set. Equal to
        ``None`` when ``with_mean=False`` and ``with_std=False``.

    var_ : ndarray of shape (n_features,) or None
        The variance for each feature in the training set. Used to compute
        ``scale_``. Equal to ``None`` when ``with_mean=False`` and
        ``with_std=False``.

    n_features_in_ : int
        Number of features seen during ``fit``.

    n_samples_seen_ : int
        The number of samples processed by the estimator.

    See Also
    --------
    MinMaxScaler : Scale each feature to a given range instead.

    Notes
    -----
    NaNs are treated as missing values: disregarded in fit, and maintained
    in transform.

    We use a biased estimator for the standard deviation, equivalent to
    ``numpy.std(x, ddof=0)``. Note that the choice of ``ddof`` is unlikely
    to affect model performance.

    Examples
    --------
    >>> from mlkit.preprocessing import StandardScaler
    >>> data = [[0, 0], [0, 0], [1, 1], [1, 1]]
    >>> scaler = StandardScaler()
    >>> scaler.fit(data)
    StandardScaler()
    >>> scaler.mean_
    array([0.5, 0.5])
    >>> scaler.transform(data)
    array([[-1., -1.],
           [-1., -1.],
           [ 1.,  1.],
           [ 1.,  1.]])
    >>> scaler.transform([[2, 2]])
    array([[3., 3.]])
    """

    def __init__(self, *, copy=True, with_mean=True, with_std=True):
        self.copy = copy
        self.with_mean = with_mean
        self.with_std = with_std

    def fit(self, X, y=None):
        """Compute the mean and std to be used for later scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data used to compute the mean and standard deviation
            used for later scaling along the features axis.

        y : None
            Ignored.

        Returns
        -------
        self : object
            Fitted scaler.
        """
        X = check_array(X, allow_nan=True)
        self.n_features_in_ = X.shape[1]
        self.n_samples_seen_ = X.shape[0]
        if self.with_mean or self.with_std:
            self.mean_ = np.nanmean(X, axis=0)
            self.var_ = np.nanvar(X, axis=0)
        else:
            self.mean_ = None
            self.var_ = None
        if self.with_std:
            scale = np.sqrt(self.var_)
            scale[scale == 0.0] = 1.0
            self.scale_ = scale
        else:
            self.scale_ = None
        return self

    def transform(self, X, copy=None):
        """Perform standardization by centering and scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data used to scale along the features axis.

        copy : bool, default=None
            Copy the input X or not. If None, the ``copy`` parameter given
            to the constructor is used.

        Returns
        -------
        X_tr : ndarray of shape (n_samples, n_features)
            Transformed array.
        """
        check_is_fitted(self, "n_features_in_")
        copy = self.copy if copy is None else copy
        X = check_array(X, allow_nan=True)
        if copy:
            X = X.copy()
        if self.with_mean:
            X -= self.mean_
        if self.with_std:
            X /= self.scale_
        return X

    def fit_transform(self, X, y=None):
        """Fit to data, then transform it.

        Fits the scaler to ``X`` and returns a standardized version of
        ``X``. Calling this on the test set would leak information from the
        test set into the scaling statistics: use :meth:`transform` there.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        y : None
            Ignored.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Standardized array with zero mean and unit variance per column.
        """
        return self.fit(X, y).transform(X)

    def inverse_transform(self, X):
        """Scale back the data to the original representation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data to scale back, typically the output of
            :meth:`transform`.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Data in the units of the training set: ``X * scale_ + mean_``.
        """
        check_is_fitted(self, "n_features_in_")
        X = check_array(X, allow_nan=True).copy()
        if self.with_std:
            X *= self.scale_
        if self.with_mean:
            X += self.mean_
        return X


class MinMaxScaler(BaseEstimator):
    """Transform features by scaling each feature to a given range.

    This estimator scales and translates each feature individually such that
    it is in the given range on the training set, e.g. between zero and one.

    The transformation is given by::

        X_std = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
        X_scaled = X_std * (max - min) + min

    where ``min, max = feature_range``.

    This transformation is often used as an alternative to zero mean, unit
    variance scaling. It keeps sparse zeros in place when the minimum is
    zero, and it is robust to very small standard deviations, but it is
    very sensitive to outliers: a single extreme value compresses all the
    other samples into a narrow band.

    Read more in the :ref:`User Guide <preprocessing_scaler>`.

    Parameters
    ----------
    feature_range : tuple (min, max), default=(0, 1)
        Desired range of transformed data.

    copy : bool, default=True
        Set to False to perform inplace row normalization and avoid a copy
        (if the input is already a numpy array).

    clip : bool, default=False
        Set to True to clip transformed values of held-out data to the
        provided ``feature_range``. Without clipping, test values outside
        the training range are mapped outside ``feature_range``.

    Attributes
    ----------
    min_ : ndarray of shape (n_features,)
        Per feature adjustment for minimum. Equivalent to
        ``min - X.min(axis=0) * self.scale_``.

    scale_ : ndarray of shape (n_features,)
        Per feature relative scaling of the data. Equivalent to
        ``(max - min) / (X.max(axis=0) - X.min(axis=0))``.

    data_min_ : ndarray of shape (n_features,)
        Per feature minimum seen in the data.

    data_max_ : ndarray of shape (n_features,)
        Per feature maximum seen in the data.

    data_range_ : ndarray of shape (n_features,)
        Per feature range ``(data_max_ - data_min_)`` seen in the data.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    StandardScaler : Standardize features to zero mean and unit variance.

    Notes
    -----
    NaNs are treated as missing values: disregarded in fit, and maintained
    in transform.

    Examples
    --------
    >>> from mlkit.preprocessing import MinMaxScaler
    >>> data = [[-1, 2], [-0.5, 6], [0, 10], [1, 18]]
    >>> scaler = MinMaxScaler()
    >>> scaler.fit(data)
    MinMaxScaler()
    >>> scaler.data_max_
    array([ 1., 18.])
    >>> scaler.transform(data)
    array([[0.  , 0.  ],
           [0.25, 0.25],
           [0.5 , 0.5 ],
           [1.  , 1.  ]])
    >>> scaler.transform([[2, 2]])
    array([[1.5, 0. ]])
    """

    def __init__(self, feature_range=(0, 1), *, copy=True, clip=False):
        self.feature_range = feature_range
        self.copy = copy
        self.clip = clip

    def fit(self, X, y=None):
        """Compute the minimum and maximum to be used for later scaling.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data used to compute the per-feature minimum and maximum
            used for later scaling along the features axis.

        y : None
            Ignored.

        Returns
        -------
        self : object
            Fitted scaler.
        """
        lo, hi = self.feature_range
        if lo >= hi:
            raise ValueError(
                "Minimum of desired feature range must be smaller than "
                f"maximum. Got {self.feature_range}."
            )
        X = check_array(X, allow_nan=True)
        self.n_features_in_ = X.shape[1]
        self.data_min_ = np.nanmin(X, axis=0)
        self.data_max_ = np.nanmax(X, axis=0)
        self.data_range_ = self.data_max_ - self.data_min_
        rng = np.where(self.data_range_ == 0.0, 1.0, self.data_range_)
        self.scale_ = (hi - lo) / rng
        self.min_ = lo - self.data_min_ * self.scale_
        return self

    def transform(self, X):
        """Scale features of X according to feature_range.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input data that will be transformed.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_features)
            Transformed data.
        """
        check_is_fitted(self, "scale_")
        X = check_array(X, allow_nan=True)
        if self.copy:
            X = X.copy()
        X *= self.scale_
        X += self.min_
        if self.clip:
            np.clip(X, self.feature_range[0], self.feature_range[1], out=X)
        return X

    def fit_transform(self, X, y=None):
        """Fit to data, then scale it to ``feature_range``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input samples.

        y : None
            Ignored.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_features)
            Data rescaled so that, on the training set, each column spans
            exactly ``feature_range``.
        """
        return self.fit(X, y).transform(X)


class OneHotEncoder(BaseEstimator):
    """Encode categorical features as a one-hot numeric array.

    The input to this transformer should be an array-like of integers or
    strings, denoting the values taken on by categorical (discrete)
    features. The features are encoded using a one-hot (aka 'one-of-K' or
    'dummy') encoding scheme. This creates a binary column for each category
    and returns a dense array.

    By default, the encoder derives the categories based on the unique
    values in each feature. Alternatively, you can also specify the
    ``categories`` manually.

    This encoding is needed for feeding categorical data to many mlkit
    estimators, notably linear models, which would otherwise interpret
    integer category codes as ordered quantities.

    Read more in the :ref:`User Guide <preprocessing_categorical_features>`.

    Parameters
    ----------
    categories : 'auto' or a list of array-like, default='auto'
        Categories (unique values) per feature:

        - 'auto' : Determine categories automatically from the training data.
        - list : ``categories[i]`` holds the categories expected in the ith
          column. The passed categories should not mix strings and numeric
          values within a single feature, and should be sorted in case of
          numeric values.

        The used categories can be found in the ``categories_`` attribute.

    drop : {'first', 'if_binary'} or None, default=None
        Specifies a methodology to use to drop one of the categories per
        feature. This is useful in situations where perfectly collinear
        features cause problems, such as when feeding the resulting data
        into an unregularized linear regression model.

        - None : retain all features (the default).
        - 'first' : drop the first category in each feature. If only one
          category is present, the feature will be dropped entirely.
        - 'if_binary' : drop the first category in each feature with two
          categories. Features with 1 or more than 2 categories are
          left intact.

    handle_unknown : {'error', 'ignore'}, default='error'
        Specifies the way unknown categories are handled during
        :meth:`transform`.

        - 'error' : Raise an error if an unknown category is present during
          transform.
        - 'ignore' : When an unknown category is encountered during
          transform, the resulting one-hot encoded columns for this feature
          will be all zeros.

    dtype : number type, default=np.float64
        Desired dtype of output.

    Attributes
    ----------
    categories_ : list of arrays
        The categories of each feature determined during fitting (in order
        of the features in X and corresponding with the output of
        ``transform``). This includes the category specified in ``drop``
        (if any).

    drop_idx_ : array of shape (n_features,) or None
        ``drop_idx_[i]`` is the index in ``categories_[i]`` of the category
        to be dropped for each feature, or ``-1`` if no category is dropped
        from feature ``i``. ``drop_idx_`` is None when ``drop=None``.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    StandardScaler : Scale numerical features, often used next to this
        encoder.

    Examples
    --------
    Given a dataset with two features, we let the encoder find the unique
    values per feature and transform the data to a binary one-hot encoding.

    >>> from mlkit.preprocessing import OneHotEncoder
    >>> enc = OneHotEncoder(handle_unknown='ignore')
    >>> X = [['Male', 1], ['Female', 3], ['Female', 2]]
    >>> enc.fit(X)
    OneHotEncoder(handle_unknown='ignore')
    >>> enc.categories_
    [array(['Female', 'Male'], dtype=object), array([1, 2, 3], dtype=object)]
    >>> enc.transform([['Female', 1], ['Male', 4]])
    array([[1., 0., 1., 0., 0.],
           [0., 1., 0., 0., 0.]])
    >>> enc.get_feature_names_out(['gender', 'group'])
    array(['gender_Female', 'gender_Male', 'group_1', 'group_2', 'group_3'],
          dtype=object)
    """

    def __init__(
        self, *, categories="auto", drop=None, handle_unknown="error", dtype=np.float64
    ):
        self.categories = categories
        self.drop = drop
        self.handle_unknown = handle_unknown
        self.dtype = dtype

    def fit(self, X, y=None):
        """Fit OneHotEncoder to X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data to determine the categories of each feature.

        y : None
            Ignored. This parameter exists only for compatibility with
            :class:`~mlkit.pipeline.Pipeline`.

        Returns
        -------
        self : object
            Fitted encoder.
        """
        if self.handle_unknown not in ("error", "ignore"):
            raise ValueError(
                "handle_unknown should be one of 'error', 'ignore', got "
                f"{self.handle_unknown!r}."
            )
        X = check_array(X, dtype=object)
        self.n_features_in_ = X.shape[1]
        if isinstance(self.categories, str) and self.categories == "auto":
            cats = [np.array(sorted(set(X[:, j].tolist())), dtype=object) for j in range(X.shape[1])]
        else:
            if len(self.categories) != X.shape[1]:
                raise ValueError("Shape mismatch: if categories is an array, "
                                 "it has to be of shape (n_features,).")
            cats = [np.array(list(c), dtype=object) for c in self.categories]
        self.categories_ = cats
        if self.drop is None:
            self.drop_idx_ = None
        elif self.drop == "first":
            self.drop_idx_ = np.zeros(len(cats), dtype=int)
        elif self.drop == "if_binary":
            self.drop_idx_ = np.array([0 if len(c) == 2 else -1 for c in cats])
        else:
            raise ValueError(f"Wrong input for parameter `drop`: {self.drop!r}.")
        return self

    def _kept(self, j):
        n = len(self.categories_[j])
        keep = np.ones(n, dtype=bool)
        if self.drop_idx_ is not None and self.drop_idx_[j] >= 0:
            keep[self.drop_idx_[j]] = False
        return keep

    def transform(self, X):
        """Transform X using one-hot encoding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data to encode.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_encoded_features)
            Transformed input, with one column per kept category of each
            feature.
        """
        check_is_fitted(self, "categories_")
        X = check_array(X, dtype=object)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but OneHotEncoder is expecting "
                f"{self.n_features_in_} features as input."
            )
        blocks = []
        for j, cats in enumerate(self.categories_):
            lookup = {c: i for i, c in enumerate(cats.tolist())}
            block = np.zeros((X.shape[0], len(cats)), dtype=self.dtype)
            for i, value in enumerate(X[:, j].tolist()):
                if value in lookup:
                    block[i, lookup[value]] = 1
                elif self.handle_unknown == "error":
                    raise ValueError(
                        f"Found unknown categories [{value!r}] in column {j} "
                        "during transform"
                    )
            blocks.append(block[:, self._kept(j)])
        return np.hstack(blocks)

    def fit_transform(self, X, y=None):
        """Fit OneHotEncoder to X, then transform X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The categorical data to encode.

        y : None
            Ignored.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_encoded_features)
            One binary indicator column per category seen in ``X``.
        """
        return self.fit(X, y).transform(X)

    def get_feature_names_out(self, input_features=None):
        """Get output feature names for transformation.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names. If None, names ``x0``, ``x1``, ... are
            used.

        Returns
        -------
        feature_names_out : ndarray of str objects
            Transformed feature names, of the form ``<feature>_<category>``.
        """
        check_is_fitted(self, "categories_")
        if input_features is None:
            input_features = [f"x{j}" for j in range(self.n_features_in_)]
        names = []
        for j, cats in enumerate(self.categories_):
            for c, keep in zip(cats.tolist(), self._kept(j)):
                if keep:
                    names.append(f"{input_features[j]}_{c}")
        return np.asarray(names, dtype=object)
