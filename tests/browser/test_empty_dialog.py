"""The empty dialog's suggested questions and the opt-in "Report a bad result" link, in
real Chromium: suggestions come with the manifest (no request of their own, none before
the dialog opens), are options the keyboard reaches; the feedback link is a prefilled
URL the page never requests itself."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

from test_search_e2e import INPUT, STATUS, open_with_shortcut, problems, results_for

SUGGESTIONS = ".sphinx-rag-suggestion"
FEEDBACK = "a.sphinx-rag-feedback"
TEMPLATE = "https://issues.example.org/new?title=Search:+{query}&body={results}"


def test_the_empty_dialog_suggests_questions_the_site_answers(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    page.wait_for_load_state("networkidle")
    assert not [u for u in page.log.requests if "/_static/sphinx_rag/index/" in u]  # nothing before first use
    open_with_shortcut(page)
    expect(page.locator(SUGGESTIONS).first).to_be_visible()
    expect(page.locator("#sphinx-rag-suggested-title")).to_have_text("Suggested questions")
    questions = page.locator(SUGGESTIONS).all_inner_texts()
    assert 3 <= len(questions) <= 6 and all(q.strip().endswith("?") for q in questions)
    index_requests = [u for u in page.log.requests if "/_static/sphinx_rag/index/" in u]
    assert not [u for u in index_requests if "suggest" in u]  # they came with the manifest
    # keyboard: the first option is active; ArrowDown moves to the second; Enter searches it
    expect(page.locator(SUGGESTIONS).nth(0)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("ArrowDown")
    expect(page.locator(SUGGESTIONS).nth(1)).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Enter")
    expect(page.locator(INPUT)).to_have_value(questions[1].strip())
    ids = results_for(page, questions[1].strip())
    assert ids  # the question the site suggested has results
    # emptied again: the suggestions come back
    page.fill(INPUT, "")
    expect(page.locator(SUGGESTIONS)).to_have_count(len(questions))
    assert problems(page) == []


def test_a_maintainers_questions_and_the_feedback_link(page, theme_site, serve):
    html = theme_site("alabaster", "-D", f"sphinx_rag_feedback_url={TEMPLATE}")
    server = serve(html)
    page.goto(server.url + "guide.html")
    page.locator("#searchbox input[name=q]").click()
    expect(page.locator(INPUT)).to_be_focused()
    expect(page.locator(SUGGESTIONS).first).to_be_visible()
    expect(page.locator(FEEDBACK)).to_be_hidden()  # no query, nothing to report
    page.keyboard.type("baseline strategy")
    expect(page.locator(STATUS)).to_have_attribute("data-mode", "keyword")
    results_for(page, "baseline strategy", "keyword")
    link = page.locator(FEEDBACK)
    expect(link).to_be_visible()
    expect(link).to_have_attribute("target", "_blank")
    href = link.get_attribute("href")
    parts = urlsplit(href)
    assert parts.netloc == "issues.example.org"
    params = parse_qs(parts.query)
    assert params["title"] == ["Search: baseline strategy"]
    body = params["body"][0]
    first_url = page.evaluate("window.sphinxRag.dialog.results[0].url")
    assert "Search: baseline strategy" in body and f"({first_url})" in body
    assert body.rstrip().endswith('{"query":"baseline strategy","url":"PAGE.html#ANCHOR","rank":3}')
    assert not [u for u in page.log.requests if "example.org" in u]  # the page sent nothing
    assert problems(page) == []


def test_no_feedback_link_unless_configured(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    open_with_shortcut(page)
    page.fill(INPUT, "imputer")
    results_for(page, "imputer")
    expect(page.locator(FEEDBACK)).to_be_hidden()
