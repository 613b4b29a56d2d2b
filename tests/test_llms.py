"""Files for coding agents (markdown.py, twins.py): llms.txt in the llmstxt.org format, a
Markdown twin of every indexed page made from its doctree (autosummary tables and toctrees
as links to other twins, inline code, admonitions, lists, tables, math), llms-full.txt under its cap;
written in the index's publish, the same bytes on every build, kept by a build that
changes nothing, removed when switched off or when a page leaves the index."""

from __future__ import annotations

import html
import json
import posixpath
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from llms_txt import parse_llms_file
from markdown_it import MarkdownIt

from site_helpers import build_site, chunks_of, manifest_of
from sphinx_rag.search.index import ASSET_DIR
from sphinx_rag.agents.markdown import LlmsSite, _llms_full, _Page, display_markdown, page_markdown, twin_name

ROOT = Path(__file__).parent / "roots" / "test-llms"
HOSTILE = Path(__file__).parent / "roots" / "test-llms-hostile"
AGENT_FILES = ("llms.txt", "llms-full.txt", "index.html.md", "tutorials/first.html.md", "tutorials/layout.html.md",
               "api.html.md")
# llmstxt.org: "- [name](url)" then optionally ": notes"
_LINK_LINE = re.compile(r"- \[[^\]\n]+\]\([^)\s]+\)(: [^\n]+)?")


def _build(out: Path, *options: str, fresh: bool = True) -> Path:
    return build_site(ROOT, out, "-d", str(out.parent / f"{out.name}-doctrees"), *options, fresh=fresh)


def check_llms_txt(text: str) -> dict:
    """A strict reading of the llmstxt.org format: an H1, then a one-line blockquote, then
    paragraphs without headings, then H2 sections holding nothing but link lines; and
    the ``llms-txt`` package's own parser agrees."""
    lines = text.split("\n")
    assert re.fullmatch(r"# \S.*", lines[0]), lines[0]
    rest = [x for x in lines[1:] if x.strip()]
    assert rest[0].startswith("> ") and rest[0][2:].strip()
    assert not any(x.startswith("# ") for x in lines[1:]), "one H1 only"
    head, *sections = re.split(r"^## ", text, flags=re.M)
    assert not re.search(r"^#{3,} ", text, re.M)
    assert sections, "at least one section of links"
    for section in sections:
        name, _, body = section.partition("\n")
        assert name.strip()
        for line in body.strip().split("\n"):
            assert _LINK_LINE.fullmatch(line), line
    parsed = parse_llms_file(text)
    assert parsed.title == lines[0][2:]
    return parsed


def test_agent_files_of_a_build(tmp_path):
    out = _build(tmp_path / "html")
    parsed = check_llms_txt((out / "llms.txt").read_text(encoding="utf-8"))
    assert parsed.summary == "Widgets makes small widgets out of plain Python objects."  # html_theme_options
    assert list(parsed.sections) == ["Tutorials", "Reference"]  # the root toctree's captions
    tutorials = parsed.sections["Tutorials"]
    assert [x["url"] for x in tutorials] == ["index.html.md", "tutorials/first.html.md", "tutorials/layout.html.md"]
    assert tutorials[1] == {"title": "Your first widget", "url": "tutorials/first.html.md",
                            "desc": "Install the package, then make a widget from any object."}
    assert [x["url"] for x in parsed.sections["Reference"]] == ["api.html.md"]  # drafts/* is excluded
    for name in AGENT_FILES:
        assert (out / name).is_file(), name
    assert (out / "drafts" / "ideas.html").is_file() and not (out / "drafts" / "ideas.html.md").exists()
    alternate = '<link rel="alternate" type="text/markdown" href="first.html.md" title="This page as Markdown" />'
    assert alternate in (out / "tutorials" / "first.html").read_text(encoding="utf-8")  # each page names its twin
    assert 'type="text/markdown"' not in (out / "drafts" / "ideas.html").read_text(encoding="utf-8")
    assert 'type="text/markdown"' not in (out / "genindex.html").read_text(encoding="utf-8")

    first = (out / "tutorials" / "first.html.md").read_text(encoding="utf-8")
    assert first.startswith("# Your first widget\n\nInstall the package")
    assert "```bash\npip install widgets\n```" in first  # code fenced with its language
    assert "## Making one\n\nCall `make_widget` with the object to show:\n\n```python\nfrom widgets import" in first
    layout = (out / "tutorials" / "layout.html.md").read_text(encoding="utf-8")
    assert "```pycon\n>>> from widgets import Row\n>>> Row([1, 2])\nRow(2 widgets)\n```" in layout
    api = (out / "api.html.md").read_text(encoding="utf-8")
    assert "## make_widget\n\n```python\nmake_widget(obj, title=None, width=80)\n```\n\nMake a widget that shows `obj`." \
        in api  # the object's name, its signature, then its text
    assert "**Parameters:**\n\n- **obj** – the object to show.\n- **title** – " in api
    assert "- **width** (*int*) – the width in characters." in api and "**Returns:** the new widget." in api
    index = (out / "index.html.md").read_text(encoding="utf-8")
    assert index.endswith("**Tutorials**\n\n- [Your first widget](tutorials/first.html.md)\n- [Layout](tutorials/layout.html.md)"
                          "\n\n**Reference**\n\n- [API reference](api.html.md)\n")  # drafts/ideas has no twin: left out

    full = (out / "llms-full.txt").read_text(encoding="utf-8")
    assert full.startswith("# Widgets\n")
    positions = [full.index((out / x["url"]).read_text(encoding="utf-8")) for x in tutorials]
    assert positions == sorted(positions)  # every page whole, in llms.txt's order
    assert "holographic" not in full
    listing = manifest_of(out)["llms"]
    pages = json.loads((out / ASSET_DIR / listing["pages"]).read_bytes())
    assert sorted(pages["files"]) == sorted(AGENT_FILES)
    assert all(pages["files"][n][0] == (out / n).stat().st_size for n in AGENT_FILES)
    assert [p[2] for p in pages["pages"]] == ["api.html.md", "index.html.md", "tutorials/first.html.md",
                                              "tutorials/layout.html.md"]  # index order: by document


