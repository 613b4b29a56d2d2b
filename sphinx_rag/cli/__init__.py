"""``sphinx-rag`` command line: the parser and ``main``; ``search`` and ``ask`` have a module
each (``search.py``, ``ask.py``), the other commands are a few lines here (golden, mcp,
serve, evaluate, export-model)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from .._version import __version__
from ..search.index import IndexDamaged, IndexMissing
from .ask import run_ask
from .search import run_search
from .terminal import clean
from .text import StdoutClosed, text_argument
from ..tools.serve import MAX_CONNECTIONS, READ_TIMEOUT

DESCRIPTION = """\
Search a Sphinx site's sphinx-rag index from a terminal (the same ranking as the
search bar in the browser), answer questions with a local LLM from its passages,
measure retrieval quality, or export an embedding model for CI caches."""

EPILOG = """\
examples:
  sphinx-rag search docs/_build/html "how do I impute missing values?" --k 5
  sphinx-rag search docs/_build/html https://numpy.org/doc/stable/ "dtype of an array"
  sphinx-rag ask docs/_build/html "which strategies does DummyClassifier offer?" \\
      --endpoint http://127.0.0.1:8080/v1
  sphinx-rag evaluate docs/_build/html questions.json --methods bm25,rrf
  sphinx-rag golden add docs/search_golden.json "impute missing values" user_guide/impute.html
  sphinx-rag mcp https://docs.example.org/en/stable    (an MCP server for coding agents)
  sphinx-rag serve docs/_build/html --cors --port 8001   (a local preview other sites may search)
  sphinx-rag COMMAND --help      (the options of one command)"""

BUILD_DIR_HELP = ("the HTML output directory of sphinx-build (e.g. docs/_build/html), or a Sphinx source "
                  "directory whose _build/html holds the index")
FUSIONS = ("rrf", "bm25", "dense")
ENCODERS = ("static", "model")
ENCODER_HELP = ("what embeds the query: static (the site's fitted static encoder) or model (the full model); "
                "default: the site's sphinx_rag_query_encoder (model when it is 'both')")

__all__ = ["main"]


def _mcp(args) -> int:
    try:
        from ..agents.mcp_server import parse_http, serve
    except ImportError as exc:  # the SDK is the mcp extra
        print(f"[sphinx-rag] the MCP server needs the MCP SDK ({exc}): pip install \"sphinx-rag[mcp]\"",
              file=sys.stderr)
        return 2
    if args.http:
        parse_http(args.http)  # a bad address: one line before anything starts
    serve(args.sites, http=args.http, encoder=args.encoder, cache_dir=args.cache_dir, offline=args.offline,
          rerank=not args.no_rerank,
          timeout=args.timeout)
    return 0


def _serve(args) -> int:
    from ..tools.serve import serve

    if not 0 <= args.port <= 65535:
        print(f"[sphinx-rag] --port {args.port} is not a port: give 0 to 65535 (0: any free port)", file=sys.stderr)
        return 2
    if not 0 < args.timeout < float("inf"):
        print(f"[sphinx-rag] --timeout {args.timeout:g} is not a number of seconds: give one above 0 (e.g. 15)",
              file=sys.stderr)
        return 2
    return serve(args.build_dir, args.port, host=args.host, cors=args.cors, isolated=args.isolated,
                 list_dirs=args.list_dirs, timeout=args.timeout)


def _export(args) -> int:
    from ..model.export import export_model

    try:
        out = export_model(args.model, args.out_dir)
    except RuntimeError as exc:  # ours are one line saying what to install or pass instead
        if not str(exc).startswith("[sphinx-rag]"):
            raise
        print(str(exc), file=sys.stderr)
        return 2
    print(f"exported {args.model} -> {out}")
    return 0


def _evaluate(args) -> int:
    from ..tools.evaluate import evaluate, format_table, load_questions

    if args.no_fit and args.budget is None:
        print("[sphinx-rag] --no-fit compares passages cut to a budget: give --budget CHARS too", file=sys.stderr)
        return 2

    report = evaluate(args.build_dir, load_questions(args.questions), methods=args.methods, budget=args.budget,
                      fit=not args.no_fit)
    print(format_table(report, title=args.title or str(args.questions)))
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


def _golden_add(args) -> int:
    from ..tools import golden

    example = 'a query and a URL, e.g. sphinx-rag golden add FILE "impute missing values" user_guide/impute.html'
    query = text_argument(args.query, "query", example)
    url = text_argument(args.url, "URL", example)
    if query is None or url is None:
        return 2
    site = Path(args.site) if args.site else golden.site_beside(Path(args.golden_file))
    if site is not None and "://" not in url and not url.startswith("/"):  # else golden.add says what a URL is
        if not (site / "index.html").is_file() and not (site / "_static").is_dir():
            print(f"[sphinx-rag] --site {site}: not a built HTML site (no index.html)", file=sys.stderr)
            return 2
        absent = golden.missing(site, url.strip())
        if absent:
            print(f"[sphinx-rag] golden set {args.golden_file}: {absent} (nothing added)", file=sys.stderr)
            return 2
    try:
        entry = golden.add(Path(args.golden_file), query, url, args.rank)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    count = len(golden.load(Path(args.golden_file)))
    print(f"added to {args.golden_file} ({count} entries): {entry.query!r} -> {entry.url} within rank {entry.rank}")
    return 0


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer (e.g. 10)")
    return value


def _methods(text: str) -> list[str]:
    from ..tools.evaluate import METHODS

    methods = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if not methods or unknown:
        raise argparse.ArgumentTypeError(f"{text!r}: give a comma-separated list of {', '.join(METHODS)}")
    return methods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sphinx-rag", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="one of these (sphinx-rag COMMAND --help: its arguments)")

    help_ = "search a built site's index (same ranking as the browser)"
    p = sub.add_parser("search", help=help_, description=help_[0].upper() + help_[1:] + ". A site that cannot "
                       "be searched (down, too slow, damaged, every record read invalid) is one line on stderr, "
                       "the others answer; records of a site that fail their checks are left out, one line saying "
                       "how many. Exit status 2 when no site could be searched.")
    p.add_argument("build_dir", metavar="BUILD_DIR", nargs="+", help=BUILD_DIR_HELP + ", or a published "
                   "site's URL; several: their results merged by how well each matches the query, each naming its site")
    p.add_argument("query", metavar="QUERY", help="the search words or question (quote it)")
    p.add_argument("--k", type=_positive_int, default=10, metavar="N", help="number of results (default 10)")
    p.add_argument("--flat", action="store_true",
                   help="one ranked list (default: grouped by page as in the search dialog, each place once "
                   "with its best passage and how many more matched there; several sites: always one list)")
    p.add_argument("--json", action="store_true",
                   help="print the ranked results as a JSON list, not grouped (rank, score, url, title, kind, "
                   "text: what was indexed, display: the part of the passage the search dialog shows, the part "
                   "that matched, a list of [type, text] blocks, id)")
    p.add_argument("--fusion", choices=FUSIONS, help="override the site's fusion method: rrf (keyword and "
                   "semantic rankings fused), bm25 (keyword only) or dense (semantic only)")
    p.add_argument("--encoder", choices=ENCODERS, help=ENCODER_HELP + "; of a published site's URL: its static "
                   "encoder when it ships one (no model download)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="the most a published site may take, all its "
                   "requests together (default 30); a site slower than that is one line, the others answer")
    p.add_argument("--no-rerank", action="store_true", help="keep the fused order: no cross-encoder reranking "
                   "of the top results (by default the site's reranker reorders them, as the search dialog does once "
                   "the reader's browser has the model)")
    p.set_defaults(func=run_search)

    help_ = "answer a question with a local LLM from the site's search results"
    p = sub.add_parser("ask", help=help_, description=(
        "Answer a question with a local OpenAI-compatible LLM server (llama.cpp, Ollama, vLLM) from the "
        "site's search results, sized to the model's context window. With --multi-query or "
        "--filter-passages, each extra call is shown as it ends (its result, time and tokens). Lists the "
        "retrieved passages, [n] for those sent to the LLM (the answer cites them by that number), [-] for "
        "those judged not relevant or that did not fit, then streams the answer."))
    p.add_argument("build_dir", metavar="BUILD_DIR", help=BUILD_DIR_HELP)
    p.add_argument("question", metavar="QUESTION", help="the question (quote it)")
    p.add_argument("--endpoint", metavar="URL", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 "
                   "(default: sphinx_rag_llm of the built site)")
    p.add_argument("--model", metavar="NAME", help="model name (default: the site's, else the server's only model)")
    p.add_argument("--k", type=_positive_int, default=8, metavar="N", help="passages retrieved (default 8)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="seconds without any data from the server before "
                   "giving up (default: the site's, else 60)")
    p.add_argument("--temperature", type=float, metavar="T",
                   help="sampling temperature (default: the site's, else 0.1)")
    p.add_argument("--max-context-tokens", type=int, metavar="N",
                   help="the model's context window; passages that do not fit are not sent "
                   "(default: the site's, else 4096)")
    p.add_argument("--max-answer-chars", type=_positive_int, metavar="N",
                   help="cut the answer after N characters, with a note (default: the site's, else 20000)")
    p.add_argument("--multi-query", action=argparse.BooleanOptionalAction, default=None,
                   help="first have the model rewrite the question into up to 3 search queries, searched with it "
                   "and fused (one more call; default: the site's multi_query, else off)")
    p.add_argument("--filter-passages", action=argparse.BooleanOptionalAction, default=None,
                   help="have the model judge each passage before answering, one call each, and send only those "
                   "it does not reject (default: the site's filter_passages, else off)")
    p.add_argument("--project", metavar="NAME", help="project name in the prompt (default: the site's)")
    p.add_argument("--fusion", choices=FUSIONS, help="override the site's fusion method (see search --help)")
    p.add_argument("--encoder", choices=ENCODERS, help=ENCODER_HELP)
    p.add_argument("--no-rerank", action="store_true", help="keep the fused order: no cross-encoder reranking "
                   "of the top results (by default the site's reranker reorders them, as the search dialog does once "
                   "the reader's browser has the model)")
    p.set_defaults(func=run_ask)

    help_ = "Recall@k / MRR@10 / answer-component metrics of each method on a question set"
    p = sub.add_parser("evaluate", help=help_, description=help_ + ", as a Markdown table.")
    p.add_argument("build_dir", metavar="BUILD_DIR", help=BUILD_DIR_HELP)
    p.add_argument("questions", metavar="QUESTIONS",
                   help="JSON file: a list of {id, question, style, relevant: [{url, text_contains}], "
                        "answer_components: [[context, ...], ...]} (relevant or answer_components or both), or a "
                        "golden-set file (sphinx_rag_golden: a list of {query, url, rank})")
    p.add_argument("--methods", type=_methods, metavar="LIST", default=None,
                   help="comma-separated methods: sphinx-rag's rankings bm25, dense, rrf (the last two "
                        "optionally with a query encoder: dense-static, rrf-model, ...), rrf with the reranker "
                        "after the fusion (rrf-rerank, rrf-model-rerank: what a reader gets once the browser has the "
                        "model), and the same over fixed 750-character windows of the pages: fixed-bm25, "
                        "fixed-dense, fixed-rrf. Default: bm25, dense and rrf (per encoder when the site has both), "
                        "rrf-model-rerank when the site ships the reranker, fixed-bm25, fixed-rrf")
    p.add_argument("--budget", type=_positive_int, metavar="CHARS",
                   help="read the top 10 cut to CHARS characters in all (as an LLM's context holds them): a hit "
                        "counts only within the cut, and sphinx-rag's passages are sized for it (shorter, more of "
                        "them). Default: no cut, except 7,500 characters for the answer-component metrics")
    p.add_argument("--no-fit", action="store_true",
                   help="with --budget: sphinx-rag's passages as without a budget, only cut (to compare)")
    p.add_argument("--title", default="", metavar="TEXT",
                   help="heading of the table (default: the questions file's path)")
    p.add_argument("--json-out", metavar="FILE", help="also write the full report (per question) as JSON to this file")
    p.set_defaults(func=_evaluate)

    help_ = "the golden set: searches every build checks (sphinx_rag_golden)"
    p = sub.add_parser("golden", help=help_, description=help_[0].upper() + help_[1:] + ".")
    golden_sub = p.add_subparsers(dest="golden_command", required=True, metavar="ACTION",
                                  help="add (sphinx-rag golden ACTION --help: its arguments)")
    g = golden_sub.add_parser("add", help="append an entry (the file is created if missing)",
                              description="Append an entry to a golden-set file (created if missing): a query "
                              "and the page or anchor its answer must come from. A symlink is written through (its "
                              "target gets the entry, the link stays); a file over 4 MB, nested over 16 deep or not "
                              "a regular file is one error line, nothing written.")
    g.add_argument("golden_file", metavar="GOLDEN_FILE", help="the JSON file sphinx_rag_golden names")
    g.add_argument("query", metavar="QUERY", help="what a reader searches (quote it)")
    g.add_argument("url", metavar="URL", help="the page (user_guide/impute.html) or anchor "
                   "(api.html#mlkit.impute.SimpleImputer) that must answer it, relative to the site root")
    g.add_argument("--rank", type=_positive_int, metavar="N",
                   help="the rank it must reach (default 10)")
    g.add_argument("--site", metavar="DIR", help="the built HTML site whose pages the URL must name "
                   "(default: _build/html beside GOLDEN_FILE, if it is there; without a site, not checked)")
    g.set_defaults(func=_golden_add)

    help_ = "serve one or more sites' docs to coding agents (an MCP server: search_docs, read_page, lookup_api)"
    p = sub.add_parser("mcp", help=help_, description=(
        "An MCP server (Model Context Protocol) for coding agents over the sites' static search indexes: "
        "search_docs, read_page and lookup_api. SITE is a built HTML directory or the URL of a published "
        "site: its manifest, then only the index files a query needs are fetched, verified by hash and "
        "cached on disk, so nothing runs on the docs' side and a site that is offline still answers from "
        "the cache. Several SITEs: results merged, each naming its site. Speaks stdio unless --http."))
    p.add_argument("sites", nargs="+", metavar="SITE", help="an HTML output directory or an http(s) URL of a site")
    p.add_argument("--http", metavar="HOST:PORT", help="serve the streamable HTTP transport on localhost "
                   "(e.g. 127.0.0.1:8765, endpoint /mcp) instead of stdio")
    p.add_argument("--encoder", choices=ENCODERS, help="what embeds queries: static (the site's fitted encoder, "
                   "no model download) or model; default: a published site's static encoder when it ships one, "
                   "else the site's own (a local directory's), the static encoder without onnxruntime")
    p.add_argument("--cache-dir", metavar="DIR", default=None, help="where fetched index files are kept "
                   "(default $SPHINX_RAG_CACHE/remote, else ~/.cache/sphinx-rag/remote)")
    p.add_argument("--offline", action="store_true", help="answer from the cache only (no network)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="the most one tool call waits for a "
                   "published site, all its requests together (default 30; a site slower than that is reported, "
                   "the others answer)")
    p.add_argument("--no-rerank", action="store_true", help="keep the fused order: no cross-encoder reranking "
                   "of the top results (by default the site's reranker reorders them, as the search dialog does once "
                   "the reader's browser has the model)")
    p.set_defaults(func=_mcp)

    help_ = "serve a built site on 127.0.0.1 with the headers its search needs (a local preview)"
    p = sub.add_parser("serve", help=help_, description=(
        "Serve a built site on http://127.0.0.1:PORT/ with the headers its search needs: the content types of "
        "its JavaScript modules, WebAssembly, JSON and Markdown, gzip (compressed as it is sent), no-cache, "
        "X-Content-Type-Options: nosniff; with --cors, Access-Control-Allow-Origin: * so that another site's "
        "search dialog may search this one (sphinx_rag_federation; e.g. two sites on two ports). "
        "It serves only files whose real path, symlinks followed, is inside BUILD_DIR (a symlink to a file or "
        "folder elsewhere: 404), lists no folder (404 for a folder without index.html) unless --list-dirs, and "
        "answers a path with a control character (%00) with 400. A request must arrive whole within --timeout "
        f"seconds, else its connection is closed; at most {MAX_CONNECTIONS} connections are served at once "
        "(past that, the one that has waited longest for a request is closed); a file that shrinks while it is "
        "sent ends its connection. A local preview, not a production server."))
    p.add_argument("build_dir", metavar="BUILD_DIR", help=BUILD_DIR_HELP)
    p.add_argument("--port", type=int, default=8000, metavar="N", help="the port (default 8000; 0: any free port)")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="the address to listen on (default "
                   "127.0.0.1: this machine only). On a loopback address (127.0.0.1, ::1, localhost) only requests "
                   "whose Host header names it (localhost, 127.0.0.1 or [::1], with or without the port) are "
                   "answered, others get 400: a page of another site whose name was made to resolve to 127.0.0.1 "
                   "(DNS rebinding) cannot read the site through your browser. Any other address (0.0.0.0: every "
                   "interface) lets every machine that reaches it read BUILD_DIR, with no Host check (it cannot "
                   "know the names it is reached by)")
    p.add_argument("--list-dirs", action="store_true", help="list the files of a folder without index.html "
                   "(default: 404), as python -m http.server does")
    p.add_argument("--timeout", type=float, default=READ_TIMEOUT, metavar="SECONDS", help="the most a request "
                   "(its line and headers) may take to arrive, and a write to a client that reads nothing may "
                   "stall, before the connection is closed (default %(default)g; an idle kept-alive connection is "
                   "closed after as long)")
    p.add_argument("--cors", action="store_true", help="let pages of other origins read it (federation)")
    p.add_argument("--isolated", action="store_true", help="send COOP/COEP (cross-origin isolation: the semantic "
                   "model may use several threads; pages then embed no resource of another origin that does not "
                   "allow it)")
    p.set_defaults(func=_serve)

    help_ = "export a model to int8 ONNX (for CI caches)"
    p = sub.add_parser("export-model", help=help_, description=(
        "Export a sentence-embedding model to int8 ONNX (needs the export extra: torch and optimum). "
        "Point sphinx_rag_model at OUT_DIR to build without them."))
    p.add_argument("model", metavar="MODEL", help="Hugging Face model id or local sentence-transformers directory")
    p.add_argument("out_dir", metavar="OUT_DIR", help="directory to write the exported model to")
    p.set_defaults(func=_export)
    return parser


def _missing_index_message(args, exc: IndexMissing) -> str:
    """A missing directory, or a source directory given instead of the HTML output, says
    so; other errors as they are."""
    from ..search.remote import is_url

    given = getattr(args, "build_dir", "") or ""
    path = Path(given)
    if given and not is_url(given) and not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        return clean(f"[sphinx-rag] {path} {what}: give the HTML output directory of sphinx-build "
                     "(e.g. docs/_build/html) or its source directory")
    if str(path) and (path / "conf.py").is_file():
        return (f"[sphinx-rag] no search index in {path} nor in {path / '_build' / 'html'}: {path} is a Sphinx "
                f"source directory (it has conf.py); give the HTML output directory of `sphinx-build -b html "
                f"{path} OUTPUT_DIR`, built with \"sphinx_rag\" in extensions")
    return str(exc)


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (``| head -1``): stop without a traceback, as unix
    tools do (exit status 128 + SIGPIPE); stdout goes to /dev/null so that the final
    flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # a stdout without a file descriptor (tests)
        pass
    return 128 + getattr(signal, "SIGPIPE", 13)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe fails here, not in the interpreter's last flush
        return code
    except (BrokenPipeError, StdoutClosed):
        return _quiet_broken_pipe()
    except IndexMissing as exc:
        print(_missing_index_message(args, exc), file=sys.stderr)
        return 2
    except IndexDamaged as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except ValueError as exc:  # ours say what to do (e.g. an encoder the site does not ship)
        if not str(exc).startswith("[sphinx-rag]"):
            raise
        print(str(exc), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
