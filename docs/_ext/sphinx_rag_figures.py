"""Every figure a reader sees comes from one table: ``eval/RESULTS.md``'s current figures.

The table (between ``<!-- current-figures:start -->`` and ``<!-- current-figures:end -->``)
has one row per measurement: ``| key | figure | value | date | command |``. The key names
the value; a value made of parts (``0.885 / 0.849 / 0.822``) has one key per part, in the
same order, separated by `` / `` the same way. Pages never retype a value, they name it:

- in the docs, the role ``{figure}`install-size``` (reST ``:figure:`install-size```)
  renders the value, ``{figure}`install-size:date``` its date ("December 7, 2026"); an
  unknown key stops the build, naming the page and the key;
- in the README, which GitHub renders without Sphinx, a template in an HTML comment
  (``<!-- figures`` ... ``-->``, the same ``{install-size}`` names) is followed by its
  rendering up to ``<!-- /figures -->``; ``python docs/_ext/sphinx_rag_figures.py`` writes
  the renderings, ``--check`` only says which are out of date.

``stray_figures`` finds what the rule forbids: a number with a unit of measurement (MB, s,
x, %, chunks, packages, tests, ...) or an MRR-like decimal in a page's prose, outside code,
a role and a rendered template. ``ALLOWED`` lists the few that are no measurement.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "eval" / "RESULTS.md"
README = REPO / "README.md"
START, END = "<!-- current-figures:start -->", "<!-- current-figures:end -->"
HEADER = "| key | figure | value | date | command |"
KEY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
PART = " / "

# Numbers in prose that are no measurement: the reason, then the pages ("*": any) and
# the numbers as written. Keep it short: a measured value belongs in the table.
ALLOWED = {
    "limits and deadlines the code applies (each page names the code)": {
        "*": ["2 GB"],  # the device memory under which the model waits; wllama's largest file
        "docs/explanation/browser.md": ["700 ms", "1200 ms", "50 chunks", "5%"],
        "docs/how-to/ci-warm-start.md": ["2%", "5%", "5 s", "60 s"],
        "docs/how-to/federation.md": ["3 s", "300 ms", "8 s"],
        "docs/how-to/golden-set.md": ["4 MB"],
        "docs/development.md": ["6 s"],  # a test this long or longer is marked slow
    },
    "the benchmarks' setting: benchmarks/replicate_index.py makes a 200,000-chunk index": {
        "*": ["200,000 chunks"],
    },
    "the dialog's status line quoted as it reads on the demo (it prints what it downloads)": {
        "docs/explanation/browser.md": ["23 MB", "14 MB"],
    },
}

_UNIT = r"(?:[KMG]i?B|kB|ms|s|sec|seconds?|min|minutes?|hours?|packages|chunks?|tests)"
_MEASURE = re.compile(  # 384 MB, 591.9 B (not 0.5B: parameters), 2.4x, 13%, 19 min, 47 packages
    r"(?<![\w.\/#=])(\d[\d,]*(?:\.\d+)?)(?:(?:\s|-)?" + _UNIT + r"|\sB|[x×%])(?![\w\-])"
    r"|(?<![\w.\/#=])(0\.\d{2,4}|1\.0{2,4})(?![\w.])")  # 0.885, 1.000: MRR@10, recall, overlap, ...
_TEMPLATE_BLOCK = re.compile(r"<!-- figures\n(.*?)\n-->\n(.*?)\n?<!-- /figures -->", re.S)
_PLACEHOLDER = re.compile(r"\{(" + KEY.pattern + r")(:date)?\}")


class FigureError(ValueError):
    """The table is malformed, or a page names a key it does not hold."""


@dataclass(frozen=True)
class Figure:
    key: str
    value: str
    date: str  # the row's date cell: an ISO date, then optional notes
    figure: str  # what was measured (the row's figure cell)
    command: str
    line: int  # in eval/RESULTS.md

    @property
    def long_date(self) -> str:
        """The row's date as prose writes it: 2026-12-07 -> December 7, 2026."""
        day = datetime.date.fromisoformat(self.date[:10])
        return f"{day:%B} {day.day}, {day.year}"


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split(" | ")]


