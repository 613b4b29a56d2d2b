"""Fitting the static query encoder (``search/static_encoder.py`` is what it makes and how
a query is encoded with it).

``W`` is a ridge regression, fitted at build time on pseudo-queries cut from the chunks
(titles, sentences, random 3-15-word spans, deterministic: fixed seed), whose targets
are the model's own embeddings of those pseudo-queries (read from and added to the
embedding cache). Training samples at most ``MAX_QUERIES`` pseudo-queries, so its cost
stops growing with the corpus. ``P`` spans the main directions of the corpus's own chunk
vectors, so the map spends its rank where documents differ.

With the model's general query table (``query_table.py``, shipped with the default
model) as a ``prior``, the fit starts from the table's rows for the site's tokens and
corrects them from only ``PRIOR_QUERIES_PER_CHUNK`` pseudo-queries per chunk (a sixth
of the model calls; eval/RESULTS.md, "A general query table"); a site too small to fit
(``MIN_CHUNKS``) takes the table's rows as they are, in the model's own axes.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
from collections.abc import Callable, Sequence

import numpy as np

from ..search.static_encoder import StaticEncoder

__all__ = ["TrainingTooSmall", "pseudo_queries", "train_encoder", "MIN_CHUNKS", "PRIOR_QUERIES_PER_CHUNK",
           "PRIOR_RIDGE", "site_rows", "site_basis", "check_published", "SparseRows"]


SEED = 20261123
SAMPLING = 2  # how pseudo-queries are drawn (2: per chunk, from its own text; in the build's digest)
MAX_QUERIES = 16_000  # pseudo-queries a fit samples at most (cost stops growing here)
QUERIES_PER_CHUNK = 24  # demo: 4 per chunk gave fused MRR@10 0.689, 24 gave 0.754
MIN_CHUNKS = 50  # fewer chunks than this: too little text to fit a map (the model answers)
RANK = 128
RIDGE = 0.3  # ridge penalty (features are unit bags: a token's diagonal is about its query count)
CG_ITERATIONS = 60
MAX_ROWS = 12_000  # vocabulary rows kept at most (the most frequent tokens): the asset stays under 1 MB gzip
#: With a general query table as the prior: pseudo-queries per chunk (4: within 0.01 of 24
#: without a table on five corpora, fused and static alone) and the pull toward the table.
PRIOR_QUERIES_PER_CHUNK = 4
PRIOR_RIDGE = 1.0


class TrainingTooSmall(ValueError):
    """The corpus is too small to fit an encoder: the full model is used instead."""


_SENTENCE = re.compile(r"(?<=[.?!:;])\s+|\n+")
_WORD = re.compile(r"\S+")


def pseudo_queries(texts: Sequence[str], titles: Sequence[str], budget: int,
                   seed: int = SEED, per_chunk: int = QUERIES_PER_CHUNK) -> list[tuple[str, int]]:
    """Queries a reader might type, cut from the chunks, with the chunk each came from:
    each distinct title, then about the same number per chunk (sentences or random word
    spans) until ``budget``.

    A chunk's queries depend only on its own text (its random generator is seeded with
    the text's hash) and on the share per chunk, so an edit that adds or removes a chunk
    leaves the other chunks' queries as they were: their model vectors come from the
    embedding cache, and a rebuild does not embed thousands of pseudo-queries again.
    """
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for i, t in enumerate(titles):
        t = t.strip()
        if t and t not in seen and len(out) < budget // 4:
            seen.add(t)
            out.append((t, i))
    share = (budget - len(out)) / max(len(texts), 1)  # queries per chunk, on average
    for i, text in enumerate(texts):
        digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        extra = int.from_bytes(digest[8:16], "little") / 2.0 ** 64 < share - math.floor(share)
        wanted = min(math.floor(share) + extra, per_chunk)
        found = 0
        for _ in range(4 * wanted):
            if found >= wanted or len(out) >= budget:
                break
            query = _cut(text, rng)
            if query and query not in seen:
                seen.add(query)
                out.append((query, i))
                found += 1
    return out


def _cut(text: str, rng: np.random.Generator) -> str:
    """A sentence (at most 20 words) or a random span of 3-15 words of ``text``."""
    if rng.random() < 0.35:
        sentences = [s for s in _SENTENCE.split(text) if len(_WORD.findall(s)) >= 3]
        if sentences:
            words = _WORD.findall(sentences[int(rng.integers(len(sentences)))])
            return " ".join(words[:20])
    words = _WORD.findall(text)
    if len(words) < 3:
        return " ".join(words)
    size = int(rng.integers(3, min(15, len(words)) + 1))
    start = int(rng.integers(0, len(words) - size + 1))
    return " ".join(words[start:start + size])


def train_encoder(texts: Sequence[str], titles: Sequence[str], doc_vectors: np.ndarray,
                  tokenize: Callable[[list[str]], list[list[int]]],
                  embed: Callable[[list[str]], np.ndarray], vocab: bytes, special_ids: Sequence[int],
                  *, max_seq_length: int = 256, lowercase: bool = True, rank: int = RANK,
                  max_queries: int = MAX_QUERIES, queries_per_chunk: int | None = None, seed: int = SEED,
                  ridge: float | None = None, prior=None,
                  note: Callable[[str], None] | None = None) -> StaticEncoder:
    """Fit the encoder for a corpus.

    ``texts``/``titles``: the chunks (pseudo-queries are cut from them; idf comes from
    them); ``doc_vectors``: their float vectors (n, dim); ``tokenize``: texts -> WordPiece
    ids (the ``special_ids`` among them are dropped); ``embed``: texts -> unit model vectors (the targets).
    ``prior``: the model's general ``query_table.QueryTable`` (``_fit_toward``: then
    ``queries_per_chunk`` and ``ridge`` default to the prior's, and any corpus fits).
    """
    if prior is not None:
        return _fit_toward(prior, texts, doc_vectors, tokenize, embed, vocab, special_ids,
                           max_seq_length=max_seq_length, lowercase=lowercase, rank=rank, max_queries=max_queries,
                           queries_per_chunk=queries_per_chunk or PRIOR_QUERIES_PER_CHUNK, seed=seed,
                           ridge=PRIOR_RIDGE if ridge is None else ridge, note=note)
    queries_per_chunk = queries_per_chunk or QUERIES_PER_CHUNK
    ridge = RIDGE if ridge is None else ridge
    if len(texts) < MIN_CHUNKS:
        raise TrainingTooSmall(f"{len(texts)} chunks (at least {MIN_CHUNKS} are needed)")
    budget = min(max_queries, queries_per_chunk * len(texts))
    pairs = pseudo_queries(texts, titles, budget, seed, queries_per_chunk)
    queries = [q for q, _ in pairs]
    special = set(int(s) for s in special_ids)
    doc_ids = tokenize(list(texts))
    df: dict[int, int] = {}
    for ids in doc_ids:
        for t in set(ids) - special:
            df[t] = df.get(t, 0) + 1
    query_ids = [[t for t in ids if t not in special] for ids in tokenize(queries)]
    freq: dict[int, int] = {}
    for ids in query_ids:
        for t in ids:
            freq[t] = freq.get(t, 0) + 1
    kept = sorted(freq, key=lambda t: (-freq[t], t))[:MAX_ROWS]
    token_ids = np.array(sorted(kept), dtype=np.int64)
    n_docs = len(texts)
    idf = np.array([math.log(1.0 + (n_docs - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5)) for t in token_ids.tolist()],
                   dtype=np.float32)
    owner, rows = _known_tokens(token_ids, query_ids)
    keep = np.flatnonzero(np.bincount(owner, minlength=len(query_ids))).tolist()  # queries with a known token
    if note:
        note(f"[sphinx-rag] static query encoder: {len(keep)} pseudo-queries, {len(token_ids)} tokens, rank {rank}")
    docs = np.asarray(doc_vectors, dtype=np.float64)
    targets = embed([queries[i] for i in keep])
    x = _feature_matrix(token_ids, idf, [query_ids[i] for i in keep])

    rank = min(rank, *docs.shape) // 2 * 2  # even: two int4 weights per byte
    basis = _main_directions(docs, rank)  # (dim, rank): the corpus's main directions
    w = _ridge_cg(x, targets.astype(np.float64) @ basis, ridge)
    weights, row_scales = _quantize_rows(w, 7)
    projection, projection_scales = _quantize_rows(basis.T, 127)
    return StaticEncoder(token_ids, idf, weights, row_scales, projection, projection_scales, vocab,
                         tuple(sorted(special)), max_seq_length, lowercase)


def _fit_toward(prior, texts: Sequence[str], doc_vectors: np.ndarray,
                tokenize: Callable[[list[str]], list[list[int]]], embed: Callable[[list[str]], np.ndarray],
                vocab: bytes, special_ids: Sequence[int], *, max_seq_length: int, lowercase: bool, rank: int,
                max_queries: int, queries_per_chunk: int, seed: int, ridge: float,
                note: Callable[[str], None] | None) -> StaticEncoder:
    """The encoder as the table's rows for the site's tokens (``site_rows``), projected
    onto the corpus's main directions (``site_basis``), plus a ridge correction fitted on
    the site's own pseudo-queries (none below ``MIN_CHUNKS``)."""
    special = {int(s) for s in special_ids}
    token_ids, idf = site_rows(texts, tokenize, special)
    basis = site_basis(doc_vectors, rank, prior.dim)
    w = prior.vectors(token_ids) @ basis
    budget = min(max_queries, queries_per_chunk * len(texts)) if len(texts) >= MIN_CHUNKS else 0
    queries = [q for q, _ in pseudo_queries(texts, [""] * len(texts), budget, seed, queries_per_chunk)] if budget else []
    if queries:
        if note:
            note(f"[sphinx-rag] static query encoder: the query table's {len(token_ids)} tokens, corrected on "
                 f"{len(queries)} pseudo-queries, rank {basis.shape[1]}")
        query_ids = [[t for t in ids if t not in special] for ids in tokenize(queries)]
        x = _feature_matrix(token_ids, idf, query_ids)
        targets = np.asarray(embed(queries), dtype=np.float64) @ basis
        w = w + _ridge_cg(x, targets - x @ w, ridge)
    return _encoder(token_ids, idf, w, basis, vocab, special, max_seq_length, lowercase)


