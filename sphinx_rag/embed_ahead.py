"""Chunk vectors computed while Sphinx is still reading and writing pages (issue 26: the
cold build).

A serial Sphinx build (no ``-j``: Read the Docs, most CI) reads and writes pages on one
core and leaves the other idle; the index step at ``build-finished`` then embeds every
chunk. ``EmbedAhead`` takes each page's embedding inputs as the extension chunks it (as
read, ``on_doctree_read``; as written, ``on_doctree_resolved``) and hands them to a worker
process (``python -m sphinx_rag.embed_ahead``: its own interpreter, so it never waits for
Sphinx's GIL nor makes Sphinx wait for its own) that embeds them with one onnxruntime
thread at a lower priority. When the index step starts, it stops the worker, takes the
vectors by exact text, and embeds what is left (a text whose references resolved to
other words, pages the worker did not reach) as before.

Nothing is guessed: the model gives a text the same vector whatever the batch, the
padding or the thread count (``tests/test_embed_ahead.py``), so a build with or without
this step publishes the same bytes. A text the index does not ask for is just not used.

The worker's protocol: one JSON list of texts per line on its stdin; the line
``"finish"`` asks it to embed everything received before it answers (tests), end of
input to stop after the slice in hand. It then writes one JSON line (``keys``, the
``EmbeddingCache.key`` of each text embedded, ``scales``, ``dim``, ``error``) and the
int8 vectors, ``len(keys) * dim`` bytes, and exits.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["EmbedAhead", "SLICE"]

#: Texts the worker embeds in one go (gathered across pages) and between two looks at
#: its input: the index step waits at most one such slice (about a second on one core).
SLICE = 64
#: How long ``stop`` waits for the worker's answer before it kills the worker.
STOP_TIMEOUT = 60.0
FINISH = "finish"


class EmbedAhead:
    """The build's side: queues each page's texts for the worker, collects its vectors."""

    def __init__(self, model_dir: Path, *, batch_size: int = 32, cache_path: Path | None = None,
                 not_needed: Callable[[], bool] | None = None):
        """``cache_path``: the embedding cache (texts found there are not sent; no worker
        starts before ``SLICE`` texts need one). ``not_needed``: asked first, off Sphinx's
        thread; True (a published site will give the vectors,
        ``warm_start.offers_vectors``) starts no worker."""
        self._args = [sys.executable, "-m", "sphinx_rag.embed_ahead", str(model_dir), str(int(batch_size))]
        self._cache_path = cache_path
        self._not_needed = not_needed
        self._queue: queue.Queue[list[str] | str | None] = queue.Queue()
        self._closed = threading.Event()
        self._done: dict[str, tuple[bytes, float]] | None = None
        self._proc: subprocess.Popen | None = None
        self.error: str = ""
        self._feeder = threading.Thread(target=self._feed, name="sphinx-rag embed ahead", daemon=True)
        self._feeder.start()

    def add(self, texts: list[str]):
        """Queue a page's texts (returns at once)."""
        if texts and not self._closed.is_set():
            self._queue.put(list(texts))

    def stop(self, finish: bool = False) -> dict[str, tuple[bytes, float]]:
        """The vectors the worker made, by ``EmbeddingCache.key``: it stops after the slice
        in hand, or (``finish``) once every text queued so far is embedded."""
        if self._done is not None:
            return self._done
        self._closed.set()
        if finish:
            self._queue.put(FINISH)
        self._queue.put(None)
        self._feeder.join()
        self._done = self._answer() if self._proc is not None else {}
        return self._done

    def _feed(self):
        """Off Sphinx's thread: keep the texts neither sent before nor cached, start the
        worker once there are enough of them, and write them to it (a full pipe blocks
        this thread only)."""
        from .embed import EmbeddingCache

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
                    self._proc = subprocess.Popen(self._args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                  stderr=subprocess.DEVNULL)
                if self._proc is not None:
                    if backlog:
                        self._proc.stdin.write(json.dumps(backlog).encode("utf-8") + b"\n")
                        backlog = []
                    if finish:
                        self._proc.stdin.write(json.dumps(FINISH).encode("utf-8") + b"\n")
            if self._proc is not None:
                self._proc.stdin.close()
        except (OSError, ValueError) as exc:  # the worker could not start or died: the index step embeds it all
            self.error = str(exc) or type(exc).__name__
            self._closed.set()

    def _answer(self) -> dict[str, tuple[bytes, float]]:
        proc = self._proc
        if proc.stdin is not None and proc.stdin.closed:
            proc.stdin = None  # the feeder closed it (communicate() would flush it)
        try:
            out, _ = proc.communicate(timeout=STOP_TIMEOUT)
            head, _, body = out.partition(b"\n")
            answer = json.loads(head)
            keys, scales, dim = answer["keys"], answer["scales"], int(answer["dim"])
            if answer.get("error"):
                self.error = str(answer["error"])
            if len(body) != len(keys) * dim or len(scales) != len(keys):
                raise ValueError(f"{len(body)} bytes for {len(keys)} vectors of {dim}")
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.error = f"no answer within {STOP_TIMEOUT:.0f} s"
            return {}
        except (ValueError, KeyError, TypeError) as exc:
            self.error = f"its answer is unreadable ({exc}; exit code {proc.returncode})"
            return {}
        return {k: (body[i * dim:(i + 1) * dim], float(scales[i])) for i, k in enumerate(keys)}


