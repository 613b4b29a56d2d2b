"""The display form of a chunk: what a reader sees, apart from what is embedded.

A chunk's ``text`` is tuned for ranking (owner named in plain words, template
wording, raw docstring reST); its ``display`` is the same content as a reader should
read it: a list of blocks ``[type, text]``, in order:

``["p", text]``
    prose; inline markup already plain text; a ``\\n`` separates lines that must stay
    apart (list items), any other run of whitespace is one space.
``["code", text]`` or ``["code", text, language]``
    code, doctest or math: newlines and indentation kept (shown in ``<pre><code>``);
    its language third where the source names one (``code_language``: ``python``,
    ``pycon`` for a doctest, ``math``, ``bash``...): the Markdown twins fence it with it.
``["term", text]``
    the line that names an API item: a signature ``SimpleImputer(strategy='mean')``
    or a numpydoc entry ``strategy : {"mean", "median"}, default="mean"``.
``["label", text]``
    the numpydoc section a term or passage belongs to ("Parameters", "Notes", ...).
``["lead", text]``
    the sentences repeated from the previous chunk of the same section (the chunk
    overlap): shown when the chunk starts a passage, dropped when the passage already
    shows the chunk before it (``join_displays``).

No header line (owner, heading path) is inside: the title path is shown apart. A
piece cut inside a sentence starts or ends with "…". ``js/src/search/display.js``
mirrors ``join_displays`` and ``display_text``.

Raw docstrings (numpydoc sections, sphinx-gallery text cells) have no doctree: for
them ``rst_blocks`` / ``rst_inline`` render reST as text line by line (roles become
their text, directives lose their ``.. name::`` marker, admonitions become a label
like "Warning:", literal and doctest blocks become code). Parsing each parameter's
description with docutils would cost milliseconds per chunk and fail on every Sphinx
role docutils does not know.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["ELLIPSIS", "HEADING", "code_block", "code_language", "Display", "rst_inline", "rst_blocks", "join_displays", "display_text", "prose",
           "record_display", "clip_display", "cut_words"]

Display = list[list[str]]
ELLIPSIS = "…"
HEADING = "heading"  # a block naming the section a passage's next text comes from (join_displays)
TITLE_SEPARATOR = " > "  # between the heading path's parts in a chunk's title

# -- code -------------------------------------------------------------------------------------

#: Pygments names written otherwise, and names that say "no language" (Sphinx's "default"
#: highlights as Python 3).
_LANGUAGE_ALIASES = {"default": "python", "python3": "python", "py": "python", "py3": "python", "pycon3": "pycon",
                     "ipython3": "ipython", "sh": "bash", "shell": "bash", "console": "console", "none": "",
                     "text": "", "rst": "rst", "restructuredtext": "rst"}


def code_language(name: str | None) -> str:
    """A code block's language as a Markdown fence names it ("" for none): ``Python`` and
    Sphinx's ``default`` -> ``python``, ``none``/``text`` -> ""."""
    name = (name or "").strip().lower()
    return _LANGUAGE_ALIASES.get(name, name if name.replace("-", "").replace("+", "").isalnum() else "")


def code_block(text: str, language: str | None = "") -> list[str]:
    """A ``code`` display block, with its language when there is one (no third element
    otherwise: every byte of a display is downloaded)."""
    language = code_language(language)
    return ["code", text, language] if language else ["code", text]


# -- inline markup ---------------------------------------------------------------------------

_ROLE = re.compile(r":(?:[\w-]+:)?([\w-]+):`((?:[^`\\]|\\.)+)`")
_TITLE_TARGET = re.compile(r"^(.*\S)\s*<[^<>]+>$", re.S)
_LINK = re.compile(r"`([^`<]+?)\s*<[^`>]+>`__?")
_NAMED_REF = re.compile(r"`([^`]+)`__?")
_LITERAL = re.compile(r"``(.+?)``", re.S)
_INTERPRETED = re.compile(r"(?<![\w`])`([^`]+)`(?![\w`])")
_STRONG = re.compile(r"(?<![\w*\\])\*\*(\S(?:.*?\S)?)\*\*(?![\w*])")
_EMPHASIS = re.compile(r"(?<![\w*\\])\*(\S(?:[^*]*?\S)?)\*(?![\w*])")
_FOOTNOTE_REF = re.compile(r"(\[[^\]\s]+\])_\b")
_SUBSTITUTION = re.compile(r"\|([^|\s][^|]*)\|_{0,2}")
_CALLABLE_ROLES = {"func", "meth"}


