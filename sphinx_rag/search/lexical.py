"""BM25 tokenization suited to code documentation.

The browser client (``js/src/search/lexical.js``) implements exactly the same rules;
``tests/fixtures/lexical.json`` (generated here) keeps the two in step.

Rules, in order:

1. Invisible characters are removed (zero-width spaces and joiners, soft hyphens,
   bidi controls): ``pan\u200bdas`` is ``pandas``.
2. Unicode NFKD, drop the accents of Latin, Greek and Cyrillic letters (``café`` ->
   ``cafe``), NFC: other scripts keep their marks (``ブ`` stays ``ブ``, not ``フ``).
3. Words are maximal runs of letters, digits, combining marks and ``_``
   (``str.isalnum`` or a mark: a Devanagari vowel sign stays inside its word).
4. A run of CJK characters (Han, kana, Hangul), which has no spaces between words,
   yields its overlapping character bigrams (``欠損値`` -> ``欠損``, ``損値``), a lone
   CJK character itself.
5. Any other word yields its parts split on ``_`` and at camelCase boundaries
   (``RandomForestClassifier`` -> ``random``, ``forest``, ``classifier``), plus
   the whole word when it has more than one part (``fit_transform``).
6. Lowercase; drop stop words and one-character tokens; a light "S" stemmer
   (plural endings only), so that ``classifiers`` matches ``classifier``.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["STOP_WORDS", "tokenize", "identifier_tokens", "stem", "word_parts", "split_words", "fold", "strip_invisible", "is_cjk"]

# Small on purpose: words such as "not", "default" or "none" matter in API docs.
STOP_WORDS = frozenset(
    """a an and are as at be by can do does for from has have how i if in into is
    it its of on or so such that the their then there these this to was were what
    when where which while who why will with you your""".split()
)

# Boundaries inside an identifier: aB -> a|B, 2B -> 2|B, ABc -> A|Bc.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def strip_invisible(text: str) -> str:
    """Without zero-width characters, soft hyphens and bidi controls."""
    return _INVISIBLE.sub("", text)


def _accented_script(cp: int) -> bool:
    """Latin, Greek, Cyrillic: scripts whose combining marks are accents to fold away."""
    return cp < 0x250 or 0x1E00 <= cp <= 0x1FFF or 0x370 <= cp <= 0x52F


def fold(text: str) -> str:
    """Invisible characters out, accents of Latin/Greek/Cyrillic letters out: ``café`` -> ``cafe``."""
    if text.isascii():  # nothing to fold (most of a code documentation: the fast path)
        return text
    out, fold_marks = [], True
    for c in unicodedata.normalize("NFKD", strip_invisible(text)):
        if unicodedata.category(c) == "Mn":
            if fold_marks:
                continue
        else:
            fold_marks = _accented_script(ord(c))
        out.append(c)
    return unicodedata.normalize("NFC", "".join(out))


def is_cjk(cp: int) -> bool:
    """Han, Hiragana, Katakana, Hangul: scripts written without spaces between words."""
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x3040 <= cp <= 0x30FF or 0xAC00 <= cp <= 0xD7AF
            or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F or 0x31F0 <= cp <= 0x31FF or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x2FA1F)


def _script_runs(word: str) -> list[tuple[str, bool]]:
    """A word cut into (run, is CJK) at every change between CJK and other characters."""
    if word.isascii():
        return [(word, False)]
    runs: list[tuple[str, bool]] = []
    for c in word:
        cjk = is_cjk(ord(c))
        if runs and runs[-1][1] == cjk:
            runs[-1] = (runs[-1][0] + c, cjk)
        else:
            runs.append((c, cjk))
    return runs


def split_words(text: str) -> list[tuple[str, bool]]:
    """Text cut into (piece, is_word) runs; joining the pieces gives the text back."""
    pieces: list[tuple[str, bool]] = []
    for char in text:
        is_word = char == "_" or char.isalnum() or unicodedata.category(char)[0] == "M"
        if pieces and pieces[-1][1] == is_word:
            pieces[-1] = (pieces[-1][0] + char, is_word)
        else:
            pieces.append((char, is_word))
    return pieces


_ASCII_WORD = re.compile(r"[A-Za-z0-9_]+")


def _words(text: str) -> list[str]:
    if text.isascii():  # the same runs as split_words, by regex (20x faster on long texts)
        return _ASCII_WORD.findall(text)
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
    for text_word in _words(fold(text)):
        tokens.extend(_word_tokens(text_word))
    return tokens


@functools.lru_cache(maxsize=1 << 17)
def _word_tokens(text_word: str) -> tuple[str, ...]:
    """One word's tokens. Cached: a corpus repeats few distinct words many times (a
    25k-chunk API site: 1.7 million words, tokenized in 2.6 s without the cache)."""
    tokens: list[str] = []
    for word, cjk in _script_runs(text_word):
        if cjk:
            tokens.extend([word] if len(word) == 1 else [word[i:i + 2] for i in range(len(word) - 1)])
            continue
        parts = word_parts(word)
        whole = word.lower().strip("_")
        if len(parts) > 1 and _keep(whole):
            tokens.append(stem(whole))
        tokens.extend(stem(p) for p in parts if _keep(p))
    return tuple(tokens)


def identifier_tokens(text: str) -> list[str]:
    """The tokens of ``text`` written as identifiers or codes, each once: the whole form of a
    word made of parts (``create_app``, ``KNeighborsClassifier``) and every token holding a
    digit 0-9 (``SN0421``, ``codeline19999``, ``507``). Such a query word names one thing
    (retrieve.decisive_hits)."""
    out: list[str] = []
    for text_word in _words(fold(text)):
        for word, cjk in _script_runs(text_word):
            if cjk:
                continue
            parts = word_parts(word)
            whole = word.lower().strip("_")
            if len(parts) > 1 and _keep(whole):
                out.append(stem(whole))
            out.extend(stem(p) for p in parts if _keep(p) and any("0" <= c <= "9" for c in p))
    return list(dict.fromkeys(out))
