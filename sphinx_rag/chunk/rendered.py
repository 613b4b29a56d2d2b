"""The docstring of an object documented by hand, read back from its rendered doctree.

autodoc gives ``api.py`` the raw docstring of every object it documents. An object
written by hand (``.. py:function:: connect(host, port=5432)`` with ``:param host:``
fields) has none: Sphinx has already rendered its fields into a "Parameters" list of
"host (str) – The host." items by the time the doctree is read. Here that doctree goes
back to a docstring in Sphinx's field style (``docfields.py`` reads it as numpydoc's
sections) and a signature, so that such an object gets the same chunks as an autodoc'd
one: a card, a chunk per parameter, return value and exception, each naming its owner.

Only the object's own content is read: nested objects (a class's methods) are chunked
on their own, and so are index entries.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx import addnodes

from .narrative import block_text

__all__ = ["rendered_docstring", "rendered_signature"]

#: The rendered field labels of Sphinx's Python domain (and napoleon's generic ones) ->
#: the field each item goes back to: (field, whether items are "name (type) – text").
_FIELDS = {
    "parameters": ("param", True), "keyword arguments": ("param", True), "other parameters": ("param", True),
    "variables": ("ivar", True), "returns": ("returns", False), "return type": ("rtype", False),
    "yields": ("yields", False), "yield type": ("ytype", False), "raises": ("raises", True),
}
_ITEM = re.compile(r"^(?P<name>[^\s–]+)(?:\s+\((?P<type>[^–]*?)\))?(?:\s+–\s+(?P<text>.*))?$", re.S)


def rendered_signature(desc: addnodes.desc) -> str | None:
    """``(host, port=5432, *, timeout=None) -> Connection`` from the signature's nodes
    (None: the object has no parameter list, an attribute say)."""
    sig = next(iter(desc.findall(addnodes.desc_signature)), None)
    if sig is None:
        return None
    params = next(iter(sig.findall(addnodes.desc_parameterlist)), None)
    if params is None:
        return None
    text = "(" + ", ".join(_flat(p) for p in params.children) + ")"
    returns = next(iter(sig.findall(addnodes.desc_returns)), None)  # its text starts with the arrow
    return text + (f" {_flat(returns)}" if returns is not None else "")


def rendered_docstring(content: addnodes.desc_content) -> str:
    """The object's text, its rendered fields back as ``:param x:`` fields."""
    parts: list[str] = []
    fields: list[str] = []
    for child in content.children:
        if isinstance(child, (addnodes.desc, addnodes.index)):
            continue  # a nested object: chunked on its own
        if isinstance(child, nodes.field_list):
            for field in child.children:
                lines = _field_lines(field)
                if lines is None:  # a field Sphinx does not render as a list ("Note"): its text
                    parts.append(": ".join(_flat(part) for part in field.children))
                else:
                    fields += lines
            continue
        if isinstance(child, (nodes.literal_block, nodes.doctest_block)):
            parts.append("::\n\n" + "\n".join("    " + line for line in child.astext().split("\n")))
            continue
        block = block_text(child)
        if block is not None and block.text.strip():
            parts.append(block.text)
    return "\n\n".join(parts + (["\n".join(fields)] if fields else []))


def _flat(node: nodes.Node) -> str:
    return " ".join(node.astext().split())


def _field_lines(field: nodes.field) -> list[str] | None:
    """The field's items as ``:param x: ...`` lines (None: not a field of an object's API)."""
    kind, named = _FIELDS.get(_flat(field[0]).lower(), (None, False))
    if kind is None or len(field) < 2:
        return None
    out = []
    for item in _items(field[1]):
        if isinstance(item, nodes.definition_list_item):  # numpydoc renders "x : int" entries so
            name_ = " ".join(_flat(c) for c in item.children if isinstance(c, nodes.term))
            type_ = ", ".join(_flat(c) for c in item.children if isinstance(c, nodes.classifier))
            desc = " ".join(_flat(c) for c in item.children if isinstance(c, nodes.definition))
            if not named:
                out.append(f":{kind}: {' '.join(p for p in (name_, type_, desc) if p)}")
                continue
        else:
            text = _flat(item)
            if not named:
                out.append(f":{kind}: {text}")
                continue
            m = _ITEM.match(text)
            if m is None:
                continue
            name_, type_, desc = m.group("name"), (m.group("type") or "").strip(), (m.group("text") or "").strip()
        if not name_:
            continue
        if kind == "raises":
            out.append(f":raises {name_}: {desc}")
        else:
            out.append(f":{kind} {name_}: {desc}")
            if type_:
                out.append(f":{'type' if kind == 'param' else 'vartype'} {name_}: {type_}")
    return out


def _items(body: nodes.Element) -> list[nodes.Element]:
    """A field body's entries: list items, definition list items, or the body itself."""
    lists = [c for c in body.children if isinstance(c, (nodes.bullet_list, nodes.enumerated_list, nodes.definition_list))]
    return [i for lst in lists for i in lst.children if isinstance(i, nodes.Element)] if lists else [body]
