"""The search bar end to end, in real Chromium, over real HTTP (and file://).

The demo docs (pydata-sphinx-theme, with embeddings) and tests/roots/test-searchbar
(alabaster, keyword-only) are built once per session. No timing assertions: every
wait is for a state (a mode, a query's results), with generous timeouts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from playwright.sync_api import expect

from site_helpers import chunks_of
from sphinx_rag.search.window import SHOWN_CHARS, passage_window, query_tokens

QUESTION = "What are the values of the strategy parameter in a dummy classifier?"
TYPO_QUESTION = "What are the valeus of the stratgey paramter in a dummy clasifier?"
FOLDS = "How many folds does KFold use by default?"
INPUT = "dialog.sphinx-rag input[role=combobox]"
OPTIONS = "#sphinx-rag-listbox [role=option]"
STATUS = ".sphinx-rag-status"

# pydata-sphinx-theme 0.24 logs this console error on a fresh profile when
# html_theme_options has no "default_mode" (it reads "" from localStorage).
THEME_NOISE: list = []  # demo_docs sets html_context["default_mode"], so the theme logs nothing


def chunks(html: Path) -> list[dict]:
    return chunks_of(html)


def strategy_passage(html: Path) -> dict:
    """The chunk documenting DummyClassifier's `strategy` parameter."""
    found = [c for c in chunks(html)
             if c["url"].endswith("mlkit.dummy.DummyClassifier.html#mlkit.dummy.DummyClassifier")
             and c["text"].startswith("Parameter strategy of mlkit.dummy.DummyClassifier")]
    assert len(found) == 1, "the demo docs should have one DummyClassifier strategy parameter chunk"
    return found[0]


def problems(page) -> list[str]:
    return [p for p in page.log.problems() if not any(rx.match(p) for rx in THEME_NOISE)]


def open_with_shortcut(page, key="Control+k"):
    page.keyboard.press(key)
    expect(page.locator("dialog.sphinx-rag")).to_have_attribute("open", "")
    expect(page.locator(INPUT)).to_be_focused()


def results_for(page, query: str, mode: str | None = None) -> list[str]:
    """Wait until the listbox shows the results of `query` (in `mode`); their chunk ids in
    rank order (maybe none), as the backend ranked them (the listbox groups them by page)."""
    page.wait_for_function(
        """([q, mode]) => {
            const box = document.getElementById("sphinx-rag-listbox");
            return box && box.dataset.query === q && (!mode || box.dataset.mode === mode);
        }""",
        arg=[query.strip(), mode],
    )
    return page.evaluate("window.sphinxRag.dialog.results.map(r => r.id)")


def search(page, query: str, mode: str | None = None) -> list[str]:
    page.fill(INPUT, query)
    return results_for(page, query, mode)


def wait_hybrid(page):
    """The full model answers. "Automatic" loads it only once a query wants it
    (model_policy.js); a test that needs the last tier whatever it searches chooses "always",
    as a reader can in the settings panel (kept in the test's fresh context)."""
    page.evaluate("window.sphinxRag.dialog.setModelChoice('always')")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "hybrid", timeout=120_000)


# -- pydata-sphinx-theme site over HTTP ----------------------------------------------------


