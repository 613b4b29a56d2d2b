"""Shared fixtures: Sphinx test roots, and one build of the demo docs per session."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ("sphinx.testing.fixtures",)

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "demo_docs"


@pytest.fixture(scope="session")
def rootdir():
    return Path(__file__).parent / "roots"


def build_site(src: Path, out: Path, *extra: str) -> Path:
    """Run a real ``sphinx-build -b html`` in a subprocess (as users do)."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def demo_html(tmp_path_factory) -> Path:
    """The demo docs built fresh into a temp dir (embeddings come from the cache)."""
    out = tmp_path_factory.mktemp("demo") / "html"
    build_site(DEMO, out, "-d", str(out.parent / "doctrees"))
    return out


def chunks_of(html_dir: Path) -> list[dict]:
    import json

    return json.loads((Path(html_dir) / "_static" / "sphinx_rag" / "chunks.json").read_text())
