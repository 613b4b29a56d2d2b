"""Markdown text for what agents read (``markdown.py``'s twins of chunks, llms.txt,
``twins.py``'s twins of doctrees, the MCP tools' answers): where a twin lives, and page
text escaped so that a Markdown renderer shows it as the HTML page does."""

from __future__ import annotations

import re
from urllib.parse import quote

from ..chunk import valid_text

__all__ = ["TWIN_VERSION", "twin_name", "WHITESPACE", "collapse", "escape_inline", "escape_prose", "escape_line",
           "code_span", "code_fence", "atx_heading", "markdown_url"]

#: The version of the twins made from doctrees (``twins.py``): bumped when the same page
#: would give another twin (the twins a build kept are then made again).
TWIN_VERSION = 3


def twin_name(page_url: str) -> str:
    """Where a page's Markdown twin lives, relative to the site root (``markdown.py``'s module doc says where)."""
    path = page_url.partition("#")[0]
    return f"{path}index.html.md" if path == "" or path.endswith("/") else f"{path}.md"


# -- text ----------------------------------------------------------------------------------
#
# Page text is data, never Markdown: a renderer must show it as the HTML page does, so
# nothing written in it (``<script>``, ``![x](https://...)``, ``<https://...>``, ``&lt;``,
# ``__init__``, ``**kwargs``) becomes HTML, a link, an image or emphasis. ``escape_inline``
# is the one escaping of page text and titles, in every file and answer an agent reads
# (twins, llms.txt, llms-full.txt, the MCP tools' answers; js/src/ui/markdown_text.js is
# the same for WebMCP, pinned by tests/fixtures/agent_markdown.json). It escapes each
# character on its own, never by what follows it in another piece of text: a page's text
# comes in pieces (docutils' nodes) that are escaped apart and joined, so ``<`` and a URL
# in the next node must not make an autolink. ``prose``/``line``/``heading`` add what would
# start a block. Code stays verbatim inside fences and code spans longer than any backtick
# run it holds. The only links in these files are the ones made here (llms.txt's to each
# twin, a twin's to another page's). Regular expressions are written to mean the same in
# Python and JavaScript (ASCII classes, no multiline flag, whitespace named).

#: What Python's ``str.split()`` and ``str.isspace`` take for whitespace (JavaScript's ``\s``
#: differs: written out so that both collapse the same characters).
WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_WS = re.compile(f"[{WHITESPACE}]+")

_INLINE = re.compile(
    r"\\(?=[!-/:-@\[-`{-~\n]|\Z)"  # a backslash that would escape what follows (or a line break)
    r"|[<\[\]`*~]"  # a tag, an autolink, a comment; a link or an image; a code span; emphasis; strikethrough
    r"|&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{0,31};|\Z)"  # an entity (or its start)
    r"|!(?=\[|\Z)|(?<=\])\("  # an image's ! (before a link made here too), a link's (
    r"|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])"  # _ that may open or close emphasis: not inside a word (a_b)
)
_INLINE_ESCAPES = {"<": "&lt;", "&": "&amp;"}
_LINE_START = re.compile(r"(^|\n)([ \t]*)([#>|=+]|[0-9]+[.)](?=[^ \t\n]))")  # a heading, quote, table...
_DASHES = re.compile(r"(^|\n)([ \t]*)-(?=[- \t]*(?:\n|\Z))")  # a rule, or a setext heading's underline


def collapse(text: str) -> str:
    """``text`` on one line: whitespace runs (``WHITESPACE``) as one space, none at the ends."""
    return _WS.sub(" ", text).strip(" ")


def escape_inline(text: str) -> str:
    """Page text inside a line, escaped (see above): a backslash before punctuation doubled;
    ``<`` always and an entity's ``&`` as entities (no ``<script`` nor ``<http:`` stays in the
    file); ``[``, ``]``, backticks, ``*``, ``~``, an image's ``!``, a link's ``(`` and an
    ``_`` not between two letters or digits with a backslash (``cross_val_score`` stays as
    it is, ``__init__`` and ``**kwargs`` are escaped)."""
    return _INLINE.sub(lambda m: _INLINE_ESCAPES.get(m.group(), "\\" + m.group()), valid_text(text))


def escape_prose(text: str) -> str:
    """Prose as Markdown: inline escapes (``escape_inline``), and what would start a heading, a
    quote, a table, a rule or a setext underline escaped; list lines (``- item``, ``1. item``)
    stay lists."""
    text = escape_inline(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _LINE_START.sub(lambda m: f"{m.group(1)}{m.group(2)}\\{m.group(3)}", text)
    return _DASHES.sub(lambda m: f"{m.group(1)}{m.group(2)}\\-", text)


def escape_line(text: str) -> str:
    """Text on one line (a title, a caption, a description), escaped."""
    return escape_inline(collapse(text))


def code_span(text: str) -> str:
    text = collapse(valid_text(text))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_fence(text: str, language: str = "") -> str:
    text = valid_text(text).replace("\r\n", "\n").replace("\r", "\n")
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    info = re.sub(r"[^A-Za-z0-9_+.#-]", "", str(language))  # a language name, nothing that ends the fence's line
    return f"{ticks}{info}\n{text}\n{ticks}"


def atx_heading(level: int, text: str) -> str:
    """An ATX heading: its text escaped, a leading ``#`` and a trailing ``#`` run too (the
    first would be text, the second a closing sequence)."""
    text = re.sub(r"(^| )(#+)\Z", r"\1\\\2", escape_line(text))
    return "#" * min(max(level, 1), 6) + " " + ("\\" + text if text.startswith("#") else text)


#: What a URL shown in an answer keeps as it is (RFC 3986's characters but ``[`` and ``]``,
#: and ``%``); anything else is percent-encoded, so that no URL makes a tag, a link or an
#: image, nor ends an HTML comment it is written in.
URL_SAFE = "-._~:/?#@!$&'()*+,;=%"


def markdown_url(url: str) -> str:
    """A URL written as text in an answer (``URL: ...``, ``<!-- ... -->``), percent-encoded
    where Markdown or HTML would read it (the same URL to a browser or an HTTP client)."""
    return quote(valid_text(url), safe=URL_SAFE)
