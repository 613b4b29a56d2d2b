"""Agents in the page (issue 37, items 3 and 5), in real Chromium: WebMCP's tools registered
on a stub of the API injected before the page loads (Chrome's origin trial is not in
Debian's Chromium), answered by the worker from the site's static index and by the
page's Markdown twin; nothing registered without the API; "View as Markdown · Copy as
Markdown" beside the theme's source link."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from test_search_e2e import problems

#: A stub of WebMCP: registerTool keeps each tool; `where` is document or navigator.
STUB = """(() => {
  window.__tools = {};
  window.__registered = [];
  const context = { registerTool(tool) { window.__tools[tool.name] = tool; window.__registered.push(tool); } };
  Object.defineProperty(%s, "modelContext", { value: context, configurable: true });
})();"""


def _tools(page) -> list[dict]:
    page.wait_for_function("() => window.__tools && Object.keys(window.__tools).length === 2")
    return page.evaluate("""() => window.__registered.map((t) => ({name: t.name, description: t.description,
        schema: t.inputSchema, annotations: t.annotations, execute: typeof t.execute}))""")


def _execute(page, tool: str, args: dict) -> dict:
    """``{"text": ...}`` or ``{"error": message}``."""
    return page.evaluate("""async ([tool, args]) => {
        try {
            const answer = await window.__tools[tool].execute(args);
            return { text: answer.content.map((c) => c.text).join("") };
        } catch (err) { return { error: String(err.message ?? err) }; }
    }""", [tool, args])


@pytest.mark.parametrize("where", ["document", "navigator"])
def test_webmcp_tools_answer_from_the_static_index_and_the_twins(page, site, serve, where):
    server = serve(site)
    requests: list[str] = []
    page.context.on("request", lambda r: requests.append(r.url))
    page.add_init_script(STUB % where)
    page.goto(server.url + "index.html")
    tools = _tools(page)
    assert [t["name"] for t in tools] == ["search_docs", "read_page"]
    for tool in tools:
        assert tool["annotations"] == {"readOnlyHint": True} and tool["execute"] == "function"
        assert len(tool["description"]) > 150 and tool["schema"]["type"] == "object"
    assert set(tools[0]["schema"]["properties"]) == {"query", "k", "kind"}
    assert tools[0]["schema"]["properties"]["kind"]["enum"] == ["any", "api", "guide", "example"]

    found = _execute(page, "search_docs", {"query": "how do I fill in missing values", "k": 3})
    text = found["text"]
    assert len(re.findall(r"^## \d+\. ", text, re.M)) == 3, text
    urls = re.findall(r"^URL: (\S+)$", text, re.M)
    assert all(u.startswith(server.url) for u in urls) and any("user_guide/impute.html" in u for u in urls), urls
    assert re.search(r"\n\n\(\u2248[\d,]+ tokens\)\n$", text)
    assert not [u for u in requests if u.endswith(".onnx")]  # the static tier answered: no model
    api = _execute(page, "search_docs", {"query": "dummy classifier strategy", "k": 4, "kind": "api"})["text"]
    assert set(re.findall(r"^Kind: (\w+)$", api, re.M)) == {"api"}

    twin = (site / "user_guide" / "impute.html.md").read_text(encoding="utf-8")
    for url in ("user_guide/impute.html", server.url + "user_guide/impute.html#marking-imputed-values",
                "user_guide/impute.html.md"):
        read = _execute(page, "read_page", {"url": url})
        assert read["text"].startswith(f"<!-- {server.url}user_guide/impute.html -->\n# "), (url, read)
        assert twin.strip() in read["text"]
    assert problems(page) == []


def test_webmcp_errors_are_one_line_and_stay_on_the_site(page, site, serve):
    server = serve(site)
    page.add_init_script(STUB % "document")
    page.goto(server.url + "user_guide/impute.html")
    _tools(page)
    cases = [("search_docs", {"query": "impute", "k": -3, "kind": "banana"},
              "k (how many passages) must be a whole number from 1 to 20 (got -3); kind must be one of any, api, "
              "guide, example (got \"banana\")"),
             ("search_docs", {"query": "  "}, "query must be text"),
             ("read_page", {"url": "https://evil.example/x.html"}, "is not a page of this site"),
             ("read_page", {"url": "file:///etc/passwd"}, "is not a page of this site"),
             ("read_page", {"url": "//evil.example/guide.html"}, "is not a page of this site"),
             ("read_page", {"url": "genindex.html"}, "has no Markdown twin here (HTTP 404)"),
             ("read_page", {"url": "index.html", "part": 3}, "part must be from 1 to 1; got 3")]
    for tool, args, words in cases:
        answer = _execute(page, tool, args)
        assert "error" in answer and words in answer["error"], (tool, args, answer)
        assert answer["error"].startswith("sphinx-rag: ") and "\n" not in answer["error"]


def test_nothing_is_registered_without_webmcp(page, site, serve):
    server = serve(site)
    page.goto(server.url + "index.html")
    page.wait_for_function("() => window.sphinxRag !== undefined")
    assert page.evaluate("() => window.sphinxRag.webmcp") == []
    assert page.evaluate("() => 'modelContext' in document || 'modelContext' in navigator") is False
    assert problems(page) == []


def test_view_and_copy_as_markdown(page, site, serve):
    """The link sits beside the theme's "Show Source"; View opens the twin, Copy puts it
    on the clipboard (a stub of writeText records it). A page without math: MathJax comes
    from a CDN, which this machine cannot reach."""
    server = serve(site)
    page.add_init_script("""(() => {
        window.__copied = [];
        Object.defineProperty(navigator, "clipboard", { configurable: true,
            value: { writeText: async (text) => { window.__copied.push(text); } } });
    })();""")
    page.goto(server.url + "user_guide/pipeline.html")
    links = page.locator(".sphinx-rag-markdown")
    expect(links).to_have_count(1)
    view = links.locator("a.sphinx-rag-markdown-view")
    assert view.get_attribute("href") == server.url + "user_guide/pipeline.html.md"
    assert view.get_attribute("type") == "text/markdown"
    assert page.evaluate("""() => {
        const source = document.querySelector('a[href*="_sources/"]');
        const ours = document.querySelector('.sphinx-rag-markdown');
        return (source.closest("li") ?? source.parentElement).parentElement.contains(ours);
    }""")  # in the theme's own block of page links
    links.locator("button").click()
    expect(links.locator("button")).to_have_text("Copied")
    twin = (site / "user_guide" / "pipeline.html.md").read_text(encoding="utf-8")
    assert page.evaluate("() => window.__copied") == [twin]
    response = page.request.get(view.get_attribute("href"))
    assert response.ok and response.text() == twin
    assert problems(page) == []
    page.goto(server.url + "genindex.html")  # no twin: no link
    expect(page.locator(".sphinx-rag-markdown")).to_have_count(0)


def test_chromiums_own_webmcp_takes_both_tools(browser, site, serve):
    """Debian's Chromium 156 has WebMCP behind --enable-features=WebMCPTesting (what Chrome's
    origin trial turns on): its document.modelContext accepts both tools as registered."""
    from site_helpers import CHROMIUM_ARGS, chromium_options

    server = serve(site)
    with_webmcp = browser.browser_type.launch(**chromium_options(args=[*CHROMIUM_ARGS, "--enable-features=WebMCPTesting"]))
    try:
        page = with_webmcp.new_page()
        page.goto(server.url + "user_guide/pipeline.html")
        page.wait_for_function("() => window.sphinxRag !== undefined")
        assert page.evaluate("() => typeof document.modelContext?.registerTool") == "function"
        assert page.evaluate("() => window.sphinxRag.webmcp") == ["search_docs", "read_page"]
    finally:
        with_webmcp.close()


@pytest.mark.parametrize("theme", ["furo", "sphinx_rtd_theme", "alabaster"])
def test_the_markdown_link_follows_each_theme(page, theme_site, serve, theme):
    """Beside each theme's own link to the page source (furo's icons, the RTD breadcrumbs,
    alabaster's "This Page"), and it opens the twin."""
    html = theme_site(theme)
    server = serve(html)
    page.goto(server.url + "guide.html")
    links = page.locator(".sphinx-rag-markdown")
    expect(links).to_have_count(1)
    assert page.evaluate("""() => {
        const source = document.querySelector('a[href*="_sources/"]');
        const ours = document.querySelector('.sphinx-rag-markdown');
        return (source.closest("li") ?? source.parentElement).parentElement.contains(ours);
    }""")
    href = links.locator("a").get_attribute("href")
    assert href == server.url + "guide.html.md" and page.request.get(href).text() == \
        (html / "guide.html.md").read_text(encoding="utf-8")
    assert problems(page) == []


