"""One page's doctree -> its chunks: the single entry point of chunking.

A sphinx-gallery page is chunked from its example script (``gallery``). Any
other page is walked section by section (``narrative.walk``): runs of blocks
become narrative chunks, and each Python object documented by autodoc becomes
API chunks parsed from its raw docstring (``api``). A page with nothing but its
title (a toctree page, say) gets one chunk: the title. An object whose docstring
numpydoc cannot parse is chunked as narrative text under its name instead, with a
warning; an object written by hand (no autodoc) has its docstring read back from
its rendered doctree (``rendered``). Methods and attributes nested in a class are
chunked the same way, under the class.

Sphinx node classes are read here, but no Sphinx application is needed: the
raw docstrings and the gallery script are plain inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from docutils import nodes
from sphinx import addnodes

from . import Chunk, number_chunks, valid_text
from .api import DocstringError, api_chunks, link_card
from .gallery import gallery_chunks
from .narrative import CountTokens, ObjectNode, page_title, run_chunks, walk
from .rendered import rendered_docstring, rendered_signature

__all__ = ["chunk_page"]


def chunk_page(doctree: nodes.document, *, doc: str, count: CountTokens, budget: int, overlap: int,
               docstrings: dict[str, dict] | None = None, gallery_source: Path | None = None,
               source_path: str = "", warn: Callable[[str], None] = lambda message: None) -> list[Chunk]:
    """The numbered chunks of one page, in reading order.

    ``docstrings``: fullname -> ``{"docstring", "signature", "what", "location"}`` as
    autodoc gave them (raw, before numpydoc rewrote them). ``gallery_source``: the
    example script if the page is a sphinx-gallery example. ``warn`` gets one line
    per docstring that could not be parsed (``source_path`` names the page's file
    when the object's own location is unknown). Lone surrogates become U+FFFD (``valid_text``).
    """
    count = _valid_count(count)
    if gallery_source is not None:
        section_ids = {
            s[0].astext().strip(): s["ids"][0]
            for s in doctree.findall(nodes.section) if s.get("ids") and isinstance(s[0], nodes.title)
        }
        chunks = gallery_chunks(gallery_source, doc=doc, page_title=page_title(doctree), section_ids=section_ids,
                                count=count, budget=budget, overlap=overlap)
    else:
        walker = _PageWalker(doc, count, budget, overlap, docstrings or {}, source_path, warn, page_title(doctree))
        chunks = walker.chunks(doctree, headings=[], anchor="", kind="guide")
    chunks = [c for c in chunks if c.text.strip()]
    if not chunks and page_title(doctree):  # an empty or title-only page: its title is still findable
        section = next(iter(doctree.findall(nodes.section)))
        title = page_title(doctree)
        chunks = [Chunk(doc=doc, anchor=(section.get("ids") or [""])[0], headings=[title], kind="guide", text=title)]
    return number_chunks([_valid_chunk(c) for c in chunks])


def _valid_count(count: CountTokens) -> CountTokens:
    return lambda text: count(valid_text(text))


def _valid_chunk(chunk: Chunk) -> Chunk:
    chunk.text = valid_text(chunk.text)
    chunk.headings = [valid_text(h) for h in chunk.headings]
    chunk.display = [[valid_text(part) for part in block] for block in chunk.display]
    return chunk


def _python_object(node: nodes.Node) -> bool:
    """An autodoc'd Python object (``py:class``, ``py:method``, ...) with an id."""
    if not (isinstance(node, addnodes.desc) and node.get("domain") == "py"):
        return False
    return bool(_fullname(node))


def _fullname(desc: addnodes.desc) -> str:
    sig = next(iter(desc.findall(addnodes.desc_signature)), None)
    return (sig.get("ids") or [""])[0] if sig is not None else ""


class _PageWalker:
    """Narrative runs and API objects of one page (objects nest: a class holds methods)."""

    def __init__(self, doc, count, budget, overlap, docstrings, source_path, warn, title=""):
        self.doc, self.docstrings, self.source_path, self.warn = doc, docstrings, source_path, warn
        self.sizes = dict(count=count, budget=budget, overlap=overlap)
        self.title = title  # the page's: for text outside every section (MyST puts footnotes there)

    def chunks(self, node: nodes.Element, *, headings: list[str], anchor: str, kind: str) -> list[Chunk]:
        out: list[Chunk] = []
        for item in walk(node, headings, anchor, is_object=_python_object):
            if isinstance(item, ObjectNode):
                out += self.object_chunks(item.node, item.headings)
            else:
                if not any(item.headings) and self.title:
                    item.headings = [self.title]
                out += run_chunks(item, doc=self.doc, kind=kind, **self.sizes)
        return out

    def object_chunks(self, desc: addnodes.desc, headings: list[str]) -> list[Chunk]:
        """API chunks from the raw docstring, then those of nested objects."""
        fullname = _fullname(desc)
        owner = headings if headings and headings[-1] == fullname else headings + [fullname]
        content = next((c for c in desc.children if isinstance(c, addnodes.desc_content)), None)
        source = self.docstrings.get(fullname, {})
        raw, signature = source.get("docstring"), source.get("signature")
        if raw is None and content is not None:  # written by hand (no autodoc): read back from the doctree
            raw, signature = rendered_docstring(content), rendered_signature(desc)
        out: list[Chunk] = []
        if raw is not None:
            try:
                out = api_chunks(fullname, desc.get("objtype", source.get("what", "")), raw,
                                 signature, doc=self.doc, headings=owner)
            except DocstringError as exc:
                self.warn(f"[sphinx-rag] numpydoc could not parse the docstring of {fullname} "
                          f"({source.get('location') or self.source_path}): {exc}; "
                          "falling back to narrative chunks")
                raw = None
        if content is None:
            return out
        if raw is None:  # no docstring from autodoc, or unparsable: chunk the rendered text
            return out + self.chunks(content, headings=owner, anchor=fullname, kind="api")
        for nested in content.children:  # methods and attributes of a class
            if _python_object(nested):
                out += self.object_chunks(nested, headings)
        return link_card(out)
