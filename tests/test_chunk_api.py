"""numpydoc API chunks from a real autodoc + numpydoc build."""

import pytest

from sphinx_rag.chunk.api import api_chunk_texts, signature_parameters

from site_helpers import chunks_of


@pytest.mark.sphinx("html", testroot="api")
def test_api_chunks_name_their_owner(app):
    app.build()
    chunks = chunks_of(app.outdir)
    texts = {c["text"].split("\n")[0]: c for c in chunks}

    # the object card first: what the class is for, its parameters' names and value choices
    card = chunks[[c["text"].split("\n")[0] for c in chunks].index("Baseline (class in apimod)")]
    assert card["text"].split("\n")[1] == "Predict with simple rules."
    assert "simple baseline" in card["text"]
    assert card["text"].endswith('takes the parameters strategy {"most_frequent", "prior", "uniform"}, '
                                 'default="prior", random_state.')
    assert card["url"] == "index.html#apimod.Baseline" and card["display"][0] == ["term", "class Baseline"]
    # the signature chunk then holds the signature only (the card has the description)
    head = texts["apimod.Baseline (class)"]
    assert "strategy (default='prior'), random_state (default=None)" in head["text"]
    assert "Predict with simple rules." not in head["text"]
    # the card knows its object's chunks, its methods' included, and each of them its nearest card
    members = [c for c in chunks if c["url"].startswith("index.html#apimod.Baseline") and c is not card]
    assert card["members"] == len(members) and "members" not in head
    at = chunks.index
    assert all(at(c) - c["card"] == at(card) for c in members if c["url"] == card["url"])
    fit_card = texts["fit (method in apimod.Baseline)"]  # a method has a card of its own
    fit = [c for c in members if c["url"] == "index.html#apimod.Baseline.fit"]
    assert fit[0] is fit_card and at(fit_card) - fit_card["card"] == at(card)
    assert fit_card["members"] == len(fit) - 1 and all(at(c) - c["card"] == at(fit_card) for c in fit[1:])

    param = texts["Parameter strategy of apimod.Baseline (Predict with simple rules)."]
    assert param["kind"] == "api" and param["url"] == "index.html#apimod.Baseline"
    # type and default first (a set of values is named as such), then the description
    assert param["text"].split("\n")[1] == 'strategy accepts the values {"most_frequent", "prior", "uniform"}, default="prior"'
    assert param["text"].split("\n")[2] == "strategy is described as 'Strategy to use to generate predictions."
    other = texts["Parameter strategy of apimod.Filler (Fill missing values)."]  # same name, other owner
    assert "imputation strategy" in other["text"] and other["url"].endswith("#apimod.Filler")

    assert "Attribute classes_ of apimod.Baseline (Predict with simple rules)." in texts
    assert texts["See also, the objects related to apimod.Baseline:"]["text"].endswith("Filler: Fills missing values.")
    assert "Notes about apimod.Baseline:" in texts
    assert "References for apimod.Baseline:" in texts
    assert "Baseline(strategy=\"uniform\")" in texts["Here is a usage example of Baseline (apimod.Baseline):"]["text"]

    # methods get their own chunks, anchored at the method
    ret = texts["self is returned by apimod.Baseline.fit (Fit the baseline)."]
    assert ret["url"] == "index.html#apimod.Baseline.fit" and ret["title"] == "API > apimod.Baseline.fit"
    assert texts["Parameter X of apimod.Baseline.fit (Fit the baseline)."]["kind"] == "api"

    # functions: unnamed returns, yields, raises
    assert "A value of type tuple of list is returned by apimod.split (Split indices in two). It is described as 'Train and test indices.'" in texts
    assert "A value of type int is yielded by apimod.split (Split indices in two). It is described as 'Never, but documented.'" in texts
    assert "ValueError is raised by apimod.split: If n is negative." in texts

    # the page's own prose is a guide chunk with its heading path
    intro = [c for c in chunks if c["kind"] == "guide"]
    assert intro and intro[0]["text"] == "API\nIntro text of the API page."
    # order and stable ids
    assert [c["order"] for c in chunks] == list(range(len(chunks)))
    assert len({c["id"] for c in chunks}) == len(chunks)
    assert param["id"] == "index#apimod.Baseline:2"


