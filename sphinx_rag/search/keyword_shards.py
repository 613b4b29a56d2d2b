"""The keyword index as stored: term shards (postings) and near shards (the vocabulary by length).

``term_shards`` stores, per term, its document frequency and its postings: chunk ids
as varint gaps and impacts as one byte each with a float32 scale per term. A term in
very many chunks keeps its highest-impact postings (its head) that way, and the rest
(its tail) as chunk ids with a 4-bit impact level each (sixteen float32 level values
per term), so that a query's download grows slowly with the corpus while coverage
stays exact and the ranking close to exact scoring (``format.Layout`` sets the sizes;
``benchmarks/keyword_overlap.py``). ``read_term_shard`` gives them back as
``keyword_scoring.Postings``.

The vocabulary for typo matching lives in "near" shards grouped by term length, since a
near term differs in length by at most the distance (``near_lengths``).
``js/src/search/bm25.js`` decodes both.
"""

from __future__ import annotations

import json
import zlib

import numpy as np

from .bm25 import BM25Index
from .keyword_scoring import Postings, max_typo_distance
from .shards import dumps, pack, read_varints, unpack, varints

__all__ = ["TAIL_LEVELS", "stored_postings", "stored_tail", "impact_levels", "code_bits", "pack_codes",
           "unpack_codes", "term_shards", "read_term_shard", "term_length", "near_shards", "read_near_shard",
           "near_lengths"]


