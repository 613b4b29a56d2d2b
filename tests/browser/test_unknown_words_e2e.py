"""A query word the fast (static) encoder does not know, in real Chromium (issue 29).

The encoder has no vector for a query none of whose WordPiece pieces it was fitted on, and
without keyword hits its tier has nothing to show; the full model, which `sphinx-rag
search` uses by default, lists the nearest chunks under "No good match". The dialog must
not say "No results" while that model is still loading, and once it is in, it shows what
the CLI shows. A site without the model ends where the CLI's static tier does.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from sphinx_rag.search.retrieve import Searcher

INPUT = "dialog.sphinx-rag input[role=combobox]"
STATUS = ".sphinx-rag-status"
EMPTY = ".sphinx-rag-empty"
WORD = "quokka"  # in no demo page, and no WordPiece piece of it is in the demo's encoder


def shown(page, query: str, mode: str) -> list[str]:
    page.wait_for_function(
        """([q, mode]) => { const box = document.getElementById("sphinx-rag-listbox");
                            return box && box.dataset.query === q && box.dataset.mode === mode; }""", arg=[query, mode])
    return page.evaluate("window.sphinxRag.dialog.results.map(r => r.id)")


def test_an_unknown_word_waits_for_the_model_then_shows_what_the_cli_shows(page, context, site, serve):
    static = Searcher(site, encoder="static")
    assert static.index.encoder().encode(static.embedding_query(WORD)) is None
    assert static.search(WORD) == []  # the static tier: nothing, in Python as in the browser
    server = serve(site)
    held = []
    context.route("**/index/model-*/model.onnx", lambda route: held.append(route))
    page.goto(server.url + "index.html")
    page.keyboard.press("Control+k")
    page.keyboard.type(WORD)
    assert shown(page, WORD, "static") == []
    expect(page.locator(EMPTY)).to_have_text(f"No results for “{WORD}” yet: semantic search is still loading…")
    for _ in range(600):
        if held:
            break
        page.wait_for_timeout(100)
    held[0].continue_()
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "hybrid", timeout=120_000)
    cli = [r.id for r in Searcher(site).search(WORD, k=10)]  # sphinx-rag search's default: the model
    assert cli and shown(page, WORD, "hybrid") == cli
    expect(page.locator(EMPTY)).to_have_text(f"No good match for “{WORD}”. The nearest results:")


def test_without_the_model_the_static_tier_has_the_last_word(page, static_site, serve):
    assert Searcher(static_site).search(WORD) == []  # the CLI's default on this site: static
    server = serve(static_site)
    page.goto(server.url + "index.html")
    page.keyboard.press("Control+k")
    page.keyboard.type(WORD)
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "static", timeout=120_000)
    assert shown(page, WORD, "static") == []
    expect(page.locator(EMPTY)).to_have_text(re.compile(f"^No results for “{WORD}”.$"))
