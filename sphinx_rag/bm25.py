"""BM25 with precomputed impacts: built once, stored in term shards, summed per query.

Build time: ``build_index`` gives every (term, chunk) pair its final BM25Okapi
contribution (scores equal rank-bm25's). ``term_shards`` then stores, per term, its
document frequency and its postings: chunk ids as varint gaps and impacts as one byte
each with a float32 scale per term. A term in very many chunks keeps its
highest-impact postings (its head) that way, and the rest (its tail) as chunk ids with
a 4-bit impact level each (sixteen float32 level values per term), so that a query's
download grows slowly with the corpus while coverage stays exact and the ranking close
to exact scoring (``assets.Layout`` sets the sizes; ``benchmarks/keyword_overlap.py``).

Query time (here and in ``js/src/search/bm25.js``): ``keyword_scores`` sums the
postings of the query's terms, times query-term coverage. A query term missing from
the vocabulary is matched to vocabulary terms within a small Damerau-Levenshtein
distance (typo tolerance), weighted down: the vocabulary for that lives in "near"
shards grouped by term length, since a near term differs in length by at most the
distance.
"""

from __future__ import annotations

import json
import math
import zlib
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .lexical import tokenize
from .shards import dumps, pack, read_varints, unpack, varints

__all__ = ["BM25Index", "Postings", "build_index", "document_tokens", "keyword_scores", "bm25_scores", "expand_tokens",
           "edit_distance", "typo_candidates", "term_shards", "read_term_shard", "near_shards", "read_near_shard",
           "near_lengths"]

K1, B, EPSILON = 1.5, 0.75, 0.25  # rank-bm25's BM25Okapi defaults
MAX_TYPO_EXPANSIONS = 3
HEADER_BOOST = 2  # a chunk's first line (heading path / owner) counts this many times


def document_tokens(text: str) -> list[str]:
    """BM25 tokens of a chunk; its header line is repeated (a simple BM25F)."""
    header = text.split("\n", 1)[0]
    return tokenize(text) + tokenize(header) * (HEADER_BOOST - 1)


@dataclass
class Postings:
    """One term's postings as a query reads them."""

    term: str
    df: int  # chunks that contain the term (all of them, also when the head is cut)
    docs: np.ndarray  # int64 chunk ids, ascending
    impacts: np.ndarray  # float64 BM25 contribution to each of those chunks


#: Expansion of one query token: [(postings, weight)]; a typo maps to near terms.
Expansion = list[tuple[Postings, float]]


def keyword_scores(n_docs: int, tokens: list[str], expansions: dict[str, Expansion]) -> np.ndarray:
    """BM25 times coverage: the share of the query's distinct known terms a chunk has.

    ``expansions`` maps each distinct token to its postings (empty: unknown). Coverage
    is Lucene's classic "coord" factor. It separates a chunk that matches every part
    of "strategy parameter of a dummy classifier" from a longer one matching fewer
    (demo docs: fused MRR@10 0.772 -> 0.789; see eval/RESULTS.md). Sums run in query
    order, as in JS: both give bit-identical float64 scores.
    """
    known = [ex for ex in (expansions[t] for t in dict.fromkeys(tokens)) if ex]
    hits = np.zeros(n_docs, dtype=np.float64)
    if not known:
        return hits
    for ex in known:
        has = np.zeros(n_docs, dtype=bool)
        for postings, _ in ex:
            has[postings.docs] = True
        hits += has
    return bm25_scores(n_docs, tokens, expansions) * (hits / len(known))


def bm25_scores(n_docs: int, tokens: list[str], expansions: dict[str, Expansion]) -> np.ndarray:
    """Plain BM25: for each query token (repeats count), the weighted impacts of its terms."""
    out = np.zeros(n_docs, dtype=np.float64)
    for token in tokens:
        for postings, weight in expansions[token]:
            out[postings.docs] += weight * postings.impacts
    return out


def expand_tokens(tokens: list[str], lookup, near) -> dict[str, Expansion]:
    """Each distinct token -> its postings, or those of near terms if it is unknown.

    ``lookup(term)`` gives a term's Postings or None; ``near(term)`` gives the
    vocabulary terms that could be within typo distance, with their df.
    """
    out: dict[str, Expansion] = {}
    for token in dict.fromkeys(tokens):
        postings = lookup(token)
        if postings is not None:
            out[token] = [(postings, 1.0)]
            continue
        vocab = dict(near(token))
        out[token] = [(lookup(term), 1.0 / (1.0 + dist))
                      for dist, term in typo_candidates(token, sorted(vocab), vocab.__getitem__)]
    return out


@dataclass
class BM25Index:
    """The whole index in memory (build time): ``vocab[t]`` is in ``docs[offsets[t]:offsets[t+1]]``."""

    vocab: list[str]  # sorted
    offsets: np.ndarray  # uint32, len(vocab) + 1
    docs: np.ndarray  # uint32 chunk indices
    impacts: np.ndarray  # float32 BM25 contribution of the term to that chunk
    n_docs: int
    avgdl: float
    k1: float = K1
    b: float = B
    epsilon: float = EPSILON

    def __post_init__(self):
        self._term_ids = {t: i for i, t in enumerate(self.vocab)}

    def doc_freq(self, term: str) -> int:
        tid = self._term_ids[term]
        return int(self.offsets[tid + 1] - self.offsets[tid])

    def postings(self, term: str) -> Postings | None:
        """Exact (float32 impacts, no head cut): what the stored shards approximate."""
        tid = self._term_ids.get(term)
        if tid is None:
            return None
        lo, hi = self.offsets[tid], self.offsets[tid + 1]
        return Postings(term, int(hi - lo), self.docs[lo:hi].astype(np.int64), self.impacts[lo:hi].astype(np.float64))

    def scores(self, tokens: list[str]) -> np.ndarray:
        """BM25 score of every chunk for the (already tokenized) query (typos expanded)."""
        near = lambda token: [(t, self.doc_freq(t)) for t in self.vocab]  # noqa: E731
        return bm25_scores(self.n_docs, tokens, expand_tokens(tokens, self.postings, near))


