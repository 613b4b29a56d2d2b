"""A fake OpenAI-compatible chat server for the LLM tests (Python CLI, Node, browser).

Run ``python tests/fake_llm_server.py [--port 0] [--idle-minutes 10]``: it
listens on 127.0.0.1 (an ephemeral port by default) and prints the port number
alone on the first stdout line once ready. It exits on SIGTERM/SIGINT, and by
itself after ``--idle-minutes`` without requests.

Protocol (real HTTP/1.1; streams use chunked transfer encoding like llama.cpp,
Ollama and vLLM)::

    GET  /v1/models            {"object": "list", "data": [{"id": <mode>}, ...]}
    POST /v1/chat/completions  SSE "data: {chat.completion.chunk}\\n\\n" ... "data: [DONE]\\n\\n"
    GET  /_last_request        the JSON body of the last POST (null before any)
    GET  /_last_stream         {"mode", "sent": characters of answer sent, "complete": bool,
                               "disconnected": bool} of the last streamed answer (null before)
    GET  /_other_requests      [[method, path, body bytes], ...]: what the *other* server got
    GET  /_answer?mode=M       the whole answer mode M streams (text/plain)
    GET  /_requests            [{"kind": "rewrite"|"judge"|"answer", "model", "stream", "max_tokens"}, ...]:
                               every chat request so far, in order
    OPTIONS *                  CORS preflight (204)

A second listener on another port, the "other host", records every request made to it
(redirects point there) and answers like ``normal`` with "ANSWER FROM THE OTHER HOST".

The behaviour ("mode") is the requested model name, or a path prefix
(``/<mode>/v1/...``: lets a browser test pick a mode that even the preflight
sees). Unknown model names behave like ``normal``.

normal      streams a deterministic answer citing [1] and [2] that quotes the title
            of passage [1] found in the messages ("[1] Title (URL)")
slow        like normal, after a 1.5 s pause, then one word every 0.2 s (~5 s in all)
disconnect  sends 4 words (a little apart), then closes the socket (no final chunk, no [DONE])
json        ignores "stream": one non-streaming chat.completion JSON body
error500    HTTP 500 {"error": {"message": "model crashed: out of memory", ...}}
nocors      like normal, without any CORS header (with the path prefix: preflight too)
nopreflight like normal, but a preflight gets no CORS header (with the path prefix): a
            browser's POST fails, its GET works
xss         an answer with <script>, <img onerror>, a javascript: link and **bold**
redirect307 every GET and POST answered "307 Temporary Redirect" to the other host (same
            path), with CORS headers, as a hostile endpoint would; preflights answered 204
redirect302 the same with "302 Found"
bareredirect "307 Temporary Redirect" to the other host without CORS headers (a browser's
            request fails as a CORS refusal does)
escapes     an answer with terminal escape sequences cut across tokens (title change, screen
            clear, OSC 8 link, bidi override), then a stream error whose message holds one
huge        50 MB of Markdown in 1,000-character tokens, as fast as the client reads
md<N>       N characters of varied Markdown (paragraphs, lists, code, headings, citations)
            in 1,000-character tokens; md<N>t<T>: in T-character tokens
followups   like normal, then a "Follow-up questions:" list of three, as a model writes it (bold,
            quotes, a citation), streamed word by word like the answer
badfollowups like normal, then a "Follow-up questions:" heading followed by prose (no list)
noqueries   asked for search queries, answers prose without any; asked to judge, "Maybe."
nousage     like normal, without "usage" in a non-streamed reply (clients estimate tokens)
nocite      an answer that cites no passage
farcite     an answer citing [1] and [42] (a passage it was not given)

Ask's extra calls (sphinx_rag/llm/multi_query.py, judge.py), told apart by their system
message, get deterministic replies in every mode that answers: search queries as a small
model writes them (a preamble, a numbered list, quotes, bold, one query twice) made of the
question's longer words, and "Yes." to a passage sharing a word of 5+ letters of the
question in the passage's title, else "No, it does not help." (in ``slow`` mode each after
0.4 s). A reply not
streamed carries ``usage``: the words of the messages and of the reply.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MODES = ("normal", "slow", "disconnect", "json", "error500", "nocors", "xss", "redirect307", "redirect302",
         "bareredirect", "escapes", "huge", "nopreflight", "noqueries", "nousage", "followups", "badfollowups",
         "nocite", "farcite")
SIZED = re.compile(r"^md(\d{1,9})(?:t(\d{1,7}))?$")  # md<N>[t<T>]: N characters in T-character tokens
HUGE_CHARS = 50_000_000

# The escapes answer, token by token: each sequence is cut between two tokens.
ESCAPE_TOKENS = ["The answer \x1b", "]0;PWNED", "\x07is \x1b[", "2J42 [1]. See \x1b]8;;https://evil.example/",
                 "\x1b\\the docs\x1b]8", ";;\x1b\\ or \u202eevil\u202c text", " in \x1b[31", "mred\x1b[0m."]
ESCAPE_ERROR = "model \x1b]0;PWNED\x07failed \x1b[2J badly"

XSS_ANSWER = (
    "Here is **bold** text and *emphasis* [1].\n\n"
    "<script>alert(1)</script>\n\n"
    "An image: <img src=x onerror=alert(1)> and a [click](javascript:alert(1)) link, "
    "a [data link](data:text/html,<script>alert(1)</script>) and a "
    "[safe link](https://example.org/page) [2]."
)


FOLLOW_UPS = ("How do I choose a strategy?", "What does predict_proba return?", "Is there a regression baseline?")
FOLLOW_UP_TAIL = ("\n\n**Follow-up questions:**\n- " + FOLLOW_UPS[0] + "\n- **" + FOLLOW_UPS[1] + "**\n- \""
                  + FOLLOW_UPS[2] + "\" [2]\n")
BAD_FOLLOW_UP_TAIL = "\n\nFollow-up questions:\nThe documentation covers the rest well enough, so read on."


def passage_titles(body: dict) -> dict[int, str]:
    """{n: title} of the passages "[n] Title (URL)" found in the request's messages."""
    titles: dict[int, str] = {}
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            continue
        for m in re.finditer(r"^\[(\d+)\] (.+) \((\S*)\)$", content, re.M):
            titles.setdefault(int(m.group(1)), m.group(2))
    return titles


