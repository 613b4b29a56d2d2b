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
    OPTIONS *                  CORS preflight (204)

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
xss         an answer with <script>, <img onerror>, a javascript: link and **bold**
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("normal", "slow", "disconnect", "json", "error500", "nocors", "xss")

XSS_ANSWER = (
    "Here is **bold** text and *emphasis* [1].\n\n"
    "<script>alert(1)</script>\n\n"
    "An image: <img src=x onerror=alert(1)> and a [click](javascript:alert(1)) link, "
    "a [data link](data:text/html,<script>alert(1)</script>) and a "
    "[safe link](https://example.org/page) [2]."
)


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


def answer_for(mode: str, body: dict) -> str:
    if mode == "xss":
        return XSS_ANSWER
    title = passage_titles(body).get(1, "(no passage)")
    return (f"According to the documentation, the passage titled \"{title}\" answers this [1]. "
            "See also the second passage for details [2].")


def words(text: str) -> list[str]:
    return re.findall(r"\s*\S+", text) or [text]


def chunk(model: str, delta: dict, finish_reason=None) -> dict:
    return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


class State:
    last_request = None
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
        if m and m.group(1) in MODES:
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
    def do_OPTIONS(self):
        self.touch()
        forced, _ = self.route()
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.cors(forced)
        self.end_headers()

    def do_GET(self):
        self.touch()
        forced, path = self.route()
        if path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in MODES]}, forced)
        elif path == "/_last_request":
            with State.lock:
                last = State.last_request
            self.send_json(200, last, forced)
        else:
            self.send_json(404, {"error": {"message": f"no route {path}", "type": "not_found"}}, forced)

    def do_POST(self):
        self.touch()
        forced, path = self.route()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
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
        mode = forced or (model if model in MODES else "normal")
        if mode == "error500":
            self.send_json(500, {"error": {"code": 500, "message": "model crashed: out of memory",
                                           "type": "server_error"}}, forced)
            return
        text = answer_for(mode, body)
        if mode == "json" or not body.get("stream"):
            self.send_json(200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }, forced)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.cors("nocors" if mode == "nocors" else forced)
        self.end_headers()
        pieces = words(text)
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
                self.touch()
                if mode == "slow":
                    time.sleep(0.2)
                elif mode == "disconnect":
                    time.sleep(0.05)
            self.sse(chunk(model, {}, "stop"))
            self.sse("[DONE]")
            self.write_chunk(b"")  # terminating zero-length chunk
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True  # the client aborted


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--idle-minutes", type=float, default=10.0)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
