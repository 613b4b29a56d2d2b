"""`sphinx-rag serve DIR`: a built site on 127.0.0.1 with the headers its search needs
(content types, gzip, no-cache; CORS with --cors, COOP/COEP with --isolated), as a real
process answering real HTTP requests; and what it refuses (files outside the folder by a
symlink, Host values that do not name it, listings, control characters in paths) and bears
(idle and half-sent connections, files truncated mid-download, large files gzipped three
at a time). Chromium across two origins: tests/browser/test_federated_dialog.py
(test_two_sites_served_by_sphinx_rag_serve)."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

from site_helpers import build_site, free_port, stop_process
from sphinx_rag.tools import serve as serve_module

ROOTS = Path(__file__).parent / "roots"


@contextlib.contextmanager
def serving(directory, *options, stderr=subprocess.PIPE):
    """``sphinx-rag serve DIR --port 0 OPTIONS`` in a subprocess; yields (proc, host:port).
    Give ``stderr`` a file when the test makes many requests (the log would fill a pipe)."""
    proc = subprocess.Popen([sys.executable, "-m", "sphinx_rag", "serve", str(directory), "--port", "0", *options],
                            stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("Serving "), (line, proc.stderr.read() if proc.poll() is not None and proc.stderr
                                             else "")
        yield proc, line.split("http://", 1)[1].split("/", 1)[0]
    finally:
        stop_process(proc)


def split_address(address: str) -> tuple[str, int]:
    """("127.0.0.1", 8000) from "127.0.0.1:8000", ("::1", 8000) from "[::1]:8000"."""
    host, port = address.rsplit(":", 1)
    return host.strip("[]"), int(port)


def get(address: str, path: str, method: str = "GET", **headers) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection(*split_address(address), timeout=30)
    try:
        conn.request(method, path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def raw(address: str, request: bytes, timeout: float = 10) -> bytes:
    """``request`` sent as it is on a new connection; what came back before the server
    closed it (or ``timeout`` seconds passed without a byte)."""
    with socket.create_connection(split_address(address), timeout=timeout) as sock:
        sock.sendall(request)
        return read_until_closed(sock)


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection; TimeoutError if it
    sends nothing for the socket's timeout (it left the client waiting)."""
    data = b""
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def plain_site(base: Path) -> Path:
    """A site without Sphinx: index.html, page.html, a folder with no index page and one with."""
    site = base / "site"
    (site / "sub").mkdir(parents=True)
    (site / "withindex").mkdir()
    (site / "index.html").write_text("<p>home</p>")
    (site / "page.html").write_text("<p>page</p>")
    (site / "sub" / "note.txt").write_text("a note")
    (site / "withindex" / "index.html").write_text("<p>folder</p>")
    return site


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
            assert headers["cache-control"] == "no-cache" and headers["x-content-type-options"] == "nosniff"
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
        assert status == 304 and headers["x-content-type-options"] == "nosniff"
        for path in ("/nothing.html", "/../../etc/passwd"):  # never outside the directory
            status, headers, _ = get(address, path)
            assert status == 404 and headers["x-content-type-options"] == "nosniff"
        status, headers, _ = get(address, index, "OPTIONS")
        assert status == 405 and headers["x-content-type-options"] == "nosniff"


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
    for seconds in ("0", "-1", "nan", "inf"):
        bad_timeout = run_cli(site, "--port", "0", "--timeout", seconds)
        assert bad_timeout.returncode == 2 and bad_timeout.stderr.count("\n") == 1, bad_timeout.stderr
        assert bad_timeout.stderr.startswith(f"[sphinx-rag] --timeout {seconds} is not a number of seconds")
    elsewhere = run_cli(site, "--port", "0", "--host", "192.0.2.1")  # TEST-NET: not this machine's
    assert elsewhere.returncode == 2 and elsewhere.stderr.count("\n") == 1, elsewhere.stderr
    assert elsewhere.stderr.startswith("[sphinx-rag] cannot listen on 192.0.2.1:0") and "--host" in elsewhere.stderr
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


# -- what it refuses ------------------------------------------------------------------------


