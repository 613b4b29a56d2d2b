"""`sphinx-rag search` on the built demo docs and on hostile pages; the CLI's --version,
--help and its handling of bad arguments."""

import argparse
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from sphinx_rag.chunk.display import clip_display, display_text
from sphinx_rag.cli import build_parser
from sphinx_rag.agents.docs_tools import Library, Site
from sphinx_rag.agents.markdown import display_markdown
from sphinx_rag.cli.terminal import clean
from sphinx_rag.cli.text import wrapped
from sphinx_rag.search.window import AGENT_CHARS, SHOWN_CHARS, passage_window, query_tokens
from sphinx_rag.search.lexical import identifier_tokens
from sphinx_rag.cli.result_groups import group_results
from sphinx_rag.search.retrieve import Searcher
from site_helpers import HOSTILE_SECTION, HOSTILE_TITLE, HOSTILE_WORD

REPO = Path(__file__).resolve().parent.parent


EVAL = Path(__file__).resolve().parent.parent / "eval"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "sphinx_rag", *args], capture_output=True, text=True)


def test_dummy_classifier_strategy_question_finds_the_class_and_its_parameter(demo_html):
    proc = run_cli("search", str(demo_html), "What are the values of the strategy parameter in a dummy classifier?",
                   "--k", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert [r["rank"] for r in results] == [1, 2, 3, 4, 5]
    assert set(results[0]) == {"rank", "score", "url", "title", "kind", "text", "display", "id"}
    # the DummyClassifier object first (its card and signature), or its strategy parameter
    # alone; the parameter at the latest right after its object
    assert results[0]["url"].endswith("mlkit.dummy.DummyClassifier.html#mlkit.dummy.DummyClassifier")
    top = next(r for r in results[:2] if r["text"].startswith("Parameter strategy of mlkit.dummy.DummyClassifier ("))
    # what a reader sees: the numpydoc entry, no owner line, no template wording
    assert top["display"][:2] == [["label", "Parameters"], ["term", 'strategy : {"most_frequent", "prior", '
                                                               '"stratified", "uniform", "constant"}, '
                                                               'default="prior"']]
    assert top["url"].endswith("mlkit.dummy.DummyClassifier.html#mlkit.dummy.DummyClassifier")
    assert top["kind"] == "api"
    # the imputer's strategy, if present, ranks below
    imputer = [r["rank"] for r in results if r["text"].startswith("Parameter strategy of mlkit.impute")]
    assert all(rank > 1 for rank in imputer)


def test_json_text_is_the_indexed_chunk_and_display_its_display(demo_html):
    searcher = Searcher(demo_html)
    hit = searcher.search("SimpleImputer fill_value", k=1)[0]
    chunk = searcher.index.chunk(hit.index)
    # the passage is the object's card and the parts the query found (expand.py), the hit among them
    card = searcher.index.chunk(hit.index - chunk.get("card", 0))
    assert hit.text.startswith(card["text"]) and f"\n\n{chunk['text']}" in hit.text
    assert hit.url == chunk["url"] and hit.display[:len(card["display"])] == card["display"]
    assert all(block in hit.display for block in chunk["display"])


def test_readable_output(demo_html):
    proc = run_cli("search", str(demo_html), "standard scaler", "--k", "3", "--flat")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(" 1. [") and ".html#" in lines[1]


def test_results_are_grouped_by_page_as_in_the_dialog(demo_html):
    """One heading per page (the dialog's groups, in the order of their best hit), each URL
    once under it with its rank, the lower hits there counted; --flat keeps the ranked list."""
    query, k = "strategy of a dummy classifier", 12
    results = Searcher(demo_html).search(query, k=k)
    groups = group_results(results)
    assert len(groups) < len(results) and any(e.merged for g in groups for e in g.entries)  # a real test
    out = run_cli("search", str(demo_html), query, "--k", str(k)).stdout
    heads = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert heads == [g.title for g in groups]
    ranks = [int(m) for m in re.findall(r"^   ?(\d+)\. \[", out, re.M)]
    assert ranks == [e.result.rank for g in groups for e in g.entries]
    for g in groups:
        for e in g.entries:
            assert f"\n      {e.result.url}\n" in out
    n = sum(len(e.merged) for g in groups for e in g.entries)
    assert sum(int(m) for m in re.findall(r"^      \+(\d+) more match(?:es)? here$", out, re.M)) == n
    flat = run_cli("search", str(demo_html), query, "--k", str(k), "--flat").stdout
    assert [int(m) for m in re.findall(r"^ ?(\d+)\. \[", flat, re.M)] == list(range(1, k + 1))
    as_json = json.loads(run_cli("search", str(demo_html), query, "--k", str(k), "--json").stdout)
    assert [r["id"] for r in as_json] == [r.id for r in results]  # --json: the flat ranked list


def test_groups_are_the_dialogs(demo_html):
    """sphinx_rag/result_groups.py gives what js/src/ui/results.js groupResults gives."""
    script = ("import { groupResults } from './js/src/ui/results.js';\n"
              "import { identifierTokens } from './js/src/search/lexical.js';\n"
              "import { readFileSync } from 'node:fs';\n"
              "const { query, results } = JSON.parse(readFileSync(0, 'utf8'));\n"
              "console.log(JSON.stringify(groupResults(results, identifierTokens(query)).map((g) => [g.page, g.title,\n"
              "  g.entries.map((e) => [e.result.id, e.merged.map((m) => m.id)])])));\n")
    searcher = Searcher(demo_html)
    swapped = 0  # queries whose entry shows a lower hit, the one holding what the query names
    for query in ("strategy of a dummy classifier", "standard scaler", "imputer strategy", "pipeline",
                  "named_steps default", "get_n_splits default"):
        results = searcher.search(query, k=20)
        proc = subprocess.run(["node", "--input-type=module", "-e", script], cwd=REPO, capture_output=True,
                              text=True, input=json.dumps({"query": query, "results": [r.to_json() for r in results]}))
        assert proc.returncode == 0, proc.stderr
        groups = group_results(results, identifier_tokens(query))
        python = [[g.page, g.title, [[e.result.id, [m.id for m in e.merged]] for e in g.entries]] for g in groups]
        assert json.loads(proc.stdout) == python, query
        swapped += any(e.merged and e.result.rank > min(m.rank for m in e.merged) for g in groups for e in g.entries)
    assert swapped


def test_readable_output_prints_the_display_form(demo_html):
    """The passage as a reader reads it: the heading path only in the title line, code on
    its own indented lines, no reST roles, no template wording, cuts between words."""
    query = "avoid data leakage when scaling in cross validation"
    proc = run_cli("search", str(demo_html), query, "--k", "5", "--flat")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "        from mlkit.dummy import DummyClassifier\n" in out  # code: 4 + 4 spaces, own line
    assert "Pipelines: chaining estimators > Avoiding data leakage\n" not in out.split("\n", 1)[1].replace(
        " 1. [guide] ", "")  # the heading path is not repeated inside the passage
    words = set(re.findall(r"\w+", " ".join(c["text"] for c in Searcher(demo_html).index.chunks())))
    for q in (query, "knn warning identical distances", "imputer strategy", "StandardScaler see also"):
        out = run_cli("search", str(demo_html), q, "--k", "5").stdout
        assert ":class:`" not in out and ".. warning::" not in out and "is described as" not in out
        for cut in re.findall(r"(\w+) \u2026", out):  # the word before every "…" is a whole word
            assert cut in words, cut


def _first_lines(window) -> list[str]:
    return [line for line in display_text(window).split("\n") if line.strip()]


def test_the_cli_json_and_mcp_show_the_window_the_dialog_shows(demo_html):
    """Issue 38: the CLI printed each passage's head, which did not hold what matched, while
    the dialog showed the matching part. Now the CLI, --json's display and the MCP server
    show the dialog's window (window.py = passage.js passageView, pinned by passages.json)."""
    query = "SimpleImputer fill_value"
    results = Searcher(demo_html).search(query, k=5)
    windows = [passage_window(r.display, query_tokens(query), SHOWN_CHARS, r.title) for r in results]
    heads = [clip_display(r.display, SHOWN_CHARS) for r in results]
    assert any(_first_lines(w)[0] != _first_lines(h)[0] for w, h in zip(windows, heads))  # not the head
    assert "fill_value" in display_text(windows[0])
    as_json = json.loads(run_cli("search", str(demo_html), query, "--k", "5", "--json").stdout)
    assert [r["display"] for r in as_json] == windows
    flat = run_cli("search", str(demo_html), query, "--k", "5", "--flat").stdout
    for w in windows:
        assert textwrap.indent(wrapped(clean(display_text(w))), "    ") in flat
    grouped = run_cli("search", str(demo_html), query, "--k", "5").stdout
    assert "fill_value : str or numerical value" in grouped
    agent = Library([Site(str(demo_html))]).search(query, k=5)
    for r, w in zip(results, windows):  # the same window, read further: it holds the dialog's
        longer = passage_window(r.display, query_tokens(query), AGENT_CHARS, r.title)
        assert display_markdown(longer) in agent
        start = next(b[1] for b in w if b[0] not in ("heading", "label", "term")).removeprefix("\u2026 ")
        assert start.removesuffix(" \u2026")[:60] in display_text(longer), (w, longer)
    assert not any(_first_lines(w)[0] == "\u2026" for w in windows)  # never a lone "…" first


def test_fusion_baselines_answer_too(demo_html):
    for fusion in ("bm25", "dense"):
        proc = run_cli("search", str(demo_html), "dummy classifier strategy", "--json", "--fusion", fusion)
        assert proc.returncode == 0 and json.loads(proc.stdout), proc.stderr


def test_missing_directory_is_named_missing(tmp_path):
    for missing, what in ((tmp_path / "nonexistent", "does not exist"), (tmp_path / "file.txt", "is not a directory")):
        if what == "is not a directory":
            missing.write_text("x")
        proc = run_cli("search", str(missing), "anything")
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith(f"[sphinx-rag] {missing} {what}: give the HTML output directory")
        assert "no search index" not in proc.stderr


def test_missing_index_gives_one_line_error(tmp_path):
    proc = run_cli("search", str(tmp_path), "anything")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "no search index" in proc.stderr and "sphinx-build -b html" in proc.stderr


def test_source_dir_whose_build_html_has_the_index(demo_html, tmp_path):
    """`sphinx-rag search docs ...` finds docs/_build/html's index: same results as the HTML dir."""
    src = tmp_path / "docs"
    (src / "_build").mkdir(parents=True)
    (src / "conf.py").write_text("extensions = ['sphinx_rag']\n")
    (src / "_build" / "html").symlink_to(demo_html, target_is_directory=True)
    query = "dummy classifier strategy"
    proc = run_cli("search", str(src), query, "--k", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    direct = run_cli("search", str(demo_html), query, "--k", "3", "--json")
    assert json.loads(proc.stdout) == json.loads(direct.stdout) and json.loads(proc.stdout)


def test_source_dir_without_index_says_it_is_a_source_dir(tmp_path):
    (tmp_path / "conf.py").write_text("project = 'x'\n")
    proc = run_cli("search", str(tmp_path), "anything")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "Sphinx source directory" in proc.stderr and "HTML output directory" in proc.stderr
    assert f"sphinx-build -b html {tmp_path} OUTPUT_DIR" in proc.stderr


# -- --version and --help ----------------------------------------------------------------------

def test_version():
    import sphinx_rag

    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout == f"sphinx-rag {sphinx_rag.__version__}\n"


def _parsers():
    """(name, parser) of the top-level parser and of every command."""
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [("sphinx-rag", parser), *commands.choices.items()]


def test_every_argument_and_command_has_help():
    for name, parser in _parsers():
        assert parser.description, f"{name} has no description"
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helps = {a.dest: a.help for a in action._choices_actions}
                assert set(helps) == set(action.choices) and all(helps.values()), helps
            assert action.help and action.help != argparse.SUPPRESS, f"{name} {action.dest}: no help"


RST_MARKUP = re.compile(r"``|:(class|func|meth|mod|ref|doc|attr|data):`|^\s*\.\. ", re.M)


def test_help_is_plain_text():
    proc = run_cli("--help")
    assert proc.returncode == 0 and "usage: sphinx-rag" in proc.stdout
    for command in ("search", "ask", "evaluate", "export-model"):
        assert command in proc.stdout
    assert "--version" in proc.stdout and not RST_MARKUP.search(proc.stdout), proc.stdout
    for name, parser in _parsers():
        text = parser.format_help()
        assert not RST_MARKUP.search(text), f"{name} --help:\n{text}"


def test_evaluate_rejects_an_unknown_method(tmp_path):
    proc = run_cli("evaluate", str(tmp_path), str(tmp_path / "q.json"), "--methods", "bm25,magic")
    assert proc.returncode == 2 and "--methods" in proc.stderr and "rrf, bm25, dense" in proc.stderr


def test_evaluate_with_a_budget(demo_html, tmp_path):
    questions = json.loads((EVAL / "demo_questions.json").read_text())[:6]
    (tmp_path / "q.json").write_text(json.dumps(questions))
    proc = run_cli("evaluate", str(demo_html), str(tmp_path / "q.json"), "--methods", "bm25", "--budget", "1500")
    assert proc.returncode == 0, proc.stderr
    header, _, row = proc.stdout.splitlines()[2:5]
    assert header.endswith("| mrr@10 | sent | chars |") and row.startswith("| bm25 | 6 |")
    assert 0 < float(row.split("|")[-2]) <= 1500  # the mean characters read
    proc = run_cli("evaluate", str(demo_html), str(tmp_path / "q.json"), "--no-fit")
    assert proc.returncode == 2 and "--budget" in proc.stderr
    proc = run_cli("evaluate", str(demo_html), str(tmp_path / "q.json"), "--budget", "0")
    assert proc.returncode == 2 and "--budget" in proc.stderr


def test_nonsense_says_no_good_match(demo_html):
    proc = run_cli("search", str(demo_html), "banana smoothie recipe", "--k", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("No good match for 'banana smoothie recipe'. The nearest results:\n")
    flat = run_cli("search", str(demo_html), "banana smoothie recipe", "--k", "3", "--flat")
    assert flat.stdout.startswith("No good match for 'banana smoothie recipe'. The nearest results:\n 1. [")
    proc = run_cli("search", str(demo_html), "banana smoothie recipe", "--json")
    assert json.loads(proc.stdout) and "No good match" in proc.stderr
    proc = run_cli("search", str(demo_html), "dummy classifier strategy", "--k", "3")
    assert "No good match" not in proc.stdout


# -- hostile input ---------------------------------------------------------------------------

TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_escape_sequences_in_pages_never_reach_the_terminal(hostile_site):
    """Titles, URLs and passages with window-title, screen-clear, OSC 8 and bidi sequences:
    printed without them (grouped and flat); --json keeps the text exact."""
    for flat in ((), ("--flat",)):
        proc = run_cli("search", str(hostile_site), HOSTILE_WORD, *flat)
        assert proc.returncode == 0, proc.stderr
        assert "escapes.html#" in proc.stdout and "Escapes  zorblax page" in proc.stdout
        assert "a link hides a URL, evil reverses text and red colours it." in " ".join(proc.stdout.split())
        assert not TERMINAL_CONTROLS.search(proc.stdout), repr(proc.stdout)
        assert "PWNED" not in proc.stdout and "evil.example" not in proc.stdout
    proc = run_cli("search", str(hostile_site), HOSTILE_WORD, "--json")
    results = json.loads(proc.stdout)
    assert results[0]["title"] == f"{HOSTILE_TITLE} > {HOSTILE_SECTION}"
    assert "\x1b]8;;https://evil.example/\x1b\\a link" in results[0]["text"]


def test_closed_stdout_exits_quietly(demo_html):
    """`sphinx-rag search ... | head -1`: the reader goes away; no BrokenPipeError traceback.
    (Closing the pipe before the first line is written makes the failure certain.)"""
    for args in (("--k", "50"), ("--k", "50", "--flat"), ("--json",)):
        proc = subprocess.Popen([sys.executable, "-m", "sphinx_rag", "search", str(demo_html), "pipeline", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()
        stderr = proc.stderr.read().decode()
        assert proc.wait(timeout=300) == 141, stderr  # as a unix tool killed by SIGPIPE
        assert stderr == ""
    shell = subprocess.run(f"{sys.executable} -m sphinx_rag search {demo_html} pipeline --k 50 | head -1",
                           shell=True, capture_output=True, text=True)
    assert shell.returncode == 0 and len(shell.stdout.splitlines()) == 1 and shell.stderr == ""


def test_k_must_be_a_positive_integer(hostile_site):
    for k in ("-1", "0", "ten"):
        proc = run_cli("search", str(hostile_site), HOSTILE_WORD, "--k", k)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.splitlines()[-1] == (f"sphinx-rag search: error: argument --k: {k!r} is not a positive "
                                                "integer (e.g. 10)")
    proc = run_cli("ask", str(hostile_site), "question?", "--k", "-1")
    assert proc.returncode == 2 and "is not a positive integer" in proc.stderr


def test_blank_query_is_refused_in_one_line(hostile_site):
    for query in ("", "   ", "\t\n"):
        proc = run_cli("search", str(hostile_site), query)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr == "[sphinx-rag] the query is empty: give search words or a question, e.g. \"imputer strategy\"\n"
    proc = run_cli("ask", str(hostile_site), " ", "--endpoint", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and proc.stderr.startswith("[sphinx-rag] the question is empty") and proc.stdout == ""


def test_undecodable_query_bytes_do_not_crash(demo_html):
    """A query cut in the middle of an emoji, as a terminal may pass it (its first bytes, or
    a CESU-8 lone surrogate): argv holds them as lone surrogates; they become U+FFFD."""
    for cut in (b"\xf0\x9f\x8e", b"\xed\xa0\xbd"):
        proc = subprocess.run([sys.executable, "-m", "sphinx_rag", "search", os.fsencode(demo_html),
                               b"dummy classifier strategy " + cut, "--k", "3"], capture_output=True)
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stderr == b"" and b"Traceback" not in proc.stderr
        assert b"DummyClassifier" in proc.stdout


def test_a_window_ends_where_the_next_section_begins():
    """Issue 44: on imageio, "read a gif" showed "Read an image of a cat"'s code, then the
    heading "Read from fancy sources" and its text, under the first section's title: the
    next section is another hit's. The window stops at its heading (and says more follows)."""
    display = [["p", "Probably the most important thing you'll ever need."],
               ["code", 'frames = iio.imread("imageio:newtonscradle.gif", index=None)'],
               ["heading", "Read from fancy sources"],
               ["p", "Imageio can read from filenames, file objects."]]
    window = passage_window(display, query_tokens("read a gif"), SHOWN_CHARS, "Examples > Read an image of a cat")
    assert [kind for kind, *_ in window] == ["p", "code", "p"] and window[-1][1] == "\u2026"
    assert "fancy" not in display_text(window)
    # a window that starts in the next section shows that section's heading and text
    window = passage_window(display, query_tokens("read from fancy sources file objects"), SHOWN_CHARS,
                            "Examples > Read an image of a cat")
    assert window[0] == ["heading", "Read from fancy sources"] and "file objects" in display_text(window)


def test_the_window_of_a_parameter_question_starts_at_that_parameter():
    """Issue 44: "what does `index` of `imread` do?" showed imread's signature (which holds
    both words) and then its first parameter, `uri`: the entry the query names comes first."""
    display = [["term", "function imread"], ["p", "Read an ndimage from a URI."],
               ["term", "imread(uri, *, index=None, plugin=None, extension=None, format_hint=None, **kwargs)"],
               ["label", "Parameters"], ["term", "uri : {str, pathlib.Path, bytes, file}"],
               ["p", "The resource to load the image from, e.g. a filename, pathlib.Path, http address or file "
                     "object, see the docs for more info."],
               ["label", "Parameters"], ["term", "index : {int, Ellipsis, None}"],
               ["p", "If the ImageResource contains multiple ndimages, and index is an integer, select the "
                     "index-th ndimage from among them and return it."]]
    window = passage_window(display, query_tokens("what does `index` of `imread` do?"), SHOWN_CHARS, "imageio.v3.imread")
    assert window[:3] == [["p", "Read an ndimage from a URI."], ["label", "Parameters"],
                          ["term", "index : {int, Ellipsis, None}"]], window
    assert "uri :" not in display_text(window)
    # no entry named: the block with the most query words, as before
    window = passage_window(display, query_tokens("imread plugin"), SHOWN_CHARS, "imageio.v3.imread")
    assert "imread(uri" in display_text(window) and "index : " not in display_text(window), window


def test_a_word_of_parts_is_a_hit_where_the_query_word_is():
    """window._hits = highlight.js findHits (js/test/highlight.test.js, the same cases):
    "reST" is no hit of "read" nor of "re" (a part under MIN_PART letters), the part of an
    identifier the query names is (issue 44: the dialog marked "reST" for "read")."""
    from sphinx_rag.search.window import _hits

    text = "Docstrings are raw reST; init_video_stream and _can_read read it."

    def marked(query):
        return [text[start:end] for start, end, _ in _hits(text, query_tokens(query))]

    assert marked("read") == ["read", "read"] and marked("re-read") == ["read", "read"]
    assert marked("reST") == ["reST"] and marked("video") == ["video"]
    assert _hits("ImageIOs", query_tokens("images")) == [(0, 5, ["image"])]
    assert [t for *_, t in _hits("a DummyClassifier", query_tokens("DummyClassifier"))] == [["dummyclassifier", "dummy",
                                                                                             "classifier"]]
