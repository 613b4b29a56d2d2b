"""Helpers shared by the tests (a plain module: conftest.py names are ambiguous with
tests/browser/conftest.py on sys.path)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "demo_docs"


def build_site(src: Path, out: Path, *extra: str) -> Path:
    """Run a real ``sphinx-build -b html`` in a subprocess (as users do)."""
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def chunks_of(html_dir: Path) -> list[dict]:
    return json.loads((Path(html_dir) / "_static" / "sphinx_rag" / "chunks.json").read_text())


@contextlib.contextmanager
def fake_llm_server(idle_minutes: int = 10):
    """tests/fake_llm_server.py in a subprocess; yields its base URL http://127.0.0.1:<port>."""
    proc = subprocess.Popen([sys.executable, str(REPO / "tests" / "fake_llm_server.py"),
                             "--idle-minutes", str(idle_minutes)], stdout=subprocess.PIPE, text=True)
    try:
        yield f"http://127.0.0.1:{int(proc.stdout.readline())}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