def test_signature_parameters():
    assert signature_parameters("(a, b=1, *, c: dict = {'x': (1, 2)}, **kw) -> int") == [
        "a", "b (default=1)", "c (default={'x': (1, 2)})", "**kw"]
    assert signature_parameters(None) == []


def test_chunk_texts_without_sphinx():
    doc = "Summary.\n\nParameters\n----------\nx : int, default=2\n    Value.\n"
    texts = api_chunk_texts("pkg.fit_model", "function", doc, "(x=2)")
    assert texts == [
        "fit_model (function in pkg; fit model)\nSummary.\nfit_model takes the parameters x.",
        "pkg.fit_model (function)\nThe parameters of fit_model with their default values when known are: "
        "x (default=2).",
        # the owner in plain words and its summary: the chunk stands on its own
        "Parameter x of pkg.fit_model (fit model; Summary).\nx has the following type(s): int, default=2\n"
        "x is described as 'Value.'",
    ]
    # a property has no card: its signature chunk keeps the description
    assert api_chunk_texts("pkg.Model.labels", "property", "Summary.")[0].endswith(
        "The description of labels is as follows.\nSummary.")


@pytest.mark.sphinx("html", testroot="malformed", confoverrides={"sphinx_rag_docstring_warnings": True})
def test_malformed_docstring_warns_and_falls_back(app, warning):
    app.build()  # must not raise
    log = warning.getvalue()
    assert "numpydoc could not parse the docstring of badmod.broken" in log
    assert "badmod.py:4" in log  # names the file and line of the object
    chunks = chunks_of(app.outdir)
    broken = [c for c in chunks if "badmod.broken" in c["title"]]
    assert any("Do something useful with x." in c["text"] for c in broken)  # narrative fallback
    assert any("The same section twice" in c["text"] for c in broken)  # nothing lost
    assert any(c["text"].startswith("Parameter y of badmod.fine (Return y unchanged).") for c in chunks)  # others unaffected


@pytest.mark.sphinx("html", testroot="docfields")
def test_objects_written_by_hand_are_chunked_like_autodoc_ones(app):
    """``.. py:function::`` with ``:param:`` fields and no autodoc: the docstring is read
    back from the rendered doctree, so the object gets a card, its signature and a chunk
    per parameter, return value, attribute and exception (before: only its summary)."""
    app.build()
    chunks = [c for c in chunks_of(app.outdir) if c["doc"] == "handwritten"]
    texts = {c["text"].split("\n")[0]: c for c in chunks}
    owner = "dbkit.connect (Open a connection to the database server)"
    for name in ("host", "port", "timeout"):
        assert f"Parameter {name} of {owner}." in texts, sorted(texts)
    port = texts[f"Parameter port of {owner}."]
    assert port["display"] == [["label", "Parameters"], ["term", "port : int"], ["p", "The TCP port it listens on."]]
    assert port["url"] == "handwritten.html#dbkit.connect"
    signature = texts["dbkit.connect (function)"]
    assert signature["display"][0] == ["term", "connect(host, port=5432, *, timeout=None) -> Connection"]
    assert "port (default=5432), timeout (default=None)" in signature["text"]
    assert ["code", 'conn = connect("db.example.org")'] in signature["display"]
    assert any(c["text"].startswith("A value of type Connection is returned by dbkit.connect") for c in chunks)
    assert any(c["text"].startswith("ConnectionError is raised by dbkit.connect: When the server cannot be reached.")
               for c in chunks)
    assert texts["Pool (class in dbkit)"]["text"].endswith("takes the parameters size.")
    assert any(c["text"].startswith("Attribute idle of dbkit.Pool") and "list" in c["text"] for c in chunks), sorted(texts)
    acquire = [c for c in chunks if "dbkit.Pool.acquire" in c["text"]]
    assert any("A connection nobody else holds." in c["text"] for c in acquire)  # a method keeps its own fields
    assert not any("acquire" in c["text"] for c in chunks if c["text"].startswith("Parameter size of"))
    assert any(c["text"].startswith("dbkit.DEFAULT_PORT") and "unless told otherwise" in c["text"] for c in chunks)
    shown = repr([c["display"] for c in chunks])
    assert ":param" not in shown and "–" not in shown  # no field markers, no rendered "name – text" items


