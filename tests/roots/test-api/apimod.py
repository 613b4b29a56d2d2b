"""A tiny module documented in numpydoc style."""


class Baseline:
    """Predict with simple rules.

    Useful as a simple baseline to compare with other classifiers.

    Parameters
    ----------
    strategy : {"most_frequent", "prior", "uniform"}, default="prior"
        Strategy to use to generate predictions.

        * "most_frequent": always the most frequent label.
        * "prior": the class prior.
    random_state : int, default=None
        Seed of the generator.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Unique class labels.

    See Also
    --------
    Filler : Fills missing values.

    Notes
    -----
    Not a real model.

    References
    ----------
    .. [1] A. Author, "Baselines", 2020.

    Examples
    --------
    >>> Baseline(strategy="uniform").strategy
    'uniform'
    """

    def __init__(self, strategy="prior", random_state=None):
        self.strategy = strategy
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the baseline.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self


class Filler:
    """Fill missing values.

    Parameters
    ----------
    strategy : str, default='mean'
        The imputation strategy: "mean" or "median".
    """

    def __init__(self, strategy="mean"):
        self.strategy = strategy


def split(n, *, shuffle=True):
    """Split indices in two.

    Parameters
    ----------
    n : int
        Number of samples.
    shuffle : bool, default=True
        Whether to shuffle.

    Returns
    -------
    tuple of list
        Train and test indices.

    Yields
    ------
    int
        Never, but documented.

    Raises
    ------
    ValueError
        If n is negative.
    """
    return list(range(n // 2)), list(range(n // 2, n))
