"""Functions whose docstrings napoleon turns into reST with backslash escapes (``\\*\\*kwargs``)."""


def cross_val_score(estimator, *args, **kwargs):
    """Evaluate a score by cross-validation.

    Args:
        estimator: the object to fit.
        *args: passed to ``fit``.
        **kwargs: passed to ``fit``; ``__init__`` keeps them.

    Returns:
        float: the mean score.
    """


def read_legacy(uri, **kwargs):
    """Read an image with the pillow_legacy plugin.

    Parameters
    ----------
    uri : str
        Where the image is.
    **kwargs : dict
        Passed to the plugin.
    """
