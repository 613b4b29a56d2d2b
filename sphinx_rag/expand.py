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

__all__ = ["MIN_CHARS", "MAX_CHARS", "expand"]

MIN_CHARS = 400
MAX_CHARS = 1600


def expand(ranked: list[int], chunks: list[dict], k: int) -> list[list[int]]:
    """Up to k passages, each the list of chunk indices it covers (first = the hit)."""
    covered: set[int] = set()
    passages: list[list[int]] = []
    for i in ranked:
        if len(passages) == k:
            break
        if i in covered:
            continue
        span, length = [i], len(chunks[i]["text"])
        j = i + 1
        while (chunks[i]["kind"] != "api" and length < MIN_CHARS and j < len(chunks) and j not in covered
               and chunks[j]["doc"] == chunks[i]["doc"] and length + len(chunks[j]["text"]) <= MAX_CHARS):
            span.append(j)
            length += len(chunks[j]["text"])
            j += 1
        covered.update(span)
        passages.append(span)
    return passages
