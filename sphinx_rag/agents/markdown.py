"""Markdown for coding agents: each indexed page's twin, ``llms.txt`` and ``llms-full.txt``
(the llmstxt.org convention).

A page's twin is made from its resolved doctree when the build has it (``twins.py``: the
page as its HTML shows it, autosummary tables and toctrees as links to other twins);
else (a copy of an index without its build, ``lookup_api``'s objects) from its chunks'
displays (``chunk/display.py``) in page order, under the headings of their heading paths
(``# Page``, ``## Section``, ``## module.Object``), the overlap a chunk repeats from the
one before dropped, an object card's signature first, code fenced with its language, API
entries as inline code under their numpydoc section.

Where a twin lives (``twin_name``): the page's URL with ``.md`` appended
(``guide.html`` -> ``guide.html.md``); a URL without a file name, as a ``dirhtml`` site
has (``guide/``), gets ``index.html.md`` appended, as llmstxt.org says: the twin sits
beside the ``index.html`` that serves the page. A ``singlehtml`` site's documents share
one file, so they share one twin (in index order).

Everything here is deterministic (sorted inputs, no timestamps): two builds of the same
sources write the same bytes. ``index/build.py`` calls ``site_files``; ``index/write.py``
writes the files inside the index's atomic publish.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field
from urllib.parse import quote

from ..chunk import valid_text
from ..chunk.display import HEADING, Display
from .markdown_text import TWIN_VERSION, atx_heading, code_fence, code_span, collapse, escape_line, escape_prose, twin_name
from .twins import resolve

__all__ = ["LlmsSite", "TWIN_VERSION", "twin_name", "display_markdown", "page_markdown", "site_files", "llms_txt", "LLMS_TXT",
           "LLMS_FULL_TXT", "DESCRIPTION_CHARS"]

LLMS_TXT = "llms.txt"
LLMS_FULL_TXT = "llms-full.txt"
DESCRIPTION_CHARS = 160  # a link's description in llms.txt: the page's first sentences, about this long
SUMMARY_CHARS = 300  # the blockquote summary (agent fetchers are said to cut longer ones)


@dataclass(frozen=True)
class LlmsSite:
    """What llms.txt says besides the pages: ``project`` (its H1), ``summary`` (its
    blockquote; "" = the root page's first paragraph), ``sections`` (the root toctree's
    captions, each with its documents in reading order), ``root`` (the root document),
    ``base_url`` (absolute links when the site sets html_baseurl; "" = links relative to
    the site root), ``full_bytes`` (the cap of llms-full.txt; 0 = none), ``twins`` (each
    document's twin made from its doctree, ``twins.py``; a document without one gets the
    twin of its chunks), ``twin_version`` (in the repr the build's inputs digest reads:
    a new renderer writes the files again)."""

    project: str
    summary: str = ""
    sections: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str = "index"
    base_url: str = ""
    full_bytes: int = 0
    notes: tuple[str, ...] = field(default=())
    twin_version: int = TWIN_VERSION
    twins: dict | None = field(default=None, repr=False, compare=False)


def _block(kind: str, text: str, extra: list[str], after_label: bool) -> str:
    if kind == "code":
        return code_fence(text, extra[0] if extra else "")
    if kind == "term":  # a signature gets a fence, an entry line (after its section's label) inline code
        if not after_label and "(" in text:
            return code_fence(text, "python")
        return code_span(text)
    if kind == HEADING:
        return f"**{escape_prose(collapse(text))}**"
    return escape_prose(text)


def display_markdown(display: Display) -> str:
    """One passage's display as Markdown (a search result): labels and headings bold, page
    text escaped (js/src/ui/markdown_text.js's ``displayMarkdown`` is the same)."""
    parts: list[str] = []
    after_label = False
    for kind, text, *extra in display:
        if kind == "label":
            parts.append(f"**{escape_prose(text)}**")
        else:
            parts.append(_block(kind, text, extra, after_label))
        after_label = kind == "label"
    return "\n\n".join(p for p in parts if collapse(p))


def _card_first(records: list[dict]) -> list[Display]:
    """The displays of a page's chunks, an object card's signature moved to its top: a
    card says ``class X`` and its summary, the chunk after it starts with the signature."""
    displays = [[list(b) for b in (r.get("display") or [])] for r in records]
    for i, r in enumerate(records[:-1]):
        this, after = displays[i], displays[i + 1]
        if r.get("members") and this and this[0][0] == "term" and after and after[0][0] == "term":
            displays[i] = [after[0]] + this[1:]
            displays[i + 1] = after[1:]
    return displays


def page_markdown(records: list[dict]) -> str:
    """The Markdown twin of one page from its chunk records in page order: each heading of
    a chunk's path that differs from the chunk before it, then the chunk's blocks (a lead
    repeated from the chunk before dropped, a numpydoc section's label once per run)."""
    return "\n\n".join(_page_blocks(records)) + "\n"


def _page_blocks(records: list[dict]) -> list[str]:
    """``page_markdown``'s blocks (llms-full.txt may be cut between two of them)."""
    out: list[str] = []
    path: list[str] = []
    label = None
    for record, display in zip(records, _card_first(records)):
        headings = list(record.get("headings") or [])
        same_section = headings == path
        common = 0
        while common < min(len(headings), len(path)) and headings[common] == path[common]:
            common += 1
        for level in range(common, len(headings)):
            if headings[level]:
                out.append(atx_heading(level + 1, headings[level]))
        if not same_section:
            label = None
        path = headings
        after_label = False
        for kind, text, *extra in display:
            if kind == "lead" and same_section:
                continue
            if kind == "label":
                if text != label:
                    out.append(atx_heading(len([h for h in headings if h]) + 1, text))
                label = text
                after_label = True
                continue
            out.append(_block("p" if kind == "lead" else kind, text, extra, after_label))
            after_label = False
    return [p for p in out if p.strip()]


# -- llms.txt and llms-full.txt --------------------------------------------------------------

def _one_line(text: str, limit: int) -> str:
    """``text`` on one line, cut after a sentence or a word to about ``limit`` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[:limit]
    stop = head.rfind(". ")
    if stop >= limit // 2:
        return head[:stop + 1]
    return head[:max(head.rfind(" "), limit // 2)].rstrip(" ,;:") + " …"


def _first_paragraph(records: list[dict]) -> str:
    for r in records:
        for kind, text, *_ in r.get("display") or []:
            if kind == "p" and text.strip():
                return text
    return ""


def _link_text(text: str) -> str:
    """A link's text: brackets become parentheses (llms.txt readers take the title up to
    the first ``]``), the rest escaped as any line."""
    return escape_line(text.replace("[", "(").replace("]", ")"))


def _title(site: LlmsSite) -> str:
    return atx_heading(1, site.project) if site.project.strip() else "# Documentation"


def _href(base_url: str, name: str) -> str:
    url = quote(name, safe="/:#%@!$&'*+,;=~-._")
    return f"{base_url.rstrip('/')}/{url}" if base_url else url


@dataclass
class _Page:
    twin: str
    title: str
    description: str
    docs: list[str]


def site_files(records: list[dict], site: LlmsSite) -> tuple[dict[str, bytes], list[list]]:
    """Every file for agents: ``{name relative to the site root: bytes}`` (the twins,
    llms.txt, llms-full.txt), and the pages ``[[doc, url, twin, first chunk, chunks]]`` in
    index order (``records`` is the index's chunk records, in index order; a page with a
    doctree twin and no chunk has 0 chunks)."""
    made = site.twins or {}
    by_doc: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_doc.setdefault(r["doc"], []).append(i)
    record_docs = [r["doc"] for r in records]
    first = {doc: at[0] for doc, at in by_doc.items()} | {
        doc: bisect.bisect_right(record_docs, doc) for doc in made.keys() - by_doc.keys()}  # records by document
    docs = sorted(first, key=lambda d: (first[d], d))
    pages: list[list] = []
    twins: dict[str, _Page] = {}
    sources: dict[str, list[tuple[str, object]]] = {}  # twin name -> its documents' twins or records
    for doc in docs:
        at = by_doc.get(doc, [])
        recs = [records[i] for i in at]
        twin = made.get(doc)
        url = twin.url if twin is not None else recs[0]["url"].partition("#")[0]
        name = twin_name(url)
        pages.append([doc, url, name, first[doc], len(at)])
        sources.setdefault(name, []).append((doc, twin if twin is not None else recs))
        if name not in twins:
            title = next((h for h in (recs[0].get("headings") or [] if recs else []) if h), "")
            description = _first_paragraph(recs) or (twin.description if twin is not None else "")
            twins[name] = _Page(name, title or (twin.title if twin is not None else "") or doc,
                                _one_line(description, DESCRIPTION_CHARS), [doc])
        else:
            twins[name].docs.append(doc)
    names = set(sources)
    blocks: dict[str, list[str]] = {}
    full_blocks: dict[str, list[str]] = {}
    for name, parts in sources.items():
        # a file several documents share (singlehtml): the doctree twins when any has one
        # (the one page's doctree holds them all), else every document's chunks
        doctree_made = [p for _, p in parts if not isinstance(p, list)]
        root = [p for doc, p in parts if doc == site.root and not isinstance(p, list)]
        if len(parts) > 1 and root:  # singlehtml: the root's doctree is every page, assembled
            doctree_made = root
        if doctree_made:
            blocks[name] = [b for t in doctree_made for b in resolve(t, name, names)]
            full_blocks[name] = [b for t in doctree_made for b in resolve(t, "", names, site.base_url)]
        else:
            blocks[name] = full_blocks[name] = [b for _, recs in parts for b in _page_blocks(recs)]
    files = {name: _utf8("\n\n".join(parts) + "\n") for name, parts in blocks.items()}
    doc_twin = {p[0]: p[2] for p in pages}
    listed = _sections(site, doc_twin, twins)
    summary = site.summary or _first_paragraph([records[i] for i in by_doc.get(site.root, [])]) or (
        made[site.root].description if site.root in made else "") or site.project
    files[LLMS_TXT] = _utf8(llms_txt(site, _one_line(summary, SUMMARY_CHARS), listed))
    order = [p for _, section in listed for p in section]
    files[LLMS_FULL_TXT] = _utf8(_llms_full(site, [(p, full_blocks[p.twin]) for p in order]))
    return files, pages


def _utf8(text: str) -> bytes:
    return valid_text(text).encode("utf-8")


def _sections(site: LlmsSite, doc_twin: dict[str, str], twins: dict[str, _Page]) -> list[tuple[str, list[_Page]]]:
    """The llms.txt sections: the root page first, then each caption of the root toctree
    with its pages, then "Optional": indexed pages no captioned toctree reaches (orphans,
    or a root toctree without a caption: then its pages are "Docs")."""
    seen: set[str] = set()

    def take(docs) -> list[_Page]:
        out = []
        for doc in docs:
            name = doc_twin.get(doc)
            if name is not None and name not in seen:
                seen.add(name)
                out.append(twins[name])
        return out

    out = []
    first = take([site.root])
    for caption, docs in site.sections:
        pages = take(docs)
        if first:  # the root page opens the first section
            pages, first = first + pages, []
        if pages:
            out.append((caption or "Docs", pages))
    rest = take(sorted(doc_twin))
    if first or rest:
        out.append(("Docs" if not out else "Optional", first + rest))
    return out


def llms_txt(site: LlmsSite, summary: str, sections: list[tuple[str, list[_Page]]]) -> str:
    """llms.txt (llmstxt.org): H1 project, a one-line blockquote summary, a paragraph on the
    files, then an H2 per section, a ``- [title](url): description`` line per page."""
    lines = [_title(site), "", f"> {escape_line(summary)}", ""]
    full = _href(site.base_url, LLMS_FULL_TXT)
    lines += [f"Each link below is a page of this documentation as Markdown (its HTML URL with .md appended). "
              f"[{LLMS_FULL_TXT}]({full}) has every page in one file. Agents can also search this site "
              "without reading it all: `sphinx-rag mcp <this site's URL>` serves its static search index "
              "to any MCP client.", ""]
    lines += [*site.notes, *([""] if site.notes else [])]
    for caption, pages in sections:
        lines += [atx_heading(2, caption), ""]
        for page in pages:
            link = f"- [{_link_text(page.title)}]({_href(site.base_url, page.twin)})"
            lines.append(f"{link}: {escape_line(page.description)}" if page.description else link)
        lines.append("")
    return "\n".join(lines)


def _llms_full(site: LlmsSite, pages: list[tuple[_Page, list[str]]]) -> str:
    """Every twin in llms.txt's order; over ``site.full_bytes`` (UTF-8, this note included),
    cut between two blocks of a page, then one line that says what is left out."""
    head = _title(site) + "\n\n"
    units: list[tuple[int, str]] = []  # (page number, text): the file is head + every unit
    for n, (_page, blocks) in enumerate(pages):
        for j, block in enumerate(blocks):
            before = "\n\n" if j else "\n" if units else ""  # pages apart by a blank line, as in the twins
            units.append((n, before + block + ("\n" if j == len(blocks) - 1 else "")))
    whole = head + "".join(text for _, text in units)
    cap = site.full_bytes
    if not cap or len(whole.encode("utf-8")) <= cap:
        return whole

    def before(taken: int) -> str:
        """What a note needs before it: a blank line after the text so far."""
        return "" if not taken else "\n" if units[taken - 1][1].endswith("\n") else "\n\n"

    def note(taken: int) -> str:
        """The note after the first ``taken`` units: what is left out."""
        cut_in = 0 < taken < len(units) and units[taken - 1][0] == units[taken][0]
        whole_pages = len(pages) - (units[taken][0] + cut_in if taken < len(units) else len(pages))
        left = [f"the rest of {pages[units[taken][0]][0].twin}"] if cut_in else []
        if whole_pages:
            left.append(f"{whole_pages} {'page' if whole_pages == 1 else 'pages'}")
        line = (f"> {LLMS_FULL_TXT} is cut here to stay within {cap:,} bytes (sphinx_rag_llms_full_bytes); "
                f"not included: {escape_line(' and '.join(left))}. {LLMS_TXT} lists every page, each as its own "
                "Markdown file.")
        return before(taken) + line + "\n"

    def short(taken: int) -> str:
        return before(taken) + f"> {LLMS_FULL_TXT} is cut here; see {LLMS_TXT}.\n"

    def fill(ending) -> tuple[str, int] | None:
        """The head, as many units as fit with the note they leave, that note (None: the
        head and the note alone are over the cap)."""
        parts, size, taken = [head], len(head.encode("utf-8")), 0
        for _n, unit in units:
            grown = size + len(unit.encode("utf-8"))
            if grown + len(ending(taken + 1).encode("utf-8")) > cap:
                break
            parts.append(unit)
            size, taken = grown, taken + 1
        end = ending(taken)
        return ("".join(parts) + end, taken) if size + len(end.encode("utf-8")) <= cap else None

    full = fill(note)
    if full is not None and full[1]:
        return full[0]
    brief = fill(short)
    if brief is not None and (brief[1] or full is None):
        return brief[0]
    if full is not None:
        return full[0]
    return f"> {LLMS_FULL_TXT} is cut here; see {LLMS_TXT}.\n"[:cap]  # ASCII: a byte a character


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]
