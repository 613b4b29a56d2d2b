"""The "Ask" action end to end: real Chromium, real HTTP, tests/fake_llm_server.py.

The demo docs (built once per session, without LLM config) get the reader's override
in localStorage before the page loads (the settings panel's storage key), pointing at
the fake server; each server mode is chosen by the `/<mode>/v1` endpoint prefix (which
even the CORS preflight sees). A tiny keyword-only site (tests/roots/test-searchbar
plus a hostile page) is built with `sphinx_rag_llm` pointing at the fake server, for
the site-config path. Every wait is for a state or a text, never a duration.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import expect

from site_helpers import build_site, chunks_of, manifest_of

from site_helpers import fake_llm_server
from test_search_e2e import (INPUT, OPTIONS, QUESTION, STATUS, THEME_NOISE, open_with_shortcut, results_for,
                             wait_hybrid)

REPO = Path(__file__).resolve().parents[2]
ROOTS = REPO / "tests" / "roots"
STORAGE_KEY = "sphinx-rag-llm"  # js/src/ui/ask.js STORAGE_KEY
ASK = "section.sphinx-rag-ask"
ANSWER = ".sphinx-rag-answer"
NOTE = ".sphinx-rag-ask-note"
SOURCES = ".sphinx-rag-sources-list a"
ASK_BUTTON = "button.sphinx-rag-askbutton"
GEAR = "button.sphinx-rag-gear"
SETTINGS = "form.sphinx-rag-settings"
LONG = 60_000  # generous: the machine may be busy loading the semantic model
QUERY = "DummyClassifier strategy"
PAYLOAD_WORD = "quokkaflux"
PAYLOAD_SCRIPT = "<script>window.__pwned = 1</script>"
PAYLOAD_IMG = '<img src=x onerror="window.__pwned = 1">'
PASSAGE = re.compile(r"^\[(\d+)\] (.+) \((\S*)\)$", re.M)


# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def fake_llm():
    """tests/fake_llm_server.py in a subprocess: its base URL http://127.0.0.1:<port>."""
    with fake_llm_server(idle_minutes=30) as url:
        yield url


@pytest.fixture(scope="session")
def ask_site(tmp_path_factory, fake_llm) -> Path:
    """test-searchbar (alabaster, keyword-only) + a hostile page, with sphinx_rag_llm and
    sphinx_rag_feedback_url (a form on the fake LLM server) set in conf.py."""
    src = tmp_path_factory.mktemp("ask-src")
    shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
    with open(src / "conf.py", "a") as f:
        f.write('\nimport os\nsphinx_rag_llm = {"endpoint": os.environ["SPHINX_RAG_TEST_LLM"], "model": "normal"}\n'
                # a bad answer's report goes to a form there (the fake server answers 404: the URL is what counts)
                'sphinx_rag_feedback_url = os.environ["SPHINX_RAG_TEST_LLM"].removesuffix("/v1") + '
                '"/issues/new?title={query}&body={results}"\n')
    title = f"Payload {PAYLOAD_SCRIPT} page"
    (src / "payload.rst").write_text(
        f":orphan:\n\n{title}\n{'=' * len(title)}\n\nHostile passage\n---------------\n\n"
        f"The {PAYLOAD_WORD} setting is documented here. {PAYLOAD_SCRIPT} and {PAYLOAD_IMG}\n"
        "must both be shown as plain text.\n")
    out = tmp_path_factory.mktemp("ask") / "html"
    cmd = [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", str(src), str(out), "-d", str(out.parent / "dt")]
    env = {**os.environ, "SPHINX_RAG_TEST_LLM": f"{fake_llm}/v1"}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=src, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def set_reader_llm(context, settings: dict):
    """The reader's override, in localStorage before any page script runs."""
    value = json.dumps(json.dumps(settings))
    context.add_init_script(f"try {{ localStorage.setItem({json.dumps(STORAGE_KEY)}, {value}); }} catch (e) {{}}")


def last_request(base: str):
    with urllib.request.urlopen(f"{base}/_last_request", timeout=10) as r:
        return json.loads(r.read())


def chunks(html: Path) -> list[dict]:
    return chunks_of(html)


def problems(page) -> list[str]:
    return [p for p in page.log.problems() if not any(rx.match(p) for rx in THEME_NOISE)]


# -- helpers -------------------------------------------------------------------------------------


def ask(page, question: str, mode: str | None = None) -> list[str]:
    """Type the question, wait for its results, press Ctrl+Enter; the result ids asked about."""
    page.fill(INPUT, question)
    ids = results_for(page, question, mode)
    page.keyboard.press("Control+Enter")
    return ids


def ask_reader_llm(page, context, site, serve, endpoint: str, *, csp=None, **settings):
    """Serve the demo, give the reader an LLM endpoint, open the dialog and Ask QUERY."""
    server = serve(site, csp=csp)
    set_reader_llm(context, {"endpoint": endpoint, "model": "m", **settings})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    ask(page, QUERY)
    return server


def wait_state(page, state: str):
    expect(page.locator(ASK)).to_have_attribute("data-state", state, timeout=LONG)


def sent_passages(body: dict) -> list[tuple[str, str]]:
    """[(title, url)] of the numbered passages in the request's messages."""
    text = "\n".join(m["content"] for m in body["messages"])
    found = [(int(n), title, url) for n, title, url in PASSAGE.findall(text)]
    assert [n for n, _, _ in found] == list(range(1, len(found) + 1)), found
    return [(title, url) for _, title, url in found]


def assert_results_visible(page, question: str):
    """The search results of the question are still listed (maybe upgraded from keyword to hybrid)."""
    expect(page.locator(OPTIONS).first).to_be_visible()
    expect(page.locator("#sphinx-rag-listbox")).to_have_attribute("data-query", question)


def only_site_and_endpoint(page, server_url: str, endpoint_origin: str):
    foreign = [u for u in page.log.requests if not (u.startswith(server_url) or u.startswith(endpoint_origin + "/"))]
    assert foreign == []


def injected(page) -> dict:
    """What a successful injection would leave behind, inside the dialog and in the page."""
    return page.evaluate("""() => {
        const d = document.querySelector("dialog.sphinx-rag");
        const hrefs = [...d.querySelectorAll("a")].map(a => a.getAttribute("href") || "");
        return {
            scripts: d.querySelectorAll("script").length,
            imgs: d.querySelectorAll("img").length,
            handlers: [...d.querySelectorAll("*")].filter(e => [...e.attributes].some(a => /^on/i.test(a.name))).length,
            badHrefs: hrefs.filter(h => !/^(https?:|#|[^:]*$)/i.test(h.trim())),
            pwned: typeof window.__pwned,
        };
    }""")


# -- reader override on the demo site (pydata-sphinx-theme, hybrid) -------------------------------


def test_normal_answer_cites_and_lists_the_passages(page, context, site, serve, fake_llm):
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "normal"})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    expect(page.locator(ASK_BUTTON)).to_be_visible()
    wait_hybrid(page)
    ids = ask(page, QUESTION, "hybrid")
    wait_state(page, "done")

    answer = page.locator(ANSWER)
    expect(answer).to_contain_text("According to the documentation, the passage titled")
    expect(page.locator(ASK)).to_contain_text(QUESTION)
    body = last_request(fake_llm)
    assert body["stream"] is True and body["model"] == "normal"
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1]["content"].endswith("Question: " + QUESTION)
    sent = sent_passages(body)
    by_id = {c["id"]: c for c in chunks(site)}
    assert len(sent) >= 2
    assert sent == [(by_id[i]["title"], by_id[i]["url"]) for i in ids[:len(sent)]]
    # the LLM reads each passage's display form as plain text, as `sphinx-rag ask` sends it
    from sphinx_rag.llm.prompt import llm_passage
    from sphinx_rag.search.retrieve import Searcher

    top = llm_passage(Searcher(site).search(QUESTION, k=1)[0])
    assert f"[1] {top.title} ({top.url})\n{top.text}\n" in body["messages"][-1]["content"]
    assert "is described as" not in body["messages"][-1]["content"]

    # [1] and [2] link to the cited passages' pages + anchors, resolved from the site root.
    cites = page.locator(f"{ANSWER} a.sphinx-rag-cite")
    expect(cites).to_have_count(2)
    assert cites.all_inner_texts() == ["[1]", "[2]"]
    assert [cites.nth(k).get_attribute("href") for k in range(2)] == [server.url + url for _, url in sent[:2]]
    assert all("#" in url for _, url in sent[:2])
    # Sources: one link per passage sent, in citation order.
    links = page.locator(SOURCES)
    expect(links).to_have_count(len(sent))
    assert [links.nth(k).get_attribute("href") for k in range(len(sent))] == [server.url + u for _, u in sent]
    assert links.all_inner_texts() == [t.replace(" > ", " › ") for t, _ in sent]
    expect(page.locator(".sphinx-rag-ask-disclaimer")).to_contain_text("Generated by normal")
    assert_results_visible(page, QUESTION)
    assert page.evaluate("window.sphinxRag.ask.timings.firstToken !== null")

    only_site_and_endpoint(page, server.url, fake_llm)
    assert any(u == f"{fake_llm}/v1/chat/completions" for u in page.log.requests)
    assert problems(page) == []

    cites.first.click()  # a citation leads to the passage
    page.wait_for_url(server.url + sent[0][1])
    expect(page.locator("dialog.sphinx-rag")).not_to_have_attribute("open", "")


