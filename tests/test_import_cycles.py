"""Imports go one way: no module of benchmarks/ (or of a package) imports, however
indirectly or lazily, a module that imports it back (issue 39).

Read from the source with ast, nothing imported: every import statement counts, those
inside functions too (a lazy import still ties the two modules together), except those
under ``if TYPE_CHECKING:``. An import names the longest module of the folder it reaches
(``import a.b.c`` -> ``a.b.c``, ``from a.b import c`` -> ``a.b.c`` if it is a module, else
``a.b``), not the packages on the way to it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def module_names(root: Path, package: bool) -> dict[str, Path]:
    """Module name -> file. A package: dotted names from root's parent (root/__init__.py is
    root.name); a folder of scripts: each file's stem (how `python folder/x.py` imports them)."""
    out = {}
    for path in sorted(root.rglob("*.py") if package else root.glob("*.py")):
        if package:
            parts = list(path.relative_to(root.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = path
        else:
            out[path.stem] = path
    return out


def _runtime_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            test = child.test if isinstance(child, ast.If) else None
            if test is not None and ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
                                     or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def import_graph(root: Path, package: bool) -> dict[str, set[str]]:
    """Module -> the modules of the same folder it imports."""
    modules = module_names(root, package)

    def known(name: str) -> str | None:
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in modules:
                return ".".join(parts[:n])
        return None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        is_init = path.name == "__init__.py"
        for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_init else name.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)] if node.level - 1 < len(base) else []
                    if not package or not base:
                        continue  # a script's relative import, or beyond the package's top
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = [f"{module}.{alias.name}" for alias in node.names if alias.name != "*"] or [module]
                targets = [t if t in modules else module for t in targets]
            for target in targets:
                found = known(target)
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a -> b -> ... -> a) through each group of modules that import each other
    (Tarjan's strongly connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_in(graph, group) for group in sorted(groups)]


def _path_in(graph: dict[str, set[str]], group: list[str]) -> list[str]:
    """A shortest cycle from the group's first module back to it, within the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    raise AssertionError(f"no cycle through {group}")  # a strongly connected group always has one


def describe(found: list[list[str]]) -> str:
    return "; ".join(" -> ".join(cycle) for cycle in found)


# sphinx_rag is left out for now: it has cycles today (issue 39 item 3 restructures the package).
@pytest.mark.parametrize(("folder", "package"), [("benchmarks", False), ("sphinx_rag", True)])
def test_no_import_cycle(folder, package):
    graph = import_graph(REPO / folder, package)
    assert len(graph) > 5, f"read only {sorted(graph)} in {folder}"
    found = cycles(graph)
    assert not found, f"import cycles in {folder}/: {describe(found)}"


# -- the detector itself, on small made-up folders -----------------------------------------------


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_package_cycle_through_relative_and_lazy_imports_is_named(tmp_path):
    pkg = write(tmp_path / "pkg", {
        "__init__.py": "from .a import run\n",
        "a.py": "from .sub import b\n\ndef run():\n    return b.x\n",
        "sub/__init__.py": "",
        "sub/b.py": "x = 1\n\ndef later():\n    from ..c import y\n    return y\n",
        "c.py": "import pkg.a\ny = 2\n",
        "d.py": "from pkg import a\n",  # reaches into the cycle, is not in it
    })
    graph = import_graph(pkg, package=True)
    assert graph["pkg"] == {"pkg.a"}
    assert graph["pkg.a"] == {"pkg.sub.b"}  # `from .sub import b`: the module b, not the package sub
    assert graph["pkg.sub.b"] == {"pkg.c"}
    assert graph["pkg.d"] == {"pkg.a"}
    assert describe(cycles(graph)) == "pkg.a -> pkg.sub.b -> pkg.c -> pkg.a"


def test_one_way_imports_and_type_checking_imports_are_no_cycle(tmp_path):
    pkg = write(tmp_path / "pkg", {
        "__init__.py": "from . import a, b\n",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nimport os\n",
        "b.py": "from .a import *\nfrom . import a\n",
    })
    graph = import_graph(pkg, package=True)
    assert graph == {"pkg": {"pkg.a", "pkg.b"}, "pkg.a": set(), "pkg.b": {"pkg.a"}}
    assert cycles(graph) == []


def test_a_folder_of_scripts_imports_by_file_name(tmp_path):
    folder = write(tmp_path / "scripts", {
        "one.py": "import sys\nsys.path.insert(0, '.')\nfrom two import f  # noqa\n",
        "two.py": "def f():\n    import three\n",
        "three.py": "import one\nimport json\n",
        "four.py": "from one import x\n",
    })
    found = cycles(import_graph(folder, package=False))
    assert describe(found) == "one -> two -> three -> one"
