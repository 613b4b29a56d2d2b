"""Long pages in the dialog (issue 29), real Chromium over real HTTP: tests/roots/test-longpages
(a 20,000-line code block, a 5,000-row table, 2,000 sections).

A name written once (a code line's, a row's key) is the first result; the entry shows the
chunk that holds it, from its line; its link takes the reader to that line or row (the
table's own id, then a text fragment), which Chromium scrolls into view.
"""

from __future__ import annotations

from playwright.sync_api import expect

INPUT = "dialog.sphinx-rag input[role=combobox]"
OPTIONS = "#sphinx-rag-listbox [role=option]"
STATUS = ".sphinx-rag-status"

# the first rect of `name` in the page's text, relative to the viewport, and its height
WHERE = """(name) => {
    const walk = document.createTreeWalker(document.querySelector("[role=main]") || document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        const at = n.data.indexOf(name);
        if (at >= 0 && !/\\w/.test(n.data[at + name.length] || "")) {
            const range = document.createRange();
            range.setStart(n, at);
            range.setEnd(n, at + name.length);
            const box = range.getBoundingClientRect();
            return {top: box.top, bottom: box.bottom, height: innerHeight};
        }
    }
    return null;
}"""


def ask(page, query: str) -> list[str]:
    page.fill(INPUT, query)
    page.wait_for_function(
        """(q) => { const box = document.getElementById("sphinx-rag-listbox");
                    return box && box.dataset.query === q && box.dataset.mode === "hybrid"; }""", arg=query)
    return page.evaluate("window.sphinxRag.dialog.results.map(r => r.id)")


def open_hybrid(page, url: str):
    page.goto(url)
    page.keyboard.press("Control+k")
    page.evaluate("window.sphinxRag.dialog.setModelChoice('always')")  # "automatic" waits for a question
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "hybrid", timeout=120_000)


def in_view(page, name: str) -> bool:
    box = page.evaluate(WHERE, name)
    return box is not None and 0 <= box["top"] and box["bottom"] <= box["height"]


def test_a_code_line_asked_by_name_is_shown_and_opened(page, longpages_html, serve):
    server = serve(longpages_html)
    open_hybrid(page, server.url + "index.html")
    ids = ask(page, "codeline19999")
    assert ids[0].startswith("code#code-page:")
    first = page.locator(OPTIONS).first
    expect(first.locator(".sphinx-rag-snippet pre code")).to_contain_text(
        'codeline19999 = transform(state, weight=9, mode="cached")')
    expect(first.locator(".sphinx-rag-snippet mark").first).to_have_text("codeline19999")
    link = first.locator("a").get_attribute("href")
    assert link == server.url + "code.html#code-page:~:text=codeline19999"
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + "code.html#code-page*")
    page.wait_for_function(f"({WHERE})('codeline19999') !== null")
    page.wait_for_function(f"(() => {{ const b = ({WHERE})('codeline19999'); return b.top >= 0 && b.bottom <= b.height; }})()")
    assert in_view(page, "codeline19999") and not in_view(page, "codeline100")
    # from the page itself (a same-document navigation): the line asked for, not the top
    page.keyboard.press("Control+k")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "hybrid", timeout=120_000)
    ask(page, "codeline15000")
    page.keyboard.press("Enter")
    page.wait_for_function(f"(() => {{ const b = ({WHERE})('codeline15000'); return b.top >= 0 && b.bottom <= b.height; }})()")
    assert not in_view(page, "codeline19999")


def test_a_table_row_asked_by_its_key_is_shown_and_opened(page, longpages_html, serve):
    server = serve(longpages_html)
    open_hybrid(page, server.url + "sections.html")
    query = "offset and state of sensor SN3643"  # the table's first chunk has more of these words
    ids = ask(page, query)
    assert ids[0].startswith("table#calibration-table:")
    first = page.locator(OPTIONS).first
    expect(first.locator(".sphinx-rag-snippet")).to_contain_text("SN3643 | ")
    link = first.locator("a").get_attribute("href")
    assert link == server.url + "table.html#calibration-table:~:text=SN3643"
    page.keyboard.press("Enter")
    page.wait_for_url(server.url + "table.html#calibration-table*")
    page.wait_for_function(f"(() => {{ const b = ({WHERE})('SN3643'); return b && b.top >= 0 && b.bottom <= b.height; }})()")
    assert not in_view(page, "SN0001")
