"""Optional answers from a local OpenAI-compatible LLM server (llama.cpp, Ollama, vLLM).

Plain Python, standard library only (``http.client``: no proxy environment
variables are honoured, a local endpoint is reached directly). The browser
client ``js/src/llm.js`` mirrors :func:`build_messages` (same template, same
numbering, same token estimate, same cutting rule) and :func:`stream_chat`
(same failure modes).

Prompt template
    One string with the placeholders ``{project}``, ``{passages}`` and
    ``{question}`` (``{{``/``}}`` for literal braces). A line that is exactly
    ``---`` separates the system message (before) from the user message
    (after); without it the whole text is a single user message.

Token estimate
    ``ceil(characters / 4)`` (characters = Unicode code points): a deliberately
    rough, tokenizer-free count, slightly pessimistic for English prose with
    Llama/Gemma/Mistral tokenizers.

Timeout
    ``timeout`` seconds is an *inactivity* limit: the longest wait for the
    server to accept the connection, to start answering, and between two
    pieces of the streamed answer. A slow but steadily streaming answer is
    never cut.
"""

from __future__ import annotations

import dataclasses
import http.client
import json
import math
import re
import socket
import string
from typing import Any, Callable, NamedTuple
from urllib.parse import urlsplit

from .config import ConfigError

__all__ = [
    "DEFAULT_PROMPT", "DEFAULTS", "ANSWER_RESERVE_TOKENS", "PLACEHOLDERS", "Prompt",
    "LLMError", "LLMUnreachable", "LLMTimeout", "LLMHTTPError", "LLMIncomplete", "LLMInvalidResponse",
    "estimate_tokens", "validate_prompt", "format_passages", "fit_passages", "build_messages",
    "normalize_endpoint", "iter_sse", "stream_chat", "list_models", "llm_settings", "browser_settings",
]

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
---
Documentation excerpts:

{passages}

