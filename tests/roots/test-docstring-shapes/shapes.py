"""Docstring shapes of real numpydoc sites."""


class Plugin:
    """A plugin that reads and writes images.

    Parameters
    ----------
    request : str
        Where the image is.
    """

    def __init__(self, request):
        self.request = request

    def read(self, *, index=0):
        """Read an ndimage.

        Parameters
        ----------
        index : int
            Which ndimage of the file to read.
        **kwargs : Any
            Options of the backend.

        Returns
        -------
        ndimage : list
            The decoded pixels.

        See Also
        --------
        iter : Iterate the ndimages of the file.
        """
        return [index]

    def iter(self):
        """Iterate the ndimages of the file.

        Yields
        ------
        ndimage : list
            The next ndimage.

        See Also
        --------
        read : Read one ndimage.
        """
        yield []


class Archive:
    """An archive of images.

    Parameters
    ----------
    path : str
        Where the archive is.
    """

    def __init__(self, path, mode="r"):
        """Open the archive.

        Parameters
        ----------
        mode : str
            "r" to read, "w" to write.
        """
        self.path, self.mode = path, mode
