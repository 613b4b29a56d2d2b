"""The golden set: the searches a site's readers depend on, checked by every build.

A small JSON file of entries, each a query and the page (``guide/impute.html``) or
anchor (``api.html#mlkit.impute.SimpleImputer``) its answer must come from, and
optionally the rank it must reach (default ``DEFAULT_RANK``)::

    [{"query": "how do I impute missing values?", "url": "user_guide/impute.html", "rank": 3}]

``index_step.check_golden`` runs ``check`` once the index is written (``sphinx_rag_golden``) and
warns for every entry that falls short, so ``sphinx-build -W`` fails; ``sphinx-rag
golden add`` appends an entry; ``sphinx-rag evaluate`` reads the same file
(``as_questions``). An entry is met when a passage in the top ``rank`` has that URL, or
took in a chunk with it (``search/expand.py``); a URL without ``#`` is met by any passage of
its page. The check uses the Python runtime, which ranks as the browser does.

The file is read with caps (``MAX_BYTES``, ``MAX_DEPTH``; a regular file only, so
``/dev/zero`` or a FIFO is refused at once): a bad golden file is one error line
(``golden add``) or one warning (the build), never a MemoryError or a RecursionError.
A golden file that is a symlink is written through: the entry goes to the file it
points at, replaced atomically in that file's folder, and the link stays.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

__all__ = ["DEFAULT_RANK", "MAX_BYTES", "MAX_DEPTH", "GoldenEntry", "Outcome", "load", "load_text", "add", "check", "shortfall", "as_questions", "page_of",
           "met_by", "missing", "site_beside"]

DEFAULT_RANK = 10  # the results a reader sees without scrolling far, and `sphinx-rag search`'s default
#: the most bytes a golden file may have: 10,000 entries take about 1 MB (and a build runs each)
MAX_BYTES = 4 << 20
#: the most nested lists and objects: an entry needs 2 (the list, the entry), a ``note`` may nest a little
MAX_DEPTH = 16
NOT_REGULAR = "is not a regular file (a device, a FIFO or a folder)"
EXAMPLE = '[{"query": "how do I impute missing values?", "url": "user_guide/impute.html", "rank": 3}]'


@dataclass(frozen=True)
class GoldenEntry:
    query: str
    url: str
    rank: int = DEFAULT_RANK


@dataclass(frozen=True)
class Outcome:
    entry: GoldenEntry
    rank: int | None  # where it was found (None: not in the top `searched`)
    top: list[str]  # the URLs of the first results, for the warning
    absent: str | None = None  # why the entry's URL is not in the built site (``missing``)

    @property
    def ok(self) -> bool:
        return self.absent is None and self.rank is not None and self.rank <= self.entry.rank


def _error(path, message: str) -> ValueError:
    return ValueError(f"[sphinx-rag] golden set {path}: {message}; the file is a JSON list like {EXAMPLE}")


def _read(path: Path) -> str:
    """The file's text: a regular file of at most ``MAX_BYTES`` (ValueError otherwise). Opened
    without blocking (a FIFO would wait for a writer), checked by its descriptor (what was
    opened, not what the name points at a moment later), read no further than the cap."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _error(path, NOT_REGULAR)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _error(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise _error(path, f"is larger than {MAX_BYTES >> 20} MB (sphinx_rag.tools.golden.MAX_BYTES)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _error(path, f"is not UTF-8 ({exc.reason} at byte {exc.start})") from None


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


def _depth(text: str) -> int:
    """How deep the JSON text's lists and objects nest (strings skipped; a malformed text
    gets some number, and json.loads says what is wrong with it)."""
    depth = deepest = 0
    for bracket in re.findall(r"[\[\]{}]", _STRING.sub("", text)):
        depth = depth + 1 if bracket in "[{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


def load(path: Path) -> list[GoldenEntry]:
    """The entries of a golden-set file (ValueError naming the file and the entry if malformed,
    too large, too deep, or not a regular file), a symlink read through."""
    return load_text(_read(Path(path)), path)


def load_text(text: str, path) -> list[GoldenEntry]:
    """The entries of a golden file's text (``path``: the file, for messages)."""
    if _depth(text) > MAX_DEPTH:
        raise _error(path, f"nests lists or objects more than {MAX_DEPTH} deep")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _error(path, f"is not JSON ({exc})") from None
    if not isinstance(data, list):
        raise _error(path, "is not a list")
    return [_entry(item, n, path) for n, item in enumerate(data, start=1)]


def _entry(item, n: int, path) -> GoldenEntry:
    """Entry ``n`` of the file, checked."""
    if not isinstance(item, dict) or set(item) - {"query", "url", "rank", "note"}:
        raise _error(path, f"entry {n} must be an object with query, url and optionally rank and note")
    query, url, rank = item.get("query"), item.get("url"), item.get("rank", DEFAULT_RANK)
    if not isinstance(query, str) or not query.strip():
        raise _error(path, f"entry {n} has no query")
    if not isinstance(url, str) or not url.strip() or "://" in url or url.startswith("/"):
        raise _error(path, f"entry {n} ({query!r}) needs the url of a page of the site, relative to its root "
                     "(e.g. \"user_guide/impute.html\" or \"api.html#mlkit.impute.SimpleImputer\")")
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        raise _error(path, f"entry {n} ({query!r}) has rank {rank!r}: give a whole number from 1")
    return GoldenEntry(query.strip(), url.strip(), rank)