def markdown_answer(size: int) -> str:
    """``size`` characters of varied, deterministic Markdown (an LLM's kind of answer)."""
    rng = random.Random(size)
    words = ("the estimator strategy parameter returns values pipeline scaler fit predict data model "
             "default sample feature classifier baseline imputer score").split()

    def sentence() -> str:
        out = [rng.choice(words) for _ in range(rng.randrange(5, 14))]
        i = rng.randrange(len(out))
        out[i] = rng.choice((f"**{out[i]}**", f"*{out[i]}*", f"`{out[i]}()`", f"[{out[i]}](https://example.org/{i})",
                             out[i] + " [1]", out[i] + " [2]", out[i]))
        return " ".join(out).capitalize() + "."

    blocks: list[str] = []
    length = 0
    while length < size:
        kind = rng.random()
        if kind < 0.5:
            block = " ".join(sentence() for _ in range(rng.randrange(2, 7)))
            if rng.random() < 0.3:
                block += "\n" + sentence()
        elif kind < 0.7:
            marker = rng.choice(("-", "*", "1."))
            block = "\n".join(f"{marker} {sentence()}" for _ in range(rng.randrange(2, 6)))
        elif kind < 0.85:
            body = "\n".join(f"x{j} = {rng.choice(words)}({j}, **kw)" for j in range(rng.randrange(1, 8)))
            block = f"```python\n{body}\n```"
        else:
            block = "#" * rng.randrange(1, 4) + " " + sentence()
        blocks.append(block)
        length += len(block) + 2
    return "\n\n".join(blocks)[:size]


def sized(mode: str) -> tuple[int, int] | None:
    """(characters, token size) of an md<N>[t<T>] or the huge mode, else None."""
    if mode == "huge":
        return HUGE_CHARS, 1000
    m = SIZED.match(mode)
    return (int(m.group(1)), int(m.group(2) or 1000)) if m else None


def known(mode: str) -> bool:
    return mode in MODES or bool(SIZED.match(mode))