def test_stop_keeps_the_partial_answer(page, context, site, serve, fake_llm):
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/slow/v1")
    stop = page.locator("button.sphinx-rag-stop")
    expect(stop).to_be_visible()
    expect(page.locator(ANSWER)).to_contain_text("Asking m")
    wait_state(page, "streaming")
    expect(page.locator(ANSWER)).to_contain_text("According", timeout=LONG)
    stop.click()
    wait_state(page, "error")
    expect(page.locator(ASK)).to_have_attribute("data-error-kind", "aborted")
    expect(page.locator(NOTE)).to_have_text("Stopped: the answer is incomplete.")
    expect(page.locator(ANSWER)).to_contain_text("According")
    expect(stop).to_be_hidden()
    assert_results_visible(page, QUERY)


def test_timeout_is_shown(page, context, site, serve, fake_llm):
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/slow/v1", timeout=0.5)
    expect_error(page, "timeout", "did not answer within 0.5 s", "raise it for slow models")


def expect_error(page, kind: str, *notes: str):
    """The Ask panel ends in error `kind`, its note says each of `notes`, the results stay."""
    wait_state(page, "error")
    expect(page.locator(ASK)).to_have_attribute("data-error-kind", kind)
    for note in notes:
        expect(page.locator(NOTE)).to_contain_text(note)
    assert_results_visible(page, QUERY)


def test_disconnect_keeps_the_partial_answer_with_a_note(page, context, site, serve, fake_llm):
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/disconnect/v1")
    expect_error(page, "incomplete", "the answer is incomplete")
    expect(page.locator(ANSWER)).to_have_text("According to the documentation,")


def test_non_streaming_json_answer(page, context, site, serve, fake_llm):
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/json/v1")
    wait_state(page, "done")
    expect(page.locator(ANSWER)).to_contain_text("See also the second passage for details")
    expect(page.locator(f"{ANSWER} a.sphinx-rag-cite")).to_have_count(2)
    expect(page.locator(NOTE)).to_be_hidden()
    assert_results_visible(page, QUERY)


def test_server_error_message_is_shown(page, context, site, serve, fake_llm):
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/error500/v1")
    expect_error(page, "http", "HTTP 500", "model crashed: out of memory")


def test_cors_refusal_explains_ollama_origins(page, context, site, serve, fake_llm):
    """A server that answers a GET but refuses the POST's preflight: "running but refuses this site"."""
    server = ask_reader_llm(page, context, site, serve, f"{fake_llm}/nopreflight/v1")
    expect_error(page, "cors", "does not allow requests from this site (CORS)",
                 f"OLLAMA_ORIGINS={server.url.rstrip('/')} ollama serve", "llama-server")
    only_site_and_endpoint(page, server.url, fake_llm)


def test_a_server_refusing_every_request_may_be_stopped_or_refusing(page, context, site, serve, fake_llm):
    """No CORS header anywhere (Ollama without OLLAMA_ORIGINS): a browser cannot tell that from a
    stopped server without a no-cors probe, which would follow redirects to any host; the note
    gives both causes, with the OLLAMA_ORIGINS hint."""
    server = ask_reader_llm(page, context, site, serve, f"{fake_llm}/nocors/v1")
    expect_error(page, "unreachable", "Is the server running?",
                 "If it is running, it refuses requests from this site (CORS) or redirects them elsewhere",
                 f"OLLAMA_ORIGINS={server.url.rstrip('/')} ollama serve", "llama-server")
    only_site_and_endpoint(page, server.url, fake_llm)