# -- the worker process ------------------------------------------------------------------

def _read_input(stream, inbox: queue.Queue, ended: threading.Event, finish: threading.Event):
    """The worker's reader thread: each line of stdin into ``inbox``; None at its end.
    ``ended`` and ``finish`` are set as soon as they are read (texts read before them
    may still wait in ``inbox``: a stop must not wait for those)."""
    for line in stream:
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if item == FINISH:
            finish.set()
        inbox.put(item)
    ended.set()
    inbox.put(None)


def _work(model_dir: Path, batch_size: int) -> tuple[list[str], list[float], bytearray, int, str]:
    from .embed import EmbeddingCache, Embedder, quantize_vectors

    embedder = Embedder(model_dir, threads=1)
    inbox: queue.Queue = queue.Queue()
    stopped, finishing = threading.Event(), threading.Event()
    threading.Thread(target=_read_input, args=(sys.stdin.buffer, inbox, stopped, finishing), daemon=True).start()
    keys: list[str] = []
    scales: list[float] = []
    vectors = bytearray()
    pending: list[str] = []
    finish = ended = False
    try:
        while not ended or (finish and pending):
            if stopped.is_set() and not finishing.is_set():  # stopped: the slice in hand was the last
                break
            if not ended:
                try:  # wait for work when there is none; gather a slice when there is some
                    item = inbox.get(timeout=None if not pending else 0.05)
                except queue.Empty:
                    item = []
                if item is None:
                    ended = True
                    if not finish:  # stopped: the slice in hand was the last
                        break
                elif item == FINISH:
                    finish = True
                elif isinstance(item, list):
                    pending += [str(t) for t in item]
                if not (len(pending) >= SLICE or item == [] or (ended and finish)):
                    continue
            part, pending = pending[:SLICE], pending[SLICE:]
            if part:
                q, s = quantize_vectors(embedder.embed(part, batch_size=batch_size))
                keys += [EmbeddingCache.key(t) for t in part]
                scales += [float(x) for x in s]
                vectors += q.tobytes()
        return keys, scales, vectors, embedder.dim, ""
    except Exception as exc:  # noqa: BLE001 - what was made is still good; the build says why it stopped
        return keys, scales, vectors, embedder.dim, f"{type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> int:
    model_dir, batch_size = (argv if argv is not None else sys.argv[1:])[:2]
    if hasattr(os, "nice"):
        os.nice(5)  # the core Sphinx leaves idle: Sphinx first when the machine has none to spare
    started = time.monotonic()
    try:
        keys, scales, vectors, dim, error = _work(Path(model_dir), int(batch_size))
    except Exception as exc:  # noqa: BLE001 - the model could not be loaded: nothing made
        keys, scales, vectors, dim, error = [], [], bytearray(), 0, f"{type(exc).__name__}: {exc}"
    head = {"keys": keys, "scales": scales, "dim": dim, "error": error, "seconds": round(time.monotonic() - started, 1)}
    sys.stdout.buffer.write(json.dumps(head).encode("utf-8") + b"\n" + bytes(vectors))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
