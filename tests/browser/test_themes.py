"""The dialog on each theme, in real Chromium: colours from the theme's own dark-mode
switch, and the theme's own search box as the way in. tests/roots/test-searchbar is
built per theme (keyword-only: a few seconds each).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from test_search_e2e import INPUT, STATUS, problems, results_for

DIALOG = "dialog.sphinx-rag"
# Each theme's own search box (found in their HTML: furo's sidebar, the RTD side nav, basic's #searchbox)
BOXES = {
    "furo": "form.sidebar-search-container input[name=q]",
    "sphinx_rtd_theme": "#rtd-search-form input[name=q]",
    "alabaster": "#searchbox input[name=q]",
}


def background(page) -> int:
    """Sum of the dialog's background RGB: > 600 light, < 200 dark."""
    return sum(page.evaluate("""() => getComputedStyle(document.querySelector("dialog.sphinx-rag"))
        .backgroundColor.match(/\\d+/g).slice(0, 3).map(Number)"""))


def test_furo_dark_mode_follows_its_switch(page, theme_site, serve):
    """furo keeps its mode on body[data-theme] (light, dark or auto = the system's): the
    dialog follows each change at once, without a reload, through furo's own button too."""
    server = serve(theme_site("furo"))
    page.emulate_media(color_scheme="light")
    page.goto(server.url + "guide.html")
    page.keyboard.press("Control+k")
    expect(page.locator(DIALOG)).to_have_attribute("open", "")
    body = "document.body.dataset.theme = %r"
    for mode, system, dark in (("dark", "light", True), ("light", "dark", False), ("auto", "dark", True),
                               ("auto", "light", False)):
        page.emulate_media(color_scheme=system)
        page.evaluate(body % mode)
        expect(page.locator(DIALOG)).to_have_attribute("data-sr-scheme", "dark" if dark else "light")
        assert (background(page) < 200) if dark else (background(page) > 600), (mode, system)
    # furo's own toggle button (auto -> dark -> light -> auto with a light system)
    page.keyboard.press("Escape")
    seen = set()
    for _ in range(3):
        page.locator(".theme-toggle:visible").first.click()
        mode = page.evaluate("document.body.dataset.theme")
        seen.add(mode)
        expect(page.locator(DIALOG)).to_have_attribute("data-sr-scheme", "dark" if mode == "dark" else "light")
    assert "dark" in seen
    assert problems(page) == []


@pytest.mark.parametrize("theme", ["sphinx_rtd_theme", "alabaster"])
def test_themes_without_dark_mode_keep_a_light_dialog(page, theme_site, serve, theme):
    """No dark mode in the theme: the page stays white on a dark system, so does the dialog."""
    server = serve(theme_site(theme))
    page.emulate_media(color_scheme="dark")
    page.goto(server.url + "guide.html")
    page.keyboard.press("Control+k")
    expect(page.locator(DIALOG)).to_have_attribute("data-sr-scheme", "light")
    assert background(page) > 600


@pytest.mark.parametrize("theme", list(BOXES))
def test_the_theme_search_box_opens_the_dialog(page, theme_site, serve, theme):
    """sphinx_rag_theme_search = "replace" (the default): no extra button; the theme's box
    opens the dialog on focus or click, with what it held; closing leaves focus on the box
    without reopening; typing there reopens it; Ctrl+K and / still work."""
    server = serve(theme_site(theme))
    page.goto(server.url + "guide.html")
    dialog = page.locator(DIALOG)
    box = page.locator(BOXES[theme]).first
    expect(page.locator("button.sphinx-rag-trigger")).to_have_count(0)
    expect(box).to_have_attribute("aria-haspopup", "dialog")
    box.click()
    expect(dialog).to_have_attribute("open", "")
    expect(page.locator(INPUT)).to_be_focused()
    page.keyboard.type("baseline strategy")
    assert results_for(page, "baseline strategy")[0] == "guide#choosing-a-baseline-strategy:0"
    page.keyboard.press("Escape")
    expect(dialog).not_to_have_attribute("open", "")
    page.wait_for_timeout(300)  # a reopening would be immediate; give it a moment to show
    expect(dialog).not_to_have_attribute("open", "")
    # typing into the box (focused again, or by a script before this ran) goes to the dialog
    page.evaluate("document.activeElement.blur()")
    page.evaluate("([sel]) => { document.querySelector(sel).value = 'comparing'; }", [BOXES[theme]])
    box.focus()
    expect(dialog).to_have_attribute("open", "")
    expect(page.locator(INPUT)).to_have_value("comparing")
    assert results_for(page, "comparing")
    page.keyboard.press("Escape")
    for key in ("Control+k", "/"):
        page.locator("h1").first.click()
        page.keyboard.press(key)
        expect(dialog).to_have_attribute("open", "")
        page.keyboard.press("Escape")
        expect(dialog).not_to_have_attribute("open", "")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    assert problems(page) == []