def test_unreachable_server(page, context, site, serve):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    server = ask_reader_llm(page, context, site, serve, f"{endpoint}/v1")
    expect_error(page, "unreachable", f"Could not reach the LLM server at {endpoint}/v1", "Is the server running?")
    only_site_and_endpoint(page, server.url, endpoint)


def test_no_config_hides_ask_and_the_panel_enables_it(page, site, serve, fake_llm):
    """No site config, no reader setting: no Ask button and no request to any LLM; the gear's
    panel (keyboard only) saves the reader's endpoint in localStorage, and Ask appears."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type("DummyClassifier strategy")
    results_for(page, "DummyClassifier strategy")
    expect(page.locator(".sphinx-rag-settings-site")).to_have_count(1)
    expect(page.locator(ASK_BUTTON)).to_be_hidden()
    page.keyboard.press("Tab")
    expect(page.locator(GEAR)).to_be_focused()
    expect(page.locator(GEAR)).to_have_attribute("aria-label", "Settings")
    page.keyboard.press("Enter")
    form = page.locator(SETTINGS)
    expect(form).to_be_visible()
    expect(page.locator(GEAR)).to_have_attribute("aria-expanded", "true")
    expect(page.locator("#sphinx-rag-llm-endpoint")).to_be_focused()
    expect(form).to_contain_text("This site sets no LLM server")
    for label in ("Endpoint URL", "Model", "Timeout (s)"):
        expect(page.get_by_label(label, exact=True)).to_be_visible()

    page.keyboard.type("ftp://nope")
    page.keyboard.press("Enter")  # submits
    expect(page.locator(".sphinx-rag-settings-message")).to_contain_text("The endpoint URL is not valid")
    expect(page.locator("#sphinx-rag-llm-endpoint")).to_have_attribute("aria-invalid", "true")
    page.fill("#sphinx-rag-llm-endpoint", fake_llm.removeprefix("http://"))  # no scheme, no /v1: normalised
    page.keyboard.press("Tab")
    expect(page.locator("#sphinx-rag-llm-model")).to_be_focused()
    page.keyboard.type("normal")
    page.keyboard.press("Enter")
    expect(form).to_be_hidden()
    expect(page.locator(INPUT)).to_be_focused()
    stored = json.loads(page.evaluate(f"localStorage.getItem({json.dumps(STORAGE_KEY)})"))
    assert stored == {"endpoint": f"{fake_llm}/v1", "model": "normal"}
    assert not any(u.startswith(fake_llm) for u in page.log.requests)  # nothing sent before asking

    expect(page.locator(ASK_BUTTON)).to_be_visible()
    page.keyboard.press("Control+Enter")
    wait_state(page, "done")
    expect(page.locator(ANSWER)).to_contain_text("According to the documentation")
    assert last_request(fake_llm)["model"] == "normal"

    # Esc in the panel closes the panel, not the dialog; reset removes the reader's setting.
    page.locator(GEAR).click()
    page.keyboard.press("Escape")
    expect(form).to_be_hidden()
    expect(page.locator("dialog.sphinx-rag")).to_have_attribute("open", "")
    expect(page.locator(GEAR)).to_be_focused()
    page.keyboard.press("Enter")
    page.get_by_role("button", name="Reset to site default").click()
    expect(page.locator(".sphinx-rag-settings-message")).to_have_text("No LLM server is set: “Ask” is off.")
    assert page.evaluate(f"localStorage.getItem({json.dumps(STORAGE_KEY)})") is None
    expect(page.locator(ASK_BUTTON)).to_be_hidden()
    only_site_and_endpoint(page, server.url, fake_llm)


def test_panel_in_dark_mode(page, context, site, serve, fake_llm):
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "normal"})
    page.goto(server.url + "index.html")
    page.evaluate("document.documentElement.dataset.theme = 'dark'")
    open_with_shortcut(page)
    ask(page, "DummyClassifier strategy")
    wait_state(page, "done")
    page.locator(GEAR).click()

    def rgb(selector, prop="backgroundColor"):
        return page.evaluate(f"""() => getComputedStyle(document.querySelector({json.dumps(selector)}))
            .{prop}.match(/\\d+/g).slice(0, 3).map(Number)""")

    assert sum(rgb(SETTINGS)) < 250 and sum(rgb("#sphinx-rag-llm-endpoint")) < 250
    assert sum(rgb("#sphinx-rag-llm-endpoint", "color")) > 500
    assert sum(rgb(ANSWER, "color")) > 500


# -- site config (conf.py sphinx_rag_llm) on a tiny keyword-only site -----------------------------


def test_site_config_enables_ask_and_markup_stays_text(page, context, ask_site, serve, fake_llm):
    """Ask with the site's endpoint; a passage whose title and text hold <script>/<img onerror>
    is sent, quoted back by the model, and shown as text everywhere."""
    manifest = manifest_of(ask_site)
    assert manifest["settings"]["llm"]["endpoint"] == f"{fake_llm}/v1"
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    server = serve(ask_site)
    page.goto(server.url + "index.html")
    page.locator("#searchbox input[name=q]").click()  # alabaster's search box opens the dialog
    expect(page.locator(INPUT)).to_be_focused()
    expect(page.locator(ASK_BUTTON)).to_be_visible(timeout=LONG)  # from the manifest, no extra request
    ids = ask(page, PAYLOAD_WORD)
    assert ids[0] == "payload#hostile-passage:0"
    wait_state(page, "done")
    body = last_request(fake_llm)
    assert body["model"] == "normal" and body["stream"] is True
    assert body["messages"][0]["content"].startswith("You are an expert of the searchbar project.")
    title = f"Payload {PAYLOAD_SCRIPT} page > Hostile passage"
    assert sent_passages(body)[0] == (title, "payload.html#hostile-passage")
    assert PAYLOAD_IMG in body["messages"][-1]["content"]

    answer = page.locator(ANSWER)
    expect(answer).to_contain_text(f'the passage titled "{title}" answers this')
    expect(page.locator(SOURCES).first).to_have_text(title.replace(" > ", " › "))
    expect(page.locator(SOURCES).first).to_have_attribute("href", server.url + "payload.html#hostile-passage")
    assert injected(page) == {"scripts": 0, "imgs": 0, "handlers": 0, "badHrefs": [], "pwned": "undefined"}
    assert dialogs == []
    only_site_and_endpoint(page, server.url, fake_llm)
    assert problems(page) == []

    page.locator(GEAR).click()
    expect(page.locator(".sphinx-rag-settings-site")).to_have_text(
        f"Site default: {fake_llm}/v1, model normal.")
    expect(page.locator("#sphinx-rag-llm-endpoint")).to_have_value(f"{fake_llm}/v1")
    expect(page.get_by_role("button", name="Reset to site default")).to_be_disabled()
    page.fill("#sphinx-rag-llm-model", "json")  # the reader's override of the site's model
    page.get_by_role("button", name="Save").click()
    page.locator(ASK_BUTTON).click()
    wait_state(page, "done")
    assert last_request(fake_llm)["model"] == "json"
    page.locator(GEAR).click()
    page.get_by_role("button", name="Reset to site default").click()
    expect(page.locator(".sphinx-rag-settings-message")).to_have_text("Using the site’s default LLM settings.")
    expect(page.locator("#sphinx-rag-llm-model")).to_have_value("normal")
    expect(page.locator(ASK_BUTTON)).to_be_visible()


def test_hostile_answer_is_rendered_safely(page, context, ask_site, serve, fake_llm):
    """The xss mode's answer (<script>, <img onerror>, javascript:/data: links) about the hostile
    passage: markup shows as text, Markdown still works, unsafe links lose their href."""
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    set_reader_llm(context, {"endpoint": f"{fake_llm}/xss/v1", "model": "xss"})
    server = serve(ask_site)
    page.goto(server.url + "index.html")
    page.locator("#searchbox input[name=q]").click()  # alabaster's search box opens the dialog
    ask(page, PAYLOAD_WORD)
    wait_state(page, "done")
    answer = page.locator(ANSWER)
    expect(answer).to_contain_text("<script>alert(1)</script>")
    expect(answer).to_contain_text("An image: <img src=x onerror=alert(1)> and a click link")
    expect(answer.locator("strong")).to_have_text("bold")
    expect(answer.locator("em")).to_have_text("emphasis")
    safe = answer.locator("a", has_text="safe link")
    expect(safe).to_have_attribute("href", "https://example.org/page")
    expect(safe).to_have_attribute("rel", "noopener noreferrer")
    expect(answer.locator("a", has_text="click")).to_have_count(0)
    expect(answer.locator("a", has_text="data link")).to_have_count(0)
    # One passage was found and sent: [1] links to it, [2] cites nothing and stays text.
    expect(page.locator(SOURCES)).to_have_count(1)
    expect(answer.locator("a.sphinx-rag-cite")).to_have_count(1)
    expect(answer.locator("a.sphinx-rag-cite")).to_have_attribute("href", server.url + "payload.html#hostile-passage")
    expect(answer).to_contain_text("safe link [2].")
    expect(page.locator(SOURCES).first).to_contain_text(PAYLOAD_SCRIPT)
    assert injected(page) == {"scripts": 0, "imgs": 0, "handlers": 0, "badHrefs": [], "pwned": "undefined"}
    assert dialogs == []
    assert_results_visible(page, PAYLOAD_WORD)
    only_site_and_endpoint(page, server.url, fake_llm)


def test_site_policy_blocking_the_endpoint_is_named(page, context, site, serve, fake_llm):
    """A Content-Security-Policy whose connect-src leaves the endpoint out: Ask says so
    (not "is the server running?") and the results stay."""
    # default-src 'self': the fake LLM's port is another origin
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/v1", csp=True)
    expect_error(page, "csp", "Content-Security-Policy does not allow connections to",
                 f"connect-src 'self' {fake_llm.rstrip('/')}")


# -- hostile servers: redirects, endless answers --------------------------------------------------


def other_requests(base: str) -> list:
    """What the fake server's other host (where its redirects point) has received."""
    with urllib.request.urlopen(f"{base}/_other_requests", timeout=10) as r:
        return json.loads(r.read())


