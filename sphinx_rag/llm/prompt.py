"""Search results -> the chat messages sent to the LLM, within its context window.

The passages are numbered ``[n] Title (URL)`` so the answer can cite them; the
lowest-ranked are dropped first when they do not fit, and the top one is cut only
after a whole sentence. Mirrored by ``js/src/llm/prompt.js`` (same numbering, same token
estimate, same cutting rule; tests compare both on the same inputs).

What the LLM reads
    ``llm_passage``: a result's display form as plain text (``chunk.display.display_text``),
    not its embedded text. It is shorter (no owner repeated in every API chunk, no
    template wording, no reST markup): on the 82 demo questions the top 8 passages take
    989 estimated tokens (median) instead of 1,249, so a 1,024-token window gets 2.76
    passages instead of 2.07 on average (2,048: 7.87 instead of 7.55). And it reads like
    the numpydoc a model was trained on (``strategy : str, default="mean"``, code
    indented). The ``[n] Title (URL)`` line still names the owner.

Token estimate
    ``ceil(characters / 4)`` (characters = Unicode code points): a deliberately
    rough, tokenizer-free count, slightly pessimistic for English prose with
    Llama/Gemma/Mistral tokenizers.

Passages sized to the context
    ``passage_budget``: the characters the passages may take, from what the window
    leaves (the same reserve as ``build_messages``), less PASSAGE_HEADER_CHARS for each
    passage's ``[n] Title (URL)`` line. The search makes its passages fit in it
    (``search/expand.py``: shorter passages, more of them) before ``fit_passages`` checks them
    exactly.

A follow-up question (``thread``)
    The earlier turns of the conversation (``thread.history``: the last few, bounded)
    come as user/assistant messages before the question's own; they count in the reserve,
    so the passages get what they leave.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

from ..chunk.display import display_text
from ..config import LLM_DEFAULTS, ConfigError
from .sentences import sentence_ends
from .template import DEFAULT_PROMPT, render, validate_prompt
from .thread import history, history_messages

__all__ = [
    "ANSWER_RESERVE_TOKENS", "MESSAGE_OVERHEAD_TOKENS", "Prompt", "estimate_tokens",
    "format_passages", "sentence_ends", "fit_passages", "build_messages", "llm_passage", "passage_budget",
    "PASSAGE_HEADER_CHARS",
]

ANSWER_RESERVE_TOKENS = 512  # room left in the context window for the answer (also its max_tokens)
MESSAGE_OVERHEAD_TOKENS = 16  # chat-template tokens around the messages
PASSAGE_HEADER_CHARS = 100  # a passage's "[n] Title (URL)" line and the blank line after it, about


def estimate_tokens(text: str) -> int:
    """Approximate token count: ceil(code points / 4) (mirrored in JS)."""
    return math.ceil(len(text) / 4)


def _get(result: Any, name: str):
    return result[name] if isinstance(result, dict) else getattr(result, name)


def _with_text(result: Any, text: str):
    if isinstance(result, dict):
        return {**result, "text": text}
    if dataclasses.is_dataclass(result):
        return dataclasses.replace(result, text=text)
    raise TypeError("results must be dicts or dataclasses with a 'text' field")


def llm_passage(result: Any):
    """The result with ``text`` replaced by the plain text of its display form (what the
    LLM reads, see above); a result without a display keeps its text."""
    display = _get(result, "display") if (hasattr(result, "display") or
                                          (isinstance(result, dict) and "display" in result)) else None
    return result if display is None else _with_text(result, display_text(display))


def _passage(n: int, result: Any) -> str:
    return f"[{n}] {_get(result, 'title')} ({_get(result, 'url')})\n{_get(result, 'text').strip()}"


def format_passages(results) -> str:
    """``[n] Title (URL)`` then the text, numbered from 1, separated by a blank line."""
    return "\n\n".join(_passage(n, r) for n, r in enumerate(results, start=1))


def fit_passages(results, max_context_tokens: int, reserve_tokens: int) -> list:
    """The passages that fit in ``max_context_tokens - reserve_tokens`` estimated tokens.

    Passages are taken in rank order; one that does not fit in what is left is
    skipped (a shorter, lower-ranked one may still fit). The top passage alone too
    long is cut after the last whole sentence that fits (never mid-sentence; if
    not even its first sentence fits, it is skipped too).
    """
    budget = max_context_tokens - reserve_tokens
    kept: list = []
    for rank, r in enumerate(results):
        if estimate_tokens(format_passages(kept + [r])) <= budget:
            kept.append(r)
        elif rank == 0:
            cut = _cut_to_fit(r, budget)
            if cut is not None:
                kept.append(cut)
    return kept


def _cut_to_fit(result, budget: int):
    """The result with its text cut after the last whole sentence that fits, or None."""
    text = _get(result, "text").strip()
    for end in reversed(sentence_ends(text)):
        cut = _with_text(result, text[:end].rstrip())
        if estimate_tokens(format_passages([cut])) <= budget:
            return cut
    return None


class Prompt(NamedTuple):
    messages: list[dict]
    passages: list  # the passages sent, in citation order: [n] is passages[n - 1]


def _messages(prompt: str, project: str, passages: str, question: str, earlier: list[tuple[str, str]]) -> list[dict]:
    """The template's messages, the earlier turns just before the last one (the question's)."""
    messages = render(prompt, project=project, passages=passages, question=question)
    return messages[:-1] + history_messages(earlier) + messages[-1:]


def _reserve(question: str, project: str, prompt: str, earlier: list[tuple[str, str]]) -> int:
    """Tokens the context keeps for all but the passages: the prompt without them (the
    earlier turns included), plus ANSWER_RESERVE_TOKENS for the answer and
    MESSAGE_OVERHEAD_TOKENS for the chat template. Raises ConfigError for an invalid template."""
    error = validate_prompt(prompt)
    if error:
        raise ConfigError(f"[sphinx-rag] the LLM prompt {error}")
    empty = _messages(prompt, project, "", question, earlier)
    return sum(estimate_tokens(m["content"]) for m in empty) + ANSWER_RESERVE_TOKENS + MESSAGE_OVERHEAD_TOKENS


def passage_budget(question: str, k: int, *, project: str, prompt: str = DEFAULT_PROMPT,
                   max_context_tokens: int = LLM_DEFAULTS["max_context_tokens"], thread=()) -> int:
    """Characters the texts of ``k`` passages may take together in the context window
    (at least 1): 4 per token left after the reserve, less PASSAGE_HEADER_CHARS each.
    ``thread``: the earlier turns ({"question", "answer"}, oldest first) of a follow-up."""
    left = max_context_tokens - _reserve(question, project, prompt, history(thread, max_context_tokens))
    return max(1, 4 * left - k * PASSAGE_HEADER_CHARS)


def build_messages(question: str, results, *, project: str, prompt: str = DEFAULT_PROMPT,
                   max_context_tokens: int = LLM_DEFAULTS["max_context_tokens"], thread=()) -> Prompt:
    """Chat messages asking ``question`` about the passages that fit in the context window.

    The reserve is the prompt without passages (and the earlier turns of ``thread``, see
    ``thread.history``), plus ANSWER_RESERVE_TOKENS for the answer and
    MESSAGE_OVERHEAD_TOKENS for the chat template. Raises ConfigError for an invalid template.
    """
    earlier = history(thread, max_context_tokens)
    reserve = _reserve(question, project, prompt, earlier)
    kept = fit_passages(results, max_context_tokens, reserve)
    passages = format_passages(kept) if kept else "(no documentation excerpt was found)"
    return Prompt(_messages(prompt, project, passages, question, earlier), kept)
