"""The "file:line" of a documented Python object, named by warnings about its docstring.

``extension.on_autodoc_docstring`` asks for it for every object autodoc documents (and
every row of an autosummary table), on every read, and a warning is rare: so line numbers
come off code objects, and a class's from one parse of its module, made only when a
warning names it (``deferred_location``: parsing scikit-learn's modules for one page's
classes cost 0.5 s of a one-page edit). ``inspect.getsourcelines`` gives the same lines
but parses the whole module again for each class (10 ms a class on scikit-learn).
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
from pathlib import Path

__all__ = ["object_location", "deferred_location", "ClassLocation"]


def object_location(obj) -> str:
    """"file:line" of an object's source ("file" if the line is unknown, "" if the file is)."""
    try:
        path = inspect.getsourcefile(obj)
    except TypeError:  # built-in, or not a module, class, function or code object
        return ""
    if not path:
        return ""
    line = _first_line(obj, path)
    return f"{path}:{line}" if line else path


def deferred_location(obj) -> str | ClassLocation:
    """``object_location``, except that a class's line is looked up only when the
    location is turned into a string (a warning)."""
    if not inspect.isclass(obj):
        return object_location(obj)
    try:
        path = inspect.getsourcefile(obj)
    except TypeError:
        return ""
    return ClassLocation(path, obj.__qualname__) if path else ""


class ClassLocation:
    """"file:line" of a class, its line read from its module when first asked for
    (picklable: it is kept on Sphinx's environment)."""

    def __init__(self, path: str, qualname: str):
        self.path, self.qualname = path, qualname

    def __str__(self) -> str:
        try:
            line = _definitions(self.path, os.stat(self.path).st_mtime_ns).get(self.qualname)
        except OSError:
            line = None
        return f"{self.path}:{line}" if line else self.path

    def __eq__(self, other):
        return isinstance(other, ClassLocation) and (self.path, self.qualname) == (other.path, other.qualname)

    def __hash__(self):
        return hash((self.path, self.qualname))


def _first_line(obj, path: str) -> int | None:
    """The line ``inspect.getsourcelines`` would give (a decorator's, if decorated)."""
    try:
        target = inspect.unwrap(obj)
    except ValueError:  # a cycle of __wrapped__
        target = obj
    for candidate in (target, getattr(target, "__func__", None)):
        code = getattr(candidate, "__code__", None)
        if code is not None:
            return code.co_firstlineno
    if inspect.isclass(obj):
        try:
            return _definitions(path, os.stat(path).st_mtime_ns).get(obj.__qualname__)
        except OSError:
            return None
    return None


@functools.lru_cache(maxsize=32)
def _definitions(path: str, mtime_ns: int) -> dict[str, int]:
    """Qualified name -> first line (the first decorator's) of each class and function in a source file."""
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[str, int] = {}

    def walk(node, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                lines.setdefault(name, child.decorator_list[0].lineno if child.decorator_list else child.lineno)
                walk(child, name + ("." if isinstance(child, ast.ClassDef) else ".<locals>."))
            else:  # classes defined under an ``if`` or a ``try``
                walk(child, prefix)

    walk(tree, "")
    return lines
