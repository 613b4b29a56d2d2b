#!/usr/bin/env bash
# Set up sphinx-rag on a fresh Debian machine and build the demo docs.
# Everything Python goes into the repository's own virtual environment, .venv/ (a fresh
# Debian has no `python` command, and its system Python refuses pip installs: PEP 668).
# Idempotent: re-running skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
apt_install() {  # Debian packages, only when missing
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

# 1. Chromium for the browser tests (Debian's package; never `playwright install`), and
#    Node.js + npm for the browser client.
command -v chromium >/dev/null 2>&1 || apt_install chromium
command -v npm >/dev/null 2>&1 || apt_install nodejs npm

# 2. The virtual environment: torch pinned first (exact CPU build; anything looser pulls
#    a CUDA build) and the release tools; the default model's package built from them
#    (the release step: export + query table, cached after the first run); then
#    sphinx-rag with the model-export and test extras, its model package from dist/.
PYTHON3=$(command -v python3 || true)
[ -n "$PYTHON3" ] || { apt_install python3 python3-venv; PYTHON3=$(command -v python3); }
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating the virtual environment .venv/ ($("$PYTHON3" --version))"
    "$PYTHON3" -m venv .venv 2>/dev/null || { apt_install python3-venv; "$PYTHON3" -m venv .venv; }
fi
PY=.venv/bin/python
echo "[setup] installing torch==2.13.0 (CPU) and the release tools into .venv/"
$PY -m pip install -q "torch==2.13.0"
$PY -m pip install -q -r model_package/requirements-release.txt
echo "[setup] building the default model's package (sphinx-rag-minilm: export, query table) into dist/"
$PY scripts/build_model_package.py dist
echo "[setup] installing sphinx-rag[export,dev] into .venv/"
$PY -m pip install -q --find-links dist -e ".[export,dev]"

# 3. The browser client: onnxruntime-web + esbuild from npm, bundled into the package.
echo "[setup] building the browser client (js/ -> sphinx_rag/static/sphinx_rag/)"
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)

# 4. Build the demo, showing Sphinx's progress (the first build embeds every chunk).
echo "[setup] building the demo docs (the first build embeds every chunk)"
$PY -m sphinx -b html demo_docs demo_docs/_build/html

echo
echo "Demo docs built. Open them with:"
echo "    .venv/bin/python -m http.server --directory demo_docs/_build/html 8000   # then http://127.0.0.1:8000"
echo "or query the index from a terminal:"
echo "    .venv/bin/sphinx-rag search demo_docs/_build/html \"what values can the strategy of a dummy classifier take?\""
echo "Run the tests with:  .venv/bin/python -m pytest -q     (quick loop: -m \"not slow and not browser\")"
