"""What a CI run pays for sphinx-rag (issue 26): cold builds against plain Sphinx, side by side.

Not a test: prints medians and ratios (these machines are noisy). For each corpus
(the 25k-chunk preset of ``make_api_corpus.py`` and a real API site given with
``--corpus-src``), in interleaved rounds (the order rotates each round, so no row
gets the quieter moments):

- ``plain``: Sphinx without sphinx_rag (``SPHINX_RAG_DISABLE=1``), fresh output;
- ``cold``: fresh output, an empty model cache (``SPHINX_RAG_CACHE`` -> a new
  directory: the model is exported, no chunk or pseudo-query vector is cached), no
  warm start: what every CI run without a published site pays; with ``--jobs 1`` also
  ``cold, nothing embedded ahead`` (``SPHINX_RAG_EMBED_AHEAD=0``: no worker embedding
  chunks while Sphinx reads and writes, ``embed_ahead.py``);
- ``cold + warm start``: the same, with the previous build served on 127.0.0.1
  (``tests/site_helpers.StaticServer``) and ``-D sphinx_rag_warm_start=URL``; skipped with
  a note when this branch has no such config value;
- ``one-page edit``: an incremental rebuild after a paragraph is appended to one
  page, with and without sphinx_rag (warm caches, as on a laptop);
- the encoder fit's share of each cold build, from the build's own note line
  ("static query encoder fitted in X s"); the model export's and the chunks'
  embedding's, from the build's output lines stamped as they arrive.

    python benchmarks/bench_cold.py --corpus-src /work/corpora/sk --runs 3
    python benchmarks/bench_cold.py --skip-preset --corpus-src /work/corpora/sk --runs 1
    python benchmarks/bench_cold.py --skip-preset --corpus-src /work/corpora/sklearn/src --edit-only \
        --jobs 1 --edit-rounds 5 --before /tmp/before

``--edit-only`` times the one-page edit alone (no cold builds). ``--before DIR``: a
``sphinx_rag`` package of another commit in DIR (``git archive COMMIT sphinx_rag | tar -x
-C DIR``, then its built client: ``cp -r sphinx_rag/static DIR/sphinx_rag/``) is timed in
the same rounds, interleaved, as a third row (the machine's load drifts between runs).

Targets (issue 26): cold <= 2.5x plain, cold with the warm start <= 1.3x, one-page
edit <= 1.2x.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import copy_sources, edit_page, interleaved, load, run_list, scratch
from site_helpers import QuietHandler, StaticServer

TARGETS = {"cold": 2.5, "cold + warm start": 1.3, "one-page edit": 1.2}
FITTED = re.compile(r"static query encoder fitted in ([0-9.]+) s")


def has_warm_start() -> bool:
    """Whether this branch declares the config value ``sphinx_rag_warm_start``."""
    from sphinx_rag import config

    return "sphinx_rag_warm_start" in Path(config.__file__).read_text()


#: ``python -m sphinx`` with the ``sphinx_rag`` package of another tree (``--before``): this
#: checkout's editable install would win over PYTHONPATH, so its finder is dropped first.
_OTHER_TREE = """
import sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, sys.argv.pop(1))
import sphinx_rag
assert sphinx_rag.__file__.startswith(sys.path[0]), sphinx_rag.__file__
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""


def sphinx(src: Path, out: Path, *, rag: bool, jobs: int, cache: Path | None = None, options: tuple = (),
           clean: bool = True, log: Path | None = None, ahead: bool = True, tree: Path | None = None) -> float:
    """Seconds of one real ``python -m sphinx -b html`` (its output written to ``log``);
    ``ahead``: False sets ``SPHINX_RAG_EMBED_AHEAD=0`` (nothing embedded before the index step);
    ``tree``: a directory holding another commit's ``sphinx_rag`` package, built with instead."""
    env = {**os.environ, "SPHINX_RAG_WARM_START": "0"}  # no warm start unless asked by -D (below)
    if not ahead:
        env["SPHINX_RAG_EMBED_AHEAD"] = "0"
    if any(o.startswith("sphinx_rag_warm_start=") for o in options):
        del env["SPHINX_RAG_WARM_START"]
    if rag:
        env.pop("SPHINX_RAG_DISABLE", None)
    else:
        env["SPHINX_RAG_DISABLE"] = "1"
    if cache is not None:
        env["SPHINX_RAG_CACHE"] = str(cache)
    if clean:
        shutil.rmtree(out, ignore_errors=True)
    launch = ["-c", _OTHER_TREE, str(tree)] if tree is not None else ["-m", "sphinx"]
    cmd = [sys.executable, *launch, "-b", "html", "-j", str(jobs), "-d", str(out / ".doctrees"),
           *options, str(src), str(out)]
    start = time.perf_counter()
    with open(log or os.devnull, "w") as fh:  # each line stamped with the seconds since the start
        proc = subprocess.Popen(cmd, cwd=src, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        for line in proc.stdout:
            fh.write(f"{time.perf_counter() - start:8.1f}\t{line}")
        proc.wait()
    seconds = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"sphinx-build {src} failed ({proc.returncode}); see {log}")
    return seconds


