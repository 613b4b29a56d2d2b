"""Passages (expand.py): each hit with the neighbours on its page the ranking found relevant."""

from sphinx_rag.search.expand import DECAY, MAX_CHARS, OBJECT_RANKS, PENALTY, expand, passages_length


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


def api_object(n_members, size=100, doc="p"):
    """An object card and its members, as chunk/api.py links them."""
    card = dict(chunk(doc, "api", size), members=n_members)
    return [card] + [dict(chunk(doc, "api", size), card=back) for back in range(1, n_members + 1)]


def test_an_object_card_and_its_ranked_parts_are_one_passage():
    page = api_object(4) + api_object(2)  # chunks 0-4: one object; 5-7: the next one
    # a hit on the card takes its parts ranked within OBJECT_RANKS, in page order; not the next object's
    assert passages(page, [0, 3, 6, 2]) == [(0, [0, 2, 3]), (6, [6])]
    # a hit on a part takes its card (ranked) and the other ranked parts; the card is not shown again
    assert passages(page, [3, 5, 0, 1]) == [(3, [0, 1, 3]), (5, [5])]
    # a part whose card is not ranked stays alone, as API chunks do
    assert passages(page, [3, 1]) == [(3, [3]), (1, [1])]
    # parts ranked below OBJECT_RANKS are not taken
    filler = [chunk("q", "guide", 10) for _ in range(OBJECT_RANKS)]
    chunks = page + filler
    ranked = [0] + list(range(8, 8 + OBJECT_RANKS - 1)) + [2]
    assert passages(chunks, ranked, k=1) == [(0, [0])]
    ranked = [0] + list(range(8, 8 + OBJECT_RANKS - 2)) + [2]
    assert passages(chunks, ranked, k=1) == [(0, [0, 2])]


def test_an_object_passage_keeps_to_max_chars():
    page = api_object(3, size=MAX_CHARS // 3)
    # card + hit always; then ranked parts while the passage stays within MAX_CHARS
    assert passages(page, [3, 0, 1, 2]) == [(3, [0, 1, 3]), (2, [2])]
    # parts are taken in rank order: a better part that does not fit ends the passage (it is
    # shown on its own next), no lesser part takes its place
    page = [dict(chunk("p", "api", 1000), members=2), dict(chunk("p", "api", 2000), card=1),
            dict(chunk("p", "api", 100), card=2)]
    assert passages(page, [0, 1, 2]) == [(0, [0]), (1, [1]), (2, [2])]


def test_a_method_card_brings_its_class_card():
    # class card 0; its parameter 1; method card 2 (a part of the class) with its parameter 3
    page = [dict(chunk("p", "api", 100), members=3), dict(chunk("p", "api", 100), card=1),
            dict(chunk("p", "api", 100), members=1, card=2), dict(chunk("p", "api", 100), card=1)]
    # a hit on the method card: the class card (not ranked) names the owner, ranked parts join
    assert passages(page, [2, 3]) == [(2, [0, 2, 3])]
    # once the class card is shown, the method card is an object of its own
    assert passages(page, [0, 2, 3]) == [(0, [0, 2, 3])]
    assert passages(page, [1, 0, 2, 3], k=2)[0] == (1, [0, 1, 2, 3])
    # a hit on the method's parameter takes the method card when it is ranked (its nearest
    # card, whose first line names the class)
    assert passages(page, [3, 2]) == [(3, [2, 3])]
    assert passages(page, [3, 1]) == [(3, [3]), (1, [1])]



# -- passages sized to a budget -----------------------------------------------------------

def test_a_budget_trims_later_segments_to_the_neighbours_that_pay_for_their_length():
    page = [chunk("a", "guide", 300) for _ in range(4)] + [chunk("b", "guide", 300) for _ in range(6)]
    ranked = [1, 2, 6, 8]  # on page b, 7 (not ranked) joins 6 and 8

    def sized(budget):
        return expand(ranked, page.__getitem__, len(page), 2, budget)

    whole = [(1, [1, 2]), (6, [6, 7, 8])]
    assert sized(None) == whole and passages_length(whole, page.__getitem__) == 2 * 300 + 2 + 3 * 300 + 4
    assert sized(1506) == whole  # it fits: unchanged
    # the second passage costs its length once the first took half the budget: 6 alone
    assert sized(1200) == [(1, [1, 2]), (6, [6])]
    # the first passage is trimmed only when it alone is longer than the budget
    assert sized(700) == [(1, [1, 2]), (6, [6])]
    assert sized(500) == [(1, [1]), (2, [2])]


def test_a_budget_keeps_the_object_parts_that_rank_high_enough():
    page = [chunk("g", "guide", 300)] + api_object(4, size=300) + [chunk(f"f{i}", "api", 10) for i in range(12)]
    ranked = [0, 1, 4] + list(range(6, 18)) + [2]  # the card ranks 2nd, part 4 3rd, part 2 16th

    def sized(budget):
        return expand(ranked, page.__getitem__, len(page), 10, budget)

    assert sized(None)[1] == sized(1300)[1] == (1, [1, 2, 4])
    assert sized(1000)[1] == (1, [1, 4])  # the 16th no longer pays for its 300 characters
    assert sized(900)[1:3] == [(1, [1]), (4, [4])]  # neither part: the card, then part 4 alone
