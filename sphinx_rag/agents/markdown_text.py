"""Markdown text for the agent files (``markdown.py``'s twins of chunks, llms.txt,
``twins.py``'s twins of doctrees): where a twin lives, and page text escaped so that a
Markdown renderer shows it as the HTML page does."""

from __future__ import annotations

import re

from ..chunk import valid_text

__all__ = ["TWIN_VERSION", "twin_name", "escape_inline", "escape_prose", "escape_line", "code_span", "code_fence",
           "atx_heading"]

#: The version of the twins made from doctrees (``twins.py``): bumped when the same page
#: would give another twin (the twins a build kept are then made again).
TWIN_VERSION = 2


def twin_name(page_url: str) -> str:
    """Where a page's Markdown twin lives, relative to the site root (``markdown.py``'s module doc says where)."""
    path = page_url.partition("#")[0]
    return f"{path}index.html.md" if path == "" or path.endswith("/") else f"{path}.md"


# -- text ----------------------------------------------------------------------------------
#
# Page text is data, never Markdown: a renderer must show it as the HTML page does, so
# nothing written in it (``<script>``, ``![x](https://...)``, ``<https://...>``, ``&lt;``)
# becomes HTML, a link or an image. What would start a tag, an autolink, an entity, a
# link or an image, a code span or an escape is escaped; so is what would start a block
# (heading, quote, rule, table, fence). Code stays verbatim inside fences and code spans
# longer than any backtick run it holds. The links in these files are the ones made here
# (llms.txt's to each twin).

_LINE_START = re.compile(r"^(\s*)([#>|=+]|~(?=~~)|\d+[.)](?=\S))", re.M)
_RULE = re.compile(r"^(\s*)([-*_])(?=(\s*\2){2,}\s*$)", re.M)
_INLINE = re.compile(r"\\(?=[!-/:-@\[-`{-~]|\n|$)|<(?![\s]|$)"
                     r"|&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};)|[\[\]`]|!(?=\[)|(?<=\])\(")
_INLINE_ESCAPES = {"<": "&lt;", "&": "&amp;"}


def escape_inline(text: str) -> str:
    """Text inside a line, escaped (see above): a backslash before punctuation doubled,
    ``<`` and an entity's ``&`` as entities (no ``<script`` stays in the file), ``[``,
    ``]``, backticks, an image's ``!`` and a link's ``(`` with a backslash (no ``](``
    nor ``![`` stays either)."""
    return _INLINE.sub(lambda m: _INLINE_ESCAPES.get(m.group(), "\\" + m.group()), valid_text(text))


def escape_prose(text: str) -> str:
    """Prose as Markdown: inline escapes (``escape_inline``), and what would start a heading, a
    quote, a table, a fence or a rule escaped; list lines (``- item``) stay lists."""
    text = escape_inline(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _LINE_START.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", text)
    return _RULE.sub(lambda m: f"{m.group(1)}\\{m.group(2)}", text)


def escape_line(text: str) -> str:
    """Text on one line (a title, a caption, a description), escaped."""
    return escape_inline(" ".join(text.split()))


def code_span(text: str) -> str:
    text = " ".join(valid_text(text).split())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_fence(text: str, language: str = "") -> str:
    text = valid_text(text).replace("\r\n", "\n").replace("\r", "\n")
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    info = re.sub(r"[^\w+.#-]", "", str(language))  # a language name, nothing that ends the fence's line
    return f"{ticks}{info}\n{text}\n{ticks}"


def atx_heading(level: int, text: str) -> str:
    """An ATX heading: its text escaped, a leading ``#`` and a trailing ``#`` run too (the
    first would be text, the second a closing sequence)."""
    text = re.sub(r"(^|\s)(#+)$", r"\1\\\2", escape_line(text))
    return "#" * min(max(level, 1), 6) + " " + ("\\" + text if text.startswith("#") else text)