def test_nothing_loads_before_first_use(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    page.wait_for_load_state("networkidle")
    loaded = [u for u in page.log.requests if "/_static/sphinx_rag/" in u]
    assert all(re.search(r"/searchbar\.(js|css)\?v=", u) for u in loaded), loaded
    page.focus(".search-button__button")  # first focus of the theme's search button starts loading
    # Any ready tier: the keyword tier can give way to the static encoder between two polls.
    expect(page.locator(STATUS)).to_have_attribute("data-mode", re.compile("^(keyword|static|hybrid)$"))
    assert any(u.endswith("/_static/sphinx_rag/index/manifest.json") for u in page.log.requests)


def test_question_finds_the_strategy_parameter(page, site, serve):
    """Ctrl+K, a natural-language question; in hybrid mode the DummyClassifier `strategy`
    parameter is in the first two results (the first: the class, its card and signature),
    and Enter lands on the class's URL + anchor."""
    server = serve(site)
    expected = strategy_passage(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(QUESTION)
    wait_hybrid(page)
    ids = results_for(page, QUESTION, "hybrid")
    assert expected["id"] in ids[:2] and ids[0].startswith(expected["id"].rsplit(":", 1)[0] + ":"), ids
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + expected["url"])
    assert page.evaluate("location.hash") == "#mlkit.dummy.DummyClassifier"


def test_a_passage_over_several_sections_shows_their_headings(page, site, serve, tmp_path):
    """The K-fold hit's passage starts in the section above it: the dialog shows the
    section it shows text from, as a heading of its own (text, never HTML)."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    query = "How many folds does KFold use by default?"
    page.keyboard.type(query)
    wait_hybrid(page)
    results_for(page, query, "hybrid")
    results = page.evaluate("window.sphinxRag.dialog.results")
    kfold = next(r for r in results if r["id"] == "user_guide/cross_validation#k-fold:0")
    headings = [text for kind, text, *_ in kfold["display"] if kind == "heading"]
    assert headings[:2] == ["Cross-validation iterators", "K-fold"], headings
    # the dialog shows the passage from its best block, under the heading of that block's section
    shown = page.locator(f'{OPTIONS}:has(a[href$="#k-fold"]) .sphinx-rag-block--heading')
    assert shown.count() >= 1 and set(shown.all_inner_texts()) <= set(headings), shown.all_inner_texts()
    assert shown.first.evaluate("e => e.children.length === 0 || [...e.children].every(c => c.tagName === 'MARK')")
    assert shown.first.evaluate("e => getComputedStyle(e).fontWeight") == "600"
    page.locator(f'{OPTIONS}:has(a[href$="#k-fold"])').screenshot(path=str(tmp_path / "headings.png"))
    assert problems(page) == []


def test_each_passage_is_the_window_python_shows(page, site, serve):
    """One passage per hit everywhere (issue 38): each entry's passage is the window
    sphinx_rag/window.py gives for its result, the one `sphinx-rag search` prints, --json's
    display and the MCP server's start; never a lone "…" for a first line."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    for query in ("SimpleImputer fill_value", "avoid data leakage when scaling in cross validation"):
        search(page, query)
        results, shown = page.evaluate("""() => [  // one read: a later tier's results re-render the list
            window.sphinxRag.dialog.results.map((r) => ({display: r.display, title: r.title})),
            [...document.querySelectorAll("#sphinx-rag-listbox [role=option]")].map((e) =>
                [...e.querySelectorAll(".sphinx-rag-snippet > *")].map((b) => b.textContent))]""")
        windows = [[text for _, text, *_ in passage_window(r["display"], query_tokens(query), SHOWN_CHARS, r["title"])]
                   for r in results]
        assert shown and all(blocks in windows for blocks in shown), (query, shown, windows)
        assert all(blocks[0] != "\u2026" for blocks in shown if blocks)


def test_typo_question_still_finds_it(page, site, serve):
    server = serve(site)
    expected = strategy_passage(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)
    ids = search(page, TYPO_QUESTION, "hybrid")
    assert expected["id"] in ids[:3], ids


def test_tiers_keyword_then_static_then_model(page, context, site, serve):
    """sphinx_rag_query_encoder = "both": with the encoder and the model held back,
    keyword results come first and say so; releasing the encoder upgrades the same
    query to the static tier, releasing the model (which this question asks for once the
    static tier answered it) to the full model, and the reader's query and results stay
    in place at every step."""
    server = serve(site)
    held: dict[str, list] = {"encoder": [], "model": []}
    context.route("**/index/encoder-*.bin", lambda route: held["encoder"].append(route))
    context.route("**/index/model-*/model.onnx", lambda route: held["model"].append(route))
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    query = "What does the DummyClassifier strategy do?"
    page.keyboard.type(query)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    expect(page.locator(STATUS)).to_have_text(re.compile(r"Keyword results .* semantic search loading"))
    ids = results_for(page, query, "keyword")
    assert ids and all(i.startswith(("api/", "user_guide/", "auto_examples/")) for i in ids)
    shown = "window.sphinxRag.dialog.results.slice(0, 5).flatMap(r => [r.url, ...(r.also || [])])"
    first_url = page.evaluate("window.sphinxRag.dialog.results[0].url")
    for kind, mode in (("encoder", "static"), ("model", "hybrid")):
        for _ in range(600):  # the worker asks for the encoder at once, the model after the static answer
            if held[kind]:
                break
            page.wait_for_timeout(100)
        assert len(held[kind]) == 1, kind
        held[kind][0].continue_()
        expect(page.locator(STATUS)).to_have_attribute("data-mode", mode, timeout=120_000)
        assert page.input_value(INPUT) == query
        upgraded = results_for(page, query, mode)
        # the keyword tier's first passage is still among the first five (maybe inside another)
        assert first_url in page.evaluate(shown), (mode, upgraded, ids)
    expect(page.locator(STATUS)).to_have_text(re.compile(r"full model"))


def test_keyboard(page, site, serve):
    """`/`, Ctrl+K and Cmd+K open; arrows move the selection; Esc closes; Enter opens
    the selected (here: second) result."""
    server = serve(site)
    page.goto(server.url + "index.html")
    dialog = page.locator("dialog.sphinx-rag")
    combobox = page.locator(INPUT)
    for key in ("/", "Control+k", "Meta+k"):
        page.keyboard.press(key)
        expect(dialog).to_have_attribute("open", "")
        expect(combobox).to_be_focused()
        page.keyboard.press("Escape")
        expect(dialog).not_to_have_attribute("open", "")
    expect(page.locator("#pst-search-dialog")).not_to_have_attribute("open", "")  # the theme's stays shut

    page.keyboard.press("Control+k")
    wait_hybrid(page)  # the hybrid upgrade re-selects the first result: not in the middle of this
    search(page, "cross validation", "hybrid")
    options = page.locator(OPTIONS)
    assert options.count() >= 3
    expect(options.nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    expect(options.nth(1)).to_have_attribute("aria-selected", "true")
    expect(options.nth(0)).to_have_attribute("aria-selected", "false")
    expect(combobox).to_have_attribute("aria-activedescendant", options.nth(1).get_attribute("id"))
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # wraps to the last
    expect(options.last).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    href = options.nth(1).locator("a").get_attribute("href")
    chunk = next(c for c in chunks(site) if c["id"] == options.nth(1).get_attribute("data-id"))
    assert href == server.url + chunk["url"]
    page.keyboard.press("Enter")
    page.wait_for_url(href)


def test_theme_button_opens_our_dialog(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    page.locator(".search-button__button:visible").first.click()
    expect(page.locator("dialog.sphinx-rag")).to_have_attribute("open", "")
    expect(page.locator("#pst-search-dialog")).not_to_have_attribute("open", "")


def test_aria(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    combobox = page.locator(INPUT)
    expect(combobox).to_have_attribute("role", "combobox")
    expect(page.locator(".sphinx-rag-suggestion").first).to_be_visible()  # the empty box's suggested questions
    expect(combobox).to_have_attribute("aria-expanded", "true")
    expect(combobox).to_have_attribute("aria-controls", "sphinx-rag-listbox")
    expect(page.locator("#sphinx-rag-listbox")).to_have_attribute("role", "listbox")
    expect(page.locator(STATUS)).to_have_attribute("role", "status")
    wait_hybrid(page)  # the last tier: no upgrade re-renders the list while it is inspected
    search(page, "KFold n_splits", "hybrid")
    expect(combobox).to_have_attribute("aria-expanded", "true")
    active = combobox.get_attribute("aria-activedescendant")
    expect(page.locator(f"#{active}")).to_have_attribute("role", "option")
    expect(page.locator(f"#{active}")).to_have_attribute("aria-selected", "true")
    # grouped listbox (WAI-ARIA): groups labelled by a presentation header, options inside
    assert page.locator("#sphinx-rag-listbox > :not([role=group])").count() == 0
    for group in page.locator("#sphinx-rag-listbox > [role=group]").all():
        header = page.locator("#" + group.get_attribute("aria-labelledby"))
        expect(header).to_have_attribute("role", "presentation")
        assert header.inner_text().strip()
        assert group.locator(":scope > :not([role=option], [role=presentation])").count() == 0
    badges = set(page.locator(".sphinx-rag-badge").all_inner_texts())
    assert badges <= {"API", "EXAMPLE", "GUIDE"}, badges  # CSS uppercases Example / Guide
    page.fill(INPUT, "")  # the suggestions again: options of the same listbox
    expect(combobox).to_have_attribute("aria-expanded", "true")
    active = combobox.get_attribute("aria-activedescendant")
    expect(page.locator(f"#{active}")).to_have_class(re.compile("sphinx-rag-suggestion"))


def test_only_the_site_is_contacted_and_console_is_clean(page, site, serve):
    server = serve(site)
    page.goto(server.url + "user_guide/index.html")
    open_with_shortcut(page)
    page.keyboard.type(QUESTION)
    wait_hybrid(page)
    results_for(page, QUESTION, "hybrid")
    requests = page.log.requests
    assert any(u.endswith("/model.onnx") and "/index/model-" in u for u in requests), "worker requests are recorded too"
    assert any(u.endswith("/ort-wasm-simd-threaded.wasm") for u in requests)
    foreign = [u for u in requests if not u.startswith(server.url)]
    assert foreign == []
    assert problems(page) == []


def test_content_security_policy(page, site, serve):
    """Hybrid search under script-src 'self' 'wasm-unsafe-eval' (no 'unsafe-eval', no
    inline scripts for sphinx-rag) and worker-src 'self'."""
    server = serve(site, csp=True)
    response = page.goto(server.url + "index.html")
    csp = response.headers["content-security-policy"]
    assert "'unsafe-eval'" not in csp and "'wasm-unsafe-eval'" in csp and "'unsafe-inline'" not in csp.split(";")[1]
    open_with_shortcut(page)
    page.keyboard.type(QUESTION)
    wait_hybrid(page)
    assert results_for(page, QUESTION, "hybrid")
    assert [p for p in problems(page) if "Content Security Policy" in p or "Refused" in p] == []
    assert problems(page) == []


def test_blocked_worker_falls_back_to_keyword_search(page, site, serve):
    """A policy forbidding workers: keyword search on the main thread, and the reason shown."""
    policy = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; worker-src 'none'; "
              "style-src 'self' 'unsafe-inline'")
    server = serve(site, csp=policy)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type("KFold n_splits")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    expect(page.locator(STATUS)).to_contain_text("Keyword only: semantic search needs a Web Worker")
    assert results_for(page, "KFold n_splits", "keyword")


def test_model_failure_keeps_the_fast_encoder(page, context, site, serve):
    server = serve(site)
    context.route("**/index/model-*/model.onnx", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(FOLDS)  # a question: the model is asked for once the static tier answered
    expect(page.locator(STATUS)).to_have_text(
        re.compile(r"^Fast encoder only: the semantic model failed to load \(.*model\.onnx.*404"))
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "static")
    assert results_for(page, FOLDS, "static")


def test_encoder_and_model_failures_keep_keyword_search(page, context, site, serve):
    server = serve(site)
    for pattern in ("**/index/model-*/model.onnx", "**/index/encoder-*.bin"):
        context.route(pattern, lambda route: route.fulfill(status=404, body="gone"))
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(FOLDS)  # the keyword tier answers it (the encoder failed), then the model is asked for
    expect(page.locator(STATUS)).to_have_text(
        re.compile(r"^Keyword only: the semantic model failed to load \(.*model\.onnx.*404"))
    assert results_for(page, FOLDS, "keyword")


def test_file_url_gives_keyword_results_and_says_why(page, site):
    page.goto((site / "index.html").as_uri())
    open_with_shortcut(page)
    page.keyboard.type("DummyClassifier strategy")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    expect(page.locator(STATUS)).to_have_text(
        "Keyword only: opened from file://, semantic search needs http(s)")
    ids = results_for(page, "DummyClassifier strategy", "keyword")
    assert ids
    assert not any("worker.js" in u or "model.onnx" in u for u in page.log.requests)
    assert problems(page) == []


def test_parity_with_python(page, site, serve):
    """The browser's top-10 ids equal sphinx_rag.search.retrieve.Searcher's on the same build,
    for the queries of tests/fixtures/rankings.json."""
    from sphinx_rag.search.retrieve import Searcher

    fixture = Path(__file__).resolve().parent.parent / "fixtures" / "rankings.json"
    # A blank query is not searched by the UI (the Python side returns nothing for it too).
    queries = [q["query"] for q in json.loads(fixture.read_text())["queries"] if q["query"].strip()]
    searcher = Searcher(site)
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)
    mismatches = []
    for query in queries:
        browser_ids = search(page, query, "hybrid")
        python_ids = [r.id for r in searcher.search(query, 10)]
        if browser_ids != python_ids:
            mismatches.append((query, browser_ids, python_ids))
    assert mismatches == []


def test_small_screen_and_dark_mode(page, site, serve, tmp_path):
    server = serve(site)
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    search(page, "How do I scale features to a range?")
    box = page.locator("dialog.sphinx-rag").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 375
    assert page.evaluate("""() => { const d = document.querySelector("dialog.sphinx-rag");
        return d.scrollWidth <= d.clientWidth; }""")
    page.screenshot(path=str(tmp_path / "narrow.png"))

    def background():
        return page.evaluate("""() => getComputedStyle(document.querySelector("dialog.sphinx-rag"))
            .backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)""")

    page.evaluate("document.documentElement.dataset.theme = 'light'")
    assert sum(background()) > 600
    page.evaluate("document.documentElement.dataset.theme = 'dark'")
    assert sum(background()) < 200
    page.screenshot(path=str(tmp_path / "dark.png"))


# -- alabaster (Sphinx's default theme), keyword-only index --------------------------------


def test_alabaster_search_box_opens_the_dialog(page, alabaster_site, serve):
    server = serve(alabaster_site)
    page.goto(server.url + "guide.html")
    box = page.locator("#searchbox input[name=q]")
    expect(box).to_be_visible()  # the theme's own box is the entry point
    expect(page.locator("button.sphinx-rag-trigger")).to_have_count(0)
    box.click()
    expect(page.locator(INPUT)).to_be_focused()
    page.keyboard.type("baseline strategy")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    expect(page.locator(STATUS)).to_contain_text("no semantic embeddings")
    ids = results_for(page, "baseline strategy", "keyword")
    assert ids[0] == "guide#choosing-a-baseline-strategy:0"
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + "guide.html#choosing-a-baseline-strategy")
    assert problems(page) == []


def test_a_dirhtml_site_links_results_from_a_nested_page(page, builder_site, serve):
    """``-b dirhtml``: every page is a directory (guide/index.html), one level deeper than
    with ``-b html``; a result still lands on its page and anchor."""
    site = builder_site("dirhtml")
    assert (site / "guide" / "index.html").is_file()
    server = serve(site)
    page.goto(server.url + "guide/")
    page.locator("#searchbox input[name=q]").click()
    page.keyboard.type("baseline strategy")
    ids = results_for(page, "baseline strategy", "keyword")
    assert ids[0] == "guide#choosing-a-baseline-strategy:0"
    expect(page.locator("#sphinx-rag-listbox a").first).to_have_attribute(
        "href", server.url + "guide/#choosing-a-baseline-strategy")
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + "guide/#choosing-a-baseline-strategy")
    assert problems(page) == []


