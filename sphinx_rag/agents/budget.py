"""How big an agent's tool answer is, in estimated tokens, and keeping it under a budget.

Agents' clients cut a tool's answer at about 25,000 tokens (Claude Code warns and cuts
there): every answer of the MCP tools states its size (``sized``), and a tool's default
answer stays under ``ANSWER_TOKENS`` with a margin for the estimate's error. A page longer
than that is read in parts (``parts``: cut between blocks, never inside a code fence);
a search answer too long for it loses its last passages (``cut_hits``).

The estimate needs no tokenizer (none of the agents' is installed): about 3.5 characters a
token for ASCII text and code (BPE vocabularies of GPT-4 and Claude on English prose and
Python: 3.5 to 4.5), each other character a token (accents, CJK, typographic quotes). It
errs on the high side, so an answer said to be under the budget is.
"""

from __future__ import annotations

import math
import re

__all__ = ["ANSWER_TOKENS", "estimate_tokens", "sized", "parts", "cut_hits"]

ANSWER_TOKENS = 20_000  # a default answer's cap: 25,000 less a fifth for the estimate's error
_FENCE = re.compile(r"^(`{3,}|~{3,})")


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes, estimated (see the module doc)."""
    other = sum(1 for ch in text if ord(ch) > 127)
    return math.ceil((len(text) - other) / 3.5 + other)


def sized(text: str) -> str:
    """``text`` with its size on a last line: ``(≈1,234 tokens)`` (that line counted too)."""
    body = text.rstrip("\n")
    tokens = estimate_tokens(body) + 6
    return f"{body}\n\n(\u2248{tokens:,} tokens)\n"


def _blocks(markdown: str) -> list[str]:
    """``markdown`` cut at blank lines outside code fences (each block keeps its text)."""
    out: list[str] = []
    current: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) \
                    and not line[len(opened.group(1)):].strip():
                fence = ""
        elif opened:
            fence = opened.group(1)
        if not line.strip() and not fence and current:
            out.append("\n".join(current))
            current = []
        elif line.strip() or current:
            current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def parts(markdown: str, budget: int = ANSWER_TOKENS) -> list[str]:
    """``markdown`` in parts of at most ``budget`` estimated tokens each, cut between blocks
    (a block longer than that alone, a code block too, is cut between lines)."""
    if estimate_tokens(markdown) <= budget:
        return [markdown]
    out: list[str] = []
    current: list[str] = []
    size = 0
    for block in _blocks(markdown):
        pieces = [block]
        if estimate_tokens(block) > budget:  # a huge table or code block: by lines
            pieces, piece = [], []
            for line in block.split("\n"):
                if piece and estimate_tokens("\n".join(piece + [line])) > budget:
                    pieces.append("\n".join(piece))
                    piece = []
                piece.append(line[: int(budget * 3)])  # one line longer than a part: cut
            pieces.append("\n".join(piece))
        for piece in pieces:
            cost = estimate_tokens(piece) + 1
            if current and size + cost > budget:
                out.append("\n\n".join(current) + "\n")
                current, size = [], 0
            current.append(piece)
            size += cost
    if current:
        out.append("\n\n".join(current) + "\n")
    return out


def cut_hits(text: str, budget: int = ANSWER_TOKENS) -> str:
    """A search answer (hits under ``## n.`` headings) without its last hits while it is over
    ``budget``, saying how many were left out."""
    if estimate_tokens(text) <= budget:
        return text
    starts = [m.start() for m in re.finditer(r"^## \d+\. ", text, re.M)]
    for n in range(len(starts) - 1, 0, -1):
        head = text[: starts[n]].rstrip("\n")
        note = (f"\n\n({len(starts) - n} more passages left out to stay under {budget:,} tokens: "
                "ask for fewer (k), or read_page on a result's URL.)\n")
        if estimate_tokens(head + note) <= budget:
            return head + note
    return parts(text, budget)[0]
