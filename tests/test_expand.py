"""Passages (expand.py): each hit with the neighbours on its page the ranking found relevant."""

from sphinx_rag.expand import DECAY, MAX_CHARS, PENALTY, expand


def chunk(doc, kind, n):
    return {"doc": doc, "kind": kind, "text": "x" * n}


def passages(chunks, ranked, k=10):
    return expand(ranked, chunks.__getitem__, len(chunks), k)


def test_a_hit_takes_its_relevant_neighbours_in_page_order():
    page = [chunk("a", "guide", 300) for _ in range(5)]
    # 3 and 1 ranked high: one passage [1, 2, 3] around the hit 2; the later hits are inside it
    assert passages(page, [2, 3, 1]) == [(2, [1, 2, 3])]
    # neighbours the ranking did not find cost PENALTY each: the hit stays alone
    assert passages(page, [2]) == [(2, [2])]
    # an unranked chunk between two relevant ones is taken when both are worth it
    assert passages(page, [1, 3]) == [(1, [1, 2, 3])]
    # a neighbour ranked so low that its value is below the penalty is not worth taking
    low = DECAY / PENALTY  # rank where DECAY / (DECAY + rank - 1) < PENALTY
    ranked = [0] + list(range(100, 100 + int(low))) + [1]
    page = [chunk("a", "guide", 300) for _ in range(100 + int(low) + 1)]
    assert passages(page, ranked, k=1) == [(0, [0])]


def test_passages_stop_at_the_page_api_chunks_and_the_length_limit():
    chunks = [chunk("a", "guide", 300), chunk("b", "guide", 300), chunk("b", "api", 300), chunk("b", "guide", 300)]
    assert passages(chunks, [1, 0]) == [(1, [1]), (0, [0])]  # never across pages
    assert passages(chunks, [2, 1, 3]) == [(2, [2]), (1, [1]), (3, [3])]  # API chunks stand alone
    long = [chunk("a", "guide", MAX_CHARS - 100), chunk("a", "guide", 200), chunk("a", "guide", 2 * MAX_CHARS)]
    assert passages(long, [0, 1]) == [(0, [0]), (1, [1])]  # together they would pass MAX_CHARS
    assert passages(long, [2]) == [(2, [2])]  # a chunk longer than the limit stays whole


def test_k_counts_passages_and_no_chunk_is_shown_twice():
    page = [chunk("a", "guide", 10) for _ in range(4)]
    assert passages(page, [0, 1, 3, 2], k=1) == [(0, [0, 1, 2, 3])]
    far = [chunk("a", "guide", 1000), chunk("a", "guide", 1000), chunk("a", "guide", 1000)]
    assert passages(far, [1, 0, 2], k=2) == [(1, [0, 1]), (2, [2])]  # 2 no longer fits beside [0, 1]
