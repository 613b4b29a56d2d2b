"""Static checks CI runs with the tests: ruff on the Python, tsc on the browser client.

Rule sets: ``[tool.ruff.lint]`` in pyproject.toml and ``js/tsconfig.json`` (checkJs,
noImplicitAny; strictNullChecks is not on yet).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_ruff_is_clean():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert "No module named ruff" not in proc.stderr, "ruff is missing: pip install -e '.[dev]'"
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_tsc_is_clean():
    npm = shutil.which("npm")
    assert npm, "npm is needed for the JS type check: see scripts/setup_and_build.sh"
    assert (REPO / "js" / "node_modules" / "typescript").is_dir(), "run `npm ci` in js/ (setup_and_build.sh does)"
    proc = subprocess.run([npm, "run", "--silent", "typecheck"], cwd=REPO / "js", capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
