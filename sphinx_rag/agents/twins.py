"""A page's Markdown twin from its resolved doctree: what the HTML page shows, for agents.

The chunks' displays (``chunk/display.py``) are plain text made for ranking and passages:
they hold no links, and leave out what is not prose (an autosummary table, a toctree).
A twin is read whole by an agent that starts from it, so it is made from the page itself
at ``doctree-resolved`` (``extension.py``), node by node:

- sections as headings at their level (the page title ``#``); an API object (``desc``)
  as a heading one level under its section (unless the section is named after it) and
  its signature fenced;
- code fenced with its language, doctests as ``pycon``, math ``$...$`` inline and in a
  ``math`` fence as a block; inline code in backticks;
- lists, definition and field lists as lists (a term or field name in bold), tables as
  pipe tables, an autosummary table as a list ``- [name](its twin)(signature): summary``;
- admonitions as a quote whose first line is the label (``> **Note**``);
- a toctree (hidden ones too: they are the page's navigation) as a list of links to
  the twins of its pages, its caption in bold.

Links: only those Sphinx made within the site (``internal`` references, toctree entries)
are links, and only to another page's twin; they are left as placeholders here and
resolved by ``resolve`` once the site's twins are known (a link to a page without a twin
is its text; a toctree entry to one is left out). Page text is escaped as in
``markdown.py``: nothing a page says becomes HTML, a link or an image.

A ``Twin`` is JSON (``to_json``): the build keeps each page's twin in the doctree
directory (``load_twins``/``save_twins``), so that an incremental build rewrites the
twins of the pages it writes only.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlsplit

from docutils import nodes

from ..chunk import valid_text
from ..chunk.display import code_language
from .markdown_text import TWIN_VERSION, code_fence, code_span, escape_inline, twin_name

__all__ = ["TWIN_VERSION", "TWINS_FILE", "Twin", "page_twin", "toctree_children", "resolve", "load_twins",
           "save_twins"]

TWINS_FILE = "sphinx_rag_twins.json"  # in the doctree directory

_MARK = "\x00"  # around a link's number in a twin's text: \x00<n>\x00
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
_DROP = "\x01"  # a line holding this after resolving is removed (a toctree entry without twin)
_SITE = "https://site.invalid/"
_HREF_SAFE = "/:#@!$&*+,;=~-._'"  # what stays as it is in a link's URL (not parentheses, spaces, %)  # a base to resolve a page's relative links against

_SKIPPED = ("comment", "target", "index", "substitution_definition", "system_message", "pending", "raw", "meta",
            "tabular_col_spec", "autosummary_toc", "image", "highlightlang", "toctree_placeholder",
            "only", "pending_xref_condition")
_ADMONITION_LABELS = {"seealso": "See also", "admonition": "", "todo_node": "Todo"}
_DOMAIN_LANGUAGE = {"py": "python", "c": "c", "cpp": "cpp", "js": "javascript"}


@dataclass
class Twin:
    """One page's twin before its links are resolved: ``blocks`` of Markdown (a link is
    ``\\x00n\\x00``, ``links[n]`` = [the target page's URL from the site root, the link's
    text, 1 if the text stays when the target has no twin, 0 if its line goes]), the
    page's ``url`` (from the site root), ``title`` and ``description`` (its first
    paragraph, plain text, for llms.txt)."""

    url: str
    title: str = ""
    description: str = ""
    blocks: list[str] = field(default_factory=list)
    links: list[list] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"url": self.url, "title": self.title, "description": self.description, "blocks": self.blocks,
                "links": self.links}

    @classmethod
    def from_json(cls, data: dict) -> Twin:
        return cls(url=str(data["url"]), title=str(data["title"]), description=str(data["description"]),
                   blocks=[str(b) for b in data["blocks"]], links=[list(x) for x in data["links"]])


# -- text -------------------------------------------------------------------------------------

_BLOCK_START = re.compile(r"^([#>+=|~-]|\d{1,9}[.)](?=\s|$)|[*_](?=\s|$))", re.M)
_RULE = re.compile(r"^([-*_])(?=(\s*\1){2,}\s*$)", re.M)
_SPACES = re.compile(r"[ \t\r\n\f\v]+")


def _text(text: str) -> str:
    """Page text inside a line, escaped (``markdown_text.escape_inline``); no NUL (the links'
    marks: a Text node is read with ``astext()``, which has none)."""
    return escape_inline(text.replace(_MARK, "\ufffd").replace(_DROP, "\ufffd"))


def _paragraph(markdown: str) -> str:
    """Inline Markdown as a paragraph: whitespace collapsed (as the HTML page shows it),
    and what would start another block at its start escaped (a ``#``, ``>``, a list
    marker, a rule, a table row): only text can put those there."""
    text = _SPACES.sub(" ", markdown).strip()
    return _escape_start(text)


def _escape_start(text: str) -> str:
    text = _RULE.sub(lambda m: "\\" + m.group(1), text)
    return _BLOCK_START.sub(lambda m: "\\" + m.group(1), text)


def _math(text: str) -> str:
    """Inline math as ``$...$``: its TeX as written but for what a CommonMark renderer
    would make a tag, an entity, a link, an image or a code span of (harmless in TeX)."""
    tex = _SPACES.sub(" ", valid_text(text)).strip().replace(_MARK, "").replace(_DROP, "")
    tex = tex.replace("<", "\\lt ").replace("`", "'")
    tex = re.sub(r"&(?=#?\w+;)", "& ", tex).replace("](", "] (").replace("![", "! [")
    return f"${tex}$" if tex else ""


def atx_heading(level: int, markdown: str) -> str:
    text = _SPACES.sub(" ", markdown).strip()
    text = re.sub(r"(^|\s)(#+)$", r"\1\\\2", text)
    return "#" * min(max(level, 1), 6) + " " + ("\\" + text if text.startswith("#") else text)


def _indent(text: str, first: str, rest: str) -> str:
    lines = text.split("\n")
    return "\n".join([first + lines[0]] + [(rest + line) if line else "" for line in lines[1:]])


def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def _class_name(node) -> str:
    return type(node).__name__


# -- the renderer -----------------------------------------------------------------------------

class _Renderer:
    def __init__(self, url: str, entry: Callable[[str], tuple[str, str, list[str]] | None]):
        self.url = url.partition("#")[0]
        self.entry = entry  # docname -> (title, page URL from the site root, docs its toctrees include),
        # None: not a page with a twin (unknown, or left out of the index)
        self.links: list[list] = []

    # links
    def _link(self, target: str, text: str, keep: bool) -> str:
        self.links.append([target, text, 1 if keep else 0])
        return f"{_MARK}{len(self.links) - 1}{_MARK}"

    def _target(self, refuri: str) -> str | None:
        """A reference's page, as a URL from the site root (None: another site's, or this page)."""
        if not refuri or refuri.startswith("#"):
            return None
        joined = urlsplit(urljoin(_SITE + quote(self.url, safe="/%"), refuri))
        if f"{joined.scheme}://{joined.netloc}/" != _SITE:
            return None
        path = unquote(joined.path)[1:]
        return None if path == self.url else path

    # inline
    def inline(self, node, links: bool = True) -> str:
        if isinstance(node, nodes.Text):
            return _text(node.astext())  # as docutils reads it: str(node) keeps each \x as NUL + x
        name = _class_name(node)
        if name in _SKIPPED or isinstance(node, (nodes.image, nodes.raw, nodes.system_message)):
            return ""
        if isinstance(node, nodes.literal):
            text = node.astext()
            return code_span(text) if text.strip() else ""
        if isinstance(node, nodes.math):
            return _math(node.astext())
        if isinstance(node, (nodes.footnote_reference, nodes.citation_reference)):
            return _text(f"[{node.astext()}]")
        if isinstance(node, nodes.strong):
            return self._wrap("**", node, links)
        if isinstance(node, (nodes.emphasis, nodes.title_reference)):
            return self._wrap("*", node, links)
        if isinstance(node, nodes.reference):
            text = self.children_inline(node, links=False)
            target = self._target(node.get("refuri", "")) if node.get("internal") else None
            if links and target is not None and _SPACES.sub("", text):
                return self._link(target, _SPACES.sub(" ", text).strip(), keep=True)
            return text
        if isinstance(node, nodes.Element) and not isinstance(node, (nodes.Inline, nodes.TextElement)):
            return " ".join(self.inline(c, links) for c in node.children)  # a block inside a line: its text
        return self.children_inline(node, links)

    def children_inline(self, node, links: bool = True) -> str:
        return "".join(self.inline(child, links) for child in node.children)

    def _wrap(self, mark: str, node, links: bool) -> str:
        inner = _SPACES.sub(" ", self.children_inline(node, links))
        core = inner.strip()
        if not core:
            return inner
        lead, trail = inner[: len(inner) - len(inner.lstrip())], inner[len(inner.rstrip()):]
        return f"{lead}{mark}{core}{mark}{trail}"

    # blocks
    def blocks(self, node, level: int) -> list[str]:
        """The Markdown blocks of ``node`` (``level``: the heading level of its section)."""
        out: list[str] = []
        for child in node.children:
            out += self.block(child, level)
        return [b for b in out if b.strip()]

    def block(self, node, level: int) -> list[str]:
        if isinstance(node, nodes.Text):
            text = _paragraph(_text(node.astext()))
            return [text] if text else []
        name = _class_name(node)
        if name == "autosummary_table":  # a comment node (the LaTeX writer skips it), its table shown in HTML
            return self.blocks(node, level)
        if name in _SKIPPED or isinstance(node, (nodes.comment, nodes.target, nodes.raw, nodes.system_message,
                                                 nodes.substitution_definition, nodes.image)):
            return []
        if name == "toctree":
            return self.toctree(node)
        if name == "start_of_file" and self.entry(node.get("docname", "")) is None:
            return []  # singlehtml: a page left out of the index is left out of the twin too
        if isinstance(node, nodes.section):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            head = [atx_heading(level, self.children_inline(title, links=False))] if title is not None else []
            return head + self.blocks(node, level + 1)
        if isinstance(node, (nodes.title, nodes.subtitle)):
            return []  # a section's own title is its heading; a topic's/admonition's is read there
        if isinstance(node, (nodes.paragraph, nodes.rubric, nodes.caption, nodes.attribution)):
            text = _paragraph(self.children_inline(node))
            if isinstance(node, nodes.rubric) and text:
                text = f"**{text}**"
            return [text] if text else []
        if isinstance(node, (nodes.literal_block, nodes.doctest_block)) or name == "code_links_block":
            return [self.code(node)]
        if isinstance(node, nodes.math_block):
            return [code_fence(node.astext().strip("\n"), "math")]
        if isinstance(node, nodes.bullet_list):
            return [self.list(node, lambda n: "- ")]
        if isinstance(node, nodes.enumerated_list):
            start = int(node.get("start", 1) or 1)
            return [self.list(node, lambda n: f"{start + n}. ")]
        if isinstance(node, nodes.definition_list):
            return [self.definitions(node)]
        if isinstance(node, nodes.field_list):
            return self.fields(node, level)
        if isinstance(node, nodes.table):
            return [self.table(node)]
        if isinstance(node, nodes.block_quote):
            inner = "\n\n".join(self.blocks(node, level))
            return [_quote(inner)] if inner else []
        if isinstance(node, nodes.line_block):
            lines = [_escape_start(_SPACES.sub(" ", self.children_inline(line)).strip())
                     for line in node.findall(nodes.line)]
            lines = [x for x in lines if x]
            return ["  \n".join(lines)] if lines else []
        if isinstance(node, nodes.transition):
            return ["---"]
        if isinstance(node, (nodes.footnote, nodes.citation)):
            label = next((c.astext() for c in node.children if isinstance(c, nodes.label)), "")
            body = [b for c in node.children if not isinstance(c, nodes.label) for b in self.block(c, level)]
            if body and label:
                body[0] = _text(f"[{label}] ") + body[0]
            return body
        if name == "desc":
            return self.desc(node, level)
        if name == "versionmodified" or isinstance(node, nodes.Admonition):
            return self.admonition(node, level) if name != "versionmodified" else self.blocks_or_text(node, level)
        if isinstance(node, nodes.topic) and "contents" in node.get("classes", []):
            return []  # a local table of contents: the twin's own headings
        if isinstance(node, (nodes.topic, nodes.sidebar)):
            return self.admonition(node, level)
        if isinstance(node, nodes.figure):
            return [b for c in node.children if isinstance(c, (nodes.caption, nodes.legend))
                    for b in (self.block(c, level) if isinstance(c, nodes.caption) else self.blocks(c, level))]
        return self.blocks_or_text(node, level)

    def blocks_or_text(self, node, level: int) -> list[str]:
        """Any other node: a paragraph if it holds only inline content, else its blocks."""
        if isinstance(node, (nodes.Inline, nodes.TextElement)) and all(
                isinstance(c, (nodes.Text, nodes.Inline)) for c in node.children):
            text = _paragraph(self.children_inline(node))
            return [text] if text else []
        return self.blocks(node, level)

    def code(self, node) -> str:
        if isinstance(node, nodes.doctest_block):
            language = "pycon"
        else:
            language = code_language(node.get("language") or node.get("lang") or "")
        return code_fence(node.astext().strip("\n"), language)

    def list(self, node, marker) -> str:
        items = []
        loose = False
        for n, item in enumerate(c for c in node.children if isinstance(c, nodes.list_item)):
            body = self.blocks(item, 99)
            loose = loose or len(body) > 1 or any("\n" in b for b in body)
            first = marker(n)
            items.append(_indent("\n\n".join(body) if body else "", first, " " * len(first)))
        return ("\n\n" if loose else "\n").join(items)

    def definitions(self, node) -> str:
        items = []
        for item in node.findall(nodes.definition_list_item):
            if item.parent is not node:
                continue
            term = " ".join(_SPACES.sub(" ", self.children_inline(t)).strip() for t in item.children
                            if isinstance(t, nodes.term))
            if term and "**" not in term:
                term = f"**{term}**"
            classifiers = [_SPACES.sub(" ", self.children_inline(c)).strip() for c in item.children
                           if isinstance(c, nodes.classifier)]
            head = _escape_start(" : ".join([term, *[c for c in classifiers if c]]))
            body = [b for c in item.children if isinstance(c, nodes.definition) for b in self.blocks(c, 99)]
            items.append(_indent("\n\n".join([head, *body]), "- ", "  "))
        return "\n\n".join(items)

    def fields(self, node, level: int) -> list[str]:
        out = []
        for f in node.children:
            if not isinstance(f, nodes.field):
                continue
            name = next((c for c in f.children if isinstance(c, nodes.field_name)), None)
            body = next((c for c in f.children if isinstance(c, nodes.field_body)), None)
            label = _SPACES.sub(" ", self.children_inline(name)).strip() if name is not None else ""
            blocks = self.blocks(body, level) if body is not None else []
            head = f"**{label}:**" if label else ""
            if blocks and "\n" not in blocks[0] and len(body.children) == 1 and \
                    isinstance(body.children[0], nodes.paragraph):
                out.append(_escape_start(f"{head} {blocks[0]}".strip()))
                out += blocks[1:]
            else:
                out += ([head] if head else []) + blocks
        return out

    def admonition(self, node, level: int) -> list[str]:
        name = _class_name(node)
        title = next((c for c in node.children if isinstance(c, nodes.title)), None)
        if title is not None:
            label = _SPACES.sub(" ", self.children_inline(title, links=False)).strip()
        else:
            label = _ADMONITION_LABELS.get(name, name.replace("_", " ").capitalize())
        body = "\n\n".join(self.blocks(node, level))
        text = (f"**{label}**\n\n" if label else "") + body
        return [_quote(text.strip("\n"))] if text.strip() else []

    def desc(self, node, level: int) -> list[str]:
        signatures = [c for c in node.children if _class_name(c) == "desc_signature"]
        lines = [_signature_text(s) for s in signatures]
        out: list[str] = []
        name = _object_name(signatures[0]) if signatures else ""
        section = node.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        title = section[0].astext() if section is not None and section.children and \
            isinstance(section[0], nodes.title) else ""
        inner = level
        if name and title != name and not name.endswith("." + title):
            out.append(atx_heading(level, _text(name)))
            inner = level + 1
        if any(lines):
            out.append(code_fence("\n".join(x for x in lines if x), _DOMAIN_LANGUAGE.get(node.get("domain", ""), "")))
        for child in node.children:
            if _class_name(child) == "desc_content":
                out += self.blocks(child, inner)
        return out

    def table(self, node) -> str:
        rows: list[list[str]] = []
        head = 0
        for group in node.findall(nodes.tgroup):
            for part in group.children:
                if not isinstance(part, (nodes.thead, nodes.tbody)):
                    continue
                for row in part.children:
                    if not isinstance(row, nodes.row):
                        continue
                    cells = []
                    for entry in row.children:
                        cells.append(self.cell(entry))
                        cells += [""] * int(entry.get("morecols", 0) or 0)
                    rows.append(cells)
                    head += isinstance(part, nodes.thead)
            break
        if not rows:
            return ""
        if "autosummary" in node.get("classes", []):
            items = []
            for cells in rows:
                name, summary = cells[0], " ".join(c for c in cells[1:] if c)
                items.append(_escape_start(f"{name}: {summary}" if summary else name))
            return "\n".join(f"- {x}" for x in items if x)
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        header, body = (rows[0], rows[1:]) if head else ([""] * width, rows)
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in body]
        title = next((c for c in node.children if isinstance(c, nodes.title)), None)
        caption = _paragraph(self.children_inline(title)) if title is not None else ""
        return (f"**{caption}**\n\n" if caption else "") + "\n".join(lines)

    def cell(self, entry) -> str:
        """A table cell on one line: paragraphs and list items apart by a space, code inline."""
        parts = []
        for child in entry.children:
            if isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                parts.append(code_span(child.astext()))
            elif isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                parts.append("; ".join(self.cell(item) for item in child.children))
            elif isinstance(child, (nodes.Text, nodes.Inline, nodes.TextElement)):
                parts.append(self.inline(child) if not isinstance(child, nodes.TextElement)
                             else self.children_inline(child))
            else:
                parts.append(self.cell(child))
        text = _SPACES.sub(" ", " ".join(p for p in parts if p)).strip()
        return _escape_start(text).replace("|", "\\|")

    def toctree(self, node) -> list[str]:
        """A toctree's entries as a list of links, nested as deep as its HTML shows them
        (``maxdepth``; a hidden toctree: its own entries only), each page once."""
        depth = int(node.get("maxdepth", -1) or -1)
        depth = 1 if node.get("hidden") else depth if depth > 0 else 1_000
        seen: set[str] = set()

        def items(entries, level: int) -> list[str]:
            out = []
            for title, ref in entries:
                if ref == "self" or ref in seen:
                    continue
                if "://" in str(ref):  # an URL written in the toctree: text, as any the page holds
                    out.append(f"- {_text(str(title or ref))} ({_text(str(ref))})")
                    continue
                entry = self.entry(ref)
                if entry is None:
                    continue
                seen.add(ref)
                shown = _SPACES.sub(" ", str(title or entry[0])).strip() or ref
                out.append(f"- {self._link(entry[1].partition('#')[0], _text(shown), keep=False)}")
                if level < depth and entry[2]:
                    nested = items([(None, doc) for doc in entry[2]], level + 1)
                    out += [f"  {line}" for line in nested]
            return out

        lines = items(node.get("entries", []), 1)
        if not lines:
            return []
        caption = node.get("caption")
        head = f"**{_paragraph(_text(caption))}**\n\n" if isinstance(caption, str) and caption.strip() else ""
        return [head + "\n".join(lines)]


def _signature_text(signature) -> str:
    """A signature as its HTML shows it, without the ``[source]`` link viewcode adds."""
    copy = signature.deepcopy()
    for node in list(copy.findall(nodes.Element)):
        if "viewcode-link" in node.get("classes", []) or (
                isinstance(node, nodes.reference) and "_modules/" in node.get("refuri", "")):
            node.parent.remove(node)
    lines = [line.astext() for line in copy.children if _class_name(line) == "desc_signature_line"]
    text = "\n".join(lines) if lines else copy.astext()
    return "\n".join(" ".join(x.split()) for x in valid_text(text).split("\n") if x.strip())


def _object_name(signature) -> str:
    module, name = signature.get("module") or "", signature.get("fullname") or ""
    if name:
        return f"{module}.{name}" if module and not name.startswith(module + ".") else name
    ids = signature.get("ids") or []
    return ids[0] if ids and "." in ids[0] else next(
        (c.astext() for c in signature.findall(nodes.Element) if _class_name(c) == "desc_name"), "")


def toctree_children(toc) -> list[str]:
    """The documents a page's own toctrees list (not hidden, not inside a subsection): the
    entries a parent toctree's HTML nests under the page's (``env.tocs[doc]``)."""
    if toc is None:
        return []
    out = []
    for node in toc.findall(lambda n: _class_name(n) == "toctree"):
        depth, parent = 0, node.parent
        while parent is not None:
            depth += isinstance(parent, nodes.bullet_list)
            parent = parent.parent
        if not node.get("hidden") and depth <= 2:
            out += [ref for _title, ref in node.get("entries", []) if ref != "self" and "://" not in str(ref)]
    return out


def page_twin(doctree, url: str, entry: Callable[[str], tuple[str, str, list[str]] | None]) -> Twin:
    """The twin of the page at ``url`` (from the site root) whose resolved doctree is
    ``doctree``; ``entry(docname)`` gives a document's (title, URL from the site root, the
    documents its toctrees include), or None when there is no such page (toctree entries)."""
    renderer = _Renderer(url, entry)
    blocks = renderer.blocks(doctree, 1)
    first_title = next(iter(doctree.findall(nodes.title)), None)
    first_paragraph = next((p for p in doctree.findall(nodes.paragraph)
                            if p.astext().strip() and not isinstance(p.parent, (nodes.entry, nodes.Admonition))), None)
    return Twin(url=url.partition("#")[0],
                title=valid_text(_SPACES.sub(" ", first_title.astext()).strip()) if first_title else "",
                description=valid_text(_SPACES.sub(" ", first_paragraph.astext()).strip()) if first_paragraph else "",
                blocks=blocks, links=renderer.links)


# -- links, once the site's twins are known ---------------------------------------------------

def resolve(twin: Twin, here: str, twins: set[str], base_url: str = "") -> list[str]:
    """``twin``'s blocks with their links: each to the target page's twin when it has one
    (``twins``: the site's twin names), relative to ``here`` (the file the text goes in,
    from the site root) or absolute under ``base_url``; else the link's text (a toctree
    entry: its line goes, and a toctree left without entries goes too)."""
    start = posixpath.dirname(here)

    def link(match: re.Match) -> str:
        target, text, keep = twin.links[int(match.group(1))]
        name = twin_name(target)
        if name not in twins:
            return text if keep else _DROP
        href = f"{base_url.rstrip('/')}/{name}" if base_url else posixpath.relpath(name, start or ".")
        return f"[{text}]({quote(href, safe=_HREF_SAFE)})"

    out = []
    for block in twin.blocks:
        if _MARK not in block:
            out.append(block)
            continue
        text = _PLACEHOLDER.sub(link, block)
        if _DROP in text:
            kept = [x for x in text.split("\n") if _DROP not in x]
            shown = [x.lstrip(" >") for x in kept if x.lstrip(" >")]
            if all(x.startswith("**") and x.endswith("**") for x in shown):
                continue  # a toctree none of whose pages has a twin: its caption goes too
            text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n")
        out.append(text)
    return out


# -- kept between builds ----------------------------------------------------------------------

def load_twins(path: Path) -> dict[str, Twin]:
    """The twins a previous build kept (empty: none, unreadable, or of another version)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != TWIN_VERSION:
            return {}
        return {str(doc): Twin.from_json(t) for doc, t in data["pages"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_twins(path: Path, twins: dict[str, Twin]) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"version": TWIN_VERSION, "pages": {d: twins[d].to_json() for d in sorted(twins)}}),
                   encoding="utf-8")  # ASCII: a lone surrogate a page holds is written escaped
    tmp.replace(path)