Question: {question}"""

PLACEHOLDERS = ("project", "passages", "question")
SEPARATOR = "---"  # a line on its own: system message above, user message below
ANSWER_RESERVE_TOKENS = 512  # room left in the context window for the answer
MESSAGE_OVERHEAD_TOKENS = 16  # chat-template tokens around the messages

DEFAULTS = {
    "endpoint": "",
    "model": "",
    "max_context_tokens": 4096,
    "temperature": 0.1,
    "timeout": 60.0,
    "prompt": DEFAULT_PROMPT,
}


# -- errors ---------------------------------------------------------------------

class LLMError(RuntimeError):
    """A user-facing failure of the LLM step; ``partial`` is the answer received so far."""

    kind = "error"

    def __init__(self, message: str, *, partial: str = ""):
        super().__init__(message)
        self.partial = partial


class LLMUnreachable(LLMError):
    kind = "unreachable"


class LLMTimeout(LLMError):
    kind = "timeout"


class LLMHTTPError(LLMError):
    kind = "http"

    def __init__(self, message: str, *, status: int, server_message: str = "", partial: str = ""):
        super().__init__(message, partial=partial)
        self.status = status
        self.server_message = server_message


class LLMIncomplete(LLMError):
    kind = "incomplete"


class LLMInvalidResponse(LLMError):
    kind = "invalid"


# -- prompt -----------------------------------------------------------------------

def estimate_tokens(text: str) -> int:
    """Approximate token count: ceil(code points / 4) (mirrored in JS)."""
    return math.ceil(len(text) / 4)


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


def _get(result: Any, name: str):
    return result[name] if isinstance(result, dict) else getattr(result, name)


def _with_text(result: Any, text: str):
    if isinstance(result, dict):
        return {**result, "text": text}
    if dataclasses.is_dataclass(result):
        return dataclasses.replace(result, text=text)
    raise TypeError("results must be dicts or dataclasses with a 'text' field")


def _passage(n: int, result: Any) -> str:
    return f"[{n}] {_get(result, 'title')} ({_get(result, 'url')})\n{_get(result, 'text').strip()}"


def format_passages(results) -> str:
    """``[n] Title (URL)`` then the text, numbered from 1, separated by a blank line."""
    return "\n\n".join(_passage(n, r) for n, r in enumerate(results, start=1))


_ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.", "resp.")


def sentence_ends(text: str) -> list[int]:
    """Offsets just after each sentence (or line) end of ``text``, in order.

    A sentence ends at ``.``, ``!`` or ``?`` followed by whitespace (not after
    e.g./i.e./cf./vs./resp.), or at a line break (code, list items). The text end is
    not included.
    """
    ends = []
    for i, ch in enumerate(text[:-1]):
        nxt = text[i + 1]
        if ch == "\n":
            ends.append(i)  # cut before the line break
        elif ch in ".!?" and nxt.isspace():
            start = max(text.rfind(" ", 0, i), text.rfind("\n", 0, i)) + 1
            if text[start:i + 1].lower() not in _ABBREVIATIONS:
                ends.append(i + 1)
    return sorted(set(e for e in ends if text[:e].strip()))


def fit_passages(results, max_context_tokens: int, reserve_tokens: int) -> list:
    """The passages that fit in ``max_context_tokens - reserve_tokens`` estimated tokens.

    Passages are kept in rank order and the lowest-ranked are dropped first. If
    even the first does not fit, its text is cut after the last whole sentence
    that fits (never mid-sentence); if not even its first sentence fits, nothing
    is kept.
    """
    budget = max_context_tokens - reserve_tokens
    results = list(results)
    kept: list = []
    for r in results:
        if estimate_tokens(format_passages(kept + [r])) > budget:
            break
        kept.append(r)
    if kept or not results:
        return kept
    top = results[0]
    text = _get(top, "text").strip()
    for end in reversed(sentence_ends(text)):
        cut = _with_text(top, text[:end].rstrip())
        if estimate_tokens(format_passages([cut])) <= budget:
            return [cut]
    return []


class Prompt(NamedTuple):
    messages: list[dict]
    passages: list  # the passages sent, in citation order: [n] is passages[n - 1]


def _render(prompt: str, **values) -> list[dict]:
    text = prompt.format(**values)
    lines = text.split("\n")
    if SEPARATOR in lines:
        at = lines.index(SEPARATOR)
        system, user = "\n".join(lines[:at]).strip(), "\n".join(lines[at + 1:]).strip()
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]
    return [{"role": "user", "content": text.strip()}]


def build_messages(question: str, results, *, project: str, prompt: str = DEFAULT_PROMPT,
                   max_context_tokens: int = DEFAULTS["max_context_tokens"]) -> Prompt:
    """Chat messages asking ``question`` about the passages that fit in the context window.

    The reserve is the prompt without passages, plus ANSWER_RESERVE_TOKENS for the
    answer and MESSAGE_OVERHEAD_TOKENS for the chat template.
    """
    error = validate_prompt(prompt)
    if error:
        raise ConfigError(f"[sphinx-rag] the LLM prompt {error}")
    empty = _render(prompt, project=project, passages="", question=question)
    reserve = (sum(estimate_tokens(m["content"]) for m in empty)
               + ANSWER_RESERVE_TOKENS + MESSAGE_OVERHEAD_TOKENS)
    kept = fit_passages(results, max_context_tokens, reserve)
    passages = format_passages(kept) if kept else "(no documentation excerpt was found)"
    return Prompt(_render(prompt, project=project, passages=passages, question=question), kept)


# -- endpoint -----------------------------------------------------------------------

def normalize_endpoint(endpoint: str) -> str:
    """The API base URL ending in ``/v1`` (or another ``/vN``), without trailing slash.

    Accepts ``http://host:8080``, ``http://host:8080/v1/``, a pasted
    ``.../v1/chat/completions`` and a missing scheme (``localhost:11434``).
    """
    url = (endpoint or "").strip()
    if not url:
        raise ValueError("the LLM endpoint is empty")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the LLM endpoint must be an http(s) URL like http://127.0.0.1:8080/v1, "
                         f"got {endpoint!r}")
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions", "/models"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    if not re.search(r"/v\d+$", path):
        path += "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


# -- HTTP ------------------------------------------------------------------------------

_START_HINT = ("Is the server running? For example `llama-server -m model.gguf --port 8080` "
               "(endpoint http://127.0.0.1:8080/v1) or `ollama serve` (endpoint "
               "http://127.0.0.1:11434/v1).")


def _connect(base: str, timeout: float):
    parts = urlsplit(base)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname, parts.port, timeout=timeout), parts.path


def _server_message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message") or json.dumps(err)
        if isinstance(err, list):  # FastAPI validation errors
            err = "; ".join(str(e.get("msg", e)) if isinstance(e, dict) else str(e) for e in err)
        if err:
            return str(err)[:500]
    return text[:500]


def _http_error(status: int, reason: str, body: bytes, base: str, model: str) -> LLMHTTPError:
    message = _server_message(body)
    text = f"The LLM server at {base} answered HTTP {status} {reason}".rstrip()
    text += f": {message}" if message else "."
    if status == 404:
        text += (f" Check that the endpoint is the OpenAI-compatible API base (ending in /v1) and "
                 f"that the server has a model named {model!r}.")
    elif status in (401, 403):
        text += " sphinx-rag sends no API key: use a local server without authentication."
    return LLMHTTPError(text, status=status, server_message=message)


def _request(base: str, method: str, path: str, body: dict | None, timeout: float):
    """Open the connection and send the request; returns (connection, response)."""
    conn, prefix = _connect(base, timeout)
    headers = {"Accept": "text/event-stream, application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, prefix + path, body=data, headers=headers)
        return conn, conn.getresponse()
    except (socket.timeout, TimeoutError):
        conn.close()
        raise LLMTimeout(f"The LLM server at {base} did not answer within {timeout:g} s "
                         "(the timeout setting; raise it for slow models).") from None
    except OSError as exc:  # refused, unknown host, unreachable network, reset
        conn.close()
        reason = getattr(exc, "strerror", None) or exc.__class__.__name__
        if isinstance(exc, ConnectionRefusedError):
            reason = "connection refused"
        elif isinstance(exc, socket.gaierror):
            reason = "unknown host"
        raise LLMUnreachable(f"Could not connect to the LLM server at {base} ({reason}). "
                             + _START_HINT) from None
    except http.client.HTTPException as exc:
        conn.close()
        raise LLMInvalidResponse(f"The LLM server at {base} sent an invalid HTTP response "
                                 f"({exc.__class__.__name__}).") from None


def list_models(endpoint: str, *, timeout: float = 10.0) -> list[str]:
    """Model ids served at ``endpoint`` (``GET /models``)."""
    base = normalize_endpoint(endpoint)
    conn, resp = _request(base, "GET", "/models", None, timeout)
    try:
        body = resp.read()
    finally:
        conn.close()
    if resp.status >= 400:
        raise _http_error(resp.status, resp.reason, body, base, "")
    try:
        data = json.loads(body)
        return [str(m["id"]) for m in data.get("data", data.get("models", []))]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise LLMInvalidResponse(f"The LLM server at {base} sent an invalid model list.") from None


def _content_of(obj: Any, key: str) -> tuple[str, Any]:
    """(text, finish_reason) of a chat.completion(.chunk) object; raises on other shapes."""
    if not isinstance(obj, dict):
        raise ValueError("not an object")
    choices = obj.get("choices")
    if not isinstance(choices, list):
        raise ValueError("no choices")
    if not choices:
        return "", None  # e.g. a final usage-only chunk
    choice = choices[0]
    part = choice.get(key) or {}
    content = part.get("content") if isinstance(part, dict) else None
    return (content if isinstance(content, str) else ""), choice.get("finish_reason")


def iter_sse(readline: Callable[[], bytes]):
    """The ``data`` payloads of a Server-Sent Events stream, one string per event.

    ``readline`` returns one line (bytes, with its line ending) or ``b""`` at the
    end. Multi-line data is joined with newlines; comments and other fields
    (event:, id:, retry:) are skipped; a last event without its blank line is
    still yielded.
    """
    data: list[str] = []
    while True:
        line = readline()
        if not line:
            break
        line = line.decode("utf-8", "replace").rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield "\n".join(data)
            data = []
    if data:
        yield "\n".join(data)


def stream_chat(endpoint: str, model: str, messages: list[dict], *,
                temperature: float = DEFAULTS["temperature"], timeout: float = DEFAULTS["timeout"],
                on_token: Callable[[str], None] | None = None) -> str:
    """POST ``{endpoint}/chat/completions`` with ``stream: true``; return the whole answer.

    ``on_token`` gets each piece of text as it arrives. A server that ignores
    ``stream`` and returns one JSON body works too. Failures raise an
    :class:`LLMError` subclass with a user-facing message and ``partial`` (the
    text received before the failure).
    """
    base = normalize_endpoint(endpoint)
    on_token = on_token or (lambda _t: None)
    # max_tokens: the answer room fit_passages reserved; small models may never stop otherwise
    body = {"model": model, "messages": messages, "temperature": temperature, "stream": True,
            "max_tokens": ANSWER_RESERVE_TOKENS}
    conn, resp = _request(base, "POST", "/chat/completions", body, timeout)
    parts: list[str] = []

    def emit(text: str):
        if text:
            parts.append(text)
            on_token(text)

    def fail(cls, message: str, **kw):
        return cls(message, partial="".join(parts), **kw)

    try:
        if resp.status >= 400:
            raise _http_error(resp.status, resp.reason, resp.read(), base, model)
        ctype = (resp.getheader("Content-Type") or "").lower()
        if "text/event-stream" not in ctype:
            raw = resp.read()
            if not raw.lstrip().startswith(b"data:"):  # non-streaming answer: one JSON body
                try:
                    obj = json.loads(raw)
                    if isinstance(obj, dict) and obj.get("error"):
                        msg = _server_message(raw)
                        raise fail(LLMHTTPError, f"The LLM server at {base} reported an error: {msg}",
                                   status=resp.status, server_message=msg)
                    text, _ = _content_of(obj, "message")
                except ValueError:
                    raise fail(LLMInvalidResponse, f"The LLM server at {base} sent a response that "
                               "is not a chat completion (invalid JSON).") from None
                emit(text)
                return "".join(parts)
            lines = iter(raw.splitlines(keepends=True))
            readline = lambda: next(lines, b"")  # noqa: E731
        else:
            readline = resp.readline
        finished = False
        for payload in iter_sse(readline):
            if payload.strip() == "[DONE]":
                finished = True
                break
            try:
                chunk = json.loads(payload)
            except ValueError:
                raise fail(LLMInvalidResponse, f"The LLM server at {base} sent invalid JSON in "
                           "its stream; the answer is incomplete.") from None
            if isinstance(chunk, dict) and chunk.get("error"):
                msg = _server_message(payload.encode())
                raise fail(LLMHTTPError, f"The LLM server at {base} reported an error while "
                           f"answering: {msg}", status=resp.status, server_message=msg)
            try:
                text, reason = _content_of(chunk, "delta")
            except ValueError:
                raise fail(LLMInvalidResponse, f"The LLM server at {base} sent a stream event that "
                           "is not a chat.completion.chunk; the answer is incomplete.") from None
            emit(text)
            if reason:
                finished = True  # some servers close without [DONE] after a finish_reason
        if not finished:
            raise fail(LLMIncomplete, f"The LLM server at {base} closed the connection before the "
                       "end of the answer: the answer is incomplete.")
        return "".join(parts)
    except LLMError:
        raise
    except (socket.timeout, TimeoutError):
        raise fail(LLMTimeout, f"The LLM server at {base} sent nothing for {timeout:g} s (the "
                   "timeout setting; raise it for slow models); the answer is incomplete."
                   if parts else f"The LLM server at {base} did not answer within {timeout:g} s "
                   "(the timeout setting; raise it for slow models).") from None
    except (http.client.HTTPException, OSError):  # IncompleteRead, reset, broken chunked encoding
        raise fail(LLMIncomplete, f"The connection to the LLM server at {base} broke before the "
                   "end of the answer: the answer is incomplete.") from None
    finally:
        conn.close()


# -- settings ----------------------------------------------------------------------------

def llm_settings(config: dict | None) -> dict:
    """``sphinx_rag_llm`` with defaults filled in and validated; ``{}`` when the LLM is off.

    Raises ConfigError naming the key, what is allowed and an example.
    """
    config = dict(config or {})
    if not config:
        return {}
    allowed = set(DEFAULTS)
    bad = sorted(set(config) - allowed)
    if bad:
        raise ConfigError(f"[sphinx-rag] sphinx_rag_llm has unknown keys {bad}; allowed: {sorted(allowed)}")
    out = {**DEFAULTS, **config}

    def err(key, what):
        return ConfigError(f"[sphinx-rag] sphinx_rag_llm[{key!r}] {what}; got {out[key]!r}")

    if not isinstance(out["endpoint"], str) or not out["endpoint"].strip():
        raise err("endpoint", "is required when sphinx_rag_llm is set: the OpenAI-compatible "
                  "base URL of a local server, e.g. 'http://127.0.0.1:8080/v1' (llama.cpp) or "
                  "'http://127.0.0.1:11434/v1' (Ollama)")
    try:
        out["endpoint"] = normalize_endpoint(out["endpoint"])
    except ValueError as exc:
        raise err("endpoint", f"is invalid ({exc})") from None
    if not isinstance(out["model"], str) or not out["model"].strip():
        raise err("model", "is required: the model name the server serves, e.g. 'gemma3' "
                  "(Ollama: see `ollama list`; llama.cpp server accepts any name)")
    mct = out["max_context_tokens"]
    if isinstance(mct, bool) or not isinstance(mct, int) or mct < 1024:
        raise err("max_context_tokens", "must be an int >= 1024 (the model's context window, in tokens)")
    t = out["temperature"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 <= t <= 2:
        raise err("temperature", "must be a number between 0 and 2, e.g. 0.1")
    out["temperature"] = float(t)
    to = out["timeout"]
    if isinstance(to, bool) or not isinstance(to, (int, float)) or not to > 0:
        raise err("timeout", "must be a number of seconds > 0, e.g. 60")
    out["timeout"] = float(to)
    message = validate_prompt(out["prompt"])
    if message:
        raise err("prompt", message)
    return out


def browser_settings(config: dict | None, project: str) -> dict:
    """The resolved, non-secret LLM settings for the browser (JSON-able); ``{}`` when off.

    Keys: endpoint (normalised, ends in /v1), model, max_context_tokens,
    temperature, timeout (seconds), prompt (the template, default or custom),
    project.
    """
    settings = llm_settings(config)
    if not settings:
        return {}
    return {"endpoint": settings["endpoint"], "model": settings["model"],
            "max_context_tokens": settings["max_context_tokens"],
            "temperature": settings["temperature"], "timeout": settings["timeout"],
            "prompt": settings["prompt"], "project": str(project or "")}
