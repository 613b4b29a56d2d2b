"""The static query encoder: semantic queries without the model (no wasm, no onnxruntime).

Documents keep their MiniLM vectors; only the *query* side is made cheap. A query
becomes an idf-weighted bag of its WordPiece ids, unit length, and a linear map sends
it into the model's space::

    x = normalize(sum of idf[t] over the query's known tokens t)   (plus a bias feature)
    q = normalize((x @ W) @ P.T)      W: rows x rank (int4)   P.T: rank x dim (int8)

``P`` spans the main directions of the corpus's own chunk vectors; ``W`` and ``P`` are
fitted at build time (``index/encoder_fit.py``).

``encode`` here and ``js/src/search/static_encoder.js`` compute bit-identical vectors:
float64, tokens accumulated in query order, each sum over dimensions in index order.

The asset (one hashed binary, ``encoder-<h>.bin``) carries everything a browser
needs, the model's vocab.txt included (WordPiece is greedy longest-match: the full
vocabulary is needed to cut words exactly as the model does)::

    u32 header length | header JSON | vocab.txt | u32 token ids | f32 idf
    | f32 row scales | int4 W (two per byte, low nibble first) | f32 P scales | int8 P.T

(each section padded to 4 bytes).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["StaticEncoder", "FORMAT"]

FORMAT = 1  # of the asset below


@dataclass
class StaticEncoder:
    token_ids: np.ndarray  # (rows,) int: WordPiece id of each row, ascending
    idf: np.ndarray  # (rows,) float32
    weights: np.ndarray  # (rows + 1, rank) int8 in [-7, 7]; the last row is the bias
    row_scales: np.ndarray  # (rows + 1,) float32
    projection: np.ndarray  # (rank, dim) int8
    projection_scales: np.ndarray  # (rank,) float32
    vocab: bytes  # the model's vocab.txt
    special_ids: tuple[int, ...] = ()
    max_seq_length: int = 256
    lowercase: bool = True  # the model's tokenizer lowercases (and strips accents)

    def __post_init__(self):
        self._tokenizer = None

    @property
    def rank(self) -> int:
        return int(self.weights.shape[1])

    @property
    def dim(self) -> int:
        return int(self.projection.shape[1])

    def features(self, ids: Sequence[int]) -> list[tuple[int, float]]:
        """(row, idf) of each known token of the query, in query order."""
        return _features(self.token_ids, self.idf, ids)

    def token_ids_of(self, text: str) -> list[int]:
        """WordPiece ids of ``text`` exactly as the model's tokenizer cuts it (built from
        vocab.txt alone: a static site ships no tokenizer.json)."""
        if self._tokenizer is None:
            from tokenizers import BertWordPieceTokenizer

            vocab: dict[str, int] = {}
            for i, token in enumerate(self.vocab.decode("utf-8").splitlines()):
                vocab.setdefault(token, i)
            tok = BertWordPieceTokenizer(vocab, lowercase=self.lowercase, clean_text=True,
                                         handle_chinese_chars=True, strip_accents=None)
            tok.enable_truncation(self.max_seq_length)
            self._tokenizer = tok
        return self._tokenizer.encode(text).ids

    def encode(self, text: str) -> np.ndarray | None:
        """The query vector of ``text`` (None: no token of it is known)."""
        return self.encode_ids(self.token_ids_of(text))

    def encode_ids(self, ids: Sequence[int]) -> np.ndarray | None:
        """The query vector (float32, unit length), or None when no token is known."""
        feats = self.features([t for t in ids if t not in self.special_ids])
        if not feats:
            return None
        counts: dict[int, float] = {}
        for r, w in feats:
            counts[r] = counts.get(r, 0.0) + w
        norm = math.sqrt(sum(v * v for v in counts.values()))
        h = self.weights[-1].astype(np.float64) * float(self.row_scales[-1])  # bias
        for r, v in counts.items():
            h = h + self.weights[r].astype(np.float64) * (float(self.row_scales[r]) * (v / norm))
        q = np.zeros(self.dim, dtype=np.float64)
        for j in range(self.rank):
            q = q + self.projection[j].astype(np.float64) * (float(self.projection_scales[j]) * float(h[j]))
        length = math.sqrt(sum(float(x) * float(x) for x in q))
        if length == 0.0:
            return None
        return (q / length).astype(np.float32)

    # -- bytes -----------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        rows = len(self.token_ids)
        header = json.dumps({"rows": rows, "rank": self.rank, "dim": self.dim, "vocab_bytes": len(self.vocab),
                             "special_ids": list(self.special_ids), "max_seq_length": self.max_seq_length,
                             "lowercase": self.lowercase}, sort_keys=True).encode()
        packed = _pack_int4(self.weights)
        parts = [header, self.vocab, self.token_ids.astype("<u4").tobytes(), self.idf.astype("<f4").tobytes(),
                 self.row_scales.astype("<f4").tobytes(), packed, self.projection_scales.astype("<f4").tobytes(),
                 self.projection.astype(np.int8).tobytes()]
        return struct.pack("<I", len(header)) + b"".join(_pad4(p) for p in parts)

    @classmethod
    def from_bytes(cls, data: bytes) -> StaticEncoder:
        (n,) = struct.unpack_from("<I", data, 0)
        at = 4
        header = json.loads(data[at:at + n])
        at += _padded(n)
        rows, rank, dim = header["rows"], header["rank"], header["dim"]
        vocab = data[at:at + header["vocab_bytes"]]
        at += _padded(header["vocab_bytes"])

        def take(dtype, count):
            nonlocal at
            arr = np.frombuffer(data, dtype=dtype, count=count, offset=at)
            at += _padded(arr.nbytes)
            return arr

        token_ids = take("<u4", rows).astype(np.int64)
        idf = take("<f4", rows)
        row_scales = take("<f4", rows + 1)
        packed = take(np.uint8, (rows + 1) * rank // 2)
        projection_scales = take("<f4", rank)
        projection = take(np.int8, rank * dim).reshape(rank, dim)
        if at != len(data):
            raise ValueError(f"encoder asset of {len(data)} bytes, expected {at}")
        return cls(token_ids, idf, _unpack_int4(packed, rows + 1, rank), row_scales, projection, projection_scales,
                   bytes(vocab), tuple(header["special_ids"]), int(header["max_seq_length"]),
                   bool(header.get("lowercase", True)))


def _features(token_ids: np.ndarray, idf: np.ndarray, ids: Sequence[int]) -> list[tuple[int, float]]:
    rows = np.searchsorted(token_ids, np.asarray(ids, dtype=np.int64))
    out = []
    for t, r in zip(ids, rows.tolist()):
        if r < len(token_ids) and int(token_ids[r]) == t:
            out.append((r, float(idf[r])))
    return out


def _padded(n: int) -> int:
    return n + (-n % 4)


def _pad4(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def _pack_int4(w: np.ndarray) -> bytes:
    flat = (w.astype(np.int16).reshape(-1) & 0x0F).astype(np.uint8)
    return (flat[0::2] | (flat[1::2] << 4)).tobytes()


def _unpack_int4(packed: np.ndarray, rows: int, rank: int) -> np.ndarray:
    lo = (packed & 0x0F).astype(np.int8)
    hi = (packed >> 4).astype(np.int8)
    flat = np.empty(rows * rank, dtype=np.int8)
    flat[0::2], flat[1::2] = lo, hi
    return np.where(flat > 7, flat - 16, flat).astype(np.int8).reshape(rows, rank)
