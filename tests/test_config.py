"""Config values: defaults, validation errors that name the fix, typo hints."""

import pytest

from sphinx_rag.config import CONFIG, ConfigError, unknown_names, validate


def test_defaults_are_valid():
    validate({o.name: o.default for o in CONFIG})


@pytest.mark.parametrize("name, value, message", [
    ("sphinx_rag_fusion", "rff", "did you mean 'rrf'"),
    ("sphinx_rag_chunk_tokens", -1, "must be >= 0"),
    ("sphinx_rag_embeddings", "yes", "must be bool"),
    ("sphinx_rag_exclude", [1], "glob patterns"),
    ("sphinx_rag_downweight", {"changelog*": 2}, "weights in (0, 1]"),
    ("sphinx_rag_llm", {"endpont": "x"}, "unknown keys ['endpont']"),
    ("sphinx_rag_llm", {"endpoint": "http://127.0.0.1:8080"}, "'model'] is required"),
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
    from sphinx.errors import ConfigError as SphinxConfigError

    args, kwargs = app_params
    with pytest.raises(SphinxConfigError, match="sphinx_rag_fusion"):
        make_app(*args, **kwargs)
