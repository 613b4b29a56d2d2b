#!/usr/bin/env bash
# Set up sphinx-rag on a fresh Debian machine and build the demo docs.
# Idempotent: re-running skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

# 1. Chromium for the browser tests (Debian's package; never `playwright install`).
if ! command -v chromium >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# 2. Python: torch pinned first (exact CPU build; anything looser pulls a CUDA build),
#    then sphinx-rag with the model-export and test extras.
python -m pip install -q "torch==2.13.0"
python -m pip install -q -e ".[export,dev]"

# 3. The browser client: onnxruntime-web + esbuild from npm, bundled into the package.
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)

# 4. Export the embedding model once (cached under ~/.cache/sphinx-rag) and build the demo.
python -m sphinx -b html -q demo_docs demo_docs/_build/html

echo
echo "Demo docs built. Open them with:"
echo "    python -m http.server --directory demo_docs/_build/html 8000   # then http://127.0.0.1:8000"
echo "or query the index from a terminal:"
echo "    sphinx-rag search demo_docs/_build/html \"what values can the strategy of a dummy classifier take?\""
