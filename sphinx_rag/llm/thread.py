"""Ask as a conversation: the earlier turns a follow-up question is asked with, and the
follow-up questions a model suggests after its answer.

A thread is a list of turns ``{"question", "answer"}``, oldest first (the browser keeps
it in the tab's sessionStorage; "New question" empties it).

What the model reads of it (``history``)
    At most MAX_THREAD_TURNS earlier turns, newest kept first, within MAX_THREAD_CHARS
    characters of questions and answers together (and a quarter of the context window
    left after the answer's room, so the passages keep most of it). Each earlier answer
    loses its suggested follow-ups and its ``[n]`` citations (they number an earlier
    turn's passages, not this one's) and is cut after the last whole sentence within
    MAX_TURN_ANSWER_CHARS. They become user/assistant messages before the question's own
    (``prompt.build_messages``); an earlier turn's passages are not sent again.

How a follow-up retrieves (``thread_query``)
    "what about the median?" alone finds little: the search runs the question and the
    question joined after the last THREAD_QUERY_TURNS earlier questions, and fuses both
    rankings (reciprocal rank, as multi-query does), so the thread's topic counts without
    drowning a new one. With ``multi_query`` the rewrite also sees the earlier questions
    (``multi_query.rewrite_messages``); with ``filter_passages`` the judge reads the joined
    question.

Suggested follow-ups (``parse_follow_ups``)
    The default prompt asks for up to three after a line "Follow-up questions:". Never
    required: the last such heading, then only list items or question lines to the end,
    each a question (ends with "?") of 3 to MAX_FOLLOW_UP_CHARS characters; anything else
    after the heading (the model went on answering) means none, and the text is kept whole.

Mirrored by ``js/src/llm/thread.js``; ``tests/fixtures/ask_thread.json`` pins both.
"""

from __future__ import annotations

import re

from .sentences import sentence_ends

__all__ = ["MAX_THREAD_TURNS", "MAX_THREAD_CHARS", "MAX_TURN_ANSWER_CHARS", "THREAD_QUERY_TURNS", "MAX_FOLLOW_UPS",
           "MAX_FOLLOW_UP_CHARS", "history", "history_messages", "earlier_questions", "thread_query",
           "parse_follow_ups", "strip_citations", "citation_check"]

MAX_THREAD_TURNS = 3  # earlier turns the model reads
MAX_THREAD_CHARS = 3000  # of their questions and answers together
MAX_TURN_ANSWER_CHARS = 1000  # of one earlier answer
THREAD_QUERY_TURNS = 2  # earlier questions joined to a follow-up for retrieval
MAX_FOLLOW_UPS = 3
MAX_FOLLOW_UP_CHARS = 200

_ANSWER_RESERVE_TOKENS = 512  # prompt.ANSWER_RESERVE_TOKENS (prompt.py imports this module)

_CITATION = re.compile(r" ?\[[0-9]{1,3}(?: *, *[0-9]{1,3})*\]")
_HEADING = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*"
                      r"(?:(?:suggested |related |possible )?follow[- ]?up(?: questions?)?|(?:suggested|related) questions)"
                      r"[ \t]*:?[ \t]*(?:\*\*|__)?[ \t]*:?[ \t]*$", re.I | re.A)
_ITEM = re.compile(r"^[ \t]*(?:[-*+]|[0-9]{1,2}[.)])[ \t]+(.*)$")
_EMPHASIS = re.compile(r"^(\*\*|__|\*|_)(.+)\1$")
_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
_BLANKS = " \t"


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def strip_citations(text: str) -> str:
    """The text without its ``[n]`` / ``[1, 2]`` citations."""
    return _CITATION.sub("", text)


def citation_check(text: str, sent: int) -> dict:
    """What an answer cites, against the passages it was given: ``cited`` every number of
    its ``[n]`` / ``[1, 2]`` citations, once each, ascending; ``unknown`` those that name no
    passage sent (0, or above ``sent``). An answer that cites nothing, or a passage it was
    not given, is shown as such (``sphinx-rag ask``'s note, the Ask panel's)."""
    cited = sorted({int(n) for m in _CITATION.finditer(text) for n in re.findall(r"[0-9]+", m.group())})
    return {"cited": cited, "unknown": [n for n in cited if n < 1 or n > sent]}


