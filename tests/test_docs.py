"""The documentation: the docs site in docs/ renders every setting, command and MCP tool from
the code (docs/_ext/), the README stays short and points into the docs, CI builds the docs
with -W (their golden set included), and eval/RESULTS.md opens with its current figures.

The docs themselves are built once, by .ci/run after the tests (-W: a warning, a broken
reference or a golden-set entry that falls short fails it), not again here."""

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
DOCS_URL = "https://sphinx-rag.github.io/sphinx-rag/"
DOCS_BUILD = ".venv/bin/python -m sphinx -W -b html docs docs/_build/html"
README_COMMANDS = ("bash scripts/setup_and_build.sh", ".venv/bin/python -m pytest -q")

sys.path.insert(0, str(DOCS / "_ext"))
import sphinx_rag_docs  # noqa: E402
import sphinx_rag_figures  # noqa: E402
import sphinx_rag_plots  # noqa: E402

# Found as the docs find them, wherever the package puts them.
CONFIG = sphinx_rag_docs.find_module("CONFIG", "config.py").CONFIG
build_parser = sphinx_rag_docs.find_module("build_parser", "cli.py").build_parser


def test_every_option_is_documented():
    """conf_example.py holds every value with its default; the reference renders each with
    its type, default and a description."""
    example = {}
    exec((REPO / "conf_example.py").read_text(), example)
    rendered = "\n".join(sphinx_rag_docs.config_rst())
    for option in CONFIG:
        assert example[option.name] == option.default, option.name
        assert option.help.strip(), f"{option.name} has no description"
        assert f".. confval:: {option.name}\n" in rendered + "\n", option.name
        assert f":default: ``{option.default!r}``" in rendered, option.name


def test_help_text_becomes_safe_rest():
    """`code` becomes a literal; reST markup characters outside it are text, not markup."""
    assert sphinx_rag_docs.inline("`*x*` a_b *c* [link](#x) |sub|") == \
        r"``*x*`` a\_b \*c\* \[link\](#x) \|sub\|"


def _commands(parser, prog):
    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{prog} {name}")


def test_cli_reference_covers_every_argument():
    rendered = "\n".join(sphinx_rag_docs.cli_rst())
    for prog, parser in _commands(build_parser(), "sphinx-rag"):
        if prog != "sphinx-rag":
            assert f".. program:: {prog}\n" in rendered, prog
            assert f".. _cli-{'-'.join(prog.split()[1:])}:" in rendered, prog
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            names = action.option_strings or [action.metavar or action.dest.upper()]
            for name in names:
                assert re.search(rf"^\.\. option:: .*{re.escape(name)}\b", rendered, re.M), f"{prog} {name}"


def test_mcp_reference_lists_the_servers_own_tools():
    pytest.importorskip("mcp")
    instructions, tools = sphinx_rag_docs.mcp_tools()
    rendered = "\n".join(sphinx_rag_docs.mcp_rst())
    assert {t.name for t in tools} == {"search_docs", "read_page", "lookup_api"}
    for tool in tools:
        assert f".. _mcp-{tool.name}:" in rendered
        assert sphinx_rag_docs.inline(tool.description) in rendered
    assert "SITE" in instructions and all(line in rendered for line in instructions.splitlines())


def test_find_module_follows_a_file_into_a_subpackage():
    """The reference pages keep working when a module moves into a subpackage (the MCP
    server's moved into agents/, the CLI became a package)."""
    assert sphinx_rag_docs.find_module("build_server", "mcp_server.py").__name__ == "sphinx_rag.agents.mcp_server"
    assert sphinx_rag_docs.find_module("build_parser", "cli.py").__name__ == "sphinx_rag.cli"
    with pytest.raises(RuntimeError, match="update docs/_ext"):
        sphinx_rag_docs.find_module("NOWHERE", "no_such_module.py")


def _doc_source(page: str) -> Path | None:
    """docs/<page>.md or .rst for a page URL (``how-to/ask.html#x`` -> docs/how-to/ask.md)."""
    stem = page.split("#")[0].removesuffix(".html")
    for suffix in (".md", ".rst"):
        if (DOCS / f"{stem}{suffix}").is_file():
            return DOCS / f"{stem}{suffix}"
    return None


