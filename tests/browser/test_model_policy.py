"""When the full model downloads (issues 26 and 36), in real Chromium over real HTTP.

The `both` tier's full model (23 MB) and onnxruntime-web's wasm (14 MB) download only
once a query wants the semantic tier (js/src/ui/model_policy.js wantsModel: a question,
several words of prose, a weak or empty answer; not a name keyword search matched) and
the fast tier (the static encoder; keyword search on a site without one) has answered
it; or at once when the reader chose "always". Never when the reader saves data
(Chromium's own Save-Data switch, through the DevTools protocol: the page sees it, its
worker does not), is on a slow connection (Chromium's --force-effective-connection-type)
or the device reports little memory (navigator.deviceMemory, overridden by an init
script: Chromium has no switch for it), unless "always"; never with "never". Bytes are
counted from the context's responses (BrowserContext.on("response") reports the
worker's requests too; Python's http.server sends no Content-Encoding: Content-Length is
the file's size) to prove what was and was not downloaded.

Typed queries: the dense pass of a query typed key by key fetches its clusters only once
the query has settled (a demo copy re-indexed into many small clusters shows it); a
frugal reader's typed query fetches nothing before that, and probes a quarter of the
layout's vectors.

Every wait is for a state or a text, except the few seconds after an answer in which
the model would have started downloading.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from site_helpers import (
    CHROMIUM_ARGS, CLIENT_DIR, build_site, chromium_options, device_memory_script, manifest_of, save_data,
)
from test_search_e2e import STATUS, open_with_shortcut, problems, results_for

ROOTS = Path(__file__).resolve().parents[1] / "roots"
GEAR = "button.sphinx-rag-gear"
CHOICE = "#sphinx-rag-model-choice"
NOTE = ".sphinx-rag-model-note"
INPUT = "dialog.sphinx-rag input[role=combobox]"
QUERY = "imputer strategy"  # two words keyword search matches: no model wanted
IDENTIFIER = "SimpleImputer"
ASKED = "How do I fill in missing values with the median?"  # a question: the model is wanted
SMALL_QUESTION = "How do I choose a baseline strategy?"
MODEL_FILES = re.compile(r"/index/(?:model|reranker)-[0-9a-f]+/|/ort-wasm")  # the reranker comes with the model
STORAGE_KEY = "sphinx-rag-model:/"  # js/src/ui/model_policy.js ModelChoiceStore, the site root "/"
AFTER_ANSWER_MS = 3000  # the worker starts the model within a second of an answer ("always": of the first)
HELD = "Semantic model not downloaded ({why}): quick semantic results from the site's encoder. Change in settings."
HELD_NO_ENCODER = "Keyword results only: semantic model not downloaded ({why}). Change in settings."
ON_DEMAND = ("Hybrid search: keyword + semantic (fast encoder). The semantic model ({size}) loads when a question "
             "needs it.")
ON_DEMAND_NO_ENCODER = "Keyword results. The semantic model ({size}) loads when a question needs it."
HYBRID = "Hybrid search: keyword + semantic (full model)"
BEYOND_PAGE_BYTES = 1_000_000  # issue 36: an identifier search, beyond the page and the search bar's code


def megabytes(n: int) -> str:
    mb = n / 1e6
    return f"{int(mb + 0.5)} MB" if mb >= 10 else f"{mb:.1f} MB"


def download_size(html: Path) -> str:
    """What the status line says the model weighs (js/src/worker/tier_status.js downloadSize)."""
    manifest = manifest_of(html)
    files = manifest["model_files"]["files"]
    model = sum(files[n]["bytes"] for n in ("model.onnx", "vocab.txt", "model_info.json"))
    reranker = (manifest.get("reranker_files") or {}).get("files", {})  # downloaded after the model
    model += sum(reranker[n]["bytes"] for n in ("reranker.onnx", "reranker_info.json") if n in reranker)
    runtime = sum(p.stat().st_size for p in CLIENT_DIR.glob("ort-wasm*"))
    return f"{megabytes(model)} + {megabytes(runtime)} runtime"


def model_fetches(urls: list[str]) -> list[str]:
    return [u for u in urls if MODEL_FILES.search(u)]


#: Milliseconds two processes' clocks may disagree by (the page's Date.now(), Python's time.time())
CLOCKS = 5


class Bytes:
    """Every response of a context: (time, path, status, bytes), bytes from Content-Length;
    and when each request was made."""

    def __init__(self, context):
        self.seen: list[tuple[float, str, int, int]] = []
        self.asked: list[tuple[float, str]] = []
        context.on("response", self._on)
        context.on("request", lambda r: self.asked.append((time.time() * 1000, urlsplit(r.url).path)))

    def _on(self, response) -> None:
        size = int(response.headers.get("content-length") or 0)
        self.seen.append((time.time() * 1000, urlsplit(response.url).path, response.status, size))

    def mark(self) -> int:
        return len(self.seen)

    def of(self, kind: str, since: int = 0) -> int:
        """Bytes of `kind` since mark `since`: "model" (index/model-*/, index/reranker-*/), "runtime" (ort-wasm*), "index"
        (every other index file), "code" (searchbar.js/.css, worker.js), "page" (everything else)."""
        return sum(size for _, path, status, size in self.seen[since:] if status == 200 and kind_of(path) == kind)

    def first(self, kind: str) -> float | None:
        """When the first request of `kind` was made (ms since the epoch), or None."""
        return next((t for t, path in self.asked if kind_of(path) == kind), None)


def kind_of(path: str) -> str:
    if "/_static/sphinx_rag/index/model-" in path or "/_static/sphinx_rag/index/reranker-" in path:
        return "model"
    if "/_static/sphinx_rag/ort-wasm" in path:
        return "runtime"
    if "/_static/sphinx_rag/index/" in path:
        return "index"
    if "/_static/sphinx_rag/" in path:
        return "code"
    return "page"


def assert_no_model_bytes(log: Bytes, requests: list[str]) -> None:
    assert model_fetches(requests) == []
    assert log.of("model") == 0 and log.of("runtime") == 0


def wait_past_model_start(page):
    """The moment the model would start has passed (no state shows a download not started)."""
    page.wait_for_timeout(AFTER_ANSWER_MS)


def open_settings(page):
    page.locator(GEAR).click()
    expect(page.locator(CHOICE)).to_be_visible()


def hold(context, pattern: str) -> list:
    """Requests for `pattern` wait in the returned list until continued."""
    held: list = []
    context.route(pattern, lambda route: held.append(route))
    return held


def release(page, held: list) -> None:
    for _ in range(600):
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the request was never made"
    held[0].continue_()


@pytest.fixture(scope="session")
def small_site(tmp_path_factory) -> Path:
    """tests/roots/test-searchbar with embeddings and the model only (sphinx_rag_query_encoder
    "model"): the manifest has encoder null, the keyword tier is the fast one."""
    src = tmp_path_factory.mktemp("small-src")
    shutil.copytree(ROOTS / "test-searchbar", src, dirs_exist_ok=True)
    conf = src / "conf.py"
    conf.write_text(conf.read_text().replace("sphinx_rag_embeddings = False", "sphinx_rag_embeddings = True")
                    + '\nsphinx_rag_query_encoder = "model"\n')
    out = tmp_path_factory.mktemp("small") / "html"
    build_site(src, out, "-d", str(out.parent / "dt"))
    manifest = manifest_of(out)
    assert manifest["encoder"] is None and manifest["model_files"], "the small site should have the model only"
    return out


@pytest.fixture(scope="session")
def clustered_site(site, tmp_path_factory) -> Path:
    """The demo with its index re-written into many small clusters (the parity fixtures'
    SMALL_LAYOUT: clusters of about 40 chunks, a probe of 150), its static encoder kept
    and no model: each query probes clusters of its own."""
    sys.path.insert(0, str(ROOTS.parent / "fixtures"))
    import generate  # tests/fixtures/generate.py: SMALL_LAYOUT
    from sphinx_rag.index.write import write_assets
    from sphinx_rag.search.index import ASSET_DIR, IndexReader, load_chunk_records
    from sphinx_rag.search.bm25 import build_index, document_tokens

    out = tmp_path_factory.mktemp("clustered") / "html"
    shutil.copytree(site, out, ignore=shutil.ignore_patterns("index"))
    reader = IndexReader(site)
    records = load_chunk_records(site)
    cluster = reader.cluster(0)  # the demo is one cluster: every vector in chunk order
    entry = reader.manifest["encoder"]
    encoder = ((site / ASSET_DIR / entry["file"]).read_bytes(), {k: v for k, v in entry.items() if k != "file"})
    write_assets(out / ASSET_DIR, chunks=records, bm25=build_index([document_tokens(r["text"]) for r in records]),
                 vectors_i8=cluster.vectors, scales=cluster.scales, model_dir=None,
                 model_info=reader.manifest["model"], settings={**reader.manifest["settings"], "query_encoder": "static"},
                 encoder=encoder, keyword_script=True, layout=generate.SMALL_LAYOUT)
    assert manifest_of(out)["counts"]["clusters"] > 10
    return out


# -- the demo: the static encoder and the model ---------------------------------------------------


def test_an_identifier_fetches_no_model_bytes(page, context, site, serve):
    """"automatic" on a desktop: opening the dialog and searching `SimpleImputer` (typed key
    by key) or two words keyword search matches fetches the keyword tier and the static
    encoder's files, nothing of the model or its runtime, and under 1 MB beyond the page
    and the search bar's own code; the status line says when the model would come."""
    server = serve(site)
    log = Bytes(context)
    page.goto(server.url + "index.html")
    page.wait_for_load_state("networkidle")
    opened = log.mark()
    open_with_shortcut(page)
    expect(page.locator(STATUS)).to_have_text(ON_DEMAND.format(size=download_size(site)), timeout=60_000)
    page.keyboard.type(IDENTIFIER, delay=60)
    ids = results_for(page, IDENTIFIER, "static")
    assert ids and "SimpleImputer" in page.evaluate("window.sphinxRag.dialog.results[0].url")
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)
    beyond = log.of("index", opened)
    assert 0 < beyond <= BEYOND_PAGE_BYTES, beyond
    assert any("/index/encoder-" in u for u in page.log.requests)  # the static tier answered
    page.fill(INPUT, QUERY)
    results_for(page, QUERY, "static")
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)
    expect(page.locator(STATUS)).to_have_text(ON_DEMAND.format(size=download_size(site)))
    open_settings(page)
    expect(page.locator(CHOICE)).to_have_value("auto")
    expect(page.locator(NOTE)).to_contain_text("when a question or a query without a good match needs it")
    expect(page.locator(NOTE)).to_contain_text("Now: on.")
    assert not problems(page)


