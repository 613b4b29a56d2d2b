"""The plain text of a built HTML page's main content, with the offsets of its anchors.

Baselines that ignore document structure (``fixed_baseline.py``) start from what a
reader sees, not from sphinx-rag's chunks: the text of the page body (theme chrome,
scripts and the "¶" header links left out), one line per block element. Each element
``id`` in the body is recorded with the character offset where it starts, so a piece
of the text can be given the URL (page#anchor) of the section or object it lies in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

__all__ = ["PageText", "page_text", "read_page_text"]

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCK = {"p", "div", "section", "article", "li", "dt", "dd", "pre", "h1", "h2", "h3", "h4", "h5", "h6", "tr",
         "table", "ul", "ol", "dl", "blockquote", "figure", "figcaption", "caption", "br", "hr"}
SKIP = {"script", "style", "template", "nav"}


@dataclass
class PageText:
    text: str
    anchors: list[tuple[int, str]] = field(default_factory=list)  # (offset, id), ascending offsets

    def anchor_at(self, offset: int) -> str | None:
        """The id of the last anchor starting at or before ``offset`` (else the first one)."""
        current = self.anchors[0][1] if self.anchors else None
        for at, name in self.anchors:
            if at > offset:
                break
            current = name
        return current

    def anchors_in(self, start: int, end: int) -> list[str]:
        """Ids of the anchors that start strictly inside (start, end), in order."""
        return [name for at, name in self.anchors if start < at < end]


def _is_main(tag: str, attrs: dict, prefer_article: bool) -> bool:
    if prefer_article:
        return "bd-article" in (attrs.get("class") or "").split()  # pydata-sphinx-theme
    return attrs.get("role") == "main"  # basic, alabaster, sphinx_rtd_theme, ...


class _MainText(HTMLParser):
    def __init__(self, prefer_article: bool):
        super().__init__(convert_charrefs=True)
        self.prefer_article = prefer_article
        self.depth = 0  # open elements inside the main one (0: outside)
        self.done = False
        self.skip_depth = 0  # > 0 inside an element whose text is skipped
        self.pre = 0
        self.parts: list[str] = []
        self.length = 0
        self.anchors: list[tuple[int, str]] = []

    def _emit(self, text: str, verbatim: bool = False):
        if not text:
            return
        if verbatim:
            pass
        elif text == "\n":
            if not self.parts or self.parts[-1].endswith("\n"):
                return
        elif text.startswith(" ") and (not self.parts or self.parts[-1].endswith((" ", "\n"))):
            text = text[1:]
            if not text:
                return
        self.parts.append(text)
        self.length += len(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.done:
            return
        if not self.depth:
            if _is_main(tag, attrs, self.prefer_article) and tag not in VOID:
                self.depth = 1
            return
        if tag not in VOID:
            self.depth += 1
            if self.skip_depth:
                self.skip_depth += 1
                return
            if tag in SKIP or (tag == "a" and "headerlink" in (attrs.get("class") or "").split()):
                self.skip_depth = 1
                return
        if self.skip_depth:
            return
        if attrs.get("id"):
            self.anchors.append((self.length, attrs["id"]))
        if tag == "pre":
            self.pre += 1
        if tag in BLOCK:
            self._emit("\n")

    def handle_startendtag(self, tag, attrs):
        if self.depth and not self.skip_depth and tag in BLOCK:
            self._emit("\n")

    def handle_endtag(self, tag):
        if not self.depth or self.done or tag in VOID:
            return
        self.depth -= 1
        if self.skip_depth:
            self.skip_depth -= 1
            return
        if self.depth == 0:
            self.done = True
            return
        if tag == "pre":
            self.pre = max(0, self.pre - 1)
        if tag in BLOCK:
            self._emit("\n")

    def handle_data(self, data):
        if not self.depth or self.done or self.skip_depth:
            return
        if self.pre:
            for i, line in enumerate(data.split("\n")):
                if i:
                    self._emit("\n")
                self._emit(line, verbatim=True)
        else:
            self._emit(re.sub(r"\s+", " ", data))


def page_text(html: str) -> PageText:
    """Text and anchors of the page's main content (empty if the theme marks none)."""
    for prefer_article in (True, False):
        parser = _MainText(prefer_article)
        parser.feed(html)
        parser.close()
        if parser.parts or parser.done:
            break
    text = "".join(parser.parts)
    stripped = text.lstrip()
    shift = len(text) - len(stripped)
    anchors = [(max(0, at - shift), name) for at, name in parser.anchors]
    return PageText(stripped.rstrip(), anchors)


def read_page_text(path: Path) -> PageText:
    return page_text(Path(path).read_text(encoding="utf-8"))
