"""The dense tier: int8 chunk vectors grouped by cluster, so a query reads only a few.

Build time: spherical k-means (deterministic: fixed seed, fixed iterations) finds
centroids (``format.Layout.cluster_size`` chunks each on average), stored as int8 in one
shard; each chunk then goes to the stored centroid nearest it, the one a query's probe
would rank first (``fit_clusters``). Each cluster is one binary shard. An incremental
build keeps the stored centroids and only assigns the chunks to them again
(``assign_clusters``). Small sites (``Layout.exact_up_to``) get a single cluster: every
query scores every vector.

Query time (here and in ``js/src/search/dense.js``): the clusters of the query's best
keyword hits are read first (a few: ``Layout.guide_hits``, ``Layout.guide_clusters``,
never past ``probe`` vectors; the cluster map shards say which cluster holds a chunk),
then the clusters whose
centroids are nearest the query, until ``probe`` vectors are covered; each of their
vectors is scored exactly (float64, dimensions summed in order, so both runtimes give
bit-identical scores), then clamped to [-1, 1]: a cosine of unit vectors is there, so
whatever scales another site's shards claim, no score reaches past it (a scale that is not a
finite number >= 0 is refused with its shard: ``read_cluster_shard``, ``read_centroid_shard``).
Vectors in clusters not probed score 0. The keyword hits steer
the probe because the fusion reads the dense ranking down to rank 100: a strong
keyword hit whose cluster is not near the query would otherwise get no dense rank at all.
"""

from __future__ import annotations

import struct

import numpy as np

from ..model.embed import quantize_vectors

__all__ = ["Cluster", "dense_scores", "scales_problem", "cluster_vectors", "fit_clusters", "assign_clusters",
           "cluster_shard", "read_cluster_shard", "centroid_shard", "read_centroid_shard",
           "cluster_map_shard", "read_cluster_map_shard", "probe_order"]

KMEANS_ITERATIONS = 12
SEED = 20261123