def add(path: Path, query: str, url: str, rank: int | None = None) -> GoldenEntry:
    """Append an entry to the file (created if missing); returns it. The file is rewritten
    whole (temp file, rename), one entry per line so that diffs stay readable, under a lock
    (``_locked``): runs at the same time each keep their entry. The entries already there
    are kept as written (a ``note`` too). A symlink is written through (``_target``): its
    target gets the entry, the link stays. ValueError (one line) if the file cannot be
    read or written."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        target = _target(path)
        if os.path.lexists(target) and not target.is_file():  # refused before a lock file is made beside it
            raise _error(path, NOT_REGULAR)
        with _locked(target):
            existing = _items(target, path) if os.path.lexists(target) else []
            entry = _entry({"query": query, "url": url, "rank": rank or DEFAULT_RANK}, len(existing) + 1, path)
            new = {"query": entry.query, "url": entry.url, **({"rank": entry.rank} if entry.rank != DEFAULT_RANK else {})}
            lines = [json.dumps(item, ensure_ascii=False) for item in [*existing, new]]
            _replace(target, "[\n" + ",\n".join("  " + line for line in lines) + "\n]\n")
    except (FileExistsError, NotADirectoryError):
        ancestor = next((p for p in path.parents if p.exists() and not p.is_dir()), path.parent)
        raise ValueError(f"[sphinx-rag] golden set {path}: cannot be written ({ancestor} is a file, "
                         "not a directory)") from None
    except OSError as exc:
        raise ValueError(f"[sphinx-rag] golden set {path}: cannot be written ({exc.strerror or exc})") from None
    return entry


def _target(path: Path) -> Path:
    """The file a write to ``path`` must replace: ``path``, or the file its symlinks lead to
    (replacing the link itself would leave its target without the entry). ValueError for
    a loop of links."""
    target = Path(os.path.realpath(path))
    if target.is_symlink():  # realpath stops where links go round in a loop
        raise ValueError(f"[sphinx-rag] golden set {path}: is a loop of symlinks; nothing written")
    return target


def _items(target: Path, named: Path) -> list[dict]:
    """The entries of the file at ``target`` as written, checked (``load``'s checks;
    messages name the file as given, ``named``)."""
    text = _read(target)
    load_text(text, named)
    return json.loads(text)


@contextlib.contextmanager
def _locked(path: Path):
    """An exclusive ``flock`` on a lock file beside the golden file (``.NAME.lock``, left in
    place: removing it would let two runs hold locks on two files). The file itself cannot
    be locked: each write replaces it. Without ``fcntl`` (Windows), no lock."""
    if fcntl is None:
        yield
        return
    fd = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _replace(path: Path, text: str):
    """Write ``text`` to ``path`` at once: a temp file beside it, then a rename."""
    try:
        mode = path.stat().st_mode & 0o777  # mkstemp's file is 0600: keep the file's own mode
    except FileNotFoundError:
        mode = 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".golden-")
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def page_of(url: str) -> str:
    return url.split("#", 1)[0]


def met_by(url: str, result_urls: list[str]) -> bool:
    """Whether a passage whose chunks have ``result_urls`` answers a golden ``url``."""
    if "#" in url:
        return url in result_urls
    return any(page_of(u) == url for u in result_urls)


def missing(site_dir: Path, url: str) -> str | None:
    """Why ``url`` is not in the built HTML site ``site_dir`` ("no such page", "no such
    anchor"), or None when it is: an entry naming a page that does not exist can never be
    met, and saying "not in the top 10" would send its author to the ranking."""
    page, _, anchor = url.partition("#")
    path = Path(site_dir) / page
    if page.endswith("/") or not page:
        path = path / "index.html"  # dirhtml's pages
    if not path.resolve().is_relative_to(Path(site_dir).resolve()):
        return f"no such page: {page} is not in {site_dir}"  # never a file outside the site
    try:
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    except OSError:
        text = None
    if text is None:
        return f"no such page: {page or '(the root)'} is not in {site_dir}"
    if anchor and not any(f'id={q}{html.escape(anchor, quote=True)}{q}' in text for q in ('"', "'")):
        return f"no such anchor: {page} has no #{anchor}"
    return None


def site_beside(golden_file: Path) -> Path | None:
    """The built site sphinx-build's default layout puts beside a golden file kept in the
    docs' folder (``_build/html``), if it is there."""
    site = Path(golden_file).parent / "_build" / "html"
    return site if (site / "index.html").is_file() else None


def check(searcher, entries: list[GoldenEntry], site_dir: Path | None = None) -> list[Outcome]:
    """Run every entry's query on ``searcher`` (``search.retrieve.Searcher``); with ``site_dir``
    (the built HTML), an entry whose page or anchor is not there says so."""
    outcomes = []
    for entry in entries:
        depth = max(entry.rank, DEFAULT_RANK)
        results = searcher.search(entry.query, k=depth)
        rank = next((r.rank for r in results if met_by(entry.url, [r.url, *r.also])), None)
        top = list(dict.fromkeys(r.url for r in results))[:3]  # a page's passages name it once
        absent = missing(site_dir, entry.url) if site_dir is not None and rank is None else None
        outcomes.append(Outcome(entry, rank, top, absent))
    return outcomes


def shortfall(outcome: Outcome) -> str:
    """One line for an entry that falls short."""
    e = outcome.entry
    if outcome.absent:
        return f"golden set: {e.query!r} should find {e.url}: {outcome.absent}"
    found = (f"found at rank {outcome.rank}" if outcome.rank is not None
             else f"not in the top {max(e.rank, DEFAULT_RANK)}")
    top = ", ".join(outcome.top) or "no results"
    return f"golden set: {e.query!r} should find {e.url} within rank {e.rank}, {found} (top: {top})"


def as_questions(entries: list[GoldenEntry]) -> list[dict]:
    """The entries as an evaluation question set (``evaluate.load_questions``'s format)."""
    return [{"id": f"golden-{n}", "question": e.query, "style": "golden", "relevant": [{"url": e.url}]}
            for n, e in enumerate(entries, start=1)]