def _github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_repository_links_in_the_docs_name_files_and_headings_that_exist():
    """{repo}`...` links point at GitHub, which Sphinx cannot check: the file must exist here,
    and a #fragment must be the anchor of one of its headings."""
    links = []
    for source in DOCS.rglob("*"):
        if source.suffix in (".md", ".rst") and "_build" not in source.parts:
            text = source.read_text()
            links += re.findall(r"\{repo\}`([^`]+)`", text) + re.findall(r":repo:`([^`]+)`", text)
    assert len(links) >= 10
    for link in links:
        target = re.search(r"<([^>]+)>$", link)
        path, _, fragment = (target.group(1) if target else link).partition("#")
        assert (REPO / path).exists(), link
        if fragment:
            headings = re.findall(r"^#+ (.+)$", (REPO / path).read_text(), re.M)
            assert fragment in {_github_slug(h) for h in headings}, link


def test_readme_is_short_and_points_into_the_docs():
    readme = (REPO / "README.md").read_text()
    shown = re.sub(r"<!-- figures\n.*?\n-->\n", "", readme, flags=re.S)  # a figures template: a comment
    assert len(shown.splitlines()) <= 200
    links = re.findall(re.escape(DOCS_URL) + r"([^)>\s]*)", readme)
    assert len(links) >= 10
    missing = [link for link in links if link and _doc_source(link) is None]
    assert not missing, f"README links to docs pages that do not exist: {missing}"
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme):
        assert (REPO / image).is_file(), image
    for path in re.findall(r"\]\(((?!https?:)[^)#]+)\)", readme):
        assert (REPO / path).exists(), path


def test_ci_runs_the_readme_commands_then_builds_the_docs():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    for command in README_COMMANDS:
        assert command in readme and command in ci
    assert DOCS_BUILD in ci and ci.index(DOCS_BUILD) > ci.index(README_COMMANDS[1])


def test_the_docs_golden_set_names_pages_that_exist():
    conf = (DOCS / "conf.py").read_text()
    assert 'sphinx_rag_golden = "search_golden.json"' in conf
    entries = json.loads((DOCS / "search_golden.json").read_text())
    assert 10 <= len(entries) <= 20
    for entry in entries:
        assert set(entry) <= {"query", "url", "rank", "note"} and entry["query"].strip()
        assert _doc_source(entry["url"]) is not None, entry["url"]
        assert 1 <= entry.get("rank", 10) <= 10


def test_the_docs_questions_name_pages_that_exist():
    """eval/docs_questions.json, the sixth corpus (the docs themselves), in evaluate's format."""
    questions = json.loads((REPO / "eval" / "docs_questions.json").read_text())
    assert len({q["id"] for q in questions}) == len(questions) >= 10
    for q in questions:
        assert q["question"].strip() and q["style"] and q["relevant"], q["id"]
        for label in q["relevant"]:
            assert _doc_source(label["url"]) is not None and label["text_contains"].strip(), q["id"]


def test_results_open_with_the_current_figures():
    """Its table is read by docs/_ext/sphinx_rag_figures.py (tests/test_figures.py): a key, or a
    key per part of the value, what was measured, the value, the date and the command."""
    text = (REPO / "eval" / "RESULTS.md").read_text()
    assert text.startswith("# Current figures\n")
    table = text.split("<!-- current-figures:start -->")[1].split("<!-- current-figures:end -->")[0]
    rows = [line for line in table.strip().splitlines()]
    assert rows[0] == "| key | figure | value | date | command |"
    figures = sphinx_rag_figures.read_table(text)
    assert len({f.line for f in figures.values()}) == len(rows) - 2 >= 15
    assert "# Retrieval quality" in text  # the history stays below it


@pytest.mark.parametrize("name", sorted(p.name for p in (DOCS / "_data" / "plots").glob("*.json")))
def test_plots_render_as_svg(name):
    spec = json.loads((DOCS / "_data" / "plots" / name).read_text())
    svg = sphinx_rag_plots.render_svg(spec)
    root = ET.fromstring(svg)  # well-formed
    assert root.tag.endswith("svg")
    assert svg == sphinx_rag_plots.render_svg(spec)  # deterministic
    for series in spec["series"]:
        assert series["name"] in svg
    for key in ("caption", "command", "date", "title"):
        assert spec[key]
