"""Passage expansion (expand.py): short narrative hits take what follows them."""

from sphinx_rag.expand import MAX_CHARS, MIN_CHARS, expand


def chunk(doc, kind, n):
    return {"doc": doc, "kind": kind, "text": "x" * n}


def test_short_guide_chunk_takes_the_following_chunks_of_its_page():
    chunks = [chunk("a", "guide", 100), chunk("a", "guide", 200), chunk("a", "guide", 200),
              chunk("b", "guide", 100)]
    assert expand([0, 3], chunks.__getitem__, len(chunks), k=10) == [[0, 1, 2], [3]]  # stops at the page end


def test_limits_api_chunks_and_duplicates():
    chunks = [chunk("a", "api", 50), chunk("a", "api", 50), chunk("a", "guide", MIN_CHARS),
              chunk("a", "guide", 100), chunk("a", "guide", MAX_CHARS)]
    assert expand([0], chunks.__getitem__, len(chunks), k=10) == [[0]]  # API chunks stand alone
    assert expand([2], chunks.__getitem__, len(chunks), k=10) == [[2]]  # long enough already
    assert expand([3, 4], chunks.__getitem__, len(chunks), k=10) == [[3], [4]]  # would pass MAX_CHARS
    # a hit inside an earlier passage is dropped, and k counts passages
    guide = [chunk("a", "guide", 10), chunk("a", "guide", 10), chunk("a", "guide", 10)]
    assert expand([0, 1, 2], guide.__getitem__, len(guide), k=1) == [[0, 1, 2]]
    assert expand([1, 0], guide.__getitem__, len(guide), k=2) == [[1, 2], [0]]  # never repeats a chunk shown already