def test_a_question_gets_the_static_answer_then_the_model(page, context, site, serve):
    """A question: no model byte while the static tier has not answered it (the encoder held
    back: keyword results only); once it has, the model and its runtime download, the status
    line says so and how large they are, and the same question is answered again by the model."""
    server = serve(site)
    log = Bytes(context)
    encoder = hold(context, "**/index/encoder-*.bin")
    model = hold(context, "**/index/model-*/model.onnx")
    # each answer's time as it leaves the worker (the main thread may show it a little later)
    context.add_init_script("""(() => { const W = window.Worker; window.__posted = [];
        window.Worker = class extends W { constructor(...args) { super(...args);
          this.addEventListener("message", (e) => { const d = e.data;
            if (d && d.type === "results") __posted.push([d.mode, d.timings && d.timings.posted_at]); }); } }; })()""")
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(ASKED)
    results_for(page, ASKED, "keyword")
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)  # keyword results: the static tier has not answered
    release(page, encoder)
    assert results_for(page, ASKED, "static")
    expect(page.locator(STATUS)).to_have_text(
        f"Downloading the semantic model ({download_size(site)})… keyword and quick semantic results meanwhile",
        timeout=60_000)
    release(page, model)
    expect(page.locator(STATUS)).to_have_text(HYBRID, timeout=120_000)
    assert results_for(page, ASKED, "hybrid")
    expect(page.locator(INPUT)).to_have_value(ASKED)
    # the static answer left the worker before the model's first request (the page's Date.now()
    # and this process's clock each round to their own millisecond)
    static_at = min(t for mode, t in page.evaluate("window.__posted") if mode == "static")
    assert static_at <= log.first("model") + CLOCKS and static_at <= log.first("runtime") + CLOCKS
    assert log.of("model") > 20_000_000 and log.of("runtime") > 10_000_000
    # later queries: the model answers them, names too
    page.fill(INPUT, IDENTIFIER)
    assert results_for(page, IDENTIFIER, "hybrid")
    assert not problems(page)


