"""The HTTP/SSE client of an OpenAI-compatible LLM server (llama.cpp, Ollama, vLLM).

Only ``sphinx-rag ask`` imports it: the build never does. Standard library only
(``http.client``: no proxy environment variables are honoured, a local endpoint is
reached directly). Mirrored by ``streamChat`` in ``js/src/llm/llm.js`` (same requests,
same failure modes and messages).

Timeout
    ``timeout`` seconds is an *inactivity* limit: the longest wait for the
    server to accept the connection, to start answering, and between two
    pieces of the streamed answer. A slow but steadily streaming answer is
    never cut.

Redirects
    None is followed: the question and the passages go to the configured
    endpoint and nowhere else. A 3xx answer is an error naming the redirect's
    status and target (http.client never follows one by itself).

Answer cap
    ``max_chars`` characters end an answer that does not stop (a broken or hostile
    server): the connection is closed and :class:`LLMAnswerTooLong` keeps the
    answer up to the cap.
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..config import LLM_DEFAULTS
from .endpoint import normalize_endpoint
from .prompt import ANSWER_RESERVE_TOKENS

__all__ = [
    "LLMError", "LLMUnreachable", "LLMTimeout", "LLMHTTPError", "LLMIncomplete", "LLMInvalidResponse",
    "LLMRedirect", "LLMAnswerTooLong", "list_models", "iter_sse", "stream_chat", "complete_chat",
]


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


class LLMRedirect(LLMError):
    """The server redirected the request elsewhere: refused, nothing was sent there."""

    kind = "redirect"

    def __init__(self, message: str, *, status: int, location: str):
        super().__init__(message)
        self.status = status
        self.location = location


class LLMAnswerTooLong(LLMError):
    """The answer reached the cap (max_answer_chars): ``partial`` is the answer up to it."""

    kind = "limit"


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


def _redirect_error(resp, base: str) -> LLMRedirect:
    """A 3xx answer: refused with a message naming its status and where it points to."""
    location = (resp.getheader("Location") or "").strip()
    target = urljoin(base + "/", location) if location else ""
    parts = urlsplit(target) if target else None
    try:
        host = parts.netloc if parts and parts.hostname else ""
    except ValueError:
        host = ""
    here = urlsplit(base).netloc
    where = (f"a redirect to another host, {host} ({target})" if host and host != here
             else f"a redirect to {target}" if target else "a redirect without a Location")
    return LLMRedirect(f"The LLM server at {base} answered HTTP {resp.status} {resp.reason}, {where}: sphinx-rag "
                       "follows no redirect, so nothing was sent there. Set the endpoint to the server's own "
                       "address if you trust it.", status=resp.status, location=location)


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
    except TimeoutError:
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
        body = resp.read() if not 300 <= resp.status < 400 else b""
    finally:
        conn.close()
    if 300 <= resp.status < 400:
        raise _redirect_error(resp, base)
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
                temperature: float = LLM_DEFAULTS["temperature"],
                timeout: float = LLM_DEFAULTS["timeout"],
                max_chars: int = LLM_DEFAULTS["max_answer_chars"],
                on_token: Callable[[str], None] | None = None) -> str:
    """POST ``{endpoint}/chat/completions`` with ``stream: true``; return the whole answer.

    ``on_token`` gets each piece of text as it arrives. A server that ignores
    ``stream`` and returns one JSON body works too. Failures raise an
    :class:`LLMError` subclass with a user-facing message and ``partial`` (the
    text received before the failure); an answer longer than ``max_chars``
    characters raises :class:`LLMAnswerTooLong` once the first ``max_chars`` are out.
    """
    base = normalize_endpoint(endpoint)
    on_token = on_token or (lambda _t: None)
    # max_tokens: the answer room fit_passages reserved; small models may never stop otherwise
    body = {"model": model, "messages": messages, "temperature": temperature, "stream": True,
            "max_tokens": ANSWER_RESERVE_TOKENS}
    conn, resp = _request(base, "POST", "/chat/completions", body, timeout)
    parts: list[str] = []
    length = 0

    def emit(text: str):
        nonlocal length
        if not text:
            return
        if length + len(text) > max_chars:
            text = text[:max_chars - length]
            if text:
                parts.append(text)
                on_token(text)
            raise fail(LLMAnswerTooLong, f"The answer was cut at {max_chars:,} characters (the max_answer_chars "
                       "setting): the server did not end it.")
        length += len(text)
        parts.append(text)
        on_token(text)

    def fail(cls, message: str, **kw):
        return cls(message, partial="".join(parts), **kw)

    try:
        if 300 <= resp.status < 400:
            raise _redirect_error(resp, base)
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
    except TimeoutError:
        raise fail(LLMTimeout, f"The LLM server at {base} sent nothing for {timeout:g} s (the "
                   "timeout setting; raise it for slow models); the answer is incomplete."
                   if parts else f"The LLM server at {base} did not answer within {timeout:g} s "
                   "(the timeout setting; raise it for slow models).") from None
    except (http.client.HTTPException, OSError):  # IncompleteRead, reset, broken chunked encoding
        raise fail(LLMIncomplete, f"The connection to the LLM server at {base} broke before the "
                   "end of the answer: the answer is incomplete.") from None
    finally:
        conn.close()


# -- short completions: Ask's extra calls ---------------------------------------------------

MAX_COMPLETION_BYTES = 1_000_000  # a short completion's body; more is a broken or hostile server


def _usage_of(obj: Any) -> dict | None:
    usage = obj.get("usage") if isinstance(obj, dict) else None
    return usage if isinstance(usage, dict) else None


def complete_chat(endpoint: str, model: str, messages: list[dict], *, max_tokens: int,
                  temperature: float = 0.0, timeout: float = LLM_DEFAULTS["timeout"]) -> tuple[str, dict | None]:
    """POST ``{endpoint}/chat/completions`` without streaming, for a short reply (Ask's
    rewrite and judge calls): (the reply, the server's ``usage`` object or None).

    Non-streaming, because servers report ``usage`` in a plain answer (llama.cpp's
    Python server does not in a stream) and the reply is a few tokens. A server that
    streams anyway is read as a stream. Failures raise :class:`LLMError` subclasses, as
    :func:`stream_chat` (a redirect is refused the same way).
    """
    base = normalize_endpoint(endpoint)
    body = {"model": model, "messages": messages, "temperature": temperature, "stream": False,
            "max_tokens": max_tokens}
    conn, resp = _request(base, "POST", "/chat/completions", body, timeout)
    try:
        if 300 <= resp.status < 400:
            raise _redirect_error(resp, base)
        if resp.status >= 400:
            raise _http_error(resp.status, resp.reason, resp.read(MAX_COMPLETION_BYTES), base, model)
        raw = resp.read(MAX_COMPLETION_BYTES + 1)
        if len(raw) > MAX_COMPLETION_BYTES:
            raise LLMInvalidResponse(f"The LLM server at {base} sent more than {MAX_COMPLETION_BYTES:,} bytes "
                                     "for a short completion.")
        if raw.lstrip().startswith(b"data:"):  # streamed anyway
            lines = iter(raw.splitlines(keepends=True))
            parts, usage = [], None
            for payload in iter_sse(lambda: next(lines, b"")):
                if payload.strip() == "[DONE]":
                    break
                try:
                    chunk = json.loads(payload)
                    parts.append(_content_of(chunk, "delta")[0])
                except ValueError:
                    raise LLMInvalidResponse(f"The LLM server at {base} sent invalid JSON in its stream.") from None
                usage = _usage_of(chunk) or usage
            return "".join(parts), usage
        try:
            obj = json.loads(raw)
            if isinstance(obj, dict) and obj.get("error"):
                msg = _server_message(raw)
                raise LLMHTTPError(f"The LLM server at {base} reported an error: {msg}", status=resp.status,
                                   server_message=msg)
            text, _ = _content_of(obj, "message")
        except ValueError:
            raise LLMInvalidResponse(f"The LLM server at {base} sent a response that is not a chat completion "
                                     "(invalid JSON).") from None
        return text, _usage_of(obj)
    except LLMError:
        raise
    except TimeoutError:
        raise LLMTimeout(f"The LLM server at {base} did not answer within {timeout:g} s (the timeout setting; "
                         "raise it for slow models).") from None
    except (http.client.HTTPException, OSError):
        raise LLMIncomplete(f"The connection to the LLM server at {base} broke before the end of the "
                            "reply.") from None
    finally:
        conn.close()
