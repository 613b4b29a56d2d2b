"""BM25 tokenization suited to code documentation.

The browser client (``js/src/search/lexical.js``) implements exactly the same rules;
``tests/fixtures/lexical.json`` (generated here) keeps the two in step.

Rules, in order:

1. Unicode NFKD, drop combining marks (``café`` -> ``cafe``).
2. Words are maximal runs of letters, digits and ``_`` (``str.isalnum``).
3. Each word yields its parts split on ``_`` and at camelCase boundaries
   (``RandomForestClassifier`` -> ``random``, ``forest``, ``classifier``), plus
   the whole word when it has more than one part (``fit_transform``).
4. Lowercase; drop stop words and one-character tokens; a light "S" stemmer
   (plural endings only), so that ``classifiers`` matches ``classifier``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOP_WORDS", "tokenize", "stem", "word_parts", "split_words", "fold"]

# Small on purpose: words such as "not", "default" or "none" matter in API docs.
STOP_WORDS = frozenset(
    """a an and are as at be by can do does for from has have how i if in into is
    it its of on or so such that the their then there these this to was were what
    when where which while who why will with you your""".split()
)

# Boundaries inside an identifier: aB -> a|B, 2B -> 2|B, ABc -> A|Bc.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def fold(text: str) -> str:
    """NFKD without combining marks: ``café`` -> ``cafe``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def split_words(text: str) -> list[tuple[str, bool]]:
    """Text cut into (piece, is_word) runs; joining the pieces gives the text back."""
    pieces: list[tuple[str, bool]] = []
    for char in text:
        is_word = char == "_" or char.isalnum()
        if pieces and pieces[-1][1] == is_word:
            pieces[-1] = (pieces[-1][0] + char, is_word)
        else:
            pieces.append((char, is_word))
    return pieces


def _words(text: str) -> list[str]:
    return [piece for piece, is_word in split_words(text) if is_word]


def stem(token: str) -> str:
    """Harman's "S" stemmer plus -sses/-ches/-shes/-xes: plural endings only."""
    if len(token) <= 3 or not token.endswith("s"):
        return token
    if token.endswith("ies") and not token.endswith(("eies", "aies")):
        return token[:-3] + "y"
    if token.endswith(("sses", "ches", "shes", "xes")):
        return token[:-2]
    if token.endswith("es") and not token.endswith(("aes", "ees", "oes")):
        return token[:-1]
    if token.endswith(("us", "ss", "is")):
        return token
    return token[:-1]


def word_parts(word: str) -> list[str]:
    """Split one identifier-like word into its lowercase parts."""
    parts = []
    for piece in word.split("_"):
        parts.extend(p for p in _CAMEL.split(piece) if p)
    return [p.lower() for p in parts]


def _keep(token: str) -> bool:
    return len(token) > 1 and token not in STOP_WORDS


def tokenize(text: str) -> list[str]:
    """Text -> BM25 tokens (with repetitions, in reading order)."""
    tokens: list[str] = []
    for word in _words(fold(text)):
        parts = word_parts(word)
        whole = word.lower().strip("_")
        if len(parts) > 1 and _keep(whole):
            tokens.append(stem(whole))
        tokens.extend(stem(p) for p in parts if _keep(p))
    return tokens