def _role_text(match: re.Match) -> str:
    role, content = match.group(1), match.group(2).replace("\\`", "`")
    titled = _TITLE_TARGET.match(content)
    if titled and role not in ("math",):
        return titled.group(1)
    if role == "math":
        return content
    content = content.lstrip("!")
    if content.startswith("~"):
        content = content[1:].rsplit(".", 1)[-1]
    if role in _CALLABLE_ROLES and not content.endswith(")"):
        content += "()"
    return content


def rst_inline(text: str) -> str:
    """reST inline markup -> its text: ``:class:`~a.b.C``` -> ``C``, ``:ref:`Guide <x>``` ->
    ``Guide``, ````x```` -> ``x``, ``*em*`` -> ``em``, ```link <url>`_`` -> ``link``."""
    if "`" not in text and "*" not in text and "|" not in text and "]_" not in text:
        return text  # most lines: no markup at all
    literals: list[str] = []

    def keep(s: str) -> str:  # literals are protected from the other rules
        literals.append(s)
        return f"\x00{len(literals) - 1}\x00"

    text = _LITERAL.sub(lambda m: keep(m.group(1)), text)
    text = _ROLE.sub(lambda m: keep(_role_text(m)), text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _NAMED_REF.sub(lambda m: m.group(1), text)
    text = _INTERPRETED.sub(lambda m: m.group(1), text)
    text = _STRONG.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub(lambda m: m.group(1), text)
    text = _FOOTNOTE_REF.sub(lambda m: m.group(1), text)
    text = _SUBSTITUTION.sub(lambda m: m.group(1), text)
    return re.sub("\x00(\\d+)\x00", lambda m: literals[int(m.group(1))], text)


def prose(text: str) -> str:
    """Whitespace collapsed within lines, line breaks kept (list items), empty lines dropped."""
    return "\n".join(" ".join(line.split()) for line in text.split("\n") if line.strip())


# -- blocks of a raw docstring fragment -----------------------------------------------------

_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::\s*(.*)$")
_CITATION = re.compile(r"^\.\.\s+(\[[^\]]+\])\s*(.*)$")
_BULLET = re.compile(r"^([-*+•]|\d+[.)]|#\.|\(\w+\)|[a-zA-Z][.)])\s+\S")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")
_TABLE_RULE = re.compile(r"^[=+\-| ]*[=\-]{3,}[=+\-| ]*$")
_CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput", "ipython",
                    "jupyter-execute", "literalinclude", "highlight", "parsed-literal", "math", "productionlist"}
_DROPPED_DIRECTIVES = {"image", "figure", "raw", "index", "only", "plot", "toctree", "autosummary",
                       "currentmodule", "module", "include", "meta", "rubric", "contents", "tabularcolumns"}
_ADMONITIONS = {"note", "warning", "tip", "important", "caution", "danger", "attention", "hint", "error",
                "seealso", "admonition", "todo"}
_VERSIONS = {"versionadded": "Added in version", "versionchanged": "Changed in version",
             "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented_body(lines: list[str], i: int, base: int) -> tuple[list[str], int]:
    """Lines from ``i`` more indented than ``base`` (blank lines inside kept), dedented."""
    j = i
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > base):
        j += 1
    body = lines[i:j]
    while body and not body[-1].strip():
        body.pop()
    return textwrap.dedent("\n".join(body)).split("\n") if body else [], j


def _drop_options(body: list[str]) -> list[str]:
    """A directive body's leading ``:option: value`` lines."""
    k = 0
    while k < len(body) and re.match(r"^:[\w -]+:(\s|$)", body[k]):
        k += 1
    return body[k:]


def _add(out: Display, kind: str, text: str):
    text = text.strip("\n") if kind == "code" else prose(text)
    if text.strip():
        out.append([kind, text])


