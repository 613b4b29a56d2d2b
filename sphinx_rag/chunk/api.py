"""API chunks from numpydoc docstrings (the ragger-duck format, seed 001).

One chunk for the signature with defaults plus the summaries, then one per
parameter, return/yield value, attribute, raised exception, and one each for
See Also, Notes, Examples, References. Every chunk names its fully qualified
owner in plain words, so that a retrieved ``strategy`` parameter can never be
mistaken for another class's ``strategy``.

Classes, functions, exceptions and methods also get an *object card* first: what the
object is for (name, module, summary, first paragraph, parameter names and their value
choices) as one short retrievable unit, so that "which class does X?" finds the class
and not a neighbour whose parameters repeat the words. The signature chunk then keeps
the signature and the rest of the extended summary. ``link_card`` records which chunks
belong to a card (a class's methods' chunks too): ``search/expand.py`` shows a card and its
object's ranked parts as one passage.
"""

from __future__ import annotations

import re
import textwrap
import warnings

from numpydoc.docscrape import NumpyDocString

from ..search.lexical import word_parts
from . import Chunk
from .display import Display, prose, rst_blocks, rst_inline
from .docfields import add_fields, split_fields

__all__ = ["CARD_TYPES", "DocstringError", "api_chunks", "api_chunk_parts", "api_chunk_texts", "link_card",
           "signature_parameters"]

#: Objects that get a card: what a reader looks for by purpose, or by name and then a
#: parameter (a method's card gathers its parameters). Properties and attributes are a
#: summary already: a card would repeat it.
CARD_TYPES = ("class", "exception", "function", "method", "classmethod", "staticmethod")


_MISREAD_DIRECTIVE = re.compile(r"^\.\.\s+([\w-]+)::\s*(.*)$")


class DocstringError(ValueError):
    """numpydoc could not parse the docstring (the caller falls back)."""


def _join(lines: list[str]) -> str:
    return textwrap.dedent("\n".join(lines)).strip()


def _split_top_level(s: str) -> list[str]:
    """Split on commas that are not inside brackets or quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in s:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def signature_parameters(signature: str | None) -> list[str]:
    """``"(a, b=1, *, c: int = None) -> X"`` -> ``["a", "b (default=1)", "c (default=None)"]``."""
    if not signature:
        return []
    sig = signature.strip()
    if sig.startswith("("):
        depth = 0
        for i, ch in enumerate(sig):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                sig = sig[1:i]
                break
    out = []
    for param in _split_top_level(sig):
        name, _, default = param.partition("=")
        name = name.split(":")[0].strip()
        if name in ("self", "cls", "*", "/", ""):
            continue
        out.append(f"{name} (default={default.strip()})" if default else name)
    return out


def _describe(name: str, desc: list[str], type_: str) -> str:
    """Type and default first: long descriptions get truncated by the embedder."""
    if type_.startswith("{"):  # numpydoc's notation for a set of allowed values
        text = f"{name} accepts the values {type_}\n"
    else:
        text = f"{name} has the following type(s): {type_}\n" if type_ else ""
    return text + (f"{name} is described as '{_join(desc)}'" if desc else f"{name} has no description")


def parse_docstring(docstring: str) -> NumpyDocString:
    """Parse with numpydoc (Sphinx fields and Google sections read into its sections by
    ``docfields``); numpydoc's own complaints become DocstringError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            text, fields = split_fields(docstring)
            return add_fields(NumpyDocString(text), fields)
        except Exception as exc:  # numpydoc raises ValueError and friends
            raise DocstringError(str(exc).splitlines()[0]) from exc


def api_chunk_texts(fullname: str, objtype: str, docstring: str, signature: str | None = None) -> list[str]:
    """All chunk texts (what is embedded) for one documented object, in docstring order."""
    return [text for text, _display in api_chunk_parts(fullname, objtype, docstring, signature)]


def _term(name: str, type_: str) -> str:
    """The numpydoc entry line as a reader knows it: ``strategy : {"mean"}, default="mean"``
    (a directive numpydoc took for an entry, ``.. warning:: Risk``, as "Warning: Risk")."""
    type_ = rst_inline(type_).strip()
    term = f"{name} : {type_}" if name and type_ else (name or type_)
    directive = _MISREAD_DIRECTIVE.match(term)
    return f"{directive.group(1).capitalize()}: {directive.group(2)}".strip() if directive else term


def _entry(label: str, name: str, type_: str, desc: list[str]) -> Display:
    term = _term(name, type_)
    return [["label", label], *([["term", term]] if term else []), *rst_blocks("\n".join(desc))]


def _first_paragraph(text: str) -> tuple[str, str]:
    """(first paragraph, the rest) of reST text; none when it introduces a literal block
    (``...::``), which must stay with its block."""
    first, _, rest = text.partition("\n\n")
    if first.rstrip().endswith("::"):
        return "", text
    return first, rest.strip("\n")


def object_card(fullname: str, objtype: str, doc: NumpyDocString, paragraph: str) -> tuple[str, Display]:
    """(text, display) of what an object is for: its summary and the first ``paragraph``
    of the extended summary, short enough that its purpose, not its parameters' details,
    decides how near a query it is."""
    short = fullname.rsplit(".", 1)[-1]
    words = " ".join(word_parts(short))
    summary = _join(doc["Summary"])
    params = [f"{p.name} {p.type}" if p.type.startswith("{") else p.name for p in doc["Parameters"]]
    where = f" in {fullname.rsplit('.', 1)[0]}" if "." in fullname else ""  # a hand-written object may have no module
    lines = [f"{short} ({objtype}{where}{f'; {words}' if ' ' in words else ''})"]
    lines += [s for s in (summary, paragraph) if s]
    if params:
        lines.append(f"{short} takes the parameters {', '.join(params)}.")
    return "\n".join(lines), [["term", f"{objtype} {short}"], *rst_blocks(f"{summary}\n\n{paragraph}".strip())]