@pytest.mark.parametrize("mode", ["redirect307", "redirect302"])
def test_a_redirect_to_another_host_is_refused(page, context, site, serve, fake_llm, mode):
    """The endpoint answers the POST with a 307/302 (with CORS headers) to another host: the
    browser sends that host nothing (no preflight, no POST, no GET), and the panel says why.
    (Playwright lists the redirect's target as a request of the chain, which Chromium aborts
    unsent: the other host's own record is what counts, and no response came from it.)"""
    before = other_requests(fake_llm)
    responses = []
    context.on("response", lambda r: responses.append(r.url))
    server = ask_reader_llm(page, context, site, serve, f"{fake_llm}/{mode}/v1")
    expect_error(page, "redirect", f"The LLM server at {fake_llm}/{mode}/v1 answered HTTP 3xx, a redirect to an "
                 "address the browser does not show: Ask follows no redirect, so nothing was sent there.",
                 f"curl -si {fake_llm}/{mode}/v1/models")
    assert other_requests(fake_llm) == before
    assert [u for u in responses if not u.startswith((server.url, fake_llm + "/"))] == []
    expect(page.locator(ANSWER)).not_to_contain_text("OTHER HOST")


def test_a_redirect_without_cors_headers_is_not_probed_either(page, context, site, serve, fake_llm):
    """A 307 without CORS headers fails like a CORS refusal; the probe that tells a stopped
    server from a refusal follows no redirect either, so the other host still gets nothing."""
    before = other_requests(fake_llm)
    server = ask_reader_llm(page, context, site, serve, f"{fake_llm}/bareredirect/v1")
    expect_error(page, "unreachable", "refuses requests from this site (CORS) or redirects them elsewhere",
                 "Is the server running?")
    assert other_requests(fake_llm) == before
    only_site_and_endpoint(page, server.url, fake_llm)


def last_stream(base: str) -> dict:
    with urllib.request.urlopen(f"{base}/_last_stream", timeout=10) as r:
        return json.loads(r.read())


def round_trip(page) -> float:
    """Seconds for a page.evaluate to come back: how long the page's main thread makes one wait."""
    start = time.monotonic()
    page.evaluate("document.querySelector('section.sphinx-rag-ask').dataset.state")
    return time.monotonic() - start