def test_only_files_inside_the_folder_are_served_whatever_the_symlinks(tmp_path):
    """A symlink to a file or folder outside serves nothing and lists nothing (404);
    symlinks from inside to inside, relative or absolute, still serve."""
    site = plain_site(tmp_path)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("SECRET-KEY")
    (secret / "index.html").write_text("SECRET-INDEX")
    (site / "leak.txt").symlink_to(secret / "key.txt")
    (site / "leakdir").symlink_to(secret)
    (site / "sub" / "up.txt").symlink_to("../../secret/key.txt")  # relative, out through ..
    (site / "alias.html").symlink_to("page.html")
    (site / "abs.html").symlink_to(site / "page.html")
    (site / "aliasdir").symlink_to("withindex")
    (site / "withindex" / "index2.html").symlink_to(secret / "index.html")
    for options in ((), ("--list-dirs",)):
        with serving(site, *options) as (_, address):
            for path in ("/leak.txt", "/leakdir/", "/leakdir", "/leakdir/key.txt", "/leakdir/index.html",
                         "/sub/up.txt", "/withindex/index2.html", "/%6ceak.txt"):
                status, headers, body = get(address, path, **{"Accept-Encoding": "gzip"})
                assert status == 404 and b"SECRET" not in body and b"key.txt" not in body, (options, path, body)
                assert headers["x-content-type-options"] == "nosniff"
            for path in ("/alias.html", "/abs.html"):
                assert get(address, path)[:3:2] == (200, b"<p>page</p>"), path
            assert get(address, "/aliasdir/")[:3:2] == (200, b"<p>folder</p>")


def test_folders_are_not_listed_unless_asked(site, tmp_path):
    with serving(site) as (_, address):
        for path in ("/_static/", "/_static", "/_static/sphinx_rag/"):
            status, _, body = get(address, path)
            assert status == 404 and b"searchbar.js" not in body, path
        assert get(address, "/")[0] == 200  # a folder with index.html is its page
    plain = plain_site(tmp_path)
    with serving(plain) as (_, address):
        assert get(address, "/sub/")[0] == 404 and get(address, "/sub")[0] == 404
        status, headers, _ = get(address, "/withindex")  # as http.server: the page at the folder's URL
        assert status == 301 and headers["location"] == "/withindex/"
        assert get(address, "//withindex")[1]["location"] == "/withindex/"  # never "//host/": another site
    (plain / "sub" / "<b>odd & name.txt").write_text("x")
    with serving(plain, "--list-dirs") as (_, address):
        status, headers, body = get(address, "/sub/")
        assert status == 200 and headers["content-type"].startswith("text/html") and b"note.txt" in body
        assert b"<b>odd" not in body and b"&lt;b&gt;odd &amp; name.txt" in body
        status, headers, _ = get(address, "/sub")
        assert status == 301 and headers["location"] == "/sub/"