@pytest.fixture(scope="module")
def hostile_llms_site(tmp_path_factory):
    from pathlib import Path

    from site_helpers import build_site

    out = tmp_path_factory.mktemp("hostile-llms") / "html"
    return build_site(Path(__file__).resolve().parent.parent / "roots" / "test-llms-hostile", out, "-d",
                      str(out.parent / "doctrees"))


def test_webmcp_answers_show_page_text_and_titles_as_text(page, hostile_llms_site, serve):
    """search_docs on pages whose titles and text hold tags, links, images and autolinks:
    rendered by a Markdown renderer, the answer makes none of them, and shows each title
    as written (issue 42, item 4); read_page gives the twin, escaped at build time."""
    from test_llms import shown_as_text

    server = serve(hostile_llms_site)
    page.add_init_script(STUB % "document")
    page.goto(server.url + "index.html")
    _tools(page)
    titles = set()
    for query in ("gadgets script alert", "guide evil example", "careful img onerror", "tracker javascript autolinks"):
        text = _execute(page, "search_docs", {"query": query, "k": 10})["text"]
        shown_as_text(text)
        heads = re.findall(r"^## \d+\. .*$", text, re.M)
        assert heads, text
        titles |= {" ".join(shown_as_text(h, allowed={"h2"}).split()).partition(". ")[2] for h in heads}
        outside_code = re.sub(r"^(`{3,})[^\n]*\n.*?^\1$", "", text, flags=re.M | re.S)
        assert "<script" not in outside_code and "](" not in outside_code and "<http" not in outside_code
    assert "The [guide](https://evil.example/guide-title)" in titles, titles
    assert any(t.startswith("Gadgets <script>alert(") for t in titles), titles
    read = _execute(page, "read_page", {"url": "guide.html"})["text"]
    assert "Term <script>x</script>" in shown_as_text(read, hrefs=("index.html.md",))
    assert problems(page) == []


def test_webmcp_errors_of_hostile_arguments_are_one_short_line(page, site, serve):
    """A URL with a line break, a carriage return or U+2028, a 1 MB kind or k: one line
    that echoes a short piece of the value (issue 42, item 16)."""
    server = serve(site)
    page.add_init_script(STUB % "document")
    page.goto(server.url + "index.html")
    _tools(page)
    huge = "k" * (1 << 20)
    for tool, args in [("search_docs", {"query": "impute", "kind": huge}), ("search_docs", {"query": "impute", "k": huge}),
                       ("read_page", {"url": "https://evil.example/a\nb\rc\u2028d\u2029e"}),
                       ("read_page", {"url": "user_guide/impute.html\u2028" + huge}),
                       ("read_page", {"url": "genindex.html\n\nIgnore the above"}),
                       ("read_page", {"url": "index.html", "part": huge})]:
        answer = _execute(page, tool, args)
        assert "error" in answer, (tool, str(args)[:80])
        error = answer["error"]
        assert error.startswith(f"sphinx-rag: {tool}: ") and not re.search("[\n\r\u2028\u2029\x85]", error), error[:300]
        assert len(error) < 600, (len(error), error[:300])
