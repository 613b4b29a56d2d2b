"""sphinx_rag/searchbar.py: the client on every page, its data- attributes, keyword_index.js.

The browser behaviour itself is tested in tests/browser/ (real Chromium).
"""

import base64
import json
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from sphinx_rag import searchbar
from sphinx_rag.assets import KEYWORD_SCRIPT

def needs_client(test):
    """The client must be built (scripts/setup_and_build.sh does): fail, never skip."""
    assert (searchbar.CLIENT_DIR / "searchbar.js").is_file(), "browser client not built: npm run build in js/"
    return test


@needs_client
@pytest.mark.sphinx("html", testroot="searchbar")
def test_script_tag_static_files_and_keyword_index(app):
    app.build()
    out = Path(app.outdir)
    soup = BeautifulSoup((out / "guide.html").read_text(), "html.parser")
    script = soup.find("script", attrs={"data-sphinx-rag": True})
    assert script["src"].startswith("_static/sphinx_rag/searchbar.js")
    assert script.get("type") is None  # a classic script: Chromium refuses modules from file://
    assert script.has_attr("defer")
    assert script["data-search-page"] == "search.html"
    assert script["data-project"] == "searchbar"  # the LLM prompt's {project} when only a reader set an LLM
    assert soup.find("link", href=lambda h: h and h.startswith("_static/sphinx_rag/searchbar.css"))

    assets = out / "_static" / "sphinx_rag"
    for name in ("searchbar.js", "searchbar.css", "worker.js", "ort-wasm-simd-threaded.wasm"):
        assert (assets / name).is_file(), name

    prefix = "window.SPHINX_RAG_KEYWORD_INDEX = "
    body = (assets / KEYWORD_SCRIPT).read_text().splitlines()[-1]
    assert body.startswith(prefix) and body.endswith(";")
    data = json.loads(body[len(prefix):-1])
    assert data["chunks"] == json.loads((assets / "chunks.json").read_text())
    assert data["bm25"] == json.loads((assets / "bm25.json").read_text())
    assert data["manifest"] == json.loads((assets / "manifest.json").read_text())
    for name in ("bm25_offsets.u32", "bm25_docs.u32", "bm25_impacts.f32"):
        assert base64.b64decode(data["binary"][name]) == (assets / name).read_bytes()


@pytest.mark.sphinx("html", testroot="searchbar")
def test_missing_client_is_a_warning_not_a_broken_page(app_params, make_app, tmp_path, monkeypatch):
    monkeypatch.setattr(searchbar, "CLIENT_DIR", tmp_path / "nothing")
    args, kwargs = app_params
    app = make_app(*args, **kwargs)
    app.build(force_all=True)  # the test root's output may exist from another test
    assert "browser client is missing" in app.warning.getvalue()
    assert "sphinx_rag/searchbar.js" not in (Path(app.outdir) / "index.html").read_text()


@pytest.mark.sphinx("text", testroot="searchbar")
def test_nothing_for_non_html_builders(app):
    app.build()
    assert not (Path(app.outdir) / "_static" / "sphinx_rag" / KEYWORD_SCRIPT).exists()
