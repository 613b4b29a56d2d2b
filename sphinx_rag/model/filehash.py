"""sha256 of the large files every build reads the same (the model, its query table),
remembered across builds.

A build checks the default model's files against their pinned sha256 (``source.py``),
names the model it publishes and the query table its encoder starts from by their hashes
(``index.write.write_assets``, ``index_step.index_inputs``, ``index.build._fit_digest``): about 80 MB
hashed per build, 0.1-0.4 s of a one-page edit whose plain Sphinx build takes 1 s. A file
keeps its hash while its identity does not change: its resolved path, size, mtime, ctime
and inode (``make`` and git trust less). The hashes are kept in the build's doctree
directory (``use_store``), so every build but the first after a clean reads only ``stat``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = ["sha256", "use_store", "save", "STORE_FILE", "computed"]

STORE_FILE = "sphinx_rag.hashes"  # in Sphinx's doctree directory

_MEMO: dict[tuple, str] = {}  # this process's: identity -> sha256
_used: dict[tuple, str] = {}  # the hashes this build asked for (what ``save`` keeps)
_store: Path | None = None
_loaded: set[tuple] = set()
computed = 0  # files hashed by this process (tests)


def _identity(path: Path) -> tuple:
    stat = os.stat(path)
    return (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)


def sha256(path: str | os.PathLike) -> str:
    """The file's sha256 (hex), hashed only if this file was never hashed as it is now;
    OSError if it cannot be read."""
    global computed
    key = _identity(Path(path))
    digest = _MEMO.get(key)
    if digest is None:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = _MEMO[key] = h.hexdigest()
        computed += 1
    _used[key] = digest
    return digest


def use_store(directory: str | os.PathLike | None):
    """Remember hashes in ``directory`` (a build's doctree directory; None: this process
    only). What a store holds is read now; a torn or foreign file is ignored."""
    global _store
    _used.clear()
    _loaded.clear()
    _store = Path(directory) / STORE_FILE if directory is not None else None
    if _store is None:
        return
    try:
        rows = json.loads(_store.read_text(encoding="utf-8"))
        for row in rows:
            key, digest = tuple(row[:-1]), row[-1]
            if len(key) == 5 and isinstance(digest, str) and len(digest) == 64:
                _MEMO.setdefault(key, digest)
                _loaded.add(key)
    except (OSError, ValueError, TypeError, IndexError):
        pass


def save():
    """Write the hashes this build used to its store (nothing when they are all there)."""
    if _store is None or not _used or all(key in _loaded for key in _used):
        return
    rows = sorted([*key, digest] for key, digest in _used.items())
    tmp = _store.with_name(_store.name + ".tmp")
    try:
        tmp.write_text(json.dumps(rows), encoding="utf-8")
        os.replace(tmp, _store)
        _loaded.update(_used)
    except OSError:  # only a head start: the next build hashes them again
        tmp.unlink(missing_ok=True)
