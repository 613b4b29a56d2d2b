"""Generalized linear models for regression and classification."""

import warnings

import numpy as np

from .base import BaseEstimator, _accuracy, _r2, check_array, check_is_fitted

__all__ = ["LinearRegression", "Ridge", "LogisticRegression", "ConvergenceWarning"]


class ConvergenceWarning(UserWarning):
    """Warning raised when an iterative solver stops before converging.

    Increase ``max_iter`` or scale the input features (for instance with
    :class:`~mlkit.preprocessing.StandardScaler`) to get rid of it.
    """


def _center(X, y, fit_intercept):
    if fit_intercept:
        X_offset = X.mean(axis=0)
        y_offset = y.mean(axis=0)
        return X - X_offset, y - y_offset, X_offset, y_offset
    return X, y, np.zeros(X.shape[1]), np.zeros(y.shape[1:]) if y.ndim > 1 else 0.0


class LinearRegression(BaseEstimator):
    """Ordinary least squares Linear Regression.

    LinearRegression fits a linear model with coefficients
    ``w = (w1, ..., wp)`` to minimize the residual sum of squares between
    the observed targets in the dataset, and the targets predicted by the
    linear approximation.

    Read more in the :ref:`User Guide <ordinary_least_squares>`.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Whether to calculate the intercept for this model. If set to False,
        no intercept will be used in calculations (i.e. data is expected to
        be centered).

    copy_X : bool, default=True
        If True, X will be copied; else, it may be overwritten.

    positive : bool, default=False
        When set to ``True``, forces the coefficients to be positive. This
        option is solved with a projected gradient method and is slower than
        the unconstrained least squares solution.

    Attributes
    ----------
    coef_ : array of shape (n_features,) or (n_targets, n_features)
        Estimated coefficients for the linear regression problem. If
        multiple targets are passed during the fit (y 2D), this is a 2D
        array of shape (n_targets, n_features), while if only one target is
        passed, this is a 1D array of length n_features.

    rank_ : int
        Rank of matrix ``X``.

    singular_ : array of shape (min(X, y),)
        Singular values of ``X``.

    intercept_ : float or array of shape (n_targets,)
        Independent term in the linear model. Set to 0.0 if
        ``fit_intercept = False``.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    Ridge : Ridge regression addresses some of the problems of Ordinary
        Least Squares by imposing a penalty on the size of the coefficients
        with l2 regularization.

    Notes
    -----
    From the implementation point of view, this is just plain Ordinary
    Least Squares (``numpy.linalg.lstsq``) wrapped as a predictor object.
    The solution minimizes

    .. math::

        \\min_{w} || X w - y||_2^2

    and is unique only when ``X`` has full column rank. When features are
    strongly correlated the problem is ill-conditioned and the coefficients
    become very sensitive to noise; prefer :class:`Ridge` in that case.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.linear_model import LinearRegression
    >>> X = np.array([[1, 1], [1, 2], [2, 2], [2, 3]])
    >>> # y = 1 * x_0 + 2 * x_1 + 3
    >>> y = np.dot(X, np.array([1, 2])) + 3
    >>> reg = LinearRegression().fit(X, y)
    >>> round(reg.score(X, y), 6)
    1.0
    >>> reg.coef_.round(6)
    array([1., 2.])
    >>> round(float(reg.intercept_), 6)
    3.0
    >>> reg.predict(np.array([[3, 5]])).round(6)
    array([16.])
    """

    def __init__(self, *, fit_intercept=True, copy_X=True, positive=False):
        self.fit_intercept = fit_intercept
        self.copy_X = copy_X
        self.positive = positive

    def fit(self, X, y, sample_weight=None):
        """Fit linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Target values.

        sample_weight : array-like of shape (n_samples,), default=None
            Individual weights for each sample. Samples with a larger weight
            contribute more to the squared loss.

        Returns
        -------
        self : object
            Fitted Estimator.
        """
        X = check_array(X)
        if self.copy_X:
            X = X.copy()
        y = np.asarray(y, dtype=float)
        self.n_features_in_ = X.shape[1]
        if sample_weight is not None:
            sw = np.sqrt(np.asarray(sample_weight, dtype=float))
            X = X * sw[:, None]
            y = y * (sw if y.ndim == 1 else sw[:, None])
        Xc, yc, X_offset, y_offset = _center(X, y, self.fit_intercept)
        if self.positive:
            coef = self._nnls(Xc, yc)
            self.rank_ = int(np.linalg.matrix_rank(Xc))
            self.singular_ = np.linalg.svd(Xc, compute_uv=False)
        else:
            coef, _, self.rank_, self.singular_ = np.linalg.lstsq(Xc, yc, rcond=None)
            coef = coef.T
        self.coef_ = coef
        self.intercept_ = y_offset - X_offset @ coef.T if self.fit_intercept else 0.0
        if np.ndim(self.intercept_) == 0:
            self.intercept_ = float(self.intercept_)
        return self

    @staticmethod
    def _nnls(X, y, n_iter=5000):
        L = np.linalg.norm(X, 2) ** 2 or 1.0
        w = np.zeros(X.shape[1])
        for _ in range(n_iter):
            w = np.maximum(0.0, w - X.T @ (X @ w - y) / L)
        return w

    def predict(self, X):
        """Predict using the linear model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        C : array of shape (n_samples,)
            Returns predicted values, ``X @ coef_.T + intercept_``.
        """
        check_is_fitted(self, "coef_")
        X = check_array(X)
        return X @ self.coef_.T + self.intercept_

    def score(self, X, y):
        """Return the coefficient of determination of the prediction.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.

        y : array-like of shape (n_samples,)
            True values for ``X``.

        Returns
        -------
        score : float
            :math:`R^2` of ``self.predict(X)`` with respect to ``y``. The
            best possible score is 1.0.
        """
        return _r2(y, self.predict(X))


