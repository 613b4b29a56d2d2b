"""Docstrings in the two styles that are not numpydoc's (click and attrs write them so)."""


class Group:
    """A command that holds subcommands.

    The group runs its callback, then the subcommand the reader named.

    :param name: The name of the group command.
    :param commands: Map names to Command objects. Can be a list, which
        will use ``Command.name`` as the keys.
    :param int chain: How many subcommands may be chained in one
        invocation.
    :param invoke_without_command: Invoke the group's callback even if a
        subcommand is not given.
    :type invoke_without_command: bool
    :raises ValueError: If a name is given twice, see
        :ref:`the naming rules <naming>`.
    :meta private:

    .. versionchanged:: 8.0 The ``commands`` argument can be a list.
    """

    def __init__(self, name=None, commands=None, chain=1, invoke_without_command=False):
        self.name = name

    def resolve(self, args):
        """Find the subcommand for the given arguments.

        :param args: The remaining command line arguments.
        :return: The subcommand's name and the arguments left.
        :rtype: ~typing.Tuple[str, list]
        """


def define(maybe_cls=None, *, slots=True, kw_only=False):
    """Define a class with attributes.

    Args:
        slots (bool): Create a slotted class that is more memory-efficient.
            Slotted classes are described in the :term:`glossary entry <slotted
            classes>`.
        kw_only (bool):
            Make all attributes keyword-only in the generated ``__init__``.

            This only matters for subclasses.

    Returns:
        type: The decorated class.

    Raises:
        TypeError: If *maybe_cls* is not a class.
    """
