"""Several sites' rankings merged into one: reciprocal-rank fusion across sites.

The scores of two indexes are not comparable (each site's BM25 has its own statistics,
each fused score its own page weights), their ranks are: a passage scores
``1 / (rrf_k + rank)`` in each site's ranking, summed when the same passage (the same
absolute URL and chunk id) comes from two sites, and ties go to the site listed first
(the home site, in the browser), then to the better rank there.

One merge for every runtime: ``sphinx-rag search SITE SITE...``, the MCP server
(``docs_tools.Library``) and the browser (``js/src/search/merge.js``, which reproduces
``tests/fixtures/merge.json``, written from this module by ``tests/fixtures/generate.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

__all__ = ["RRF_K", "merge_ranked", "merged_weak"]

T = TypeVar("T")
RRF_K = 60  # several sites' results merged by 1 / (RRF_K + rank)


def merge_ranked(rankings: Sequence[Sequence[T]], key: Callable[[T], Hashable], k: int | None = None,
                 rrf_k: int = RRF_K) -> list[tuple[int, T]]:
    """``rankings[n]``: site n's results, best first (the home site first). Returns
    ``(site, result)`` pairs, best first, at most ``k`` (None: all): each distinct
    ``key(result)`` once, as its first site gave it, scored by the sum over the sites
    that have it of ``1 / (rrf_k + rank)`` (rank from 1); ties go to the lower
    (first site, rank there)."""
    scores: dict[Hashable, float] = {}
    first: dict[Hashable, tuple[int, int, T]] = {}
    for n, ranking in enumerate(rankings):
        for rank, result in enumerate(ranking, start=1):
            name = key(result)
            scores[name] = scores.get(name, 0.0) + 1.0 / (rrf_k + rank)
            first.setdefault(name, (n, rank, result))
    order = sorted(scores, key=lambda name: (-scores[name], first[name][0], first[name][1]))
    if k is not None:
        order = order[:k]
    return [(first[name][0], first[name][2]) for name in order]


def merged_weak(weak: Sequence[bool]) -> bool:
    """Only the nearest passages, no good match, when every site that answered says so."""
    return bool(weak) and all(weak)