@pytest.mark.slow
def test_agent_files_follow_the_builds(tmp_path):
    a, b = _build(tmp_path / "a"), _build(tmp_path / "b")
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in AGENT_FILES)  # deterministic bytes
    # a build that changes nothing keeps the index, and puts back an agents' file that went missing
    (a / "tutorials" / "first.html.md").unlink()
    _build(a, fresh=False)
    assert (a / "tutorials" / "first.html.md").read_bytes() == (b / "tutorials" / "first.html.md").read_bytes()
    # switched off: every agents' file goes, the pages and the index stay
    _build(a, "-D", "sphinx_rag_llms_txt=0", fresh=False)
    assert not any((a / n).exists() for n in AGENT_FILES)
    assert (a / "tutorials" / "first.html").is_file() and manifest_of(a)["llms"] is None
    # on again, with a cap: pages, then whole blocks of the next, until the note that says where it is cut
    _build(a, "-D", "sphinx_rag_llms_full_bytes=700", fresh=False)
    full = (a / "llms-full.txt").read_text(encoding="utf-8")
    assert len(full.encode()) <= 700 and "llms-full.txt is cut here" in full and "not included: " in full
    assert (a / "index.html.md").is_file()


def test_an_incremental_build_keeps_the_twins_of_the_pages_it_does_not_write(tmp_path):
    """The twins are made from the doctrees of the pages written: a one-page edit keeps the
    others' twins (kept in the doctree directory), and without that file they are made
    again from their doctrees, never from the chunks (which hold no toctree)."""
    src = tmp_path / "src"
    shutil.copytree(ROOT, src)
    out, doctrees = tmp_path / "html", tmp_path / "doctrees"
    build_site(src, out, "-d", str(doctrees))
    index = (out / "index.html.md").read_text(encoding="utf-8")
    assert "- [Layout](tutorials/layout.html.md)" in index
    (src / "tutorials" / "first.rst").write_text((src / "tutorials" / "first.rst").read_text() + "\nAn ``added`` line.\n")
    build_site(src, out, "-d", str(doctrees), fresh=False)
    assert "An `added` line." in (out / "tutorials" / "first.html.md").read_text(encoding="utf-8")
    assert (out / "index.html.md").read_text(encoding="utf-8") == index  # not written: its kept twin
    (doctrees / "sphinx_rag_twins.json").unlink()
    (src / "tutorials" / "layout.rst").write_text((src / "tutorials" / "layout.rst").read_text() + "\nMore.\n")
    build_site(src, out, "-d", str(doctrees), fresh=False)
    assert (out / "index.html.md").read_text(encoding="utf-8") == index  # made again from its doctree
    assert (out / "tutorials" / "layout.html.md").read_text(encoding="utf-8").endswith("More.\n")
    assert (doctrees / "sphinx_rag_twins.json").is_file()


