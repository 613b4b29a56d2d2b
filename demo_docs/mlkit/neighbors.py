"""Nearest-neighbors based classification and regression."""

import numpy as np

from .base import BaseEstimator, _accuracy, _r2, check_array, check_is_fitted

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor"]


def _pairwise_distances(A, B, metric, p):
    diff = A[:, None, :] - B[None, :, :]
    if metric == "euclidean" or (metric == "minkowski" and p == 2):
        return np.sqrt(np.sum(diff**2, axis=-1))
    if metric == "manhattan" or (metric == "minkowski" and p == 1):
        return np.sum(np.abs(diff), axis=-1)
    if metric == "chebyshev":
        return np.max(np.abs(diff), axis=-1)
    if metric == "minkowski":
        return np.sum(np.abs(diff) ** p, axis=-1) ** (1.0 / p)
    raise ValueError(
        f"Unknown metric {metric!r}; expected 'minkowski', 'euclidean', "
        "'manhattan' or 'chebyshev'."
    )


class _NeighborsBase(BaseEstimator):
    def _fit(self, X, y):
        if self.n_neighbors <= 0:
            raise ValueError(f"Expected n_neighbors > 0. Got {self.n_neighbors}")
        if self.weights not in (None, "uniform", "distance") and not callable(self.weights):
            raise ValueError(
                "weights not recognized: should be 'uniform', 'distance', or "
                "a callable function"
            )
        self._fit_X = check_array(X)
        self._y = np.asarray(y)
        self.n_features_in_ = self._fit_X.shape[1]
        self.n_samples_fit_ = self._fit_X.shape[0]
        self.effective_metric_ = (
            "euclidean" if self.metric == "minkowski" and self.p == 2 else self.metric
        )
        return self

    def _kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        check_is_fitted(self, "_fit_X")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        query_is_train = X is None
        Q = self._fit_X if query_is_train else check_array(X)
        if k + int(query_is_train) > self.n_samples_fit_:
            raise ValueError(
                f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {k}, "
                f"n_samples_fit = {self.n_samples_fit_}"
            )
        D = _pairwise_distances(Q, self._fit_X, self.metric, self.p)
        if query_is_train:
            np.fill_diagonal(D, np.inf)
        ind = np.argsort(D, axis=1, kind="stable")[:, :k]
        dist = np.take_along_axis(D, ind, axis=1)
        return (dist, ind) if return_distance else ind

    def _weights(self, dist):
        if self.weights is None or self.weights == "uniform":
            return np.ones_like(dist)
        if self.weights == "distance":
            with np.errstate(divide="ignore"):
                w = 1.0 / dist
            exact = np.isinf(w)
            rows = exact.any(axis=1)
            w[rows] = exact[rows].astype(float)
            return w
        return np.asarray(self.weights(dist), dtype=float)


