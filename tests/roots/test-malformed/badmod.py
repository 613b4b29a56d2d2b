"""Module with a docstring numpydoc cannot parse."""


def broken(x):
    """Do something useful with x.

    Parameters
    ----------
    x : int
        The first description of x.

    Parameters
    ----------
    x : int
        The same section twice: numpydoc refuses this.
    """
    return x


def fine(y):
    """Return y unchanged.

    Parameters
    ----------
    y : int
        Any value.
    """
    return y


def odd(z):
    """Render :class:`unclosed and ``literal too.

    Parameters
    ----------
    z : :class:`~numpy.ndarray
        .. warning::
        :math:`x` ``y`` *z
        ::

    Notes
    -----
    .. unknown-directive:: arg
       :option: 1

       Body kept.

    .. warning::

    Text	with a tab and a stray `quote.
    """
    return z