def stored_postings(index: BM25Index, tid: int, head: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(chunk ids, impact bytes, float32 scale) of one term's head as stored, quantized."""
    lo, hi = int(index.offsets[tid]), int(index.offsets[tid + 1])
    docs, impacts = index.docs[lo:hi].astype(np.int64), index.impacts[lo:hi].astype(np.float64)
    if len(docs) > head:  # highest impacts first, ties to the lower chunk id
        keep = np.sort(np.lexsort((docs, -impacts))[:head])
        docs, impacts = docs[keep], impacts[keep]
    scale = float(_impact_scales(np.float64(impacts.max() if len(impacts) else 0.0)))
    return docs, _impact_bytes(impacts, scale), scale


def _impact_scales(peaks: np.ndarray) -> np.ndarray:
    """float32 scale of each head (its peak impact / 255), as float64."""
    return np.where(peaks > 0, (peaks / 255.0).astype(np.float32), np.float32(1e-6)).astype(np.float64)


def _impact_bytes(impacts: np.ndarray, scales) -> np.ndarray:
    """Impacts as bytes of their scale; 1 at least: the chunk still has the term (coverage).
    BM25Okapi's idf floor can make a term's impacts <= 0 in a tiny corpus where it is in
    most chunks: those store 1 * 1e-6."""
    return np.clip(np.rint(np.maximum(impacts, 0) / scales), 1, 255).astype(np.uint8)


TAIL_LEVELS = 16  # impact levels of a tail posting (4 bits); readers count a term's level values


def code_bits(levels: int) -> int:
    """Bits of one level code when there are ``levels`` levels."""
    return max(1, (levels - 1).bit_length())


def impact_levels(impacts: np.ndarray, levels: int, iterations: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """(codes, level values): 1-D k-means (Lloyd-Max) of the impacts, started at their
    quantiles. Levels placed where the impacts are dense keep the order of the many
    similar tail postings far better than equal ranges do (keyword top-100 overlap with
    exact scoring on the 200k benchmark index: see eval/RESULTS.md)."""
    centers = np.quantile(impacts, (np.arange(levels) + 0.5) / levels)
    for _ in range(iterations + 1):
        codes = np.searchsorted((centers[1:] + centers[:-1]) / 2, impacts)
        counts = np.bincount(codes, minlength=levels)
        means = np.bincount(codes, weights=impacts, minlength=levels) / np.maximum(counts, 1)
        means = np.where(counts > 0, means, centers)
        if np.array_equal(means, centers):
            break
        centers = means
    return codes.astype(np.uint8), means


def stored_tail(index: BM25Index, tid: int, head: int) -> tuple[np.ndarray, np.ndarray, list[float]] | None:
    """(chunk ids, level codes, float32 level values) of the postings ``stored_postings``
    leaves out, or None. Each posting stores the code of the nearest of TAIL_LEVELS
    levels (``impact_levels``); each level's value is the mean impact of its postings."""
    lo, hi = int(index.offsets[tid]), int(index.offsets[tid + 1])
    if hi - lo <= head:
        return None
    docs, impacts = index.docs[lo:hi].astype(np.int64), index.impacts[lo:hi].astype(np.float64)
    tail = np.ones(len(docs), dtype=bool)
    tail[np.lexsort((docs, -impacts))[:head]] = False
    docs, impacts = docs[tail], np.maximum(impacts[tail], 0.0)
    codes, values = impact_levels(impacts, TAIL_LEVELS)
    return docs, codes, [float(np.float32(v)) for v in values]


def pack_codes(codes: np.ndarray, bits: int) -> bytes:
    """``bits``-bit codes as one little-endian bit stream: code j in bits [j*bits, (j+1)*bits)."""
    stream = (codes.astype(np.uint8)[:, None] >> np.arange(bits, dtype=np.uint8)) & 1
    return np.packbits(stream.reshape(-1), bitorder="little").tobytes()


def unpack_codes(body: bytes, offset: int, count: int, bits: int) -> tuple[np.ndarray, int]:
    """(codes, offset after them): what ``pack_codes`` wrote at ``offset``."""
    size = -(-count * bits // 8)
    stream = np.unpackbits(np.frombuffer(body, dtype=np.uint8, count=size, offset=offset), bitorder="little")
    weights = (1 << np.arange(bits)).astype(np.int64)
    return stream[:count * bits].reshape(count, bits).astype(np.int64) @ weights, offset + size


def term_shards(index: BM25Index, shard_bytes: int, head: int) -> list[tuple[str, bytes]]:
    """(first term, payload) of each term shard, in vocabulary order.

    Shards hold about ``shard_bytes`` payload bytes, cut where the content says so
    (after a term whose hash ends in 3 zero bits, once half the size is reached), so
    that a new or removed term changes its own shard, not the cut of every later one.
    A term in more than ``head`` chunks keeps its ``head`` highest-impact postings as
    its head, the others as its tail (``stored_tail``).

    Payload: header ``{terms, df, count, scale}`` (and ``tails``: ``[position in the
    shard, tail count, level values...]`` of each term with a tail) then the varint gaps
    of every term's head chunk ids, every term's head impact bytes, the varint gaps of
    every tail, and every tail's level codes (``pack_codes``, ``code_bits`` of its level
    count; see shards.pack). A reader that
    knows no tails reads the heads alone.
    """
    shards: list[tuple[str, bytes]] = []
    batch: list[tuple[str, int, np.ndarray, np.ndarray, float, tuple | None]] = []
    size = 0
    heads = _stored_heads(index, head)

    def flush():
        nonlocal size
        gaps = varints(np.concatenate([_gaps(docs) for _, _, docs, _, _, _ in batch]))
        header = {"terms": [t for t, *_ in batch], "df": [b[1] for b in batch],
                  "count": [len(b[2]) for b in batch], "scale": [b[4] for b in batch]}
        tails = [(i, b[5]) for i, b in enumerate(batch) if b[5] is not None]
        body = gaps + b"".join(b[3].tobytes() for b in batch)
        if tails:
            header["tails"] = [[i, len(docs), *values] for i, (docs, _, values) in tails]
            body += varints(np.concatenate([_gaps(docs) for _, (docs, _, _) in tails]))
            body += b"".join(pack_codes(codes, code_bits(len(values))) for _, (_, codes, values) in tails)
        shards.append((batch[0][0], pack(header, body)))
        batch.clear()
        size = 0

    df = np.diff(index.offsets.astype(np.int64)).tolist()
    for tid, term in enumerate(index.vocab):
        docs, q, scale = heads[tid]
        tail = stored_tail(index, tid, head) if df[tid] > head else None
        batch.append((term, df[tid], docs, q, scale, tail))
        size += len(term.encode("utf-8")) + 8 + 2 * len(docs) + (0 if tail is None else len(tail[0]) + 40)
        if size >= 2 * shard_bytes or (size >= shard_bytes // 2 and zlib.crc32(term.encode("utf-8")) % 8 == 0):
            flush()
    if batch:
        flush()
    return shards


def _gaps(docs: np.ndarray) -> np.ndarray:
    """Ascending chunk ids as the first id, then the difference to the previous one."""
    out = docs.copy()
    out[1:] -= docs[:-1]
    return out


def _stored_heads(index: BM25Index, head: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """``stored_postings`` of every term: of all the terms in at most ``head`` chunks at
    once (the same float64 operations, so the same bytes), of the others one by one."""
    if not index.vocab:
        return []
    starts, ends = index.offsets[:-1].astype(np.int64), index.offsets[1:].astype(np.int64)
    docs, impacts = index.docs.astype(np.int64), index.impacts.astype(np.float64)
    scale = _impact_scales(np.maximum.reduceat(impacts, starts))  # every term has a posting: no empty range
    q = _impact_bytes(impacts, np.repeat(scale, ends - starts))
    return [(docs[lo:hi], q[lo:hi], float(scale[t])) if hi - lo <= head else stored_postings(index, t, head)
            for t, (lo, hi) in enumerate(zip(starts.tolist(), ends.tolist()))]


def read_term_shard(payload: bytes, n_chunks: int | None = None) -> dict[str, Postings]:
    """The postings of a term shard. ``n_chunks``: the index's chunk count, which every
    chunk id must be below (a reader of another site's index gives it: ValueError else)."""
    header, body = unpack(payload)
    if not isinstance(header, dict):
        raise ValueError("a term shard without its header")
    terms, dfs, counts, scales = (header.get(k) for k in ("terms", "df", "count", "scale"))
    tails = header.get("tails", [])
    if not (_list_of(terms, str) and _list_of(dfs, int) and _list_of(counts, int) and _list_of(scales, (int, float))
            and len(terms) == len(dfs) == len(counts) == len(scales) and isinstance(tails, list)
            and all(c >= 0 for c in counts) and all(d >= 0 for d in dfs)):
        raise ValueError("a term shard whose header is not terms, df, count and scale of equal length")
    total = sum(counts)
    if total > len(body):  # a varint and an impact byte each, at least
        raise ValueError(f"a term shard promising {total:,} postings in {len(body):,} bytes")
    for t in tails:
        if not (_list_of(t, (int, float)) and len(t) >= 3 and isinstance(t[0], int) and isinstance(t[1], int)
                and 0 <= t[0] < len(terms) and 0 <= t[1] <= len(body) * 8 and len(t) - 2 <= 256):
            raise ValueError("a term shard with a tail that is not [position, count, levels...]")
    if sum(t[1] for t in tails) > len(body):
        raise ValueError("a term shard whose tails hold more postings than its bytes")
    gaps, offset = read_varints(body, total)
    q = np.frombuffer(body, dtype=np.uint8, count=total, offset=offset).astype(np.float64)
    out, start = {}, 0
    for term, df, count, scale in zip(terms, dfs, counts, scales):
        docs = np.cumsum(np.asarray(gaps[start:start + count], dtype=np.int64))
        out[term] = Postings(term, df, docs, q[start:start + count] * scale)
        start += count
    tail_gaps, offset = read_varints(body, sum(t[1] for t in tails), offset + total)
    start = 0
    for position, count, *values in tails:
        codes, offset = unpack_codes(body, offset, count, code_bits(len(values)))
        tail_docs = np.cumsum(np.asarray(tail_gaps[start:start + count], dtype=np.int64))
        start += count
        postings = out[terms[position]]
        docs = np.concatenate([postings.docs, tail_docs])
        order = np.argsort(docs, kind="stable")
        impacts = np.concatenate([postings.impacts, np.asarray(values, dtype=np.float64)[codes]])
        out[postings.term] = Postings(postings.term, postings.df, docs[order], impacts[order])
    if n_chunks is not None:
        for postings in out.values():
            if len(postings.docs) and not (0 <= int(postings.docs[0]) and int(postings.docs[-1]) < n_chunks):
                raise ValueError(f"a term shard naming chunks outside 0..{n_chunks - 1}")
            if not np.all(np.isfinite(postings.impacts)):
                raise ValueError("a term shard with impacts that are not numbers")
    return out


def _list_of(value, types) -> bool:
    return isinstance(value, list) and all(isinstance(v, types) and not isinstance(v, bool) for v in value)


def term_length(term: str) -> int:
    return len(term)  # code points, as the edit distance counts them


def near_shards(index: BM25Index, shard_terms: int) -> list[tuple[int, int, bytes]]:
    """(shortest, longest term length, payload) of each near shard.

    The vocabulary with its document frequencies, sorted by (length, term): a typo
    lookup for a term of length L and distance d reads only lengths L-d..L+d.
    """
    terms = sorted(index.vocab, key=lambda t: (term_length(t), t))
    out = []
    for start in range(0, len(terms), shard_terms):
        part = terms[start:start + shard_terms]
        payload = dumps({"terms": part, "df": [index.doc_freq(t) for t in part]})
        out.append((term_length(part[0]), term_length(part[-1]), payload))
    return out


def read_near_shard(payload: bytes) -> list[tuple[str, int]]:
    data = json.loads(payload.decode("utf-8"))
    terms, dfs = (data.get("terms"), data.get("df")) if isinstance(data, dict) else (None, None)
    if not (_list_of(terms, str) and _list_of(dfs, int) and len(terms) == len(dfs)):
        raise ValueError("a near shard that is not terms and df of equal length")
    return list(zip(terms, dfs))


def near_lengths(term: str) -> tuple[int, int] | None:
    """The term lengths a typo lookup of ``term`` must read, or None (no typo matching)."""
    limit = max_typo_distance(term)
    if limit == 0:
        return None
    return max(4, term_length(term) - limit), term_length(term) + limit