def _cut(text: str, limit: int) -> str:
    """The text, or its first ``limit`` characters cut after their last whole sentence, then " …"."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = sentence_ends(head)
    return (head[:ends[-1]] if ends else head).rstrip(" \t\n\r\f\v") + " …"


def _turn(turn) -> tuple[str, str] | None:
    """(question, answer) as the model reads them, or None for a turn without both."""
    if not isinstance(turn, dict):
        return None
    question, answer = turn.get("question"), turn.get("answer")
    if not isinstance(question, str) or not isinstance(answer, str):
        return None
    question = question.strip(_BLANKS + "\n")
    answer = strip_citations(parse_follow_ups(answer)[0]).strip(_BLANKS + "\n")
    if not question or not answer:
        return None
    return question[:MAX_FOLLOW_UP_CHARS * 2], _cut(answer, MAX_TURN_ANSWER_CHARS)


def history(thread, max_context_tokens: int) -> list[tuple[str, str]]:
    """The earlier turns the model reads, oldest first (see the module's docstring)."""
    turns = [t for t in (_turn(t) for t in (thread or [])) if t is not None][-MAX_THREAD_TURNS:]
    room = min(MAX_THREAD_CHARS, max(0, max_context_tokens - _ANSWER_RESERVE_TOKENS))
    kept: list[tuple[str, str]] = []
    total = 0
    for question, answer in reversed(turns):
        total += len(question) + len(answer)
        if total > room:
            break
        kept.insert(0, (question, answer))
    return kept


def history_messages(turns: list[tuple[str, str]]) -> list[dict]:
    """The earlier turns as chat messages: the question (user), the answer (assistant)."""
    out = []
    for question, answer in turns:
        out += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    return out


def earlier_questions(thread) -> list[str]:
    """The last THREAD_QUERY_TURNS questions of the thread, oldest first."""
    questions = [t["question"].strip(_BLANKS + "\n") for t in (thread or [])
                 if isinstance(t, dict) and isinstance(t.get("question"), str)]
    return [q[:MAX_FOLLOW_UP_CHARS * 2] for q in questions if q][-THREAD_QUERY_TURNS:]


def thread_query(thread, question: str) -> str | None:
    """What a follow-up is also searched as: the earlier questions, then it (None without any)."""
    earlier = earlier_questions(thread)
    return " ".join([*earlier, question]) if earlier else None


def _strip(text: str, chars: str) -> str:
    return text.strip(chars)


def _follow_up(item: str) -> str | None:
    """A list item as a follow-up question, or None."""
    text = _strip(item, _BLANKS)
    for _ in range(3):
        before = text
        m = _EMPHASIS.match(text)
        if m:
            text = m.group(2)
        text = _strip(_strip(text, _BLANKS), _QUOTES + _BLANKS)
        text = _strip(strip_citations(text), _BLANKS)
        if text == before:
            break
    return text if 3 <= len(text) <= MAX_FOLLOW_UP_CHARS and text.endswith("?") else None


def parse_follow_ups(text: str) -> tuple[str, list[str]]:
    """(the answer without its follow-up list, up to MAX_FOLLOW_UPS questions); the text
    as given and [] when there is no well-formed list."""
    text = text or ""
    lines = _lines(text)
    at = next((i for i in range(len(lines) - 1, -1, -1) if _HEADING.match(lines[i])), None)
    if at is None:
        return text, []
    questions: list[str] = []
    seen: set[str] = set()
    for line in lines[at + 1:]:
        if not line.strip(_BLANKS):
            continue
        item = _ITEM.match(line)
        if item:
            body = item.group(1)
        elif line.rstrip(_BLANKS).endswith("?") and len(line) <= MAX_FOLLOW_UP_CHARS:
            body = line
        else:
            return text, []  # prose after the heading: not a list of questions
        question = _follow_up(body)
        if question and question.lower() not in seen and len(questions) < MAX_FOLLOW_UPS:
            seen.add(question.lower())
            questions.append(question)
    return "\n".join(lines[:at]).rstrip(_BLANKS + "\n"), questions
