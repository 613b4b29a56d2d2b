"""sphinx_rag/terminal.py: what may reach a terminal from a document or an LLM server."""

from __future__ import annotations

import random

import pytest

from sphinx_rag.cli.terminal import MAX_STRING, StreamCleaner, clean, well_formed

HOSTILE = {
    "title change (OSC, BEL)": ("a\x1b]0;PWNED\x07b", "ab"),
    "title change (OSC, ST)": ("a\x1b]2;PWNED\x1b\\b", "ab"),
    "screen clear (CSI)": ("a\x1b[2J\x1b[Hb", "ab"),
    "colour with parameters": ("\x1b[1;31;48;5;200mred\x1b[0m", "red"),
    "private mode (CSI ?)": ("\x1b[?1049hx", "x"),
    "OSC 8 hyperlink": ("see \x1b]8;;https://evil.example/\x1b\\the docs\x1b]8;;\x1b\\ now", "see the docs now"),
    "OSC 8 with BEL": ("\x1b]8;id=1;http://x\x07link\x1b]8;;\x07", "link"),
    "DCS string": ("a\x1bPq#0;2;0;0;0\x1b\\b", "ab"),
    "charset and reset": ("a\x1b(Bb\x1bcc\x1b7d", "abcd"),
    "8-bit CSI and C1": ("a\x9b2Jb\x85c\x9d0;x\x9cd", "a2Jbc0;xd"),
    "C0 controls": ("a\x00b\x07c\x08d\re\x0bf\x0cg\x7fh", "abcdefgh"),
    "newline and tab kept": ("line\n\tindented", "line\n\tindented"),
    "bidi overrides and isolates": ("a\u202eb\u202dc\u2066d\u2069e\u200ef\u200fg\u061ch", "abcdefgh"),
    "lone ESC": ("a\x1b", "a"),
    "unterminated OSC loses its ESC": ("a\x1b]0;x", "a0;x"),
    "non-ASCII text kept": ("Größe: 5 × 3 — «ok» ✓ 🎉 مرحبا", "Größe: 5 × 3 — «ok» ✓ 🎉 مرحبا"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_clean(name):
    given, expected = HOSTILE[name]
    assert clean(given) == expected


def test_nothing_a_terminal_acts_on_is_left():
    for given, _ in HOSTILE.values():
        out = clean(given)
        assert not any(ord(c) < 32 and c not in "\n\t" or 0x7f <= ord(c) <= 0x9f for c in out), repr(out)
        assert not any(c in out for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


PIECES = ["\x1b", "]", "[", "0;", "8;;http://e/", "PWNED", "\x07", "\\", "2J", "?25l", "m", "1;31", "P", "_",
          "^", "X", "(B", "text ", "é", "\n", "\t", "\r", "\x9c", "\x9b", "\u202e", "a" * 50]


def test_stream_cleaner_equals_clean_on_every_split():
    """Random hostile texts cut at random places: the streamed output is clean(whole)."""
    rng = random.Random(29)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 30)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randrange(1, 8))))
        parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        stream = StreamCleaner()
        out = "".join(stream.feed(p) for p in parts) + stream.end()
        assert out == clean(text), (parts, out, clean(text))


def test_stream_cleaner_removes_a_sequence_split_across_tokens():
    stream = StreamCleaner()
    pieces = ["The answer \x1b", "]0;PW", "NED\x1b", "\\is \x1b[", "2", "J42", " and \x1b]8;;http://evil/\x07x\x1b]8;;\x07."]
    out = [stream.feed(p) for p in pieces] + [stream.end()]
    assert "".join(out) == "The answer is 42 and x."
    assert out[0] == "The answer " and out[1] == "" and out[2] == ""


def test_stream_cleaner_carry_is_bounded():
    stream = StreamCleaner()
    assert stream.feed("a\x1b]0;" + "x" * (MAX_STRING + 10)) == "a0;" + "x" * (MAX_STRING + 10)
    assert stream.carry == ""


def test_well_formed():
    assert well_formed("emoji cut \ud83d here") == "emoji cut \ufffd here"
    assert well_formed("\udcff bytes") == "\ufffd bytes"  # os.fsdecode(b"\xff bytes")
    assert well_formed("fine 🎉") == "fine 🎉"
