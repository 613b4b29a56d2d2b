"""The package's version (a module of its own: the modules that name it import it from
here, not from the package, whose setup imports them)."""

__version__ = "0.1.0"