def test_a_50_mb_answer_is_cut_at_the_cap_and_the_tab_stays_responsive(page, context, site, serve, fake_llm):
    """The server streams 50 MB as fast as it can: the panel stops at the default cap (20,000
    characters) with a note, aborts the request, and the page answers and takes typing."""
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/huge/v1")
    expect_error(page, "limit", "The answer was cut at 20,000 characters (the max_answer_chars setting): the "
                 "server did not end it.")
    timings = page.evaluate("window.sphinxRag.ask.timings")
    print(f"\n50 MB stream: cut after {(timings['end'] - timings['start']) / 1000:.2f} s")
    assert round_trip(page) < 5  # generous: the tab answers
    shown = page.evaluate("document.querySelector('.sphinx-rag-answer').textContent.length")
    assert 10_000 < shown <= 20_000
    stream = last_stream(fake_llm)  # aborted: the server saw the connection close before its end
    assert stream["mode"] == "huge" and stream["disconnected"] and not stream["complete"], stream
    page.locator(INPUT).focus()
    page.keyboard.type(" more")
    expect(page.locator(INPUT)).to_have_value(QUERY + " more")


RENDER_IN_NODE = """
import { readFileSync } from 'node:fs';
import { renderMarkdown } from './js/src/llm/markdown.js';
import { fakeDocument } from './js/test/fake_dom.js';
const text = readFileSync(0, 'utf8');
const sources = Number(process.env.SOURCES); // the passages sent: the citations that link
const frag = renderMarkdown(text, { doc: fakeDocument, citationUrl: (n) => (n <= sources ? `c${n}.html` : null) });
const tags = {};
for (const e of frag.elements()) tags[e.nodeName] = (tags[e.nodeName] || 0) + 1;
console.log(JSON.stringify({ text: frag.textContent, blocks: frag.childNodes.length, tags }));
"""


@pytest.fixture(scope="session")
def big_answer_site(tmp_path_factory, fake_llm) -> Path:
    """test-searchbar (keyword-only) with sphinx_rag_llm allowing 3,000,000-character answers."""
    src = tmp_path_factory.mktemp("big-answer-src")
    shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
    with open(src / "conf.py", "a") as f:
        f.write(f'\nsphinx_rag_llm = {{"endpoint": "{fake_llm}/v1", "model": "normal", "max_answer_chars": 3000000}}\n')
    out = tmp_path_factory.mktemp("big-answer") / "html"
    return build_site(src, out, "-d", str(out.parent / "dt"))


def test_a_2_mb_answer_renders_incrementally_and_equals_a_full_render(page, context, big_answer_site, serve,
                                                                      fake_llm):
    """2 MB of Markdown in 20-character tokens (100,000 of them), with the cap raised: the page
    stays responsive while it streams, the answer ends rendered exactly as renderMarkdown renders
    the whole text, and the time grows about linearly (0.5 MB vs 2 MB, printed; only a generous
    bound asserted: re-rendering the whole answer per token, as before, takes hours)."""
    server = serve(big_answer_site)
    seconds = {}
    for size in (500_000, 2_000_000):
        mode = f"md{size}t20"
        set_reader_llm(context, {"endpoint": f"{fake_llm}/{mode}/v1", "model": "m"})  # the site keeps its cap
        page.goto(server.url + "index.html")
        page.locator("#searchbox input[name=q]").click()
        ask(page, "searchbar")
        wait_state(page, "streaming")
        waits = []
        while page.evaluate("document.querySelector('section.sphinx-rag-ask').dataset.state") == "streaming":
            waits.append(round_trip(page))
            if len(waits) == 3:
                page.keyboard.type("!")  # typing while it streams
        wait_state(page, "done")
        expect(page.locator(NOTE)).to_be_hidden()
        timings = page.evaluate("window.sphinxRag.ask.timings")
        seconds[size] = (timings["end"] - timings["start"]) / 1000
        waits.sort()
        print(f"\n{size:,} characters: {seconds[size]:.2f} s; page round trips while streaming: "
              f"{len(waits)}, median {1000 * waits[len(waits) // 2] if waits else 0:.0f} ms, "
              f"max {1000 * max(waits, default=0):.0f} ms")
        assert max(waits, default=0) < 5  # generous: the page answers while it streams
        with urllib.request.urlopen(f"{fake_llm}/_answer?mode={mode}", timeout=60) as r:
            text = r.read().decode("utf-8")
        assert len(text) == size
        sources = page.locator(SOURCES).count()
        node = subprocess.run(["node", "--input-type=module", "-e", RENDER_IN_NODE], cwd=REPO, input=text,
                              capture_output=True, text=True, timeout=300, env={**os.environ, "SOURCES": str(sources)})
        assert node.returncode == 0, node.stderr
        expected = json.loads(node.stdout)
        shown = page.evaluate("""() => {  // the blocks, out of the groups of 50 they are shown in
            const a = document.querySelector('.sphinx-rag-answer');
            const group = (e) => e.classList.contains('sphinx-rag-blocks');
            const blocks = [...a.children].flatMap((c) => (group(c) ? [...c.children] : [c]));
            const tags = {};
            for (const e of a.querySelectorAll('*')) if (!group(e)) tags[e.localName] = (tags[e.localName] || 0) + 1;
            return { text: a.textContent, blocks: blocks.length, tags };
        }""")
        assert shown["blocks"] == expected["blocks"] and shown["tags"] == expected["tags"]
        assert shown["text"] == expected["text"]
        if len(waits) > 3:
            expect(page.locator(INPUT)).to_have_value("searchbar!")
    print(f"2 MB / 0.5 MB time ratio: {seconds[2_000_000] / seconds[500_000]:.1f} (linear: 4, quadratic: 16)")
    assert seconds[2_000_000] < 120  # generous


# -- multi-query and filtering (llm/context.js): each extra call a line of its own ------------------

MISSING = "How do I replace missing values with the mean of each column?"
STEP = "li.sphinx-rag-ask-step"


def requests_log(base: str) -> list[dict]:
    with urllib.request.urlopen(f"{base}/_requests", timeout=10) as r:
        return json.loads(r.read())


