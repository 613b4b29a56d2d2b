"""`sphinx-rag search` on the built demo docs."""

import json
import subprocess
import sys

from sphinx_rag.retrieve import Searcher


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "sphinx_rag", *args], capture_output=True, text=True)


def test_dummy_classifier_strategy_question_finds_its_parameter_first(demo_html):
    proc = run_cli("search", str(demo_html), "What are the values of the strategy parameter in a dummy classifier?",
                   "--k", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)
    assert [r["rank"] for r in results] == [1, 2, 3, 4, 5]
    assert set(results[0]) == {"rank", "score", "url", "title", "kind", "text", "id"}
    top = results[0]
    assert top["text"].startswith("Parameter strategy of mlkit.dummy.DummyClassifier (")
    assert top["url"].endswith("mlkit.dummy.DummyClassifier.html#mlkit.dummy.DummyClassifier")
    assert top["kind"] == "api"
    # the imputer's strategy, if present, ranks below
    imputer = [r["rank"] for r in results if r["text"].startswith("Parameter strategy of mlkit.impute")]
    assert all(rank > 1 for rank in imputer)


def test_json_text_is_the_passage_given_to_an_llm(demo_html):
    searcher = Searcher(demo_html)
    hit = searcher.search("SimpleImputer fill_value", k=1)[0]
    chunk = searcher.index.chunk(hit.index)
    assert hit.text == chunk["text"] and hit.url == chunk["url"]


def test_readable_output(demo_html):
    proc = run_cli("search", str(demo_html), "standard scaler", "--k", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(" 1. [") and ".html#" in lines[1]


def test_fusion_baselines_answer_too(demo_html):
    for fusion in ("bm25", "dense"):
        proc = run_cli("search", str(demo_html), "dummy classifier strategy", "--json", "--fusion", fusion)
        assert proc.returncode == 0 and json.loads(proc.stdout), proc.stderr


def test_missing_index_gives_one_line_error(tmp_path):
    proc = run_cli("search", str(tmp_path), "anything")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "no search index" in proc.stderr and "sphinx-build -b html" in proc.stderr
