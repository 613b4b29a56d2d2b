"""The dialog a reader sees, in real Chromium: results grouped by page, kind filters,
recent searches. The demo docs (pydata-sphinx-theme) are built once per session; no
timing assertions (every wait is for a state).
"""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import expect

from site_helpers import QuietHandler, StaticServer

from test_search_e2e import INPUT, OPTIONS, STATUS, open_with_shortcut, problems, results_for, search, wait_hybrid

LISTBOX = "#sphinx-rag-listbox"
RECENT = LISTBOX + " .sphinx-rag-recent"  # (the empty box also suggests questions: test_empty_dialog.py)
CHIPS = ".sphinx-rag-filters button"


def shown(page) -> list[dict]:
    """The listbox as shown: per option, its group header, href, kind, and chunk ids."""
    return page.evaluate("""() => Array.from(document.querySelectorAll("#sphinx-rag-listbox [role=option]"))
        .map(o => ({
            group: document.getElementById(o.closest("[role=group]").getAttribute("aria-labelledby")).textContent,
            href: o.querySelector("a").getAttribute("href"),
            kind: o.dataset.kind,
            ids: JSON.parse(o.dataset.ids),
            id: o.id,
        }))""")


def ranked(page) -> list[dict]:
    return page.evaluate("window.sphinxRag.dialog.results.map(r => ({id: r.id, url: r.url, kind: r.kind}))")


def page_of(url: str) -> str:
    return url.split("#")[0]


