"""``sphinx-rag search``: one site's results grouped by page (or a flat list, or JSON), or
several sites' merged; each result's passage is the window the search dialog shows
(``search/window.py``). Records of a site that fail their checks (``search/checks.py``) are
left out and said in one line on stderr; a site whose every record read failed is not
searched (exit status 2 when it was the only one)."""

from __future__ import annotations

import json
import sys
import textwrap

from .terminal import clean
from .text import text_argument, wrapped

__all__ = ["run_search"]


def run_search(args) -> int:
    from ..search.retrieve import Searcher

    query = text_argument(args.query, "query", 'search words or a question, e.g. "imputer strategy"')
    if query is None:
        return 2
    if len(args.build_dir) > 1:
        return _search_sites(args, query)
    args.build_dir = args.build_dir[0]
    searcher = Searcher(_index(args.build_dir, args.timeout), fusion=args.fusion, encoder=args.encoder,
                        rerank=not args.no_rerank, warn=lambda line: print(clean(line), file=sys.stderr))
    vector = None if searcher.fusion == "bm25" else searcher.query_vector(query)  # embedded once
    results, weak = searcher.search_with_match(query, k=args.k, vector=vector)
    invalid = searcher.index.invalid_records()  # records that failed their checks: said, never silent
    if searcher.index.every_record_invalid:
        print(clean(f"[sphinx-rag] not searched: {args.build_dir}: {invalid}"), file=sys.stderr)
        return 2
    if invalid:
        print(clean(f"[sphinx-rag] {args.build_dir}: {invalid}; left out"), file=sys.stderr)
    results = [r for r in results if r.url]  # a record that failed its checks has none (search.checks.DROPPED)
    note = f"No good match for {_echo(query)}. The nearest results:" if weak and results else ""
    if args.json:
        return _print_json([_json_result(r, query) for r in results], note)
    _print_note(results, note)
    _print_flat(results, query) if args.flat else _print_grouped(results, query)
    return 0


def _window(r, query: str):
    """The part of a result's passage the search dialog shows (``search/window.py``): the part
    that matched, not its head."""
    from ..search.window import passage_window, query_tokens

    return passage_window(r.display, query_tokens(query), title=r.title)


def _json_result(r, query: str) -> dict:
    """A result as --json gives it: ``display`` is the window the dialog shows."""
    return {**r.to_json(), "display": _window(r, query)}


def _index(location: str, timeout: float | None):
    """A local index, or a published site's whose requests all end within ``timeout``
    seconds (``search.fetch.CALL_TIMEOUT``)."""
    import time

    from ..search.remote import CALL_TIMEOUT, TIMEOUT, is_url, open_index

    if not is_url(location):
        return location
    total = timeout or CALL_TIMEOUT
    return open_index(location, deadline=time.monotonic() + total, timeout=min(TIMEOUT, total))


def _echo(query: str) -> str:
    from ..agents.docs_tools import echo

    return echo(query)


def _print_passage(r, query: str, indent: str):
    """The window of a result's passage the dialog shows (the part that matched), as plain
    text, terminal-safe."""
    from ..chunk.display import display_text

    shown = clean(display_text(_window(r, query)))
    if shown:
        print(textwrap.indent(wrapped(shown), indent))


def _print_flat(results, query: str):
    """The ranked list: rank, kind, title path, score, URL, passage."""
    for r in results:
        print(f"{r.rank:2d}. [{clean(r.kind)}] {clean(r.title)}  ({r.score:.4f})")
        print(f"    {clean(r.url)}")
        _print_passage(r, query, "    ")


def _print_grouped(results, query: str):
    """As the search dialog shows them: a heading per page, each place in it once (its best
    hit, or the one holding the most names the query asks for, and how many more matched
    there), with its rank."""
    from ..search.lexical import identifier_tokens
    from .result_groups import group_results, title_parts

    for g, group in enumerate(group_results(results, identifier_tokens(query))):
        print(("\n" if g else "") + clean(group.title))
        for entry in group.entries:
            r = entry.result
            parts = title_parts(r.title)
            place = " > ".join(parts[1:] if len(parts) > 1 else parts)  # the section inside the page
            print(f"  {r.rank:2d}. [{clean(r.kind)}] {clean(place)}  ({r.score:.4f})")
            print(f"      {clean(r.url)}")
            _print_passage(r, query, "      ")
            if entry.merged:
                n = len(entry.merged)
                print(f"      +{n} more match{'es' if n > 1 else ''} here")


def _search_sites(args, query: str) -> int:
    """Several sites searched at once and merged (``search/merge.py``: a weak site's after the
    others' good matches, then by each hit's match to the query; the merge of the browser's
    federated search and of the MCP server), one ranked list, each result
    naming its site, its URL absolute; a site that fails (down, too slow: ``search.fetch.CALL_TIMEOUT``
    seconds in all, damaged, hostile, every record read invalid) is one line on stderr, the others
    answer as alone; a site some of whose records were invalid says how many in one line."""
    from ..agents.docs_tools import DocsError, Site, merge_hits, search_sites
    from ..search.merge import merged_weak

    sites = [Site(location, encoder=args.encoder, fusion=args.fusion, timeout=args.timeout, rerank=not args.no_rerank)
             for location in args.build_dir]
    answers, failed = [], 0
    for site, answer in zip(sites, search_sites(sites, lambda site: site.search(query, args.k))):
        if isinstance(answer, DocsError):
            print(clean(f"[sphinx-rag] not searched: {str(answer).removeprefix('[sphinx-rag] ')}"), file=sys.stderr)
            failed += 1
            continue
        answers.append(answer)
        if note := site.invalid_note():  # some of its records failed their checks: left out, said
            print(clean(note), file=sys.stderr)
    if failed == len(args.build_dir):
        return 2
    merged = merge_hits(query, answers, args.k)
    weak = [site_weak for _, site_weak in answers]
    note = f"No good match for {_echo(query)}. The nearest results:" if merged and merged_weak(weak) else ""
    if args.json:
        return _print_json([{**_json_result(hit.result, query), "rank": rank, "url": hit.url, "site": hit.site.name}
                            for rank, hit in enumerate(merged, start=1)], note)
    _print_note(merged, note)
    for rank, hit in enumerate(merged, start=1):
        r = hit.result
        print(f"{rank:2d}. [{clean(r.kind)}] {clean(r.title)}  ({clean(hit.site.name)}, its #{r.rank})")
        print(f"    {clean(hit.url)}")
        _print_passage(r, query, "    ")
    return 0


def _print_json(rows: list[dict], note: str) -> int:
    """--json: the list on stdout, exact (JSON escapes control characters itself); the
    "no good match" note on stderr, so that stdout stays the JSON list."""
    if note:
        print(f"[sphinx-rag] {note}", file=sys.stderr)
    json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


def _print_note(results: list, note: str):
    """The line above the results: none found, or the "no good match" note."""
    if not results:
        print("no results")
    elif note:
        print(clean(note))
