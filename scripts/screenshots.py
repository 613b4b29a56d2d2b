"""Screenshots of the search dialog on each supported theme, for the README.

Not a test: builds the demo docs with each theme (pydata-sphinx-theme is the demo's
own; furo, alabaster and sphinx_rtd_theme with ``-D html_theme=...``; embeddings come
from the shared cache), serves each build on 127.0.0.1, opens headless Chromium
(/usr/bin/chromium), types a query, waits for hybrid results and saves the dialog,
cropped to its box, as a PNG::

    python scripts/screenshots.py [--out docs/screenshots] [--query "cross validation"]
                                  [--builds demo_docs/_build/themes] [--rebuild]

Builds are kept in --builds and reused while their copy of the browser client is current
(``--rebuild`` forces new ones). Shots: pydata light, pydata dark (the theme's own
``data-theme`` switch), pydata on a 375 px phone, furo light and dark, alabaster,
sphinx_rtd_theme.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from site_helpers import DEMO, StaticServer, build_site, chromium_options, client_is_current  # noqa: E402

# (file name, theme, viewport width, page colour mode: how the theme's switch is set)
SHOTS = [
    ("pydata-light", "pydata_sphinx_theme", 1100, "light"),
    ("pydata-dark", "pydata_sphinx_theme", 1100, "dark"),
    ("pydata-phone", "pydata_sphinx_theme", 375, "light"),
    ("furo-light", "furo", 1100, "light"),
    ("furo-dark", "furo", 1100, "dark"),
    ("alabaster", "alabaster", 1100, None),
    ("sphinx-rtd-theme", "sphinx_rtd_theme", 1100, None),
]

# Each theme's own switch: pydata keeps the mode on <html>, furo on <body>.
SET_MODE = {
    "pydata_sphinx_theme": "m => { document.documentElement.dataset.mode = m; document.documentElement.dataset.theme = m; }",
    "furo": "m => { document.body.dataset.theme = m; }",
}


def build(theme: str, builds: Path, rebuild: bool) -> Path:
    out = builds / theme / "html"
    if rebuild or not (out / "index.html").is_file() or not client_is_current(out):
        print(f"building the demo docs with {theme} ...", flush=True)
        build_site(DEMO, out, "-d", str(out.parent / "doctrees"), "-D", f"html_theme={theme}",
                   fresh=rebuild)
    return out


def shoot(browser, url: str, theme: str, width: int, mode: str | None, query: str, path: Path) -> None:
    phone = width < 500
    ctx = browser.new_context(viewport={"width": width, "height": 740 if phone else 860},
                              is_mobile=phone, has_touch=phone, color_scheme="light")
    try:
        page = ctx.new_page()
        page.goto(url + "index.html")
        if mode:
            page.evaluate(SET_MODE[theme], mode)
        page.keyboard.press("Control+k")
        page.locator("dialog.sphinx-rag input[role=combobox]").fill(query)
        page.wait_for_function(
            """q => document.querySelector(".sphinx-rag-status")?.dataset.mode === "hybrid"
                && document.getElementById("sphinx-rag-listbox")?.dataset.query === q
                && document.getElementById("sphinx-rag-listbox").dataset.mode === "hybrid" """,
            arg=query, timeout=120_000)
        page.wait_for_timeout(300)  # the selection's colour transition
        target = page if phone else page.locator("dialog.sphinx-rag")
        target.screenshot(path=str(path))
    finally:
        ctx.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--builds", type=Path, default=DEMO / "_build" / "themes")
    parser.add_argument("--query", default="cross validation")
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    sites = {theme: build(theme, args.builds, args.rebuild) for theme in dict.fromkeys(t for _, t, _, _ in SHOTS)}
    with sync_playwright() as p:
        browser = p.chromium.launch(**chromium_options())
        try:
            for name, theme, width, mode in SHOTS:
                with StaticServer(sites[theme]) as server:
                    path = args.out / f"{name}.png"
                    shoot(browser, server.url, theme, width, mode, args.query, path)
                    print(f"{path}  {path.stat().st_size // 1024} KB", flush=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
