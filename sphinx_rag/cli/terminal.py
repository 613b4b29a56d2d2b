"""Text from documents and LLM servers made safe to print on a terminal.

A page title, a passage or a streamed answer is data, but a terminal reads some
characters as commands: ``ESC ]0;...BEL`` renames the window, ``ESC [2J`` clears the
screen, ``ESC ]8;;URL ST`` turns text into a link to anywhere, a bidi override
reverses what follows it. ``sphinx-rag search`` and ``ask`` pass every such string
through :func:`clean` (or :class:`StreamCleaner` for an answer arriving in pieces)
before it reaches stdout or stderr; ``--json`` output is left exact (JSON escapes
control characters itself).

Removed: escape sequences whole (CSI ``ESC [ ... final``; OSC, DCS, SOS, PM and APC
strings up to their BEL or ST terminator; other ``ESC x`` sequences), then every
remaining C0 control except newline and tab, DEL, C1 controls, and the bidi
embedding, override, isolate and mark characters.
"""

from __future__ import annotations

import re

__all__ = ["clean", "StreamCleaner", "well_formed"]

# The longest control string (OSC, DCS, ...) removed whole; a longer unterminated one
# only loses its ESC (what is left is plain text). Bounds StreamCleaner's carry-over.
MAX_STRING = 4096
_PARAMS, _INTERMEDIATES = r"[\x30-\x3f]{0,64}", r"[\x20-\x2f]{0,16}"

_SEQUENCE = re.compile(
    rf"\x1b\[{_PARAMS}{_INTERMEDIATES}[\x40-\x7e]"  # CSI: ESC [ parameters intermediates final
    rf"|\x1b[\]PX^_][^\x07\x1b\x9c]{{0,{MAX_STRING}}}(?:\x07|\x1b\\|\x9c)"  # OSC/DCS/SOS/PM/APC to BEL or ST
    rf"|\x1b{_INTERMEDIATES}[\x30-\x7e]"  # any other escape sequence (ESC c, ESC 7, ESC ( B ...)
)
# A sequence whose end has not arrived yet (StreamCleaner keeps it back).
_UNFINISHED = re.compile(
    rf"\x1b(?:\[{_PARAMS}{_INTERMEDIATES}|[\]PX^_][^\x07\x1b\x9c]{{0,{MAX_STRING}}}\x1b?|{_INTERMEDIATES})\Z")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` without terminal escape sequences, control characters (newline and tab
    kept) and bidi controls."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


class StreamCleaner:
    """:func:`clean` for text that arrives in pieces (a streamed answer): a sequence cut
    between two pieces is still removed whole. ``feed`` returns what can be printed now
    and keeps back an unfinished sequence (at most ``MAX_STRING`` characters); ``end``
    returns the rest. The pieces' outputs joined equal ``clean`` of the whole text.
    """

    def __init__(self):
        self.carry = ""

    def feed(self, text: str) -> str:
        text = self.carry + text
        self.carry = ""
        # Only the last ESC can open an unfinished sequence, or the one before it when
        # the last is the first half of the ST that ends its string (ESC ] ... ESC).
        start = text.rfind("\x1b")
        if start < 0 or not _UNFINISHED.match(text, start):
            return clean(text)
        before = text.rfind("\x1b", 0, start)
        if before >= 0 and _UNFINISHED.match(text, before):
            start = before
        self.carry = text[start:]
        return clean(text[:start])

    def end(self) -> str:
        rest, self.carry = self.carry, ""
        return clean(rest)


_SURROGATES = re.compile("[\ud800-\udfff]+")


def _replace_surrogates(match: re.Match) -> str:
    run = match.group()
    try:  # bytes of a command-line argument that were not UTF-8 (surrogateescape)
        return run.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate proper (half of an emoji)
        return "\ufffd" * len(run)


def well_formed(text: str) -> str:
    """``text`` with lone surrogates (and the undecodable bytes Python keeps in
    ``sys.argv`` as surrogates) replaced by U+FFFD: what tokenizers, the model and
    the terminal can take."""
    return _SURROGATES.sub(_replace_surrogates, text)
