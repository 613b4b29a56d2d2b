"""Score functions and performance metrics for classification and regression."""

import numpy as np

__all__ = [
    "accuracy_score",
    "confusion_matrix",
    "mean_squared_error",
    "mean_absolute_error",
    "r2_score",
]


def _check_targets(y_true, y_pred):
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.shape[0] != y_pred.shape[0]:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: "
            f"[{y_true.shape[0]}, {y_pred.shape[0]}]"
        )
    return y_true, y_pred


def _weighted_mean(values, sample_weight):
    if sample_weight is None:
        return float(np.mean(values))
    return float(np.average(values, weights=np.asarray(sample_weight, dtype=float)))


def accuracy_score(y_true, y_pred, *, normalize=True, sample_weight=None):
    """Accuracy classification score.

    Computes the fraction of predictions that exactly match the true labels.
    Accuracy is easy to interpret but can be misleading on imbalanced
    problems: always predicting the majority class already gives a high
    accuracy, which is why comparing against a
    :class:`~mlkit.dummy.DummyClassifier` is recommended.

    Read more in the :ref:`User Guide <accuracy_score>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ground truth (correct) labels.

    y_pred : array-like of shape (n_samples,)
        Predicted labels, as returned by a classifier.

    normalize : bool, default=True
        If ``False``, return the number of correctly classified samples.
        Otherwise, return the fraction of correctly classified samples.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    score : float
        If ``normalize == True``, returns the fraction of correctly
        classified samples, else returns the number of correctly classified
        samples. The best performance is 1 with ``normalize == True`` and
        the number of samples with ``normalize == False``.

    See Also
    --------
    confusion_matrix : Per-class breakdown of correct and wrong predictions.

    Notes
    -----
    If :math:`\\hat{y}_i` is the predicted value of the :math:`i`-th sample
    and :math:`y_i` is the corresponding true value, then the fraction of
    correct predictions over :math:`n_\\text{samples}` is defined as

    .. math::

        \\texttt{accuracy}(y, \\hat{y}) = \\frac{1}{n_\\text{samples}}
        \\sum_{i=0}^{n_\\text{samples}-1} 1(\\hat{y}_i = y_i)

    where :math:`1(x)` is the indicator function.

    Examples
    --------
    >>> from mlkit.metrics import accuracy_score
    >>> y_pred = [0, 2, 1, 3]
    >>> y_true = [0, 1, 2, 3]
    >>> accuracy_score(y_true, y_pred)
    0.5
    >>> accuracy_score(y_true, y_pred, normalize=False)
    2.0
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    correct = (y_true == y_pred).astype(float)
    if not normalize:
        if sample_weight is None:
            return float(correct.sum())
        return float(np.dot(correct, sample_weight))
    return _weighted_mean(correct, sample_weight)


def confusion_matrix(y_true, y_pred, *, labels=None, normalize=None):
    """Compute confusion matrix to evaluate the accuracy of a classification.

    By definition a confusion matrix :math:`C` is such that :math:`C_{i, j}`
    is equal to the number of observations known to be in group :math:`i`
    and predicted to be in group :math:`j`.

    Thus in binary classification, the count of true negatives is
    :math:`C_{0,0}`, false negatives is :math:`C_{1,0}`, true positives is
    :math:`C_{1,1}` and false positives is :math:`C_{0,1}`.

    Read more in the :ref:`User Guide <confusion_matrix>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ground truth (correct) target values.

    y_pred : array-like of shape (n_samples,)
        Estimated targets as returned by a classifier.

    labels : array-like of shape (n_classes,), default=None
        List of labels to index the matrix. This may be used to reorder
        or select a subset of labels. If ``None`` is given, those that
        appear at least once in ``y_true`` or ``y_pred`` are used in
        sorted order.

    normalize : {'true', 'pred', 'all'}, default=None
        Normalizes confusion matrix over the true (rows), predicted
        (columns) conditions or all the population. If None, confusion
        matrix will not be normalized.

    Returns
    -------
    C : ndarray of shape (n_classes, n_classes)
        Confusion matrix whose i-th row and j-th column entry indicates the
        number of samples with true label being i-th class and predicted
        label being j-th class.

    See Also
    --------
    accuracy_score : The trace of the normalized confusion matrix.

    References
    ----------
    .. [1] `Wikipedia entry for the Confusion matrix
           <https://en.wikipedia.org/wiki/Confusion_matrix>`_
           (Wikipedia and other references may use a different
           convention for axes).

    Examples
    --------
    >>> from mlkit.metrics import confusion_matrix
    >>> y_true = [2, 0, 2, 2, 0, 1]
    >>> y_pred = [0, 0, 2, 2, 0, 2]
    >>> confusion_matrix(y_true, y_pred)
    array([[2, 0, 0],
           [0, 0, 1],
           [1, 0, 2]])

    >>> y_true = ["cat", "ant", "cat", "cat", "ant", "bird"]
    >>> y_pred = ["ant", "ant", "cat", "cat", "ant", "cat"]
    >>> confusion_matrix(y_true, y_pred, labels=["ant", "bird", "cat"])
    array([[2, 0, 0],
           [0, 0, 1],
           [1, 0, 2]])
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    if labels is None:
        labels = np.unique(np.concatenate([y_true, y_pred]))
    else:
        labels = np.asarray(labels)
    index = {label: i for i, label in enumerate(labels.tolist())}
    n = len(labels)
    C = np.zeros((n, n), dtype=int)
    for t, p in zip(y_true.tolist(), y_pred.tolist()):
        if t in index and p in index:
            C[index[t], index[p]] += 1
    if normalize is None:
        return C
    with np.errstate(all="ignore"):
        if normalize == "true":
            Cn = C / C.sum(axis=1, keepdims=True)
        elif normalize == "pred":
            Cn = C / C.sum(axis=0, keepdims=True)
        elif normalize == "all":
            Cn = C / C.sum()
        else:
            raise ValueError("normalize must be one of {'true', 'pred', 'all', None}")
    return np.nan_to_num(Cn)