def dense_scores(query: np.ndarray, vectors_i8: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Cosine of the (normalized) query with each int8 vector times its scale, clamped to
    [-1, 1] (what a cosine can be: scales that claim more are another site's, not a match).

    float64, summed over the dimensions in order (as js/src/search/dense.js does), not
    by BLAS, whose summation order varies: both sides get bit-identical scores.
    """
    q = np.asarray(query, dtype=np.float32).astype(np.float64)
    acc = np.zeros(len(vectors_i8), dtype=np.float64)
    for j in range(vectors_i8.shape[1] if vectors_i8.ndim == 2 else 0):
        acc += vectors_i8[:, j] * q[j]
    return np.clip(acc * scales.astype(np.float64), -1.0, 1.0)


def scales_problem(scales: np.ndarray) -> str | None:
    """What is wrong with a shard's scales (None: each a finite number >= 0, as
    ``quantize_vectors`` writes them): Infinity or NaN would make every score one."""
    if not np.all(np.isfinite(scales)):
        return "scales that are not finite numbers"
    if len(scales) and float(scales.min()) < 0:
        return "negative scales"
    return None


# -- build ---------------------------------------------------------------------------------

def cluster_vectors(vectors_i8: np.ndarray, scales: np.ndarray, exact_up_to: int, cluster_size: int,
                    max_clusters: int = 1 << 30) -> list[np.ndarray]:
    """Chunk ids of each cluster (ascending ids; clusters in a deterministic order)."""
    n = len(vectors_i8)
    if n <= exact_up_to:
        return [np.arange(n, dtype=np.int64)]
    x = vectors_i8.astype(np.float32) * scales[:, None]
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    k = min(-(-n // cluster_size), max_clusters)
    rng = np.random.default_rng(SEED)
    centroids = x[np.sort(rng.choice(n, size=k, replace=False))]
    for _ in range(KMEANS_ITERATIONS):
        assign = _nearest(x, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assign, x)
        counts = np.bincount(assign, minlength=k)
        empty = counts == 0
        sums[empty] = centroids[empty]  # an empty cluster keeps its centroid (dropped at the end)
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return [m for m in _members(_nearest(x, centroids), k) if len(m)]


def fit_clusters(vectors_i8: np.ndarray, scales: np.ndarray, exact_up_to: int, cluster_size: int,
                 max_clusters: int = 1 << 30) -> tuple[bytes, list[np.ndarray]]:
    """(centroid shard, chunk ids of each cluster) of a k-means over the vectors; each
    chunk is in the cluster of the stored (int8) centroid nearest it, as ``assign_clusters``
    would put it: an incremental build that keeps these centroids changes nothing else."""
    members = cluster_vectors(vectors_i8, scales, exact_up_to, cluster_size, max_clusters)
    shard = centroid_shard(centroid_vectors(vectors_i8, scales, members))
    return (shard, members) if len(members) == 1 else assign_clusters(vectors_i8, scales, shard)


def assign_clusters(vectors_i8: np.ndarray, scales: np.ndarray, shard: bytes) -> tuple[bytes, list[np.ndarray]]:
    """(centroid shard, chunk ids of each cluster): each chunk in the cluster of the stored
    centroid with the highest dot product (what ``probe_order`` ranks by); a centroid no
    chunk is nearest to is dropped from the shard."""
    q, s = read_centroid_shard(shard, vectors_i8.shape[1])
    # a chunk's own scale and norm do not change which centroid is nearest: its int8 vector will do
    members = _members(_nearest(vectors_i8.astype(np.float32), q.astype(np.float32) * s[:, None]), len(q))
    keep = [c for c, m in enumerate(members) if len(m)]
    if len(keep) < len(q):
        shard = _pack_centroids(q[keep], s[keep])
    return shard, [members[c] for c in keep]


def _members(assign: np.ndarray, k: int) -> list[np.ndarray]:
    """Chunk ids (ascending) of each of the k clusters, given each chunk's cluster."""
    order = np.argsort(assign, kind="stable")
    return np.split(order, np.cumsum(np.bincount(assign, minlength=k))[:-1])


def _nearest(x: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    out = np.empty(len(x), dtype=np.int64)
    for start in range(0, len(x), 8192):
        out[start:start + 8192] = np.argmax(x[start:start + 8192] @ centroids.T, axis=1)
    return out


def centroid_vectors(vectors_i8: np.ndarray, scales: np.ndarray, clusters: list[np.ndarray]) -> np.ndarray:
    """Normalized mean of each cluster's (dequantized) vectors."""
    x = vectors_i8.astype(np.float32) * scales[:, None]
    means = np.stack([x[m].mean(axis=0) for m in clusters])
    return means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)


# -- shards -----------------------------------------------------------------------------

def cluster_shard(ids: np.ndarray, vectors_i8: np.ndarray, scales: np.ndarray) -> bytes:
    """``u32 count | u32 chunk ids | f32 scales | int8 vectors`` (little-endian, aligned)."""
    return (struct.pack("<I", len(ids)) + ids.astype("<u4").tobytes() + scales[ids].astype("<f4").tobytes()
            + vectors_i8[ids].astype(np.int8).tobytes())


def cluster_map_shard(cluster_ids: np.ndarray) -> bytes:
    """``u32 count | u16 cluster of each chunk`` (consecutive chunks: ``Layout.cluster_map_chunks``)."""
    if len(cluster_ids) and int(cluster_ids.max()) > 0xFFFF:
        raise ValueError("a cluster map holds at most 65,536 clusters (Layout.max_clusters)")
    return struct.pack("<I", len(cluster_ids)) + cluster_ids.astype("<u2").tobytes()


def read_cluster_map_shard(data: bytes, n_clusters: int | None = None) -> np.ndarray:
    """The cluster of each chunk of a cluster map shard (ValueError: a value not below
    ``n_clusters``, when given)."""
    (count,) = struct.unpack_from("<I", data, 0)
    if len(data) != 4 + 2 * count:
        raise ValueError(f"cluster map shard of {len(data)} bytes, expected {4 + 2 * count}")
    out = np.frombuffer(data, dtype="<u2", count=count, offset=4).astype(np.int64)
    if n_clusters is not None and count and int(out.max()) >= n_clusters:
        raise ValueError(f"a cluster map naming cluster {int(out.max())} of {n_clusters}")
    return out


class Cluster:
    __slots__ = ("ids", "scales", "vectors")

    def __init__(self, ids: np.ndarray, scales: np.ndarray, vectors: np.ndarray):
        self.ids, self.scales, self.vectors = ids, scales, vectors


def read_cluster_shard(data: bytes, dim: int, n_chunks: int | None = None) -> Cluster:
    """A cluster shard's chunk ids, scales and vectors (ValueError: not that many bytes, or,
    ``n_chunks`` given, an id not below it)."""
    (count,) = struct.unpack_from("<I", data, 0)
    if len(data) != 4 + 8 * count + count * dim:
        raise ValueError(f"cluster shard of {len(data)} bytes, expected {4 + 8 * count + count * dim}")
    ids = np.frombuffer(data, dtype="<u4", count=count, offset=4).astype(np.int64)
    scales = np.frombuffer(data, dtype="<f4", count=count, offset=4 + 4 * count)
    vectors = np.frombuffer(data, dtype=np.int8, count=count * dim, offset=4 + 8 * count).reshape(count, dim)
    if n_chunks is not None and count and int(ids.max()) >= n_chunks:
        raise ValueError(f"a cluster shard naming chunk {int(ids.max())} of {n_chunks}")
    problem = scales_problem(scales) if n_chunks is not None else None
    if problem:
        raise ValueError(f"a cluster shard with {problem}")
    return Cluster(ids, scales, vectors)


def centroid_shard(centroids: np.ndarray) -> bytes:
    """``u32 count | f32 scales | int8 centroids``."""
    return _pack_centroids(*quantize_vectors(centroids))


def _pack_centroids(q: np.ndarray, s: np.ndarray) -> bytes:
    return struct.pack("<I", len(q)) + s.astype("<f4").tobytes() + q.astype(np.int8).tobytes()


def read_centroid_shard(data: bytes, dim: int) -> tuple[np.ndarray, np.ndarray]:
    (count,) = struct.unpack_from("<I", data, 0)
    if len(data) != 4 + count * (4 + dim):
        raise ValueError(f"centroid shard of {len(data)} bytes, expected {4 + count * (4 + dim)}")
    scales = np.frombuffer(data, dtype="<f4", count=count, offset=4)
    vectors = np.frombuffer(data, dtype=np.int8, count=count * dim, offset=4 + 4 * count).reshape(count, dim)
    problem = scales_problem(scales)
    if problem:
        raise ValueError(f"a centroid shard with {problem}")
    return vectors, scales


# -- query -----------------------------------------------------------------------------------

def probe_order(query: np.ndarray, centroids_i8: np.ndarray, centroid_scales: np.ndarray,
                sizes: list[int], probe: int, first: list[int] = ()) -> list[int]:
    """The clusters to read: ``first`` (the clusters of the best keyword hits), then the
    nearest centroid first (ties to the lower cluster), until ``probe`` vectors are covered."""
    chosen = list(first)
    covered = sum(sizes[c] for c in chosen)
    scores = dense_scores(query, centroids_i8, centroid_scales)
    order = sorted(range(len(sizes)), key=lambda c: (-scores[c], c))
    for c in order:
        if covered >= probe:
            break
        if c not in first:
            chosen.append(c)
            covered += sizes[c]
    return chosen