def fit_seconds(log: Path) -> float | None:
    found = FITTED.findall(log.read_text(errors="replace")) if log.is_file() else []
    return float(found[-1]) if found else None


def phases(log: Path) -> dict[str, float]:
    """Seconds of the model export and of the chunks' embedding, from the stamped log lines:
    from the export's announcement to the next line, and from "embedding N new chunk texts"
    to the next sphinx-rag line."""
    lines = []
    for raw in log.read_text(errors="replace").splitlines() if log.is_file() else []:
        stamp, _, text = raw.partition("\t")
        try:
            lines.append((float(stamp), text))
        except ValueError:
            continue
    out = {}
    for i, (t, text) in enumerate(lines):
        nxt = next((u for u, later in lines[i + 1:] if "[sphinx-rag]" in later or "writing" in later), None)
        if nxt is None:
            continue
        if "[sphinx-rag]" in text and "export" in text and "export" not in out:
            out["export"] = nxt - t
        elif "new chunk texts" in text:
            out["chunk embedding"] = next((u for u, later in lines[i + 1:] if "[sphinx-rag]" in later), nxt) - t
    return out


def bench(name: str, src: Path, work: Path, runs: int, jobs: int, edit_rounds: int, *, edit_only: bool = False,
          before: Path | None = None) -> None:
    """Cold builds (unless ``edit_only``) and one-page edits of ``src``, printed as a table;
    ``before``: another commit's package (``sphinx``'s ``tree``), its edits timed in the same rounds."""
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    if edit_only:
        say(f"\n## {name}: one-page edits, -j {jobs}\n")
        edits(src, work, jobs, edit_rounds, before)
        return
    warm = has_warm_start()
    times: dict[str, list[float]] = {"plain": [], "cold": []}
    if jobs == 1:  # embedding ahead needs a serial build: with and without it
        times["cold, nothing embedded ahead"] = []
    if warm:
        times["cold + warm start"] = []
    fits: dict[str, list[float]] = {k: [] for k in times}
    loads: list[float] = []
    parts: dict[tuple[str, str], list[float]] = {}
    published = work / "published"  # the previous build, served for the warm start
    work.mkdir(parents=True, exist_ok=True)
    say(f"\n## {name}\n")
    for r, row in interleaved(list(times), runs):
        cache = Path(tempfile.mkdtemp(prefix="model-cache-", dir=work))  # empty: export + embed everything
        log = work / f"{row.replace(' ', '_')}-{r}.log"
        if row == "plain":
            t = sphinx(src, work / "plain", rag=False, jobs=jobs, log=log)
        elif row.startswith("cold,"):
            t = sphinx(src, work / "cold-noahead", rag=True, jobs=jobs, cache=cache, log=log, ahead=False)
        elif row == "cold":
            t = sphinx(src, work / "cold", rag=True, jobs=jobs, cache=cache, log=log)
            if not published.is_dir():
                shutil.copytree(work / "cold", published, ignore=shutil.ignore_patterns(".doctrees"))
        else:
            if not published.is_dir():
                sphinx(src, published, rag=True, jobs=jobs, log=work / "publish.log")
            with StaticServer(published, QuietHandler) as server:
                t = sphinx(src, work / "warm", rag=True, jobs=jobs, cache=cache, log=log,
                           options=("-D", f"sphinx_rag_warm_start={server.url}"))
        shutil.rmtree(cache, ignore_errors=True)
        times[row].append(t)
        fit = fit_seconds(log)
        if fit is not None:
            fits[row].append(fit)
        for phase, seconds in phases(log).items():
            parts.setdefault((row, phase), []).append(seconds)
        loads.append(load())
        say(f"round {r + 1}: {row}: {t:.1f} s" + (f" (encoder fit {fit:.1f} s)" if fit is not None else "")
            + f", load {loads[-1]:.1f}")
    plain = statistics.median(times["plain"])
    say("\n| build | median s (runs) | x plain Sphinx | target | encoder fit: median s, share |")
    say("|---|---|---|---|---|")
    for row, ts in times.items():
        med = statistics.median(ts)
        target = TARGETS.get(row)
        verdict = "" if target is None else f"<= {target}x: {'met' if med / plain <= target else 'MISSED'}"
        fit = (f"{statistics.median(fits[row]):.1f} s, {statistics.median(fits[row]) / med:.0%}"
               if fits[row] else ("no fit (reused)" if row != "plain" else ""))
        say(f"| {row} | {med:.1f} ({run_list(ts, '.0f')}) | {med / plain:.2f}x | {verdict} | {fit} |")
    for (row, phase), ts in sorted(parts.items()):
        say(f"| {row}: {phase} (from the log's stamps) | {statistics.median(ts):.1f} | "
            f"{statistics.median(ts) / statistics.median(times[row]):.0%} of it | | |")
    if not warm:
        say("| cold + warm start | skipped: this branch has no config value sphinx_rag_warm_start | | <= 1.3x | |")
    if edit_rounds:
        edits(src, work, jobs, edit_rounds, before, loads)
    say(f"\nload average during the runs: median {statistics.median(loads):.1f}, max {max(loads):.1f} "
        f"(2 cores; other work competes for them); -j {jobs}")


