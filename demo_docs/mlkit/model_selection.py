"""Tools for splitting data and evaluating estimators with cross-validation."""

import numbers

import numpy as np

from .base import clone

__all__ = ["train_test_split", "KFold", "StratifiedKFold", "cross_val_score"]


def _num_samples(x):
    if hasattr(x, "shape"):
        return x.shape[0]
    return len(x)


def _safe_indexing(x, indices):
    if hasattr(x, "shape"):
        return x[indices]
    return [x[i] for i in indices]


def train_test_split(
    *arrays, test_size=None, train_size=None, random_state=None, shuffle=True, stratify=None
):
    """Split arrays or matrices into random train and test subsets.

    Quick utility that wraps input validation and a random permutation of
    the sample indices into a single call for splitting (and optionally
    subsampling) data into a one-liner. Keeping a held-out test set that
    the model never sees during fitting is the simplest way to estimate its
    generalization performance.

    Read more in the :ref:`User Guide <train_test_split>`.

    Parameters
    ----------
    *arrays : sequence of indexables with same length / shape[0]
        Allowed inputs are lists and numpy arrays.

    test_size : float or int, default=None
        If float, should be between 0.0 and 1.0 and represent the proportion
        of the dataset to include in the test split. If int, represents the
        absolute number of test samples. If None, the value is set to the
        complement of the train size. If ``train_size`` is also None, it
        will be set to 0.25.

    train_size : float or int, default=None
        If float, should be between 0.0 and 1.0 and represent the
        proportion of the dataset to include in the train split. If int,
        represents the absolute number of train samples. If None, the value
        is automatically set to the complement of the test size.

    random_state : int or None, default=None
        Controls the shuffling applied to the data before applying the
        split. Pass an int for reproducible output across multiple function
        calls.

    shuffle : bool, default=True
        Whether or not to shuffle the data before splitting. If
        ``shuffle=False`` then ``stratify`` must be None.

    stratify : array-like, default=None
        If not None, data is split in a stratified fashion, using this as
        the class labels, so that each class keeps the same proportion in
        the train and test subsets.

    Returns
    -------
    splitting : list, length=2 * len(arrays)
        List containing train-test split of inputs, in the order
        ``X_train, X_test, y_train, y_test, ...``.

    See Also
    --------
    KFold : Split the data into several train/test folds.
    cross_val_score : Evaluate a model on every fold.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.model_selection import train_test_split
    >>> X, y = np.arange(10).reshape((5, 2)), list(range(5))
    >>> X_train, X_test, y_train, y_test = train_test_split(
    ...     X, y, test_size=0.4, random_state=42)
    >>> X_train.shape, X_test.shape
    ((3, 2), (2, 2))
    >>> len(y_train), len(y_test)
    (3, 2)
    >>> train_test_split(y, shuffle=False)
    [[0, 1, 2], [3, 4]]
    """
    if not arrays:
        raise ValueError("At least one array required as input")
    n = _num_samples(arrays[0])
    for a in arrays[1:]:
        if _num_samples(a) != n:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples."
            )
    if test_size is None and train_size is None:
        test_size = 0.25

    def _resolve(size):
        if size is None:
            return None
        if isinstance(size, numbers.Integral):
            return int(size)
        if not 0.0 < size < 1.0:
            raise ValueError(f"test_size={size} should be a float in the (0, 1) range")
        return size * n

    n_test = _resolve(test_size)
    n_train = _resolve(train_size)
    if n_test is None:
        n_train = int(np.floor(n_train))
        n_test = n - n_train
    else:
        n_test = int(np.ceil(n_test))
        n_train = n - n_test if n_train is None else int(np.floor(n_train))
    if n_train <= 0 or n_test <= 0 or n_train + n_test > n:
        raise ValueError(
            f"With n_samples={n}, test_size={test_size} and "
            f"train_size={train_size}, the resulting train set would be empty."
        )
    if not shuffle:
        if stratify is not None:
            raise ValueError("Stratified train/test split is not implemented for shuffle=False")
        train, test = np.arange(n_train), np.arange(n_train, n_train + n_test)
    else:
        rng = np.random.default_rng(random_state)
        if stratify is None:
            perm = rng.permutation(n)
            test, train = perm[:n_test], perm[n_test:n_test + n_train]
        else:
            labels = np.asarray(stratify)
            test_parts = []
            for c in np.unique(labels):
                idx = rng.permutation(np.flatnonzero(labels == c))
                test_parts.append(idx[: int(round(len(idx) * n_test / n))])
            test = np.concatenate(test_parts)
            rest = rng.permutation(np.setdiff1d(np.arange(n), test))
            train = rest[:n_train]
    out = []
    for a in arrays:
        out.append(_safe_indexing(a, train))
        out.append(_safe_indexing(a, test))
    return out


