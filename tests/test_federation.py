"""sphinx_rag_federation: the config value checked once, turned into the list the browser
reads (the manifest's settings.federation), and `True` resolved at build time against the
intersphinx sites, each checked over real HTTP (index there, format, CORS) in one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import CorsHandler, StaticServer, build_site, free_port, manifest_of
from sphinx_rag.search.index import ASSET_DIR
from sphinx_rag.config import ConfigError, validate
from sphinx_rag.federation import check_site, configured_sites, intersphinx_sites, resolve

ROOTS = Path(__file__).parent / "roots"


@pytest.fixture(scope="module")
def widgets(tmp_path_factory) -> Path:
    """tests/roots/test-llms built (a keyword-only sphinx-rag site)."""
    base = tmp_path_factory.mktemp("widgets")
    shutil.copytree(ROOTS / "test-llms", base / "src")
    return build_site(base / "src", base / "html", "-d", str(base / "dt"))


@pytest.fixture(scope="module")
def servers(widgets, tmp_path_factory):
    """name -> site URL: "ok" (with CORS), "nocors", "format2" (a copy whose manifest says
    format 2, with CORS), "plain" (a site without sphinx-rag: 404), "down" (nothing listens)."""
    format2 = tmp_path_factory.mktemp("format2") / "html"
    shutil.copytree(widgets, format2)
    manifest = format2 / ASSET_DIR / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "format_version": 2}))
    plain = tmp_path_factory.mktemp("plain")
    (plain / "index.html").write_text("<p>no search index here</p>")
    running = {"ok": StaticServer(widgets, CorsHandler), "nocors": StaticServer(widgets),
               "format2": StaticServer(format2, CorsHandler), "plain": StaticServer(plain, CorsHandler)}
    yield {**{name: s.url for name, s in running.items()}, "down": f"http://127.0.0.1:{free_port()}/"}
    for server in running.values():
        server.stop()


@pytest.mark.parametrize("value, fragment", [
    ({"": "https://numpy.org/doc/stable/"}, "give each site a short name"),
    ({"x" * 41: "https://numpy.org/"}, "give each site a short name"),
    ({"numpy": "numpy.org/doc"}, "['numpy'] 'numpy.org/doc' is not an http(s) URL"),
    ({"numpy": 3}, "['numpy'] must be the http(s) URL"),
    ({"numpy": {"url": "https://numpy.org/", "on": True}}, "unknown keys ['on']"),
    ({"numpy": {"url": "https://numpy.org/", "enabled": "yes"}}, "['enabled'] must be True or False"),
    ({"numpy": {"enabled": True}}, "['numpy'] must be the http(s) URL"),
    ("https://numpy.org/", "must be dict or bool"),
])
def test_bad_values_say_what_is_wrong_with_an_example(value, fragment):
    with pytest.raises(ConfigError) as info:
        validate({"sphinx_rag_federation": value})
    message = str(info.value)
    assert fragment in message and "sphinx_rag_federation" in message and "\n" not in message
    if isinstance(value, dict):
        assert '"numpy": "https://numpy.org/doc/stable/"' in message  # an example of a valid one


def test_a_mapping_becomes_the_browser_list_in_order():
    value = {"numpy": "https://numpy.org/doc/stable/index.html", "v1.4": {"url": "https://mlkit.org/1.4", "enabled": True},
             "scipy": "https://docs.scipy.org/doc/scipy/_static/sphinx_rag/index/manifest.json"}
    assert validate({"sphinx_rag_federation": value}) == {"sphinx_rag_federation": value}
    assert validate({"sphinx_rag_federation": True}) == {"sphinx_rag_federation": True}
    assert configured_sites(value) == [
        {"name": "numpy", "url": "https://numpy.org/doc/stable/", "enabled": False},
        {"name": "v1.4", "url": "https://mlkit.org/1.4/", "enabled": True},
        {"name": "scipy", "url": "https://docs.scipy.org/doc/scipy/", "enabled": False},
    ]
    assert resolve({}, None, origin="null", note=print) == [] and resolve(False, None, origin="null", note=print) == []


def test_intersphinx_sites_in_both_forms():
    conf = {"python": ("https://docs.python.org/3", None), "local": ("../other", None), "numpy": ["https://numpy.org/doc/stable/", "x.inv"]}
    normalised = {"python": ("python", ("https://docs.python.org/3", (None,))),
                  "numpy": ("numpy", ("https://numpy.org/doc/stable/", ("x.inv",)))}
    expected = [("python", "https://docs.python.org/3"), ("numpy", "https://numpy.org/doc/stable/")]
    assert intersphinx_sites(conf) == expected and intersphinx_sites(normalised) == expected
    assert intersphinx_sites(None) == []


def test_check_site_says_what_it_found(servers, widgets):
    entry, line = check_site("widgets", servers["ok"], origin="https://mysite.org")
    assert entry == {"name": "widgets", "url": servers["ok"], "enabled": False}
    chunks = manifest_of(widgets)["counts"]["chunks"]
    assert line == f"widgets ({servers['ok']}): {chunks:,} chunks, federated (readers turn it on in the search dialog)"
    reasons = {"nocors": "does not let other sites' pages read it (no Access-Control-Allow-Origin for https://mysite.org)",
               "format2": "its index is in format 2, this sphinx-rag writes and reads 3",
               "plain": "no sphinx-rag index (HTTP 404",
               "down": "cannot fetch"}
    for name, reason in reasons.items():
        entry, line = check_site(name, servers[name], origin="https://mysite.org", timeout=2)
        assert entry is None and reason in line and line.endswith(": left out") and "\n" not in line, line


def test_true_federates_the_intersphinx_sites_that_publish_an_index(servers, tmp_path):
    """A real build: intersphinx names five sites, one of which a browser can search."""
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-searchbar", src)
    mapping = {name: (servers[name], None) for name in ("ok", "nocors", "format2", "plain", "down")}
    with open(src / "conf.py", "a") as conf:
        conf.write(f'\nextensions += ["sphinx.ext.intersphinx"]\nintersphinx_mapping = {mapping!r}\n'
                   'intersphinx_timeout = 2\nsphinx_rag_federation = True\nhtml_baseurl = "https://mysite.org/docs/"\n')
    out = tmp_path / "html"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", str(src), str(out)],
                          capture_output=True, text=True, cwd=src)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("[sphinx-rag] federation: ")]
    assert len(lines) == 5 and sum(line.endswith(": left out") for line in lines) == 4, lines
    assert manifest_of(out)["settings"]["federation"] == [{"name": "ok", "url": servers["ok"], "enabled": False}]


def test_a_changed_list_rewrites_the_manifest_not_the_pages(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOTS / "test-searchbar", src)
    conf = (src / "conf.py").read_text()
    (src / "conf.py").write_text(conf + '\nsphinx_rag_federation = {"numpy": "https://numpy.org/doc/stable/"}\n')
    out, doctrees = tmp_path / "html", tmp_path / "dt"
    build_site(src, out, "-d", str(doctrees), fresh=False)
    assert manifest_of(out)["settings"]["federation"] == [
        {"name": "numpy", "url": "https://numpy.org/doc/stable/", "enabled": False}]
    page = (out / "guide.html").stat().st_mtime_ns
    index = manifest_of(out)
    (src / "conf.py").write_text(conf + '\nsphinx_rag_federation = {"numpy": {"url": "https://numpy.org/doc/stable/", '
                                        '"enabled": True}, "scipy": "https://docs.scipy.org/doc/scipy/"}\n')
    build_site(src, out, "-d", str(doctrees), fresh=False)
    assert (out / "guide.html").stat().st_mtime_ns == page  # the pages are not written again
    after = manifest_of(out)
    assert after["settings"]["federation"] == [
        {"name": "numpy", "url": "https://numpy.org/doc/stable/", "enabled": True},
        {"name": "scipy", "url": "https://docs.scipy.org/doc/scipy/", "enabled": False}]
    assert after["dir"] == index["dir"] and after["near"] == index["near"]  # the shards are the same
