"""Docstrings in Sphinx's field-list and Google styles, read into numpydoc's sections.

``api.py`` parses docstrings with numpydoc, but many projects write ``:param x:`` fields
(Sphinx's own style: click, packaging, requests) or Google's ``Args:`` sections
(napoleon: attrs) instead. Without this module such a docstring is one long chunk whose
fields a reader sees raw. Here both styles become numpydoc's sections, so that every
parameter, return value, attribute and exception gets its own chunk whatever the style:

- Google sections are rewritten as field lists by Sphinx's own napoleon
  (``GoogleDocstring``), as napoleon does at build time;
- the field lists are then taken out of the text and become numpydoc ``Parameter``
  entries: ``:param``/``:type`` -> Parameters, ``:returns``/``:rtype`` -> Returns,
  ``:yields``/``:ytype`` -> Yields, ``:raises`` -> Raises, ``:ivar``/``:vartype`` ->
  Attributes. ``:meta`` fields (instructions to autodoc) are dropped; other fields stay
  in the text.

A numpydoc docstring (underlined section headers) is left as it is.
"""

from __future__ import annotations

import inspect
import re
import textwrap

from numpydoc.docscrape import NumpyDocString, Parameter

__all__ = ["split_fields", "add_fields"]

_NUMPYDOC_HEADER = re.compile(r"^[ \t]*[A-Z][A-Za-z ]+\n[ \t]*-{3,}[ \t]*$", re.M)
_GOOGLE_HEADER = re.compile(r"^[ \t]*(Args|Arguments|Keyword Args|Keyword Arguments|Kwargs|Parameters|Params|"
                            r"Other Parameters|Returns?|Yields?|Raises|Attributes)[ \t]*:[ \t]*$", re.M)
_FIELD = re.compile(r"^:([A-Za-z]+)((?:[ \t]+[^:\n]+?)?):(?:[ \t]+(.*)|$)")
_TILDE = re.compile(r"(?<![\w`.])~((?:\w+\.)*(\w+))")

_KINDS = {
    **dict.fromkeys(("param", "parameter", "arg", "argument", "key", "keyword", "kwarg", "kwparam"), "param"),
    "type": "type",
    **dict.fromkeys(("returns", "return"), "returns"), "rtype": "rtype",
    **dict.fromkeys(("yields", "yield"), "yields"), "ytype": "ytype",
    **dict.fromkeys(("raises", "raise", "except", "exception"), "raises"),
    **dict.fromkeys(("ivar", "var", "cvar"), "ivar"), "vartype": "vartype",
    "meta": "meta",
}

Fields = dict[str, list[Parameter]]


def split_fields(docstring: str) -> tuple[str, Fields]:
    """(the docstring without its fields, numpydoc section -> entries of its fields)."""
    text = inspect.cleandoc(docstring)
    if _NUMPYDOC_HEADER.search(text):
        return docstring, {}
    if _GOOGLE_HEADER.search(text):
        text = _google_as_fields(text)
    kept, found = _take_fields(text.split("\n"))
    return "\n".join(kept), _sections(found) if found else {}


def add_fields(doc: NumpyDocString, fields: Fields) -> NumpyDocString:
    """Put the fields' entries into numpydoc's sections (after any it found itself)."""
    for section, entries in fields.items():
        doc[section] = list(doc[section]) + entries
    return doc


def _google_as_fields(text: str) -> str:
    from sphinx.ext.napoleon import Config
    from sphinx.ext.napoleon.docstring import GoogleDocstring

    config = Config(napoleon_use_param=True, napoleon_use_rtype=True, napoleon_use_ivar=True)
    return str(GoogleDocstring(text, config))


def _take_fields(lines: list[str]) -> tuple[list[str], list[tuple[str, str, list[str]]]]:
    """Lines that are not part of a known field, and each field's (kind, argument, body)."""
    kept: list[str] = []
    found: list[tuple[str, str, list[str]]] = []
    i = 0
    while i < len(lines):
        m = _FIELD.match(lines[i])
        kind = _KINDS.get(m.group(1).lower()) if m else None
        if kind is None:
            kept.append(lines[i])
            i += 1
            continue
        i += 1
        block = []  # continuation: indented lines, and blank lines before more of them
        while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
            kept.append("")
        body = [m.group(3) or ""] + (textwrap.dedent("\n".join(block)).split("\n") if block else [])
        while body and not body[0].strip():
            body.pop(0)
        if len(body) > 1 and body[1].strip():  # continuation lines indented under the first: one paragraph
            body = [body[0], *textwrap.dedent("\n".join(body[1:])).split("\n")]
        if kind != "meta":
            found.append((kind, m.group(2).strip(), body))
    return kept, found


def _type(text: str) -> str:
    """``~typing.Callable`` -> ``Callable``, as Sphinx shows it."""
    return _TILDE.sub(lambda m: m.group(2), " ".join(text.split()))


def _sections(found: list[tuple[str, str, list[str]]]) -> Fields:
    params: dict[str, list] = {}  # name -> [type, description]
    attributes: dict[str, list] = {}
    returns: dict[str, list] = {"returns": [], "yields": []}
    return_types = {"returns": "", "yields": ""}
    raises: list[Parameter] = []
    for kind, arg, body in found:
        if kind in ("param", "ivar"):
            named = params if kind == "param" else attributes
            type_, _, name = arg.rpartition(" ")  # ":param int x:" names a type too
            entry = named.setdefault(name, ["", []])
            entry[0] = _type(type_) or entry[0]
            entry[1] = body
        elif kind in ("type", "vartype"):
            named = params if kind == "type" else attributes
            named.setdefault(arg, ["", []])[0] = _type(" ".join(body))
        elif kind in ("returns", "yields"):
            returns[kind] += body
        elif kind in ("rtype", "ytype"):
            return_types["returns" if kind == "rtype" else "yields"] = _type(" ".join(body))
        elif kind == "raises":
            raises.append(Parameter("", _type(arg), body))
    out: Fields = {}
    if params:
        out["Parameters"] = [Parameter(name, type_, desc) for name, (type_, desc) in params.items() if name]
    if attributes:
        out["Attributes"] = [Parameter(name, type_, desc) for name, (type_, desc) in attributes.items() if name]
    for kind, section in (("returns", "Returns"), ("yields", "Yields")):
        if returns[kind] or return_types[kind]:
            out[section] = [Parameter("", return_types[kind], returns[kind])]
    if raises:
        out["Raises"] = raises
    return out