def link_card(chunks: list[Chunk]) -> list[Chunk]:
    """Mark ``chunks[0]``, if it is a card, as the card of all the chunks after it (one
    object and its nested ones; a member of a nested card keeps that card). In place."""
    if chunks and chunks[0].card_members:
        chunks[0].card_members = len(chunks) - 1
        for back, member in enumerate(chunks[1:], start=1):
            member.card_back = member.card_back or back
    return chunks


def api_chunk_parts(fullname: str, objtype: str, docstring: str,
                    signature: str | None = None) -> list[tuple[str, Display]]:
    """(embedded text, display) of every chunk of one documented object, in docstring order.

    The text names the owner in every chunk and keeps the raw reST (what ranking was
    tuned on); the display (``display.py``) is the same section as a reader reads it.
    """
    doc = parse_docstring(docstring)
    short = fullname.rsplit(".", 1)[-1]
    parts: list[tuple[str, Display]] = []
    # AutoContext-style: every member chunk also says what its owner is.
    # The short name in plain words too ("DummyClassifier" -> "dummy classifier"): the
    # embedding model's WordPiece vocabulary cannot see the words inside identifiers.
    words = " ".join(word_parts(short))
    first_line = " ".join(doc["Summary"]).strip().rstrip(".")
    context = "; ".join(p for p in (words if " " in words else "", first_line) if p)
    owner = f"{fullname} ({context})" if context else fullname

    head = [f"{fullname} ({objtype})" if objtype else fullname]
    params = signature_parameters(signature)
    if params:
        head.append(
            f"The parameters of {short} with their default values when known are: "
            + ", ".join(params) + "."
        )
    summary = _join(doc["Summary"] + [""] + doc["Extended Summary"])
    if summary:
        head.append(f"The description of {short} is as follows.\n{summary}")
    prefix = f"{objtype} " if objtype in ("class", "exception") else ""
    signature_term = ["term", f"{prefix}{short}{(signature or '').strip()}"]
    if objtype in CARD_TYPES:  # the card holds the summary and first paragraph, the signature the rest
        first, rest = _first_paragraph(_join(doc["Extended Summary"]))
        parts.append(object_card(fullname, objtype, doc, first))
        parts.append(("\n".join(head[:2]) + (f"\n\n{rest}" if rest else ""), [signature_term, *rst_blocks(rest)]))
    else:
        parts.append(("\n".join(head), [signature_term, *rst_blocks(summary)]))

    for section in ("Parameters", "Other Parameters"):
        for p in doc[section]:
            parts.append((f"Parameter {p.name} of {owner}.\n" + _describe(p.name, p.desc, p.type),
                          _entry(section, p.name, p.type, p.desc)))
    for section, verb in (("Returns", "returned"), ("Yields", "yielded"), ("Receives", "received")):
        for p in doc[section]:
            name, type_ = (p.name, p.type) if p.type else ("", p.name)
            if name:
                text = f"{name} is {verb} by {owner}.\n" + _describe(name, p.desc, type_)
            else:
                what = f"A value of type {type_}" if type_ else "A value"
                desc = f" It is described as '{_join(p.desc)}'" if p.desc else ""
                text = f"{what} is {verb} by {owner}.{desc}"
            parts.append((text, _entry(section, name, type_, p.desc)))
    for p in doc["Attributes"]:
        parts.append((f"Attribute {p.name} of {owner}.\n" + _describe(p.name, p.desc, p.type),
                      _entry("Attributes", p.name, p.type, p.desc)))
    for section, verb in (("Raises", "raised"), ("Warns", "warned")):
        for p in doc[section]:
            exc = p.type or p.name
            desc = f": {_join(p.desc)}" if p.desc else ""
            parts.append((f"{exc} is {verb} by {fullname}{desc}", _entry(section, "", exc, p.desc)))

    if doc["See Also"]:
        lines, shown = [], []
        for funcs, desc in doc["See Also"]:
            names = ", ".join(name for name, _role in funcs)
            lines.append(f"{names}: {_join(desc)}" if desc else names)
            shown.append(f"{names}: {rst_inline(' '.join(desc))}" if desc else names)
        parts.append((f"See also, the objects related to {fullname}:\n" + "\n".join(lines),
                      [["label", "See Also"], ["p", prose("\n".join(shown))]]))
    for section, intro in (
        ("Warnings", f"Warnings about {fullname}:"),
        ("Notes", f"Notes about {fullname}:"),
        ("References", f"References for {fullname}:"),
        ("Examples", f"Here is a usage example of {short} ({fullname}):"),
    ):
        body = _join(doc[section]) if isinstance(doc[section], list) else str(doc[section]).strip()
        if body:
            parts.append((f"{intro}\n{body}", [["label", section], *rst_blocks(body)]))
    return parts


def api_chunks(fullname: str, objtype: str, docstring: str, signature: str | None = None, *,
               doc: str, headings: list[str]) -> list[Chunk]:
    """The chunks of one documented object, anchored at the object (raises DocstringError)."""
    chunks = [Chunk(doc=doc, anchor=fullname, headings=headings, kind="api", text=text, display=display)
              for text, display in api_chunk_parts(fullname, objtype, docstring, signature)]
    if objtype in CARD_TYPES:
        chunks[0].card_members = 1  # a card (link_card counts its members once nested ones are known)
    return link_card(chunks)