def test_a_singlehtml_site_groups_its_documents_and_scrolls_to_the_result(page, builder_site, serve):
    """``-b singlehtml``: one file holds every document. Results are grouped by document,
    and Enter moves to the result's anchor on the same page, closing the dialog."""
    server = serve(builder_site("singlehtml"))
    page.goto(server.url + "index.html")
    open_with_shortcut(page)  # alabaster's singlehtml page has no search box
    page.keyboard.type("search")
    ids = results_for(page, "search", "keyword")
    docs = [i.split("#")[0] for i in ids]
    groups = page.locator("#sphinx-rag-listbox [role=group]")
    expect(groups).to_have_count(len(dict.fromkeys(docs)))
    assert len(set(docs)) > 1, ids  # the index page and the markup page both say "search"
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/index\.html#[\w-]+$"))
    expect(page.locator("dialog.sphinx-rag")).not_to_have_attribute("open", "")
    assert problems(page) == []


def test_sphinx_search_page_still_works(page, alabaster_site, serve):
    server = serve(alabaster_site)
    page.goto(server.url + "search.html?q=baseline")
    expect(page.locator("#search-results ul.search li").first).to_be_visible()
    expect(page.locator("button.sphinx-rag-trigger")).to_be_visible()


def test_document_markup_is_shown_as_text(page, alabaster_site, serve):
    server = serve(alabaster_site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    ids = search(page, "zanzibarqux")
    assert ids == ["markup#untrusted-payload:0"]
    snippet = page.locator(".sphinx-rag-snippet").first
    expect(snippet).to_contain_text("""<img src=x onerror="document.documentElement.dataset.xss='pwned'">""")
    expect(page.locator(".sphinx-rag-group-title").first).to_have_text("Escaping <b>tags</b> in titles")
    assert page.locator("dialog.sphinx-rag img, dialog.sphinx-rag b").count() == 0
    assert page.evaluate("document.documentElement.dataset.xss") is None
    assert problems(page) == []


def test_damaged_shard_is_named_and_never_used(page, site, serve, tmp_path):
    """A term shard changed on the server (same name): the browser checks its hash,
    refetches it once, then says the index is damaged instead of searching with it."""
    import shutil

    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    index = copy / "_static" / "sphinx_rag" / "index"
    for shard in index.glob("terms-*.js"):
        text = shard.read_text()
        at = text.index('","') + 10
        shard.write_text(text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1:])
    server = serve(copy)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type("KFold n_splits")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "error", timeout=60_000)
    expect(page.locator(STATUS)).to_contain_text("search index on the server is damaged")
    expect(page.locator(STATUS)).to_contain_text("rebuild the docs")
    assert page.locator(OPTIONS).count() == 0




