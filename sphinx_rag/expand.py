"""Turn ranked chunks into the passages shown to readers and given to an LLM.

Relevant segment extraction (dsRAG's RSE, seed 002), made deterministic and cheap:
an answer in long-form prose is often spread over neighbouring chunks (a section's
lead-in, its list, the code after it), and the ranking usually finds several of
them. Each chunk gets a value from its rank, ``DECAY / (DECAY + rank - 1)`` (1 for
the first hit, 0.5 at rank DECAY + 1, 0 when unranked), minus ``PENALTY``: a
neighbour the ranking did not find costs something, one it found high pays. Taking
the hits in rank order, each hit's passage is the contiguous run of chunks around it
(same page, none shown already, at most MAX_CHARS together, API chunks never merged)
with the largest total value: the hit alone unless relevant neighbours make a
longer run worth it. A later hit already inside an earlier passage is dropped.

Measured (eval/RESULTS.md): on Flask's user guide answer-component MRR@10 0.698 ->
0.821 and Hit MRR@10 0.762 -> 0.828; on the demo MRR@10 0.798 -> 0.845. Ordering
passages by their value instead of their hit's rank (dsRAG) was worse on both.
``js/src/search/expand.js`` is the same function (same float operations, same
order), pinned by the parity fixtures.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["DECAY", "PENALTY", "MAX_CHARS", "MAX_CHUNKS", "expand"]

DECAY = 20
PENALTY = 0.2
MAX_CHARS = 2400
MAX_CHUNKS = 16


def expand(ranked: list[int], chunk: Callable[[int], dict], n_chunks: int, k: int) -> list[tuple[int, list[int]]]:
    """Up to k passages as (hit, chunk indices in page order).

    ``chunk(i)`` gives the record of chunk i (its kind, doc and text); only the ranked
    hits and their neighbours on the same page are asked for.
    """
    rank_of = {i: r for r, i in enumerate(ranked, start=1)}

    def value(j: int) -> float:
        r = rank_of.get(j)
        return (DECAY / (DECAY + r - 1) if r is not None else 0.0) - PENALTY

    covered: set[int] = set()
    passages: list[tuple[int, list[int]]] = []
    for hit in ranked:
        if len(passages) == k:
            break
        if hit in covered:
            continue
        passages.append((hit, _segment(hit, chunk, n_chunks, covered, value)))
        covered.update(passages[-1][1])
    return passages


def _neighbours(hit: int, step: int, chunk, n_chunks: int, covered: set[int]) -> list[tuple[int, int]]:
    """(index, length) of the chunks a passage around ``hit`` may take on one side."""
    record = chunk(hit)
    out: list[tuple[int, int]] = []
    if record["kind"] == "api":
        return out
    total = len(record["text"])
    j = hit + step
    while 0 <= j < n_chunks and len(out) < MAX_CHUNKS - 1 and j not in covered:
        nxt = chunk(j)
        total += len(nxt["text"])
        if nxt["doc"] != record["doc"] or nxt["kind"] == "api" or total > MAX_CHARS:
            break
        out.append((j, len(nxt["text"])))
        j += step
    return out


def _segment(hit: int, chunk, n_chunks: int, covered: set[int], value) -> list[int]:
    """The run around ``hit`` with the largest total value (ties: the earliest, shortest)."""
    left = _neighbours(hit, -1, chunk, n_chunks, covered)[::-1]  # page order
    right = _neighbours(hit, 1, chunk, n_chunks, covered)
    run = [*left, (hit, len(chunk(hit)["text"])), *right]
    h = len(left)
    best, best_value = (h, h), value(hit)
    for a in range(h + 1):
        total, length = 0.0, 0
        for j in range(a, h):
            total += value(run[j][0])
            length += run[j][1]
        for b in range(h, len(run)):
            total += value(run[b][0])
            length += run[b][1]
            if b > a and (length > MAX_CHARS or b - a + 1 > MAX_CHUNKS):
                break
            if total > best_value:
                best, best_value = (a, b), total
    return [run[j][0] for j in range(best[0], best[1] + 1)]
