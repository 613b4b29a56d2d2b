"""The general static query table: a vector per WordPiece token, distilled once per model.

A site's static query encoder (``search/static_encoder.py``) maps a query's idf-weighted bag of
WordPiece ids linearly into the model's space. Fitting that map from nothing needs
thousands of the model's embeddings of pseudo-queries per site (24 per chunk: 34-48 s
for a 184-chunk project). This table is the same map fitted once, on pseudo-queries
cut from general technical text (docstrings of Python's standard library, NumPy,
SciPy, Sphinx and docutils: ``scripts/build_model_package.py``), and shipped with the
model (``sphinx-rag-minilm``'s ``query_table.bin``). A build then fits only a correction
toward its own pages, from 4 pseudo-queries per chunk (``encoder_fit.train_encoder``'s
``prior``), and a site too small for a fit uses the table as it is.

File (little-endian, sections padded to 4 bytes)::

    u32 header length | header JSON {format, rows, dim, model_sha256, queries, corpus}
    | f32 row scales[rows] | f32 bias[dim] | int8 rows[rows x dim]

A row is the vector of WordPiece id ``row`` (a row of zeros: a token the corpus never
had); the bias is added once per query.
"""

from __future__ import annotations

import json
import struct
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["QueryTable", "TABLE_FILE", "distill", "FORMAT"]

FORMAT = 1
TABLE_FILE = "query_table.bin"  # beside model.onnx in a model directory
#: The distillation (chosen by measurement: eval/RESULTS.md, "A general query table")
QUERIES = 100_000  # general pseudo-queries embedded by the model (30,000 gave a weaker prior)
PER_PARAGRAPH = 4
RIDGE = 0.3


@dataclass
class QueryTable:
    rows: np.ndarray  # (vocab, dim) int8
    scales: np.ndarray  # (vocab,) float32
    bias: np.ndarray  # (dim,) float32
    info: dict = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return int(self.rows.shape[1])

    def vectors(self, token_ids: Sequence[int]) -> np.ndarray:
        """The float64 rows of ``token_ids``, then the bias as a last row."""
        ids = np.asarray(token_ids, dtype=np.int64)
        known = (ids >= 0) & (ids < len(self.rows))
        out = np.zeros((len(ids), self.dim), dtype=np.float64)
        out[known] = self.rows[ids[known]].astype(np.float64) * self.scales[ids[known], None].astype(np.float64)
        return np.vstack([out, self.bias.astype(np.float64)[None, :]])

    def to_bytes(self) -> bytes:
        header = json.dumps({**self.info, "format": FORMAT, "rows": int(len(self.rows)), "dim": self.dim},
                            sort_keys=True).encode()
        parts = [header, self.scales.astype("<f4").tobytes(), self.bias.astype("<f4").tobytes(),
                 self.rows.astype(np.int8).tobytes()]
        return struct.pack("<I", len(header)) + b"".join(p + b"\0" * (-len(p) % 4) for p in parts)

    @classmethod
    def from_bytes(cls, data: bytes) -> QueryTable:
        """ValueError (one line) for bytes that are not a table of this format."""
        try:
            (n,) = struct.unpack_from("<I", data, 0)
            header = json.loads(data[4:4 + n])
            rows, dim = int(header["rows"]), int(header["dim"])
            if header.get("format") != FORMAT or not (0 < rows <= 1 << 20 and 0 < dim <= 4096):
                raise ValueError
            at = 4 + n + (-n % 4)
            scales = np.frombuffer(data, "<f4", rows, at).astype(np.float32)
            at += 4 * rows
            bias = np.frombuffer(data, "<f4", dim, at).astype(np.float32)
            at += 4 * dim
            table = np.frombuffer(data, np.int8, rows * dim, at).reshape(rows, dim)
            if at + rows * dim + (-(rows * dim) % 4) != len(data):
                raise ValueError
        except (ValueError, KeyError, TypeError, struct.error):
            raise ValueError("[sphinx-rag] not a query table of this sphinx-rag version") from None
        return cls(table, scales, bias, header)


def distill(paragraphs: Sequence[str], vocab_size: int, tokenize: Callable[[list[str]], list[list[int]]],
            embed: Callable[[list[str]], np.ndarray], special_ids: Sequence[int], *, queries: int = QUERIES,
            per_paragraph: int = PER_PARAGRAPH, ridge: float = RIDGE, note=print) -> QueryTable:
    """Fit the table: a ridge regression from the idf-weighted bags of general
    pseudo-queries (``encoder_fit.pseudo_queries`` over ``paragraphs``) to the model's
    embeddings of them (``embed``), over the whole vocabulary and the model's full
    dimension (a site's fit projects it onto its own main directions)."""
    from .encoder_fit import CG_ITERATIONS, _feature_matrix, _quantize_rows, _ridge_cg, pseudo_queries

    special = {int(s) for s in special_ids}
    pairs = pseudo_queries(paragraphs, [""] * len(paragraphs), queries, per_chunk=per_paragraph)
    texts = [q for q, _ in pairs]
    df = np.zeros(vocab_size, dtype=np.int64)
    for ids in tokenize(list(paragraphs)):
        df[sorted(set(ids) - special)] += 1
    n = len(paragraphs)
    idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
    query_ids = [[t for t in ids if t not in special] for ids in tokenize(texts)]
    note(f"[sphinx-rag] query table: {len(texts):,} pseudo-queries from {n:,} paragraphs")
    targets = np.asarray(embed(texts), dtype=np.float64)
    x = _feature_matrix(np.arange(vocab_size, dtype=np.int64), idf, query_ids)
    started = time.monotonic()
    note(f"[sphinx-rag] query table: fitting a ridge regression ({vocab_size:,} tokens x {targets.shape[1]} "
         f"dimensions, at most {CG_ITERATIONS} iterations; a line each {CG_ITERATIONS // 10})")

    def step(done: int, most: int):
        if done % max(1, most // 10) == 0:
            spent = time.monotonic() - started
            note(f"[sphinx-rag] query table: ridge fit, iteration {done}/{most}, {spent / 60:.1f} min so far, "
                 f"at most {spent * (most - done) / done / 60:.1f} min left")

    w = _ridge_cg(x, targets, ridge, step)
    note(f"[sphinx-rag] query table: ridge fit in {(time.monotonic() - started) / 60:.1f} min")
    rows, scales = _quantize_rows(w[:vocab_size], 127)
    return QueryTable(rows, scales, w[vocab_size].astype(np.float32),
                      {"queries": len(texts), "paragraphs": n, "ridge": ridge})