def test_new_results_select_the_first_again(page, site, serve):
    """After moving down the list, the results of the next query start at #1: Enter opens
    the best result, not whatever sat at the old position."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)  # (the hybrid upgrade would select the first result again by itself)
    search(page, "cross validation", "hybrid")
    for _ in range(4):
        page.keyboard.press("ArrowDown")
    expect(page.locator("#sphinx-rag-option-4")).to_have_attribute("aria-selected", "true")
    page.keyboard.type(" folds")
    results_for(page, "cross validation folds")
    expect(page.locator("#sphinx-rag-option-0")).to_have_attribute("aria-selected", "true")
    assert page.locator("[role=option][aria-selected=true]").count() == 1


def test_escape_and_arrows_work_from_anywhere_in_the_dialog(page, site, serve):
    """Sphinx's sphinx_highlight.js cancels Escape on the document; the dialog still closes
    from the footer link, and arrows move the selection from there too."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)
    search(page, "dummy classifier", "hybrid")
    page.locator("a.sphinx-rag-fullsearch").focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator(INPUT)).to_be_focused()
    expect(page.locator("#sphinx-rag-option-1")).to_have_attribute("aria-selected", "true")
    page.locator("a.sphinx-rag-fullsearch").focus()
    page.keyboard.press("Escape")
    expect(page.locator("dialog.sphinx-rag")).not_to_have_attribute("open", "")
    open_with_shortcut(page)
    page.locator(STATUS).click()  # focus on the dialog itself
    page.keyboard.press("Escape")
    expect(page.locator("dialog.sphinx-rag")).not_to_have_attribute("open", "")


