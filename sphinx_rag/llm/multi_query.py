"""Multi-query retrieval for Ask (UIUC.chat's "multiple queries", seed 004).

The LLM rewrites the question into up to MAX_QUERIES search queries in the words the
documentation would use; each is ranked like the question, and the rankings are fused
by reciprocal rank with the question's own (RRF_K, every ranking one vote), so a chunk
that several phrasings find comes first and the question's own hits stay in.

Small models answer sloppily: a preamble, numbered or bulleted lists, quotes, bold,
several queries on one line, the question repeated, the same query twice, or prose and
no query at all. ``parse_queries`` keeps what reads as queries and drops the rest; with
none left the question is searched alone.

Mirrored by ``js/src/llm/multi_query.js``; ``tests/fixtures/multi_query.json`` pins both.
No HTTP here (``client.py`` sends the messages).
"""

from __future__ import annotations

import re

__all__ = ["MAX_QUERIES", "REWRITE_MAX_TOKENS", "RRF_K", "rewrite_messages", "parse_queries", "fuse_rankings"]

MAX_QUERIES = 3
REWRITE_MAX_TOKENS = 128  # three short queries; a model that rambles is cut there
RRF_K = 60  # as the keyword/semantic fusion (search/retrieve.py)
_MAX_QUERY_CHARS = 160  # longer lines are prose, not queries
_MAX_QUERY_WORDS = 20

_SYSTEM = ("You write search queries for the documentation of {project}. You never answer the question "
           "yourself.")
_USER = ("Write 3 short search queries that would find the parts of the documentation that answer the question "
         "below. Use the words the documentation would use: names of functions, classes, parameters and "
         "options, and plain keywords. Write one query per line and nothing else.\n\nQuestion: {question}")

_FENCE = re.compile(r"^\s*(```|~~~)")
_FIRST_ITEM = re.compile(r"^\s*\(?1[.)]\s")
_NEXT_ITEM = re.compile(r"\s\(?[0-9]{1,2}[.)]\s")
_SEPARATOR = re.compile(r"\s*[|;]\s*")
_LABEL = re.compile(r"^(?:(?:search\s+)?(?:query|queries|q)\s*[0-9]{0,2}\s*[:.)]|\(?[0-9]{1,2}[.):]|[-*+\u2022>#]+)\s*", re.I)
_QUOTES = "\"'`\u201c\u201d\u2018\u2019\u00ab\u00bb"
_EMPHASIS = re.compile(r"(\*\*|__|\*|_)(.+?)\1")
_WORD = re.compile(r"\w+")
_CHATTER = re.compile(r"^(?:here (?:are|is)|sure|certainly|of course|okay|i hope|hope this|let me know|note)\b", re.I)
#: A line that starts as a chat turn ("Question: ...", "User: ...") repeats the prompt.
_ECHO_LABEL = re.compile(r"^[*_\s]*(?:question|user|system|assistant)[*_\s]*:", re.I)


_THREAD = ("\n\nThe question follows earlier questions of a conversation: write queries that make sense "
           "on their own.\n\nEarlier questions:\n{earlier}")


def rewrite_messages(question: str, project: str, earlier=()) -> list[dict]:
    """The chat messages asking for the search queries of ``question``; ``earlier``: the
    conversation's earlier questions (``thread.earlier_questions``), oldest first."""
    user = _USER.format(question=question)
    if earlier:
        listed = "\n".join(f"- {q}" for q in earlier)
        head, tail = user.rsplit("\n\nQuestion: ", 1)
        user = head + _THREAD.replace("{earlier}", listed) + "\n\nQuestion: " + tail
    return [{"role": "system", "content": _SYSTEM.format(project=project)}, {"role": "user", "content": user}]


def _clean(line: str) -> str:
    """A line without list markers, labels, emphasis and the quotes around it."""
    text = line.strip()
    for _ in range(3):  # "1. **Query 1:** "..."" takes a few rounds
        before = text
        text = _LABEL.sub("", text).strip()
        text = _EMPHASIS.sub(r"\2", text).strip()
        text = text.strip(_QUOTES).strip()
        text = text.rstrip(",;").strip()
        if text == before:
            break
    return text


def _key(text: str) -> str:
    """What two queries share when they are the same query (case, punctuation, spacing)."""
    return " ".join(_WORD.findall(text.casefold()))


#: The words of the instructions (the prompt without the project and the question).
_PROMPT_WORDS = frozenset(_key(_SYSTEM.format(project="") + " " + _USER.format(question="")).split())


def _echoes_prompt(key: str) -> bool:
    """Three or more words, three quarters of them the instructions': a small model that
    repeats its prompt (Gemma 3 270M echoes it whole, cut anywhere) is not writing queries."""
    words = key.split()
    return len(words) >= 3 and 4 * sum(w in _PROMPT_WORDS for w in words) >= 3 * len(words)


def _lines(text: str) -> list[str]:
    """The answer's lines; a line holding a numbered list ("1. a 2. b") is cut before each
    number, one with ``|`` or ``;`` at them."""
    out = []
    for line in text.splitlines():
        if _FENCE.match(line):
            continue
        if _FIRST_ITEM.match(line) and _NEXT_ITEM.search(line):
            starts = [0] + [m.start() for m in _NEXT_ITEM.finditer(line)] + [len(line)]
            out.extend(line[a:b] for a, b in zip(starts, starts[1:]))
        else:
            out.extend(_SEPARATOR.split(line))
    return out


def parse_queries(text: str, question: str) -> list[str]:
    """Up to MAX_QUERIES distinct search queries read from the model's answer (none: [])."""
    seen = {_key(question)}
    queries: list[str] = []
    for line in _lines(text or ""):
        stripped = line.strip()
        if not stripped or stripped.endswith((":", "!")) or _ECHO_LABEL.match(stripped):
            continue  # blank, a preamble ("Here are three queries:"), an exclamation, the question again
        query = _clean(stripped)
        if _CHATTER.match(query):
            continue  # "Sure, ...", "I hope this helps."
        key = _key(query)
        if (not key or key in seen or len(query) > _MAX_QUERY_CHARS or len(key.split()) > _MAX_QUERY_WORDS
                or _echoes_prompt(key)):
            continue
        seen.add(key)
        queries.append(query)
        if len(queries) == MAX_QUERIES:
            break
    return queries


def fuse_rankings(rankings: list[dict[int, float]], rrf_k: int = RRF_K) -> dict[int, float]:
    """Reciprocal-rank fusion of chunk rankings (chunk -> score, each ranked by
    (-score, chunk)): sum of 1 / (rrf_k + rank), in ranking order."""
    fused: dict[int, float] = {}
    for scored in rankings:
        for rank, i in enumerate(sorted(scored, key=lambda i: (-scored[i], i)), start=1):
            fused[i] = fused.get(i, 0.0) + 1.0 / (rrf_k + rank)
    return fused