def test_always_downloads_when_the_dialog_opens(page, context, site, serve):
    server = serve(site)
    log = Bytes(context)
    context.add_init_script(f"localStorage.setItem({json.dumps(STORAGE_KEY)}, 'always')")
    page.goto(server.url + "index.html")
    open_with_shortcut(page)  # nothing typed
    expect(page.locator(STATUS)).to_have_text(HYBRID, timeout=120_000)
    assert log.of("model") > 20_000_000 and log.of("runtime") > 10_000_000
    expect(page.locator(INPUT)).to_have_value("")
    page.keyboard.type(IDENTIFIER)
    assert results_for(page, IDENTIFIER, "hybrid")


def test_save_data_keeps_the_model_back(page, context, site, serve):
    """Save-Data on: a question fetches no model and no onnxruntime file; the encoder answers
    and the status line and the settings panel say why."""
    server = serve(site)
    log = Bytes(context)
    session = save_data(context, page)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(ASKED)
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="data saver on"), timeout=60_000)
    assert results_for(page, ASKED, "static")
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "static")
    open_settings(page)
    expect(page.locator(CHOICE)).to_have_value("auto")
    expect(page.locator(NOTE)).to_contain_text("Now: off (data saver on)")
    assert not problems(page)
    del session


def test_a_slow_connection_keeps_the_model_back(browser, site, serve):
    """Chromium's effective connection type 3g (a round trip of 270 ms or more)."""
    server = serve(site)
    slow = browser.browser_type.launch(**chromium_options(args=[*CHROMIUM_ARGS, "--force-effective-connection-type=3G"]))
    try:
        context = slow.new_context()
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        log = Bytes(context)
        page = context.new_page()
        page.goto(server.url + "index.html")
        assert page.evaluate("navigator.connection.effectiveType") == "3g"
        open_with_shortcut(page)
        page.keyboard.type(ASKED)
        expect(page.locator(STATUS)).to_have_text(HELD.format(why="slow connection: 3g"), timeout=60_000)
        assert results_for(page, ASKED, "static")
        wait_past_model_start(page)
        assert_no_model_bytes(log, requests)
    finally:
        slow.close()


