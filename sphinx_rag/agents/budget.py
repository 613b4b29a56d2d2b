"""How big an agent's tool answer is, in estimated tokens, and keeping it under a budget.

Agents' clients cut a tool's answer at about 25,000 tokens (Claude Code warns and cuts
there): every answer of the MCP tools states its size (``sized``), and a tool's default
answer stays under ``ANSWER_TOKENS`` with a margin for the estimate's error. A page longer
than that is read in parts (``parts``: cut between blocks; a block longer than a part
between its lines, a code block closed at the end of a part and reopened at the start of
the next; a line longer than a part inside it: every character is in some part, and the
cutting is linear in the page's length); a search answer too long for it loses its last
passages (``cut_hits``). js/src/ui/budget.js is the same for WebMCP (tests/fixtures/page_parts.json).

The estimate needs no tokenizer (none of the agents' is installed): about 3.5 characters a
token for ASCII text and code (BPE vocabularies of GPT-4 and Claude on English prose and
Python: 3.5 to 4.5), each other character a token (accents, CJK, typographic quotes). It
errs on the high side, so an answer said to be under the budget is.
"""

from __future__ import annotations

import functools
import math
import re

__all__ = ["ANSWER_TOKENS", "estimate_tokens", "sized", "part_spans", "parts", "cut_hits"]

ANSWER_TOKENS = 20_000  # a default answer's cap: 25,000 less a fifth for the estimate's error
_FENCE = re.compile(r"(`{3,}|~{3,})")
_BLANK = re.compile(r"[ \t\r]*")
SPACE_WINDOW = 1000  # a part cut inside a line ends after a space among its last this many characters
OPENER_CHARS = 200  # a code fence's opening line longer than this is not repeated in each part


def _counts(text: str) -> tuple[int, int]:
    """(ASCII characters, other characters) in ``text``."""
    ascii_ = len(text.encode("ascii", "ignore"))
    return ascii_, len(text) - ascii_


def _cost(ascii_: int, other: int) -> int:
    return math.ceil(ascii_ / 3.5 + other)


def estimate_tokens(text: str) -> int:
    """Tokens ``text`` takes, estimated (see the module doc)."""
    return _cost(*_counts(text))


def sized(text: str) -> str:
    """``text`` with its size on a last line: ``(≈1,234 tokens)`` (that line counted too)."""
    body = text.rstrip("\n")
    tokens = estimate_tokens(body) + 6
    return f"{body}\n\n(\u2248{tokens:,} tokens)\n"


def _lines(markdown: str) -> tuple[list[int], list[str], list[bool]]:
    """Each line's start offset, the line that opened the code fence open at its start ('':
    none) and whether it is blank (spaces, tabs, a carriage return)."""
    starts, fences, blank = [], [], []
    pos, fence, opener = 0, "", ""
    for line in markdown.split("\n"):
        starts.append(pos)
        fences.append(opener if fence else "")
        blank.append(_BLANK.fullmatch(line) is not None)
        pos += len(line) + 1
        opened = _FENCE.match(line)
        if fence:
            mark = opened.group(1) if opened else ""
            if mark and mark[0] == fence[0] and len(mark) >= len(fence) and _BLANK.fullmatch(line, len(mark)):
                fence = ""
        elif opened:
            fence, opener = opened.group(1), line
    return starts, fences, blank


def _fence_lines(opener: str, budget: int) -> tuple[str, str]:
    """The lines that reopen (``opener`` itself) and close a code fence a part boundary cuts
    through; none for an opening line longer than ``OPENER_CHARS`` or an eighth of the
    budget (a hostile one: repeated, it would fill every part)."""
    if not opener or len(opener) > OPENER_CHARS or 8 * estimate_tokens(opener) > budget:
        return "", ""
    return opener, _FENCE.match(opener).group(1)


@functools.lru_cache(maxsize=64)
def _decorations(opener: str, budget: int) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """Counts of what a part cut inside the fence ``opener`` opened gets: the fence reopened
    before it, closed after it at a line's end, closed after it inside a line."""
    reopen, close = _fence_lines(opener, budget)
    if not reopen:
        return (0, 0), (0, 0), (0, 0)
    return _counts(reopen + "\n"), _counts(close + "\n"), _counts("\n" + close + "\n")


def _sum(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] + b[0], a[1] + b[1]


def _fits(counts: tuple[int, int], extra: tuple[int, int], budget: int) -> bool:
    return _cost(*_sum(counts, extra)) <= budget


