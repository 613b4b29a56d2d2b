"""Malformed queries in the dialog, in real Chromium: a lone surrogate (an emoji cut in
half) on every path it takes (the listbox, the ?q= links, the worker, recent searches in
localStorage, a shared link), and a blank query. The keyword-only alabaster site: fast.
"""

from __future__ import annotations

import json

from playwright.sync_api import expect

from test_search_e2e import INPUT, OPTIONS, STATUS, problems, results_for

LISTBOX = "#sphinx-rag-listbox"
CUT = "\\uD83D"  # as JavaScript source: half of 😀 (Python strings with it do not reach the page intact)


def type_raw(page, js_text: str):
    """Put `js_text` (JavaScript string-literal source) in the search box as typing does."""
    page.evaluate(f"""() => {{
        const input = document.querySelector({json.dumps(INPUT)});
        input.value = "{js_text}";
        input.dispatchEvent(new InputEvent("input", {{bubbles: true, inputType: "insertText"}}));
    }}""")


def test_a_lone_surrogate_in_the_query_updates_the_results(page, alabaster_site, serve):
    server = serve(alabaster_site)
    page.goto(server.url + "guide.html")
    page.locator("#searchbox input[name=q]").click()
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    page.keyboard.type("baseline")
    results_for(page, "baseline", "keyword")

    type_raw(page, f"baseline strategy {CUT}")  # the emoji's second half never came
    ids = results_for(page, "baseline strategy \ufffd", "keyword")  # not the previous query's list
    assert ids and ids[0] == "guide#choosing-a-baseline-strategy:0"
    expect(page.locator(OPTIONS).first).to_be_visible()
    share = page.locator("a.sphinx-rag-share").get_attribute("href")
    assert share.endswith("?q=baseline+strategy+%EF%BF%BD"), share
    assert page.locator("a.sphinx-rag-fullsearch").get_attribute("href").endswith(
        "search.html?q=baseline%20strategy%20%EF%BF%BD")

    type_raw(page, CUT)  # nothing but the half: an answer or the empty state, never the old list
    results_for(page, "\ufffd", "keyword")
    shown = page.locator(OPTIONS).count()
    if not shown:
        expect(page.locator(".sphinx-rag-empty")).to_have_text("No results for “\ufffd”.")

    # a result opened for a malformed query: remembered well-formed, shown again as such
    type_raw(page, f"{CUT}baseline strategy")
    results_for(page, "\ufffdbaseline strategy", "keyword")
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + "guide.html#choosing-a-baseline-strategy")
    stored = page.evaluate("JSON.parse(localStorage.getItem('sphinx-rag-recent:/'))")
    assert stored[0] == "\ufffdbaseline strategy"
    assert problems(page) == []


def test_a_shared_link_with_broken_utf8_and_a_blank_query(page, alabaster_site, serve):
    """?q= with the bytes of a lone surrogate opens the dialog with U+FFFD; a blank query
    sends nothing and shows the empty box (recent searches, suggested questions), never results."""
    server = serve(alabaster_site)
    page.goto(server.url + "guide.html?q=baseline%ED%A0%BD")
    expect(page.locator("dialog.sphinx-rag")).to_have_attribute("open", "")
    results_for(page, "baseline\ufffd\ufffd\ufffd", "keyword")
    for blank in ("   ", "\\t \\u00a0"):
        type_raw(page, blank)
        expect(page.locator(LISTBOX)).to_have_attribute("data-query", "")
        expect(page.locator(f"{OPTIONS}[data-id]")).to_have_count(0)  # no result: suggestions at most
        assert page.locator(OPTIONS).count() == page.locator(f"{OPTIONS}[data-search], {OPTIONS}[data-recent]").count()
        expect(page.locator(".sphinx-rag-empty")).to_be_hidden()
        expect(page.locator(".sphinx-rag-count")).to_have_text("")
    assert problems(page) == []
