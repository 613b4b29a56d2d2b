"""`sphinx-rag search` on the built demo docs; the CLI's --version and --help."""

import argparse
import json
import re
import subprocess
import sys

from sphinx_rag.cli import build_parser
from sphinx_rag.retrieve import Searcher


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
    proc = run_cli("search", str(demo_html), "standard scaler", "--k", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(" 1. [") and ".html#" in lines[1]


def test_readable_output_prints_the_display_form(demo_html):
    """The passage as a reader reads it: the heading path only in the title line, code on
    its own indented lines, no reST roles, no template wording, cuts between words."""
    query = "avoid data leakage when scaling in cross validation"
    proc = run_cli("search", str(demo_html), query, "--k", "5")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "        X_scaled = StandardScaler().fit_transform(X)\n" in out  # code: 4 + 4 spaces, own line
    assert "Pipelines: chaining estimators > Avoiding data leakage\n" not in out.split("\n", 1)[1].replace(
        " 1. [guide] ", "")  # the heading path is not repeated inside the passage
    words = set(re.findall(r"\w+", " ".join(c["text"] for c in Searcher(demo_html).index.chunks())))
    for q in (query, "knn warning identical distances", "imputer strategy", "StandardScaler see also"):
        out = run_cli("search", str(demo_html), q, "--k", "5").stdout
        assert ":class:`" not in out and ".. warning::" not in out and "is described as" not in out
        for cut in re.findall(r"(\w+) \u2026", out):  # the word before every "…" is a whole word
            assert cut in words, cut


def test_fusion_baselines_answer_too(demo_html):
    for fusion in ("bm25", "dense"):
        proc = run_cli("search", str(demo_html), "dummy classifier strategy", "--json", "--fusion", fusion)
        assert proc.returncode == 0 and json.loads(proc.stdout), proc.stderr


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


def test_nonsense_says_no_good_match(demo_html):
    proc = run_cli("search", str(demo_html), "banana smoothie recipe", "--k", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("No good match for 'banana smoothie recipe'. The nearest results:\n 1. [")
    proc = run_cli("search", str(demo_html), "banana smoothie recipe", "--json")
    assert json.loads(proc.stdout) and "No good match" in proc.stderr
    proc = run_cli("search", str(demo_html), "dummy classifier strategy", "--k", "3")
    assert "No good match" not in proc.stdout