def _encoder(token_ids, idf, w, basis, vocab, special, max_seq_length, lowercase) -> StaticEncoder:
    weights, row_scales = _quantize_rows(w, 7)
    projection, projection_scales = _quantize_rows(basis.T, 127)
    return StaticEncoder(token_ids, idf, weights, row_scales, projection, projection_scales, vocab,
                         tuple(sorted(special)), max_seq_length, lowercase)


def site_rows(texts: Sequence[str], tokenize: Callable[[list[str]], list[list[int]]],
              special: set[int]) -> tuple[np.ndarray, np.ndarray]:
    """The encoder's rows when it starts from a table: the ``MAX_ROWS`` tokens in most
    chunks (ascending ids), and their idf over the chunks."""
    df: dict[int, int] = {}
    for ids in tokenize(list(texts)):
        for t in set(ids) - special:
            df[t] = df.get(t, 0) + 1
    token_ids = np.array(sorted(sorted(df, key=lambda t: (-df[t], t))[:MAX_ROWS]), dtype=np.int64)
    n = len(texts)
    idf = np.array([math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in token_ids.tolist()],
                   dtype=np.float32)
    return token_ids, idf


def site_basis(doc_vectors: np.ndarray, rank: int, dim: int) -> np.ndarray:
    """The corpus's main directions (``_main_directions``), or with fewer than
    ``MIN_CHUNKS`` chunks, too few to say where they differ, the model's own axes."""
    docs = np.asarray(doc_vectors, dtype=np.float64)
    if len(docs) < MIN_CHUNKS:
        return np.eye(dim)
    return _main_directions(docs, min(rank, *docs.shape) // 2 * 2)


#: A published encoder checked before a warm start reuses it (``check_published``):
#: pseudo-queries of randomly chosen chunks, and how far below the table's own rows
#: their mean cosine to the model may be.
CHECK_QUERIES = 64
CHECK_SLACK = 0.01


def check_published(data: bytes, prior, texts: Sequence[str], doc_vectors: np.ndarray,
                    tokenize: Callable[[list[str]], list[list[int]]], embed: Callable[[list[str]], np.ndarray],
                    special_ids: Sequence[int], *, exact: bool = True, rank: int = RANK,
                    rng=None) -> str | None:
    """Why an encoder asset from another site is not one a fit toward ``prior`` on this
    corpus writes (None: it can be reused). ``exact`` (the site claims a fit on exactly
    this corpus): its rows, idf and projection must be this corpus's (deterministic, no
    model call). Always: on ``CHECK_QUERIES`` pseudo-queries of random chunks it must
    come as near the model's vectors as the table's rows alone do (within
    ``CHECK_SLACK`` of mean cosine): garbage or another site's weights do not."""
    import random

    try:
        encoder = StaticEncoder.from_bytes(data)
    except (ValueError, KeyError, TypeError, IndexError, OverflowError, AttributeError, struct.error):
        return "its file is not a static encoder"
    special = {int(s) for s in special_ids}
    token_ids, idf = site_rows(texts, tokenize, special)
    basis = site_basis(doc_vectors, rank, prior.dim)
    projection, projection_scales = _quantize_rows(basis.T, 127)
    if exact and not (np.array_equal(encoder.token_ids, token_ids) and np.array_equal(encoder.idf, idf)
                      and np.array_equal(encoder.projection, projection)
                      and np.array_equal(encoder.projection_scales, projection_scales)):
        return "its vocabulary, idf or projection is not this corpus's"
    if encoder.dim != prior.dim or encoder.vocab.count(b"\n") < int(encoder.token_ids.max(initial=0)):
        return "it is not an encoder of this model"
    rng = rng or random.SystemRandom()
    picked = rng.sample(range(len(texts)), min(CHECK_QUERIES, len(texts)))
    queries = [q for i in picked for q, _ in pseudo_queries([texts[i]], [""], 1, per_chunk=1)]
    if not queries:
        return None
    table = _encoder(token_ids, idf, prior.vectors(token_ids) @ basis, basis, encoder.vocab, special,
                     encoder.max_seq_length, encoder.lowercase)
    targets = np.asarray(embed(queries), dtype=np.float64)
    ids = tokenize(queries)

    def nearness(candidate: StaticEncoder) -> float:
        vectors = [candidate.encode_ids(q) for q in ids]
        return float(np.mean([0.0 if v is None else float(v @ t) for v, t in zip(vectors, targets)]))

    published, own = nearness(encoder), nearness(table)
    if published < own - CHECK_SLACK:
        return (f"on {len(queries)} sampled pseudo-queries it is farther from the model than the query table alone "
                f"(mean cosine {published:.3f} against {own:.3f})")
    return None


def _main_directions(docs: np.ndarray, rank: int) -> np.ndarray:
    """The ``rank`` right singular vectors of ``docs`` with the largest singular values,
    as columns: eigenvectors of the (dim x dim) Gram matrix, which costs a fraction of
    an SVD of the (chunks x dim) matrix. Each column's sign is fixed (largest entry
    positive) so the fit does not depend on the solver's choice."""
    values, vectors = np.linalg.eigh(docs.T @ docs)
    basis = vectors[:, np.argsort(-values, kind="stable")[:rank]]
    signs = np.sign(basis[np.abs(basis).argmax(axis=0), np.arange(basis.shape[1])])
    return basis * np.where(signs == 0, 1.0, signs)


def _known_tokens(token_ids: np.ndarray, query_ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(query, row) of each known token occurrence of the queries, in query order."""
    flat = np.concatenate([np.asarray(ids, dtype=np.int64) for ids in query_ids] or [np.zeros(0, np.int64)])
    owner = np.repeat(np.arange(len(query_ids)), [len(ids) for ids in query_ids])
    if not len(token_ids):
        return owner[:0], owner[:0]
    rows = np.minimum(np.searchsorted(token_ids, flat), len(token_ids) - 1)
    hit = token_ids[rows] == flat
    return owner[hit], rows[hit]


class SparseRows:
    """A sparse matrix in compressed rows, with the two products the fit needs (``x @ dense``,
    and ``x.T``): numpy only, so that installing sphinx-rag does not bring SciPy (143 MB).
    Products run over blocks of rows of about ``BLOCK_NONZEROS`` nonzeros, whose gathered
    rows stay in the CPU's cache (1,024: 3x faster than 262,144 here; SciPy's C loop is
    still about 5x faster, a second or two on a 16,000-query fit)."""

    BLOCK_NONZEROS = 1 << 10

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, shape: tuple[int, int]):
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, shape

    @classmethod
    def from_entries(cls, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]):
        """Entries (row, column, value) in any order; a repeated (row, column) is summed."""
        key = rows.astype(np.int64) * shape[1] + cols.astype(np.int64)
        unique, inverse = np.unique(key, return_inverse=True)
        data = np.bincount(inverse, weights=values, minlength=len(unique)).astype(np.float64)
        row_of = unique // shape[1]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(row_of, minlength=shape[0]))]).astype(np.int64)
        return cls(indptr, (unique % shape[1]).astype(np.int64), data, shape)

    def toarray(self) -> np.ndarray:
        out = np.zeros(self.shape, dtype=np.float64)
        out[np.repeat(np.arange(self.shape[0]), np.diff(self.indptr)), self.indices] = self.data
        return out

    @property
    def T(self) -> SparseRows:  # noqa: N802 (as numpy and scipy name it)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        return SparseRows.from_entries(self.indices, rows, self.data, (self.shape[1], self.shape[0]))

    def __matmul__(self, dense: np.ndarray) -> np.ndarray:
        out = np.zeros((self.shape[0], dense.shape[1]), dtype=np.float64)
        counts = np.diff(self.indptr)
        start = 0
        while start < self.shape[0]:  # blocks of about BLOCK_NONZEROS nonzeros, at least one row
            end = max(start + 1, int(np.searchsorted(self.indptr, self.indptr[start] + self.BLOCK_NONZEROS, "right")) - 1)
            end = min(end, self.shape[0])
            lo, hi = int(self.indptr[start]), int(self.indptr[end])
            filled = start + np.flatnonzero(counts[start:end])
            if hi > lo:
                products = np.take(dense, self.indices[lo:hi], axis=0)
                products *= self.data[lo:hi, None]
                out[filled] = np.add.reduceat(products, self.indptr[filled] - lo, axis=0)
            start = end
        return out


def _feature_matrix(token_ids: np.ndarray, idf: np.ndarray, query_ids: list[list[int]]) -> SparseRows:
    """Rows: unit idf bags of the queries (a repeated token's idf summed, as in
    ``encode_ids``), plus the bias feature (always 1)."""
    n, bias = len(query_ids), len(token_ids)
    owner, rows = _known_tokens(token_ids, query_ids)
    bags = SparseRows.from_entries(owner, rows, idf[rows].astype(np.float64), (n, bias))
    lengths = np.sqrt(np.bincount(np.repeat(np.arange(n), np.diff(bags.indptr)), bags.data ** 2, minlength=n))
    bags.data /= np.repeat(lengths, np.diff(bags.indptr))
    every = np.arange(n)
    return SparseRows.from_entries(np.concatenate([np.repeat(every, np.diff(bags.indptr)), every]),
                                   np.concatenate([bags.indices, np.full(n, bias)]),
                                   np.concatenate([bags.data, np.ones(n)]), (n, bias + 1))


def _ridge_cg(x, y: np.ndarray, ridge: float, step=None) -> np.ndarray:
    """argmin ||x w - y||^2 + ridge ||w||^2 by conjugate gradients (all columns at once;
    ``x`` sparse, so the normal matrix is never formed). ``step(i, CG_ITERATIONS)`` is
    called after iteration i (the general query table's fit takes minutes)."""
    xt = x.T

    def apply(w):
        return xt @ (x @ w) + ridge * w

    b = xt @ y
    w = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = (r * r).sum(axis=0)
    for iteration in range(1, CG_ITERATIONS + 1):
        if step is not None and iteration > 1:
            step(iteration - 1, CG_ITERATIONS)
        ap = apply(p)
        alpha = rs / np.maximum((p * ap).sum(axis=0), 1e-30)
        w += p * alpha
        r -= ap * alpha
        rs_new = (r * r).sum(axis=0)
        if float(rs_new.max()) < 1e-12 * float((b * b).sum(axis=0).max()):
            break
        p = r + p * (rs_new / np.maximum(rs, 1e-30))
        rs = rs_new
    return w


def _quantize_rows(m: np.ndarray, levels: int) -> tuple[np.ndarray, np.ndarray]:
    peak = np.abs(m).max(axis=1)
    scales = np.where(peak > 0, peak / levels, 1.0).astype(np.float32)
    q = np.clip(np.rint(m / scales[:, None]), -levels, levels).astype(np.int8)
    return q, scales
