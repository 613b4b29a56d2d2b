"""The contributor's setup (scripts/setup_and_build.sh) and the release step it runs
(scripts/build_model_package.py): torch's CPU build on any machine, apt that waits for
another install, a second run that reuses the model package, long steps that say how far
they are, and one way to open the demo in the script, Getting started and the README.

The script's functions are run from bash with the script sourced (sourced, it only
defines them); what they talk to stands in locally: an HTTP server for PyTorch's CPU
index, an ``apt-get`` on PATH that records its arguments."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from site_helpers import StaticServer, free_port

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "setup_and_build.sh"


def run_function(call: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """``call`` in bash with the setup script sourced (its functions defined, nothing run)."""
    return subprocess.run(["bash", "-c", f'source "{SCRIPT}"; SUDO=""; {call}'], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=REPO)


# -- torch's CPU build --------------------------------------------------------------------

def test_torch_comes_from_the_cpu_index_where_it_answers(tmp_path):
    """An ordinary machine: PyTorch's CPU index answers, so pip is pointed at it (a plain
    `pip install torch==2.13.0` there resolves to the CUDA build)."""
    (tmp_path / "whl" / "cpu" / "torch").mkdir(parents=True)
    (tmp_path / "whl" / "cpu" / "torch" / "index.html").write_text("<a href='torch-2.13.0+cpu.whl'>torch</a>")
    with StaticServer(tmp_path) as server:
        index = f"{server.url.rstrip('/')}/whl/cpu"
        proc = run_function('torch_index_args "$(command -v python3)"', {"TORCH_CPU_INDEX": index})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["--index-url", index]


def test_torch_comes_from_pips_own_configuration_where_the_cpu_index_is_out_of_reach():
    """This machine: only PyPI and a local wheel directory (pip's configuration) are
    reachable, so nothing is added and pip's configuration finds the CPU wheel."""
    unreachable = f"http://127.0.0.1:{free_port()}/whl/cpu"  # nothing listens there
    proc = run_function('torch_index_args "$(command -v python3)"; echo "rc=$?"', {"TORCH_CPU_INDEX": unreachable})
    assert proc.stdout.split() == ["rc=0"], proc.stdout + proc.stderr


def test_a_cpu_index_that_never_answers_costs_the_probe_its_timeout_only():
    """A firewall that drops packets: the probe gives up after TORCH_PROBE_SECONDS."""
    import socket

    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        index = f"http://127.0.0.1:{silent.getsockname()[1]}/whl/cpu"
        started = time.monotonic()
        proc = run_function('torch_index_args "$(command -v python3)"',
                            {"TORCH_CPU_INDEX": index, "TORCH_PROBE_SECONDS": "1"})
        spent = time.monotonic() - started
    assert proc.returncode == 0 and proc.stdout.strip() == "", proc.stdout + proc.stderr
    assert spent < 20  # its 1 s, plus bash and Python starting on a loaded machine


def test_the_script_installs_torch_with_those_arguments():
    text = SCRIPT.read_text()
    assert re.search(r'torch_args=\$\(torch_index_args "\$PY"\)', text)
    assert re.search(r'pip install -q \$torch_args "torch==2\.13\.0"', text)


# -- apt waits for another install ----------------------------------------------------------

def fake_apt(tmp_path: Path, lock_failures: int, error: str = "") -> Path:
    """An apt-get on PATH that fails like a held lock ``lock_failures`` times (or with
    ``error``), then succeeds; it records each call's arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apt-get").write_text(f"""#!/usr/bin/env bash
echo "$*" >> "{tmp_path}/calls"
n=$(wc -l < "{tmp_path}/calls")
if [ -n "{error}" ]; then echo "{error}" >&2; exit 100; fi
if [ "$n" -le {lock_failures} ]; then
    echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
    echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
    exit 100
fi
""")
    (bin_dir / "apt-get").chmod(0o755)
    return bin_dir


def test_apt_waits_for_the_lock_another_install_holds(tmp_path):
    bin_dir = fake_apt(tmp_path, lock_failures=2)
    proc = run_function("apt_install chromium", {"PATH": f"{bin_dir}:{os.environ['PATH']}", "APT_RETRY_SECONDS": "0.1"})
    assert proc.returncode == 0, proc.stderr
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls == ["-o DPkg::Lock::Timeout=600 update -qq"] * 3 + ["-o DPkg::Lock::Timeout=600 install -y -qq chromium"]
    assert proc.stdout.count("waiting for it") == 1  # said once, not at every try


def test_apt_gives_up_on_other_errors_at_once_and_on_a_lock_after_its_wait(tmp_path):
    bin_dir = fake_apt(tmp_path, lock_failures=0, error="E: The repository is not signed.")
    path = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "APT_RETRY_SECONDS": "0.1"}
    proc = run_function("apt_install chromium", path)
    assert proc.returncode != 0 and "not signed" in proc.stderr
    assert len((tmp_path / "calls").read_text().splitlines()) == 1
    held = tmp_path / "held"
    held.mkdir()
    bin_dir = fake_apt(held, lock_failures=10_000)
    proc = run_function("apt_install chromium", {**path, "PATH": f"{bin_dir}:{os.environ['PATH']}", "APT_WAIT": "1"})
    assert proc.returncode != 0 and "Could not get lock" in proc.stderr


# -- one way to open the demo --------------------------------------------------------------

SERVE = "sphinx-rag serve demo_docs/_build/html"


def test_the_script_getting_started_and_the_readme_open_the_demo_the_same_way():
    closing = SCRIPT.read_text().split('echo "Demo docs built.', 1)[1]
    assert f".venv/bin/{SERVE}" in closing and "http.server" not in closing
    for page in (REPO / "README.md", REPO / "docs" / "getting-started.md"):
        assert f".venv/bin/{SERVE}" in page.read_text(), page
        assert "http.server" not in page.read_text(), page


def _install_section(page: Path) -> str:
    return page.read_text().split("## Install", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_first_install_command_works_before_the_first_release(page):
    """Until sphinx-rag is on PyPI, `pip install sphinx-rag` fails: the install section
    leads with what works from a checkout, and the PyPI line says it is for after the
    first release."""
    section = _install_section(REPO / page)
    first = re.search(r"```(?:bash|console)\n(.*?)```", section, re.S).group(1).strip().splitlines()[0]
    assert first == "bash scripts/setup_and_build.sh", first
    before, pypi, _ = re.split(r"(\n```bash\npip install sphinx-rag\n```)", section, maxsplit=1)
    assert "after the first release" in before.rsplit("\n\n", 1)[-1].lower(), before.rsplit("\n\n", 1)[-1]


# -- the release step: reuse and progress ---------------------------------------------------

def _release_script():
    spec = importlib.util.spec_from_file_location("build_model_package", REPO / "scripts" / "build_model_package.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_second_run_keeps_the_wheel_whose_model_files_match_the_pins(tmp_path, monkeypatch):
    script = _release_script()
    files = {"model.onnx": b"onnx bytes", "vocab.txt": b"[PAD]\n"}
    monkeypatch.setattr(script, "PACKAGED_SHA256", {n: hashlib.sha256(b).hexdigest() for n, b in files.items()})
    wheel = tmp_path / f"sphinx_rag_minilm-{script.package_version()}-py3-none-any.whl"

    def make(members: dict[str, bytes]):
        with zipfile.ZipFile(wheel, "w") as archive:
            for name, data in members.items():
                archive.writestr(f"sphinx_rag_minilm/model/{name}", data)

    make({**files, "query_table.bin": b"table"})
    assert script.built_wheel(tmp_path) == wheel
    assert script.main([str(tmp_path)]) == 0  # kept: nothing exported, embedded or built
    make({**files, "vocab.txt": b"another vocabulary", "query_table.bin": b"table"})
    assert script.built_wheel(tmp_path) is None  # a file that is not the pinned one
    make(files)
    assert script.built_wheel(tmp_path) is None  # no query table
    wheel.write_bytes(b"not a zip")
    assert script.built_wheel(tmp_path) is None
    assert script.built_wheel(tmp_path / "nowhere") is None


def test_the_release_steps_embedding_prints_progress_and_an_estimate():
    script = _release_script()
    lines, now = [], [0.0]
    progress = script.progress_lines("pseudo-queries", steps=4, say=lines.append, clock=lambda: now[0])
    batches = [[i] * 10 for i in range(20)]  # 200 texts
    for _ in progress(batches):
        now[0] += 30  # 30 s a batch
    assert lines[0].startswith("embedding 200 pseudo-queries")
    assert lines[1:] == [
        "embedding pseudo-queries... [ 25%] 50/200 pseudo-queries, 150 s so far, about 8 min left",
        "embedding pseudo-queries... [ 50%] 100/200 pseudo-queries, 5 min so far, about 5 min left",
        "embedding pseudo-queries... [ 75%] 150/200 pseudo-queries, 8 min so far, about 150 s left",
        "embedding pseudo-queries... [100%] 200/200 pseudo-queries, 10 min so far",
    ]


def test_the_query_tables_fit_prints_its_iterations():
    """The ridge fit after the embedding took 6 of the table's 15 minutes, silent before."""
    import numpy as np

    from sphinx_rag.index.query_table import distill

    rng = np.random.default_rng(0)
    paragraphs = [" ".join(rng.choice(["alpha", "beta", "gamma", "delta", "omega", "sigma"], 8)) for _ in range(40)]
    vocab = {w: i + 5 for i, w in enumerate(["alpha", "beta", "gamma", "delta", "omega", "sigma"])}
    notes: list[str] = []
    distill(paragraphs, 16, lambda batch: [[vocab[w] for w in t.split() if w in vocab] for t in batch],
            lambda texts: rng.standard_normal((len(texts), 4)), [0, 1, 2, 3, 4], queries=120, note=notes.append)
    assert any(n.startswith("[sphinx-rag] query table: fitting a ridge regression") for n in notes), notes
    assert notes[-1].startswith("[sphinx-rag] query table: ridge fit in ")
