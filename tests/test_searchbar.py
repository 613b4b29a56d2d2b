"""sphinx_rag/searchbar.py: the client on every page, its data- attributes, manifest.js.

The browser behaviour itself is tested in tests/browser/ (real Chromium).
"""

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from sphinx_rag import searchbar
from sphinx_rag.search.index import ASSET_DIR, IndexReader, load_chunk_records
from sphinx_rag.chunk import Chunk
from sphinx_rag.search.shards import read_script_shard


def needs_client(test):
    """The client must be built (scripts/setup_and_build.sh does): fail, never skip."""
    assert (searchbar.CLIENT_DIR / "searchbar.js").is_file(), "browser client not built: npm run build in js/"
    return test


@needs_client
@pytest.mark.sphinx("html", testroot="searchbar")
def test_script_tag_static_files_and_file_url_entry(app):
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
    for name in ("searchbar.js", "searchbar.css", "worker.js"):
        assert (assets / name).is_file(), name
    # a keyword-only index has no query model: onnxruntime's wasm (3.7 MB gzip) stays out
    assert not list(assets.glob("ort-*"))
    # Ask's in-browser model (sphinx_rag_llm_browser = True by default): wllama's bundle and wasm
    # are in the site, for a reader who asks (the page fetches them only then: tests/browser/test_ask_local.py)
    assert (assets / "wllama-ask.js").is_file() and (assets / "wllama.wasm").read_bytes()[:4] == b"\0asm"
    settings = json.loads((out / ASSET_DIR / "manifest.json").read_text())["settings"]
    assert settings["llm_browser"] == {"builtin": True, "gguf": True, "model": None}

    # file:// pages run the index as classic scripts: manifest.js holds manifest.json, and
    # every keyword shard is one sphinxRagShard("name", "base64") call
    index = out / ASSET_DIR
    call = re.compile(r'^sphinxRagShard\("([a-z]+-[0-9a-f]{16})","[A-Za-z0-9+/=]*"\);\n$')
    entry = (index / "manifest.js").read_text()
    assert call.match(entry).group(1).startswith("manifest-")
    assert json.loads(read_script_shard(call.match(entry).group(1) + ".js", entry.encode())) == json.loads(
        (index / "manifest.json").read_text())
    reader = IndexReader(out)
    scripts = [n for n in reader.directory_names() if n.endswith(".js")]
    assert scripts and all(call.match((index / n).read_text()).group(1) + ".js" == n for n in scripts)


@pytest.mark.sphinx("html", testroot="searchbar")
def test_missing_client_is_a_warning_not_a_broken_page(app_params, make_app, tmp_path, monkeypatch):
    monkeypatch.setattr(searchbar, "CLIENT_DIR", tmp_path / "nothing")
    args, kwargs = app_params
    app = make_app(*args, **kwargs)
    app.build(force_all=True)  # the test root's output may exist from another test
    assert "browser client is missing" in app.warning.getvalue()
    assert "sphinx_rag/searchbar.js" not in (Path(app.outdir) / "index.html").read_text()


@pytest.mark.sphinx("singlehtml", testroot="searchbar")
def test_singlehtml_results_link_into_its_one_page(app):
    """singlehtml names each document by a fragment of index.html (#document-guide): a
    chunk's anchor replaces that fragment, never follows it (index.html#a#b finds nothing)."""
    app.build()
    out = Path(app.outdir)
    urls = [r["url"] for r in load_chunk_records(out)]
    ids = set(re.findall(r'id="([^"]+)"', (out / "index.html").read_text()))
    assert urls and all(u.startswith("index.html#") and u.partition("#")[2] in ids for u in urls), urls
    assert "index.html#choosing-a-baseline-strategy" in urls
    # an incremental build over an index written before the fix heals its chunks' URLs
    record = next(r for r in load_chunk_records(out) if r["url"] == "index.html#choosing-a-baseline-strategy")
    old = Chunk.from_record({**record, "url": "#document-guide#choosing-a-baseline-strategy"})
    assert old.to_record("index.html#document-guide")["url"] == record["url"]


@pytest.mark.sphinx("text", testroot="searchbar")
def test_nothing_for_non_html_builders(app):
    app.build()
    assert not (Path(app.outdir) / ASSET_DIR).exists()


@needs_client
def test_incremental_build_reports_no_configuration_change(tmp_path):
    """The client is copied, not added to html_static_path: a second build has nothing to redo."""
    import shutil
    import subprocess
    import sys

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-searchbar", src)
    outputs = [subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", str(src), str(tmp_path / "html")],
                              capture_output=True, text=True) for _ in range(2)]
    assert all(p.returncode == 0 for p in outputs), outputs[-1].stderr
    assert "configuration has changed" not in outputs[1].stdout
    assert "targets for 0 source files that are out of date" in outputs[1].stdout
    assert (tmp_path / "html" / "_static" / "sphinx_rag" / "worker.js").is_file()