@pytest.mark.sphinx("html", testroot="docfields")
def test_sphinx_fields_and_google_sections_are_chunked_like_numpydoc(app):
    """``:param x:`` fields (click, packaging) and Google ``Args:`` sections (attrs,
    through Sphinx's napoleon) give one chunk per parameter, return value and exception,
    and a reader sees no raw field markers."""
    app.build()
    chunks = chunks_of(app.outdir)
    texts = {c["text"].split("\n")[0]: c for c in chunks}
    group = "fieldmod.Group (A command that holds subcommands)"
    for name in ("name", "commands", "chain", "invoke_without_command"):
        assert f"Parameter {name} of {group}." in texts, sorted(texts)
    chain = texts[f"Parameter chain of {group}."]
    assert "chain has the following type(s): int" in chain["text"]  # ":param int chain:"
    assert chain["display"] == [["label", "Parameters"], ["term", "chain : int"],
                                ["p", "How many subcommands may be chained in one invocation."]]
    flag = texts[f"Parameter invoke_without_command of {group}."]
    assert flag["display"][1] == ["term", "invoke_without_command : bool"]  # ":type x:" joins its ":param x:"
    raises = next(c for c in chunks if c["text"].startswith("ValueError is raised by fieldmod.Group"))
    assert raises["display"][-1] == ["p", "If a name is given twice, see the naming rules."]
    returned = next(c for c in chunks if c["text"].startswith("A value of type Tuple[str, list] is returned by "
                                                              "fieldmod.Group.resolve"))
    assert returned["display"][1:] == [["term", "Tuple[str, list]"], ["p", "The subcommand's name and the arguments left."]]
    card = texts["Group (class in fieldmod)"]
    assert card["text"].endswith("takes the parameters name, commands, chain, invoke_without_command.")
    assert ["p", "Changed in version 8.0: The commands argument can be a list."] in texts["fieldmod.Group (class)"]["display"]

    define = "fieldmod.define (Define a class with attributes)"
    kw_only = texts[f"Parameter kw_only of {define}."]
    assert kw_only["display"] == [["label", "Parameters"], ["term", "kw_only : bool"],
                                  ["p", "Make all attributes keyword-only in the generated __init__."],
                                  ["p", "This only matters for subclasses."]]
    assert texts[f"Parameter slots of {define}."]["display"][-1] == [
        "p", "Create a slotted class that is more memory-efficient. Slotted classes are described in the glossary entry."]
    assert any(c["text"].startswith("TypeError is raised by fieldmod.define: If *maybe_cls* is not a class.") for c in chunks)
    assert any(c["text"].startswith("A value of type type is returned by fieldmod.define") for c in chunks)
    shown = repr([c["display"] for c in chunks if c["kind"] == "api"])
    for raw in (":param", ":type", ":raises", ":return", ":rtype", ":meta", "Args:", ":term:", ":ref:", "~typing"):
        assert raw not in shown, raw


def test_an_objects_location_is_where_inspect_finds_it():
    """The warning's file:line, read off code objects and one parse per module, is the one
    ``inspect.getsourcelines`` gives, for classes (nested, decorated), methods and functions."""
    import dataclasses
    import http
    import inspect
    import json.decoder
    import re

    from sphinx_rag.locate import object_location

    objects = [json.decoder.JSONDecoder, json.decoder.JSONDecoder.decode, json.decoder.JSONDecodeError,
               dataclasses.dataclass, dataclasses.Field, dataclasses.FrozenInstanceError, inspect.Parameter,
               inspect.Parameter.replace, inspect.Signature.from_callable, inspect.BoundArguments,
               test_an_objects_location_is_where_inspect_finds_it, pytest.mark.sphinx.__class__,
               http.HTTPStatus, re.RegexFlag]  # classes under a decorator
    for obj in objects:
        expected = f"{inspect.getsourcefile(obj)}:{inspect.getsourcelines(obj)[1]}"
        assert object_location(obj) == expected, obj
    assert object_location(len) == "" and object_location(property(lambda self: 1)) == ""
