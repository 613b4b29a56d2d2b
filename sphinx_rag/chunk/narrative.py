"""Narrative chunks: split inside sections, never across them.

Each chunk starts with its ``Page title > Section > Subsection`` header (a
deterministic contextual header in the spirit of dsRAG's AutoContext), then as
many whole blocks (paragraphs, list items, code blocks) as fit the embedding
model's token budget, header included. A block that does not fit alone is split
at sentence (prose) or line (code) boundaries. Consecutive chunks of a section
share a small overlap: the last sentences of the previous chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Iterator

from docutils import nodes

from . import Chunk

__all__ = ["Block", "Run", "ObjectNode", "pack_blocks", "walk", "run_chunks", "block_text", "page_title"]


CountTokens = Callable[[str], int]
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z0-9`\"'(\[*-])")
_SKIP = (
    nodes.comment, nodes.target, nodes.substitution_definition, nodes.system_message,
    nodes.raw, nodes.title, nodes.image, nodes.figure, nodes.field_list, nodes.docinfo,
)


class Block:
    """A piece of a section's body: prose or code (code is kept whole if it fits)."""

    __slots__ = ("text", "code")

    def __init__(self, text: str, code: bool = False):
        self.text, self.code = text, code

    def __repr__(self):
        return f"Block({self.text[:30]!r}, code={self.code})"


def _split_oversized(block: Block, room: int, count: CountTokens) -> list[Block]:
    """Split a block that cannot fit into pieces of at most ``room`` tokens."""
    units = block.text.split("\n") if block.code else _SENTENCE_END.split(block.text)
    sep = "\n" if block.code else " "
    pieces, cur = [], []
    for unit in units:
        if cur and count(sep.join(cur + [unit])) > room:
            pieces.append(sep.join(cur))
            cur = []
        if not _fits(unit, room, count):  # no sentence or line break to cut at: cut by token count
            pieces.extend(_token_windows(unit, room, count))
            continue
        cur.append(unit)
    if cur:
        pieces.append(sep.join(cur))
    return [Block(p, block.code) for p in pieces if p.strip()]


def _token_windows(text: str, room: int, count: CountTokens) -> list[str]:
    """The last resort for a text with no sentence break: pieces of at most ``room``
    tokens cut between words, or inside a word when one word alone is too long."""
    words = text.split()
    if len(words) > 1:
        pieces = []
        for piece in _fit(words, " ".join, room, count, most=room):
            pieces.extend([piece] if _fits(piece, room, count) else _token_windows(piece, room, count))
        return pieces
    return _fit(list(text.strip()), "".join, room, count, most=MAX_CHARS_PER_TOKEN * room) if text.strip() else []


#: A chunk is also cut by length: a 40,000-character word is one [UNK] token to the model,
#: but not one passage to a reader or an LLM.
MAX_CHARS_PER_TOKEN = 12


def _fits(text: str, room: int, count: CountTokens) -> bool:
    return len(text) <= MAX_CHARS_PER_TOKEN * room and count(text) <= room


def _fit(items: list[str], join, room: int, count: CountTokens, most: int) -> list[str]:
    """Greedy: the longest run of items that fits, then the next (binary search on each;
    at least one item a piece, and at most ``most``)."""
    pieces, start = [], 0
    while start < len(items):
        lo, hi = start + 1, min(len(items), start + most)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _fits(join(items[start:mid]), room, count):
                lo = mid
            else:
                hi = mid - 1
        pieces.append(join(items[start:lo]))
        start = lo
    return pieces


def _tail_overlap(block: Block, overlap: int, count: CountTokens) -> str:
    """The last whole sentences of a prose block, up to ``overlap`` tokens."""
    if block.code or overlap <= 0:
        return ""
    tail: list[str] = []
    for sentence in reversed(_SENTENCE_END.split(block.text)):
        if count(" ".join([sentence] + tail)) > overlap:
            break
        tail.insert(0, sentence)
    text = " ".join(tail)
    return "" if text == block.text else text


