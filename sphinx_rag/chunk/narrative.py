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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from docutils import nodes
from sphinx import addnodes

from . import Chunk
from .display import ELLIPSIS, Display, code_block, prose, rst_blocks, rst_inline

__all__ = ["Block", "Run", "ObjectNode", "pack", "pack_blocks", "walk", "run_chunks", "block_text", "page_title",
           "element_anchor"]


CountTokens = Callable[[str], int]
_SPACE_BEFORE_MARK = re.compile(r"\s+([.,;:!?)])")
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z0-9`\"'(\[*-])")
_SKIP = (
    nodes.comment, nodes.target, nodes.substitution_definition, nodes.system_message,
    nodes.raw, nodes.title, nodes.image, nodes.figure, nodes.field_list, nodes.docinfo,
)


class Block:
    """A piece of a section's body: prose or code (code is kept whole if it fits).

    ``text`` is what is embedded. How it is shown (``display.py``): ``shown`` "p" (plain
    prose), "code", or "rst" (a raw reST source: rendered by ``display.rst_blocks``), or
    ``blocks``, a display built from the doctree (a list item holding code, say).
    ``cut_before`` / ``cut_after``: the piece starts or ends inside a sentence.
    ``language``: code's language, as its source names it (``display.code_language``).
    ``anchor``: the block's own HTML id, when the author named it (``element_anchor``), else "".
    """

    __slots__ = ("text", "code", "shown", "blocks", "cut_before", "cut_after", "language", "anchor")

    def __init__(self, text: str, code: bool = False, shown: str = "", blocks: Display | None = None,
                 cut_before: bool = False, cut_after: bool = False, language: str = "", anchor: str = ""):
        self.text, self.code = text, code
        self.shown = shown or ("code" if code else "p")
        self.blocks, self.cut_before, self.cut_after = blocks, cut_before, cut_after
        self.language, self.anchor = language, anchor

    def piece(self, text: str, cut_before: bool = False, cut_after: bool = False) -> Block:
        """A part of this block, shown the same way (a doctree display does not split: plain)."""
        return Block(text, self.code, self.shown, None, cut_before, cut_after, self.language, self.anchor)

    def display(self) -> Display:
        if self.blocks is not None:
            out = [list(b) for b in self.blocks]
        elif self.shown == "code":
            return [code_block(self.text.strip("\n"), self.language)] if self.text.strip() else []
        elif self.shown == "rst":
            out = rst_blocks(self.text)
        else:
            out = [["p", prose(self.text)]] if self.text.strip() else []
        if out and self.cut_before and out[0][0] != "code":
            out[0][1] = f"{ELLIPSIS} {out[0][1]}"
        if out and self.cut_after and out[-1][0] != "code":
            out[-1][1] = f"{out[-1][1]} {ELLIPSIS}"
        return out

    def lead(self, text: str) -> Display:
        """The display of ``text``, sentences of this block repeated as the next chunk's lead."""
        shown = prose(rst_inline(text) if self.shown == "rst" else text)
        return [["lead", shown]] if shown else []

    def __repr__(self):
        return f"Block({self.text[:30]!r}, code={self.code})"


def _split_oversized(block: Block, room: int, count: CountTokens) -> list[Block]:
    """Split a block that cannot fit into pieces of at most ``room`` tokens: code at
    lines; a list or table (plain prose with line breaks) between its items, each too
    long item at its sentences; other prose at sentences."""
    by_line = block.code or (block.shown == "p" and "\n" in block.text)
    units = block.text.split("\n") if by_line else _SENTENCE_END.split(block.text)
    sep = "\n" if by_line else " "
    pieces: list[Block] = []
    cur: list[str] = []
    for unit in units:
        if cur and count(sep.join(cur + [unit])) > room:
            pieces.append(block.piece(sep.join(cur)))
            cur = []
        if not _fits(unit, room, count):
            if cur:
                pieces.append(block.piece(sep.join(cur)))
                cur = []
            if by_line and not block.code:  # one long list item: at its sentences
                pieces.extend(_split_oversized(block.piece(unit), room, count))
                continue
            windows = _token_windows(unit, room, count)  # no sentence or line break to cut at
            pieces.extend(block.piece(w, cut_before=k > 0, cut_after=k < len(windows) - 1)
                          for k, w in enumerate(windows))
            continue
        cur.append(unit)
    if cur:
        pieces.append(block.piece(sep.join(cur)))
    return [p for p in pieces if p.text.strip()]


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
    return [text for text, _display, _anchor in pack(header, blocks, count, budget, overlap)]


def pack(header: str, blocks: Iterable[Block], count: CountTokens, budget: int,
         overlap: int) -> list[tuple[str, Display, str]]:
    """``pack_blocks`` with each chunk's display (its blocks, the overlap as ``lead``, no header)
    and anchor: that of its first block ("" if that one has none)."""
    room = max(16, budget - count(header))
    queue: list[Block] = []
    for block in blocks:
        if not block.text.strip():
            continue
        queue.extend([block] if _fits(block.text, room, count) else _split_oversized(block, room, count))
    out: list[tuple[str, Display, str]] = []
    cur: list[Block] = []
    carry = ""
    carry_display: Display = []

    def joined(extra: list[Block]) -> str:
        return "\n\n".join(([carry] if carry else []) + [b.text for b in cur + extra])

    def emit():
        text = joined([])
        display = (carry_display if carry else []) + [d for b in cur for d in b.display()]
        out.append((f"{header}\n{text}" if header else text, display, cur[0].anchor))

    for block in queue:
        if cur and not _fits(joined([block]), room, count):
            emit()
            carry = _tail_overlap(cur[-1], overlap, count)
            carry_display = cur[-1].lead(carry) if carry else []
            cur = []
            if carry and not _fits(joined([block]), room, count):
                carry = ""
        cur.append(block)
    if cur:
        emit()
    return out


_CODE_NODES = (nodes.literal_block, nodes.doctest_block, nodes.math_block)


def _language(node: nodes.Element) -> str:
    """A code node's language: a doctest is ``pycon``, math ``math``, a literal block the
    language Sphinx highlights it in (``default`` is Python)."""
    if isinstance(node, nodes.doctest_block):
        return "pycon"
    if isinstance(node, nodes.math_block):
        return "math"
    return node.get("language") or ""


def _holds_code(node: nodes.Node) -> bool:
    return any(True for _ in node.findall(lambda n: isinstance(n, _CODE_NODES)))


def block_text(node: nodes.Node) -> Block | None:
    """Plain text of one body element (lists keep their bullets), and how it is shown."""
    block = _block_text(node)
    if block is not None and isinstance(node, nodes.Element) and not isinstance(node, _CODE_NODES) \
            and _holds_code(node):
        block.blocks = node_display(node)  # code inside a list item or a note stays code
    return block


def _words(node: nodes.Node) -> str:
    """The node's text on one line, without footnote and citation reference marks
    (``bugs.[2]`` would read "bugs.2") and raw markup (sphinx-design's dropdowns carry
    their chevron as raw SVG)."""
    def is_ref(n: nodes.Node) -> bool:
        return isinstance(n, (nodes.footnote_reference, nodes.citation_reference, nodes.raw))

    if not any(True for _ in node.findall(is_ref)):
        return " ".join(node.astext().split())
    node = node.deepcopy()
    for ref in list(node.findall(is_ref)):
        ref.parent.remove(ref)
    return _SPACE_BEFORE_MARK.sub(r"\1", " ".join(node.astext().split()))  # "CPython [1]." -> "CPython."


def _block_text(node: nodes.Node) -> Block | None:
    if isinstance(node, _SKIP):
        return None
    if isinstance(node, (nodes.literal_block, nodes.doctest_block)):
        return Block(node.astext().rstrip(), code=True, language=_language(node))
    if isinstance(node, nodes.math_block):
        return Block(node.astext().strip(), shown="code", language="math")
    if isinstance(node, (nodes.bullet_list, nodes.enumerated_list)):
        items = [_words(i) for i in node.children if isinstance(i, nodes.list_item)]
        return Block("\n".join(f"- {i}" for i in items)) if items else None
    if isinstance(node, addnodes.glossary):  # a definition list inside
        node = next(node.findall(nodes.definition_list), node)
    if isinstance(node, nodes.definition_list):
        items = []
        for item in node.children:  # a nested list stays inside its definition's words
            if not isinstance(item, nodes.definition_list_item):
                continue
            term = " ".join(_words(t) for t in item.children if isinstance(t, nodes.term))
            types = [_words(c) for c in item.children if isinstance(c, nodes.classifier)]  # "term : bool"
            body = " ".join(_words(d) for d in item.children if isinstance(d, nodes.definition))
            kinds = f" ({', '.join(types)})" if types else ""
            items.append(f"- {term}{kinds}: {body}")
        return Block("\n".join(items)) if items else None
    if isinstance(node, nodes.table):  # a row per line, cells apart (the header row first)
        rows = [" | ".join(_words(e) for e in row.findall(nodes.entry)) for row in node.findall(nodes.row)]
        return Block("\n".join(r for r in rows if r.strip(" |"))) if rows else None
    if isinstance(node, (nodes.footnote, nodes.citation)):  # its text, not its number
        text = " ".join(_words(c) for c in node.children if not isinstance(c, nodes.label))
        return Block(text) if text else None
    if isinstance(node, nodes.Admonition):
        label = admonition_label(node)
        body = " ".join(w for w in (_words(c) for c in node.children if not isinstance(c, nodes.title)) if w)
        return Block(f"{label}: {body}" if label and body else body or label) if body or label else None
    classes = node.get("classes", []) if isinstance(node, nodes.Element) else []
    if "toctree-wrapper" in classes or "contents" in classes or any(c.startswith("sphx-glr-") for c in classes):
        return None  # navigation (toctrees, a page's local contents), gallery thumbnails: not content
    text = _words(node)
    return Block(text) if text else None


#: Elements whose author-given id a chunk links to instead of its section's.
_ANCHORED = (nodes.table, nodes.literal_block, nodes.doctest_block)


def element_anchor(node: nodes.Node) -> str:
    """The HTML id of a table or code block the author named (``:name:``, or a label
    before it), "" otherwise. Sphinx's own ids (``id3`` of a captioned code block) change
    when an earlier one is added: a link to them would not last."""
    if isinstance(node, nodes.Element) and node.get("names") and node.get("ids") and (
            isinstance(node, _ANCHORED) or "literal-block-wrapper" in node.get("classes", [])):
        return node["ids"][0]
    return ""


def admonition_label(node: nodes.Admonition) -> str:
    """What a reader sees before an admonition's words, as the page shows it: its title
    (a titled admonition, Sphinx's todo), "See also", "Note"; nothing where the words say
    it already ("Changed in version 1.3: ...") or where they are not prose (a grammar)."""
    if node.children and isinstance(node[0], nodes.title):
        return _words(node[0])
    if isinstance(node, (nodes.admonition, addnodes.versionmodified, addnodes.productionlist)):
        return ""
    if isinstance(node, addnodes.seealso):
        return "See also"
    return node.tagname.replace("_", " ").capitalize()


def node_display(node: nodes.Node) -> Display:
    """The display of a body element that holds code: its prose and code blocks in order
    (list items keep their bullet, a note its "Note:" label)."""
    if isinstance(node, _SKIP):
        return []
    if isinstance(node, _CODE_NODES):
        text = node.astext().rstrip() if not isinstance(node, nodes.math_block) else node.astext().strip()
        return [code_block(text.strip("\n"), _language(node))] if text.strip() else []
    if not _holds_code(node):
        block = _block_text(node)
        return block.display() if block is not None else []
    out: Display = []
    label = ""
    if isinstance(node, nodes.Admonition):
        label = admonition_label(node)
        label = label + ": " if label else ""
    bullet = isinstance(node, nodes.list_item) or isinstance(node, nodes.definition_list_item)
    for child in node.children:
        if not (label and isinstance(child, nodes.title)):  # the title is the label
            out += node_display(child)
    prefix = ("- " if bullet else "") + label
    if prefix:
        if out and out[0][0] == "p":
            out[0][1] = prefix + out[0][1]
        else:
            out.insert(0, ["p", prefix.strip()])
    return out


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


def glossary_runs(glossary: nodes.Element, headings: list[str], anchor: str) -> Iterator[Run]:
    """A glossary: one run per term, titled by the term and linked to its own anchor
    (``#term-slotted-class``): a reader lands on the term, not at the top of a glossary
    of hundreds (scikit-learn's), and each definition is ranked on its own."""
    entries = next(glossary.findall(nodes.definition_list), None)
    for item in entries.children if entries is not None else []:
        if not isinstance(item, nodes.definition_list_item):
            continue
        terms = [t for t in item.children if isinstance(t, nodes.term)]
        name = ", ".join(w for w in (_words(t) for t in terms) if w)
        term_anchor = next((i for t in terms for i in t.get("ids", [])), "") or anchor
        blocks = [b for d in item.children if isinstance(d, nodes.definition)
                  for b in (block_text(c) for c in d.children) if b is not None]
        for b in blocks:
            b.anchor = b.anchor or term_anchor
        if name and blocks:
            yield Run(headings + [name], term_anchor, blocks)


def walk(node: nodes.Element, headings: list[str], anchor: str,
         is_object: Callable[[nodes.Node], bool]) -> Iterator[Run | ObjectNode]:
    """Sections depth first, in reading order: runs of blocks and the object nodes between them.

    Wrappers (containers: sphinx-design's tab sets, grids and cards, a code block with
    its caption) are walked through: their blocks belong to the run around them. A tab's
    label (sphinx-design's, or any ARIA ``tab`` of a ``tablist``, as sphinx-tabs writes
    them) opens the first block of its panel ("pip: Run pip install ...") instead of
    standing alone as a block of one word.
    """
    blocks: list[Block] = []
    labels: dict[str, str] = {}  # ARIA tab id -> its label (sphinx-tabs lists them before the panels)
    pending = [""]  # the label of the tab whose panel comes next

    def run() -> Iterator[Run]:
        if blocks:
            yield Run(list(headings), anchor, list(blocks))
            blocks.clear()

    def add(block: Block, anchor: str):
        block.anchor = block.anchor or anchor
        label, pending[0] = pending[0], ""
        if label and (block.code or block.blocks is not None):
            blocks.append(Block(f"{label}:", anchor=block.anchor))
        elif label:
            block.text = f"{label}: {block.text}"
        blocks.append(block)

    def visit(parent: nodes.Element, anchor: str = "") -> Iterator[Run | ObjectNode]:
        """``anchor``: the id of a named code block's wrapper (its caption) being walked."""
        for child in parent.children:
            role = child.get("role") if isinstance(child, nodes.Element) else None
            if isinstance(child, nodes.section):
                yield from run()
                title = child[0].astext().strip() if isinstance(child[0], nodes.title) else ""
                yield from walk(child, headings + [title], (child.get("ids") or [anchor])[0], is_object)
            elif is_object(child):
                yield from run()
                yield ObjectNode(child, list(headings))
            elif child.tagname == "sd_tab_label":
                pending[0] = _words(child)
            elif role == "tablist":
                labels.update({tab["ids"][0]: _words(tab) for tab in child.children
                               if isinstance(tab, nodes.Element) and tab.get("role") == "tab" and tab.get("ids")})
            elif role == "tabpanel":
                pending[0] = labels.get(child.get("aria-labelledby", ""), "")
                yield from visit(child)
                pending[0] = ""  # a panel with no text: its label is not the next block's
            elif isinstance(child, addnodes.glossary):
                yield from run()
                yield from glossary_runs(child, headings, anchor)
            elif isinstance(child, (nodes.compound, nodes.container)) and "toctree-wrapper" not in child.get("classes", []):
                yield from visit(child, element_anchor(child) or anchor)
                pending[0] = ""
            else:
                block = block_text(child)
                if block is not None:
                    add(block, element_anchor(child) or anchor)

    yield from visit(node)
    yield from run()


def run_chunks(run: Run, *, doc: str, kind: str, count: CountTokens, budget: int, overlap: int) -> list[Chunk]:
    """The chunks of one run: its heading path as header, blocks packed to the budget. A chunk
    that starts in a named table or code block links to it, any other to its section."""
    header = " > ".join(h for h in run.headings if h)
    return [Chunk(doc=doc, anchor=anchor or run.anchor, headings=list(run.headings), kind=kind, text=text,
                  display=display)
            for text, display, anchor in pack(header, run.blocks, count, budget, overlap)]
