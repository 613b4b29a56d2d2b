"""The reference pages that cannot drift: rendered at build time from the code itself.

- ``.. sphinx-rag-config::``: every ``sphinx_rag_*`` value from ``CONFIG`` (the one
  declaration ``setup()`` registers and validates), as ``confval`` entries;
- ``.. sphinx-rag-llm-keys::``: the keys of ``sphinx_rag_llm`` from ``LLM_DEFAULTS``;
- ``.. sphinx-rag-cli::``: every command of the ``sphinx-rag`` parser (``build_parser``),
  its usage and arguments, as ``program`` / ``option`` entries;
- ``.. sphinx-rag-mcp-tools::``: the MCP server's tools as an agent lists them (names,
  descriptions and argument schemas from ``build_server``).

The modules are found by file name anywhere under the package (``find_module``), so the
pages survive the package being split into subpackages; a name that is gone fails the
build with one line.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import importlib
import json
import re
import types
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

__all__ = ["find_module", "config_rst", "llm_keys_rst", "cli_rst", "mcp_rst", "inline"]

REBUILD = {"html": "changing it rewrites every page", "": "changing it rewrites the index only, not the pages",
           "env": "changing it re-reads every page"}


def find_module(attribute: str, filename: str):
    """The module of the ``sphinx_rag`` package that defines ``attribute``: ``sphinx_rag.<stem>``
    first, else the file called ``filename`` wherever it now lives in the package."""
    import sphinx_rag

    stem = filename.removesuffix(".py")
    candidates = [f"sphinx_rag.{stem}"]
    root = Path(sphinx_rag.__file__).parent
    for path in sorted(root.rglob(filename)):
        dotted = ".".join(("sphinx_rag", *path.relative_to(root).with_suffix("").parts))
        if dotted not in candidates:
            candidates.append(dotted)
    for dotted in candidates:
        try:
            module = importlib.import_module(dotted)
        except ImportError:
            continue
        if hasattr(module, attribute):
            return module
    raise RuntimeError(f"[sphinx-rag docs] no module of sphinx_rag defines {attribute} (looked for {filename}): "
                       "update docs/_ext/sphinx_rag_docs.py")


_ESCAPE = re.compile(r"([\\*_|`<>\[\]])")


def inline(text: str) -> str:
    """Help text as reST: `code` spans become literals, everything else is escaped text."""
    parts = re.split(r"`([^`]+)`", text)
    out = []
    for n, part in enumerate(parts):
        if n % 2:
            out.append(f"``{part}``" if "``" not in part else f":code:`{part}`")
        else:
            out.append(_ESCAPE.sub(r"\\\1", part))
    return "".join(out).replace("\n", " ")


def _literal(value) -> str:
    text = repr(value)
    return f"``{text}``" if text.strip() else "(empty)"


def _type_name(types_: tuple) -> str:
    return " or ".join("None" if t is type(None) else t.__name__ for t in types_)


def config_rst() -> list[str]:
    config = find_module("CONFIG", "config.py")
    lines = []
    for option in config.CONFIG:
        lines += [f".. confval:: {option.name}", f"   :type: {inline(_type_name(option.types))}",
                  f"   :default: {_literal(option.default)}", "", f"   {inline(option.help)}", ""]
        if option.choices:
            lines += ["   Choices: " + ", ".join(f"``{c!r}``" for c in option.choices) + ".", ""]
        if option.example is not None:
            lines += [f"   For example: ``{option.name} = {option.example!r}``.", ""]
        lines += [f"   Rebuild: {REBUILD.get(option.rebuild, option.rebuild)}.", ""]
    return lines


def llm_keys_rst() -> list[str]:
    config = find_module("LLM_DEFAULTS", "config.py")
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 25 75", "", "   * - key", "     - default"]
    for key, default in config.LLM_DEFAULTS.items():
        if key == "prompt":
            shown = "the template below"
        elif key in ("endpoint", "model"):
            shown = "required"
        else:
            shown = _literal(default)
        lines += [f"   * - ``{key}``", f"     - {shown}"]
    lines += ["", "The default prompt (``{project}``, ``{passages}`` and ``{question}`` are filled in; "
              "the line ``---`` splits the system message from the user's):", "", ".. code-block:: text", ""]
    lines += ["   " + line if line else "" for line in config.LLM_DEFAULTS["prompt"].splitlines()]
    return lines + [""]


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": prog}
    return text


def _invocations(action: argparse.Action) -> str:
    if not action.option_strings:
        return action.metavar or action.dest.upper()
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    metavar = action.metavar or (action.dest.upper() if not action.choices else "{" + ",".join(action.choices) + "}")
    return ", ".join(f"{o} {metavar}" for o in action.option_strings)


def _commands(parser: argparse.ArgumentParser, prefix: str):
    """(program name, parser) of every command and subcommand, depth first."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _commands(sub, f"{prefix} {name}")


