"""The golden set (golden.py): a build checks the searches readers depend on, warns for
each that falls short (so -W fails), and `sphinx-rag golden add` / `evaluate` share its file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sphinx_rag.tools import golden
from sphinx_rag.cli import main
from sphinx_rag.tools.evaluate import evaluate, load_questions

ROOTS = Path(__file__).parent / "roots"


def test_load_names_the_file_and_the_entry(tmp_path):
    path = tmp_path / "golden.json"
    for text, message in ((" [", "is not JSON"), ('{"query": "x"}', "is not a list"),
                          ('[{"query": "", "url": "a.html"}]', "entry 1 has no query"),
                          ('[{"query": "q", "url": "https://x.org/a.html"}]', "relative to its root"),
                          ('[{"query": "q", "url": "a.html", "rank": 0}]', "whole number"),
                          ('[{"query": "q", "url": "a.html", "weight": 2}]', "entry 1 must be an object")):
        path.write_text(text)
        with pytest.raises(ValueError, match=message) as exc:
            golden.load(path)
        assert str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_a_page_url_is_met_by_any_of_its_passages_an_anchor_only_by_itself():
    assert golden.met_by("guide.html", ["guide.html#tuning"])
    assert golden.met_by("guide.html#tuning", ["other.html#x", "guide.html#tuning"])
    assert not golden.met_by("guide.html#tuning", ["guide.html#scaling"])
    assert not golden.met_by("guide.html", ["guide2.html#x"])


def test_golden_add_creates_and_appends(tmp_path, capsys):
    path = tmp_path / "docs" / "golden.json"
    assert main(["golden", "add", str(path), "impute missing values", "guide.html#imputation"]) == 0
    assert main(["golden", "add", str(path), "install with pip", "install.html", "--rank", "3"]) == 0
    assert "2 entries" in capsys.readouterr().out
    assert golden.load(path) == [golden.GoldenEntry("impute missing values", "guide.html#imputation", 10),
                                 golden.GoldenEntry("install with pip", "install.html", 3)]
    assert path.read_text().count("\n") == 4  # one entry per line
    assert main(["golden", "add", str(path), "q", "https://elsewhere.org/x.html"]) == 2
    assert "relative to its root" in capsys.readouterr().err
    assert len(golden.load(path)) == 2  # the refused entry was not written
    with pytest.raises(SystemExit):
        main(["golden", "add", str(path), "q", "x.html", "--rank", "-1"])


def test_golden_add_checks_the_url_against_the_built_site(tmp_path, demo_html, capsys):
    """A page or anchor the built site does not have is refused in one line ("no such
    page"), with --site or with the site sphinx-build puts beside the golden file; nothing
    is written. A blank query is the query's fault, not the file's."""
    path = tmp_path / "golden.json"
    site = ["--site", str(demo_html)]
    assert main(["golden", "add", str(path), "padding", "pywt.padd.html", *site]) == 2
    err = capsys.readouterr().err
    assert "no such page: pywt.padd.html" in err and "nothing added" in err and err.count("\n") == 1
    assert not path.exists()
    url = "api/generated/mlkit.impute.SimpleImputer.html"
    assert main(["golden", "add", str(path), "imputer", url + "#no-such-anchor", *site]) == 2
    assert "no such anchor" in capsys.readouterr().err
    assert main(["golden", "add", str(path), "imputer", url + "#mlkit.impute.SimpleImputer", *site]) == 0
    assert main(["golden", "add", str(path), "imputer", url, *site]) == 0
    assert len(golden.load(path)) == 2
    assert main(["golden", "add", str(path), "x", "index.html", "--site", str(tmp_path)]) == 2
    assert "not a built HTML site" in capsys.readouterr().err
    assert main(["golden", "add", str(path), "x", "https://elsewhere.org/a.html", *site]) == 2
    assert "relative to its root" in capsys.readouterr().err  # what a URL must be, not "no such page"
    assert main(["golden", "add", str(path), "x", "../../../etc/hostname", *site]) == 2
    assert "no such page" in capsys.readouterr().err  # nothing outside the site is looked at

    docs = tmp_path / "docs"  # the layout sphinx-build makes: docs/_build/html beside docs/golden.json
    shutil.copytree(demo_html, docs / "_build" / "html")
    assert main(["golden", "add", str(docs / "golden.json"), "padding", "pywt.padd.html"]) == 2
    assert "no such page" in capsys.readouterr().err

    for query in ("", "   "):
        assert main(["golden", "add", str(path), query, "index.html"]) == 2
        err = capsys.readouterr().err
        assert "the query is empty" in err and "entry" not in err and str(path) not in err
    assert len(golden.load(path)) == 2


def test_the_check_says_no_such_page_and_names_each_top_url_once(demo_html):
    from sphinx_rag.search.retrieve import Searcher

    entries = [golden.GoldenEntry("padding modes", "pywt.padd.html", 3),
               golden.GoldenEntry("SimpleImputer", "index.html", 1)]
    missing, short = golden.check(Searcher(demo_html), entries, site_dir=demo_html)
    assert not missing.ok and golden.shortfall(missing) == (
        f"golden set: 'padding modes' should find pywt.padd.html: no such page: pywt.padd.html is not in {demo_html}")
    line = golden.shortfall(short)
    top = line.split("(top: ")[1].rstrip(")").split(", ")
    assert len(top) == len(set(top)) == 3  # the imputer's page has two passages in its top 3
    assert top[0] == "api/generated/mlkit.impute.SimpleImputer.html#mlkit.impute.SimpleImputer"


def _build(tmp_path: Path, entries: list[dict], *options: str) -> subprocess.CompletedProcess:
    src = tmp_path / "src"
    if not src.exists():
        shutil.copytree(ROOTS / "test-narrative", src)
        (src / "conf.py").write_text((src / "conf.py").read_text() + '\nsphinx_rag_golden = "golden.json"\n')
    (src / "golden.json").write_text(json.dumps(entries))
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-E", *options, str(src),
                           str(tmp_path / "html")], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_build_checks_the_golden_set_and_w_fails_on_a_shortfall(tmp_path):
    good = [{"query": "median is more robust to outliers", "url": "guide.html", "rank": 3},
            {"query": "Shell completion", "url": "install.html#shell-completion", "rank": 1}]
    proc = _build(tmp_path, good, "-W")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "golden set: 2/2 within rank" in proc.stdout

    bad = [*good, {"query": "Shell completion", "url": "guide.html#tuning", "rank": 1},
           {"query": "padding", "url": "pywt.padd.html"}]
    proc = _build(tmp_path, bad)
    assert proc.returncode == 0  # without -W a shortfall is a warning
    line, missing = [line for line in proc.stderr.splitlines() if "golden set:" in line]
    assert "'Shell completion' should find guide.html#tuning within rank 1" in line
    assert "install.html#shell-completion" in line  # the actual top result is named
    assert f"'padding' should find pywt.padd.html: no such page: pywt.padd.html is not in {tmp_path / 'html'}" in missing
    assert "golden set: 2/4 within rank" in proc.stdout
    assert _build(tmp_path, bad, "-W").returncode != 0

    proc = _build(tmp_path, [{"query": "x"}])  # a malformed file: one warning naming it, the index stays
    assert "golden.json" in proc.stderr and "entry 1" in proc.stderr and proc.returncode == 0


def test_evaluate_reads_a_golden_file(demo_html):
    questions = load_questions(Path(__file__).parent.parent / "demo_docs" / "search_golden.json")
    assert questions[0]["question"] == "SimpleImputer" and questions[0]["style"] == "golden"
    report = evaluate(demo_html, questions, methods=["bm25"])
    assert report["bm25"]["overall"]["n"] == len(questions)
    assert report["bm25"]["overall"]["recall@10"] > 0.8


def test_the_demo_ships_a_golden_set_it_meets(demo_html):
    """CI's demo build checks it (demo_docs/conf.py); here the same check on the session's build."""
    from sphinx_rag.search.retrieve import Searcher

    entries = golden.load(Path(__file__).parent.parent / "demo_docs" / "search_golden.json")
    outcomes = golden.check(Searcher(demo_html), entries)
    assert len(outcomes) >= 15
    assert [golden.shortfall(o) for o in outcomes if not o.ok] == []


def _cli(*args: str, cwd: Path, **popen) -> subprocess.Popen:
    """``python -m sphinx_rag ARGS`` in a process of its own. As root (containers, CI),
    without the capabilities that let root write where the permissions say no, so a
    read-only directory is read-only to it too."""
    def drop_dac_override():
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: gone at exec
            libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP

    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return subprocess.Popen([sys.executable, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=drop_dac_override if root else None, **popen)


def test_golden_add_where_it_cannot_write_says_so_in_one_line(tmp_path):
    """A read-only directory (with or without the file), a parent that is a file: one line
    on stderr, exit 2, no traceback, nothing left behind."""
    read_only = tmp_path / "ro"
    read_only.mkdir()
    (tmp_path / "ro-with-file").mkdir()
    (tmp_path / "ro-with-file" / "golden.json").write_text('[{"query": "q", "url": "a.html"}]\n')
    (tmp_path / "a-file").write_text("not a directory")
    for d in (read_only, tmp_path / "ro-with-file"):
        d.chmod(0o555)
    cases = [(read_only / "golden.json", "Permission denied"),
             (tmp_path / "ro-with-file" / "golden.json", "Permission denied"),
             (tmp_path / "a-file" / "golden.json", "is a file, not a directory"),
             (tmp_path / "a-file" / "sub" / "golden.json", "is a file, not a directory")]
    try:
        for path, reason in cases:
            proc = _cli("-m", "sphinx_rag", "golden", "add", str(path), "a query", "guide.html", cwd=tmp_path)
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 2, (path, out, err)
            assert err.count("\n") == 1 and err.startswith("[sphinx-rag] golden set ") and reason in err, (path, err)
            assert "Traceback" not in err and out == ""
        assert list(read_only.iterdir()) == []
        assert sorted(p.name for p in (tmp_path / "ro-with-file").iterdir()) == ["golden.json"]
    finally:
        for d in (read_only, tmp_path / "ro-with-file"):
            d.chmod(0o755)


def test_concurrent_golden_adds_keep_every_entry(tmp_path):
    """16 ``golden add`` runs at once (each process imported and waiting for the same start
    signal, then the CLI's own main): all 16 entries are in the file, an entry written
    before is kept with its note, and the file keeps its mode."""
    path = tmp_path / "docs" / "golden.json"
    path.parent.mkdir()
    path.write_text('[\n  {"query": "kept", "url": "kept.html", "note": "written by hand"}\n]\n')
    path.chmod(0o664)
    go, ready = tmp_path / "go", tmp_path / "ready"
    ready.mkdir()
    script = ("import os, sys, time\nfrom sphinx_rag.cli import main\n"
              "open(sys.argv[2], 'w').close()\n"
              "while not os.path.exists(sys.argv[1]):\n    time.sleep(0.001)\n"
              "sys.exit(main(sys.argv[3:]))\n")
    procs = [_cli("-c", script, str(go), str(ready / str(n)), "golden", "add", str(path), f"query {n}",
                  f"page{n}.html", "--rank", "3", cwd=tmp_path) for n in range(16)]
    while len(list(ready.iterdir())) < 16:  # every process has imported sphinx_rag and waits
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs if p.poll() is not None]
        time.sleep(0.05)
    go.touch()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "added to" in out
    entries = golden.load(path)
    assert len(entries) == 17
    assert entries[0] == golden.GoldenEntry("kept", "kept.html") and '"note": "written by hand"' in path.read_text()
    assert sorted(e.query for e in entries[1:]) == sorted(f"query {n}" for n in range(16))
    assert all(e.rank == 3 for e in entries[1:])
    assert path.stat().st_mode & 0o777 == 0o664
    assert sorted(p.name for p in path.parent.iterdir()) == [".golden.json.lock", "golden.json"]
