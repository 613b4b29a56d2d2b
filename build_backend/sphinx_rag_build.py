"""PEP 517 build backend: setuptools' own, with the browser client built first.

The browser client (``sphinx_rag/static/sphinx_rag/``: searchbar.js, searchbar.css,
worker.js and onnxruntime-web's wasm runtime) is made from ``js/`` by esbuild and is
git-ignored, so a clean checkout has none. Before an sdist or a wheel is built, this
runs ``npm ci`` and ``npm run build`` in ``js/`` when the client is missing or older
than its sources (package.json, package-lock.json, build.mjs, src/). The sdist carries
both the built client and those sources (MANIFEST.in), so a wheel built from it needs
Node.js only if the sources were changed after the client was built.

Editable installs (``pip install -e .``) are setuptools' unchanged: they never run npm
(scripts/setup_and_build.sh builds the client itself).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (build_editable, get_requires_for_build_editable, get_requires_for_build_sdist,
                                   get_requires_for_build_wheel, prepare_metadata_for_build_editable,
                                   prepare_metadata_for_build_wheel)

__all__ = [
    "build_sdist", "build_wheel", "build_editable", "get_requires_for_build_sdist", "get_requires_for_build_wheel",
    "get_requires_for_build_editable", "prepare_metadata_for_build_wheel", "prepare_metadata_for_build_editable",
    "CLIENT_DIR", "CLIENT_FILES", "client_status", "ensure_client",
]

CLIENT_DIR = Path("sphinx_rag", "static", "sphinx_rag")  # where js/build.mjs writes
CLIENT_FILES = ("searchbar.js", "searchbar.css", "worker.js", "ort-wasm-simd-threaded.wasm",
                "ort-wasm-simd-threaded.mjs")
JS_INPUTS = ("package.json", "package-lock.json", "build.mjs", "src")  # under js/
NO_NODE = ("error: building sphinx-rag's browser client needs Node.js (>= 20) and npm, which are not on PATH: "
           "install them (https://nodejs.org/, or `apt-get install nodejs npm`) and build again")


def _input_files(js: Path):
    for name in JS_INPUTS:
        path = js / name
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            yield path


def client_status(root: Path) -> str | None:
    """Why the client under ``root`` must be (re)built, or None when it is current.

    Current: every file of CLIENT_FILES exists and no source file in js/ is newer than
    the oldest of them (file modification times, which sdists keep). Without js/ (an
    sdist made otherwise), a complete client counts as current.
    """
    root = Path(root)
    out = root / CLIENT_DIR
    missing = [name for name in CLIENT_FILES if not (out / name).is_file()]
    if missing:
        return f"{(CLIENT_DIR / missing[0]).as_posix()} is missing"
    oldest = min((out / name).stat().st_mtime for name in CLIENT_FILES)
    for path in _input_files(root / "js"):
        if path.stat().st_mtime > oldest:
            return f"{path.relative_to(root).as_posix()} is newer than the built client"
    return None


def _run(cmd: list[str], cwd: Path) -> None:
    proc = subprocess.run(cmd, cwd=cwd)
    if proc.returncode != 0:
        shown = " ".join(["npm", *cmd[1:]])
        raise SystemExit(f"error: `{shown}` failed in {cwd} (exit code {proc.returncode}); its messages are above")


def ensure_client(root: Path | str = ".") -> None:
    """Build the browser client under ``root`` with npm if it is missing or stale.

    Raises SystemExit with one line naming the fix when Node.js or npm is missing or
    the build fails.
    """
    root = Path(root).resolve()
    reason = client_status(root)
    if reason is None:
        return
    js = root / "js"
    if not (js / "package.json").is_file():
        raise SystemExit(f"error: {reason}, and js/ (its sources) is not here to build it from: build from a "
                         "checkout of the sphinx-rag repository or from its sdist")
    npm, node = shutil.which("npm"), shutil.which("node")
    if not (npm and node):
        raise SystemExit(NO_NODE)
    print(f"sphinx-rag: building the browser client ({reason}) with npm in js/", flush=True)
    hidden_lock = js / "node_modules" / ".package-lock.json"  # npm's record of what node_modules holds
    if not hidden_lock.is_file() or hidden_lock.stat().st_mtime < (js / "package-lock.json").stat().st_mtime:
        # --prefer-offline: the lockfile pins versions and hashes, so npm's cache serves them without asking
        _run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], js)
    _run([npm, "run", "build", "--silent"], js)
    missing = [name for name in CLIENT_FILES if not (root / CLIENT_DIR / name).is_file()]
    if missing:  # (not the times: a source dated in the future stays "newer")
        raise SystemExit(f"error: `npm run build` in {js} succeeded but did not write "
                         f"{(CLIENT_DIR / missing[0]).as_posix()}")


def build_sdist(sdist_directory, config_settings=None):
    ensure_client()
    return _setuptools.build_sdist(sdist_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    ensure_client()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