def test_both_keeps_the_theme_box_and_adds_a_button(page, theme_site, serve):
    server = serve(theme_site("furo", "-D", "sphinx_rag_theme_search=both"))
    page.goto(server.url + "guide.html")
    box = page.locator(BOXES["furo"]).first
    box.click()
    page.keyboard.type("baseline")
    expect(page.locator(DIALOG)).not_to_have_attribute("open", "")
    expect(box).to_have_value("baseline")  # the theme's box, submitting to Sphinx's search page
    trigger = page.locator("button.sphinx-rag-trigger")
    expect(trigger).to_be_visible()
    trigger.click()
    expect(page.locator(DIALOG)).to_have_attribute("open", "")


PILL = ".search-button__button"  # pydata-sphinx-theme's search pill (two copies: header and sidebar)
FEEDBACK = "sphinx_rag_feedback_url=https://github.com/o/r/issues/new?title={query}"


def _geometry(page) -> dict:
    return page.evaluate("""(pill) => {
      const box = (el) => { const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left,
                                                                          right: r.right, width: r.width, height: r.height}; };
      const footer = document.querySelector("dialog.sphinx-rag .sphinx-rag-footer");
      return {dialog: box(document.querySelector("dialog.sphinx-rag")), height: innerHeight,
              pills: [...document.querySelectorAll(pill)].map(box).filter((b) => b.width && b.height),
              footer: box(footer), links: [...footer.querySelectorAll("a:not([hidden])")].map(box),
              hints: [...footer.querySelectorAll(".sphinx-rag-hint")].map(box)};
    }""", PILL)


@pytest.mark.parametrize("width, height", [(900, 800), (1024, 800), (1100, 800), (1280, 800), (1440, 900), (1024, 600)])
def test_on_pydata_the_dialog_covers_no_search_pill_and_its_footer_is_one_line(page, theme_site, serve, width, height):
    """Issue 44: at some widths pydata-sphinx-theme puts its search pill in a second header
    row, where the dialog half-covered it; on the docs site the footer (three links: a
    feedback URL is set) wrapped at 1280 px. The dialog now sits below the pill (its bottom
    still on screen), and the key hints that do not fit are left out whole."""
    server = serve(theme_site("pydata_sphinx_theme", "-D", FEEDBACK))
    page.set_viewport_size({"width": width, "height": height})
    page.goto(server.url + "guide.html")
    page.keyboard.press("Control+k")
    expect(page.locator(DIALOG)).to_have_attribute("open", "")
    page.keyboard.type("baseline strategy")
    results_for(page, "baseline strategy")
    g = _geometry(page)
    d = g["dialog"]
    for pill in g["pills"]:
        overlap = pill["left"] < d["right"] and pill["right"] > d["left"] and pill["top"] < d["bottom"] \
            and pill["bottom"] > d["top"]
        assert not overlap, (pill, d)
    assert d["bottom"] <= g["height"]
    assert len(g["links"]) == 3 and len({round(link["top"]) for link in g["links"]}) == 1, g["links"]
    assert g["footer"]["height"] < 40, g["footer"]  # one line (two were ~60 px)
    shown = [h for h in g["hints"] if g["footer"]["top"] <= h["top"] < g["footer"]["bottom"]]
    assert shown and all(h["right"] <= g["links"][0]["left"] for h in shown)  # whole hints, left of the links
    # pydata-sphinx-theme's own console error on a fresh profile without html_context's default_mode
    assert [p for p in problems(page) if "Got invalid theme mode" not in p] == []
