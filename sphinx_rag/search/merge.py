"""Several sites' answers merged into one ranking, by how well each hit matches the query.

Two indexes' scores are not comparable (each site's BM25 has its own statistics, each fused
score its own page weights), and merging by rank alone ties every site's first hit for
first place, however weak it is. What is comparable is how well a hit matches the query:

* a site whose own verdict is "no good match" (``weak``) comes after every site that has a
  good match: its nearest passages are never above another site's answer;
* each hit's ``match``: the share of the query's distinct words its passage holds
  (``lexical.tokenize``, exact) plus its cosine to the query (``similarity``: the hit
  chunk's dense score in its site's search, 0 when its cluster was not probed). A hit of a
  site searched by keywords alone (no ``similarity``) counts ``KEYWORD_SIMILARITY``, the
  cosine of a typical good first hit, so that neither kind of site crowds out the other
  (eval/RESULTS.md, "Merging federated sites");
* a cosine is what another site says of its own hit: the merge cannot check it, while it
  counts the words itself in the passage it shows. So a cosine counts within [-1, 1] (a
  unit vector's; Infinity, a million: 1; NaN: 0), and at most ``UNBACKED_SIMILARITY`` more
  than the share of words backing it (``_credit``): a hit holding none of the query's words
  never counts more than ``UNBACKED_SIMILARITY``, and never comes before a hit holding them
  all, whatever cosines its site claims (eval/RESULTS.md, "A federated site's claimed
  cosines");
* each site's own order is kept: the sites' next hits are compared and the best taken,
  ties to the hit whose title holds more query words, then to the smaller key (absolute
  URL and chunk id), then the smaller site name: never to the site listed first, so the
  merge is the same whatever order the sites are given in. A passage that two sites give
  (the same key) is taken once.

One merge for every runtime: ``sphinx-rag search SITE SITE...``, the MCP server
(``agents.docs_tools.Library``) and the browser (``js/src/search/merge.js``, which reproduces
``tests/fixtures/merge.json``, written from this module by ``tests/fixtures/generate.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .lexical import tokenize
from .retrieve import clip_query

__all__ = ["KEYWORD_SIMILARITY", "UNBACKED_SIMILARITY", "Entry", "match_words", "merge_answers", "merged_weak"]

#: The cosine a hit found by keywords alone is taken to have: below that of three in four
#: correct first hits on four evaluation corpora, above three in four of another site's first hits.
KEYWORD_SIMILARITY = 0.5
#: The most a hit's cosine counts beyond the share of the query's words its passage holds:
#: on the evaluation pairs as good as no cap (model; 0.002 below it with the static encoder),
#: and a site claiming cosines of 1 for wordless hits then costs the pairs' questions nothing.
UNBACKED_SIMILARITY = 0.25


@dataclass(frozen=True)
class Entry:
    """What the merge reads of one hit: ``key`` (absolute URL and chunk id: the same
    passage from two sites has one), its passage ``text`` and ``title``, and its cosine to
    the query (None: its site was searched by keywords alone)."""

    key: str
    text: str
    title: str = ""
    similarity: float | None = None


def match_words(query: str) -> list[str]:
    """The query's distinct words as the merge counts them."""
    return list(dict.fromkeys(tokenize(clip_query(query))))


def _share(words: list[str], text: str) -> float:
    if not words:
        return 0.0
    have = set(tokenize(text))
    return sum(1 for w in words if w in have) / len(words)


def _credit(similarity: float | None, share: float) -> float:
    """What a hit's cosine counts in its match: KEYWORD_SIMILARITY without one, else the
    cosine within [-1, 1] (NaN: 0) and at most ``share + UNBACKED_SIMILARITY``."""
    if similarity is None:
        cosine = KEYWORD_SIMILARITY
    elif similarity != similarity:  # NaN
        cosine = 0.0
    else:
        cosine = min(max(float(similarity), -1.0), 1.0)
    return min(cosine, share + UNBACKED_SIMILARITY)


def merge_answers(query: str, answers: Sequence[tuple[Sequence[Entry], bool]], names: Sequence[str],
                  k: int | None = None) -> list[tuple[int, int]]:
    """``answers[n]``: site n's hits, best first, and whether its verdict is weak;
    ``names[n]``: its name (distinct). Returns ``(site, position in its hits)`` pairs,
    best first, at most ``k`` (None: all)."""
    words = match_words(query)
    keyed = []
    for n, (hits, weak) in enumerate(answers):
        rows = []
        for i, e in enumerate(hits):
            share = _share(words, e.text)
            rows.append(((bool(weak), -(share + _credit(e.similarity, share)), -_share(words, e.title), e.key,
                          names[n]), i))
        keyed.append(rows)
    heads = [0] * len(keyed)
    seen: set[str] = set()
    out: list[tuple[int, int]] = []
    while k is None or len(out) < k:
        best = None
        for n, rows in enumerate(keyed):
            if heads[n] < len(rows) and (best is None or rows[heads[n]][0] < keyed[best][heads[best]][0]):
                best = n
        if best is None:
            break
        order, i = keyed[best][heads[best]]
        heads[best] += 1
        if order[3] not in seen:
            seen.add(order[3])
            out.append((best, i))
    return out


def merged_weak(weak: Sequence[bool]) -> bool:
    """Only the nearest passages, no good match, when every site that answered says so."""
    return bool(weak) and all(weak)
