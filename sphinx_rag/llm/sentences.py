"""Where sentences end: passages and earlier answers are cut after a whole sentence
(``prompt.fit_passages``, ``thread``'s earlier turns); prompt.js ``sentenceEnds`` is the same."""

from __future__ import annotations

__all__ = ["sentence_ends"]

_ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.", "resp.")


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence (or line) end of ``text``, in order.

    A sentence ends at ``.``, ``!`` or ``?`` followed by whitespace (not after
    e.g./i.e./cf./vs./resp.), or at a line break (code, list items). The text end is
    not included.
    """
    ends = []
    for i, ch in enumerate(text[:-1]):
        nxt = text[i + 1]
        if ch == "\n":
            ends.append(i)  # cut before the line break
        elif ch in ".!?" and nxt.isspace():
            start = max(text.rfind(" ", 0, i), text.rfind("\n", 0, i)) + 1
            if text[start:i + 1].lower() not in _ABBREVIATIONS:
                ends.append(i + 1)
    return sorted(set(e for e in ends if text[:e].strip()))