def test_little_memory_keeps_the_model_back(page, context, site, serve):
    server = serve(site)
    log = Bytes(context)
    context.add_init_script(device_memory_script(1))
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(ASKED)
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="little memory: 1 GB"), timeout=60_000)
    assert results_for(page, ASKED, "static")
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)


def test_always_downloads_even_with_save_data_and_is_remembered(page, context, site, serve):
    server = serve(site)
    session = save_data(context, page)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(QUERY)
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="data saver on"), timeout=60_000)
    held = hold(context, "**/index/model-*/model.onnx")
    open_settings(page)
    page.select_option(CHOICE, "always")  # applies at once: the download starts
    expect(page.locator(STATUS)).to_have_text(re.compile(r"^Downloading the semantic model \(\d+ MB \+ \d+ MB runtime\)"))
    expect(page.locator(NOTE)).to_contain_text("Always:")
    release(page, held)
    context.unroute("**/index/model-*/model.onnx")
    expect(page.locator(STATUS)).to_have_text(HYBRID, timeout=120_000)
    assert results_for(page, QUERY, "hybrid")
    assert page.evaluate(f"localStorage.getItem({json.dumps(STORAGE_KEY)})") == "always"

    # another page of the site, Save-Data still on: the stored choice loads the model again
    other = context.new_page()
    other_session = save_data(context, other)
    other.goto(server.url + "user_guide/impute.html")
    open_with_shortcut(other)
    other.keyboard.type(QUERY)
    expect(other.locator(STATUS)).to_have_attribute("data-mode", "hybrid", timeout=120_000)
    other.locator(GEAR).click()
    expect(other.locator(CHOICE)).to_have_value("always")
    del session, other_session


