"""One source for every figure (issue 44, item 4): the README and the docs name the values of
eval/RESULTS.md's current-figures table (docs/_ext/sphinx_rag_figures.py) and never retype
them; a number with a unit in their prose that does not come from there fails here, naming
the page, the line and the number."""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "docs" / "_ext"))
import sphinx_rag_figures as figures  # noqa: E402

ROW = "| {keys} | what was measured | {value} | 2026-12-07 | `python benchmarks/x.py` |"


def _table(*rows: str) -> str:
    return "\n".join(["# Current figures", "", figures.START, figures.HEADER, "|---|---|---|---|---|", *rows,
                      figures.END, ""])


def test_no_page_holds_a_figure_the_table_does_not():
    table = figures.read_table()
    problems = [line for page in figures.pages() for line in figures.stray_figures(page, table)]
    assert not problems, "numbers the current figures do not hold:\n" + "\n".join(problems)


def test_the_readme_figures_are_the_tables():
    text = figures.README.read_text()
    assert text.count("<!-- figures\n") >= 2
    assert figures.render_readme(text, figures.read_table()) == text, \
        "README.md's figures are out of date: run python docs/_ext/sphinx_rag_figures.py"


def test_the_table_names_every_value_the_pages_use():
    table = figures.read_table()
    assert len(table) >= 60
    for key in ("install-size", "install-packages", "setup", "tests-all", "mrr-demo", "build-new-cold",
                "docs-chunks", "wheel-minilm"):
        assert key in table, key
    assert figures.lookup(table, "install-size").endswith(" MB")
    assert figures.lookup(table, "setup:date") == "December 7, 2026"
    assert "SciPy" in table["install-size"].figure  # what the install does not bring, said where it is measured


def test_a_value_of_parts_has_a_key_per_part():
    table = figures.read_table(_table(ROW.format(keys="a / b / c", value="0.885 / 2.4x / 384 MB")))
    assert [table[k].value for k in "abc"] == ["0.885", "2.4x", "384 MB"]
    assert figures.read_table(_table(ROW.format(keys="a", value="0.1 / 0.2")))["a"].value == "0.1 / 0.2"


@pytest.mark.parametrize("row, error", [
    (ROW.format(keys="a / b", value="0.885 / 2.4x / 1 MB"), "2 keys for a value of 3 parts"),
    (ROW.format(keys="Install_Size", value="1 MB"), "lowercase-words-with-hyphens"),
    (ROW.format(keys="a", value="1 MB") + "\n" + ROW.format(keys="a", value="2 MB"), "already on line 6"),
    ("| a | figure | 1 MB | yesterday | `x` |", "YYYY-MM-DD"),
    ("| a | figure | 1 MB | 2026-12-07 | x |", "backticks"),
    ("| figure | 1 MB | 2026-12-07 | `x` |", "4 cells, not 5"),
])
def test_a_malformed_row_is_one_line_naming_it(row, error):
    with pytest.raises(figures.FigureError, match=error) as caught:
        figures.read_table(_table(row))
    assert re.match(r"eval/RESULTS\.md:[67]: ", str(caught.value)) and "\n" not in str(caught.value)


def test_an_unknown_key_says_which_it_may_be():
    table = figures.read_table(_table(ROW.format(keys="install-size", value="394 MB")))
    with pytest.raises(figures.FigureError, match="did you mean install-size"):
        figures.lookup(table, "install-sise")
    with pytest.raises(figures.FigureError, match="only ':date'"):
        figures.lookup(table, "install-size:value")


def test_the_scanner_reads_prose_not_code_roles_or_renderings():
    table = figures.read_table(_table(ROW.format(keys="install-size / mrr", value="394 MB / 0.885")))
    page = textwrap.dedent("""\
        A venv of 526 MB, 48 packages, built in 2.4x the time; MRR@10 0.885 and 13% less.
        Named: {figure}`install-size`, `526 MB` in code, Python 3.11, version 1.2.3, 2 x 3 tiles,
        [a link](https://example.org/526MB), Qwen2.5 0.5B, 19 minutes, a 257-chunk site.

        ```bash
        du -sm venv    # 526 MB
        ```

        <!-- figures
        The venv is {install-size} in 3 s.
        -->
        The venv is 394 MB in 3 s.
        <!-- /figures -->
        """)
    problems = figures.stray_figures(REPO / "docs" / "page.md", table, page)
    assert [p.split(": ", 1)[0] + ": " + p.split(": ")[1] for p in problems] == [
        "docs/page.md:1: '526 MB'", "docs/page.md:1: '48 packages'", "docs/page.md:1: '2.4x'",
        "docs/page.md:1: '0.885'", "docs/page.md:1: '13%'", "docs/page.md:3: '19 minutes'",
        "docs/page.md:3: '257-chunk'", "docs/page.md:10: '3 s'"]
    assert "retyped: name it, {figure}`mrr`" in problems[3]
    assert "do not hold it" in problems[0]


def test_the_readme_renders_its_templates():
    table = figures.read_table(_table(ROW.format(keys="install-size", value="394 MB")))
    text = "Intro.\n<!-- figures\nA venv of {install-size} ({install-size:date}).\n-->\nold text\n<!-- /figures -->\nEnd.\n"
    new = figures.render_readme(text, table)
    assert new == ("Intro.\n<!-- figures\nA venv of {install-size} ({install-size:date}).\n-->\n"
                   "A venv of 394 MB (December 7, 2026).\n<!-- /figures -->\nEnd.\n")
    assert figures.render_readme(new, table) == new


def _build(tmp_path: Path, page: str) -> subprocess.CompletedProcess:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(REPO / 'docs' / '_ext')!r})\n"
                                 "extensions = ['myst_parser', 'sphinx_rag_figures']\n")
    (src / "index.md").write_text(page)
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src), str(tmp_path / "out")],
                          capture_output=True, text=True)


def test_the_docs_role_renders_the_tables_value(tmp_path):
    table = figures.read_table()
    done = _build(tmp_path, "# Page\n\nThe install is {figure}`install-size` ({figure}`install-size:date`).\n")
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "out" / "index.html").read_text()
    assert f"The install is <span class=\"figure-value\">{table['install-size'].value}</span> " \
           f"(<span class=\"figure-value\">{table['install-size'].long_date}</span>)" in html


def test_an_unknown_key_stops_the_docs_build(tmp_path):
    done = _build(tmp_path, "# Page\n\nThe install is {figure}`install-sise`.\n")
    assert done.returncode != 0
    assert "index.md:3: {figure}`install-sise`: no figure 'install-sise'" in done.stderr
    assert "did you mean install-size" in done.stderr