def edits(src: Path, work: Path, jobs: int, rounds: int, before: Path | None = None,
          loads: list[float] | None = None) -> None:
    """A paragraph appended to one page (``bench_build.edit_page``), then an incremental
    build, with and without sphinx_rag (and with ``before``'s), in interleaved rounds; warm
    caches, as on a laptop. Each output is built once first (settled: nothing to do)."""
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    rows = [("plain Sphinx", False, None, "plain"), ("sphinx-rag", True, None, "cold")]
    rows += [(f"sphinx-rag before ({before})", True, before, "before")] if before is not None else []
    times: dict[str, list[float]] = {row[0]: [] for row in rows}
    for _, rag, tree, into in rows:
        sphinx(src, work / into, rag=rag, jobs=jobs, clean=False, tree=tree)
        sphinx(src, work / into, rag=rag, jobs=jobs, clean=False, tree=tree)  # settle: nothing to do
    loads = [] if loads is None else loads
    for _, (label, rag, tree, into) in interleaved(rows, rounds):
        page, old = edit_page(src)
        try:
            times[label].append(sphinx(src, work / into, rag=rag, jobs=jobs, clean=False, tree=tree))
        finally:
            page.write_text(old)
        sphinx(src, work / into, rag=rag, jobs=jobs, clean=False, tree=tree)  # back to the original
        loads.append(load())
    plain = statistics.median(times["plain Sphinx"])
    say("| one-page edit | median s (runs) | x plain Sphinx | target |")
    say("|---|---|---|---|")
    for label, ts in times.items():
        ratio = statistics.median(ts) / plain
        verdict = "" if label.startswith("plain") else f"<= 1.2x: {'met' if ratio <= 1.2 else 'MISSED'}"
        say(f"| {label} | {statistics.median(ts):.2f} ({run_list(ts, '.2f')}) | {ratio:.2f}x | "
            f"{verdict} |")
    say(f"\n{rounds} rounds, -j {jobs}; load average: median {statistics.median(loads):.1f}, max {max(loads):.1f} "
        "(2 cores; other work competes for them)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus-src", type=Path, action="append", default=[],
                        help="a real API site's source (copied; e.g. /work/corpora/sk)")
    parser.add_argument("--skip-preset", action="store_true", help="no 25k-chunk preset corpus")
    parser.add_argument("--preset", default="25k")
    parser.add_argument("--runs", type=int, default=3, help="interleaved rounds of plain / cold / warm")
    parser.add_argument("--edit-rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="parent of the temporary build directory")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--edit-only", action="store_true", help="only the one-page edits (no cold builds)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a directory holding another commit's sphinx_rag package, timed beside this one")
    args = parser.parse_args(argv)
    with scratch("sphinx-rag-cold-", args.work, keep=args.keep) as work:
        corpora = []
        if not args.skip_preset:
            from make_api_corpus import PRESETS, write_project

            modules, target = PRESETS[args.preset]
            src = work / "preset-src"
            n = write_project(src, modules, target)
            corpora.append((f"API corpus, preset {args.preset} ({n} objects)", src))
        for given in args.corpus_src:
            src = copy_sources(given, work / f"{given.name}-src")
            corpora.append((f"API site {given}", src))
        for i, (name, src) in enumerate(corpora):
            bench(name, src, work / f"c{i}", args.runs, args.jobs, args.edit_rounds, edit_only=args.edit_only,
                  before=args.before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
