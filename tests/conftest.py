"""Shared fixtures: Sphinx test roots, one build of the demo docs per session, and a
small site of hostile pages (terminal escape sequences in titles and text)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from site_helpers import DEMO, HOSTILE_SECTION, HOSTILE_TEXT, HOSTILE_TITLE, build_site

pytest_plugins = ("sphinx.testing.fixtures",)

# Tests read sphinx-build's output line by line; Sphinx colours it when CI=true (as on CI
# machines) or FORCE_COLOR is set, which wraps each warning in escape sequences.
os.environ["NO_COLOR"] = "1"

#: Session fixtures that build a big site (minutes on a cold cache): their tests are slow.
SLOW_FIXTURES = {"longpages_html", "flask_html", "click_html", "attrs_html", "sklearn_html"}


def pytest_collection_modifyitems(items):
    """The quick loop's markers: ``browser`` for every test under tests/browser/, ``slow``
    for every test that needs a big site (the rest are marked where they are defined)."""
    for item in items:
        if "browser" in item.path.parts:
            item.add_marker(pytest.mark.browser)
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def rootdir():
    return Path(__file__).parent / "roots"


@pytest.fixture(scope="session")
def demo_html(tmp_path_factory) -> Path:
    """The demo docs built fresh into a temp dir (embeddings come from the cache)."""
    out = tmp_path_factory.mktemp("demo") / "html"
    build_site(DEMO, out, "-d", str(out.parent / "doctrees"))
    return out


@pytest.fixture(scope="session")
def static_site(tmp_path_factory) -> Path:
    """The demo built with ``sphinx_rag_query_encoder = "static"`` (no model in the site)."""
    out = tmp_path_factory.mktemp("static") / "html"
    build_site(DEMO, out, "-d", str(out.parent / "doctrees"), "-D", "sphinx_rag_query_encoder=static")
    return out


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory) -> Path:
    """A keyword-only site whose page title, section title and text hold terminal escapes."""
    src = tmp_path_factory.mktemp("hostile-src")
    (src / "conf.py").write_text('project = "hostile"\nextensions = ["sphinx_rag"]\nhtml_theme = "alabaster"\n'
                                 "sphinx_rag_embeddings = False\n")

    def heading(text: str, char: str) -> str:
        return f"{text}\n{char * (len(text) + 4)}\n\n"

    (src / "index.rst").write_text(heading("Hostile docs", "=") + ".. toctree::\n\n   escapes\n")
    (src / "escapes.rst").write_text(heading(HOSTILE_TITLE, "=") + heading(HOSTILE_SECTION, "-")
                                     + HOSTILE_TEXT + "\n", encoding="utf-8")
    out = tmp_path_factory.mktemp("hostile") / "html"
    return build_site(src, out, "-d", str(out.parent / "doctrees"))


@pytest.fixture(scope="session")
def longpages_html(tmp_path_factory) -> Path:
    """tests/roots/test-longpages (a 5,000-row table, a 20,000-line code block, 2,000
    sections; 4,086 chunks) built with embeddings and a static encoder: minutes the first
    time, then the embeddings come from the cache."""
    out = tmp_path_factory.mktemp("longpages") / "html"
    build_site(Path(__file__).parent / "roots" / "test-longpages", out, "-d", str(out.parent / "doctrees"))
    return out