@pytest.mark.parametrize("bind", ["127.0.0.1", "localhost", "::1"])
def test_a_loopback_server_answers_only_hosts_that_name_it(tmp_path, bind):
    """DNS rebinding: a page of attacker.example whose name now resolves to 127.0.0.1 sends
    Host: attacker.example; the server answers only its own names (400 otherwise)."""
    if bind == "::1" and not socket.has_ipv6:
        pytest.skip("no IPv6")
    site = plain_site(tmp_path)
    with serving(site, "--host", bind) as (_, address):
        port = split_address(address)[1]
        assert address == (f"[::1]:{port}" if bind == "::1" else f"127.0.0.1:{port}")
        for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", f"LocalHost:{port}", "[::1]", f"[::1]:{port}"):
            assert get(address, "/", Host=host)[:3:2] == (200, b"<p>home</p>"), host
        for host in ("attacker.example", f"attacker.example:{port}", "localhost.attacker.example",
                     f"127.0.0.1.nip.io:{port}", "127.0.0.1:1", f"localhost:{port + 1}", "", "127.0.0.2",
                     f"[::2]:{port}", f" localhost:{port}x"):
            status, headers, body = get(address, "/", Host=host)
            assert status == 400 and b"home" not in body, host
            assert headers["x-content-type-options"] == "nosniff"
        two = raw(address, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n")
        assert two.startswith(b"HTTP/1.1 400 "), two
        none = raw(address, b"GET / HTTP/1.1\r\n\r\n")
        assert none.startswith(b"HTTP/1.1 400 "), none
        old = raw(address, b"GET / HTTP/1.0\r\n\r\n")  # HTTP/1.0 needs no Host
        assert old.startswith(b"HTTP/1.1 200 ") and old.endswith(b"<p>home</p>"), old


def test_which_binds_check_the_host():
    """Bound to a loopback address: its names, with and without the port; bound to another
    address (0.0.0.0: every interface), it is reached by names it cannot know: no check."""
    hosts = serve_module.loopback_hosts("127.0.0.1", 8000)
    assert {"localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "[::1]"} <= hosts
    assert "localhost:8001" not in hosts and "attacker.example" not in hosts
    assert "127.0.0.5:80" in serve_module.loopback_hosts("127.0.0.5", 80)
    assert "[::1]:9" in serve_module.loopback_hosts("::1", 9)
    for address in ("0.0.0.0", "::", "192.168.1.20", "10.0.0.1"):
        assert serve_module.loopback_hosts(address, 8000) is None, address


def test_control_characters_and_bad_paths_get_400(tmp_path):
    """%00 reached os.stat (a ValueError traceback, no answer); control characters, bytes
    that are not UTF-8 and targets that are not paths are refused the same way."""
    site = plain_site(tmp_path)
    log = tmp_path / "stderr.txt"
    with open(log, "w") as err, serving(site, stderr=err) as (_, address):
        for target in (b"/%00", b"/index.html%00.txt", b"/sub/%00/note.txt", b"/%01", b"/a%0ab", b"/%0d%0aX:%20y",
                       b"/%7f", b"/%c2%85", b"/%ff", b"/%c0%80", b"/%ed%a0%80", b"/a\x01b", b"/a\x7fb",
                       b"http://attacker.example/index.html", b"index.html"):
            for method in (b"GET", b"HEAD"):
                answer = raw(address, method + b" " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert answer.startswith(b"HTTP/1.1 400 "), (target, answer)
                assert b"\r\nX-Content-Type-Options: nosniff\r\n" in answer
        assert get(address, "/")[0] == 200
    assert "Traceback" not in log.read_text() and "Error" not in log.read_text()


# -- what it bears ---------------------------------------------------------------------------


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (whatever it sends before)."""
    sock.settimeout(seconds)
    try:
        read_until_closed(sock)
    except TimeoutError:
        return False
    return True


def test_idle_and_half_sent_connections_are_closed_after_the_timeout(tmp_path):
    """--timeout 2: a connection that sends nothing, one that stops halfway through its
    headers, one that trickles a byte every 0.3 s and one kept alive after an answer are
    all closed after about 2 s (without it they were held for ever)."""
    site = plain_site(tmp_path)
    with serving(site, "--timeout", "2") as (_, address):
        where = split_address(address)
        idle, half, trickle, kept = (socket.create_connection(where, timeout=10) for _ in range(4))
        with idle, half, trickle, kept:
            half.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A:")
            kept.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            start = time.monotonic()

            def drip():
                with contextlib.suppress(OSError):
                    trickle.sendall(b"GET / HTTP/1.1\r\n")
                    while time.monotonic() - start < 12:
                        trickle.sendall(b"x")
                        time.sleep(0.3)

            dripping = threading.Thread(target=drip, daemon=True)
            dripping.start()
            for name, sock in (("idle", idle), ("half-sent", half), ("trickle", trickle), ("kept alive", kept)):
                assert closed_within(sock, 12 - (time.monotonic() - start)), name
            took = time.monotonic() - start
            dripping.join(timeout=15)
        assert 1.5 < took < 10, took  # the timeout (2 s) + slack
        assert get(address, "/")[0] == 200


def threads_of(pid: int) -> int:
    return int(next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("Threads:")))


def test_idle_connections_neither_make_threads_nor_keep_a_new_client_waiting(tmp_path):
    """200 connections that send nothing and 50 that send half a request (the default
    timeout, 15 s): at most MAX_CONNECTIONS threads, and a new client is answered long
    before any of them times out."""
    site = plain_site(tmp_path)
    log = tmp_path / "stderr.txt"
    held = []
    with open(log, "w") as err, serving(site, stderr=err) as (proc, address):
        where = split_address(address)
        try:
            for i in range(250):
                sock = socket.create_connection(where, timeout=10)
                held.append(sock)
                if i < 50:
                    sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            counts = [threads_of(proc.pid)]
            time.sleep(1)
            counts.append(threads_of(proc.pid))
            start = time.monotonic()
            status, _, body = get(address, "/page.html")
            took = time.monotonic() - start
            counts.append(threads_of(proc.pid))
            assert (status, body) == (200, b"<p>page</p>")
            assert took < 10, took  # long before the 15 s timeout would free a thread
            assert max(counts) <= serve_module.MAX_CONNECTIONS + 2, counts
        finally:
            for sock in held:
                sock.close()
    assert "Traceback" not in log.read_text()


def small_buffer_connection(address: str) -> http.client.HTTPConnection:
    """An HTTPConnection whose socket takes little at a time (64 KB receive buffer): the
    server cannot have sent the whole file before the test reads a little of it."""
    host, port = split_address(address)
    sock = socket.socket(socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
    sock.settimeout(10)
    sock.connect((host, port))
    conn = http.client.HTTPConnection(host, port, timeout=10)
    conn.sock = sock
    return conn


@pytest.mark.parametrize("name,encoding", [("big.bin", "identity"), ("big.txt", "gzip")])
def test_a_file_truncated_during_a_download_ends_the_connection(tmp_path, name, encoding):
    """What was sent, then the end of the connection: the client learns the body is short
    (IncompleteRead) instead of waiting for bytes that will never come."""
    site = plain_site(tmp_path)
    data = os.urandom(12 << 20)
    (site / name).write_bytes(data if name.endswith(".bin") else data.hex().encode())  # hex: gzips to half
    with serving(site) as (_, address):
        conn = small_buffer_connection(address)
        try:
            conn.request("GET", f"/{name}", headers={"Accept-Encoding": "gzip"})
            response = conn.getresponse()
            assert response.status == 200 and response.getheader("Content-Encoding", "identity") == encoding
            first = response.read(1 << 16)
            with open(site / name, "r+b") as f:
                f.truncate(1 << 20)
            with pytest.raises(http.client.IncompleteRead):  # not TimeoutError: the client is not left waiting
                response.read()
        finally:
            conn.close()
    if encoding == "identity":
        assert first == data[: len(first)]


def peak_rss_kb(pid: int) -> int:
    return int(next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("VmHWM:")))


def test_gzip_streams_a_large_file(tmp_path):
    """Three requests at once for a 64 MB text file: each gets its first byte at once and
    the whole file (gzip, decompressed, same hash), and the server's peak memory grows by
    less than one copy of the file (it compressed each whole in memory: +295 MB)."""
    site = plain_site(tmp_path)
    lines = (b"line %09d of a large text file that the server compresses as it sends it\n" % i
             for i in range((64 << 20) // 80))
    big = site / "big.txt"
    big.write_bytes(b"".join(lines))
    expected = hashlib.sha256(big.read_bytes()).hexdigest()
    results = []

    def fetch(address):
        start = time.monotonic()
        conn = http.client.HTTPConnection(*split_address(address), timeout=30)
        try:
            conn.request("GET", "/big.txt", headers={"Accept-Encoding": "gzip"})
            response = conn.getresponse()
            first = response.read(1)
            first_byte = time.monotonic() - start
            inflate, digest = zlib.decompressobj(31), hashlib.sha256()
            digest.update(inflate.decompress(first))
            while chunk := response.read(1 << 16):
                digest.update(inflate.decompress(chunk))
            digest.update(inflate.flush())
            results.append((response.getheader("Content-Encoding"), first_byte, digest.hexdigest()))
        finally:
            conn.close()

    with serving(site) as (proc, address):
        get(address, "/page.html")
        before = peak_rss_kb(proc.pid)
        threads = [threading.Thread(target=fetch, args=(address,)) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        grown_mb = (peak_rss_kb(proc.pid) - before) / 1024
    assert len(results) == 3 and all(r[0] == "gzip" and r[2] == expected for r in results), results
    assert grown_mb < 64, grown_mb
    assert max(r[1] for r in results) < 10, results  # the first byte does not wait for the whole file
