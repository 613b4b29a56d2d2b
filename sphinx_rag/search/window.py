"""The part of a hit's passage a reader is shown: the part that matched, not its head.

``passage_window`` is the dialog's ``passageView`` (js/src/ui/passage.js, with
highlight.js's ``snippet``), line for line: from the entry the query names ("index : int"
for "what does `index` of `imread` do?"), else the block with the most distinct query
words (the label or term above it, an API passage's summary line, the heading of the
section it is in), whole blocks while they fit in ``max_chars``, then prose cut at a word
boundary with "…" and code after a whole line; a prose block longer than the room left is
windowed around its hits. The window ends where the next section begins (its heading and
text belong to another hit: "Read from fancy sources" under "Read an image of a cat"). Text left out above the first block shown is a "…" at its start
(never a line of its own); a heading or label with nothing under it is not shown. The CLI (``sphinx-rag search``, ``--json``'s ``display``) shows
the dialog's window (``SHOWN_CHARS``); the MCP server the same rule with a longer budget
(``AGENT_CHARS``: it holds the dialog's window and reads on). ``tests/fixtures/passages.json``
holds Python's windows, which js/test/display.test.js must reproduce.

Lengths and cuts are counted in UTF-16 code units, as JavaScript's strings are, so both
give the same text whatever the characters (an emoji is two units there, one code point
here): the text is worked on as a string of UTF-16 units and turned back at the end; a cut
never splits a surrogate pair.
"""

from __future__ import annotations

import unicodedata

from ..chunk.display import HEADING, Display
from .lexical import _CAMEL, fold, stem, strip_invisible, tokenize

__all__ = ["SHOWN_CHARS", "AGENT_CHARS", "CODE_LINES", "SUMMARY_CHARS", "ELLIPSIS", "query_tokens",
           "passage_window"]