def test_never_loads_no_model_and_switching_drops_it(page, context, site, serve):
    """"never": a question fetches nothing of the model while the encoder still answers
    semantically; "always" then loads it, "never" again stops using it, and "automatic"
    loads it again for the question shown."""
    server = serve(site)
    log = Bytes(context)
    page.goto(server.url + "index.html")
    page.evaluate(f"localStorage.setItem({json.dumps(STORAGE_KEY)}, 'never')")  # as the panel stores it
    page.reload()
    page.log.requests.clear()
    open_with_shortcut(page)
    page.keyboard.type(ASKED)
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="off in settings"), timeout=60_000)
    static = results_for(page, ASKED, "static")
    assert static
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)
    assert any("/index/encoder-" in u for u in page.log.requests)

    open_settings(page)
    expect(page.locator(CHOICE)).to_have_value("never")
    expect(page.locator(NOTE)).to_contain_text("Never: no download; keyword and quick semantic results")
    page.select_option(CHOICE, "always")
    expect(page.locator(STATUS)).to_have_text(HYBRID, timeout=120_000)
    assert results_for(page, ASKED, "hybrid")
    page.select_option(CHOICE, "never")
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="off in settings"))
    assert results_for(page, ASKED, "static") == static  # the same query again, without the model
    assert page.evaluate(f"localStorage.getItem({json.dumps(STORAGE_KEY)})") == "never"
    page.select_option(CHOICE, "auto")
    assert page.evaluate(f"localStorage.getItem({json.dumps(STORAGE_KEY)})") is None
    expect(page.locator(STATUS)).to_have_text(HYBRID, timeout=120_000)  # the question shown wants it
    assert results_for(page, ASKED, "hybrid")
    assert not problems(page)


def test_never_during_the_download_stops_it(page, context, site, serve):
    server = serve(site)
    held = hold(context, "**/index/model-*/model.onnx")
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(ASKED)
    expect(page.locator(STATUS)).to_have_text(re.compile(r"^Downloading the semantic model"), timeout=60_000)
    for _ in range(600):
        if held:
            break
        page.wait_for_timeout(100)
    open_settings(page)
    page.select_option(CHOICE, "never")
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="off in settings"))
    try:
        held[0].continue_()  # the worker aborted this request: the bytes never come in
    except Exception:  # noqa: BLE001 - Playwright refuses to continue an aborted request
        pass
    wait_past_model_start(page)
    expect(page.locator(STATUS)).to_have_text(HELD.format(why="off in settings"))
    assert results_for(page, ASKED, "static")
    assert not problems(page)


# -- a site without a static encoder: the model or keywords ------------------------------------------


def test_without_an_encoder_keyword_results_until_a_question_loads_the_model(page, context, small_site, serve):
    """The keyword tier is the fast one: two words it matches fetch nothing of the model; a
    question, once keyword search answered it, downloads it."""
    server = serve(small_site)
    log = Bytes(context)
    held = hold(context, "**/index/model-*/model.onnx")
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type("baseline strategy")
    assert results_for(page, "baseline strategy", "keyword")
    expect(page.locator(STATUS)).to_have_text(ON_DEMAND_NO_ENCODER.format(size=download_size(small_site)))
    wait_past_model_start(page)
    assert not held
    assert_no_model_bytes(log, page.log.requests)
    page.fill(INPUT, SMALL_QUESTION)
    expect(page.locator(STATUS)).to_have_text(
        f"Downloading the semantic model ({download_size(small_site)})… keyword results meanwhile", timeout=60_000)
    assert results_for(page, SMALL_QUESTION, "keyword")
    release(page, held)
    expect(page.locator(STATUS)).to_have_text(HYBRID, timeout=120_000)
    assert results_for(page, SMALL_QUESTION, "hybrid")
    open_settings(page)
    expect(page.locator(NOTE)).to_contain_text("(then: keyword results only)")


@pytest.mark.parametrize("how", ["save-data", "never"])
def test_without_an_encoder_and_without_the_model_keyword_results_only(how, page, context, small_site, serve):
    server = serve(small_site)
    log = Bytes(context)
    session = save_data(context, page) if how == "save-data" else None
    if how == "never":
        context.add_init_script(f"localStorage.setItem({json.dumps(STORAGE_KEY)}, 'never')")
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(SMALL_QUESTION)
    why = "data saver on" if how == "save-data" else "off in settings"
    expect(page.locator(STATUS)).to_have_text(HELD_NO_ENCODER.format(why=why), timeout=60_000)
    assert results_for(page, SMALL_QUESTION, "keyword")
    wait_past_model_start(page)
    assert_no_model_bytes(log, page.log.requests)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    del session


