"""The indexing step of a build: chunks -> BM25 + int8 vectors -> the static assets.

Called once per build by ``extension.on_build_finished`` with every page's chunks
in index order; the format itself is ``assets.py``.
"""

from __future__ import annotations

from pathlib import Path

from .assets import read_json, write_assets
from .bm25 import build_index, document_tokens
from .chunk import Chunk
from .embed import Progress, embed_chunks

__all__ = ["write_index"]


def write_index(chunks: list[Chunk], *, urls: dict[str, str], out_dir: Path, model_dir: Path, embeddings: bool,
                settings: dict, batch_size: int = 32, threads: int | None = None,
                progress: Progress | None = None, keyword_script: bool = True, note=None) -> dict:
    """Index the chunks (in the given order) and write the assets; returns the manifest.

    ``urls``: docname -> page URL (the builder's target URI). ``note`` gets one-line
    reports (how many vectors came from the embedding cache). ``keyword_script``: also
    write ``manifest.js`` for pages opened from ``file://`` (pages with the search bar).
    """
    records = [c.to_record(urls[c.doc]) for c in chunks]
    bm25 = build_index([document_tokens(c.text) for c in chunks])
    vectors = scales = info = None
    if embeddings and chunks:
        info = read_json(Path(model_dir) / "model_info.json")
        vectors, scales = embed_chunks(chunks, model_dir, batch_size=batch_size, threads=threads,
                                       progress=progress, note=note)
    return write_assets(out_dir, chunks=records, bm25=bm25, vectors_i8=vectors, scales=scales,
                        model_dir=model_dir, model_info=info, settings=settings,
                        keyword_script=keyword_script)
