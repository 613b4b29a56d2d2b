"""The passages an answer reads, and the extra LLM calls that choose them (opt-in).

1. With ``multi_query``: the model rewrites the question into search queries
   (``multi_query.py``); the question and each query are searched, their rankings fused.
   Without it, or when the model gives no usable query, the question alone.
2. The passages are sized to the context window by the search (``search(queries)``:
   ``Searcher.passages`` with the budget of ``prompt.passage_budget``).
3. With ``filter_passages``: the model judges each passage, one call each (``judge.py``);
   the rejected ones are not sent.

A follow-up (``thread``: the conversation's earlier turns) is also searched as
``thread.thread_query`` (the earlier questions joined to it), fused with the question's own
ranking; the rewrite sees the earlier questions and the judge reads the joined question.

Each extra call is announced to ``on_step_start`` (its kind, the passage judged) and
reported to ``on_step`` as a :class:`Step` when it ends (its reply,
seconds, and tokens: the server's ``usage`` when it sends one, else ``ceil(chars / 4)``
of the messages and the reply). A failed call (the server down, a timeout) ends the extra
steps: the question is searched alone, the passages are kept, and the answer's own call
reports the failure. Mirrored by ``js/src/llm/context.js``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .client import LLMError
from .judge import JUDGE_MAX_TOKENS, judge_messages, kept_passages, parse_verdict
from .multi_query import REWRITE_MAX_TOKENS, parse_queries, rewrite_messages
from .prompt import MESSAGE_OVERHEAD_TOKENS, estimate_tokens, llm_passage
from .thread import earlier_questions, thread_query

__all__ = ["Step", "Context", "gather_context", "call_step"]

#: complete(messages, max_tokens) -> (reply, usage or None); raises LLMError
Complete = Callable[[list[dict], int], tuple[str, Any]]


@dataclass
class Step:
    kind: str  # "rewrite" or "judge"
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # no usage from the server: the tokens are ceil(chars / 4)
    reply: str = ""
    error: str = ""  # the call failed
    result: Any = None  # the queries read (rewrite) or the verdict (judge: True, False, None)
    passage: Any = None  # the passage judged


@dataclass
class Context:
    passages: list  # what the answer may read (llm_passage form), best first
    queries: list[str]  # the question, a follow-up's thread query (thread.py), then the model's queries
    retrieved: list = field(default_factory=list)  # the passages before judging
    verdicts: list = field(default_factory=list)  # per retrieved passage, with filter_passages
    steps: list[Step] = field(default_factory=list)


def _field(passage: Any, name: str) -> str:
    return passage[name] if isinstance(passage, dict) else getattr(passage, name)


def _count(usage: Any, key: str) -> int | None:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def call_step(kind: str, complete: Complete, messages: list[dict], max_tokens: int) -> Step:
    """One extra call, timed, with its token counts (the server's, else estimated)."""
    start = time.monotonic()
    try:
        reply, usage = complete(messages, max_tokens)
    except LLMError as exc:
        return Step(kind, time.monotonic() - start, 0, 0, True, error=str(exc))
    seconds = time.monotonic() - start
    prompt, completion = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    estimated = prompt is None or completion is None
    if estimated:
        prompt = sum(estimate_tokens(m["content"]) for m in messages) + MESSAGE_OVERHEAD_TOKENS
        completion = estimate_tokens(reply)
    return Step(kind, seconds, prompt, completion, estimated, reply=reply)


def gather_context(question: str, search: Callable[[list[str]], list], *, project: str,
                   complete: Complete | None = None, multi_query: bool = False, filter_passages: bool = False,
                   thread=(), on_step_start: Callable[[str, Any], None] = lambda kind, passage: None,
                   on_step: Callable[[Step], None] = lambda step: None) -> Context:
    """The passages for an answer to ``question`` (see the module's docstring).

    ``search(queries)`` returns the passages of the queries' fused rankings (one query:
    its own), sized to the context; ``complete`` makes the extra calls (needed for
    ``multi_query`` and ``filter_passages``); ``thread``: the earlier turns of a follow-up.
    """
    joined = thread_query(thread, question)
    queries, steps = [question] + ([joined] if joined else []), []
    failed = False
    if multi_query and complete is not None:
        on_step_start("rewrite", None)
        messages = rewrite_messages(question, project, earlier_questions(thread))
        step = call_step("rewrite", complete, messages, REWRITE_MAX_TOKENS)
        failed = bool(step.error)
        step.result = [] if failed else parse_queries(step.reply, question)
        queries += step.result
        steps.append(step)
        on_step(step)
    passages = [llm_passage(r) for r in search(queries)]
    context = Context(passages, queries, retrieved=passages, steps=steps)
    if filter_passages and complete is not None and not failed and passages:
        for p in passages:
            on_step_start("judge", p)
            messages = judge_messages(joined or question, _field(p, "title"), _field(p, "text"), project)
            step = call_step("judge", complete, messages, JUDGE_MAX_TOKENS)
            step.passage = p
            step.result = None if step.error else parse_verdict(step.reply)
            steps.append(step)
            context.verdicts.append(step.result)
            on_step(step)
            if step.error:
                break
        verdicts = context.verdicts + [None] * (len(passages) - len(context.verdicts))
        context.passages = kept_passages(passages, verdicts)
    return context