def mean_squared_error(y_true, y_pred, *, sample_weight=None):
    """Mean squared error regression loss.

    The mean squared error (MSE) is the average of the squared differences
    between the predicted and the true target values. Because errors are
    squared, large mistakes are penalized much more than small ones, and
    the result is expressed in squared units of the target. Take the square
    root to get the root mean squared error (RMSE) in the units of ``y``.

    Read more in the :ref:`User Guide <mean_squared_error>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Ground truth (correct) target values.

    y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Estimated target values.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    loss : float
        A non-negative floating point value (the best value is 0.0).

    See Also
    --------
    mean_absolute_error : Less sensitive to outliers.
    r2_score : Scale-free alternative.

    Notes
    -----
    .. math::

        \\text{MSE}(y, \\hat{y}) = \\frac{1}{n_\\text{samples}}
        \\sum_{i=0}^{n_\\text{samples} - 1} (y_i - \\hat{y}_i)^2

    Examples
    --------
    >>> from mlkit.metrics import mean_squared_error
    >>> y_true = [3, -0.5, 2, 7]
    >>> y_pred = [2.5, 0.0, 2, 8]
    >>> mean_squared_error(y_true, y_pred)
    0.375
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    errors = (y_true.astype(float) - y_pred.astype(float)) ** 2
    if errors.ndim > 1:
        errors = errors.mean(axis=1)
    return _weighted_mean(errors, sample_weight)


def mean_absolute_error(y_true, y_pred, *, sample_weight=None):
    """Mean absolute error regression loss.

    The average of the absolute differences between predictions and true
    values. It is expressed in the same units as the target and is more
    robust to a few large errors than :func:`mean_squared_error`.

    Read more in the :ref:`User Guide <mean_absolute_error>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ground truth (correct) target values.

    y_pred : array-like of shape (n_samples,)
        Estimated target values.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    loss : float
        Mean absolute error, a non-negative value where 0.0 is best.

    See Also
    --------
    mean_squared_error : Penalizes large errors more heavily.

    Examples
    --------
    >>> from mlkit.metrics import mean_absolute_error
    >>> y_true = [3, -0.5, 2, 7]
    >>> y_pred = [2.5, 0.0, 2, 8]
    >>> mean_absolute_error(y_true, y_pred)
    0.5
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    errors = np.abs(y_true.astype(float) - y_pred.astype(float))
    if errors.ndim > 1:
        errors = errors.mean(axis=1)
    return _weighted_mean(errors, sample_weight)


def r2_score(y_true, y_pred, *, sample_weight=None):
    """:math:`R^2` (coefficient of determination) regression score function.

    Best possible score is 1.0 and it can be negative (because the model can
    be arbitrarily worse). A constant model that always predicts the
    expected value of y, disregarding the input features, would get an
    :math:`R^2` score of 0.0. This is the score returned by the ``score``
    method of every mlkit regressor.

    Read more in the :ref:`User Guide <r2_score>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Ground truth (correct) target values.

    y_pred : array-like of shape (n_samples,)
        Estimated target values.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.

    Returns
    -------
    z : float
        The :math:`R^2` score.

    See Also
    --------
    mean_squared_error : The numerator of the score, up to a factor.

    Notes
    -----
    .. math::

        R^2(y, \\hat{y}) = 1 - \\frac{\\sum_{i=1}^{n} (y_i - \\hat{y}_i)^2}
        {\\sum_{i=1}^{n} (y_i - \\bar{y})^2}

    This is not a symmetric function: ``r2_score(a, b)`` generally differs
    from ``r2_score(b, a)``. If the true target is constant, the score is
    not finite and 1.0 (perfect predictions) or 0.0 (imperfect
    predictions) is returned.

    Examples
    --------
    >>> from mlkit.metrics import r2_score
    >>> y_true = [3, -0.5, 2, 7]
    >>> y_pred = [2.5, 0.0, 2, 8]
    >>> round(r2_score(y_true, y_pred), 4)
    0.9486
    """
    y_true, y_pred = _check_targets(y_true, y_pred)
    y_true = y_true.astype(float)
    y_pred = y_pred.astype(float)
    w = np.ones(len(y_true)) if sample_weight is None else np.asarray(sample_weight, float)
    mean = np.average(y_true, weights=w)
    ss_res = np.sum(w * (y_true - y_pred) ** 2)
    ss_tot = np.sum(w * (y_true - mean) ** 2)
    if ss_tot == 0:
        return 1.0 if ss_res == 0 else 0.0
    return float(1.0 - ss_res / ss_tot)
