"""Chunk vectors computed while Sphinx is still reading and writing pages (issue 26: the
cold build).

A serial Sphinx build (no ``-j``: Read the Docs, most CI) reads and writes pages on one
core and leaves the others idle; the index step at ``build-finished`` then embeds every
chunk. ``EmbedAhead`` takes each page's embedding inputs as the extension chunks it (as
read, ``on_doctree_read``; as written, ``on_doctree_resolved``) and hands them to a worker
process (``python -m sphinx_rag.index.embed_ahead``: its own interpreter, so it never waits for
Sphinx's GIL nor makes Sphinx wait for its own) that embeds them at a lower priority,
with one onnxruntime thread per core Sphinx leaves idle (one on two cores). When the index step starts, it stops the worker, takes the
vectors by exact text, and embeds what is left (a text whose references resolved to
other words, pages the worker did not reach) as before.

A few new texts (a one-page edit: fewer than ``SLICE``) do not start a worker: they are
embedded on a thread of the build's own process (``LOCAL``), as soon as they are read. The
onnxruntime session and the model run outside Python's GIL, so the 0.3-0.4 s of loading
the model leave Sphinx's path, and the index step loads no model at all.

Nothing is guessed: the model gives a text the same vector whatever the batch, the
padding or the thread count (``tests/test_embed_ahead.py``), so a build with or without
this step publishes the same bytes. A text the index does not ask for is just not used.

The worker's protocol: one JSON list of texts per line on its stdin; the line
``"finish"`` asks it to embed everything it was sent and exit (tests); any other line is
skipped (one line on stderr), never taken for the end of the input. After each slice
it writes one JSON line (``keys``: the ``EmbeddingCache.key`` of each text, ``scales``,
``dim``) and the int8 vectors, ``len(keys) * dim`` bytes. A stop kills it: what it sent
before is kept, the slice in hand is lost, and nothing waits for it.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["EmbedAhead", "SLICE"]

#: Texts the worker embeds in one go (gathered across pages): what a stop loses at most.
SLICE = 64
#: Texts embedded on the build's own thread, at most, before the rest waits for a worker
#: (a cold build's first pages; a one-page edit's texts, all of them).
LOCAL = SLICE
#: How long ``stop(finish=True)`` waits for the worker to embed what it was sent (tests).
FINISH_TIMEOUT = 120.0
FINISH = "finish"
#: How long ``stop`` lets the feeder write what it holds before it kills the worker.
FEEDER_TIMEOUT = 5.0


class EmbedAhead:
    """The build's side: queues each page's texts for the worker, collects its vectors."""

    def __init__(self, model_dir: Path, *, batch_size: int = 32, cache_path: Path | None = None,
                 not_needed: Callable[[], bool] | None = None, threads: int = 1):
        """``cache_path``: the embedding cache (texts found there are not sent; no worker
        starts before ``SLICE`` texts need one: fewer are embedded on a thread here, and
        without a cache, which would tell the new texts from the others, none).
        ``not_needed``: asked first, off Sphinx's thread; True (a published site will give
        the vectors, ``warm_start.offers_vectors``) starts no worker. ``threads``: the
        worker's onnxruntime threads (the cores a serial Sphinx leaves idle)."""
        self._args = [sys.executable, "-m", "sphinx_rag.index.embed_ahead", str(model_dir), str(int(batch_size)),
                      str(max(1, int(threads)))]
        self._model_dir, self._batch_size, self._threads = Path(model_dir), int(batch_size), max(1, int(threads))
        self._here = None  # the Embedder of this process's thread (``LOCAL``), once made
        self._here_left = LOCAL if cache_path is not None else 0
        self._cache_path = cache_path
        self._not_needed = not_needed
        self._queue: queue.Queue[list[str] | str | None] = queue.Queue()
        self._closed = threading.Event()
        self._done: dict[str, tuple[bytes, float]] | None = None
        self._made: dict[str, tuple[bytes, float]] = {}
        self._proc: subprocess.Popen | None = None
        self._reader: threading.Thread | None = None
        self._stderr = None  # the worker's stderr: a temporary file (the reason if it fails)
        self.error: str = ""
        self._feeder = threading.Thread(target=self._feed, name="sphinx-rag embed ahead", daemon=True)
        self._feeder.start()

    def add(self, texts: list[str]):
        """Queue a page's texts (returns at once)."""
        if texts and not self._closed.is_set():
            self._queue.put(list(texts))

    def stop(self, finish: bool = False) -> dict[str, tuple[bytes, float]]:
        """The vectors the worker made, by ``EmbeddingCache.key``; it is killed at once,
        or (``finish``) once every text queued so far is embedded."""
        if self._done is not None:
            return self._done
        self._closed.set()
        if finish:
            self._queue.put(FINISH)
        self._queue.put(None)
        self._feeder.join(timeout=FEEDER_TIMEOUT)
        if self._feeder.is_alive() and self._proc is not None:  # blocked on a worker that reads no more
            self._proc.kill()
        self._feeder.join()
        if self._proc is not None:
            try:
                if finish:
                    self._proc.wait(timeout=FINISH_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.error = f"it did not finish within {FINISH_TIMEOUT:.0f} s"
            finally:
                if self._proc.poll() not in (None, 0):  # it stopped by itself: say why
                    self.error = self.error or _last_line(self._stderr) or f"exit code {self._proc.returncode}"
                self._proc.kill()
                self._proc.wait()
                self._reader.join()
                self._stderr.close()
        self._done = self._made
        return self._done

    def _feed(self):
        """Off Sphinx's thread: keep the texts neither sent before nor cached, start the
        worker once there are enough of them, and write them to it (a full pipe blocks
        this thread only)."""
        from ..model.embed import EmbeddingCache

        try:
            if self._not_needed is not None and self._not_needed():
                self._closed.set()
                return
            cache = EmbeddingCache(self._cache_path) if self._cache_path is not None else None
            seen: set[str] = set()
            backlog: list[str] = []
            while (item := self._queue.get()) is not None:
                if item == FINISH:
                    item, finish = [], True
                else:
                    finish = False
                fresh = {}
                for text in item:
                    key = EmbeddingCache.key(text)
                    if key not in seen:
                        seen.add(key)
                        fresh[key] = text
                for key in cache.get(sorted(fresh)) if cache is not None and fresh else ():
                    del fresh[key]
                backlog += fresh.values()
                if self._proc is None and (len(backlog) >= SLICE or (finish and backlog)):
                    self._stderr = tempfile.TemporaryFile()
                    self._proc = subprocess.Popen(self._args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                  stderr=self._stderr)
                    self._reader = threading.Thread(target=self._collect, args=(self._proc.stdout,), daemon=True)
                    self._reader.start()
                if self._proc is not None:
                    if backlog:
                        self._proc.stdin.write(json.dumps(backlog).encode("utf-8") + b"\n")
                        backlog = []
                    if finish:
                        self._proc.stdin.write(json.dumps(FINISH).encode("utf-8") + b"\n")
                elif backlog and len(backlog) <= self._here_left and self._queue.empty():
                    backlog = self._embed_here(backlog)  # a few texts, and no more in sight
            if self._proc is not None:
                self._proc.stdin.close()
            elif backlog and self._here is not None and len(backlog) <= self._here_left:
                self._embed_here(backlog)  # stopped: the texts left, on the session at hand
        except (OSError, ValueError) as exc:  # the worker could not start or died: the index step embeds it all
            self.error = str(exc) or type(exc).__name__
            self._closed.set()

    def _embed_here(self, texts: list[str]) -> list[str]:
        """Embed ``texts`` on this thread (the model loaded once); the texts not embedded
        (the model failed: the index step embeds them, and says why it could not)."""
        from ..model.embed import Embedder, EmbeddingCache, quantize_vectors

        try:
            if self._here is None:
                self._here = Embedder(self._model_dir, threads=self._threads)
            q, s = quantize_vectors(self._here.embed(texts, batch_size=self._batch_size))
        except Exception as exc:  # noqa: BLE001 - any failure of the model: the index step embeds them
            self.error = self.error or f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            self._here_left = 0
            return texts
        self._here_left -= len(texts)
        for i, text in enumerate(texts):
            self._made[EmbeddingCache.key(text)] = (q[i].tobytes(), float(s[i]))
        return []

    def _collect(self, stream):
        """Off Sphinx's thread: each slice the worker writes, into ``_made`` (a slice cut
        short by the kill is dropped)."""
        try:
            while head := stream.readline():
                slice_ = json.loads(head)
                keys, scales, dim = slice_["keys"], slice_["scales"], int(slice_["dim"])
                body = stream.read(len(keys) * dim)
                if len(body) != len(keys) * dim or len(scales) != len(keys):
                    break
                for i, key in enumerate(keys):
                    self._made[key] = (body[i * dim:(i + 1) * dim], float(scales[i]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self.error = f"its output is unreadable ({exc})"


def _last_line(f) -> str:
    f.seek(0)
    lines = f.read()[-2000:].decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else ""


# -- the worker process ------------------------------------------------------------------

def _read_input(stream, inbox: queue.Queue):
    """The worker's reader thread: each list of texts on stdin, or ``"finish"``, into
    ``inbox``; None at its end. Any other line (``null``, a number, an object, not JSON)
    is skipped with one line on stderr: it neither ends the input nor loses a text."""
    for n, line in enumerate(stream, start=1):
        try:
            item = json.loads(line)
        except ValueError:
            item = ValueError
        if isinstance(item, list):
            inbox.put([t for t in item if isinstance(t, str)])
        elif item == FINISH:
            inbox.put(item)
        elif line.strip():
            print(f"[sphinx-rag] embedding worker: line {n} of its input skipped (not a list of texts)",
                  file=sys.stderr, flush=True)
    inbox.put(None)


def _work(model_dir: Path, batch_size: int, out, threads: int = 1) -> None:
    """Embed what stdin brings, one slice at a time, each written to ``out`` at once."""
    from ..model.embed import Embedder, EmbeddingCache, quantize_vectors

    inbox: queue.Queue = queue.Queue()  # read from the start: the build's writes never wait for the model
    threading.Thread(target=_read_input, args=(sys.stdin.buffer, inbox), daemon=True).start()
    embedder = Embedder(model_dir, threads=threads)
    pending: list[str] = []
    finish = ended = False
    while not ended or (finish and pending):
        if not ended:
            try:  # wait for work when there is none; gather a slice when there is some
                item = inbox.get(timeout=None if not pending else 0.05)
            except queue.Empty:
                item = []
            if item is None:
                ended = True
                if not finish:
                    return
            elif item == FINISH:
                finish = True
            elif isinstance(item, list):
                pending += item
            if not (len(pending) >= SLICE or item == [] or (ended and finish)):
                continue
        part, pending = pending[:SLICE], pending[SLICE:]
        if part:
            q, s = quantize_vectors(embedder.embed(part, batch_size=batch_size))
            head = {"keys": [EmbeddingCache.key(t) for t in part], "scales": [float(x) for x in s],
                    "dim": embedder.dim}
            out.write(json.dumps(head).encode("utf-8") + b"\n" + q.tobytes())
            out.flush()


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    model_dir, batch_size = args[:2]
    threads = int(args[2]) if len(args) > 2 else 1
    if hasattr(os, "nice"):
        os.nice(5)  # the core Sphinx leaves idle: Sphinx first when the machine has none to spare
    out, sys.stdout = sys.stdout.buffer, sys.stderr  # stdout carries the vectors only
    try:
        _work(Path(model_dir), int(batch_size), out, threads)
    except BrokenPipeError:  # the build stopped reading: it has what it needs
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
