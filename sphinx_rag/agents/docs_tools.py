"""What a coding agent asks of published docs: search them, read a page, look up an API
object. Plain Python over ``search.retrieve.Searcher`` (no MCP here: ``mcp_server.py`` serves
these to agents), for one site or several.

A site is a local HTML directory or the URL of a published site (``search/remote.py``: the
manifest, then only the shards a query needs, verified and cached by hash, every record
checked: ``search/checks.py``). Every failure is a ``DocsError`` of one line (a site that
is not a sphinx-rag site, another index format, a network failure on a shard that is not
cached, a file that does not match its hash, a file too large, a site too slow, a damaged
index): the caller reports it and goes on. Several sites are searched at once, each call
on a site bounded by its ``call_timeout``, so one slow or broken site never holds or
spoils the others' results.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

from ..chunk.display import display_text
from ..search.index import ASSET_DIR, IndexDamaged, IndexMissing, IndexReader, site_root_of
from ..search.keyword_scoring import expand_tokens, keyword_scores
from ..search.lexical import tokenize
from ..search.merge import Entry, merge_answers, merged_weak
from ..search.remote import CALL_TIMEOUT, TIMEOUT, RemoteError, RemoteIndexReader, index_url, is_url
from ..search.retrieve import Result, Searcher, top_k
from ..search.window import AGENT_CHARS, passage_window, query_tokens
from .budget import ANSWER_TOKENS, estimate_tokens, parts
from .markdown import display_markdown, page_markdown, twin_name
from .markdown_text import atx_heading, escape_line, escape_prose, markdown_url
from .site_pages import DocsError, inside, local_site_file, object_records, page_records

__all__ = ["DocsError", "Site", "Library", "KINDS", "MAX_K", "echo", "search_sites", "merge_hits"]

KINDS = ("any", "api", "guide", "example")
MAX_K = 20  # passages a search returns at most
API_HITS = 40  # keyword hits read to find an API object by name
ECHO_CHARS = 80  # of a query repeated in a message


def echo(query: str, limit: int = ECHO_CHARS) -> str:
    """A query as a message repeats it: quoted, cut to ``limit`` characters with "…"."""
    return repr(query if len(query) <= limit else query[: limit - 1] + "\u2026")


@dataclass
class Hit:
    result: Result
    site: Site
    url: str  # absolute


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class Site:
    """One documentation site, opened on first use (and again after a failure).

    ``encoder``: the query encoder (None: a published site's static encoder when it ships
    one, so that no query waits for its 23 MB model; else the site's own final tier, the
    static encoder when onnxruntime is not installed). ``cache_dir``, ``offline``: see
    ``RemoteIndexReader``. ``timeout``: the
    seconds one call on a remote site may take in all, every request in it
    (``search.fetch.CALL_TIMEOUT`` unless given; a single wait is at most ``search.fetch.TIMEOUT``).
    ``fusion``: the site's own unless given (``sphinx-rag search --fusion``). ``rerank``: the
    site's cross-encoder reorders the fused top results (``search/cross_encoder.py``; fetched
    and cached by its sha256 on a remote site's first query, about 8 MB).
    """

    def __init__(self, location: str, *, encoder: str | None = None, cache_dir=None, offline: bool = False,
                 timeout: float | None = None, fusion: str | None = None, rerank: bool = True):
        self.location = location
        self.rerank = rerank
        self.remote = is_url(location)
        self.encoder = encoder
        self.fusion = fusion  # None: the site's own (sphinx_rag_fusion)
        self.call_timeout = float(timeout) if timeout else CALL_TIMEOUT
        self.options = {"cache_dir": cache_dir, "offline": offline, "timeout": min(TIMEOUT, self.call_timeout),
                        "call_timeout": self.call_timeout}
        self._searcher: Searcher | None = None
        self._lock = threading.Lock()

    # -- opening -----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.location

    def claims(self, url: str) -> bool:
        """Whether ``url`` is one of this site's (known without opening it: a site that
        cannot be read does not answer for the others' URLs)."""
        if "://" not in url:  # relative: a page of the one site served (Library.read_page)
            return True
        if self.remote:
            root = index_url(self.location)[: -len(ASSET_DIR.as_posix() + "/")]
            return url.startswith(root)
        if url.startswith("file:"):
            return url.startswith(Path(self.location).resolve().as_uri())
        return False

    def _open(self, deadline: float) -> Searcher:
        if self._searcher is None:
            if self.remote:
                reader: IndexReader = RemoteIndexReader(self.location, deadline=deadline, **self.options)
            else:
                reader = IndexReader(Path(self.location))
            self._searcher = Searcher(reader, encoder=self._encoder_for(reader), fusion=self.fusion, rerank=self.rerank)
        if isinstance(self._searcher.index, RemoteIndexReader):
            self._searcher.index.begin_call(deadline)
        return self._searcher

    def _encoder_for(self, reader: IndexReader) -> str | None:
        if self.encoder is not None or not reader.has_vectors:
            return self.encoder
        if self.remote and reader.has_encoder:  # its first query would fetch the model (23 MB) first
            return "static"
        tier = "static" if reader.manifest.get("settings", {}).get("query_encoder") == "static" else "model"
        if tier == "model" and reader.has_encoder and importlib.util.find_spec("onnxruntime") is None:
            return "static"  # the model needs onnxruntime; the static encoder does not
        return tier

    def call(self, work):
        """``work(searcher)`` under this site's lock, within ``call_timeout`` seconds for a
        remote site, every failure as a one-line DocsError (a site too slow says so; what
        another site's index holds cannot raise anything else). A remote site whose shard
        is gone (a new deploy) is opened again once, in the time left."""
        with self._lock:
            deadline = time.monotonic() + self.call_timeout
            try:
                return work(self._open(deadline))
            except DocsError:
                raise
            except Exception as exc:  # noqa: BLE001 - a site's failure is a line, never the caller's
                first = exc
            if (self.remote and self._searcher is not None and not self.options["offline"] and not _slow(first)
                    and isinstance(first, (IndexMissing, IndexDamaged)) and time.monotonic() < deadline):
                old = self._searcher.manifest
                self._searcher = None
                try:
                    searcher = self._open(deadline)
                    if searcher.manifest != old:
                        return work(searcher)
                except DocsError:
                    raise
                except Exception as exc:  # noqa: BLE001
                    first = exc
            raise DocsError(self._message(first, deadline)) from None

    def _message(self, exc: BaseException, deadline: float) -> str:
        if _slow(exc):
            said = _one_line(exc).removeprefix("[sphinx-rag] ")
            if time.monotonic() >= deadline - 0.5:  # the call's time ran out, not one wait
                return f"[sphinx-rag] {self.location} did not answer within {self.call_timeout:g} s (slow): {said}"
            return f"[sphinx-rag] {self.location} stopped answering (slow or unreachable): {said}"
        if isinstance(exc, (IndexMissing, IndexDamaged)) or (isinstance(exc, (ValueError, OSError))
                                                               and str(exc).startswith("[sphinx-rag]")):
            return _one_line(exc)
        return f"[sphinx-rag] {self.location}: its index is damaged ({type(exc).__name__}: {_one_line(exc)[:200]})"

    @property
    def fetched(self) -> dict:
        reader = self._searcher.index if self._searcher is not None else None
        return dict(reader.fetched) if isinstance(reader, RemoteIndexReader) else {"bytes": 0, "requests": 0}

    # -- URLs --------------------------------------------------------------------------------
    def root_url(self, searcher: Searcher) -> str:
        """The site's root as an absolute URL (file:// for a local directory), ending in /."""
        index = searcher.index
        if isinstance(index, RemoteIndexReader):
            return index.site_url
        root = site_root_of(index.root)
        return (root or index.root).resolve().as_uri() + "/"

    def relative(self, searcher: Searcher, url: str) -> str | None:
        """``url`` relative to this site's root (None: not one of its URLs)."""
        root = self.root_url(searcher)
        if url.startswith(root):
            return url[len(root):]
        if "://" not in url:
            return url.lstrip("/")
        return None

    # -- the tools ---------------------------------------------------------------------------
    def search(self, query: str, k: int, kind: str = "any") -> tuple[list[Hit], bool]:
        def work(searcher: Searcher):
            vector = None if searcher.fusion == "bm25" else searcher.query_vector(query)
            depth = k if kind == "any" else min(4 * k, 50)  # a kind is filtered from a deeper ranking
            results, weak = searcher.search_with_match(query, k=depth, vector=vector)
            if searcher.index.every_record_invalid:  # nothing it holds can be shown: said, not "no results"
                raise DocsError(f"[sphinx-rag] {self.location}: {searcher.index.invalid_records()}")
            results = [r for r in results if r.url and (kind == "any" or r.kind == kind)][:k]  # "": dropped
            root = self.root_url(searcher)
            return [Hit(r, self, urljoin(root, r.url)) for r in results], weak and bool(results)

        return self.call(work)

    def invalid_note(self) -> str | None:
        """One line when records of this site failed their checks (``search.checks``): they are
        left out of its answers, and the reader is told how many (None: none so far)."""
        reader = self._searcher.index if self._searcher is not None else None
        line = reader.invalid_records() if reader is not None else None
        return f"[sphinx-rag] {self.location}: {line}; left out" if line else None

    def read_page(self, url: str) -> tuple[str, str] | None:
        """(absolute page URL, its Markdown) or None when ``url`` is not this site's."""
        def work(searcher: Searcher):
            rel = self.relative(searcher, url)
            if rel is None:
                return None
            rel = rel.partition("#")[0].partition("?")[0]
            if not inside(rel):
                raise DocsError(f"[sphinx-rag] {url[:200]} is not a page of {self.location}")
            page = rel[: -len(".md")] if rel.endswith(".md") else rel
            root = self.root_url(searcher)
            return urljoin(root, page), self._page_markdown(searcher, page)

        return self.call(work)

    def _page_markdown(self, searcher: Searcher, page: str) -> str:
        index = searcher.index
        listing = index.pages()
        name = twin_name(page) if not page.endswith(".md") else page
        if listing is not None:
            entry = listing["files"].get(name)
            if entry is None and page.endswith("index.html"):  # a dirhtml page given by its file
                entry = listing["files"].get(name := page + ".md")
            if entry is None:
                raise DocsError(f"[sphinx-rag] {page or '/'} is not an indexed page of {self.location} "
                                "(search_docs gives the URLs of its pages)")
            if isinstance(index, RemoteIndexReader):
                return index.site_file(name, entry[0], entry[1]).decode("utf-8", errors="replace")
            data = local_site_file(index, name, entry)
            if data is not None:
                return data.decode("utf-8", errors="replace")
            # a copy of the index without its site: built from the text shards
        records = page_records(index, page)
        if not records:
            raise DocsError(f"[sphinx-rag] {page or '/'} is not an indexed page of {self.location} "
                            "(search_docs gives the URLs of its pages)")
        return page_markdown(records)

    def lookup_api(self, name: str) -> tuple[str, list[str], str, list[str]] | None:
        """(owner, its chunks' Markdown as one text, absolute URL, members) of the API
        object ``name`` (exact or dotted suffix), None if there is none; DocsError
        listing the candidates when the name is ambiguous."""
        def work(searcher: Searcher):
            index = searcher.index
            tokens = tokenize(name.replace(".", " "))
            if not tokens:
                return None
            scores = keyword_scores(index.n_chunks, tokens, expand_tokens(tokens, index.postings, index.near))
            owners: dict[str, int] = {}
            for i in top_k(scores, API_HITS):
                c = index.chunk(i)
                owner = c["headings"][-1] if c["kind"] == "api" and c["headings"] else ""
                if owner == name or owner.endswith("." + name):
                    owners.setdefault(owner, i)
            if not owners:
                return None
            exact = [o for o in owners if o == name]
            if exact:
                owner = exact[0]
            elif len(owners) == 1:
                owner = next(iter(owners))
            else:
                ranked = sorted(owners, key=lambda o: (o.count("."), o))
                raise DocsError(f"[sphinx-rag] {name!r} names several objects in {self.location}: "
                                f"{', '.join(ranked[:10])}; call lookup_api with one of these")
            records, members = object_records(index, owners[owner], owner)
            root = self.root_url(searcher)
            return owner, page_markdown(records), urljoin(root, records[0]["url"]), members

        return self.call(work)