SHOWN_CHARS = 260  # the dialog's (passage.js SHOWN_CHARS)
AGENT_CHARS = 1000  # an agent's (MCP): the same window, read further
CODE_LINES = 5
SUMMARY_CHARS = 100
ELLIPSIS = "\u2026"
#: JavaScript's \s and String.prototype.trim's white space
_JS_SPACE = frozenset("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                      "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def query_tokens(query: str) -> set[str]:
    """The query's BM25 tokens (highlight.js queryTokens)."""
    return set(tokenize(query))


# -- strings as JavaScript holds them ---------------------------------------------------------

def _units(text: str) -> str:
    """``text`` as a string of UTF-16 code units (an astral character: two surrogates)."""
    if text.isascii() or all(ord(c) < 0x10000 for c in text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(data[i] | data[i + 1] << 8) for i in range(0, len(data), 2))


def _text(units: str) -> str:
    """Back from UTF-16 units: surrogate pairs joined (a lone one stays as it is)."""
    if all(not 0xD800 <= ord(c) < 0xE000 for c in units):
        return units
    return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _is_word(cp: int) -> bool:
    """/[\\p{L}\\p{N}_]/u"""
    return cp == 0x5F or unicodedata.category(chr(cp))[0] in "LN"


def _hits(text: str, tokens: set[str]) -> list[tuple[int, int, list[str]]]:
    """highlight.js findHits over a unit string: (start, end, the query tokens of the word)."""
    out: list[tuple[int, int, list[str]]] = []
    if not tokens:
        return out
    i, n = 0, len(text)
    start = -1
    while i <= n:
        if i < n:
            cp, width = ord(text[i]), 1
            if 0xD800 <= cp < 0xDC00 and i + 1 < n and 0xDC00 <= ord(text[i + 1]) < 0xE000:
                cp, width = 0x10000 + ((cp - 0xD800) << 10) + (ord(text[i + 1]) - 0xDC00), 2
            word = _is_word(cp)
        else:
            width, word = 1, False
        if word and start < 0:
            start = i
        elif not word and start >= 0:
            out += _word_hits(text[start:i], start, tokens)
            start = -1
        i += width
    return out


#: A part of a word shorter than this (in code points) is no word of its own (highlight.js MIN_PART)
MIN_PART = 3


def _pieces(word: str) -> list[tuple[int, int]]:
    """highlight.js wordPieces: the "_"-separated pieces split at camelCase boundaries, as offsets."""
    out, at = [], 0
    for piece in word.split("_"):
        begin = at
        for part in _CAMEL.split(piece):
            if part:
                out.append((begin, begin + len(part)))
            begin += len(part)
        at += len(piece) + 1
    return out


def _word_hits(word: str, at: int, tokens: set[str]) -> list[tuple[int, int, list[str]]]:
    """highlight.js findHits for one word (units) at ``at``: the whole word when its whole
    form is a query token or it has one part, else its parts of MIN_PART or more that are."""
    found = [t for t in tokenize(_text(word)) if t in tokens]
    if not found:
        return []
    pieces = _pieces(word)
    if len(pieces) < 2 or stem(fold(_text(word)).lower().strip("_")) in tokens:
        return [(at, at + len(word), found)]
    out = []
    for begin, end in pieces:
        part = _text(word[begin:end])
        own = [t for t in tokenize(part) if t in tokens] if len(part) >= MIN_PART else []
        if own:
            out.append((at + begin, at + end, own))
    return out


def _distinct(text: str, tokens: set[str]) -> int:
    return len({t for *_, found in _hits(text, tokens) for t in found})


def _rstrip_js(text: str, chars: str = "") -> str:
    end = len(text)
    while end and (text[end - 1] in _JS_SPACE or text[end - 1] in chars):
        end -= 1
    return text[:end]


def _no_split(text: str, at: int) -> int:
    """A cut at ``at`` moved back off the middle of a surrogate pair."""
    if 0 < at < len(text) and 0xDC00 <= ord(text[at]) < 0xE000 and 0xD800 <= ord(text[at - 1]) < 0xDC00:
        return at - 1
    return at


# -- the window -------------------------------------------------------------------------------

def _cut_words(text: str, max_chars: int) -> str:
    """passage.js cutWords (units)."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars + 1]
    space = max(head.rfind(" "), head.rfind("\n"))
    cut = head[:space] if space > 0 else text[:_no_split(text, max_chars)]
    return f"{_rstrip_js(cut, ',;:')} {ELLIPSIS}"


def _snippet(text: str, tokens: set[str], max_chars: int) -> str:
    """highlight.js snippet, its segments joined (units)."""
    hits = _hits(text, tokens)
    start = 0
    if len(text) > max_chars and hits:
        best = (-1, -1, 0)
        for i in range(len(hits)):
            begin = max(0, hits[i][0] - 40)
            seen: set[str] = set()
            count = 0
            j = i
            while j < len(hits) and hits[j][1] <= begin + max_chars:
                seen.update(hits[j][2])
                count += 1
                j += 1
            if len(seen) > best[0] or (len(seen) == best[0] and count > best[1]):
                best = (len(seen), count, begin)
        start = min(best[2], max(0, len(text) - max_chars))
    end = min(len(text), start + max_chars)
    if start > 0 and text[start - 1] not in _JS_SPACE:  # never begin inside a word
        space = next((k for k in range(start, len(text)) if text[k] in _JS_SPACE), -1) - start
        if 0 <= space < max_chars / 2:
            start += space + 1
    if end < len(text) and text[end] not in _JS_SPACE:  # nor end inside one
        space = max(text.rfind(" ", 0, end + 1), text.rfind("\n", 0, end + 1))
        if space > start:
            end = space
    start, end = _no_split(text, start), _no_split(text, end)
    return ("\u2026 " if start > 0 else "") + text[start:end] + (" \u2026" if end < len(text) else "")


#: What a numpydoc entry the query names counts for above any number of query words: the
#: window of "what does `index` of `imread` do?" starts at "index : {int, ...}", not at the
#: signature that holds both words.
NAMED = 1000


def _named(kind: str, text: str, tokens: set[str]) -> bool:
    """An entry's term ("index : int") whose name is all query words."""
    if kind != "term":
        return False
    name = tokenize(_text(text.split(" : ", 1)[0]))
    return bool(name) and all(t in tokens for t in name)


def _first_line(lines: list[str], tokens: set[str]) -> int:
    best = at = 0
    for j, line in enumerate(lines):
        n = _distinct(line, tokens)
        if n > best:
            best, at = n, j
    return 0 if at < CODE_LINES else at - 1


def passage_window(display: Display, tokens: set[str], max_chars: int = SHOWN_CHARS, title: str = "") -> Display:
    """What of a passage a reader is shown, as display blocks (``chunk/display.py``);
    ``tokens``: ``query_tokens(query)``; ``title``: the hit's title (its own section's
    heading is not repeated at the top)."""
    blocks = []
    for block in display:
        if not (isinstance(block, (list, tuple)) and len(block) >= 2 and isinstance(block[0], str)
                and isinstance(block[1], str)):
            continue  # strings only, ever (passage.js renderPassage)
        text = _units(strip_invisible(block[1]))
        bare = "".join(c for c in text if c not in _JS_SPACE)
        if bare and bare != ELLIPSIS:  # "…" alone says nothing
            blocks.append(("p" if block[0] == "lead" else block[0], text, *block[2:3]))
    start = best = 0
    for i, (kind, text, *_) in enumerate(blocks):
        n = 0 if kind in ("label", HEADING) else _distinct(text, tokens) + (NAMED if _named(kind, text, tokens) else 0)
        if n > best:
            best, start = n, i
    ahead = sum(len(block[1]) for block in blocks[:start])
    if ahead + (len(blocks[start][1]) if blocks else 0) <= max_chars and not any(
            block[0] == HEADING for block in blocks[1:start + 1]):
        start = 0  # it fits from the top (in the same section: the window ends at the next one)
    while start > 0 and blocks[start - 1][0] in ("label", "term", HEADING):
        start -= 1
    out: list[list[str]] = []
    left = max_chars
    skipped = False  # text left out above the next block shown: "…" at its start

    def push(kind: str, text: str, *language: str):
        nonlocal skipped
        if skipped and kind not in (HEADING, "label") and not text.startswith(ELLIPSIS):
            text = (f"{ELLIPSIS}\n" if kind == "code" else f"{ELLIPSIS} ") + text
        skipped = False
        out.append([kind, text, *language])

    if start > 1 and blocks[0][0] == "term" and blocks[1][0] == "p":  # what the object is
        summary = _cut_words(blocks[1][1], SUMMARY_CHARS)
        push("p", summary)
        left -= len(summary)
    own = _units(title.split(" > ")[-1]) if title else None
    if start < len(blocks) and blocks[start][0] == HEADING and blocks[start][1] == own and start + 1 < len(blocks):
        start += 1
    section = -1  # shown from further down a passage of several sections: the section it is in
    if blocks and blocks[start][0] != HEADING:
        for i in range(start - 1, -1, -1):
            if blocks[i][0] == HEADING:
                section = -1 if blocks[i][1] == own else i
                break
    if section >= 0:
        push(HEADING, blocks[section][1])
        left -= len(blocks[section][1])
        skipped = start > section + 1
    else:
        skipped = start > 0 and (start > 2 or not out)
    more = False  # the room ends before the passage does
    for i in range(start, len(blocks)):
        kind, text, *language = blocks[i]
        if left <= 0:
            more = True
            break
        if kind == HEADING and any(k not in ("label", HEADING) for k, *_ in out):
            more = any(b[0] not in ("label", HEADING) for b in blocks[i:])  # the next section is another hit's
            break
        if kind == "code":
            lines = text.split("\n")
            begin = _first_line(lines, tokens) if i == start else 0
            keep: list[str] = []
            for line in lines[begin:begin + CODE_LINES]:
                if keep and len("\n".join([*keep, line])) > max(left, 80):
                    break
                keep.append(line)
            shown = (f"{ELLIPSIS}\n" if begin > 0 else "") + "\n".join(keep) + (
                f"\n{ELLIPSIS}" if begin + len(keep) < len(lines) else "")
            push(kind, shown, *language)
            left -= len("\n".join(keep))
        elif len(text) <= left or kind in ("label", "term", HEADING):
            push(kind, text)
            left -= len(text)
        elif i == start and _distinct(text, tokens):
            push(kind, _snippet(text, tokens, max(left, 120)))  # around its hits
            left = 0
        else:
            push(kind, _cut_words(text, max(left, 40)))
            left = 0
    while out and out[-1][0] in ("label", HEADING):
        out.pop()  # nothing under it
    if all(kind in ("label", HEADING) for kind, *_ in out):
        return []  # no text at all: nothing, not a heading
    if more and not out[-1][1].endswith(ELLIPSIS):
        out.append(["p", ELLIPSIS])  # more follows
    return [[kind, _text(text), *rest] for kind, text, *rest in out]
