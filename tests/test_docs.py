"""The README and conf_example.py document every config value with its default."""

from pathlib import Path

from sphinx_rag.config import CONFIG

REPO = Path(__file__).resolve().parent.parent


def test_every_option_is_documented():
    readme = (REPO / "README.md").read_text()
    example = {}
    exec((REPO / "conf_example.py").read_text(), example)
    for option in CONFIG:
        assert f"`{option.name}`" in readme, option.name
        assert example[option.name] == option.default, option.name


def test_ci_runs_the_readme_commands():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    for command in ("bash scripts/setup_and_build.sh", ".venv/bin/python -m pytest -q"):
        assert command in readme and command in ci
