"""`sphinx-rag serve DIR`: a built site on 127.0.0.1 with the headers its search needs
(content types, gzip, no-cache; CORS with --cors, COOP/COEP with --isolated), as a real
process answering real HTTP requests. Chromium across two origins:
tests/browser/test_federated_dialog.py (test_two_sites_served_by_sphinx_rag_serve)."""

from __future__ import annotations

import contextlib
import gzip
import http.client
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import build_site, free_port, stop_process

ROOTS = Path(__file__).parent / "roots"


@contextlib.contextmanager
def serving(directory, *options):
    """``sphinx-rag serve DIR --port 0 OPTIONS`` in a subprocess; yields (proc, host:port)."""
    proc = subprocess.Popen([sys.executable, "-m", "sphinx_rag", "serve", str(directory), "--port", "0", *options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Serving "), (line, proc.stderr.read() if proc.poll() is not None else "")
        yield proc, line.split("http://", 1)[1].split("/", 1)[0]
    finally:
        stop_process(proc)


def get(address: str, path: str, method: str = "GET", **headers) -> tuple[int, dict, bytes]:
    host, port = address.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """tests/roots/test-llms built: pages, Markdown twins, llms.txt, the index and the client."""
    base = tmp_path_factory.mktemp("serve")
    shutil.copytree(ROOTS / "test-llms", base / "src")
    html = build_site(base / "src", base / "html", "-d", str(base / "dt"))
    (html / "_static" / "big.wasm").write_bytes(b"\0asm" + bytes(4096))  # as the onnxruntime wasm, compressible
    (html / "_static" / "module.mjs").write_text("export const x = 1;\n" * 200)
    return html


def test_the_types_and_encodings_the_search_needs(site):
    index = "/_static/sphinx_rag/index/manifest.json"
    with serving(site) as (_, address):
        cases = {"/": "text/html; charset=utf-8", index: "application/json",
                 "/_static/sphinx_rag/searchbar.js": "text/javascript; charset=utf-8",
                 "/_static/module.mjs": "text/javascript; charset=utf-8", "/_static/big.wasm": "application/wasm",
                 "/llms.txt": "text/plain; charset=utf-8"}
        twin = next(p for p in site.rglob("*.html.md"))
        cases["/" + twin.relative_to(site).as_posix()] = "text/markdown; charset=utf-8"
        for path, ctype in cases.items():
            status, headers, body = get(address, path, **{"Accept-Encoding": "gzip, deflate, br"})
            assert status == 200 and headers["content-type"] == ctype, (path, headers)
            assert headers["cache-control"] == "no-cache"
            assert "access-control-allow-origin" not in headers and "cross-origin-opener-policy" not in headers
            local = site / (path.lstrip("/") or "index.html")
            if headers.get("content-encoding") == "gzip":
                assert gzip.decompress(body) == local.read_bytes() and len(body) < local.stat().st_size
            else:
                assert body == local.read_bytes() and local.stat().st_size < 1024, path  # small: as it is
        status, headers, body = get(address, "/_static/big.wasm")  # no Accept-Encoding: as it is
        assert "content-encoding" not in headers and body == (site / "_static" / "big.wasm").read_bytes()
        status, headers, _ = get(address, "/_static/big.wasm", **{"Accept-Encoding": "gzip",
                                                                   "If-Modified-Since": headers["last-modified"]})
        assert status == 304
        assert get(address, "/nothing.html")[0] == 404
        assert get(address, "/../../etc/passwd")[0] == 404  # never outside the directory
        assert get(address, index, "OPTIONS")[0] == 405


def test_cors_and_isolation_on_request(site):
    with serving(site, "--cors", "--isolated") as (proc, address):
        status, headers, _ = get(address, "/_static/sphinx_rag/index/manifest.json", Origin="http://127.0.0.1:1")
        assert status == 200 and headers["access-control-allow-origin"] == "*"
        assert headers["cross-origin-opener-policy"] == "same-origin"
        assert headers["cross-origin-embedder-policy"] == "require-corp"
        assert headers["cross-origin-resource-policy"] == "cross-origin"
        status, headers, body = get(address, "/", "OPTIONS", Origin="http://127.0.0.1:1",
                                    **{"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-a"})
        assert status == 204 and headers["access-control-allow-origin"] == "*" and body == b""
        assert headers["access-control-allow-headers"] == "x-a"
        proc.send_signal(signal.SIGINT)  # Ctrl+C: ends without a traceback
        assert proc.wait(timeout=10) == 0
        assert "Traceback" not in proc.stderr.read()


def test_a_source_directory_serves_its_build(site, tmp_path):
    (tmp_path / "conf.py").write_text("")
    shutil.copytree(site, tmp_path / "_build" / "html")
    with serving(tmp_path) as (_, address):
        assert get(address, "/llms.txt")[2] == (site / "llms.txt").read_bytes()


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "sphinx_rag", "serve", *map(str, args)], capture_output=True,
                          text=True, timeout=60)


def test_what_cannot_be_served_is_one_line(site, tmp_path):
    missing = run_cli(tmp_path / "nope", "--port", "0")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert missing.stderr.startswith(f"[sphinx-rag] {tmp_path / 'nope'} does not exist")
    bad_port = run_cli(site, "--port", "70000")
    assert bad_port.returncode == 2 and bad_port.stderr.startswith("[sphinx-rag] --port 70000 is not a port")
    with serving(site) as (_, address):
        taken = run_cli(site, "--port", address.split(":")[1])
        assert taken.returncode == 2 and taken.stderr.count("\n") == 1, taken.stderr
        assert "cannot listen on 127.0.0.1:" in taken.stderr and "--port 0" in taken.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "index.html").write_text("<p>hi</p>")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "sphinx_rag", "serve", str(plain), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == f"Serving {plain} at http://127.0.0.1:{port}/  (Ctrl+C stops)\n"
        assert get(f"127.0.0.1:{port}", "/")[2] == b"<p>hi</p>"
    finally:
        stop_process(proc)
    assert proc.stderr.readline().startswith(f"[sphinx-rag] {plain} has no sphinx-rag index")


def test_a_client_that_goes_away_prints_no_traceback(tmp_path, capfd):
    """The test servers (site_helpers.StaticServer) and `sphinx-rag serve` share QuietServer:
    a browser that abandons a response (a superseded fetch) left BrokenPipeError tracebacks
    among the suite's dots; any other error still prints."""
    import socket
    import struct
    import time

    from site_helpers import StaticServer

    (tmp_path / "big.bin").write_bytes(b"\0" * 32_000_000)
    with StaticServer(tmp_path) as server:
        port = int(server.url.rstrip("/").rsplit(":", 1)[1])
        for _ in range(3):
            conn = socket.create_connection(("127.0.0.1", port))
            conn.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            conn.recv(1024)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset
            conn.close()
        time.sleep(1.0)  # the handler's next write fails
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipeError" not in err and "ConnectionResetError" not in err
