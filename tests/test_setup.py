"""The release step the contributor's setup runs (scripts/build_model_package.py): a
second run that reuses the model package, long steps that say how far they are."""

from __future__ import annotations

import hashlib
import importlib.util
import zipfile
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent


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
