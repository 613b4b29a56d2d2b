"""Files for coding agents (markdown.py): llms.txt in the llmstxt.org format, a Markdown
twin of every indexed page made from the chunks' displays, llms-full.txt under its cap;
written in the index's publish, the same bytes on every build, kept by a build that
changes nothing, removed when switched off or when a page leaves the index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from llms_txt import parse_llms_file

from site_helpers import build_site, manifest_of
from sphinx_rag.assets import ASSET_DIR
from sphinx_rag.markdown import display_markdown, page_markdown, twin_name

ROOT = Path(__file__).parent / "roots" / "test-llms"
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
    # on again, with a cap: whole pages until the note that says where it is cut
    _build(a, "-D", "sphinx_rag_llms_full_bytes=700", fresh=False)
    full = (a / "llms-full.txt").read_text(encoding="utf-8")
    assert len(full.encode()) <= 700 and "llms-full.txt is cut here" in full and "pages not included" in full
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
    assert "\\# not a heading\n\\> not a quote\n\\<b>no tag\\</b>\n- a list" in text
    assert "````python\nx = '```'\n````" in text  # a fence longer than the code's backticks
    assert display_markdown([["term", "f(a=`x`)"]]) == "```python\nf(a=`x`)\n```"
    assert display_markdown([["label", "Parameters"], ["term", "a : `int`"]]) == "**Parameters**\n\n`` a : `int` ``"


def test_twin_names():
    assert twin_name("guide.html#x") == "guide.html.md"
    assert twin_name("guide/") == "guide/index.html.md" and twin_name("") == "index.html.md"
    assert twin_name("index.html#document-guide") == "index.html.md"  # singlehtml: one file, one twin