def test_results_are_grouped_by_page_with_a_count(page, site, serve):
    """One group per page, in the order of each page's best hit; the page's hits beneath in
    rank order; one entry per URL (duplicates merged); "N results on M pages"."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)  # the last tier: no upgrade re-renders the list between two readings
    for query in ("cross validation", "StandardScaler with_mean"):
        search(page, query, "hybrid")
        hits = ranked(page)
        entries = shown(page)
        hrefs = [e["href"] for e in entries]
        assert len(set(hrefs)) == len(hrefs), hrefs  # no two entries with the same URL
        # every hit is in exactly one entry, and the entry's URL is the hit's
        by_id = {h["id"]: h for h in hits}
        assert sorted(i for e in entries for i in e["ids"]) == sorted(by_id)
        for e in entries:  # (a text fragment may lead to the name asked for inside the anchor's section)
            assert {server.url + by_id[i]["url"] for i in e["ids"]} == {re.sub(r"#?:~:text=[^#]*$", "", e["href"])}
        # groups: in order of the page's best hit; inside a group, entries in rank order
        pages_by_rank = list(dict.fromkeys(page_of(h["url"]) for h in hits))
        groups = list(dict.fromkeys((e["group"], page_of(e["href"])) for e in entries))
        assert [server.url + p for p in pages_by_rank] == [p for _, p in groups]
        assert len({g for g, _ in groups}) == len(groups)  # one group per page
        rank = {h["id"]: i for i, h in enumerate(hits)}
        for a, b in zip(entries, entries[1:]):
            if page_of(a["href"]) == page_of(b["href"]):
                assert rank[a["ids"][0]] < rank[b["ids"][0]]
        n, m = len(entries), len(groups)
        expect(page.locator(".sphinx-rag-count")).to_have_text(
            f"{n} result{'s' * (n != 1)} on {m} page{'s' * (m != 1)}")
    # StandardScaler's parameters share the class's anchor: one entry says how many more matched
    merged = [e for e in shown(page) if len(e["ids"]) > 1]
    assert merged
    expect(page.locator(".sphinx-rag-more").first).to_have_text(f"+{len(merged[0]['ids']) - 1} more matches here")


def test_keys_walk_the_entries_in_visual_order(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)  # the upgrade to hybrid results would select the first one again
    search(page, "cross validation", "hybrid")
    entries = shown(page)
    combobox = page.locator(INPUT)
    assert len({e["group"] for e in entries}) >= 2
    expect(combobox).to_have_attribute("aria-activedescendant", entries[0]["id"])  # new results: the first
    visited = [combobox.get_attribute("aria-activedescendant")]
    for _ in range(len(entries) - 1):
        page.keyboard.press("ArrowDown")
        visited.append(combobox.get_attribute("aria-activedescendant"))
    assert visited == [e["id"] for e in entries]  # down the groups as they are drawn
    page.keyboard.press("ArrowDown")
    expect(combobox).to_have_attribute("aria-activedescendant", entries[0]["id"])  # wraps
    # PageDown / PageUp: the first entry of the next / previous page
    starts = [i for i, e in enumerate(entries) if i == 0 or e["group"] != entries[i - 1]["group"]]
    page.keyboard.press("PageDown")
    expect(combobox).to_have_attribute("aria-activedescendant", entries[starts[1]]["id"])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("PageUp")
    expect(combobox).to_have_attribute("aria-activedescendant", entries[starts[1]]["id"])
    page.keyboard.press("PageUp")
    expect(combobox).to_have_attribute("aria-activedescendant", entries[0]["id"])
    assert page.locator("[role=option][aria-selected=true]").count() == 1
    page.keyboard.press("PageDown")
    page.keyboard.press("Enter")
    page.wait_for_url(entries[starts[1]]["href"])


def test_kind_chips_filter_the_results_and_are_remembered(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    wait_hybrid(page)
    search(page, "cross validation", "hybrid")
    entries = shown(page)
    kinds = {e["kind"] for e in entries}
    assert {"api", "example", "guide"} <= kinds
    chips = page.locator(CHIPS)
    labels = {"all": "All", "api": "API", "example": "Examples", "guide": "Guide"}
    expect(chips).to_have_text([f"{labels[k]}{n}" for k, n in
                                [("all", len(entries))] + [(k, sum(e["kind"] == k for e in entries))
                                                           for k in ("api", "example", "guide")]])
    expect(chips.first).to_have_attribute("aria-pressed", "true")
    requests = page.evaluate("window.sphinxRag.dialog.requestId")

    # keyboard: Tab reaches the chips, arrows move between them, Enter presses one
    for _ in range(10):
        if page.evaluate("document.activeElement.matches('.sphinx-rag-filters button')"):
            break
        page.keyboard.press("Tab")
    expect(chips.first).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(page.locator(CHIPS + "[data-kind=api]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(CHIPS + "[data-kind=api]")).to_have_attribute("aria-pressed", "true")
    api = shown(page)
    assert api and all(e["kind"] == "api" for e in api)
    assert [e["href"] for e in api] == [e["href"] for e in entries if e["kind"] == "api"]
    assert page.evaluate("window.sphinxRag.dialog.requestId") == requests  # no new query
    expect(page.locator(INPUT)).to_have_attribute("aria-activedescendant", api[0]["id"])
    expect(page.locator(".sphinx-rag-count")).to_contain_text(f"{len(api)} result")

    page.locator(CHIPS + "[data-kind=guide]").click()
    assert {e["kind"] for e in shown(page)} == {"guide"}

    # remembered for the session: another page of the same tab, a new query, still Guide
    page.goto(server.url + "user_guide/index.html")
    open_with_shortcut(page)
    wait_hybrid(page)  # the last tier: no upgrade re-renders the list between two readings
    search(page, "KFold n_splits", "hybrid")
    expect(page.locator(CHIPS + "[data-kind=guide]")).to_have_attribute("aria-pressed", "true")
    assert {e["kind"] for e in shown(page)} == {"guide"}
    # a query without guide results (API and example ones, keyword or hybrid) shows all of them
    search(page, "KNeighborsClassifier kneighbors return_distance n_neighbors", "hybrid")
    assert "guide" not in {h["kind"] for h in ranked(page)}
    expect(page.locator(CHIPS + "[data-kind=all]")).to_have_attribute("aria-pressed", "true")
    expect(page.locator(CHIPS + "[data-kind=guide]")).to_have_count(0)  # only chips with hits
    kinds_now = {e["kind"] for e in shown(page)}
    assert kinds_now == {h["kind"] for h in ranked(page)}  # every result is shown again
    expect(page.locator(CHIPS)).to_have_count(1 + len(kinds_now))
    assert problems(page) == []


def open_first(page):
    """Enter on the active result; wait until its page is loaded."""
    href = page.locator(OPTIONS + "[aria-selected=true] a").get_attribute("href")
    page.keyboard.press("Enter")
    page.wait_for_url(href)


def test_recent_searches(page, site, serve):
    """The empty box lists the queries whose results the reader opened, newest first;
    arrows and Enter run one again; "Clear recent searches" forgets them."""
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    expect(page.locator(RECENT)).to_have_count(0)  # nothing yet
    for query in ("KFold n_splits", "dummy classifier strategy"):
        wait_hybrid(page)  # Enter must open the result read, not one a tier upgrade put first
        search(page, query, "hybrid")
        open_first(page)
        open_with_shortcut(page)
    search(page, "typed but never opened")
    page.fill(INPUT, "")
    recent = page.locator(RECENT)
    expect(recent).to_have_text(["dummy classifier strategy", "KFold n_splits"])
    expect(page.locator(LISTBOX + " [role=group]").first).to_have_attribute("aria-labelledby", "sphinx-rag-recent-title")
    expect(page.locator("#sphinx-rag-recent-title")).to_have_text("Recent searches")
    expect(page.locator(INPUT)).to_have_attribute("aria-expanded", "true")
    page.keyboard.press("ArrowDown")
    expect(recent.nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(page.locator(INPUT)).to_have_value("KFold n_splits")
    assert results_for(page, "KFold n_splits")
    page.fill(INPUT, "")
    page.locator("button.sphinx-rag-clear-recent").click()
    expect(page.locator(RECENT)).to_have_count(0)
    expect(page.locator("button.sphinx-rag-clear-recent")).to_be_hidden()
    page.reload()
    open_with_shortcut(page)
    expect(page.locator(RECENT)).to_have_count(0)
    assert page.log.errors == []  # (other pages of the demo ask for external resources: not ours)


def test_recent_searches_are_capped_and_per_site(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    key = "sphinx-rag-recent:/"
    page.evaluate("([k, v]) => localStorage.setItem(k, v)",
                  [key, json.dumps([f"query {i}" for i in range(20)])])
    page.evaluate("localStorage.setItem('sphinx-rag-recent:/other-project/', JSON.stringify(['elsewhere']))")
    open_with_shortcut(page)
    expect(page.locator(RECENT)).to_have_count(6)
    assert "elsewhere" not in page.locator(LISTBOX).inner_text()
    search(page, "KFold n_splits")
    open_first(page)
    stored = json.loads(page.evaluate("k => localStorage.getItem(k)", key))
    assert stored[0] == "KFold n_splits" and len(stored) == 6


def test_nothing_is_stored_when_the_browser_refuses_storage(browser, site, serve):
    """Storage that throws on access (blocked cookies): no recent searches, no filter
    memory, no errors; search and the chips still work."""
    server = serve(site)
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    ctx.add_init_script("""for (const name of ["localStorage", "sessionStorage"]) {
        Object.defineProperty(window, name, { get() { throw new DOMException("denied", "SecurityError"); } });
    }""")
    try:
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(e.stack or str(e)))
        page.goto(server.url + "index.html")
        page.wait_for_load_state("networkidle")
        theme_errors = len(errors)  # pydata-sphinx-theme's own inline script reads localStorage
        open_with_shortcut(page)
        search(page, "cross validation")
        page.locator(CHIPS + "[data-kind=api]").click()
        assert {e["kind"] for e in shown(page)} == {"api"}
        page.locator(INPUT).focus()
        assert errors[theme_errors:] == []
        open_first(page)
        page.wait_for_load_state("networkidle")
        theme_errors = len(errors)  # the theme again, on the new page
        open_with_shortcut(page)
        expect(page.locator(RECENT)).to_have_count(0)  # nothing was remembered
        search(page, "cross validation")
        expect(page.locator(CHIPS + "[data-kind=all]")).to_have_attribute("aria-pressed", "true")
        assert errors[theme_errors:] == []
    finally:
        ctx.close()


class SlowShards(QuietHandler):
    """Keyword shards answer after 250 ms: a query takes longer than a keystroke."""

    def do_GET(self):
        if re.search(r"/index/(terms|texts|near)-", self.path):
            time.sleep(0.25)
        super().do_GET()


def test_typing_on_a_cold_page_never_freezes_the_list(page, context, site):
    """Typing fast while the index loads, the static encoder and the model held back:
    answers to the prefixes appear while the reader is still typing (newer ones replacing
    older ones, never the reverse), the list ends on the final query's keyword results
    (Python's keyword ranking), and once the encoder, then the model, is ready the same
    query comes back in that tier (Python's ranking again), with nothing typed."""
    from sphinx_rag.search.retrieve import Searcher

    held: dict[str, list] = {"encoder": [], "model": []}
    context.route("**/index/encoder-*.bin", lambda route: held["encoder"].append(route))
    context.route("**/index/model-*/model.onnx", lambda route: held["model"].append(route))
    query = "cross validation with stratified folds"
    with StaticServer(site, SlowShards) as server:
        page.goto(server.url + "index.html")
        page.evaluate("""() => {
            window.shownWhileTyping = [];
            const box = document.getElementById("sphinx-rag-listbox");
            new MutationObserver(() => window.shownWhileTyping.push(
                [box.dataset.query || "", document.getElementById("sphinx-rag-input").value]
            )).observe(box, { attributes: true, attributeFilter: ["data-query"] });
        }""")
        open_with_shortcut(page)
        page.keyboard.type(query, delay=60)
        ids = results_for(page, query, "keyword")
        shown_queries = [q for q, _ in page.evaluate("window.shownWhileTyping") if q]
        typed_then = [typed for q, typed in page.evaluate("window.shownWhileTyping") if q]
        assert all(query.startswith(q) for q in shown_queries), shown_queries
        assert all(len(a) <= len(b) for a, b in zip(shown_queries, shown_queries[1:])), shown_queries
        assert shown_queries[-1] == query
        assert any(typed != query for typed in typed_then), "no results appeared while typing"
        assert ids == [r.id for r in Searcher(site, fusion="bm25").search(query, 10)]
        expect(page.locator(INPUT)).to_have_value(query)
        for kind, mode, encoder in (("encoder", "static", "static"), ("model", "hybrid", "model")):
            for _ in range(600):
                if held[kind]:
                    break
                page.wait_for_timeout(100)
            held[kind][0].continue_()
            expect(page.locator(STATUS)).to_have_attribute("data-mode", mode, timeout=120_000)
            want = [r.id for r in Searcher(site, encoder=encoder).search(query, 10)]
            assert results_for(page, query, mode) == want, kind