def _program(prog: str, parser: argparse.ArgumentParser, level: str) -> list[str]:
    title = f"``{prog}``"
    label = "cli-" + "-".join(prog.split()[1:])
    lines = [f".. _{label}:", "", title, level * len(title), "", f".. program:: {prog}", ""]
    if parser.description:
        lines += [inline(parser.description), ""]
    lines += [".. code-block:: text", ""] + ["   " + line for line in parser.format_usage().strip().splitlines()]
    lines.append("")
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        if isinstance(action, argparse._SubParsersAction):
            lines += ["Commands: " + ", ".join(f"``{name}``" for name in action.choices) + ".", ""]
            continue
        lines += [f".. option:: {_invocations(action)}", "", f"   {inline(_help(action, prog))}", ""]
        if action.choices and action.option_strings:
            lines += ["   Choices: " + ", ".join(f"``{c}``" for c in action.choices) + ".", ""]
    return lines


def cli_rst() -> list[str]:
    cli = find_module("build_parser", "cli.py")
    parser = cli.build_parser()
    lines = [".. code-block:: text", ""] + ["   " + line for line in parser.format_help().strip().splitlines()]
    lines.append("")
    for prog, sub in _commands(parser, parser.prog):
        lines += _program(prog, sub, "-" if prog.count(" ") == 1 else "~")
    return lines


def mcp_tools() -> tuple[str, list]:
    """The server's instructions and its tools, as an agent's ``tools/list`` sees them."""
    server_module = find_module("build_server", "mcp_server.py")
    library = types.SimpleNamespace(sites=[types.SimpleNamespace(name="SITE")])
    server = server_module.build_server(library)
    # a thread of its own: a caller (a test beside Playwright's sync API) may run a loop here
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        tools = pool.submit(asyncio.run, server.list_tools()).result()
    return server_module.INSTRUCTIONS.format(sites="SITE"), tools


def mcp_rst() -> list[str]:
    instructions, tools = mcp_tools()
    lines = []
    for tool in tools:
        schema = tool.input_schema if hasattr(tool, "input_schema") else tool.inputSchema
        required = set(schema.get("required", ()))
        params = schema.get("properties", {})
        signature = ", ".join(name if name in required else f"{name}={json.dumps(p.get('default'))}"
                              for name, p in params.items())
        title = f"``{tool.name}({signature})``"
        lines += [f".. _mcp-{tool.name}:", "", title, "-" * len(title), "", inline(tool.description), "",
                  ".. list-table::", "   :header-rows: 1", "   :widths: 15 20 65", "", "   * - argument",
                  "     - type", "     - meaning"]
        for name, p in params.items():
            kind = p.get("type", "")
            if "enum" in p:
                kind += " (" + ", ".join(p["enum"]) + ")"
            if "minimum" in p or "maximum" in p:
                kind += f" ({p.get('minimum', '')}-{p.get('maximum', '')})"
            kind += ", required" if name in required else f", default {json.dumps(p.get('default'))}"
            lines += [f"   * - ``{name}``", f"     - {inline(kind)}", f"     - {inline(p.get('description', ''))}"]
        lines.append("")
    title = "The server's instructions"
    lines += [title, "-" * len(title), "",
              "What an MCP client shows its model when it connects (``SITE``: the names of the sites served):",
              "", ".. code-block:: text", ""] + ["   " + line for line in instructions.splitlines()] + [""]
    return lines


class _Generated(SphinxDirective):
    has_content = False
    render = staticmethod(lambda: [])

    sources = ()  # (attribute, file name) of the modules it renders: a change re-reads the page

    def run(self):
        for attribute, filename in self.sources:
            self.env.note_dependency(find_module(attribute, filename).__file__)
        container = nodes.section() if self.titles else nodes.container()
        lines = StringList(self.render(), source=f"<{self.name}>")
        if self.titles:
            nested_parse_with_titles(self.state, lines, container)
        else:
            self.state.nested_parse(lines, self.content_offset, container)
        return container.children

    titles = False


class ConfigDirective(_Generated):
    render = staticmethod(config_rst)
    sources = (("CONFIG", "config.py"),)


class LlmKeysDirective(_Generated):
    render = staticmethod(llm_keys_rst)
    sources = (("LLM_DEFAULTS", "config.py"),)


class CliDirective(_Generated):
    render = staticmethod(cli_rst)
    sources = (("build_parser", "cli.py"),)
    titles = True


class McpDirective(_Generated):
    render = staticmethod(mcp_rst)
    sources = (("build_server", "mcp_server.py"),)
    titles = True


def setup(app):
    app.add_directive("sphinx-rag-config", ConfigDirective)
    app.add_directive("sphinx-rag-llm-keys", LlmKeysDirective)
    app.add_directive("sphinx-rag-cli", CliDirective)
    app.add_directive("sphinx-rag-mcp-tools", McpDirective)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