def test_a_shared_link_opens_the_dialog_with_its_query(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    search(page, "dummy classifier strategy")
    link = page.locator("a.sphinx-rag-share")
    expect(link).to_be_visible()
    href = link.get_attribute("href")
    assert href.startswith(server.url + "index.html?q=dummy+classifier+strategy")
    page.goto(href)
    expect(page.locator("dialog.sphinx-rag")).to_have_attribute("open", "")
    expect(page.locator(INPUT)).to_have_value("dummy classifier strategy")
    assert results_for(page, "dummy classifier strategy")
    # Sphinx's own search page keeps its ?q= for itself
    page.goto(server.url + "search.html?q=strategy")
    page.wait_for_load_state("networkidle")
    expect(page.locator("dialog.sphinx-rag")).not_to_have_attribute("open", "")


def test_nonsense_says_no_good_match_and_keeps_the_nearest(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type("banana smoothie recipe")
    wait_hybrid(page)
    assert results_for(page, "banana smoothie recipe", "hybrid")  # the nearest results stay
    expect(page.locator(".sphinx-rag-empty")).to_have_text("No good match for “banana smoothie recipe”. The nearest results:")
    expect(page.locator("#sphinx-rag-listbox")).to_have_attribute("data-weak", "")
    expect(page.locator("a.sphinx-rag-fullsearch")).to_be_visible()
    search(page, QUESTION, "hybrid")
    expect(page.locator(".sphinx-rag-empty")).to_be_hidden()


def test_touch_phone_gets_words_not_keys(browser, site, serve):
    """On a touch phone the close button says "Close" (no Esc key there) and the
    placeholder fits a 375 px screen."""
    server = serve(site)
    ctx = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    try:
        page = ctx.new_page()
        page.goto(server.url + "index.html")
        page.locator(".search-button__button:visible").first.tap()
        close = page.locator("dialog.sphinx-rag .sphinx-rag-close")
        expect(close).to_be_visible()
        expect(close).to_have_text("Close", use_inner_text=True)
        placeholder = page.locator(INPUT).get_attribute("placeholder")
        assert placeholder == "Search the docs…"
        fits = page.evaluate("""() => { const i = document.querySelector("dialog.sphinx-rag input");
            const c = document.createElement("canvas").getContext("2d"); c.font = getComputedStyle(i).font;
            return c.measureText(i.placeholder).width <= i.clientWidth; }""")
        assert fits
        close.tap()
        expect(page.locator("dialog.sphinx-rag")).not_to_have_attribute("open", "")
    finally:
        ctx.close()


# -- sphinx_rag_query_encoder = "static": semantic search without the model ------------------


def test_a_static_site_answers_semantically_without_the_model(page, context, static_site, serve):
    """No model and no onnxruntime are fetched (the site has none); the status says the
    fast encoder answers, and the browser's ranking is Python's for the same site."""
    from sphinx_rag.search.retrieve import Searcher

    server = serve(static_site)
    fetched: list[str] = []
    context.on("response", lambda r: fetched.append(r.url))
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.keyboard.type(QUESTION)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "static", timeout=120_000)
    expect(page.locator(STATUS)).to_have_text(re.compile(r"fast query encoder"))
    ids = results_for(page, QUESTION, "static")
    want = [r.id for r in Searcher(static_site).search(QUESTION, k=10)]
    assert ids[:5] == want[:5], (ids, want)
    assert any("/index/encoder-" in u for u in fetched)
    assert not [u for u in fetched if "/ort-" in u or "/model-" in u or u.endswith(".wasm")]
    assert not problems(page)


PASSAGE_QUERIES = [
    "hyper-parameters get_params set_params clone", "imputer strategy", "knn warning identical distances",
    "avoid data leakage when scaling in cross validation", "StandardScaler see also", "confusion matrix normalize",
    "ridge regression objective function", "What are the values of the strategy parameter in a dummy classifier?",
    "example of one-hot encoding a subscription plan column for a churn model", "train_test_split random_state",
]


def test_passages_show_the_display_form(page, site, serve):
    """Each result's passage is its display form: code in <pre><code> with its newlines,
    no reST markup, no template wording, no heading line, cuts between whole words, the
    query terms marked."""
    server = serve(site)
    words = {w for c in chunks(site) for w in re.findall(r"\w+", c["text"] + json.dumps(c["display"]))}
    lower_words = {w.lower() for w in words}
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)
    search(page, PASSAGE_QUERIES[0], "hybrid")
    first = page.locator(OPTIONS).filter(has=page.locator(".sphinx-rag-snippet pre > code")).first
    code = first.locator(".sphinx-rag-snippet pre > code")
    expect(code.first).to_be_visible()
    shown_code = code.first.evaluate("e => e.innerText")
    assert "from mlkit.linear_model import Ridge\n\nreg = Ridge(alpha=1.0)\n" in shown_code, shown_code
    assert first.locator(".sphinx-rag-snippet pre").first.evaluate("e => getComputedStyle(e).whiteSpace") == "pre"
    for query in PASSAGE_QUERIES:
        search(page, query, "hybrid")
        passages = page.eval_on_selector_all(OPTIONS, """els => els.map(e => ({
            title: e.querySelector('.sphinx-rag-path').innerText,
            text: e.querySelector('.sphinx-rag-snippet').innerText,
            marks: e.querySelectorAll('.sphinx-rag-snippet mark').length}))""")
        assert passages, query  # one entry per URL: the 10 results may make only a few entries
        assert 2 * sum(p["marks"] > 0 for p in passages) >= len(passages), (query, passages)
        for p in passages:
            text = p["text"]
            assert text.strip(), (query, p)
            assert not re.search(r":\w+:`|\.\. \w[\w-]*::|``", text), (query, text)
            assert not re.search(r"is described as|has the following type|^(Parameter|Attribute) \w+ of ", text,
                                 re.M), (query, text)
            assert text.split("\n", 1)[0].strip() != p["title"].replace(" › ", " > ").strip(), (query, text)
            for m in re.finditer(r"(\w+)\s*\u2026", text):  # the word before "…" is whole
                assert m.group(1) in words or m.group(1).lower() in lower_words, (query, m.group(0), text)
            assert not re.search(r"^[A-Z ]+\n+\u2026", text, re.M), (query, text)  # no label with nothing under it
            for m in re.finditer(r"\u2026\s*(\w+)", text):  # and the word after it (a label: upper case by CSS)
                assert m.group(1) in words or m.group(1).lower() in lower_words, (query, m.group(0), text)
    assert problems(page) == []