def test_dirhtml_twins_sit_beside_index_html(tmp_path):
    out = _build(tmp_path / "dir", "-b", "dirhtml")
    parsed = check_llms_txt((out / "llms.txt").read_text(encoding="utf-8"))
    urls = [x["url"] for s in parsed.sections.values() for x in s]
    assert urls == ["index.html.md", "tutorials/first/index.html.md", "tutorials/layout/index.html.md",
                    "api/index.html.md"]
    assert all((out / u).is_file() and (out / u[:-3]).is_file() for u in urls)  # beside the page's index.html


def test_markdown_escapes_what_would_change_the_structure():
    record = {"headings": ["# Title"], "display": [["p", "# not a heading\n> not a quote\n<b>no tag</b>\n- a list"],
                                                      ["code", "x = '```'", "python"]]}
    text = page_markdown([record])
    assert text.startswith("# \\# Title\n")
    assert "\\# not a heading\n\\> not a quote\n&lt;b>no tag&lt;/b>\n- a list" in text
    assert "````python\nx = '```'\n````" in text  # a fence longer than the code's backticks
    assert display_markdown([["term", "f(a=`x`)"]]) == "```python\nf(a=`x`)\n```"
    assert display_markdown([["label", "Parameters"], ["term", "a : `int`"]]) == "**Parameters**\n\n`` a : `int` ``"


def test_twin_names():
    assert twin_name("guide.html#x") == "guide.html.md"
    assert twin_name("guide/") == "guide/index.html.md" and twin_name("") == "index.html.md"
    assert twin_name("index.html#document-guide") == "index.html.md"  # singlehtml: one file, one twin


# -- page text is text: hostile pages (issue 35) ----------------------------------------------