class KNeighborsClassifier(_NeighborsBase):
    """Classifier implementing the k-nearest neighbors vote.

    The label of a query point is chosen by a (possibly weighted) majority
    vote among the ``n_neighbors`` training samples that are closest to it.
    Nothing is learned during ``fit`` apart from storing the training set:
    all the work happens at prediction time, which is why k-nearest
    neighbors is called a *lazy* or *instance-based* method.

    Read more in the :ref:`User Guide <classification_neighbors>`.

    Parameters
    ----------
    n_neighbors : int, default=5
        Number of neighbors to use by default for :meth:`kneighbors`
        queries. Small values give flexible, noisy decision boundaries;
        large values give smoother boundaries.

    weights : {'uniform', 'distance'}, callable or None, default='uniform'
        Weight function used in prediction. Possible values:

        - 'uniform' : uniform weights. All points in each neighborhood
          are weighted equally.
        - 'distance' : weight points by the inverse of their distance.
          In this case, closer neighbors of a query point will have a
          greater influence than neighbors which are further away.
        - [callable] : a user-defined function which accepts an
          array of distances, and returns an array of the same shape
          containing the weights.

    p : float, default=2
        Power parameter for the Minkowski metric. When p = 1, this is
        equivalent to using manhattan_distance (l1), and euclidean_distance
        (l2) for p = 2. For arbitrary p, minkowski_distance (l_p) is used.

    metric : str, default='minkowski'
        Metric to use for distance computation. Default is "minkowski",
        which results in the standard Euclidean distance when p = 2. Other
        supported values are "euclidean", "manhattan" and "chebyshev".

    Attributes
    ----------
    classes_ : array of shape (n_classes,)
        Class labels known to the classifier.

    effective_metric_ : str
        The distance metric used. It will be same as the ``metric``
        parameter or a synonym of it, e.g. 'euclidean' if the ``metric``
        parameter set to 'minkowski' and ``p`` parameter set to 2.

    n_features_in_ : int
        Number of features seen during ``fit``.

    n_samples_fit_ : int
        Number of samples in the fitted data.

    See Also
    --------
    KNeighborsRegressor : Regression based on k-nearest neighbors.
    mlkit.linear_model.LogisticRegression : A parametric alternative.

    Notes
    -----
    .. warning::

       Regarding the Nearest Neighbors algorithms, if it is found that two
       neighbors, neighbor ``k+1`` and ``k``, have identical distances but
       different labels, the results will depend on the ordering of the
       training data.

    The brute-force search used here computes all pairwise distances, so a
    prediction costs :math:`O(n_{samples} \\cdot n_{features})` per query
    point. This is fast enough for the small and medium datasets mlkit
    targets.

    Examples
    --------
    >>> X = [[0], [1], [2], [3]]
    >>> y = [0, 0, 1, 1]
    >>> from mlkit.neighbors import KNeighborsClassifier
    >>> neigh = KNeighborsClassifier(n_neighbors=3)
    >>> neigh.fit(X, y)
    KNeighborsClassifier(n_neighbors=3)
    >>> print(neigh.predict([[1.1]]))
    [0]
    >>> print(neigh.predict_proba([[0.9]]).round(3))
    [[0.667 0.333]]
    """

    _estimator_type = "classifier"

    def __init__(self, n_neighbors=5, *, weights="uniform", p=2, metric="minkowski"):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.p = p
        self.metric = metric

    def fit(self, X, y):
        """Fit the k-nearest neighbors classifier from the training dataset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : KNeighborsClassifier
            The fitted k-nearest neighbors classifier.
        """
        self._fit(X, y)
        self.classes_, self._y_idx = np.unique(self._y, return_inverse=True)
        return self

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Find the K-neighbors of a point.

        Returns indices of and distances to the neighbors of each point.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), default=None
            The query point or points. If not provided, neighbors of each
            indexed point are returned. In this case, the query point is not
            considered its own neighbor.

        n_neighbors : int, default=None
            Number of neighbors required for each sample. The default is the
            value passed to the constructor.

        return_distance : bool, default=True
            Whether or not to return the distances.

        Returns
        -------
        neigh_dist : ndarray of shape (n_queries, n_neighbors)
            Array representing the lengths to points, only present if
            return_distance=True.

        neigh_ind : ndarray of shape (n_queries, n_neighbors)
            Indices of the nearest points in the population matrix.
        """
        return self._kneighbors(X, n_neighbors, return_distance)

    def predict_proba(self, X):
        """Return probability estimates for the test data X.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test samples.

        Returns
        -------
        p : ndarray of shape (n_queries, n_classes)
            The class probabilities of the input samples. Classes are ordered
            by lexicographic order.
        """
        dist, ind = self._kneighbors(X)
        w = self._weights(dist)
        proba = np.zeros((ind.shape[0], len(self.classes_)))
        labels = self._y_idx[ind]
        for c in range(len(self.classes_)):
            proba[:, c] = np.sum(w * (labels == c), axis=1)
        proba /= proba.sum(axis=1, keepdims=True)
        return proba

    def predict(self, X):
        """Predict the class labels for the provided data.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test samples.

        Returns
        -------
        y : ndarray of shape (n_queries,)
            Class labels for each data sample.
        """
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def score(self, X, y):
        """Return the mean accuracy of the neighbors vote on test data.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test samples.

        y : array-like of shape (n_queries,)
            True labels for ``X``.

        Returns
        -------
        score : float
            Mean accuracy of ``self.predict(X)`` with respect to ``y``.
        """
        return _accuracy(y, self.predict(X))


class KNeighborsRegressor(_NeighborsBase):
    """Regression based on k-nearest neighbors.

    The target is predicted by local interpolation of the targets
    associated with the nearest neighbors in the training set: the
    prediction is the (weighted) average of the targets of the
    ``n_neighbors`` closest training samples.

    Read more in the :ref:`User Guide <regression_neighbors>`.

    Parameters
    ----------
    n_neighbors : int, default=5
        Number of neighbors to use by default for :meth:`kneighbors`
        queries.

    weights : {'uniform', 'distance'}, callable or None, default='uniform'
        Weight function used in prediction. With 'uniform' the prediction
        is the plain mean of the neighbor targets; with 'distance' closer
        neighbors contribute more, and a training point that coincides with
        the query determines the prediction exactly.

    p : float, default=2
        Power parameter for the Minkowski metric.

    metric : str, default='minkowski'
        Metric to use for distance computation, see
        :class:`KNeighborsClassifier` for the supported values.

    Attributes
    ----------
    effective_metric_ : str
        The distance metric used to compute neighbors.

    n_features_in_ : int
        Number of features seen during ``fit``.

    n_samples_fit_ : int
        Number of samples in the fitted data.

    See Also
    --------
    KNeighborsClassifier : Classifier implementing the k-nearest neighbors
        vote.

    Examples
    --------
    >>> X = [[0], [1], [2], [3]]
    >>> y = [0, 0, 1, 1]
    >>> from mlkit.neighbors import KNeighborsRegressor
    >>> neigh = KNeighborsRegressor(n_neighbors=2)
    >>> neigh.fit(X, y)
    KNeighborsRegressor(n_neighbors=2)
    >>> print(neigh.predict([[1.5]]))
    [0.5]
    """

    def __init__(self, n_neighbors=5, *, weights="uniform", p=2, metric="minkowski"):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.p = p
        self.metric = metric

    def fit(self, X, y):
        """Fit the k-nearest neighbors regressor from the training dataset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Target values.

        Returns
        -------
        self : KNeighborsRegressor
            The fitted k-nearest neighbors regressor.
        """
        self._fit(X, y)
        self._y = self._y.astype(float)
        return self

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Find the training samples closest to each query point.

        The targets of these neighbors are averaged by :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), default=None
            The query points. If None, the neighbors of each training
            sample are returned, excluding the sample itself.

        n_neighbors : int, default=None
            Number of neighbors to return. Defaults to the ``n_neighbors``
            constructor parameter.

        return_distance : bool, default=True
            If False, only the indices are returned.

        Returns
        -------
        neigh_dist : ndarray of shape (n_queries, n_neighbors)
            Distances to the neighbors, sorted in increasing order. Only
            present if ``return_distance=True``.

        neigh_ind : ndarray of shape (n_queries, n_neighbors)
            Row indices of the neighbors in the training data.
        """
        return self._kneighbors(X, n_neighbors, return_distance)

    def predict(self, X):
        """Predict the target for the provided data.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test samples.

        Returns
        -------
        y : ndarray of shape (n_queries,) or (n_queries, n_outputs)
            Target values, the weighted mean of the neighbor targets.
        """
        dist, ind = self._kneighbors(X)
        w = self._weights(dist)
        targets = self._y[ind]
        if targets.ndim == 2:
            return np.sum(w * targets, axis=1) / np.sum(w, axis=1)
        return np.sum(w[..., None] * targets, axis=1) / np.sum(w, axis=1)[:, None]

    def score(self, X, y):
        """Return the coefficient of determination of the prediction.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
            Test samples.

        y : array-like of shape (n_queries,)
            True values for ``X``.

        Returns
        -------
        score : float
            :math:`R^2` of ``self.predict(X)`` with respect to ``y``.
        """
        return _r2(y, self.predict(X))