def read_table(text: str | None = None) -> dict[str, Figure]:
    """Every key of the current-figures table, with its value (or part of one) and row."""
    text = RESULTS.read_text() if text is None else text
    if START not in text or END not in text:
        raise FigureError(f"eval/RESULTS.md: no {START} ... {END} table")
    first = text[:text.index(START)].count("\n") + 2
    rows = text.split(START, 1)[1].split(END, 1)[0].strip("\n").splitlines()
    if not rows or rows[0].strip() != HEADER:
        raise FigureError(f"eval/RESULTS.md:{first}: the table's header must be {HEADER!r}")
    figures: dict[str, Figure] = {}
    for n, row in enumerate(rows[2:], start=first + 2):
        where = f"eval/RESULTS.md:{n}"
        cells = _cells(row)
        if len(cells) != 5:
            raise FigureError(f"{where}: {len(cells)} cells, not 5 ({HEADER})")
        keys, figure, value, date, command = cells
        keys = keys.split(PART)
        parts = value.split(PART) if len(keys) > 1 else [value]
        if len(parts) != len(keys):
            raise FigureError(f"{where}: {len(keys)} keys for a value of {len(parts)} parts "
                              f"(one key, or one per ' / ' part of the value)")
        if not re.match(r"\d{4}-\d\d-\d\d\b", date):
            raise FigureError(f"{where}: the date must start YYYY-MM-DD, not {date!r}")
        if "`" not in command:
            raise FigureError(f"{where}: the command that measures it, in `backticks`")
        for key, part in zip(keys, parts):
            if not KEY.fullmatch(key):
                raise FigureError(f"{where}: the key {key!r} is not lowercase-words-with-hyphens")
            if key in figures:
                raise FigureError(f"{where}: the key {key!r} is already on line {figures[key].line}")
            figures[key] = Figure(key, part.strip(), date, figure, command, n)
    return figures


def lookup(figures: dict[str, Figure], name: str) -> str:
    """``key`` -> the value, ``key:date`` -> the row's date; an unknown key says which it may be."""
    key, _, field = name.strip().partition(":")
    if key not in figures:
        near = difflib.get_close_matches(key, list(figures), n=3)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise FigureError(f"no figure {key!r} in eval/RESULTS.md's current figures{hint}")
    if field not in ("", "date"):
        raise FigureError(f"{name!r}: after the key, only ':date'")
    return figures[key].long_date if field else figures[key].value


def render(template: str, figures: dict[str, Figure]) -> str:
    """A README template with each ``{key}`` / ``{key:date}`` replaced by the table's text."""
    return _PLACEHOLDER.sub(lambda m: lookup(figures, m.group(0)[1:-1]), template)


def render_readme(text: str, figures: dict[str, Figure]) -> str:
    """The README with every ``<!-- figures`` block's rendering written after its template."""
    def block(m: re.Match) -> str:
        return f"<!-- figures\n{m.group(1)}\n-->\n{render(m.group(1), figures)}\n<!-- /figures -->"
    return _TEMPLATE_BLOCK.sub(block, text)


def _template_text(m: re.Match) -> str:
    """A README template as the scanner reads it: its own words, its names blanked, and no
    rendering (which comes from the table), line numbers kept."""
    return "\n" + _PLACEHOLDER.sub(" ", m.group(1)) + "\n" * (m.group(0).count("\n") - m.group(1).count("\n"))


