"""What the commands read from the command line and how they print: a query or question
made well-formed (or refused when blank), long lines wrapped, and a reader of stdout
that went away (``sphinx-rag search ... | head``) told apart from a broken connection."""

from __future__ import annotations

import sys
import textwrap

from .terminal import well_formed

__all__ = ["StdoutClosed", "text_argument", "wrapped"]


class StdoutClosed(Exception):
    """stdout's reader went away while an answer streamed (not an OSError: the LLM client
    must not take it for a broken connection to the server)."""


def text_argument(text: str, what: str, example: str) -> str | None:
    """A query or question from the command line, well-formed (argv may carry undecodable
    bytes as lone surrogates); None, after a one-line message, when it is blank."""
    text = well_formed(text)
    if not text.strip():
        print(f"[sphinx-rag] the {what} is empty: give {example}", file=sys.stderr)
        return None
    return text


def wrapped(text: str, width: int = 96) -> str:
    """Prose lines wrapped, code lines (indented) as they are."""
    return "\n".join(line if line.startswith("    ") or not line else textwrap.fill(line, width)
                     for line in text.split("\n"))