def test_multi_query_and_filtering_show_each_call_then_answer(page, context, site, serve, fake_llm):
    """The reader turns both on; the slow mode keeps each extra call (0.4 s) on screen
    while it runs. The rewrite's queries, then one verdict per passage, each with its
    time and the server's tokens; the rejected passages are not sent."""
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "slow", "multi_query": True,
                             "filter_passages": True})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)
    before = len(requests_log(fake_llm))
    ask(page, MISSING, "hybrid")
    wait_state(page, "preparing")
    expect(page.locator(f"{STEP}[data-state=running]").first).to_be_visible()  # a call shown while it runs
    wait_state(page, "done")

    steps = page.locator(STEP)
    first = steps.first
    expect(first).to_have_attribute("data-kind", "rewrite")
    expect(first).to_have_text(re.compile(r"^Search queries: “replace missing values”, “column each mean” "
                                          r"\(\d+\.\d\d s, \d+\+\d+ tokens\)$"))
    judged = page.locator(f"{STEP}[data-kind=judge]")
    n = judged.count()
    assert n == 8 and steps.count() == 1 + n
    lines = judged.all_inner_texts()
    assert all(re.search(r"\(\d+\.\d\d s, \d+\+\d+ tokens\)$", line) for line in lines), lines
    verdicts = [judged.nth(k).get_attribute("data-verdict") for k in range(n)]
    assert "true" in verdicts and "false" in verdicts
    kept = [re.sub(r"^Relevant: | \(.*$", "", line) for line, v in zip(lines, verdicts) if v == "true"]
    # what was sent: the passages not rejected, in their order; the calls: rewrite, 8 verdicts, answer
    body = last_request(fake_llm)
    assert [title for title, _ in sent_passages(body)] == kept
    log = requests_log(fake_llm)[before:]
    assert [r["kind"] for r in log] == ["rewrite"] + ["judge"] * 8 + ["answer"]
    assert [r["stream"] for r in log] == [False] * 9 + [True]
    steps_data = page.evaluate("window.sphinxRag.ask.steps.map(s => [s.kind, s.promptTokens, s.estimated, s.error])")
    assert len(steps_data) == 9 and all(p > 0 and not est and not err for _, p, est, err in steps_data)
    expect(page.locator(SOURCES)).to_have_count(len(kept))
    assert problems(page) == []


def test_stop_during_the_extra_calls_sends_no_answer_request(page, context, site, serve, fake_llm):
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "slow", "filter_passages": True})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    before = len(requests_log(fake_llm))
    ask(page, MISSING)
    expect(page.locator(f"{STEP}[data-kind=judge]").nth(1)).to_be_visible(timeout=LONG)
    page.click("button.sphinx-rag-stop")
    wait_state(page, "error")
    expect(page.locator(ASK)).to_have_attribute("data-error-kind", "aborted")
    kinds = [r["kind"] for r in requests_log(fake_llm)[before:]]
    assert "answer" not in kinds and kinds.count("judge") < 8
    assert_results_visible(page, MISSING)


def test_the_reader_turns_the_extra_calls_on_in_the_settings(page, context, site, serve, fake_llm):
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "normal"})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.click(GEAR)
    multi = page.locator("#sphinx-rag-llm-multi_query")
    expect(multi).not_to_be_checked()
    page.get_by_label("Let the model write more search queries first").check()
    page.click("form.sphinx-rag-settings button[type=submit]")
    stored = json.loads(page.evaluate(f"localStorage.getItem({json.dumps(STORAGE_KEY)})"))
    assert stored == {"endpoint": f"{fake_llm}/v1", "model": "normal", "multi_query": True}
    before = len(requests_log(fake_llm))
    ask(page, MISSING)
    wait_state(page, "done")
    assert [r["kind"] for r in requests_log(fake_llm)[before:]] == ["rewrite", "answer"]
    expect(page.locator(STEP)).to_have_count(1)


def test_asks_passages_do_not_wait_on_a_typed_query_or_fall_with_it(page, context, site, serve, fake_llm):
    """The worker answers Ask's passages request and the search box's queries one at a time:
    a request that comes while a typed query waits to settle (its clusters are not fetched
    yet, settle.js) is answered after it, never cancelled when a newer keystroke overtakes it,
    and with the passages the same request gives on an idle worker."""
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "normal"})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", re.compile("static|hybrid"), timeout=120_000)
    got = page.evaluate("""async (question) => {
        const dialog = window.sphinxRag.dialog;
        const ids = (results) => results.map((r) => r.id);
        // a cold page: no cluster read yet, so the typed query waits to settle before its own
        dialog.backend.search(9001, question, 10, true);
        const asked = dialog.passages([question, "SimpleImputer strategy"], 8, 4000);
        await new Promise((r) => setTimeout(r, 60));
        dialog.backend.search(9002, question.slice(0, -1), 10, true);  // the next keystroke
        const during = await asked.then(ids, (err) => `rejected: ${err.message}`);
        const idle = ids(await dialog.passages([question, "SimpleImputer strategy"], 8, 4000));
        return { during, idle };
    }""", MISSING)
    assert isinstance(got["during"], list), got["during"]
    assert got["during"] == got["idle"] and len(got["idle"]) > 1
    assert problems(page) == []


# -- Ask as a conversation: follow-ups, suggested follow-ups, errors, the phone, feedback ----------

FOLLOW_UP = "what other strategies are there?"  # alone: the dummy estimators; after MISSING: imputation
THREAD = "sphinx-rag-thread:"  # js/src/ui/ask.js THREAD_KEY
PHONE = {"width": 390, "height": 844}


def stored_thread(page) -> list[dict]:
    """The conversation the tab keeps (sessionStorage), [] when none."""
    return page.evaluate("""(prefix) => {
        for (let i = 0; i < sessionStorage.length; i++) {
            const key = sessionStorage.key(i);
            if (key.startsWith(prefix)) return JSON.parse(sessionStorage.getItem(key)).turns;
        }
        return [];
    }""", THREAD)


def is_collapsed(page) -> bool:
    return page.evaluate("document.querySelector('section.sphinx-rag-ask').hasAttribute('data-collapsed')")