def _slow(exc: BaseException) -> bool:
    return isinstance(exc, RemoteError) and exc.slow


def search_sites(sites: list[Site], run) -> list:
    """``run(site)`` for each site at once (each bounded by its own call timeout): the
    results in the sites' order, a DocsError in place of a site that failed."""
    def one(site):
        try:
            return run(site)
        except DocsError as exc:
            return exc

    if len(sites) == 1:
        return [one(sites[0])]
    with ThreadPoolExecutor(max_workers=min(8, len(sites))) as pool:
        return list(pool.map(one, sites))


def merge_hits(query: str, answers: list[tuple[list[Hit], bool]], k: int | None) -> list[Hit]:
    """Several sites' hits as one ranking (``search.merge.merge_answers``: a weak site's after the
    others' good matches, then by each hit's match to the query, whatever the sites' order)."""
    entries = [([Entry(f"{h.url} {h.result.id}", h.result.text, h.result.title, h.result.similarity) for h in hits],
                weak) for hits, weak in answers]
    names = [hits[0].site.name if hits else "" for hits, _ in answers]
    return [answers[n][0][i] for n, i in merge_answers(query, entries, names, k)]


class Library:
    """One or more sites behind the three tools; several sites' results merged by how
    well each matches the query (``merge_hits``), each naming its site."""

    def __init__(self, sites: list[Site]):
        if not sites:
            raise ValueError("[sphinx-rag] give at least one site")
        self.sites = sites

    def search(self, query: str, k: int = 5, kind: str = "any") -> str:
        query = " ".join(str(query).split())
        if not query:
            raise DocsError("[sphinx-rag] the query is empty: give words or a question")
        if kind not in KINDS:
            raise DocsError(f"[sphinx-rag] kind must be one of {', '.join(KINDS)}; got {kind!r}")
        k = max(1, min(int(k), MAX_K))
        answers: list[tuple[list[Hit], bool]] = []
        failures, notes = [], []
        for site, answer in zip(self.sites, search_sites(self.sites, lambda site: site.search(query, k, kind))):
            if isinstance(answer, DocsError):
                failures.append(str(answer))
                continue
            answers.append(answer)
            notes += [note] if (note := site.invalid_note()) else []  # records it holds that were left out
        if failures and len(failures) == len(self.sites):
            raise DocsError(failures[0] if len(failures) == 1 else "; ".join(failures))
        ranked = merge_hits(query, answers, k)
        tokens = query_tokens(query)
        lines = []
        if not ranked:
            lines.append(f"No results for {echo(query)}.")
        elif merged_weak([weak for _, weak in answers]):
            lines.append(f"No good match for {echo(query)}: these are only the nearest passages.")
        lines += [f"Not searched: {escape_line(f)}" for f in failures]
        lines += notes  # a site that answered without some of its records says how many
        for rank, hit in enumerate(ranked, start=1):
            r = hit.result
            shown = passage_window(r.display, tokens, AGENT_CHARS, r.title)  # the dialog's window, read further
            # page text and titles escaped as in the twins (markdown_text.py): an agent's answer is Markdown
            lines += ["", atx_heading(2, f"{rank}. {r.title}"), f"URL: {markdown_url(hit.url)}",
                      f"Kind: {escape_line(r.kind)} | Site: {hit.site.name}", "",
                      display_markdown(shown) or escape_prose(display_text(shown))]
        return "\n".join(lines).strip() + "\n"

    def _site_of(self, url: str):
        for site in self.sites:
            if site.claims(url):
                answer = site.read_page(url)
                if answer is not None:
                    return site, answer
        return None, None

    def read_page(self, url: str, part: int = 1) -> str:
        """A page's twin, in parts of at most ``budget.ANSWER_TOKENS`` (``part`` from 1): a
        URL absolute or relative to the one site served, of the page or of its twin."""
        url = str(url).strip()
        if not url:
            raise DocsError("[sphinx-rag] give a page URL (as search_docs returns them)")
        if "://" not in url and len(self.sites) > 1:
            raise DocsError(f"[sphinx-rag] {url!r} is relative and several sites are served: give the absolute URL")
        site, answer = self._site_of(url)
        if answer is None:
            sites = ", ".join(s.name for s in self.sites)
            raise DocsError(f"[sphinx-rag] {url} is not a page of the sites served ({sites})")
        page_url, markdown = answer
        pieces = parts(markdown)
        if not 1 <= int(part) <= len(pieces):
            raise DocsError(f"[sphinx-rag] {page_url} is read in {len(pieces)} part{'s' if len(pieces) > 1 else ''}: "
                            f"part must be from 1 to {len(pieces)}; got {part}")
        head = f"<!-- {markdown_url(page_url)} (site: {site.name}) -->\n"
        if len(pieces) > 1:
            head += (f"<!-- part {part} of {len(pieces)} (each under {ANSWER_TOKENS:,} tokens)"
                     + (f": read_page with part={part + 1} for the next" if part < len(pieces) else "") + " -->\n")
        return head + pieces[int(part) - 1]

    def lookup_api(self, name: str) -> str:
        name = str(name).strip().strip("`").removesuffix("()")
        if not name:
            raise DocsError("[sphinx-rag] give an API name, e.g. DummyClassifier or mlkit.dummy.DummyClassifier.fit")
        found, failures = [], []
        for site, answer in zip(self.sites, search_sites(self.sites, lambda site: site.lookup_api(name))):
            if isinstance(answer, DocsError):
                failures.append(str(answer))
            elif answer is not None:
                found.append((site, answer))
        if not found:
            if failures:
                raise DocsError("; ".join(failures))
            raise DocsError(f"[sphinx-rag] no API object named {name!r} in {', '.join(s.name for s in self.sites)}: "
                            "try search_docs with words of what it does")
        out = []
        for site, (owner, markdown, url, members) in found:
            url = markdown_url(url)
            if estimate_tokens(markdown) > ANSWER_TOKENS // max(len(found), 1):
                markdown = parts(markdown, ANSWER_TOKENS // max(len(found), 1) - 200)[0] + (
                    f"\n(cut to stay under {ANSWER_TOKENS:,} tokens: read_page {url} for all of it)\n")
            out.append(f"<!-- {escape_line(owner)}: {url} (site: {site.name}) -->\n{markdown}")
            if members:
                out.append(f"Members (lookup_api gives each): {escape_line(', '.join(members))}\n")
        return "\n".join(out)