class KFold:
    """K-Fold cross-validator.

    Provides train/test indices to split data in train/test sets. Split the
    dataset into k consecutive folds (without shuffling by default).

    Each fold is then used once as a validation while the k - 1 remaining
    folds form the training set.

    Read more in the :ref:`User Guide <k_fold>`.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds. Must be at least 2.

    shuffle : bool, default=False
        Whether to shuffle the data before splitting into batches.
        Note that the samples within each split will not be shuffled.

    random_state : int or None, default=None
        When ``shuffle`` is True, ``random_state`` affects the ordering of
        the indices, which controls the randomness of each fold. Otherwise,
        this parameter has no effect. Pass an int for reproducible output
        across multiple function calls.

    See Also
    --------
    StratifiedKFold : Takes class information into account to avoid
        building folds with imbalanced class distributions (for binary or
        multiclass classification tasks).
    cross_val_score : Run a cross-validation loop with any splitter.

    Notes
    -----
    The first ``n_samples % n_splits`` folds have size
    ``n_samples // n_splits + 1``, other folds have size
    ``n_samples // n_splits``, where ``n_samples`` is the number of samples.

    Randomized CV splitters may return different results for each call of
    split. You can make the results identical by setting ``random_state``
    to an integer.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.model_selection import KFold
    >>> X = np.array([[1, 2], [3, 4], [1, 2], [3, 4]])
    >>> y = np.array([1, 2, 3, 4])
    >>> kf = KFold(n_splits=2)
    >>> kf.get_n_splits(X)
    2
    >>> for i, (train_index, test_index) in enumerate(kf.split(X)):
    ...     print(f"Fold {i}: train={train_index}, test={test_index}")
    Fold 0: train=[2 3], test=[0 1]
    Fold 1: train=[0 1], test=[2 3]
    """

    def __init__(self, n_splits=5, *, shuffle=False, random_state=None):
        if not isinstance(n_splits, numbers.Integral) or n_splits < 2:
            raise ValueError(
                "k-fold cross-validation requires at least one train/test "
                f"split by setting n_splits=2 or more, got n_splits={n_splits}."
            )
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def __repr__(self):
        return (
            f"KFold(n_splits={self.n_splits}, random_state={self.random_state}, "
            f"shuffle={self.shuffle})"
        )

    def _test_folds(self, n_samples):
        indices = np.arange(n_samples)
        if self.shuffle:
            indices = np.random.default_rng(self.random_state).permutation(n_samples)
        sizes = np.full(self.n_splits, n_samples // self.n_splits, dtype=int)
        sizes[: n_samples % self.n_splits] += 1
        current = 0
        for size in sizes:
            yield indices[current:current + size]
            current += size

    def split(self, X, y=None, groups=None):
        """Generate indices to split data into training and test set.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, where ``n_samples`` is the number of samples
            and ``n_features`` is the number of features.

        y : array-like of shape (n_samples,), default=None
            The target variable for supervised learning problems. Ignored.

        groups : array-like of shape (n_samples,), default=None
            Always ignored, exists for compatibility.

        Yields
        ------
        train : ndarray
            The training set indices for that split.

        test : ndarray
            The testing set indices for that split.
        """
        n = _num_samples(X)
        if self.n_splits > n:
            raise ValueError(
                f"Cannot have number of splits n_splits={self.n_splits} greater "
                f"than the number of samples: n_samples={n}."
            )
        for test in self._test_folds(n):
            mask = np.ones(n, dtype=bool)
            mask[test] = False
            yield np.flatnonzero(mask), np.sort(test)

    def get_n_splits(self, X=None, y=None, groups=None):
        """Return the number of splitting iterations in the cross-validator.

        Parameters
        ----------
        X : object
            Always ignored, exists for compatibility.

        y : object
            Always ignored, exists for compatibility.

        groups : object
            Always ignored, exists for compatibility.

        Returns
        -------
        n_splits : int
            Returns the number of splitting iterations in the
            cross-validator.
        """
        return self.n_splits


class StratifiedKFold(KFold):
    """Stratified K-Fold cross-validator.

    Provides train/test indices to split data in train/test sets. This
    cross-validation object is a variation of :class:`KFold` that returns
    stratified folds. The folds are made by preserving the percentage of
    samples for each class.

    Read more in the :ref:`User Guide <stratified_k_fold>`.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds. Must be at least 2.

    shuffle : bool, default=False
        Whether to shuffle each class's samples before splitting into
        batches.

    random_state : int or None, default=None
        When ``shuffle`` is True, ``random_state`` affects the ordering of
        the indices, which controls the randomness of each fold for each
        class.

    See Also
    --------
    KFold : Folds that ignore the class labels.

    Notes
    -----
    Stratification matters most with imbalanced classes and small datasets:
    a plain :class:`KFold` may produce a test fold that contains no sample
    of a rare class at all, which makes its score meaningless.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.model_selection import StratifiedKFold
    >>> X = np.zeros((6, 1))
    >>> y = np.array([0, 0, 0, 0, 1, 1])
    >>> skf = StratifiedKFold(n_splits=2)
    >>> for train_index, test_index in skf.split(X, y):
    ...     print(np.bincount(y[test_index]))
    [2 1]
    [2 1]
    """

    def __repr__(self):
        return super().__repr__().replace("KFold", "StratifiedKFold", 1)

    def split(self, X, y, groups=None):
        """Generate indices to split data into training and test set.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data. Only its length is used.

        y : array-like of shape (n_samples,)
            The target variable for supervised learning problems.
            Stratification is done based on the y labels.

        groups : object
            Always ignored, exists for compatibility.

        Yields
        ------
        train : ndarray
            The training set indices for that split.

        test : ndarray
            The testing set indices for that split, with class proportions
            close to those of ``y``.
        """
        y = np.asarray(y)
        n = _num_samples(X)
        rng = np.random.default_rng(self.random_state)
        fold_of = np.empty(n, dtype=int)
        for c in np.unique(y):
            idx = np.flatnonzero(y == c)
            if self.shuffle:
                idx = rng.permutation(idx)
            fold_of[idx] = np.arange(len(idx)) % self.n_splits
        for k in range(self.n_splits):
            yield np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)