def test_a_follow_up_is_asked_with_the_thread_which_the_tab_keeps(page, context, site, serve, fake_llm):
    """A first question, then a follow-up typed in the search box: the follow-up is searched
    with the thread (its passages are about imputation; asked alone, about the dummy
    estimators), the model reads the first turn, and the panel shows both. The tab keeps the
    conversation across pages; "New question" forgets it."""
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": "normal"})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    ask(page, MISSING)
    wait_state(page, "done")
    turns = stored_thread(page)
    assert [t["question"] for t in turns] == [MISSING]
    assert turns[0]["answer"].startswith("According to the documentation") and "[1]" in turns[0]["answer"]
    assert len(turns[0]["sources"]) == len(sent_passages(last_request(fake_llm)))

    page.fill(INPUT, FOLLOW_UP)  # typing folds the answer away from the new query's results
    expect(page.locator(ASK)).to_have_attribute("data-collapsed", "")
    results_for(page, FOLLOW_UP)
    page.keyboard.press("Control+Enter")
    wait_state(page, "done")
    assert not is_collapsed(page)
    body = last_request(fake_llm)
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
    assert body["messages"][1]["content"] == MISSING
    assert body["messages"][2]["content"] == re.sub(r" \[\d\]", "", turns[0]["answer"])  # no stale citations
    assert body["messages"][3]["content"].endswith("Question: " + FOLLOW_UP)
    titles = [title for title, _ in sent_passages(body)]
    assert all("imput" in t.lower() for t in titles[:2]), titles
    expect(page.locator(".sphinx-rag-turn")).to_have_count(1)
    expect(page.locator(".sphinx-rag-turn-question")).to_have_text(MISSING)
    expect(page.locator(".sphinx-rag-ask-title")).to_contain_text(FOLLOW_UP)
    assert [t["question"] for t in stored_thread(page)] == [MISSING, FOLLOW_UP]
    assert problems(page) == []

    # another page of the site: the conversation is there, folded, and goes on
    cite = page.locator(f"{ANSWER} a.sphinx-rag-cite").first
    href = cite.get_attribute("href")
    cite.click()
    page.wait_for_url(href)
    open_with_shortcut(page)
    expect(page.locator(ASK)).to_be_visible()
    assert is_collapsed(page)
    expect(page.locator(".sphinx-rag-ask-title")).to_contain_text(FOLLOW_UP)
    page.click("button.sphinx-rag-ask-toggle")
    expect(page.locator(ANSWER)).to_contain_text("According to the documentation")
    expect(page.locator(".sphinx-rag-turn")).to_have_count(1)

    # "New question": forgotten; the same question alone is a first question again
    page.click("button.sphinx-rag-ask-new")
    expect(page.locator(ASK)).to_be_hidden()
    expect(page.locator(INPUT)).to_be_focused()
    assert stored_thread(page) == []
    ask(page, FOLLOW_UP)
    wait_state(page, "done")
    alone = last_request(fake_llm)
    assert [m["role"] for m in alone["messages"]] == ["system", "user"]
    assert "imput" not in sent_passages(alone)[0][0].lower()
    expect(page.locator(".sphinx-rag-turn")).to_have_count(0)


def test_suggested_follow_ups_are_buttons_that_ask_them(page, context, site, serve, fake_llm):
    """The model ends with a "Follow-up questions:" list: it never shows in the answer, not
    even while it streams; its three questions are buttons, and one asks its question as a
    follow-up (searched, then answered after the first turn)."""
    from fake_llm_server import FOLLOW_UPS

    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/followups/v1", "model": "followups"})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.evaluate("""() => {  // whether the list ever reached the answer's text, at any moment
        window.__sawList = false;
        const answer = document.querySelector(".sphinx-rag-answer");
        new MutationObserver(() => {
            if (/Follow-up|\\*\\*/.test(answer.textContent)) window.__sawList = true;
        }).observe(answer, { subtree: true, childList: true, characterData: true });
    }""")
    ask(page, QUERY)
    wait_state(page, "done")
    buttons = page.locator("button.sphinx-rag-follow-up")
    expect(buttons).to_have_count(3)
    assert buttons.all_inner_texts() == list(FOLLOW_UPS)
    expect(page.locator(ANSWER)).to_contain_text("See also the second passage for details")
    assert page.evaluate("window.__sawList") is False
    turn = stored_thread(page)[0]
    assert turn["followUps"] == list(FOLLOW_UPS) and "Follow-up" not in turn["answer"]

    buttons.nth(1).click()
    expect(page.locator(INPUT)).to_have_value(FOLLOW_UPS[1])
    expect(page.locator(".sphinx-rag-ask-title")).to_contain_text(FOLLOW_UPS[1])
    wait_state(page, "done")
    body = last_request(fake_llm)
    assert body["messages"][1]["content"] == QUERY
    assert body["messages"][-1]["content"].endswith("Question: " + FOLLOW_UPS[1])
    assert_results_visible(page, FOLLOW_UPS[1])
    assert [t["question"] for t in stored_thread(page)] == [QUERY, FOLLOW_UPS[1]]
    assert injected(page) == {"scripts": 0, "imgs": 0, "handlers": 0, "badHrefs": [], "pwned": "undefined"}


def test_a_malformed_follow_up_list_is_no_list_and_the_answer_stays_whole(page, context, site, serve, fake_llm):
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/badfollowups/v1")
    wait_state(page, "done")
    expect(page.locator(ANSWER)).to_contain_text("The documentation covers the rest well enough, so read on.")
    expect(page.locator("button.sphinx-rag-follow-up")).to_have_count(0)
    expect(page.locator(".sphinx-rag-follow-ups")).to_be_hidden()


def test_an_error_is_one_line_with_markdown_details_and_goes_with_the_next_query(page, context, site, serve):
    """A stopped server on a 390 px phone: one short line, the long explanation under
    "Details" with its commands as code (no literal backticks); the next query's results
    come without it."""
    page.set_viewport_size(PHONE)
    ask_reader_llm(page, context, site, serve, f"http://127.0.0.1:{closed_port()}/v1")
    wait_state(page, "error")
    line = page.locator(".sphinx-rag-ask-note-line")
    expect(line).to_have_text("Could not reach the LLM server.")
    assert line.bounding_box()["height"] < 30  # one line
    details = page.locator("details.sphinx-rag-ask-details")
    expect(details).not_to_have_attribute("open", "")
    assert page.locator(NOTE).bounding_box()["height"] < 70
    assert "`" not in page.locator(NOTE).text_content()
    page.click("details.sphinx-rag-ask-details > summary")
    codes = details.locator("code").all_inner_texts()
    assert "llama-server -m model.gguf --port 8080" in codes and any(c.startswith("OLLAMA_ORIGINS=") for c in codes)
    assert page.locator(ASK).bounding_box()["height"] <= 0.35 * PHONE["height"]

    page.fill(INPUT, "SimpleImputer")
    results_for(page, "SimpleImputer")
    expect(page.locator(ASK)).to_be_hidden()
    expect(page.locator(NOTE)).to_be_hidden()
    first = page.locator(OPTIONS).first.bounding_box()
    assert first["y"] + first["height"] / 2 < 0.5 * PHONE["height"]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_answer_folds_away_for_the_next_querys_results_on_a_phone(page, context, site, serve, fake_llm, scheme):
    """A long answer on a 390 px phone takes at most a third of the screen (its body
    scrolls); typing the next query folds it to its title line, and the results come right
    under it; in the page's colour scheme."""
    page.set_viewport_size(PHONE)
    server = serve(site)
    set_reader_llm(context, {"endpoint": f"{fake_llm}/md3000t40/v1", "model": "m"})
    page.goto(server.url + "index.html")
    if scheme == "dark":
        page.evaluate("document.documentElement.dataset.theme = 'dark'")
    open_with_shortcut(page)
    ask(page, QUERY)
    wait_state(page, "done")
    panel = page.locator(ASK)
    assert panel.bounding_box()["height"] <= 0.35 * PHONE["height"]
    assert page.evaluate("(() => { const b = document.querySelector('.sphinx-rag-ask-body'); "
                         "return b.scrollHeight > b.clientHeight + 50; })()")

    def rgb(selector, prop="backgroundColor"):
        return page.evaluate(f"""() => getComputedStyle(document.querySelector({json.dumps(selector)}))
            .{prop}.match(/\\d+/g).slice(0, 3).map(Number)""")

    background, text = sum(rgb(ASK)), sum(rgb(ANSWER, "color"))
    assert (background < 250 and text > 500) if scheme == "dark" else (background > 600 and text < 300)

    page.fill(INPUT, "SimpleImputer")
    results_for(page, "SimpleImputer")
    expect(panel).to_have_attribute("data-collapsed", "")
    folded = panel.bounding_box()
    assert folded["height"] < 48
    first = page.locator(OPTIONS).first.bounding_box()
    assert folded["y"] + folded["height"] - 1 <= first["y"] < 0.4 * PHONE["height"]
    assert sum(rgb(ASK)) == background  # folded, in the same scheme
    toggle = page.locator("button.sphinx-rag-ask-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(page.locator(ANSWER)).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")


