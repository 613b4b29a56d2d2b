"""Shared fixtures: Sphinx test roots, and one build of the demo docs per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_helpers import DEMO, build_site

pytest_plugins = ("sphinx.testing.fixtures",)


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