class Ridge(BaseEstimator):
    """Linear least squares with l2 regularization.

    Minimizes the objective function::

        ||y - Xw||^2_2 + alpha * ||w||^2_2

    This model solves a regression model where the loss function is the
    linear least squares function and regularization is given by the
    l2-norm. Also known as Ridge Regression or Tikhonov regularization. The
    penalty shrinks the coefficients towards zero, which reduces the
    variance of the estimate at the cost of a small bias and makes the
    problem well-posed even when features are collinear.

    Read more in the :ref:`User Guide <ridge_regression>`.

    Parameters
    ----------
    alpha : float, default=1.0
        Constant that multiplies the L2 term, controlling regularization
        strength. ``alpha`` must be a non-negative float i.e. in
        ``[0, inf)``.

        When ``alpha = 0``, the objective is equivalent to ordinary least
        squares, solved by the :class:`LinearRegression` object. For
        numerical reasons, using ``alpha = 0`` with the ``Ridge`` object is
        not advised. Instead, you should use the :class:`LinearRegression`
        object. Larger values specify stronger regularization.

    fit_intercept : bool, default=True
        Whether to fit the intercept for this model. If set to false, no
        intercept will be used in calculations (i.e. ``X`` and ``y`` are
        expected to be centered). The intercept is never penalized.

    solver : {'auto', 'cholesky', 'svd'}, default='auto'
        Solver to use in the computational routines:

        - 'auto' chooses the solver automatically based on the type of data.
        - 'svd' uses a Singular Value Decomposition of X to compute the Ridge
          coefficients. It is the most stable solver, in particular more
          stable for singular matrices than 'cholesky' at the cost of being
          slower.
        - 'cholesky' uses the standard ``numpy.linalg.solve`` function to
          obtain a closed-form solution of the normal equations.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,) or (n_targets, n_features)
        Weight vector(s).

    intercept_ : float or ndarray of shape (n_targets,)
        Independent term in decision function. Set to 0.0 if
        ``fit_intercept = False``.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    LinearRegression : Ordinary least squares, without any penalty.
    mlkit.model_selection.cross_val_score : Select ``alpha`` by
        cross-validation.

    Notes
    -----
    The closed-form solution of the problem is

    .. math::

        \\hat{w} = (X^T X + \\alpha I)^{-1} X^T y

    which exists for any :math:`\\alpha > 0`, even if :math:`X^T X` is
    singular. Because the penalty depends on the magnitude of the
    coefficients, features should be standardized beforehand, see
    :class:`~mlkit.preprocessing.StandardScaler`.

    References
    ----------
    .. [1] Hoerl, A. E. and Kennard, R. W. (1970). Ridge regression: biased
       estimation for nonorthogonal problems. Technometrics, 12(1), 55-67.

    Examples
    --------
    >>> from mlkit.linear_model import Ridge
    >>> import numpy as np
    >>> n_samples, n_features = 10, 5
    >>> rng = np.random.RandomState(0)
    >>> y = rng.randn(n_samples)
    >>> X = rng.randn(n_samples, n_features)
    >>> clf = Ridge(alpha=1.0)
    >>> clf.fit(X, y)
    Ridge()
    >>> clf.coef_.shape
    (5,)
    """

    def __init__(self, alpha=1.0, *, fit_intercept=True, solver="auto"):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.solver = solver

    def fit(self, X, y, sample_weight=None):
        """Fit Ridge regression model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,) or (n_samples, n_targets)
            Target values.

        sample_weight : float or array-like of shape (n_samples,), default=None
            Individual weights for each sample. If given a float, every
            sample will have the same weight.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if self.alpha < 0:
            raise ValueError(f"alpha must be non-negative, got {self.alpha}.")
        if self.solver not in ("auto", "cholesky", "svd"):
            raise ValueError(f"Unknown solver {self.solver!r}.")
        X = check_array(X)
        y = np.asarray(y, dtype=float)
        self.n_features_in_ = X.shape[1]
        if sample_weight is not None:
            sw = np.sqrt(np.broadcast_to(np.asarray(sample_weight, float), X.shape[:1]))
            X = X * sw[:, None]
            y = y * (sw if y.ndim == 1 else sw[:, None])
        Xc, yc, X_offset, y_offset = _center(X, y, self.fit_intercept)
        if self.solver == "svd":
            U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
            d = s / (s**2 + self.alpha)
            coef = Vt.T @ (d[:, None] * (U.T @ yc.reshape(len(yc), -1)))
            coef = coef.ravel() if y.ndim == 1 else coef
        else:
            A = Xc.T @ Xc + self.alpha * np.eye(X.shape[1])
            coef = np.linalg.solve(A, Xc.T @ yc)
        self.coef_ = coef.T
        self.intercept_ = y_offset - X_offset @ coef if self.fit_intercept else 0.0
        if np.ndim(self.intercept_) == 0:
            self.intercept_ = float(self.intercept_)
        return self

    def predict(self, X):
        """Predict using the ridge model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to predict for.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,) or (n_samples, n_targets)
            Predicted values.
        """
        check_is_fitted(self, "coef_")
        return check_array(X) @ self.coef_.T + self.intercept_

    def score(self, X, y):
        """Return the R^2 score of the ridge predictions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.

        y : array-like of shape (n_samples,)
            True target values.

        Returns
        -------
        score : float
            Coefficient of determination; 1.0 for a perfect fit, 0.0 for a
            model that always predicts the mean of ``y``.
        """
        return _r2(y, self.predict(X))


def _softmax(Z):
    Z = Z - Z.max(axis=1, keepdims=True)
    np.exp(Z, out=Z)
    Z /= Z.sum(axis=1, keepdims=True)
    return Z


class LogisticRegression(BaseEstimator):
    """Logistic Regression (aka logit, MaxEnt) classifier.

    This class implements regularized logistic regression. The model
    estimates class probabilities with the logistic (sigmoid) function for
    binary problems and with the softmax function for multiclass problems,
    and it is fit by minimizing the (penalized) cross-entropy loss with a
    Newton solver with backtracking line search.

    Note that regularization is applied by default. It can handle both
    dense float inputs of any scale, although convergence is faster on
    standardized data.

    Read more in the :ref:`User Guide <logistic_regression>`.

    Parameters
    ----------
    penalty : {'l2', None}, default='l2'
        Specify the norm of the penalty:

        - ``None``: no penalty is added;
        - ``'l2'``: add a L2 penalty term and it is the default choice.

    tol : float, default=1e-4
        Tolerance for stopping criteria. The solver stops when the largest
        absolute entry of the gradient falls below ``tol``.

    C : float, default=1.0
        Inverse of regularization strength; must be a positive float. Like
        in support vector machines, smaller values specify stronger
        regularization.

    fit_intercept : bool, default=True
        Specifies if a constant (a.k.a. bias or intercept) should be added
        to the decision function.

    max_iter : int, default=100
        Maximum number of iterations taken for the solver to converge. A
        :class:`ConvergenceWarning` is emitted if the tolerance is not
        reached within ``max_iter`` iterations.

    random_state : int or None, default=None
        Unused by the deterministic solver; kept for API compatibility.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        A list of class labels known to the classifier.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficient of the features in the decision function.

        ``coef_`` is of shape (1, n_features) when the given problem is
        binary.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercept (a.k.a. bias) added to the decision function.

        If ``fit_intercept`` is set to False, the intercept is set to zero.
        ``intercept_`` is of shape (1,) when the given problem is binary.

    n_iter_ : int
        Actual number of iterations performed by the solver.

    n_features_in_ : int
        Number of features seen during ``fit``.

    See Also
    --------
    mlkit.neighbors.KNeighborsClassifier : Non-parametric classifier.
    mlkit.dummy.DummyClassifier : Baseline to compare the model against.

    Notes
    -----
    For the binary case with labels :math:`y_i \\in \\{-1, 1\\}`, the L2
    penalized problem solved is

    .. math::

        \\min_{w, c} \\frac{1}{2} w^T w + C \\sum_{i=1}^{n}
        \\log(\\exp(-y_i (X_i^T w + c)) + 1)

    so that ``C`` multiplies the data term rather than the penalty: halving
    ``C`` doubles the relative weight of the regularization. The
    underlying model is described in [1]_.

    References
    ----------
    .. [1] Hastie, T., Tibshirani, R. and Friedman, J. (2009). The Elements
       of Statistical Learning, 2nd edition, chapter 4.4. Springer.

    Examples
    --------
    >>> import numpy as np
    >>> from mlkit.linear_model import LogisticRegression
    >>> X = np.array([[-2.0], [-1.0], [-0.5], [0.5], [1.0], [2.0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = LogisticRegression(C=10.0).fit(X, y)
    >>> clf.predict(np.array([[-3.0], [3.0]]))
    array([0, 1])
    >>> clf.predict_proba(np.array([[0.0]])).round(2)
    array([[0.5, 0.5]])
    >>> clf.score(X, y)
    1.0
    """

    _estimator_type = "classifier"

    def __init__(
        self,
        penalty="l2",
        *,
        tol=1e-4,
        C=1.0,
        fit_intercept=True,
        max_iter=100,
        random_state=None,
    ):
        self.penalty = penalty
        self.tol = tol
        self.C = C
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.random_state = random_state

    def _loss_grad(self, W, X, Y):
        n_features = X.shape[1]
        Z = X @ W
        P = _softmax(Z.copy())
        logZ = Z - Z.max(axis=1, keepdims=True)
        logp = logZ - np.log(np.exp(logZ).sum(axis=1, keepdims=True))
        loss = -self.C * np.sum(Y * logp)
        grad = self.C * (X.T @ (P - Y))
        if self.penalty == "l2":
            Wp = W[:n_features - int(self.fit_intercept)]
            loss += 0.5 * np.sum(Wp**2)
            grad[: n_features - int(self.fit_intercept)] += Wp
        return loss, grad

    def _newton_step(self, W, X, grad):
        d, k = W.shape
        P = _softmax(X @ W)
        # Per-sample Hessian blocks of the softmax cross-entropy.
        A = P[:, :, None] * (np.eye(k)[None] - P[:, None, :])
        H = self.C * np.einsum("ij,il,ice->jcle", X, X, A).reshape(d * k, d * k)
        if self.penalty == "l2":
            n_pen = d - int(self.fit_intercept)
            idx = np.arange(n_pen * k)
            H[idx, idx] += 1.0
        step, *_ = np.linalg.lstsq(H, grad.ravel(), rcond=1e-10)
        return step.reshape(d, k)

    def fit(self, X, y, sample_weight=None):
        """Fit the model according to the given training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training vector, where ``n_samples`` is the number of samples
            and ``n_features`` is the number of features.

        y : array-like of shape (n_samples,)
            Target vector relative to X.

        sample_weight : array-like of shape (n_samples,), default=None
            Array of weights that are assigned to individual samples. If not
            provided, then each sample is given unit weight.

        Returns
        -------
        self : object
            Fitted estimator.
        """
        if self.penalty not in ("l2", None):
            raise ValueError(
                f"penalty must be 'l2' or None, got {self.penalty!r}."
            )
        if self.C <= 0:
            raise ValueError(f"Penalty term must be positive; got (C={self.C!r})")
        X = check_array(X)
        y = np.asarray(y)
        self.n_features_in_ = X.shape[1]
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        k = len(self.classes_)
        if k < 2:
            raise ValueError(
                "This solver needs samples of at least 2 classes in the data, "
                f"but the data contains only one class: {self.classes_[0]!r}"
            )
        Y = np.eye(k)[y_idx]
        if sample_weight is not None:
            Y = Y * np.asarray(sample_weight, dtype=float)[:, None]
        Xa = np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X
        W = np.zeros((Xa.shape[1], k))
        loss, grad = self._loss_grad(W, Xa, Y)
        self.n_iter_ = 0
        converged = bool(np.max(np.abs(grad)) < self.tol)
        while not converged and self.n_iter_ < self.max_iter:
            self.n_iter_ += 1
            # Newton direction, with a backtracking (Armijo) line search.
            direction = -self._newton_step(W, Xa, grad)
            slope = float(np.sum(grad * direction))
            if slope >= 0:  # not a descent direction: fall back to the gradient
                direction, slope = -grad, -float(np.sum(grad**2))
            step = 1.0
            while True:
                W_new = W + step * direction
                new_loss, new_grad = self._loss_grad(W_new, Xa, Y)
                if new_loss <= loss + 1e-4 * step * slope or step < 1e-10:
                    break
                step *= 0.5
            W, loss, grad = W_new, new_loss, new_grad
            converged = bool(np.max(np.abs(grad)) < self.tol)
        if not converged:
            warnings.warn(
                f"The solver failed to converge after {self.max_iter} iterations. Increase the "
                "number of iterations (max_iter) or scale the data.",
                ConvergenceWarning,
                stacklevel=2,
            )
        if k == 2:
            W = (W[:, 1] - W[:, 0])[:, None]
        if self.fit_intercept:
            self.coef_ = W[:-1].T.copy()
            self.intercept_ = W[-1].copy()
        else:
            self.coef_ = W.T.copy()
            self.intercept_ = np.zeros(W.shape[1])
        return self

    def decision_function(self, X):
        """Predict confidence scores for samples.

        The confidence score for a sample is proportional to the signed
        distance of that sample to the hyperplane.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data matrix for which we want to get the confidence scores.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Confidence scores per ``(n_samples, n_classes)`` combination. In
            the binary case, confidence score for ``self.classes_[1]`` where
            >0 means this class would be predicted.
        """
        check_is_fitted(self, "coef_")
        scores = check_array(X) @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        """Probability estimates.

        The returned estimates for all classes are ordered by the label of
        classes. For a binary problem the logistic function is applied to
        the decision function; for a multiclass problem the softmax
        function is used to find the predicted probability of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Vector to be scored, where ``n_samples`` is the number of
            samples and ``n_features`` is the number of features.

        Returns
        -------
        T : array-like of shape (n_samples, n_classes)
            Returns the probability of the sample for each class in the
            model, where classes are ordered as they are in ``self.classes_``.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            p1 = 1.0 / (1.0 + np.exp(-scores))
            return np.column_stack([1 - p1, p1])
        return _softmax(scores.copy())

    def predict(self, X):
        """Predict class labels for samples in X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data matrix for which we want to get the predictions.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Vector containing the class labels for each sample.
        """
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y):
        """Return the mean accuracy on the given test data and labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.

        y : array-like of shape (n_samples,)
            True labels for ``X``.

        Returns
        -------
        score : float
            Fraction of correctly classified samples.
        """
        return _accuracy(y, self.predict(X))
