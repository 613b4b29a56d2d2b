"""Ranked results arranged as the search dialog shows them, for ``sphinx-rag search``.

One group per document (a page, or a document of a singlehtml site), headed by its
title and ordered by its best hit; in each group, one entry per URL: the best hit
there, or the hit that holds the most names the query asks for (``codeline19999`` among
the chunks of a long code block: ``search.lexical.identifier_tokens``), and the other hits with
the same URL (several parameters of one class share its anchor) counted as "+N more
matches here". The ranking is left as it is.

Mirrors ``groupResults`` in ``js/src/ui/results.js`` (tests/test_search_cli.py runs
both on the same results).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..search.lexical import strip_invisible, tokenize

__all__ = ["Entry", "Group", "group_results", "names_held", "title_parts"]


@dataclass
class Entry:
    result: object  # a search.retrieve.Result: the hit shown for this URL
    merged: list = field(default_factory=list)  # the other hits with the same URL


@dataclass
class Group:
    page: str
    title: str
    entries: list[Entry] = field(default_factory=list)


def title_parts(title: str) -> list[str]:
    """The parts of a title path ("Page > Section > Subsection"), invisible characters removed."""
    return strip_invisible(title).split(" > ")


def _page_of(url: str) -> str:
    return url.split("#", 1)[0]


def _document_of(result) -> str:
    """The chunk id's part before "#" ("guide#intro:0"), else the URL's page."""
    doc, sep, _ = result.id.partition("#")
    return doc if sep else _page_of(result.url)


def names_held(result, names) -> int:
    """How many of ``names`` (query identifier tokens) a result's text holds."""
    if not names:
        return 0
    tokens = set(tokenize(result.text))
    return sum(1 for n in names if n in tokens)


def group_results(results, names=()) -> list[Group]:
    """Results in rank order -> groups by document, in the order of their best hit; an
    entry shows the hit holding the most of ``names``, else the best."""
    groups: dict[str, Group] = {}
    by_url: dict[str, Entry] = {}
    for result in results:
        same = by_url.get(result.url)
        if same is not None:
            if names_held(result, names) > names_held(same.result, names):  # it shows what was asked for
                same.merged.append(same.result)
                same.result = result
            else:
                same.merged.append(result)
            continue
        entry = by_url[result.url] = Entry(result)
        doc = _document_of(result)
        if doc not in groups:
            groups[doc] = Group(_page_of(result.url), title_parts(result.title)[0])
        groups[doc].entries.append(entry)
    return list(groups.values())