class _Tags(HTMLParser):
    """Every element of rendered HTML, with its attributes, and the text shown."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def rendered(markdown: str) -> _Tags:
    """``markdown`` as a CommonMark renderer shows it (raw HTML allowed, as GitHub and most
    viewers of .md and llms.txt files render it)."""
    parser = _Tags()
    parser.feed(MarkdownIt("commonmark").render(markdown))
    parser.close()
    return parser


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hostile") / "html"
    return build_site(HOSTILE, out, "-d", str(out.parent / "doctrees"))


def test_page_text_and_the_project_name_are_text_in_every_agent_file(hostile_html):
    """``<script>``, an image, an autolink or a link written in a page's text, a title, a
    caption, a table, a term, a field, math or the project's name is shown as written by a
    Markdown renderer, never made HTML, an image or a link; code stays verbatim; the only
    links are those made here (llms.txt's, and a toctree's or a reference's Sphinx made to
    another page's twin: never to a page left out, nor to a URL written in the text)."""
    out = hostile_html
    files = {name: (out / name).read_text(encoding="utf-8")
             for name in ("llms.txt", "llms-full.txt", "index.html.md", "guide.html.md")}
    for name, text in files.items():
        html = rendered(text)
        tags = {tag for tag, _ in html.tags}
        assert not tags & {"script", "img", "b", "i", "u"}, (name, tags)
        hrefs = [attrs.get("href", "") for tag, attrs in html.tags if tag == "a"]
        assert all(h in ("llms-full.txt", "index.html.md", "guide.html.md") for h in hrefs), (name, hrefs)
        shown = "".join(html.text)
        if name != "guide.html.md":
            assert "<script>alert(" in shown and "&lt;b&gt;" in shown  # shown as written, an entity too
        if name in ("index.html.md", "llms-full.txt"):
            assert "![pixel](https://evil.example/track.png)" in shown and "[click](javascript:alert(1))" in shown
            assert "<https://evil.example/auto>" in shown and "\\[x](https://evil.example/bs)" in shown
        if name in ("guide.html.md", "llms-full.txt"):
            for written in ("Careful <img src=x onerror=alert(1)> [t](https://evil.example/adm)", "Name <b>",
                            "Table <u>title</u>",
                            "[cell](https://evil.example/cell)", "Term <script>x</script>",
                            "Definition with ![img](https://evil.example/def.png).",
                            "Field [f](https://evil.example/field): value <i>", "<script>alert(1)</script>"):
                assert written in shown, (name, written)
            assert "stay text: click, elsewhere, https://evil.example/bare, and one to a page left out of search, " \
                   "the page left out." in shown
        outside_code = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", text, flags=re.M | re.S)
        outside_code = re.sub(r"(`+)[^`].*?\1", "", outside_code)
        assert "<script" not in outside_code and "](" not in outside_code.replace("](llms-full.txt)", "").replace(
            "](index.html.md)", "").replace("](guide.html.md)", "")
    assert "- [The \\[guide\\]\\(https://evil.example/guide-title)](guide.html.md)" in files["index.html.md"]
    assert "hidden" not in files["index.html.md"]  # the toctree's entry of a page left out goes
    assert "```html\n<script>alert(\"code\")</script>\n![kept](https://example.org/kept.png)\n```" \
        in files["index.html.md"]  # code verbatim in its fence
    assert "```python\nmake(x='<b>[a](https://example.org/sig)</b>', y='`')\n```" in files["guide.html.md"]
    assert rendered(files["index.html.md"]).tags[0][0] == "h1"
    parsed = check_llms_txt(files["llms.txt"])  # the llmstxt.org format still holds, and its parser agrees
    assert [x["url"] for x in parsed.sections[next(iter(parsed.sections))]] == ["index.html.md", "guide.html.md"]
    assert rendered(files["llms.txt"]).text[0] == \
        "Gadgets <script>alert('name')</script> [home](https://evil.example/name)"  # the project, as written


def test_a_nosearch_page_is_in_no_index_and_no_agent_file(hostile_html):
    """``:nosearch:`` keeps a page out of Sphinx's search: out of sphinx-rag's index and
    out of llms.txt, llms-full.txt and the twins too (the page itself is still built)."""
    out = hostile_html
    assert (out / "hidden.html").is_file() and "quokkaword" in (out / "hidden.html").read_text(encoding="utf-8")
    records = chunks_of(out)
    assert records and not [r for r in records if r["doc"] == "hidden" or "quokkaword" in r["text"]]
    assert not (out / "hidden.html.md").exists()
    for name in ("llms.txt", "llms-full.txt"):
        text = (out / name).read_text(encoding="utf-8")
        assert "quokkaword" not in text and "hidden.html" not in text and "Hidden page" not in text
    listing = json.loads((out / ASSET_DIR / manifest_of(out)["llms"]["pages"]).read_bytes())
    assert [p[0] for p in listing["pages"]] == ["guide", "index"]


def test_llms_full_holds_its_cap_in_bytes(tmp_path):
    """The cap is a hard limit on the file's UTF-8 bytes, its note included; the file is cut
    between whole blocks (never inside a code fence) and says what is left out."""
    out = build_site(HOSTILE, tmp_path / "html", "-d", str(tmp_path / "doctrees"), "-D", "sphinx_rag_llms_full_bytes=120")
    full = (out / "llms-full.txt").read_bytes()
    assert len(full) <= 120 and b"is cut here" in full
    build_site(HOSTILE, out, "-d", str(tmp_path / "doctrees"), "-D", "sphinx_rag_llms_full_bytes=800", fresh=False)
    full = (out / "llms-full.txt").read_text(encoding="utf-8")
    assert len(full.encode("utf-8")) <= 800 and full.count("```") % 2 == 0
    assert "not included: the rest of index.html.md and 1 page." in full  # cut inside the first page

    blocks = [["# Première", "Des données: é" * 9, "```python\nx = 'ü'\n\n```", "Fin " * 30], ["# Zwei", "ß" * 99],
              ["# Drei", "Ein Satz. " * 30]]
    pages = [(_Page(f"p{n}.html.md", "", "", []), b) for n, b in enumerate(blocks)]
    whole = _llms_full(LlmsSite(project="Projét"), pages)
    size = len(whole.encode("utf-8"))
    notes = set()
    for cap in range(1, size + 20):
        text = _llms_full(LlmsSite(project="Projét", full_bytes=cap), pages)
        assert len(text.encode("utf-8")) <= cap, cap
        if cap >= size:
            assert text == whole
        elif not text.startswith("#"):  # the cap is under the title and the shortest note: the note, cut
            assert text == "> llms-full.txt is cut here; see llms.txt.\n"[:cap], cap
        else:
            body, _, note = text.rstrip("\n").rpartition("\n")
            assert note.startswith("> llms-full.txt is cut here"), cap  # one line, the last
            assert whole.startswith(body) and whole[len(body)] == "\n", cap  # the file up to a block's end
            assert body.count("```") in (0, 2), cap
            notes.add(note.partition("not included: ")[2].partition(". llms.txt")[0])
    assert notes >= {"the rest of p0.html.md and 2 pages", "the rest of p1.html.md and 1 page", "1 page"}


def test_a_page_with_a_lone_surrogate_builds(tmp_path):
    """Plain Sphinx builds a page whose doctree holds a lone surrogate (its HTML writer
    escapes it); so does sphinx-rag, with U+FFFD in the chunks and the agents' files."""
    src = tmp_path / "src"
    shutil.copytree(HOSTILE, src)
    (src / "guide.rst").write_text((src / "guide.rst").read_text() + "\nA lone |s| in the text.\n\n"
                                   ".. |s| unicode:: U+D800\n", encoding="utf-8")
    out = build_site(src, tmp_path / "html", "-d", str(tmp_path / "doctrees"))
    assert any("A lone \ufffd in the text." in r["text"] for r in chunks_of(out))
    assert "A lone \ufffd in the text." in (out / "guide.html.md").read_text(encoding="utf-8")
    assert "A lone \ufffd in the text." in (out / "llms-full.txt").read_text(encoding="utf-8")


# -- one escaping of page text for every agent (issue 42, items 4-6 and 9; issue 44, item 2) --

#: A CommonMark renderer with GitHub's strikethrough and tables (raw HTML allowed, as viewers
#: of .md files render it).
_RENDERER = MarkdownIt("commonmark").enable(["strikethrough", "table"])
#: What the agents' Markdown itself makes; page text adds none (no raw HTML, no emphasis,
#: no link, no image).
_STRUCTURE = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "blockquote", "strong", "em",
              "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "a"}


def shown_as_text(markdown: str, *, allowed: set[str] = _STRUCTURE, hrefs: tuple[str, ...] = ()) -> str:
    """``markdown`` rendered: only the elements in ``allowed``, links only to ``hrefs`` (and
    never an image, another host or ``javascript:``); returns the text shown."""
    parser = _Tags()
    parser.feed(_RENDERER.render(markdown))
    parser.close()
    tags = [tag for tag, _ in parser.tags]
    assert set(tags) <= allowed, (sorted(set(tags) - allowed), markdown[:300])
    links = [attrs.get("href", "") for tag, attrs in parser.tags if tag == "a"]
    assert all(h in hrefs for h in links), (links, markdown[:300])
    return "".join(parser.text)


def _plain(text: str) -> str:
    from sphinx_rag.agents.markdown_text import collapse
    from sphinx_rag.chunk import valid_text

    return collapse(valid_text(text).replace("\x00", "\ufffd"))  # CommonMark shows NUL as U+FFFD


def test_the_escaping_js_shares_is_current_and_renders_page_text_as_text():
    """tests/fixtures/agent_markdown.json (what js/src/ui/markdown_text.js must give for WebMCP,
    js/test/markdown_text.test.js) is what Python's escaping gives today; rendered by a
    CommonMark renderer, every hostile string (tags, links, images, autolinks, entities,
    comments, API names with underscores and asterisks) shows as written and makes nothing
    but the element its function makes; code keeps its text in a fence longer than its
    backtick runs; a URL makes no link, tag or comment end."""
    sys.path.insert(0, str(Path(__file__).parent / "fixtures"))
    import generate

    fixture_path = Path(__file__).parent / "fixtures" / "agent_markdown.json"
    assert fixture_path.read_text(encoding="utf-8") == generate.dumps(generate.agent_markdown_fixture()), (
        "tests/fixtures/agent_markdown.json is stale: python tests/fixtures/generate.py demo_docs/_build/html")
    fixture = json.loads(fixture_path.read_text(encoding="utf-8"))
    for case in fixture["texts"]:
        text, plain = case["text"], _plain(case["text"])
        assert shown_as_text("x " + case["line"], allowed={"p"}).strip() == ("x " + plain).strip(), case
        if "\n" not in text and "\r" not in text:
            assert _plain(shown_as_text("x " + case["inline"], allowed={"p"})) == ("x " + plain).strip(), case
        assert shown_as_text(case["heading"], allowed={"h2"}).strip() == plain, case
        if plain:
            assert shown_as_text("x " + case["code_span"], allowed={"p", "code"}).strip() == "x " + plain, case
        code = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
        assert shown_as_text(case["code_fence"], allowed={"pre", "code"}) == code + "\n\n", case  # the HTML's own \n last
        shown = shown_as_text(case["prose"], allowed={"p", "ul", "ol", "li", "pre", "code"})
        if not re.search(r"(^|\n)[ \t]*(-|[0-9]+[.)])([ \t]|$)", text) and not text.startswith("    "):
            assert " ".join(shown.split()) == " ".join(_plain(text).split()), case
    for case in fixture["displays"]:
        shown_as_text(case["markdown"], allowed={"p", "ul", "ol", "li", "pre", "code", "strong"})
    for case in fixture["urls"]:  # an agent passes a URL back as it reads it: its _, * and ~ stay (__init__ may show bold)
        shown = shown_as_text("URL: " + case["markdown"], allowed={"p", "em", "strong", "s"})
        if not re.search(r"[_*~]", case["markdown"]):
            assert shown.strip() == ("URL: " + html.unescape(case["markdown"])).strip(), case
        assert shown_as_text(f"<!-- {case['markdown']} (site: x) -->\n\nafter", allowed={"p"}).strip() == "after"
    for name in ("cross_val_score", "snake_case_Name_2"):  # a name of letters, digits and _: as written
        assert next(c["inline"] for c in fixture["texts"] if c["text"] == name) == name


def test_text_split_across_nodes_makes_no_autolink(hostile_html):
    """``<http://tracker.invalid/x>`` written in a page: docutils makes the URL a reference
    node between two text nodes; the ``<`` is escaped on its own (issue 42, item 6)."""
    for name in ("guide.html.md", "llms-full.txt"):
        text = (hostile_html / name).read_text(encoding="utf-8")
        shown = shown_as_text(text, hrefs=("index.html.md", "guide.html.md"))
        assert "<http://tracker.invalid/x> and <javascript:alert(11)> and &lt; and x!Gadgets <script>" in " ".join(
            shown.split())  # an entity's & and an image's ! before a link made here: escaped too


ESCAPES = Path(__file__).parent / "roots" / "test-llms-escapes"


@pytest.fixture(scope="module")
def escapes_html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("escapes") / "html"
    return build_site(ESCAPES, out, "-d", str(out.parent / "doctrees"))


def _page_text(html_file: Path) -> str:
    from bs4 import BeautifulSoup

    body = BeautifulSoup(html_file.read_text(encoding="utf-8"), "html.parser").find(attrs={"role": "main"})
    return " ".join(body.get_text().split())


def check_no_broken_characters(html_dir: Path) -> int:
    """Every twin, llms.txt and llms-full.txt of a site: no U+FFFD, no NUL; returns how many."""
    files = sorted(html_dir.rglob("*.html.md")) + [html_dir / "llms.txt", html_dir / "llms-full.txt"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for bad in ("\ufffd", "\x00"):
            assert bad not in text, (path.relative_to(html_dir).as_posix(), repr(bad),
                                     [line for line in text.splitlines() if bad in line][:3])
    return len(files)


def test_backslash_escapes_read_as_the_page_shows_them(escapes_html):
    """docutils keeps ``cross\\_val\\_score`` in a text node as NUL + each escaped character:
    the twins and llms-full.txt read text as docutils does (no U+FFFD, no NUL), and a
    renderer shows each name as the HTML page does: in a title, in prose, in napoleon's and
    a field list's ``**kwargs``."""
    out = escapes_html
    assert check_no_broken_characters(out) == 4
    index, plugins = (out / "index.html.md").read_text(encoding="utf-8"), (out / "plugins.html.md").read_text(
        encoding="utf-8")
    assert index.startswith("# Escapes: cross_val_score and \\*\\*kwargs\n")
    assert plugins.startswith("# imageio.plugins.pillow_legacy\n")
    pages = {"index": (_page_text(out / "index.html"), " ".join(shown_as_text(index, hrefs=("plugins.html.md",)).split())),
             "plugins": (_page_text(out / "plugins.html"), " ".join(shown_as_text(plugins).split()))}
    written = {"index": ["Escapes: cross_val_score and **kwargs", "The function cross_val_score takes *args and **kwargs;",
                         "__init__ keeps them.", "C:\\data\\x, a lone backslash \\ and an escaped star * stay",
                         "joins crossvalscore."],
               "plugins": ["imageio.plugins.pillow_legacy", "The plugin pillow_legacy reads old images; its field list "
                           "names **kwargs.", "*args", "**kwargs", "passed to fit; __init__ keeps them."]}
    for page, (html_text, shown) in pages.items():
        for words in written[page]:
            assert words in html_text, (page, words)  # the HTML page shows it so
            assert words in shown, (page, words, shown)  # and so does its twin, rendered
    full = " ".join(shown_as_text((out / "llms-full.txt").read_text(encoding="utf-8"),
                                  hrefs=("plugins.html.md",)).split())
    assert all(words in full for page in written.values() for words in page)


def test_the_demos_agent_files_have_no_broken_characters(demo_html):
    """The demo's twins (14 of its 28 API twins carried U+FFFD in their heading) and
    llms-full.txt: no U+FFFD, no NUL (issue 42, item 9; issue 44, item 2); each API twin's
    title, rendered, is its HTML page's (``mlkit.base.BaseEstimator.set_params``), and a
    ``**params`` parameter reads ``**params``."""
    from bs4 import BeautifulSoup

    assert check_no_broken_characters(demo_html) >= 30
    api = sorted((demo_html / "api" / "generated").glob("*.html.md"))
    assert len(api) >= 28
    for twin in api:
        h1 = BeautifulSoup(twin.with_suffix("").read_text(encoding="utf-8"), "html.parser").find("h1")
        title = " ".join(h1.get_text().replace("\u00b6", "").replace("#", "").split())
        first = twin.read_text(encoding="utf-8").split("\n", 1)[0]
        assert " ".join(shown_as_text(first, allowed={"h1"}).split()) == title, (twin.name, first, title)
    base = (demo_html / "api" / "generated" / "mlkit.base.BaseEstimator.html.md").read_text(encoding="utf-8")
    dummy = (demo_html / "api" / "generated" / "mlkit.dummy.DummyClassifier.html.md").read_text(encoding="utf-8")
    twin_links = re.compile(r"\]\(([^)\s]+\.html\.md)\)")  # links to other twins, the only ones made
    assert "**params : dict" in shown_as_text(base, hrefs=tuple(twin_links.findall(base)))
    assert "classes_ : ndarray" in shown_as_text(dummy, hrefs=tuple(twin_links.findall(dummy)))


# -- twins that carry the page: autosummary tables and toctrees (issue 37) --------------------

class _Navigation(HTMLParser):
    """The rows of a page's autosummary tables ([target href, summary text]) and the links
    of its toctrees, as its HTML shows them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.toctree: list[str] = []
        self._table = self._wrapper = 0
        self._cell = -1
        self._in_a = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if tag == "table" and "autosummary" in classes:
            self._table += 1
        elif tag == "div" and "toctree-wrapper" in classes:
            self._wrapper += 1
        elif self._wrapper and tag == "div":
            self._wrapper += 1
        elif self._table and tag == "tr":
            self.rows.append(["", ""])
            self._cell = -1
        elif self._table and tag == "td":
            self._cell += 1
        elif tag == "a" and self._table and self._cell == 0 and not self.rows[-1][0]:
            self.rows[-1][0] = attrs.get("href", "")
        elif tag == "a" and self._wrapper and "internal" in classes:
            self.toctree.append(attrs.get("href", ""))

    def handle_endtag(self, tag):
        if tag == "table" and self._table:
            self._table -= 1
        elif tag == "div" and self._wrapper:
            self._wrapper -= 1

    def handle_data(self, data):
        if self._table and self._cell == 1 and self.rows:
            self.rows[-1][1] += data


def _site_path(page: str, href: str) -> str:
    """``href`` on ``page`` as a path from the site root (no fragment)."""
    return unquote(urlsplit(urljoin("https://s.invalid/" + page, href)).path)[1:]


def _twin_links(markdown: str, twin: str) -> dict[str, str]:
    """The links of a twin rendered by a CommonMark renderer: {target from the site root:
    the text of the list item or paragraph that holds it}."""
    out = {}
    tokens = MarkdownIt("commonmark").parse(markdown)
    for token in tokens:
        if token.type != "inline":
            continue
        for child in token.children or []:
            if child.type == "link_open":
                out[posixpath.normpath(posixpath.join(posixpath.dirname(twin), child.attrs["href"]))] = token.content
    return out


def check_twins_carry_navigation(html: Path) -> tuple[int, int]:
    """Every page with a twin: each autosummary row's object is a link to its own twin in the
    twin, on a line with its summary; each toctree link of the HTML page, a link to that
    page's twin. Returns (rows, toctree links) checked."""
    rows = links = 0
    for twin_path in sorted(html.rglob("*.html.md")):
        twin = twin_path.relative_to(html).as_posix()
        page = twin[: -len(".md")]
        nav = _Navigation()
        nav.feed((html / page).read_text(encoding="utf-8"))
        markdown = twin_path.read_text(encoding="utf-8")
        linked = _twin_links(markdown, twin)
        for href, summary in nav.rows:
            target = _site_path(page, href)
            if target == page or not (html / (target + ".md")).is_file():
                continue  # a member on the same page (a class's methods): its name, as text
            assert target + ".md" in linked, (twin, href)
            summary = re.sub(r"\\\((.*?)\\\)", r"$\1$", " ".join(summary.split()))  # MathJax's \(x\) is $x$
            assert summary in " ".join(linked[target + ".md"].split()), (twin, href, summary)
            rows += 1
        for href in nav.toctree:
            target = _site_path(page, href)
            if target != page and (html / (target + ".md")).is_file():
                assert target + ".md" in linked, (twin, href)
                links += 1
    return rows, links


def test_demo_twins_carry_autosummary_tables_and_toctrees(demo_html):
    rows, links = check_twins_carry_navigation(demo_html)
    assert rows >= 28 and links >= 60, (rows, links)
    api = (demo_html / "api.html.md").read_text(encoding="utf-8")
    assert "- [`dummy.DummyClassifier`](api/generated/mlkit.dummy.DummyClassifier.html.md)(\\*\\[, strategy, ...\\]): " \
           "DummyClassifier makes predictions that ignore the input features." in api
    assert "[full user guide](user_guide/index.html.md)" in api  # a reference Sphinx made: a link to the twin
    index = (demo_html / "index.html.md").read_text(encoding="utf-8")
    assert "**Contents**\n\n- [User Guide](user_guide/index.html.md)\n  - [Getting started](user_guide/getting_started" \
           ".html.md)\n" in index  # nested as the HTML's toctree shows it (maxdepth 2: a page's own toctree)
    assert "\n- [API Reference](api.html.md)\n- [Examples](auto_examples/index.html.md)\n" in index
    impute = (demo_html / "user_guide" / "impute.html.md").read_text(encoding="utf-8")
    assert "> **Warning**\n>\n> Dropping empty columns" in impute  # an admonition, labelled
    assert "```math\n\\operatorname{Var}" in impute and "where $m$ is the fraction" in impute  # math
    assert "`keep_empty_features=True`" in impute  # inline code
    cls = (demo_html / "api" / "generated" / "mlkit.dummy.DummyClassifier.html.md").read_text(encoding="utf-8")
    assert cls.startswith("# DummyClassifier\n\n```python\nclass mlkit.dummy.DummyClassifier(*, strategy='prior'")
    assert "**Parameters:**\n\n- **strategy** : {“most_frequent”, " in cls  # a field list, its definition list
    assert "\n## mlkit.dummy.DummyClassifier.fit\n\n```python\nfit(X, y)\n```" in cls  # a method one level down
    assert re.search(r"^### ", cls, re.M) is None and re.search(r"^## ", cls, re.M)
    full = (demo_html / "llms-full.txt").read_text(encoding="utf-8")
    assert "[`dummy.DummyClassifier`](api/generated/mlkit.dummy.DummyClassifier.html.md)" in full  # from the root
    assert "[User Guide](../../user_guide/dummy_estimators.html.md)" not in full
    check_llms_txt((demo_html / "llms.txt").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sklearn_api_html(tmp_path_factory) -> Path:
    """A real API site: scikit-learn's dummy and impute modules through autosummary,
    numpydoc and pydata-sphinx-theme (benchmarks/make_api_corpus.py), keyword-only."""
    pytest.importorskip("sklearn")
    src = tmp_path_factory.mktemp("sklearn-api") / "src"
    proc = subprocess.run([sys.executable, str(Path(__file__).parent.parent / "benchmarks" / "make_api_corpus.py"),
                           str(src), "--modules", "sklearn.dummy,sklearn.impute"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return build_site(src, src / "_build" / "html", "-D", "sphinx_rag_embeddings=0")


def test_api_site_twins_carry_autosummary_tables_and_toctrees(sklearn_api_html):
    html = sklearn_api_html
    rows, links = check_twins_carry_navigation(html)
    assert rows >= 5 and links >= 2, (rows, links)
    impute = (html / "sklearn_impute.html.md").read_text(encoding="utf-8")
    assert "[`SimpleImputer`](generated/sklearn.impute.SimpleImputer.html.md)" in impute
    index = (html / "index.html.md").read_text(encoding="utf-8")
    assert "- [sklearn.dummy](sklearn_dummy.html.md)\n- [sklearn.impute](sklearn_impute.html.md)" in index
    imputer = (html / "generated" / "sklearn.impute.SimpleImputer.html.md").read_text(encoding="utf-8")
    assert "**Parameters:**" in imputer and "- **strategy** : " in imputer
