"""Federated search in real Chromium: one dialog over three sites of different test roots,
each served on its own port (another origin, with CORS), and sites that fail.

The home site (tests/roots/test-searchbar) names the others in sphinx_rag_federation
(the ``federated`` fixture): "apidemo" (tests/roots/test-api) searched from the first
query, "widgets" (tests/roots/test-llms) once the reader turns it on, and four that fail
each in its own way. Every wait is for a state, never a time.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from playwright.sync_api import expect

INPUT = "dialog.sphinx-rag input[role=combobox]"
OPTIONS = "#sphinx-rag-listbox [role=option]"
CHIPS = ".sphinx-rag-sources button[data-source]"
LINES = "ul.sphinx-rag-source-lines > li"
QUERY = "baseline widget"  # "baseline": test-searchbar and test-api; "widget": test-llms
STORAGE_KEY = "sphinx-rag-sources:/"


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def open_dialog(page, url: str):
    page.goto(url)
    page.keyboard.press("/")
    expect(page.locator("dialog.sphinx-rag")).to_have_attribute("open", "")
    expect(page.locator(CHIPS).first).to_be_visible()  # the manifest is read: the sites are known


def search(page, query: str, sources: set[str]) -> list[dict]:
    """Type `query`; wait until its results come from exactly `sources` ("" is the home site);
    each shown result's source chip, link and kind."""
    page.fill(INPUT, query)
    page.wait_for_function(
        """([q, want]) => {
            const box = document.getElementById("sphinx-rag-listbox");
            if (!box || box.dataset.query !== q) return false;
            const got = new Set([...box.querySelectorAll("[role=option] .sphinx-rag-source")].map((c) => c.dataset.source));
            return got.size === want.length && want.every((s) => got.has(s));
        }""",
        arg=[query, sorted(sources)], timeout=60_000)
    return page.eval_on_selector_all(OPTIONS, """options => options.map((o) => ({
        source: o.querySelector(".sphinx-rag-source").dataset.source,
        chip: o.querySelector(".sphinx-rag-source").textContent,
        href: o.querySelector("a").href,
    }))""")


def chip_states(page) -> dict[str, tuple[str, str]]:
    """Each site chip: (aria-pressed, data-state)."""
    return {c["source"]: (c["pressed"], c["state"]) for c in page.eval_on_selector_all(
        CHIPS, "chips => chips.map((c) => ({source: c.dataset.source, pressed: c.getAttribute('aria-pressed'), "
               "state: c.dataset.state}))")}


def test_one_search_over_three_sites(federated, page):
    home = federated.serve_home().url
    urls = federated.urls
    open_dialog(page, home)
    chips = page.eval_on_selector_all(CHIPS, "cs => cs.map((c) => c.textContent)")
    assert chips == ["searchbar", "apidemo", "widgets", "down", "badhash", "format2", "nocors"]
    assert chip_states(page)["widgets"] == ("false", "off") and chip_states(page)["apidemo"][0] == "true"
    assert not any(origin(u) == origin(urls["apidemo"]) for u in page.log.requests)  # not before a query

    two = search(page, QUERY, {"", "apidemo"})
    page.click(f"{CHIPS}[data-source='widgets']")  # the reader turns it on
    three = search(page, QUERY, {"", "apidemo", "widgets"})
    assert len(three) > len(two)
    for r in three:
        root = home if r["source"] == "" else urls[r["source"]]
        assert r["href"].startswith(root), r  # remote results link to their own site, absolute
        assert r["chip"] == (r["source"] or "searchbar")
    ranked = page.evaluate("sphinxRag.dialog.results.map((r) => r.source ?? '')")  # the merge, before grouping
    assert ranked[:3] == ["", "apidemo", "widgets"]  # by rank, home first on ties, not site by site
    states = chip_states(page)
    assert states["widgets"] == ("true", "keyword") and states["apidemo"] == ("true", "keyword")
    assert page.locator(LINES).count() == 0  # nothing failed
    assert json.loads(page.evaluate(f"localStorage.getItem({STORAGE_KEY!r})")) == {"widgets": True}

    page.reload()  # the choice is remembered for this site
    page.keyboard.press("/")
    expect(page.locator(f"{CHIPS}[data-source='widgets']")).to_have_attribute("aria-pressed", "true")
    assert len(search(page, QUERY, {"", "apidemo", "widgets"})) == len(three)
    page.click(f"{CHIPS}[data-source='']")  # this site off: the others only
    others = search(page, QUERY, {"apidemo", "widgets"})
    assert others and all(r["source"] for r in others)
    assert page.log.problems() == []


