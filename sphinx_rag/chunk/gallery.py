"""sphinx-gallery example chunks, from the example's own source script.

sphinx-gallery's parser splits a script into text and code blocks. A simple
example gives one text chunk and code chunk(s); a tutorial-like example (text
blocks with section headings between code cells) gives one chunk per section,
holding its text and code together. Every chunk header names the example. The text cells are
raw reST: their display renders it (``display.rst_blocks``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from sphinx_gallery.py_source_parser import split_code_and_text_blocks

from . import Chunk
from .narrative import Block, pack

__all__ = ["ExampleSection", "example_sections", "gallery_chunks"]

_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")


class ExampleSection:
    """Title (None for the untitled tail of a simple example) and its blocks."""

    def __init__(self, title: str | None, blocks: list[Block]):
        self.title, self.blocks = title, blocks


def _split_headings(text: str) -> list[tuple[str | None, str]]:
    """rst text -> [(heading or None, body)]: overlines dropped, titles lifted out."""
    lines = text.strip("\n").split("\n")
    parts: list[tuple[str | None, list[str]]] = [(None, [])]
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if _UNDERLINE.match(line) and nxt.strip() and i + 2 < len(lines) and _UNDERLINE.match(lines[i + 2]):
            i += 1  # overline: the title and underline follow
            continue
        if line.strip() and not _UNDERLINE.match(line) and _UNDERLINE.match(nxt):
            parts.append((line.strip(), []))
            i += 2
            continue
        parts[-1][1].append(line)
        i += 1
    out = [(title, "\n".join(body).strip()) for title, body in parts]
    return [p for p in out if p[0] is not None or p[1]]


def example_sections(source: str | Path) -> tuple[str, bool, list[ExampleSection]]:
    """(example title, tutorial-like?, sections) of one gallery script."""
    _conf, raw_blocks = split_code_and_text_blocks(str(source))[:2]
    first = _split_headings(raw_blocks[0].content) if raw_blocks else []
    title = next((t for t, _ in first if t), Path(source).stem)
    intro = Block("\n\n".join(body for _, body in first if body), shown="rst")
    rest = raw_blocks[1:]
    tutorial = any(b.type == "text" and any(t for t, _ in _split_headings(b.content)) for b in rest)

    if not tutorial:
        texts = [intro] + [Block(b.content.strip(), shown="rst") for b in rest if b.type == "text"]
        code = [Block(b.content.strip("\n"), code=True, language="python") for b in rest if b.type == "code"]
        return title, False, [ExampleSection(title, texts), ExampleSection(None, code)]

    sections = [ExampleSection(title, [intro])]
    for b in rest:
        if b.type == "code":
            sections[-1].blocks.append(Block(b.content.strip("\n"), code=True, language="python"))
            continue
        for heading, body in _split_headings(b.content):
            if heading:
                sections.append(ExampleSection(heading, []))
            if body:
                sections[-1].blocks.append(Block(body, shown="rst"))
    return title, True, sections


def gallery_chunks(
    source: str | Path, *, doc: str, page_title: str, section_ids: dict[str, str],
    count: Callable[[str], int], budget: int, overlap: int,
) -> list[Chunk]:
    """The chunks of one example page, in page order; headers name the example.

    ``page_title`` and ``section_ids`` (section title -> HTML id) come from the
    rendered page, so each chunk links to its section.
    """
    title, tutorial, sections = example_sections(source)
    chunks = []
    for section in sections:
        if tutorial:
            header = title if section.title == title else f"{title} > {section.title}"
        else:
            header = f"{title} > Example text" if section.title else f"{title} > Example code"
        anchor = section_ids.get(section.title or "", section_ids.get(page_title, ""))
        headings = [page_title] if section.title in (None, page_title) else [page_title, section.title]
        chunks += [Chunk(doc=doc, anchor=anchor, headings=headings, kind="example", text=text, display=display)
                   for text, display, _anchor in pack(header, section.blocks, count, budget, overlap)]
    return chunks
