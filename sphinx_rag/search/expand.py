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

API objects are passages of their own kind (parent-document retrieval, seed 004): a
hit on an object card (chunk/api.py) takes the parts of its object that rank within
OBJECT_RANKS (a parameter, a method's return value...), and a hit on such a part whose
card ranks that high takes the card and those parts: one passage that says what the
object is for and holds the parts the query found, in page order, parts taken in rank
order while they fit in MAX_CHARS; a method's card brings its class's card. Measured:
demo MRR@10 0.845 -> 0.885, scikit-learn's API 0.694 -> 0.937.

Passages sized to a budget: given the characters the passages may take together (an
LLM's context, ``evaluate --budget``), long passages would leave later hits out, so a
chunk also costs its length, the more the fuller the budget: ``cost x len(text)`` is
taken from its value, ``cost = c x k / budget x used / budget``, where ``used`` is what
the passages before it take (c = 1: a chunk as long as the budget's share of one passage,
in a passage made when the budget is full, costs 1). The first passage stays as it would
be without a budget (unless it alone is longer than the budget: then it pays as if the
budget were full); later ones keep the neighbours and object parts that rank high
enough to pay for their length, so more distinct hits fit. The passages are made with c
= 0 (as without a budget), then with each of LENGTH_COSTS in turn, the smallest with
which they fit. Measured in eval/RESULTS.md ("Passages sized to a budget"): a flat cost
(the same for every passage) cut the top passage's neighbours that held the answer.

``js/src/search/expand.js`` is the same function (same float operations, same
order), pinned by the parity fixtures.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["DECAY", "PENALTY", "MAX_CHARS", "MAX_CHUNKS", "OBJECT_RANKS", "LENGTH_COSTS", "expand",
           "passages_length"]

DECAY = 20
PENALTY = 0.2
MAX_CHARS = 2400
MAX_CHUNKS = 16
OBJECT_RANKS = 20
#: With a budget: the length costs (c, see above) tried in turn, until the passages fit
#: (the smallest that does: passages 2% over the budget lose little, not every neighbour).
LENGTH_COSTS = (1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1)


def expand(ranked: list[int], chunk: Callable[[int], dict], n_chunks: int, k: int,
           budget: int | None = None) -> list[tuple[int, list[int]]]:
    """Up to k passages as (hit, chunk indices in page order); with a ``budget``
    (characters), sized so that more of them fit in it (see above).

    ``chunk(i)`` gives the record of chunk i (its kind, doc and text); only the ranked
    hits and their neighbours on the same page are asked for.
    """
    passages = _expand(ranked, chunk, n_chunks, k, 0.0, 1)
    if budget is not None:
        over = bool(passages) and passages_length(passages[:1], chunk) > budget  # the first alone
        for c in LENGTH_COSTS:
            if passages_length(passages, chunk) <= budget:
                break
            passages = _expand(ranked, chunk, n_chunks, k, c * k / budget, budget, over)
    return passages


def passages_length(passages: list[tuple[int, list[int]]], chunk) -> int:
    """Characters of the passages' texts (a passage's chunks joined by a blank line)."""
    return sum(sum(len(chunk(j)["text"]) for j in span) + 2 * (len(span) - 1) for _, span in passages)


def _expand(ranked: list[int], chunk, n_chunks: int, k: int, base: float, budget: int,
            first_full: bool = False) -> list[tuple[int, list[int]]]:
    """The passages, each chunk valued by its rank less ``base x used / budget`` per
    character (``used``: the characters of the passages before its own; for the first
    passage, with ``first_full``, the whole budget)."""
    rank_of = {i: r for r, i in enumerate(ranked, start=1)}
    covered: set[int] = set()
    passages: list[tuple[int, list[int]]] = []
    used = 0
    for hit in ranked:
        if len(passages) == k:
            break
        if hit in covered:
            continue
        cost = base * ((budget if first_full and not passages else used) / budget)

        def value(j: int, length: int, cost: float = cost) -> float:
            r = rank_of.get(j)
            return (DECAY / (DECAY + r - 1) if r is not None else 0.0) - PENALTY - cost * length

        span = (_object_passage(hit, chunk, ranked, rank_of, covered, value)
                or _segment(hit, chunk, n_chunks, covered, value))
        passages.append((hit, span))
        covered.update(span)
        used += passages_length([(hit, span)], chunk)
    return passages


def _object_passage(hit: int, chunk, ranked: list[int], rank_of: dict[int, int], covered: set[int],
                    value) -> list[int] | None:
    """An object's card and its parts ranked within OBJECT_RANKS and worth their length
    (``value`` > 0), taken in rank order while they fit in MAX_CHARS (card and hit always
    in), in page order; None unless ``hit`` is a card, or a part whose card ranks within
    OBJECT_RANKS and is not shown yet. The object of a card is its own, or its owner's for
    a nested card (a method's card names its class)."""
    record = chunk(hit)
    owner = hit - record.get("card", 0)  # the nearest enclosing card (== hit: none)
    if record.get("members"):  # a card; a method's card brings its class's card, unless shown already
        card = owner if owner != hit and owner not in covered else hit
    elif owner != hit and rank_of.get(owner, OBJECT_RANKS + 1) <= OBJECT_RANKS and owner not in covered:
        card = owner
    else:
        return None
    members = chunk(card)["members"]
    span = [card] if card == hit else [card, hit]
    total = sum(len(chunk(j)["text"]) for j in span)
    for j in ranked[:OBJECT_RANKS]:
        if card < j <= card + members and j != hit and j not in covered:
            length = len(chunk(j)["text"])
            if value(j, length) <= 0:
                continue  # not worth its length (only with a budget: parts ranked this high are worth > 0)
            if total + length > MAX_CHARS:
                break  # the next best part is shown on its own, not a lesser one in its place
            span.append(j)
            total += length
    return sorted(span)


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
    best, best_value = (h, h), value(*run[h])
    for a in range(h + 1):
        total, length = 0.0, 0
        for j in range(a, h):
            total += value(*run[j])
            length += run[j][1]
        for b in range(h, len(run)):
            total += value(*run[b])
            length += run[b][1]
            if b > a and (length > MAX_CHARS or b - a + 1 > MAX_CHUNKS):
                break
            if total > best_value:
                best, best_value = (a, b), total
    return [run[j][0] for j in range(best[0], best[1] + 1)]
