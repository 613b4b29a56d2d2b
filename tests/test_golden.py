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


def _build(tmp_path: Path, entries: list[dict] | None, *options: str) -> subprocess.CompletedProcess:
    """A build of test-narrative with ``entries`` as its golden set (None: golden.json as it is)."""
    src = tmp_path / "src"
    if not src.exists():
        shutil.copytree(ROOTS / "test-narrative", src)
        (src / "conf.py").write_text((src / "conf.py").read_text() + '\nsphinx_rag_golden = "golden.json"\n')
    if entries is not None:
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

    (tmp_path / "src" / "golden.json").unlink()  # a link to /dev/zero: one warning, the build goes on (issue 42)
    (tmp_path / "src" / "golden.json").symlink_to("/dev/zero")
    proc = _build(tmp_path, None)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    assert [line for line in proc.stderr.splitlines() if "golden" in line] == [
        line for line in proc.stderr.splitlines() if "golden.json: is not a regular file" in line and "WARNING" in line]
    assert len([line for line in proc.stderr.splitlines() if "golden" in line]) == 1
    assert "build succeeded" in proc.stdout


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


# -- hostile golden files (issue 42, items 11 and 14) ----------------------------------------------

def test_golden_add_writes_through_a_symlink(tmp_path, capsys):
    """A golden file that is a symlink (a chain of them, relative or not): the entry goes to
    the file at its end, replaced there, and every link stays a link (previously the link was
    replaced by a regular file and its target never got the entry). A link to a file not
    made yet makes it; a loop of links is one line."""
    shared = tmp_path / "shared"
    shared.mkdir()
    target = shared / "golden.json"
    target.write_text('[\n  {"query": "kept", "url": "kept.html", "note": "by hand"}\n]\n')
    target.chmod(0o640)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "middle.json").symlink_to(target)
    (docs / "golden.json").symlink_to("middle.json")  # relative, to another link
    assert main(["golden", "add", str(docs / "golden.json"), "impute", "guide.html#imputation"]) == 0
    assert "2 entries" in capsys.readouterr().out
    assert (docs / "golden.json").is_symlink() and os.readlink(docs / "golden.json") == "middle.json"
    assert (docs / "middle.json").is_symlink()
    assert golden.load(target) == [golden.GoldenEntry("kept", "kept.html"),
                                   golden.GoldenEntry("impute", "guide.html#imputation")]
    assert '"note": "by hand"' in target.read_text() and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in shared.iterdir()) == [".golden.json.lock", "golden.json"]  # no temp file left

    (docs / "new.json").symlink_to(shared / "new.json")  # dangling: the file it names is made
    assert main(["golden", "add", str(docs / "new.json"), "q", "a.html"]) == 0
    assert (docs / "new.json").is_symlink() and golden.load(shared / "new.json") == [golden.GoldenEntry("q", "a.html")]

    (docs / "loop-a.json").symlink_to("loop-b.json")
    (docs / "loop-b.json").symlink_to("loop-a.json")
    assert main(["golden", "add", str(docs / "loop-a.json"), "q", "a.html"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "loop of symlinks" in err and str(docs / "loop-a.json") in err
    assert (docs / "loop-a.json").is_symlink() and (docs / "loop-b.json").is_symlink()


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _capped(code: str, *args) -> subprocess.CompletedProcess:
    """``python -c code args`` with its address space capped (4 GB): a read without a cap
    (of /dev/zero) fails the test, not the machine."""
    import resource

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=120, preexec_fn=cap)


LOAD_EACH = """import json, sys, time
from sphinx_rag.tools import golden
for path in sys.argv[1:]:
    started = time.monotonic()
    try:
        golden.load(path)
        print(json.dumps([path, None, time.monotonic() - started]))
    except ValueError as exc:
        print(json.dumps([path, str(exc), time.monotonic() - started]))
"""


def test_a_golden_file_is_read_with_caps(tmp_path):
    """/dev/zero (or a link to it), a FIFO, a folder, a file over MAX_BYTES, 100,000-deep
    JSON: one ValueError line each, at once (previously a MemoryError, a FIFO waited
    forever, and a RecursionError traceback)."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "big.json").write_text('[{"query": "q", "url": "a.html", "note": "' + "x" * golden.MAX_BYTES + '"}]')
    (tmp_path / "deep.json").write_text(_deep(100_000))
    (tmp_path / "deep-note.json").write_text('[{"query": "q", "url": "a.html", "note": ' + _deep(golden.MAX_DEPTH) + "}]")
    cases = {Path("/dev/zero"): "not a regular file", tmp_path / "zero.json": "not a regular file",
             fifo: "not a regular file", tmp_path: "not a regular file", tmp_path / "big.json": "larger than 4 MB",
             tmp_path / "deep.json": f"more than {golden.MAX_DEPTH} deep",
             tmp_path / "deep-note.json": f"more than {golden.MAX_DEPTH} deep"}
    proc = _capped(LOAD_EACH, *cases)
    outcomes = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [Path(path) for path, _, _ in outcomes] == list(cases), proc.stderr[-2000:]
    for (path, message, seconds), reason in zip(outcomes, cases.values()):
        assert message and reason in message and path in message and "\n" not in message, (path, message)
        assert seconds < 10, path


def test_brackets_in_strings_and_a_note_within_the_depth_cap_are_read(tmp_path):
    path = tmp_path / "golden.json"
    path.write_text('[{"query": "q ' + "[" * 1000 + '", "url": "a.html", "note": "\\" {{{{"}]')
    assert golden.load(path)[0].query.startswith("q [[[")
    path.write_text('[{"query": "q", "url": "a.html", "note": ' + _deep(golden.MAX_DEPTH - 2) + "}]")
    assert len(golden.load(path)) == 1


def test_golden_add_of_a_hostile_file_is_one_line_and_leaves_it(tmp_path):
    """``golden add`` to a link to /dev/zero, to 100,000-deep JSON: exit 2, one line, no
    traceback, nothing written (no lock file beside /dev/zero either); run with its address
    space capped, so a read without a cap fails the test rather than the machine."""
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "deep.json").write_text(_deep(100_000))
    for name, reason in (("zero.json", "not a regular file"), ("deep.json", "deep")):
        proc = _capped("import sys; from sphinx_rag.cli import main; sys.exit(main(sys.argv[1:]))",
                       "golden", "add", tmp_path / name, "q", "a.html")
        assert proc.returncode == 2, (name, proc.stderr[-2000:])
        assert proc.stderr.count("\n") == 1 and reason in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert (tmp_path / "zero.json").is_symlink() and (tmp_path / "deep.json").read_text() == _deep(100_000)
    assert not Path("/dev/.zero.lock").exists()


CHECK_GOLDEN = """import json, sys
from pathlib import Path
from types import SimpleNamespace
from sphinx_rag import index_step
warnings = []
index_step.logger.warning = lambda message, **kw: warnings.append([message, kw])
folder = Path(sys.argv[1])
app = SimpleNamespace(config=SimpleNamespace(sphinx_rag_golden=sys.argv[2]), confdir=str(folder),
                      outdir=str(folder / "html"))
index_step.check_golden(app, folder / "html" / "_static" / "sphinx_rag" / "index")
print(json.dumps(warnings))
"""


def test_the_build_warns_once_for_a_hostile_golden_file_and_goes_on(tmp_path):
    """index_step.check_golden: a golden file that is a link to /dev/zero or 100,000-deep
    JSON is one warning (type sphinx_rag.golden), no exception: the build goes on (the slow
    test builds it)."""
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    (tmp_path / "deep.json").write_text(_deep(100_000))
    for name, reason in (("zero.json", "not a regular file"), ("deep.json", "deep")):
        proc = _capped(CHECK_GOLDEN, tmp_path, name)
        assert proc.returncode == 0, proc.stderr[-2000:]
        warnings = json.loads(proc.stdout)
        assert len(warnings) == 1 and reason in warnings[0][0] and "\n" not in warnings[0][0], warnings
        assert warnings[0][1] == {"type": "sphinx_rag", "subtype": "golden"}