def test_thumbs_without_a_feedback_url_send_nothing(page, context, site, serve, fake_llm):
    server = ask_reader_llm(page, context, site, serve, f"{fake_llm}/v1")
    wait_state(page, "done")
    up, down = page.locator("button.sphinx-rag-thumb[data-vote=up]"), page.locator("button.sphinx-rag-thumb[data-vote=down]")
    requests = len(page.log.requests)
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".sphinx-rag-feedback-note")).to_have_text("Thanks for the feedback.")
    down.click()
    expect(up).to_have_attribute("aria-pressed", "false")
    reasons = page.locator("button.sphinx-rag-reason")
    assert reasons.all_inner_texts() == ["Incorrect", "Not what I asked", "Missing in the docs"]
    expect(reasons.first).to_be_focused()
    reasons.nth(2).click()
    expect(page.locator(".sphinx-rag-feedback-note")).to_have_text("Thanks for the feedback.")
    expect(reasons.first).to_be_hidden()
    assert len(context.pages) == 1  # no form opened
    assert page.log.requests[requests:] == []  # nothing left the page
    only_site_and_endpoint(page, server.url, fake_llm)


def test_thumbs_down_opens_the_prefilled_report_as_a_golden_entry(page, context, ask_site, serve, fake_llm):
    """With sphinx_rag_feedback_url: a reason opens the form in a new tab, its title the
    question, its body the reason, the answer's beginning, the sources sent and a golden-set
    entry to complete."""
    from urllib.parse import parse_qs, urlsplit

    server = serve(ask_site)
    page.goto(server.url + "index.html")
    page.locator("#searchbox input[name=q]").click()
    expect(page.locator(ASK_BUTTON)).to_be_visible(timeout=LONG)
    ask(page, PAYLOAD_WORD)
    wait_state(page, "done")
    page.click("button.sphinx-rag-thumb[data-vote=down]")
    with context.expect_page() as opened:
        page.click("button.sphinx-rag-reason[data-reason=not-asked]")
    url = opened.value.url
    assert url.startswith(f"{fake_llm}/issues/new?")
    fields = parse_qs(urlsplit(url).query)
    assert fields["title"] == [PAYLOAD_WORD]
    body = fields["body"][0]
    assert body.startswith(f"Ask: {PAYLOAD_WORD}\nReason: Not what I asked\n")
    assert "> According to the documentation, the passage titled" in body
    source = server.url + "payload.html#hostile-passage"
    assert f"Sources sent to the model:\n1. Payload {PAYLOAD_SCRIPT} page > Hostile passage ({source})" in body
    entry = json.loads(body.strip().splitlines()[-1])
    assert entry == {"query": PAYLOAD_WORD, "url": "PAGE.html#ANCHOR", "rank": 3}
    expect(page.locator(".sphinx-rag-feedback-note")).to_contain_text("A prefilled report opened in a new tab")
    expect(page.locator("a.sphinx-rag-report-link")).to_have_attribute("href", url)
    assert injected(page)["badHrefs"] == []


def test_a_failed_follow_up_leaves_the_conversation_as_it_was(page, context, site, serve, fake_llm):
    """A follow-up that fails is no turn: the next query clears its error and the panel
    folds back to the conversation's last answer."""
    ask_reader_llm(page, context, site, serve, f"{fake_llm}/v1")
    wait_state(page, "done")
    page.evaluate("([key, value]) => localStorage.setItem(key, value)",
                  [STORAGE_KEY, json.dumps({"endpoint": f"{fake_llm}/error500/v1", "model": "m"})])
    page.fill(INPUT, FOLLOW_UP)
    results_for(page, FOLLOW_UP)
    page.keyboard.press("Control+Enter")
    wait_state(page, "error")
    expect(page.locator(".sphinx-rag-ask-note-line")).to_have_text("The LLM server answered with an error (HTTP 500).")
    expect(page.locator("details.sphinx-rag-ask-details")).to_contain_text("model crashed: out of memory")
    assert [t["question"] for t in stored_thread(page)] == [QUERY]

    page.fill(INPUT, "SimpleImputer")
    results_for(page, "SimpleImputer")
    expect(page.locator(NOTE)).to_be_hidden()
    expect(page.locator(ASK)).to_have_attribute("data-state", "done")
    assert is_collapsed(page)
    expect(page.locator(".sphinx-rag-ask-title")).to_contain_text(QUERY)
    page.click("button.sphinx-rag-ask-toggle")
    expect(page.locator(ANSWER)).to_contain_text("According to the documentation")