def _prose_lines(text: str, rst: bool):
    """(line number, text) of what a reader sees as prose: code blocks, code spans (so roles'
    targets), README templates' renderings, HTML comments and link targets are blanked out."""
    text = _TEMPLATE_BLOCK.sub(_template_text, text)
    text = re.sub(r"<!--.*?-->", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    fence, literal_indent = "", None
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if fence:
            if stripped.startswith(fence[0] * 3) and stripped.strip(fence[0]) == "":
                fence = ""
            continue
        match = re.match(r"(`{3,}|~{3,})\s*(\{([\w-]+)\})?", stripped)
        if match and (not match.group(2) or match.group(3) in ("code-block", "code", "include",
                                                               "literalinclude", "sphinx-rag-plot")):
            fence = match.group(1)
            continue
        if rst:
            if literal_indent is not None:
                if not stripped or indent > literal_indent:
                    continue
                literal_indent = None
            if stripped.endswith("::") and (not stripped.startswith("..") or re.match(
                    r"\.\. (code-block|code|sourcecode|literalinclude)::", stripped)):
                literal_indent = indent
        if stripped.startswith(":") and re.match(r":[\w-]+:( |$)", stripped):  # a directive's option
            continue
        line = re.sub(r"(`+)(?:(?!\1).)+\1", " ", line)  # code spans and every role's target
        line = re.sub(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+", " ", line)
        yield n, line


def measurements(text: str, rst: bool = False) -> list[tuple[int, str]]:
    """(line, number as written) of each measurement-like number in a page's prose."""
    found = []
    for n, line in _prose_lines(text, rst):
        for m in _MEASURE.finditer(line):
            found.append((n, m.group(0)))
    return found


_UNIT_NAMES = {"minute": "min", "minutes": "min", "second": "s", "seconds": "s", "sec": "s", "hour": "h",
               "hours": "h", "chunk": "chunks", "×": "x"}


def _normal(token: str) -> str:
    """19 minutes, 19-min and 19 min alike."""
    m = re.fullmatch(r"([\d,.]+)[\s-]?(\D*)", token.strip())
    number, unit = m.groups() if m else (token, "")
    unit = _UNIT_NAMES.get(unit, unit)
    return f"{number}{unit}" if unit in ("x", "%", "") else f"{number} {unit}"


def stray_figures(path: Path, figures: dict[str, Figure], text: str | None = None) -> list[str]:
    """One line per number a page writes where it should name the table's figure."""
    text = path.read_text() if text is None else text
    held: dict[str, list[str]] = {}
    for figure in figures.values():
        for _, token in measurements(figure.value):
            held.setdefault(_normal(token), []).append(figure.key)
    name = str(path.relative_to(REPO) if path.is_relative_to(REPO) else path)
    allowed: dict[str, set[str]] = {}
    for by_page in ALLOWED.values():
        for page, tokens in by_page.items():
            allowed.setdefault(page, set()).update(_normal(t) for t in tokens)
    problems = []
    for n, token in measurements(text, rst=path.suffix == ".rst"):
        if _normal(token) in allowed.get(name, ()) or _normal(token) in allowed.get("*", ()):
            continue
        keys = held.get(_normal(token))
        name_it = f"{{{keys[0]}}} in a figures template" if keys and path.name == "README.md" else \
            f"{{figure}}`{keys[0]}`" if keys else ""
        why = (f"retyped: name it, {name_it}" if keys else
               "the current figures (eval/RESULTS.md) do not hold it: measure it and add a row, or leave it out")
        problems.append(f"{name}:{n}: {token!r}: {why}")
    return problems


def pages() -> list[Path]:
    """What a reader sees: the README and every page of the docs site."""
    docs = REPO / "docs"
    return [README] + sorted(p for p in docs.rglob("*") if p.suffix in (".md", ".rst")
                             and "_build" not in p.parts and p.is_file())


# -- Sphinx -------------------------------------------------------------------------------

def _figure_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    from docutils import nodes

    env = inliner.document.settings.env
    env.note_dependency(str(RESULTS))
    try:
        value = lookup(read_table(), text)
    except FigureError as error:
        from sphinx.errors import ExtensionError

        raise ExtensionError(f"{env.doc2path(env.docname)}:{lineno}: {{figure}}`{text}`: {error}") from None
    return [nodes.inline(rawtext, value, classes=["figure-value"])], []


def setup(app):
    app.add_role("figure", _figure_role)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}


# -- the README ---------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Write the README's figures from eval/RESULTS.md's table.")
    parser.add_argument("--check", action="store_true", help="only say whether the README is out of date")
    args = parser.parse_args(argv)
    text = README.read_text()
    new = render_readme(text, read_table())
    if args.check:
        if new != text:
            print("README.md's figures are out of date: run python docs/_ext/sphinx_rag_figures.py")
            return 1
        return 0
    if new != text:
        README.write_text(new)
        print("README.md: figures written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