def build_index(corpus: list[list[str]], *, k1=K1, b=B, epsilon=EPSILON) -> BM25Index:
    """Index tokenized chunks exactly as ``rank_bm25.BM25Okapi(corpus)`` scores them.

    Terms are counted per chunk in Python, the impacts computed by numpy with the same
    float64 operations in the same order (the same bits as a loop over the postings, in
    a third of the time: this runs on every incremental build).
    """
    n_docs = len(corpus)
    lengths = [len(doc) for doc in corpus]
    avgdl = sum(lengths) / n_docs if n_docs else 0.0
    term_ids: dict[str, int] = {}  # in order of first appearance: the order the IDF mean sums in
    ids: list[int] = []
    tfs: list[int] = []
    distinct: list[int] = []
    for doc in corpus:
        counts = Counter(doc)
        for term in counts:
            if term not in term_ids:
                term_ids[term] = len(term_ids)
        ids += map(term_ids.__getitem__, counts)
        tfs += counts.values()
        distinct.append(len(counts))
    term_of = np.asarray(ids, dtype=np.int64)
    df = np.bincount(term_of, minlength=len(term_ids))

    # IDF as BM25Okapi: negative IDFs floored to epsilon * mean IDF.
    idf = [math.log(n_docs - f + 0.5) - math.log(f + 0.5) for f in df.tolist()]
    floor = epsilon * (sum(idf) / len(idf)) if idf else 0.0
    idf = np.asarray([v if v >= 0 else floor for v in idf], dtype=np.float64)

    terms = list(term_ids)
    order = sorted(range(len(terms)), key=terms.__getitem__)
    rank = np.empty(len(terms), dtype=np.int64)
    rank[order] = np.arange(len(terms))
    by_term = np.argsort(rank[term_of], kind="stable")  # postings by term, chunks ascending within
    term_of = term_of[by_term]
    tf = np.asarray(tfs, dtype=np.float64)[by_term]
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), distinct)[by_term]
    norm = tf + k1 * (1 - b + b * np.asarray(lengths, dtype=np.int64)[docs] / avgdl)
    offsets = np.zeros(len(terms) + 1, dtype=np.uint32)
    np.cumsum(df[order], out=offsets[1:])
    return BM25Index(
        vocab=[terms[i] for i in order],
        offsets=offsets,
        docs=docs.astype(np.uint32),
        impacts=(idf[term_of] * tf * (k1 + 1) / norm).astype(np.float32),
        n_docs=n_docs,
        avgdl=avgdl,
        k1=k1,
        b=b,
        epsilon=epsilon,
    )


def max_typo_distance(term: str) -> int:
    """Short terms get no typo matching (too many false friends)."""
    if len(term) < 4:
        return 0
    return 1 if len(term) < 8 else 2


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance (transpositions cost 1), capped at limit+1."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        if best > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[len(b)]


def typo_candidates(term: str, vocab: list[str], doc_freq) -> list[tuple[int, str]]:
    """Up to MAX_TYPO_EXPANSIONS (distance, vocab term), nearest then most frequent."""
    limit = max_typo_distance(term)
    if limit == 0:
        return []
    found = []
    for cand in vocab:
        if abs(len(cand) - len(term)) > limit or len(cand) < 4:
            continue
        dist = edit_distance(term, cand, limit)
        if dist <= limit:
            found.append((dist, -doc_freq(cand), cand))
    found.sort()
    return [(dist, cand) for dist, _, cand in found[:MAX_TYPO_EXPANSIONS]]


# -- storage: term shards and near shards ------------------------------------------------

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


def read_term_shard(payload: bytes) -> dict[str, Postings]:
    header, body = unpack(payload)
    total = sum(header["count"])
    gaps, offset = read_varints(body, total)
    q = np.frombuffer(body, dtype=np.uint8, count=total, offset=offset).astype(np.float64)
    out, start = {}, 0
    for term, df, count, scale in zip(header["terms"], header["df"], header["count"], header["scale"]):
        docs = np.cumsum(np.asarray(gaps[start:start + count], dtype=np.int64))
        out[term] = Postings(term, df, docs, q[start:start + count] * scale)
        start += count
    tails = header.get("tails", [])
    tail_gaps, offset = read_varints(body, sum(t[1] for t in tails), offset + total)
    start = 0
    for position, count, *values in tails:
        codes, offset = unpack_codes(body, offset, count, code_bits(len(values)))
        tail_docs = np.cumsum(np.asarray(tail_gaps[start:start + count], dtype=np.int64))
        start += count
        postings = out[header["terms"][position]]
        docs = np.concatenate([postings.docs, tail_docs])
        order = np.argsort(docs, kind="stable")
        impacts = np.concatenate([postings.impacts, np.asarray(values, dtype=np.float64)[codes]])
        out[postings.term] = Postings(postings.term, postings.df, docs[order], impacts[order])
    return out


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
    return list(zip(data["terms"], data["df"]))


def near_lengths(term: str) -> tuple[int, int] | None:
    """The term lengths a typo lookup of ``term`` must read, or None (no typo matching)."""
    limit = max_typo_distance(term)
    if limit == 0:
        return None
    return max(4, term_length(term) - limit), term_length(term) + limit