def answer_for(mode: str, body: dict) -> str:
    if mode == "xss":
        return XSS_ANSWER
    if mode == "escapes":
        return "".join(ESCAPE_TOKENS)
    if mode == "huge":  # a block of 10 KB repeated: the same text as markdown_answer, without its cost
        unit = markdown_answer(10_000) + "\n\n"
        return (unit * (HUGE_CHARS // len(unit) + 1))[:HUGE_CHARS]
    if sized(mode):
        return markdown_answer(sized(mode)[0])
    if mode == "nocite":
        return "The documentation says this is done with the default settings."
    if mode == "farcite":
        return "The first passage covers it [1], and so does another one [42]."
    title = passage_titles(body).get(1, "(no passage)")
    text = (f"According to the documentation, the passage titled \"{title}\" answers this [1]. "
            "See also the second passage for details [2].")
    return text + {"followups": FOLLOW_UP_TAIL, "badfollowups": BAD_FOLLOW_UP_TAIL}.get(mode, "")


_STOP = {"what", "which", "when", "where", "does", "with", "that", "this", "from", "have", "your", "into", "there",
         "about", "should", "would", "could", "they", "them", "then", "than", "their", "will", "make", "want"}


def _message(body: dict, role: str) -> str:
    for m in body.get("messages") or []:
        if isinstance(m, dict) and m.get("role") == role and isinstance(m.get("content"), str):
            return m["content"]
    return ""


def step_kind(body: dict) -> str:
    """"rewrite", "judge" (Ask's extra calls, by their system message) or "answer"."""
    system = _message(body, "system")
    if system.startswith("You write search queries"):
        return "rewrite"
    if system.startswith("You check whether an excerpt"):
        return "judge"
    return "answer"


def _words(text: str, shortest: int) -> list[str]:
    """Words of ``shortest`` letters or more, camelCase split, lower case, stop words out."""
    return [w for w in (m.lower() for m in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text))
            if len(w) >= shortest and w not in _STOP]


def step_answer(mode: str, kind: str, body: dict) -> str:
    user = _message(body, "user")
    question = user.rsplit("Question: ", 1)[-1] if kind == "rewrite" else user.split("\n", 1)[0][len("Question: "):]
    if kind == "rewrite":
        content = list(dict.fromkeys(_words(question, 4)))
        if mode == "noqueries" or not content:
            return "Sure! You should read the documentation carefully, it explains everything about this."
        first, second = " ".join(content[:3]), " ".join(content[::-1][:3])
        return f'Here are three search queries:\n1. "{first}"\n2. **{second}**\n3. {first}\n'
    if mode == "noqueries":
        return "Maybe."
    title = re.search(r"^Excerpt \((.*)\):$", user, re.M)
    return "Yes." if title and set(_words(question, 5)) & set(_words(title.group(1), 5)) else "No, it does not help."


def words(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text) or [text]


def tokens_for(mode: str, text: str) -> list[str]:
    if mode == "escapes":
        return ESCAPE_TOKENS
    size = sized(mode)
    if size:
        step = size[1]
        return [text[i:i + step] for i in range(0, len(text), step)]
    return words(text)


def chunk(model: str, delta: dict, finish_reason=None) -> dict:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


class State:
    last_request = None
    last_stream = None
    other_requests: list = []
    requests: list = []  # {"kind", "model", "stream", "max_tokens"} of every chat request
    other_port = 0
    last_activity = time.monotonic()
    lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeLLM/1.0"

    def log_message(self, format, *args):  # quiet
        pass

    # -- helpers ----------------------------------------------------------------
    def route(self) -> tuple[str | None, str]:
        """(mode forced by a /<mode>/ prefix or None, path without it and without query)."""
        path = self.path.split("?", 1)[0]
        m = re.match(r"^/([a-z0-9]+)(/v1/.*)$", path)
        if m and known(m.group(1)):
            return m.group(1), m.group(2)
        return None, path

    def cors(self, mode: str | None):
        if mode == "nocors":
            return
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers",
                         self.headers.get("Access-Control-Request-Headers") or "Content-Type, Authorization")
        self.send_header("Access-Control-Max-Age", "600")
        if self.headers.get("Access-Control-Request-Private-Network"):
            self.send_header("Access-Control-Allow-Private-Network", "true")

    def send_json(self, status: int, obj, mode: str | None):
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.cors(mode)
        self.end_headers()
        self.wfile.write(data)

    def write_chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def sse(self, obj):
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self.write_chunk(f"data: {payload}\n\n".encode())

    def touch(self):
        State.last_activity = time.monotonic()

    # -- methods ----------------------------------------------------------------
    def handle(self):
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):  # a client that went away: nothing to say
            pass

    def do_OPTIONS(self):
        self.touch()
        forced, _ = self.route()
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.cors("nocors" if forced == "nopreflight" else forced)
        self.end_headers()

    def redirect(self, mode: str, path: str) -> bool:
        """Answer a redirect* mode with its 3xx to the other host; False for other modes."""
        if mode not in ("redirect307", "redirect302", "bareredirect"):
            return False
        self.send_response(302 if mode == "redirect302" else 307)
        self.send_header("Location", f"http://127.0.0.1:{State.other_port}{path}")
        self.send_header("Content-Length", "0")
        self.cors("nocors" if mode == "bareredirect" else mode)
        self.end_headers()
        return True

    def do_GET(self):
        self.touch()
        forced, path = self.route()
        if forced and self.redirect(forced, path):
            return
        if path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in MODES]}, forced)
        elif path == "/_last_request":
            with State.lock:
                last = State.last_request
            self.send_json(200, last, forced)
        elif path == "/_last_stream":
            with State.lock:
                last = State.last_stream
            self.send_json(200, last, forced)
        elif path == "/_requests":
            with State.lock:
                seen = list(State.requests)
            self.send_json(200, seen, forced)
        elif path == "/_other_requests":
            with State.lock:
                other = list(State.other_requests)
            self.send_json(200, other, forced)
        elif path == "/_answer":
            mode = parse_qs(urlsplit(self.path).query).get("mode", ["normal"])[0]
            data = answer_for(mode, {}).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.cors(None)
            self.end_headers()
            self.wfile.write(data)
        else:
            self.send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}}, forced)

    def do_POST(self):
        self.touch()
        forced, path = self.route()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if forced and self.redirect(forced, path):
            return
        if path != "/v1/chat/completions":
            self.send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}}, forced)
            return
        try:
            body = json.loads(raw)
            assert isinstance(body, dict)
        except (ValueError, AssertionError):
            self.send_json(400, {"error": {"message": "request body is not a JSON object",
                                           "type": "invalid_request_error"}}, forced)
            return
        with State.lock:
            State.last_request = body
        model = str(body.get("model") or "")
        mode = forced or (model if known(model) else "normal")
        if self.redirect(mode, path):
            return
        if mode == "error500":
            self.send_json(500, {"error": {"code": 500, "message": "model crashed: out of memory",
                                           "type": "server_error"}}, forced)
            return
        kind = step_kind(body)
        with State.lock:
            State.requests.append({"kind": kind, "model": model, "stream": bool(body.get("stream")),
                                   "max_tokens": body.get("max_tokens")})
        if kind == "answer":
            text = answer_for(mode, body)
        else:
            text = step_answer(mode, kind, body)
            if mode == "slow":
                time.sleep(0.4)
        if mode == "json" or not body.get("stream") or kind != "answer":
            reply = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                     "choices": [{"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": text}}]}
            if mode != "nousage":
                prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or []
                             if isinstance(m, dict))
                reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": len(text.split()),
                                  "total_tokens": prompt + len(text.split())}
            self.send_json(200, reply, forced)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.cors("nocors" if mode == "nocors" else forced)
        self.end_headers()
        pieces = tokens_for(mode, text)
        stream = {"mode": mode, "sent": 0, "complete": False, "disconnected": False}
        with State.lock:
            State.last_stream = stream
        try:
            if mode == "slow":
                time.sleep(1.5)
            self.sse(chunk(model, {"role": "assistant", "content": ""}))
            for i, piece in enumerate(pieces):
                if mode == "disconnect" and i == 4:
                    time.sleep(0.3)  # let clients (browsers too) deliver the partial answer first
                    self.close_connection = True
                    self.connection.shutdown(2)  # no terminating chunk, no [DONE]
                    return
                self.sse(chunk(model, {"content": piece}))
                stream["sent"] += len(piece)
                self.touch()
                if mode == "slow":
                    time.sleep(0.2)
                elif mode == "disconnect":
                    time.sleep(0.05)
            if mode == "escapes":
                self.sse({"error": {"message": ESCAPE_ERROR, "type": "server_error"}})
            self.sse(chunk(model, {}, "stop"))
            self.sse("[DONE]")
            self.write_chunk(b"")  # terminating zero-length chunk
            stream["complete"] = True
        except (BrokenPipeError, ConnectionResetError, OSError):
            stream["disconnected"] = True
            self.close_connection = True  # the client aborted