def _default_scorer(estimator, X, y):
    return estimator.score(X, y)


def cross_val_score(estimator, X, y=None, *, scoring=None, cv=None):
    """Evaluate a score by cross-validation.

    The estimator is cloned and fitted once per fold on the training part,
    then scored on the held-out part. The spread of the returned scores is
    as informative as their mean: it shows how much the performance depends
    on the particular split of the data.

    Read more in the :ref:`User Guide <cross_validation>`.

    Parameters
    ----------
    estimator : estimator object implementing 'fit'
        The object to use to fit the data.

    X : array-like of shape (n_samples, n_features)
        The data to fit.

    y : array-like of shape (n_samples,), default=None
        The target variable to try to predict in the case of supervised
        learning.

    scoring : callable, default=None
        A callable with signature ``scorer(estimator, X, y)`` returning a
        single float, where higher is better. If None, the estimator's
        default scorer (its ``score`` method) is used: accuracy for
        classifiers and :math:`R^2` for regressors.

    cv : int, cross-validation generator or None, default=None
        Determines the cross-validation splitting strategy. Possible inputs
        for cv are:

        - None, to use the default 5-fold cross validation,
        - int, to specify the number of folds in a :class:`KFold`,
        - a cross-validation generator such as :class:`KFold` or
          :class:`StratifiedKFold`.

        For int/None inputs, if the estimator is a classifier and ``y`` is
        given, :class:`StratifiedKFold` is used. In all other cases,
        :class:`KFold` is used.

    Returns
    -------
    scores : ndarray of float of shape=(len(list(cv)),)
        Array of scores of the estimator for each run of the cross
        validation.

    See Also
    --------
    train_test_split : A single train/test split.
    mlkit.metrics.accuracy_score : Metric used by classifiers by default.

    Notes
    -----
    Never use the test fold for any decision (feature scaling statistics,
    imputation values, hyper-parameters): wrap preprocessing and model in a
    :func:`~mlkit.pipeline.make_pipeline` so that every step is refit on the
    training folds only.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.model_selection import cross_val_score
    >>> from mlkit.linear_model import Ridge
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(30, 3)
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.randn(30)
    >>> scores = cross_val_score(Ridge(alpha=0.1), X, y, cv=3)
    >>> scores.shape
    (3,)
    >>> bool(scores.min() > 0.9)
    True
    """
    if cv is None or isinstance(cv, numbers.Integral):
        n_splits = 5 if cv is None else int(cv)
        is_classifier = getattr(estimator, "_estimator_type", None) == "classifier"
        if is_classifier and y is not None:
            cv = StratifiedKFold(n_splits)
        else:
            cv = KFold(n_splits)
    scorer = _default_scorer if scoring is None else scoring
    X = np.asarray(X)
    y_arr = None if y is None else np.asarray(y)
    scores = []
    for train, test in cv.split(X, y_arr):
        est = clone(estimator)
        if y_arr is None:
            est.fit(X[train])
            scores.append(scorer(est, X[test], None))
        else:
            est.fit(X[train], y_arr[train])
            scores.append(scorer(est, X[test], y_arr[test]))
    return np.asarray(scores, dtype=float)
