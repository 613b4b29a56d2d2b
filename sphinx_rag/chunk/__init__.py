"""Chunks: the unit that is indexed, retrieved, cited and given to an LLM.

``page.chunk_page`` is the one entry point: it turns one page's doctree into
``Chunk`` objects with one strategy per kind of content (``api`` for autodoc
objects, ``gallery`` for sphinx-gallery examples, ``narrative`` for everything
else). None of these modules needs a Sphinx application: they take plain inputs
so they are testable alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["CHUNKER_VERSION", "Chunk", "number_chunks", "valid_text"]

#: Bumped when the same page would give other chunks: an index chunked by another
#: version is not reused by an incremental build (extension.py re-chunks its pages).
CHUNKER_VERSION = 11


@dataclass
class Chunk:
    """One retrievable passage.

    ``text`` is exactly what is embedded and indexed: it starts with enough context
    (owner object or heading path) to stand on its own. ``display`` is the same content
    as a reader reads it (blocks of ``display.py``: no header, plain inline markup, code
    kept as code): what the search dialog and the CLI show and the LLM is given.
    """

    doc: str  # Sphinx docname, e.g. "user_guide/imputation"
    anchor: str  # HTML id of the nearest target ("" = top of page)
    headings: list[str]  # page title > section > subsection
    kind: str  # "api", "example" or "guide"
    text: str
    order: int = 0  # position in the page, for neighbour expansion
    id: str = ""  # stable: "<doc>#<anchor>:<n-th chunk under that anchor>"
    weight: float = 1.0  # ranking multiplier (config: down-weighted pages)
    display: list[list[str]] = field(default_factory=list)  # [[block type, text]] (display.py)
    #: an object card (chunk/api.py): how many chunks after it belong to its object
    card_members: int = 0
    #: a member of a carded object: how many chunks before it its object's card is
    card_back: int = 0

    @property
    def title(self) -> str:
        return " > ".join(h for h in self.headings if h)

    def to_record(self, page_url: str) -> dict:
        """The record written to the index (``index/write.py``); the anchor lives in ``url``,
        in place of the page URL's own fragment if it has one (singlehtml's pages are
        fragments of one file: ``index.html#document-guide``)."""
        url = f"{page_url.partition('#')[0]}#{self.anchor}" if self.anchor else page_url
        record = {"id": self.id, "doc": self.doc, "url": url, "title": self.title, "headings": self.headings,
                  "kind": self.kind, "order": self.order, "weight": self.weight, "text": self.text,
                  "display": self.display}
        return record | object_links(self.card_members, self.card_back)

    @classmethod
    def from_record(cls, record: dict) -> Chunk:
        """The inverse of ``to_record`` (used to keep unchanged pages' chunks; KeyError for a
        record of an index without displays, so that its pages are chunked again)."""
        # the last fragment: an index of a singlehtml site written before its URLs were
        # fixed holds "#document-guide#anchor"
        _, hash_, anchor = record["url"].rpartition("#")
        return cls(doc=record["doc"], anchor=anchor if hash_ else "", headings=record["headings"],
                   kind=record["kind"], text=record["text"], order=record["order"], id=record["id"],
                   weight=record["weight"], display=record["display"],
                   card_members=record.get("members", 0), card_back=record.get("card", 0))


def object_links(card_members: int, card_back: int) -> dict:
    """The record keys linking an object card and its members, only those that are set
    (narrative chunks have neither, and every byte of a record is downloaded)."""
    return ({"members": card_members} if card_members else {}) | ({"card": card_back} if card_back else {})


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with each lone surrogate (``.. |s| unicode:: U+D800``: Sphinx keeps it in the
    doctree and its HTML writer escapes it) replaced by U+FFFD, as a browser shows it: the
    tokenizer, the JSON shards and the agents' UTF-8 files refuse surrogates."""
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def number_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """Give the chunks of one page their order and stable ids (in place)."""
    per_anchor: dict[str, int] = {}
    for order, chunk in enumerate(chunks):
        n = per_anchor.get(chunk.anchor, 0)
        per_anchor[chunk.anchor] = n + 1
        chunk.order = order
        chunk.id = f"{chunk.doc}#{chunk.anchor}:{n}"
    return chunks
