"""Expand ranked chunks into the passages shown to readers and given to an LLM.

A narrative or example chunk shorter than MIN_CHARS (a section's two-sentence
lead-in, say) says little on its own: its passage also takes the chunks that
follow it on the same page, up to MAX_CHARS, so "The strategy is chosen with the
strategy parameter." arrives with the list of strategies after it. API chunks
stand alone by construction. A later result whose chunk is already inside an
earlier passage is dropped, and no passage repeats a chunk another one shows (the
seed's parent-document / segment idea, kept deterministic and cheap). ``js/src/search/expand.js`` is the same function.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["MIN_CHARS", "MAX_CHARS", "expand"]

MIN_CHARS = 400
MAX_CHARS = 1600


def expand(ranked: list[int], chunk: Callable[[int], dict], n_chunks: int, k: int) -> list[list[int]]:
    """Up to k passages, each the list of chunk indices it covers (first = the hit).

    ``chunk(i)`` gives the record of chunk i (its kind, doc and text); only the
    ranked hits and the chunks after them are asked for.
    """
    covered: set[int] = set()
    passages: list[list[int]] = []
    for i in ranked:
        if len(passages) == k:
            break
        if i in covered:
            continue
        hit = chunk(i)
        span, length = [i], len(hit["text"])
        j = i + 1
        while hit["kind"] != "api" and length < MIN_CHARS and j < n_chunks and j not in covered:
            nxt = chunk(j)
            if nxt["doc"] != hit["doc"] or length + len(nxt["text"]) > MAX_CHARS:
                break
            span.append(j)
            length += len(nxt["text"])
            j += 1
        covered.update(span)
        passages.append(span)
    return passages