def _paragraph(lines: list[str]) -> str:
    """A paragraph's lines: list items and definition terms on lines of their own."""
    out: list[str] = []
    base = _indent(lines[0])
    is_list = _BULLET.match(lines[0].strip()) is not None
    for line in lines:
        bullet = _BULLET.match(line.strip())
        # an item of a list, or a "-"/"*" item right after a line ending with ":" (a list
        # written without its blank line); "+ n" inside a sentence is not a list
        starts_item = bullet is not None and _indent(line) <= base + 4 and (
            is_list or (bool(out) and out[-1].endswith(":") and line.strip()[0] in "-*•"))
        if out and not starts_item and _indent(line) > base and not _BULLET.match(lines[0].strip()):
            out.append(line.strip())  # a definition's body (a line more indented than its term)
        elif out and not starts_item:
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return "\n".join(rst_inline(x) for x in out)


def _directive_language(name: str, arg: str) -> str:
    """The language of a code directive: its argument (``code-block:: bash``), a doctest's
    ``pycon``, math's ``math``."""
    if name in ("code-block", "code", "sourcecode", "highlight"):
        return arg.split()[0] if arg else ""
    return {"doctest": "pycon", "ipython": "ipython", "math": "math", "testcode": "python"}.get(name, "")


def rst_blocks(text: str) -> Display:
    """A raw reST fragment (a docstring section, a gallery text cell) -> display blocks."""
    lines = textwrap.dedent(text.expandtabs(8).strip("\n")).split("\n")
    out: Display = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        base = _indent(line)
        stripped = line.strip()
        directive = _DIRECTIVE.match(stripped)
        citation = _CITATION.match(stripped)
        if directive:
            name, arg = directive.group(1).split(":")[-1].lower(), directive.group(2).strip()
            body, i = _indented_body(lines, i + 1, base)
            body = _drop_options(body)
            if name in _CODE_DIRECTIVES:
                code = "\n".join(body).strip("\n") or (arg if name == "math" else "")
                if code:
                    out.append(code_block(code, _directive_language(name, arg)))
            elif name in _VERSIONS:
                version, _, same_line = arg.partition(" ")  # ".. versionadded:: 2.1 Text on the same line."
                lead = [] if not same_line.strip() else [same_line] if body and body[0].strip() else [same_line, ""]
                blocks = rst_blocks("\n".join(lead + body))  # one paragraph with the body unless a blank line
                head = f"{_VERSIONS[name]} {version}".strip()
                if blocks and blocks[0][0] == "p":
                    blocks[0][1] = f"{head}: {blocks[0][1]}"
                else:
                    blocks.insert(0, ["p", head + "."])
                out += blocks
            elif name in _ADMONITIONS:
                label = rst_inline(arg) if name == "admonition" else (
                    "See also" if name == "seealso" else name.capitalize())
                blocks = rst_blocks("\n".join(([arg] if arg and name != "admonition" else []) + [""] + body))
                if blocks and blocks[0][0] == "p":
                    blocks[0][1] = f"{label}: {blocks[0][1]}"
                elif label:
                    blocks.insert(0, ["p", f"{label}:"])
                out += blocks
            elif name not in _DROPPED_DIRECTIVES:
                out += rst_blocks("\n".join(([arg, ""] if arg else []) + body))
            continue
        if stripped.startswith("..") and not citation:  # comment or target: not shown
            _body, i = _indented_body(lines, i + 1, base)
            continue
        if stripped.startswith(">>>"):  # doctest: up to the next blank line
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            out.append(code_block(textwrap.dedent("\n".join(lines[i:j])), "pycon"))
            i = j
            continue
        j = i  # a paragraph: up to a blank line, a doctest, or a directive at its own level
        while j < len(lines) and lines[j].strip() and not (
                j > i and (lines[j].strip().startswith(">>>")
                           or (_indent(lines[j]) <= base and lines[j].strip().startswith(".. ")))):
            j += 1
        para = lines[i:j]
        i = j
        if citation:  # a reference: one paragraph, its continuation lines are not a definition
            para = [" ".join([citation.group(1), citation.group(2)] + [x.strip() for x in para[1:]])]
        if len(para) >= 2 and _UNDERLINE.match(para[-1].strip()) and not _UNDERLINE.match(para[0].strip()):
            para = para[:-1]  # a section title: its underline is not text
        if len(para) >= 3 and sum(bool(_TABLE_RULE.match(x.strip())) for x in para) >= 2:
            out.append(["code", textwrap.dedent("\n".join(para))])  # a table keeps its columns
            continue
        last = para[-1].rstrip()
        literal_next = last.endswith("::")
        if literal_next:
            last = last[:-2].rstrip()
            para[-1] = last + (":" if last and not last.endswith((" ", ":")) else "")
            if not para[-1].strip():
                para = para[:-1]
        if para:
            _add(out, "p", _paragraph(para))
        if literal_next:
            while i < len(lines) and not lines[i].strip():
                i += 1
            body, i = _indented_body(lines, i, base)
            if body:
                out.append(["code", "\n".join(body)])
    return out


