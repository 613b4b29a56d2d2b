"""The LLM settings a built site carries, and how a runtime combines them with its own.

The build writes the site's settings into ``manifest.json`` (``settings.llm``) with
:func:`browser_settings`. At query time :func:`merge_settings` lays the caller's
overrides over them: ``sphinx-rag ask`` its command-line flags, the browser (the same
rule in ``js/src/llm/llm_settings.js``) the reader's saved settings. Both runtimes are
pinned by ``tests/fixtures/llm_settings.json``.

No HTTP here: the build imports this module.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..config import LLM_DEFAULTS, llm_settings

__all__ = ["DEFAULT_PROJECT", "SETTINGS_DEFAULTS", "browser_settings", "merge_settings"]

DEFAULT_PROJECT = "documented"  # the {project} of the prompt when nobody names it

SETTINGS_DEFAULTS = {**LLM_DEFAULTS, "project": DEFAULT_PROJECT}


def browser_settings(config: dict | None, project: str) -> dict:
    """The resolved, non-secret LLM settings for the manifest (JSON-able); ``{}`` when off.

    Keys: endpoint (normalised, ends in /v1), model, max_context_tokens,
    temperature, timeout (seconds), max_answer_chars, multi_query, filter_passages,
    prompt (the template, default or custom), project. Raises ConfigError for an
    invalid ``sphinx_rag_llm``.
    """
    settings = llm_settings(config)
    if not settings:
        return {}
    return {"endpoint": settings["endpoint"], "model": settings["model"],
            "max_context_tokens": settings["max_context_tokens"],
            "temperature": settings["temperature"], "timeout": settings["timeout"],
            "max_answer_chars": settings["max_answer_chars"], "multi_query": settings["multi_query"],
            "filter_passages": settings["filter_passages"], "prompt": settings["prompt"],
            "project": str(project or "")}


# -- the merge rule ---------------------------------------------------------------------

def _number(value: Any) -> float | None:
    """``value`` as a finite float if it is a real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _endpoint(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _int(value: Any) -> int | None:
    return None if _number(value) is None else int(value)  # truncated, as Math.trunc


def _positive(value: Any) -> float | None:
    number = _number(value)
    return number if number is not None and number > 0 else None


def _switch(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _count(value: Any) -> int | None:
    number = _int(value)
    return number if number is not None and number >= 1 else None


# key -> the usable form of a value, or None when it is of the wrong type or empty
_USABLE: dict[str, Callable[[Any], Any]] = {
    "endpoint": _endpoint,
    "model": _text,
    "max_context_tokens": _int,
    "temperature": _number,
    "timeout": _positive,
    "max_answer_chars": _count,
    "multi_query": _switch,
    "filter_passages": _switch,
    "prompt": _text,
    "project": _text,
}


def merge_settings(layers) -> dict | None:
    """The settings an answer uses, from ``layers`` (dicts, highest priority first).

    For each key, the first layer that sets it (a value other than None) decides: its
    value if usable, else the default (not a lower layer: an empty override means "none").
    Usable: endpoint a non-blank string; model, prompt, project a non-empty string;
    max_context_tokens a finite number (truncated to an int); temperature a finite
    number; timeout a number > 0; max_answer_chars a finite number that is at least 1
    once truncated to an int; multi_query, filter_passages a boolean. Booleans are
    never numbers. Defaults:
    ``SETTINGS_DEFAULTS``. Returns None when there is no endpoint (the LLM is off).
    """
    layers = [layer for layer in layers if isinstance(layer, dict)]
    out = {}
    for key, usable in _USABLE.items():
        value = next((layer[key] for layer in layers if layer.get(key) is not None), None)
        value = None if value is None else usable(value)
        out[key] = SETTINGS_DEFAULTS[key] if value is None else value
    return out if out["endpoint"] else None
