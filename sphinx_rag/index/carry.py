"""What a build leaves in Sphinx's doctree directory for the next one to start from.

The index this build published, in the form the index step works on: each chunk's
record (what ``search.index.load_chunk_records`` would read back from the text shards), its
BM25 tokens and its int8 vector, and which script shard holds which payload. An
incremental build then reads one file instead of every text shard, tokenizes and
embeds only the texts it has not seen, and compresses only the shards whose payload
changed: at 25k chunks a one-page edit's index step saves about half a second
(eval/RESULTS.md).

The file belongs to one published index: its key holds the sha256 of that index's
``manifest.json``. A build that stopped before publishing, an index replaced by hand,
tokenizer code changed since: the key does not match, and the next build reads the
shards and tokenizes everything, as if there were no file. It is marshal, not pickle
(three times faster to write a list of records), and like Sphinx's own pickle in the
same directory it is trusted: it is never read from the published site.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["CARRY_FILE", "Carried", "load", "save"]

CARRY_FILE = "sphinx_rag.carry"
_MAGIC = b"sphinx-rag carry 1\n"


@dataclass
class Carried:
    """The previous build's chunks, in index order, with what was computed from their text."""

    records: list[dict]  # as ``search.index.load_chunk_records`` reads them
    tokens: list[list[str]]  # ``bm25.document_tokens`` of each record's text
    model: dict | None  # the ``model_info`` of the vectors (None: a keyword-only index)
    vectors: np.ndarray | None  # int8, one row per record
    scales: np.ndarray | None
    shards: dict[str, tuple[str, int]]  # ``write.write_assets``'s ``shard_memo``
    suggestions_stale: int | None = None  # chunks changed since the suggestions were verified (None: unknown)

    def tokens_by_text(self) -> dict[str, list[str]]:
        return {r["text"]: t for r, t in zip(self.records, self.tokens)}


def _key(manifest: bytes) -> bytes:
    """Which index the file describes, and who made its tokens (the code of the tokenizer)."""
    from ..search import bm25, lexical

    h = hashlib.sha256(manifest)
    h.update(repr(sys.version_info[:2]).encode())  # marshal's format is the interpreter's
    for module in (lexical, bm25):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest().encode("ascii") + b"\n"


def save(work_dir: Path, manifest: bytes, records: list[dict], tokens: list[list[str]], model: dict | None,
         vectors: np.ndarray | None, scales: np.ndarray | None, shards: dict[str, tuple[str, int]], *,
         suggestions_stale: int | None = None):
    """Leave the index published with ``manifest`` (its file's bytes) for the next build."""
    path = Path(work_dir) / CARRY_FILE
    tmp = path.with_name(path.name + ".tmp")
    body = {"records": records, "tokens": tokens, "model": model, "shards": shards,
            "suggestions_stale": suggestions_stale}
    if vectors is not None:
        body |= {"dim": int(vectors.shape[1]), "vectors": np.ascontiguousarray(vectors, dtype=np.int8).tobytes(),
                 "scales": np.ascontiguousarray(scales, dtype=np.float32).tobytes()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(_MAGIC + _key(manifest) + marshal.dumps(body))
        os.replace(tmp, path)
    except (OSError, ValueError):  # only a head start: the next build reads the shards
        tmp.unlink(missing_ok=True)


def load(work_dir: Path, out_dir: Path) -> Carried | None:
    """What the build that published the index in ``out_dir`` left, or None (no such file,
    another index, other tokenizer code, a torn file)."""
    try:
        manifest = (Path(out_dir) / "manifest.json").read_bytes()
        head = _MAGIC + _key(manifest)
        with open(Path(work_dir) / CARRY_FILE, "rb") as f:
            if f.read(len(head)) != head:  # another index's: not worth reading (300 MB at 200k chunks)
                return None
            body = marshal.loads(f.read())  # not marshal.load(f): that reads the file piece by piece
        n = len(body["records"])
        vectors = scales = None
        if "vectors" in body:
            vectors = np.frombuffer(body["vectors"], dtype=np.int8).reshape(n, body["dim"])
            scales = np.frombuffer(body["scales"], dtype=np.float32, count=n)
        if len(body["tokens"]) != n:
            return None
        stale = body.get("suggestions_stale")
        return Carried(body["records"], body["tokens"], body["model"], vectors, scales, body["shards"],
                       stale if isinstance(stale, int) else None)
    except Exception:  # noqa: BLE001 -- none, torn, or of another sphinx-rag: start from the shards
        return None
