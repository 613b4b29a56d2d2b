"""Files for coding agents (markdown.py): llms.txt in the llmstxt.org format, a Markdown
twin of every indexed page made from the chunks' displays, llms-full.txt under its cap;
written in the index's publish, the same bytes on every build, kept by a build that
changes nothing, removed when switched off or when a page leaves the index."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from llms_txt import parse_llms_file
from markdown_it import MarkdownIt

from site_helpers import build_site, chunks_of, manifest_of
from sphinx_rag.assets import ASSET_DIR
from sphinx_rag.markdown import LlmsSite, _llms_full, _Page, display_markdown, page_markdown, twin_name

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

    first = (out / "tutorials" / "first.html.md").read_text(encoding="utf-8")
    assert first.startswith("# Your first widget\n\nInstall the package")
    assert "```bash\npip install widgets\n```" in first  # code fenced with its language
    assert "## Making one\n\nCall make_widget with the object to show:\n\n```python\nfrom widgets import" in first
    layout = (out / "tutorials" / "layout.html.md").read_text(encoding="utf-8")
    assert "```pycon\n>>> from widgets import Row\n>>> Row([1, 2])\nRow(2 widgets)\n```" in layout
    api = (out / "api.html.md").read_text(encoding="utf-8")
    assert "## make_widget\n\n```python\nmake_widget(obj, title=None, width=80)\n```\n\nMake a widget that shows obj." \
        in api  # the object card's signature first, then its summary
    assert "### Parameters\n\n`obj`\n\nthe object to show.\n\n`title`" in api and "`width : int`" in api
    assert "### Returns" in api

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
    caption or the project's name is shown as written by a Markdown renderer, never made
    HTML, an image or a link; code stays verbatim; the links llms.txt makes stay links."""
    out = hostile_html
    files = {name: (out / name).read_text(encoding="utf-8")
             for name in ("llms.txt", "llms-full.txt", "index.html.md", "guide.html.md")}
    for name, text in files.items():
        html = rendered(text)
        tags = {tag for tag, _ in html.tags}
        assert not tags & {"script", "img", "b", "a"} - ({"a"} if name == "llms.txt" else set()), (name, tags)
        hrefs = [attrs.get("href", "") for tag, attrs in html.tags if tag == "a"]
        assert all(h in ("llms-full.txt", "index.html.md", "guide.html.md") for h in hrefs), (name, hrefs)
        shown = "".join(html.text)
        if name != "guide.html.md":
            assert "<script>alert(" in shown and "&lt;b&gt;" in shown  # shown as written, an entity too
        if name in ("index.html.md", "llms-full.txt"):
            assert "![pixel](https://evil.example/track.png)" in shown and "[click](javascript:alert(1))" in shown
            assert "<https://evil.example/auto>" in shown and "\\[x](https://evil.example/bs)" in shown
        outside_code = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", text, flags=re.M | re.S)
        assert "<script" not in outside_code and "](" not in outside_code.replace("](llms-full.txt)", "").replace(
            "](index.html.md)", "").replace("](guide.html.md)", "")
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