# -- passages ----------------------------------------------------------------------------------

def record_display(record: dict) -> Display:
    """A text shard record's display; an index of an earlier sphinx-rag has none: its text."""
    display = record.get("display")
    return display if display is not None else [["p", prose(record["text"])]]


def join_displays(displays: list[Display], titles: list[str | None] | None = None, shown_title: str = "") -> Display:
    """The display of a passage made of consecutive chunks (``search/expand.py``): each chunk's
    blocks in order, a following chunk's ``lead`` dropped (the chunk before shows it).

    A passage is shown under its hit's title (``shown_title``) but can start in, or run
    into, a neighbouring section: given each chunk's ``titles`` (None for a chunk that
    names itself, an API part), a chunk of another section than the text above it opens
    with a ``heading`` block, the last part of its title.
    """
    out: Display = []
    current = shown_title
    for n, display in enumerate(displays):
        title = titles[n] if titles else None
        if title and title != current:
            out.append([HEADING, title.rsplit(TITLE_SEPARATOR, 1)[-1]])
        current = title or current
        out += [list(b) for b in display if not (n and b[0] == "lead")]
    return out


def display_text(display: Display) -> str:
    """Plain text of a display (the CLI, the LLM): paragraphs apart, code indented by four
    spaces, a label on the line above its term, a term on the line above its description,
    a section heading on the line above its text."""
    parts: list[str] = []
    glue = ""
    for kind, text, *_ in display:
        piece = textwrap.indent(text, "    ") if kind == "code" else text
        if kind == "label":
            piece += ":"
        parts.append((glue if parts else "") + piece)
        glue = "\n" if kind in ("label", "term", HEADING) else "\n\n"
    return "".join(parts)


def clip_display(display: Display, max_chars: int, code_lines: int = 12) -> Display:
    """The head of a display in about ``max_chars`` characters: whole blocks, then prose cut
    at a word boundary with "…", code cut after a whole line (at most ``code_lines``)."""
    out: Display = []
    left = max_chars
    for kind, text, *language in display:
        if left <= 0:
            if out and out[-1][0] != "code" and not out[-1][1].endswith(ELLIPSIS):
                out[-1][1] += f" {ELLIPSIS}"
            break
        if kind == "code":
            lines = text.split("\n")
            keep: list[str] = []
            for line in lines[:code_lines]:
                if keep and len("\n".join(keep + [line])) > max(left, 80):
                    break
                keep.append(line)
            out.append([kind, "\n".join(keep) + (f"\n{ELLIPSIS}" if len(keep) < len(lines) else ""), *language])
            left -= len("\n".join(keep))
        elif len(text) <= left or kind in ("label", "term", HEADING):
            out.append([kind, text])
            left -= len(text)
        else:
            out.append([kind, cut_words(text, max(left, 40))])
            left = 0
    return out


def cut_words(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` at a word boundary, with " …" (a single word
    longer than that is cut inside)."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars + 1]
    space = max(head.rfind(" "), head.rfind("\n"))
    head = head[:space] if space > 0 else text[:max_chars]
    return head.rstrip(" ,;:\n") + f" {ELLIPSIS}"
