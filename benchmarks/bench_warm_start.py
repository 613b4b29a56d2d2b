"""What the warm start saves a CI build (issue 26): a build with empty caches, with and
without the published site reachable, against plain Sphinx.

For each site: a cold build is published (served over HTTP from a local directory by
``site_helpers.StaticServer``); then, interleaved in each round, on a fresh output and
doctree directory with ``SPHINX_RAG_EMBED_CACHE=0`` (a CI runner: no embedding cache; the
model export stays cached, as a pre-exported ``sphinx_rag_model`` would be):

- plain Sphinx (``SPHINX_RAG_DISABLE=1``),
- cold: sphinx_rag without the warm start (``SPHINX_RAG_WARM_START=0``),
- warm: the warm start from the published copy (the same sources),
- warm (one page edited): the same, after a paragraph is added to one page;
- with ``--fetch-model``, warm (empty model cache): the warm start with a model cache emptied
  before each run, so the model comes from the site too (a runner without torch), and,
  untimed by Sphinx, what it replaces: the export into an empty cache alone.

Not a test: prints medians, ratios to plain Sphinx and the load average (these machines
are shared; run with the others quiet for numbers that mean anything), and checks that the
warm build's index is byte-identical to the published one.

    python benchmarks/bench_warm_start.py --site demo --runs 3
    python benchmarks/bench_warm_start.py --site sk=/work/corpora/sk --runs 3
    python benchmarks/bench_warm_start.py --site demo --runs 3 --kinds plain,warm --fetch-model
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
from pathlib import Path

from harness import Stopwatch, copy_sources, first_listed_page, load, run_list
from site_helpers import DEMO, StaticServer, index_files

from sphinx_rag.search.index import ASSET_DIR
from sphinx_rag.index.warm_start import ENV

KINDS = ("plain", "cold", "warm", "warm (one page edited)")
FETCH_MODEL = "warm (empty model cache)"


def build(src: Path, out: Path, jobs: int, env: dict, options: tuple[str, ...] = ()) -> tuple[float, str, float]:
    """(seconds, the sphinx-rag lines of the log, 1-min load average before) of a fresh build."""
    shutil.rmtree(out, ignore_errors=True)
    before = load()
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-j", str(jobs), "-d", str(out / ".doctrees"),
           *options, str(src), str(out)]
    with Stopwatch() as t:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src,
                              env={**os.environ, "SPHINX_RAG_EMBED_CACHE": "0", **env})
    if proc.returncode:
        raise SystemExit(f"build of {src} failed: {proc.stderr[-2000:]}")
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if "[sphinx-rag]" in line]
    return t.seconds, "\n".join(lines), before


def edited_copy(src: Path, work: Path) -> Path:
    """The sources with one paragraph added to the first page the root toctree lists."""
    copy = work / "src-edited"
    shutil.rmtree(copy, ignore_errors=True)
    copy_sources(src, copy)
    page = first_listed_page(copy)
    page.write_text(page.read_text() + "\n\nA benchmark edit: the estimator's warm start keeps the fitted "
                    "coefficients between calls, so a second fit starts from them.\n")
    return copy


def export_seconds(cache: Path) -> float:
    """How long exporting the default model into an empty cache takes (a subprocess, as a build)."""
    shutil.rmtree(cache, ignore_errors=True)
    code = f"from sphinx_rag.model.cache import cached_model_dir; from sphinx_rag.model.source import DEFAULT_MODEL; cached_model_dir(DEFAULT_MODEL, {str(cache)!r})"
    with Stopwatch() as t:
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return t.seconds


def bench(name: str, src: Path, work: Path, runs: int, jobs: int, kinds: tuple[str, ...] = KINDS,
          reuse: bool = False):
    print(f"== {name}: {src}", flush=True)
    published = work / "published"
    if reuse and (published / ASSET_DIR / "manifest.json").is_file():
        print(f"published: {published} (kept from an earlier run)", flush=True)
    else:
        seconds, log, load = build(src, published, jobs, {ENV: "0", "SPHINX_RAG_EMBED_CACHE": "1"})
        print(f"published (cold, embedding cache as found): {seconds:.1f} s, load {load:.1f}", flush=True)
    edited = edited_copy(src, work)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    exports: list[float] = []
    model_cache = work / "model-cache"
    loads: list[float] = []
    reports: dict[str, str] = {}
    with StaticServer(published) as server:
        setups = {"plain": (src, {"SPHINX_RAG_DISABLE": "1"}), "cold": (src, {ENV: "0"}),
                  "warm": (src, {ENV: server.url}), "warm (one page edited)": (edited, {ENV: server.url}),
                  FETCH_MODEL: (src, {ENV: server.url})}
        for r in range(runs):
            for kind in kinds:
                where, env = setups[kind]
                out = work / re.sub(r"\W+", "-", kind)
                options = ()
                if kind == FETCH_MODEL:
                    shutil.rmtree(model_cache, ignore_errors=True)
                    options = ("-D", f"sphinx_rag_model_cache={model_cache}")
                seconds, log, load = build(where, out, jobs, env, options)
                times[kind].append(seconds)
                loads.append(load)
                print(f"  round {r + 1} {kind:<24} {seconds:7.1f} s  load {load:5.1f}", flush=True)
                if kind.startswith("warm"):
                    reports[kind] = "\n".join(line for line in log.splitlines()
                                              if "warm start" in line or "embedding" in line or "encoder" in line)
                    if kind == "warm" and index_files(out) != index_files(published):
                        print("  !! the warm build's index differs from the published one", flush=True)
            if FETCH_MODEL in kinds:
                exports.append(export_seconds(model_cache))
                print(f"  round {r + 1} {'model export alone':<24} {exports[-1]:7.1f} s", flush=True)
                if kind == "cold":
                    fit = re.search(r"static query encoder fitted in ([0-9.]+) s", log)
                    if fit:
                        reports["cold fit"] = f"encoder fit {fit.group(1)} s of {seconds:.1f} s"
    plain = statistics.median(times["plain"])
    print(f"\n{name}: medians of {runs} interleaved runs, -j {jobs}, 1-min load average "
          f"{min(loads):.1f}-{max(loads):.1f} (median {statistics.median(loads):.1f})")
    print("| build | median | runs | vs plain Sphinx |")
    print("|---|---|---|---|")
    for kind in kinds:
        m = statistics.median(times[kind])
        print(f"| {kind} | {m:.1f} s | {run_list(times[kind])} | {m / plain:.2f}x |")
    if exports:
        print(f"| the model export it replaces (alone) | {statistics.median(exports):.1f} s | "
              f"{run_list(exports)} | |")
    for kind, text in reports.items():
        print(f"{kind}:\n  " + text.replace("\n", "\n  "))
    print(flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", action="append", default=[],
                        help="demo, or NAME=SOURCE_DIR (repeatable; default: demo)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="where the builds go (default: a temp dir)")
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help=f"the builds to time, comma-separated (default: {','.join(KINDS)})")
    parser.add_argument("--reuse-published", action="store_true",
                        help="keep the published build of an earlier run in --work (it is not timed)")
    parser.add_argument("--fetch-model", action="store_true",
                        help=f"also time '{FETCH_MODEL}' (the model from the site) and the export it replaces")
    args = parser.parse_args()
    kinds = tuple(k.strip() for k in args.kinds.split(","))
    if not kinds or set(kinds) - set(KINDS) or "plain" not in kinds:
        parser.error(f"--kinds: some of {', '.join(KINDS)}, plain included")
    kinds += (FETCH_MODEL,) if args.fetch_model else ()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-warm-"))
    for site in args.site or ["demo"]:
        name, _, path = site.partition("=")
        src = DEMO if name == "demo" and not path else Path(path)
        bench(name, src, work / name, args.runs, args.jobs, kinds, args.reuse_published)


if __name__ == "__main__":
    main()