def _inside_line(markdown: str, a: int, stop: int, base: tuple[int, int], budget: int) -> int:
    """Where a part ends inside a line (from ``a``, the line ending at ``stop``): as far as
    ``budget`` allows (``base``: what the part holds besides), after a space among the last
    ``SPACE_WINDOW`` characters if there is one (``a``: nothing fits)."""
    room = markdown[a:min(stop, a + int(budget * 3.5) + 2)]
    if room.isascii():  # the same end as the loop below, by arithmetic
        n = max(0, (7 * (budget - base[1]) - 2 * base[0]) // 2)
        p = a + min(n, len(room))
    else:
        ascii_, other = base
        p = a
        for ch in room:
            if ord(ch) < 128:
                ascii_ += 1
            else:
                other += 1
            if _cost(ascii_, other) > budget:
                break
            p += 1
    if p < stop:
        space = markdown.rfind(" ", max(a, p - SPACE_WINDOW), p)
        if space >= a:
            p = space + 1
    return p


class _Lines:
    """``markdown``'s lines as ``part_spans`` reads them."""

    def __init__(self, markdown: str):
        self.text = markdown
        self.starts, self.fences, self.blank = _lines(markdown)
        self.count = len(self.starts)

    def end(self, j: int) -> int:
        """Where line ``j`` ends, its newline included."""
        return self.starts[j + 1] if j + 1 < self.count else len(self.text)

    def block_starts(self, j: int) -> bool:
        """Whether a block starts at line ``j`` (a blank line before it, outside a fence)."""
        return 0 < j < self.count and self.blank[j - 1] and not self.fences[j] and not self.blank[j]

    def block_fits(self, first: int, budget: int) -> bool:
        """Whether the block that starts at line ``first`` fits in a part of its own."""
        counts = (0, 0)
        for j in range(first, self.count):
            if j > first and self.block_starts(j):
                return True
            a, b = self.starts[j], self.end(j)
            if b - a > budget * 3.5:
                return False
            counts = _sum(counts, _counts(self.text[a:b]))
            if not _fits(counts, (0, 0), budget):
                return False
        return True

    def line_fits(self, j: int, budget: int) -> bool:
        """Whether line ``j`` fits in a part of its own (its fence reopened and closed)."""
        a, b = self.starts[j], self.end(j)
        if b - a > budget * 3.5:
            return False
        after = _decorations(self.fences[j + 1], budget)[1] if j + 1 < self.count else (0, 0)
        return _fits(_sum(_counts(self.text[a:b]), _decorations(self.fences[j], budget)[0]), after, budget)


def part_spans(markdown: str, budget: int = ANSWER_TOKENS) -> list[tuple[int, int, str, str]]:
    """How ``parts`` cuts ``markdown``: (start, end, reopen, close) for each part, the spans
    following each other from 0 to the end; a part that starts inside a code fence starts
    with ``reopen`` (the line that opened it), one that ends inside one ends with ``close``
    (its fence mark); '' otherwise.

    Each part holds as much as ``budget`` allows, ending between blocks (at the last blank
    line outside a fence that fits) unless the block that would start the next part does
    not fit in one either: that block (a long table, a long code block, a long paragraph)
    is cut at the last line end that fits, or, when its line does not fit in a part of its
    own either, inside that line. Each character is read a bounded number of times."""
    lines = _Lines(markdown)
    starts, fences, count, end = lines.starts, lines.fences, lines.count, len(markdown)
    spans: list[tuple[int, int, str, str]] = []
    a, first = 0, 0  # where the part starts; its line
    while a < end:
        opener = fences[first]
        counts = _decorations(opener, budget)[0]
        block = 0  # the last block start the part may end at (0: none)
        j, seg = first, a
        while True:  # line j joins the part, from seg
            before = counts
            seg_end = lines.end(j)
            if seg_end - seg > budget * 3.5:  # longer than a part whatever it holds
                break
            ascii_, other = _counts(markdown[seg:seg_end])
            counts = (counts[0] + ascii_, counts[1] + other)
            if j + 1 == count:
                if _fits(counts, (0, 0), budget):
                    block = count  # the rest: the last part
                break
            if not _fits(counts, _decorations(fences[j + 1], budget)[1], budget):
                break
            if lines.block_starts(j + 1):
                block = j + 1
            j, seg = j + 1, seg_end
        reopen = _fence_lines(opener, budget)[0]
        if block == count:
            spans.append((a, end, reopen, ""))
            break
        if block and lines.block_fits(block, budget):
            cut = block  # between blocks
        elif j > first and lines.line_fits(j, budget):
            cut = j  # between the lines of a block longer than a part
        else:
            cut = 0  # inside a line longer than a part
        if cut:
            spans.append((a, starts[cut], reopen, _fence_lines(fences[cut], budget)[1]))
            a, first = starts[cut], cut
            continue
        stop = lines.end(j) - (1 if j + 1 < count else 0)
        p = _inside_line(markdown, seg, stop, _sum(before, _decorations(fences[j], budget)[2]), budget)
        if p == seg > a:  # nothing of line j fits after what the part holds: it starts the next
            spans.append((a, seg, reopen, _fence_lines(fences[j], budget)[1]))
            a, first = seg, j
            continue
        p = max(p, a + 1)  # a budget too small for anything: a character a part
        spans.append((a, p, reopen, _fence_lines(fences[j], budget)[1]))
        a, first = p, j
    return spans


def parts(markdown: str, budget: int = ANSWER_TOKENS) -> list[str]:
    """``markdown`` in parts of at most ``budget`` estimated tokens each (``part_spans``):
    joined, they are all of it, but for the fence lines that close a code block cut in two
    at the end of a part and reopen it at the start of the next."""
    if estimate_tokens(markdown) <= budget:
        return [markdown]
    out = []
    for a, b, reopen, close in part_spans(markdown, budget):
        text = markdown[a:b]
        if reopen:
            text = reopen + "\n" + text
        if close:
            text += ("" if text.endswith("\n") else "\n") + close + "\n"
        out.append(text)
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
