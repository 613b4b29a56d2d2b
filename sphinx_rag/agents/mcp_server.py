"""``sphinx-rag mcp SITE...``: published Sphinx docs as an MCP server for coding agents.

The tools (``docs_tools.py``) read the site's own static index: for a URL, its manifest
and then only the shards a query needs, verified and cached on disk by hash, so nothing
runs on the docs' side but a static file server, and a second session (or a site gone
offline) answers from the cache. Built on the official MCP Python SDK (PyPI ``mcp``,
the ``sphinx-rag[mcp]`` extra): stdio by default, streamable HTTP on localhost with
``--http HOST:PORT``. A failing call is a one-line tool error (``isError``), arguments
of the wrong type or range included (in the tool's words, not the SDK's validation
dump); the server goes on. A call on a remote site takes at most ``--timeout`` seconds
(``search.fetch.CALL_TIMEOUT`` by default), several sites at once. Every answer ends with its
size in estimated tokens, and stays under ``budget.ANSWER_TOKENS`` (agents' clients cut
at 25,000): a long page is read in parts, a search too long loses its last passages.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from .._version import __version__
from .budget import ANSWER_TOKENS, cut_hits, sized
from .docs_tools import KINDS, MAX_K, DocsError, Library, Site

__all__ = ["build_server", "serve", "INSTRUCTIONS", "parse_http"]

INSTRUCTIONS = """\
Documentation search over Sphinx sites built with sphinx-rag ({sites}). Use search_docs
first for any question about these libraries (how to do X, which class does Y, what a
parameter means, an error message): it returns ranked passages with their page URLs.
Then read_page on a result's URL for the whole page as Markdown, or lookup_api with an
object's name (DummyClassifier, module.Class.method) for its signature, parameters,
return values and members. Prefer these over guessing an API from memory."""

SEARCH_HELP = """Search the documentation (keyword and semantic search, the same ranking as the site's \
search box) and return the best passages, each with its title, absolute URL, kind (api: reference of a \
class, function or parameter; guide: narrative user guide text; example: a gallery example) and text as \
Markdown. Use it first for any question about the library: how to do something, which object to use, \
what an option or parameter does, what an error means. Says "No good match" when nothing in the docs \
is close: then do not rely on the passages."""

READ_HELP = f"""Read one whole documentation page as Markdown (headings, prose, code with its language, \
API signatures and parameter lists, tables of objects and tables of contents as links to other pages' \
Markdown). Give the URL of a page as search_docs returns it (a #fragment is ignored), or relative to \
the site (user_guide/impute.html), or of its Markdown twin (user_guide/impute.html.md). A page over \
{ANSWER_TOKENS:,} tokens comes in parts: the answer says so, then ask for part=2 and on. Use it when a \
passage is not enough: the full tutorial, every parameter of a class, an example from start to end, \
the list of a module's objects."""

LOOKUP_HELP = """Look up one API object (class, function, method, attribute) by name: exact \
(mlkit.dummy.DummyClassifier) or its last dotted parts (DummyClassifier, DummyClassifier.fit). Returns \
its signature, summary, parameters with types and defaults, return values, attributes, examples, and \
the names of its methods. Use it when you know the name and need its exact reference; use search_docs \
when you know only what it does."""


#: What each argument must be, in the tools' words (an argument that fails the schema).
ARGUMENT_HELP = {
    "query": "query must be text: words, a question or an error message",
    "k": f"k (how many passages) must be a whole number from 1 to {MAX_K}",
    "kind": f"kind must be one of {', '.join(KINDS)}",
    "url": "url must be a page URL as search_docs gives it",
    "name": "name must be an API object's name, e.g. DummyClassifier.fit",
    "part": "part must be a whole number from 1 (the page's first part)",
}


class _Server(MCPServer):
    """``MCPServer`` whose argument errors are one line naming each bad argument and what
    it must be (the SDK reports pydantic's multi-line dump)."""

    async def call_tool(self, name, arguments, context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if not isinstance(exc.__cause__, ValidationError):
                raise
            raise ToolError(argument_error(name, exc.__cause__, arguments)) from None


def argument_error(tool: str, error: ValidationError, arguments) -> str:
    """One line for the arguments of ``tool`` that failed validation."""
    parts = []
    for problem in error.errors():
        field = str(problem["loc"][0]) if problem.get("loc") else ""
        if problem.get("type") == "missing":
            text = f"{field} is missing: {ARGUMENT_HELP.get(field, 'give it')}"
        else:
            given = arguments.get(field) if isinstance(arguments, dict) else None
            shown = repr(given) if len(repr(given)) <= 40 else repr(given)[:39] + "\u2026"
            text = f"{ARGUMENT_HELP.get(field, field + ' is not valid')} (got {shown})"
        if text not in parts:
            parts.append(text)
    return f"[sphinx-rag] {tool}: " + "; ".join(parts)


def build_server(library: Library) -> MCPServer:
    """The MCP server (``mcp.server.MCPServer``) with the three tools over ``library``."""
    sites = ", ".join(s.name for s in library.sites)
    server = _Server(name="sphinx-rag", version=__version__, instructions=INSTRUCTIONS.format(sites=sites),
                     log_level="WARNING")

    def tool_error(exc: DocsError) -> ToolError:
        return ToolError(" ".join(str(exc).split()))

    @server.tool(name="search_docs", description=SEARCH_HELP)
    def search_docs(
        query: Annotated[str, Field(description="what to look for: words, a question, an error message")],
        k: Annotated[int, Field(ge=1, le=MAX_K, description="how many passages (default 5)")] = 5,
        kind: Annotated[Literal["any", "api", "guide", "example"],
                        Field(description="only passages of this kind (default any)")] = "any",
    ) -> str:
        try:
            return sized(cut_hits(library.search(query, k, kind)))
        except DocsError as exc:
            raise tool_error(exc) from None

    @server.tool(name="read_page", description=READ_HELP)
    def read_page(
        url: Annotated[str, Field(description="a page URL from search_docs, or relative to the site, "
                                              "or of the page's .md twin")],
        part: Annotated[int, Field(ge=1, description="which part of a long page (default 1)")] = 1,
    ) -> str:
        try:
            return sized(library.read_page(url, part))
        except DocsError as exc:
            raise tool_error(exc) from None

    @server.tool(name="lookup_api", description=LOOKUP_HELP)
    def lookup_api(name: Annotated[str, Field(description="the object's name, e.g. DummyClassifier.fit")]) -> str:
        try:
            return sized(library.lookup_api(name))
        except DocsError as exc:
            raise tool_error(exc) from None

    return server


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` of a loopback address (the server has no authentication)."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"[sphinx-rag] --http takes HOST:PORT, e.g. 127.0.0.1:8765; got {text!r}")
    loopback = host == "localhost"
    try:
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if not loopback:
        raise ValueError(f"[sphinx-rag] --http serves on localhost only (127.0.0.1, ::1 or localhost): the MCP "
                         f"server has no authentication; got {host!r}")
    return host, int(port)


def serve(locations: list[str], *, http: str | None = None, encoder: str | None = None, cache_dir=None,
          offline: bool = False, timeout: float | None = None, rerank: bool = True) -> None:
    """Run the server until the client closes stdio (or forever over HTTP)."""
    address = parse_http(http) if http else None
    library = Library([Site(loc, encoder=encoder, cache_dir=cache_dir, offline=offline, timeout=timeout, rerank=rerank)
                       for loc in locations])
    server = build_server(library)
    if address is None:
        server.run()
    else:
        server.run("streamable-http", host=address[0], port=address[1])
