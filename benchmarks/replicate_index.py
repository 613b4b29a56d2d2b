"""Synthetic scale: replicate a built (format 2) index to ~200,000 chunks, with a site around it.

For the browser-only measurements of issue 9 at a size no real corpus on this machine
reaches in reasonable build time. From a real built site (e.g. the 50k API corpus):

- chunk records are copied ``copies`` times; copy k > 0 gets its own doc and URL
  (``copy<k>/...``), its own id, and its identifiers renamed (``n_estimators`` ->
  ``n_estimators_v<k>``; a CamelCase name gets ``V<k>``): the vocabulary grows as a
  second package's would, and common words' postings grow with the corpus;
- int8 vectors are copied with a small deterministic perturbation (+-2 on a few
  dimensions, clipped), so clusters are not exact duplicates;
- BM25 is rebuilt over the new texts (``bm25.build_index``), and everything is
  written with ``index.write.write_assets`` with the source's Layout (or ``--layout k=v``),
  model and settings;
- the real site's pages and ``_static`` are hard-linked (copied if that fails) beside it,
  so the client can be served: ``OUT/_static/sphinx_rag/index/`` is the new index.

    python benchmarks/replicate_index.py /tmp/scale/50k/html /tmp/scale/200k/html --chunks 200000
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, fields, replace
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np
from site_helpers import vectors_of

from sphinx_rag.index.write import write_assets
from sphinx_rag.search.index import ASSET_DIR, IndexReader, Layout, load_chunk_records
from sphinx_rag.search.bm25 import build_index, document_tokens

IDENT = re.compile(r"\b(?=[A-Za-z_]*[a-z][A-Za-z0-9_]*\b)([A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)\b")


def log(msg: str) -> None:
    print(msg, flush=True)


def rename(text: str, k: int) -> str:
    """Identifiers of copy k get a suffix: snake_case -> snake_case_v<k>, CamelCase -> CamelCaseV<k>."""
    if k == 0:
        return text

    def sub(m: re.Match) -> str:
        word = m.group(0)
        return f"{word}_v{k}" if "_" in word else f"{word}V{k}"

    return IDENT.sub(sub, text)


def read_index(html: Path) -> tuple[list[dict], np.ndarray | None, np.ndarray | None, IndexReader]:
    reader = IndexReader(html)
    records = load_chunk_records(html)
    if not reader.has_vectors:
        return records, None, None, reader
    vectors, scales = vectors_of(reader)
    return records, vectors, scales, reader


def replicate(records: list[dict], vectors: np.ndarray | None, scales: np.ndarray | None, n_target: int,
              seed: int = 9) -> tuple[list[dict], np.ndarray | None, np.ndarray | None]:
    n = len(records)
    copies = -(-n_target // n)
    out: list[dict] = []
    vecs, scs = [], []
    for k in range(copies):
        take = min(n, n_target - len(out))
        if take <= 0:
            break
        for r in records[:take]:
            if k == 0:
                out.append(dict(r))
                continue
            out.append(dict(r, id=f"copy{k}/{r['id']}", doc=f"copy{k}/{r['doc']}", url=f"copy{k}/{r['url']}",
                            headings=[rename(h, k) for h in r["headings"]], text=rename(r["text"], k)))
        if vectors is not None:
            v = vectors[:take].astype(np.int16)
            if k:
                rng = np.random.default_rng(seed + k)
                noise = rng.integers(-2, 3, size=v.shape, dtype=np.int16) * (rng.random(v.shape) < 0.25)
                v = np.clip(v + noise, -127, 127)
            vecs.append(v.astype(np.int8))
            scs.append(scales[:take])
    if vectors is None:
        return out, None, None
    return out, np.concatenate(vecs), np.concatenate(scs)


def copy_site(src: Path, out: Path) -> None:
    """The real site's pages and _static (hard links), without its index."""
    skip = (src / ASSET_DIR).resolve()

    def ignore(directory, names):
        return [n for n in names if (Path(directory) / n).resolve() == skip]

    def link(a, b):
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(src, out, ignore=ignore, copy_function=link)


def write_index(index_dir: Path, records: list[dict], vectors, scales, reader: IndexReader, layout: Layout,
                bm25=None) -> dict:
    """write_assets for these records (BM25 rebuilt unless given) with the reader's model and settings."""
    if bm25 is None:
        bm25 = build_index([document_tokens(r["text"]) for r in records])
    manifest = reader.manifest
    return write_assets(index_dir, chunks=records, bm25=bm25, vectors_i8=vectors, scales=scales,
                        model_dir=reader.model_dir if vectors is not None else None,
                        model_info=manifest.get("model"), settings=manifest.get("settings", {}),
                        keyword_script=True, layout=layout)


def parse_layout(base: Layout, items: list[str]) -> Layout:
    names = {f.name for f in fields(Layout)}
    changes = {}
    for item in items:
        key, _, value = item.partition("=")
        if key not in names:
            raise SystemExit(f"unknown Layout field {key!r}: one of {sorted(names)}")
        changes[key] = int(value)
    return replace(base, **changes)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("src_html", type=Path, help="a built site with a format-2 index")
    parser.add_argument("out_html", type=Path)
    parser.add_argument("--chunks", type=int, default=200_000, help="chunks of the new index (default 200000)")
    parser.add_argument("--layout", nargs="*", default=[], metavar="FIELD=N",
                        help="Layout fields to change (default: the source index's layout)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    records, vectors, scales, reader = read_index(args.src_html)
    layout = parse_layout(Layout(**reader.manifest["layout"]), args.layout)
    log(f"read {len(records)} chunks from {args.src_html} in {time.perf_counter() - t0:.0f} s")
    t = time.perf_counter()
    out_records, out_vectors, out_scales = replicate(records, vectors, scales, args.chunks)
    log(f"replicated to {len(out_records)} chunks in {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    copy_site(args.src_html, args.out_html)
    log(f"copied the site (hard links) in {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    bm25 = build_index([document_tokens(r["text"]) for r in out_records])
    log(f"BM25: {len(bm25.vocab)} terms (source: {reader.manifest['counts']['vocab']}), "
        f"{len(bm25.docs)} postings, in {time.perf_counter() - t:.0f} s")
    t = time.perf_counter()
    manifest = write_index(args.out_html / ASSET_DIR, out_records, out_vectors, out_scales, reader, layout, bm25)
    log(f"wrote {manifest['counts']['shards']} shards ({manifest['counts']['clusters']} clusters) in "
        f"{time.perf_counter() - t:.0f} s with layout {asdict(layout)}")
    log(f"done in {time.perf_counter() - t0:.0f} s: {args.out_html}")


if __name__ == "__main__":
    sys.exit(main())