def test_each_failing_site_says_why_and_the_rest_answer(federated, page):
    home = federated.serve_home().url
    choices = {name: True for name in ("widgets", "down", "badhash", "format2", "nocors")}
    page.add_init_script(f"localStorage.setItem({STORAGE_KEY!r}, {json.dumps(json.dumps(choices))})")
    open_dialog(page, home)
    results = search(page, QUERY, {"", "apidemo", "widgets"})
    expect(page.locator(LINES)).to_have_count(4, timeout=60_000)
    lines = dict(page.eval_on_selector_all(LINES, "ls => ls.map((l) => [l.dataset.source, l.textContent])"))
    assert set(lines) == {"down", "badhash", "format2", "nocors"}
    assert "cannot be reached" in lines["down"]
    assert "refused" in lines["badhash"] and "dir-" in lines["badhash"]
    assert "format 2, this page reads 3" in lines["format2"]
    assert "Access-Control-Allow-Origin" in lines["nocors"]
    assert all("\n" not in line and line.startswith(f"{name}: not searched") for name, line in lines.items())
    states = chip_states(page)
    assert {name: states[name][1] for name in lines} == dict.fromkeys(lines, "failed")
    assert page.evaluate("sphinxRag.dialog.results[0].source") is None and len({r["source"] for r in results}) == 3
    # a later query does not ask the failed sites again
    before = len(page.log.requests)
    search(page, "baseline strategy", {"", "apidemo"})
    failed = {origin(federated.urls[name]) for name in lines}
    assert not [u for u in page.log.requests[before:] if origin(u) in failed]


def test_a_site_never_turned_on_costs_nothing(federated, page, context):
    home = federated.serve_home().url
    bytes_by_origin: dict[str, int] = {}

    def count(response):
        try:
            size = len(response.body())
        except Exception:  # a redirect or a failed request has no body
            size = 0
        bytes_by_origin[origin(response.url)] = bytes_by_origin.get(origin(response.url), 0) + size

    context.on("response", count)  # the worker's requests too
    open_dialog(page, home)
    search(page, QUERY, {"", "apidemo"})
    search(page, "strategy", {"", "apidemo"})
    never = {origin(federated.urls[n]) for n in ("widgets", "down", "badhash", "format2", "nocors")}
    assert not [u for u in page.log.requests if origin(u) in never]
    assert all(bytes_by_origin.get(o, 0) == 0 for o in never)
    assert bytes_by_origin[origin(federated.urls["apidemo"])] > 0 and bytes_by_origin[origin(home)] > 0


def test_content_security_policy_connect_src(federated, page):
    """The federated origins must be in connect-src; one that is not says so, the rest answer."""
    api = origin(federated.urls["apidemo"])
    csp = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'{hashes}; worker-src 'self'; "
           f"style-src 'self' 'unsafe-inline'; connect-src 'self' {api}")
    home = federated.serve_home(csp=csp).url
    page.add_init_script(f"localStorage.setItem({STORAGE_KEY!r}, {json.dumps(json.dumps({'widgets': True}))})")
    open_dialog(page, home)
    search(page, QUERY, {"", "apidemo"})
    expect(page.locator(f"{LINES}[data-source='widgets']")).to_contain_text("Content-Security-Policy")


def test_semantic_tier_only_for_a_compatible_model(federated_semantic, page):
    """The home query vector searches a site embedded by the same model; a site of another
    model embeds the query with its own static encoder, or answers by keyword, in one line."""
    home = federated_semantic.serve_home().url
    urls = federated_semantic.urls
    open_dialog(page, home)
    expect(page.locator(".sphinx-rag-status")).to_have_attribute("data-mode", "hybrid", timeout=180_000)
    search(page, "strategy of a dummy classifier", {"", "mlkit", "othermodel", "bare"})
    page.wait_for_function("""() => {
        const s = (n) => document.querySelector(`.sphinx-rag-sources [data-source='${n}']`)?.dataset.state;
        return s("mlkit") === "hybrid" && s("othermodel") === "static" && s("bare") === "keyword";
    }""", timeout=60_000)
    lines = dict(page.eval_on_selector_all(LINES, "ls => ls.map((l) => [l.dataset.source, l.textContent])"))
    assert list(lines) == ["bare"] and "keyword results only: its semantic search needs its own model" in lines["bare"]
    fetched = {name: [u for u in page.log.requests if u.startswith(url)] for name, url in urls.items()}
    assert any("/cluster-" in u for u in fetched["mlkit"]) and not any("/encoder-" in u for u in fetched["mlkit"])
    assert any("/encoder-" in u for u in fetched["othermodel"])
    assert not any("/encoder-" in u or "/cluster-" in u for u in fetched["bare"])
    assert not any("/model-" in u for name in urls for u in fetched[name])  # never another site's model
