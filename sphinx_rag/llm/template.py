"""The prompt template: the default text, its placeholders and how it becomes messages.

A template is one string with the placeholders ``{project}``, ``{passages}`` and
``{question}`` (``{{``/``}}`` for literal braces). A line that is exactly ``---``
separates the system message (before) from the user message (after); without it the
whole text is a single user message.

A leaf module (standard library only) because both sides need it: ``config.py``
validates a site's template with :func:`validate_prompt`, and ``prompt.py`` fills it.
Mirrored by ``js/src/llm/prompt.js``.
"""

from __future__ import annotations

import string

__all__ = ["DEFAULT_PROMPT", "PLACEHOLDERS", "SEPARATOR", "validate_prompt", "render"]

DEFAULT_PROMPT = """\
You are an expert of the {project} project. You answer questions about {project} \
using only the numbered excerpts of its documentation given below.

Rules:
- Answer only from the provided content; do not use other knowledge and do not invent \
APIs, parameters or values.
- Be succinct.
- Use backticks for code names: classes, functions, methods, parameters, values and \
anything containing underscores.
- Cite the excerpts that support each statement as [n], e.g. [1] or [2][3].
- If the content does not contain the answer, say so plainly instead of guessing.
- After the answer you may suggest up to 3 short follow-up questions that the excerpts \
can answer: a line "Follow-up questions:", then one question per line, each starting with "- ".
---
Documentation excerpts:

{passages}

Question: {question}"""

PLACEHOLDERS = ("project", "passages", "question")
SEPARATOR = "---"  # a line on its own: system message above, user message below


def validate_prompt(prompt: str) -> str | None:
    """An error message for a bad template, or None."""
    if not isinstance(prompt, str) or not prompt.strip():
        return "must be a non-empty string"
    try:
        parsed = list(string.Formatter().parse(prompt))
    except ValueError as exc:
        return f"is not a valid template ({exc}); write literal braces as '{{{{' and '}}}}'"
    fields = {field for _, field, _, _ in parsed if field is not None}
    for _, field, spec, conv in parsed:
        if field is None:
            continue
        if field not in PLACEHOLDERS or spec or conv:
            shown = "{" + field + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}"
            return (f"has an unknown placeholder {shown}; allowed: {{project}}, {{passages}}, "
                    "{question} (write literal braces as '{{' and '}}')")
    for name in ("question", "passages"):
        if name not in fields:
            return f"must contain the placeholder {{{name}}}"
    return None


def render(prompt: str, **values) -> list[dict]:
    """The chat messages of a valid template filled with ``values``."""
    text = prompt.format(**values)
    lines = text.split("\n")
    if SEPARATOR in lines:
        at = lines.index(SEPARATOR)
        system, user = "\n".join(lines[:at]).strip(), "\n".join(lines[at + 1:]).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return [{"role": "user", "content": text.strip()}]
