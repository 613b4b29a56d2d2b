"""The reranking stage: the fused top candidates reordered by what the question asks for.

A question that asks *which class, function, method, exception...* does something wants
an API object, while the words it shares with the docs often lead to the user guide's
prose about that thing ("Which exception should I raise from a callback when a value is
invalid?" ranked the guide's section on validation callbacks first, the exception's
object eighth). Such a question gives every API chunk among the fused top
``RERANK_DEPTH`` one more vote in the reciprocal-rank fusion, as if a third ranking
placed each of them first: ``1 / (rrf_k + 1)``, times the chunk's weight (as
``retrieve.rrf_fuse`` weights every vote). API chunks then come before prose unless the
prose is far ahead, and among them the fused order is kept. Other questions are not
touched.

Measured (eval/RESULTS.md, "A reranking stage"): fused MRR@10 of the which-questions
0.664 -> 0.790 (Click), 0.752 -> 0.833 (demo); every other question set unchanged. A
reranker learned at build time from the site's own pseudo-queries, and the model's
similarity of the query and each candidate's heading path, were measured too and lost on
most sets: they are not part of it.

``js/src/search/rerank.js`` is the same function (the same pattern, the same float
operations in the same order), pinned by the parity fixtures.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

__all__ = ["RERANK_DEPTH", "asks_for_object", "rerank"]

#: Fused candidates the reranking stage reads (their text records give each one's kind).
RERANK_DEPTH = 30

#: "which" or "what", at most two words, then a kind of API object (ASCII only, the same
#: pattern in JS: no Unicode classes, whose tables differ between the runtimes).
_OBJECT_QUESTION = re.compile(
    r"(?<![A-Za-z0-9_])(?:which|what)[ \t\r\n]+(?:[A-Za-z-]+[ \t\r\n]+){0,2}?"
    r"(?:class|function|method|exception|decorator|type|object|attribute|property|module|estimator|model|"
    r"transformer|helper|callable|enum|constant)(?:es|s)?(?![A-Za-z0-9_])",
    re.IGNORECASE | re.ASCII)


def asks_for_object(query: str) -> bool:
    """Whether ``query`` asks which API object (class, function, ...) does something."""
    return _OBJECT_QUESTION.search(query) is not None


def rerank(query: str, fused: dict[int, float], kind: Callable[[int], str], weights: np.ndarray,
           rrf_k: int) -> dict[int, float]:
    """The fused scores after the reranking stage (``fused`` itself when nothing changes).

    ``kind(i)`` is chunk i's kind (its text record's); it is asked only of the first
    ``RERANK_DEPTH`` candidates, ranked by (-score, index), and only for a question that
    ``asks_for_object``.
    """
    if not fused or not asks_for_object(query):
        return fused
    vote = 1.0 / (rrf_k + 1)
    out = dict(fused)
    for i in sorted(fused, key=lambda i: (-fused[i], i))[:RERANK_DEPTH]:
        if kind(i) == "api":
            out[i] = fused[i] + vote * float(weights[i])
    return out