def test_a_keyword_only_site_has_no_model_setting(page, alabaster_site, serve):
    server = serve(alabaster_site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type("baseline strategy")
    expect(page.locator(STATUS)).to_have_text("Keyword search: this site's index has no semantic embeddings")
    page.locator(GEAR).click()
    expect(page.locator("#sphinx-rag-llm-endpoint")).to_be_visible()
    expect(page.locator(CHOICE)).to_be_hidden()


# -- typed queries: clusters for the settled query only ----------------------------------------------


def probed_clusters(html: Path, query: str, probe: int | None = None) -> set[str]:
    """The cluster shards Python's Searcher reads for `query` (static encoder, rrf)."""
    from sphinx_rag.search.dense import probe_order
    from sphinx_rag.search.retrieve import CANDIDATES, Searcher, top_k

    searcher = Searcher(html, encoder="static", probe=probe)
    vector = searcher.query_vector(query)
    first = searcher.guided_clusters(top_k(searcher.bm25_scores(query), CANDIDATES))
    centroids, scales = searcher.index.centroids()
    order = probe_order(vector, centroids, scales, searcher.index.cluster_sizes, searcher.probe, first)
    names = searcher.index.dense_directory["clusters"]
    return {names[c][0] for c in order}


def watch_results(page) -> None:
    """Record each (query, mode) the results list shows, in window.__shown."""
    page.evaluate("""() => { const box = document.getElementById("sphinx-rag-listbox");
        window.__shown = []; new MutationObserver(() => __shown.push([box.dataset.query, box.dataset.mode]))
          .observe(box, {attributes: true, attributeFilter: ["data-mode", "data-query"]}); }""")


def cluster_fetches(urls: list[str]) -> set[str]:
    return {u.rsplit("/", 1)[-1] for u in urls if "/index/cluster-" in u}


def type_and_wait(page, query: str, delay: float) -> None:
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "static", timeout=60_000)
    page.log.requests.clear()
    page.keyboard.type(query, delay=delay)
    results_for(page, query, "static")


def test_a_typed_query_fetches_only_its_own_clusters(page, clustered_site, serve):
    """Typed key by key (a key every 80 ms, faster than a query settles), a query fetches
    the clusters its own dense pass probes, none for its prefixes; each prefix still got
    keyword results at once."""
    server = serve(clustered_site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    watch_results(page)
    query = "imputer missing values strategy"
    type_and_wait(page, query, 80)
    fetched = cluster_fetches(page.log.requests)
    assert fetched == probed_clusters(clustered_site, query), fetched
    shown = page.evaluate("window.__shown")
    prefixes = {q for q, mode in shown if q and q != query and mode == "keyword"}
    assert len(prefixes) >= 3, shown  # the reader saw results follow the typing
    assert not problems(page)


def test_a_chosen_query_is_answered_semantically_at_once(page, clustered_site, serve):
    """A query that is not typed (a shared link, a recent search, a paste) does not wait to
    settle: no keyword-only answer comes before its semantic one."""
    server = serve(clustered_site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "static", timeout=60_000)
    watch_results(page)
    page.evaluate(f"window.sphinxRag.dialog.searchFor({json.dumps(QUERY)})")
    results_for(page, QUERY, "static")
    assert [m for q, m in page.evaluate("window.__shown") if q == QUERY] == ["static"]


def test_save_data_waits_for_the_pause_and_reads_a_quarter_of_the_probe(page, context, clustered_site, serve):
    """A frugal reader's typed query fetches nothing until it settled (no results for its
    prefixes), then probes a quarter of the layout's vectors: the clusters Python's
    Searcher reads with that probe, fewer than the full probe's."""
    server = serve(clustered_site)
    session = save_data(context, page)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    watch_results(page)
    query = "missing values imputation"
    type_and_wait(page, query, 80)
    from sphinx_rag.search.retrieve import frugal_probe

    probe = manifest_of(clustered_site)["layout"]["probe"]
    fetched = cluster_fetches(page.log.requests)
    assert fetched == probed_clusters(clustered_site, query, probe=frugal_probe(probe)), fetched
    assert len(fetched) < len(probed_clusters(clustered_site, query))
    assert {q for q, _ in page.evaluate("window.__shown") if q} == {query}
    del session
