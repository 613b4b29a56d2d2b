"""Chunks: the unit that is indexed, retrieved, cited and given to an LLM.

Three strategies, one per kind of page (see ``api``, ``gallery``, ``narrative``).
None of them imports Sphinx: they take plain inputs so they are testable alone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["Chunk", "KINDS", "number_chunks"]

KINDS = ("api", "example", "guide")


@dataclass
class Chunk:
    """One retrievable passage.

    ``text`` is exactly what is embedded, indexed and handed to an LLM: it starts
    with enough context (owner object or heading path) to stand on its own.
    """

    doc: str  # Sphinx docname, e.g. "user_guide/imputation"
    anchor: str  # HTML id of the nearest target ("" = top of page)
    headings: list[str]  # page title > section > subsection
    kind: str  # one of KINDS
    text: str
    order: int = 0  # position in the page, for neighbour expansion
    id: str = ""  # stable: "<doc>#<anchor>:<n-th chunk under that anchor>"
    weight: float = 1.0  # ranking multiplier (config: down-weighted pages)
    extra: dict = field(default_factory=dict)

    @property
    def title(self) -> str:
        return " > ".join(h for h in self.headings if h)

    def to_dict(self) -> dict:
        return asdict(self)


def number_chunks(chunks: list[Chunk]) -> list[Chunk]:
    """Give the chunks of one page their order and stable ids (in place)."""
    per_anchor: dict[str, int] = {}
    for order, chunk in enumerate(chunks):
        n = per_anchor.get(chunk.anchor, 0)
        per_anchor[chunk.anchor] = n + 1
        chunk.order = order
        chunk.id = f"{chunk.doc}#{chunk.anchor}:{n}"
    return chunks