def pack_blocks(header: str, blocks: Iterable[Block], count: CountTokens, budget: int, overlap: int) -> list[str]:
    """Pack blocks into texts of at most ``budget`` tokens, each starting with header."""
    room = max(16, budget - count(header))
    queue: list[Block] = []
    for block in blocks:
        if not block.text.strip():
            continue
        queue.extend([block] if _fits(block.text, room, count) else _split_oversized(block, room, count))
    texts: list[str] = []
    cur: list[Block] = []
    carry = ""

    def joined(extra: list[Block]) -> str:
        return "\n\n".join(([carry] if carry else []) + [b.text for b in cur + extra])

    for block in queue:
        if cur and not _fits(joined([block]), room, count):
            texts.append(joined([]))
            carry = _tail_overlap(cur[-1], overlap, count)
            cur = []
            if carry and not _fits(joined([block]), room, count):
                carry = ""
        cur.append(block)
    if cur:
        texts.append(joined([]))
    return [f"{header}\n{t}" if header else t for t in texts]


def block_text(node: nodes.Node) -> Block | None:
    """Plain text of one body element (lists keep their bullets)."""
    if isinstance(node, _SKIP):
        return None
    if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
        return Block(node.astext().rstrip(), code=True)
    if isinstance(node, nodes.math_block):
        return Block(node.astext().strip())
    if isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
        items = [" ".join(i.astext().split()) for i in node.children if isinstance(i, nodes.list_item)]
        return Block("\n".join(f"- {i}" for i in items)) if items else None
    if isinstance(node, nodes.definition_list):
        items = []
        for item in node.findall(nodes.definition_list_item):
            term = " ".join(t.astext() for t in item.findall(nodes.term))
            body = " ".join(d.astext() for d in item.findall(nodes.definition))
            items.append(f"- {' '.join(term.split())}: {' '.join(body.split())}")
        return Block("\n".join(items)) if items else None
    if isinstance(node, nodes.Admonition):
        kind = node.tagname.replace("_", " ").capitalize()
        body = " ".join(node.astext().split())
        return Block(body if kind == "Admonition" else f"{kind}: {body}")
    classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
    if "toctree-wrapper" in classes or any(c.startswith("sphx-glr-") for c in classes):
        return None  # navigation, gallery thumbnails and signatures: not content
    text = " ".join(node.astext().split())
    return Block(text) if text else None


def page_title(doctree: nodes.document) -> str:
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None and isinstance(section[0], nodes.title):
        return section[0].astext().strip()
    return ""


@dataclass
class Run:
    """Consecutive blocks of one section (no subsection or object in between)."""

    headings: list[str]  # page title > section > ...
    anchor: str  # id of the section ("" = top of page)
    blocks: list[Block]


@dataclass
class ObjectNode:
    """A node the walk does not enter (an API object), with the headings above it."""

    node: nodes.Element
    headings: list[str]


def walk(node: nodes.Element, headings: list[str], anchor: str,
         is_object: Callable[[nodes.Node], bool]) -> Iterator[Run | ObjectNode]:
    """Sections depth first, in reading order: runs of blocks and the object nodes between them."""
    blocks: list[Block] = []

    def run() -> Iterator[Run]:
        if blocks:
            yield Run(list(headings), anchor, list(blocks))
            blocks.clear()

    for child in node.children:
        if isinstance(child, nodes.section):
            yield from run()
            title = child[0].astext().strip() if isinstance(child[0], nodes.title) else ""
            yield from walk(child, headings + [title], (child.get("ids") or [anchor])[0], is_object)
        elif is_object(child):
            yield from run()
            yield ObjectNode(child, list(headings))
        elif isinstance(child, (nodes.compound, nodes.container)) and "toctree-wrapper" not in child.get("classes", []):
            yield from run()  # transparent wrapper: walk inside
            yield from walk(child, headings, anchor, is_object)
        else:
            block = block_text(child)
            if block is not None:
                blocks.append(block)
    yield from run()


def run_chunks(run: Run, *, doc: str, kind: str, count: CountTokens, budget: int, overlap: int) -> list[Chunk]:
    """The chunks of one run: its heading path as header, blocks packed to the budget."""
    header = " > ".join(h for h in run.headings if h)
    return [Chunk(doc=doc, anchor=run.anchor, headings=list(run.headings), kind=kind, text=text)
            for text in pack_blocks(header, run.blocks, count, budget, overlap)]
