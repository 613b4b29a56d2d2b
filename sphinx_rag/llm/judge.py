"""LLM filtering for Ask (UIUC.chat's "filtering", seed 004): the model judges each
passage before answering, and those it calls irrelevant are not sent.

One call per passage, each asking for one word (yes or no), rather than one call
listing every passage: a 270M model reads one short excerpt and answers one word far
more reliably than it numbers the useful ones in a list of eight, a failed or sloppy
call costs one passage's verdict instead of all of them, and the time is about the
same on one CPU (the prompt tokens are the same, read once either way; measured in
eval/RESULTS.md, "Multi-query and LLM filtering for Ask").

An answer that is neither yes nor no keeps the passage (``parse_verdict`` is None): the
filter only removes what the model clearly rejects. When it rejects every passage, all
are sent anyway (``kept_passages``): a small model that says "no" to everything must not
leave the answer without sources.

Mirrored by ``js/src/llm/judge.js``; ``tests/fixtures/multi_query.json`` pins both.
"""

from __future__ import annotations

import re

__all__ = ["JUDGE_MAX_TOKENS", "JUDGE_PASSAGE_CHARS", "judge_messages", "parse_verdict", "kept_passages"]

JUDGE_MAX_TOKENS = 8  # one word, with room for "Yes." or "**No**"
JUDGE_PASSAGE_CHARS = 2000  # of the passage shown to the judge (its beginning)

_SYSTEM = ("You check whether an excerpt of the {project} documentation helps to answer a question. "
           "Reply with one word: yes or no.")
_USER = ("Question: {question}\n\nExcerpt ({title}):\n{text}\n\n"
         "Does this excerpt help to answer the question? Reply yes or no.")

_YES = {"yes", "y", "yeah", "yep", "true", "relevant", "helpful", "helps", "oui", "ja", "si"}
_NO = {"no", "nope", "false", "irrelevant", "unhelpful", "not", "non", "nein"}
_WORD = re.compile(r"[^\W\d_]+")


def judge_messages(question: str, title: str, text: str, project: str) -> list[dict]:
    """The chat messages asking whether one passage helps to answer ``question``."""
    shown = text.strip()
    if len(shown) > JUDGE_PASSAGE_CHARS:
        shown = shown[:JUDGE_PASSAGE_CHARS].rstrip() + " ..."
    return [{"role": "system", "content": _SYSTEM.format(project=project)},
            {"role": "user", "content": _USER.format(question=question, title=title, text=shown)}]


def parse_verdict(text: str) -> bool | None:
    """True (yes), False (no) or None (neither: the passage is kept) from the judge's reply:
    its first word that is a yes or a no ("Yes.", "**No**", "Answer: no", "Not relevant")."""
    for word in _WORD.findall((text or "").casefold())[:12]:
        if word in _YES:
            return True
        if word in _NO:
            return False
    return None


def kept_passages(passages: list, verdicts: list[bool | None]) -> list:
    """The passages not rejected (a verdict other than False); all of them when every one is."""
    kept = [p for p, v in zip(passages, verdicts) if v is not False]
    return kept or list(passages)