class OtherHost(Handler):
    """The host redirects point to: records every request, answers like ``normal``."""

    def record(self) -> bytes:
        self.touch()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        with State.lock:
            State.other_requests.append([self.command, self.path, len(raw)])
        return raw

    def do_OPTIONS(self):
        self.record()
        super().do_OPTIONS()

    def do_GET(self):
        self.record()
        self.send_json(200, {"object": "list", "data": [{"id": "other", "object": "model"}]}, None)

    def do_POST(self):
        self.record()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.cors(None)
        self.end_headers()
        self.sse(chunk("other", {"content": "ANSWER FROM THE OTHER HOST"}))
        self.sse(chunk("other", {}, "stop"))
        self.sse("[DONE]")
        self.write_chunk(b"")


class QuietServer(ThreadingHTTPServer):
    """A client that went away (a cancelled stream) prints no traceback (as
    sphinx_rag.tools.serve.QuietServer; this script stays standard library only, so that
    the JS tests can run it with any Python)."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--idle-minutes", type=float, default=10.0)
    args = parser.parse_args(argv)
    server = QuietServer(("127.0.0.1", args.port), Handler)  # a client that went away: no traceback
    other = QuietServer(("127.0.0.1", 0), OtherHost)
    State.other_port = other.server_address[1]
    threading.Thread(target=other.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    stop = threading.Event()

    def shutdown(*_):
        stop.set()

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    thread.start()
    print(server.server_address[1], flush=True)
    while not stop.wait(0.5):
        if time.monotonic() - State.last_activity > args.idle_minutes * 60:
            break
    server.shutdown()
    server.server_close()
    other.shutdown()
    other.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
