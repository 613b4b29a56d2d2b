"""CPU seconds of the static encoder's fit outside the model (issue 26): this checkout's
``encoder_fit.train_encoder`` against another version's, on a built site, pseudo-query vectors
from the embedding cache (so the model's time is left out), alternating runs.

Not a test. The other version is a file that defines ``train_encoder`` and loads alone: the
fit lived in ``sphinx_rag/static_encoder.py`` before 255465a (``index/encoder_fit.py`` since,
whose relative import keeps it from loading alone).
Prints the median CPU seconds of each and checks that the two encoders encode alike.

    git show feae07e:sphinx_rag/static_encoder.py > /tmp/old_static_encoder.py
    SPHINX_RAG_MODEL_DIR=~/.cache/sphinx-rag/models/... python benchmarks/fit_cpu.py SITE /tmp/old_static_encoder.py
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np
from bench_static_encoder import site_corpus

from sphinx_rag.index import build
from sphinx_rag.index import encoder_fit


def main(argv=None) -> int:
    site, other_file = Path(sys.argv[1]), Path(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    spec = importlib.util.spec_from_file_location("other_static_encoder", other_file)
    other = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = other
    spec.loader.exec_module(other)
    index, chunks, vectors, scales, model_dir = site_corpus(site)
    texts, titles = [c.text for c in chunks], [c.title for c in chunks]
    docs = vectors.astype(np.float32) * scales[:, None]
    versions = {"this checkout": encoder_fit.train_encoder, str(other_file): other.train_encoder}
    cpu = {k: [] for k in versions}
    encoders = {}
    build.fit_static_encoder(texts, titles, docs, model_dir, index.manifest["model"])  # fills the cache
    for _ in range(rounds):
        for name, train in versions.items():
            build.train_encoder = train
            start = time.process_time()
            encoders[name] = build.fit_static_encoder(texts, titles, docs, model_dir, index.manifest["model"])
            cpu[name].append(time.process_time() - start)
    build.train_encoder = encoder_fit.train_encoder
    queries = [c.title for c in chunks[:300]] + ["how do I fill missing values with the median"]
    a, b = (encoders[k] for k in versions)
    cosines = [float(a.encode(q) @ b.encode(q)) for q in queries if a.encode(q) is not None]
    print(f"{site}: {len(chunks)} chunks, load {os.getloadavg()[0]:.1f}; CPU s of a fit, pseudo-query vectors cached "
          f"(median of {rounds})")
    for name, ts in cpu.items():
        print(f"  {name}: {statistics.median(ts):.1f} s ({', '.join(f'{t:.1f}' for t in ts)})")
    print(f"  same encoding: cosine of the two encoders' query vectors min {min(cosines):.6f} over {len(cosines)} "
          f"queries; identical bytes: {a.to_bytes() == b.to_bytes()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
