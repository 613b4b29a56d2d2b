"""Adding sphinx-rag does not break a `-W` build (issue 44, item 1).

A docstring numpydoc cannot parse is chunked as narrative text: no error in the user's
docs (Sphinx and its extensions accepted it), so it is listed with `-v` and counted at the
end of the build, and is a warning only with ``sphinx_rag_docstring_warnings``. Each root
is built with and without the extension: the same warnings both ways, and `-W` passes
with it wherever it passes without.

* test-docstring-shapes: a numpydoc site as imageio's docs are (each method of a class
  documented twice on its page, an autosummary row then its automethod: its docstring
  came twice, numpydoc's rewrite the second time, "The section Parameters appears
  twice"; a class's and its __init__'s Parameters, autoclass_content = "both");
* test-malformed: no numpydoc extension, docstrings numpydoc refuses and broken reST.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from site_helpers import chunks_of

ROOTS = Path(__file__).parent / "roots"


def build(root: str, tmp_path: Path, *options: str, rag: bool = True) -> tuple[int, str, list[str]]:
    """A fresh build of a copy of ``root`` (without sphinx_rag in its extensions when
    ``rag`` is False): its exit code, stdout and warning lines (paths made relative)."""
    src = tmp_path / f"{root}-{'rag' if rag else 'plain'}-{len(list(tmp_path.iterdir()))}"
    shutil.copytree(ROOTS / root, src)
    if not rag:
        conf = src / "conf.py"
        conf.write_text(conf.read_text().replace(', "sphinx_rag"]', "]"))
        assert "sphinx_rag\"" not in conf.read_text()
    warnings = src / "warnings.txt"
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-w", str(warnings), *options,
                           str(src), str(src / "_build")], capture_output=True, text=True, timeout=600, cwd=src)
    lines = warnings.read_text().replace(str(src), "SRC").splitlines() if warnings.exists() else []
    return proc.returncode, proc.stdout + proc.stderr, lines


@pytest.mark.slow  # four builds
@pytest.mark.parametrize("root, fallbacks", [("docstring-shapes", 1), ("malformed", 1)])
def test_the_extension_adds_no_warning_and_W_passes_where_it_passed(root, fallbacks, tmp_path):
    code, out, with_rag = build(f"test-{root}", tmp_path)
    assert code == 0, out[-3000:]
    _, _, without = build(f"test-{root}", tmp_path, rag=False)
    assert with_rag == without
    ended = [line for line in out.splitlines() if "chunked as narrative text" in line]
    noun = "docstring" if fallbacks == 1 else "docstrings"
    assert ended == [f"[sphinx-rag] {fallbacks} {noun} chunked as narrative text (numpydoc could not parse "
                     f"{'it' if fallbacks == 1 else 'them'}); `-v` lists {'it' if fallbacks == 1 else 'them'}, "
                     f"sphinx_rag_docstring_warnings = True makes {'it' if fallbacks == 1 else 'them'} warnings"], out
    strict = build(f"test-{root}", tmp_path, "-W")[0], build(f"test-{root}", tmp_path, "-W", rag=False)[0]
    assert (strict[0] == 0) == (strict[1] == 0), strict
    if not without:
        assert strict == (0, 0)


def test_a_method_documented_twice_on_its_page_is_parsed_once(tmp_path):
    """imageio's five warnings: PluginV3's read, write, iter, properties and metadata each
    came twice (autosummary's row, then automethod's, rewritten by numpydoc by then)."""
    code, out, _ = build("test-docstring-shapes", tmp_path, "-v")
    assert code == 0, out[-3000:]
    chunks = chunks_of(next(tmp_path.iterdir()) / "_build")
    texts = [c["text"] for c in chunks]
    assert any(t.startswith("Parameter index of shapes.Plugin.read (Read an ndimage).") for t in texts), texts
    assert any(t.startswith("Parameter **kwargs of shapes.Plugin.read") for t in texts)
    assert sum(t.startswith("Parameter index of shapes.Plugin.read") for t in texts) == 1
    assert "shapes.Plugin.read" not in "".join(re.findall(r"numpydoc could not parse[^\n]*", out))
    # the class whose own and __init__'s docstrings both have Parameters: listed with -v
    (listed,) = re.findall(r".*numpydoc could not parse the docstring of shapes\.Archive.*", out)
    assert "shapes.py:" in listed and "The section Parameters appears twice" in listed
    assert "WARNING" not in listed
    assert any("Open the archive." in t for t in texts if "shapes.Archive" in t)  # nothing lost


@pytest.mark.slow  # four builds
def test_the_setting_makes_them_warnings_again(tmp_path):
    code, out, lines = build("test-malformed", tmp_path, "-D", "sphinx_rag_docstring_warnings=1")
    assert code == 0, out[-3000:]
    (warning,) = [line for line in lines if "could not parse" in line]
    assert "numpydoc could not parse the docstring of badmod.broken" in warning and "badmod.py:4" in warning
    assert warning.endswith("[sphinx_rag.docstring]")
    assert "chunked as narrative text" not in out  # each is a warning: no count
    code, out, _ = build("test-malformed", tmp_path, "-W", "-D", "sphinx_rag_docstring_warnings=1",
                         "-D", "suppress_warnings=sphinx_rag.docstring,docutils")
    assert code == 0, out[-3000:]  # its type and subtype silence it
    _, _, plain = build("test-malformed", tmp_path, rag=False)
    code, out, lines = build("test-malformed", tmp_path, "-D", "sphinx_rag_docstring_warnings=1")
    assert len(lines) == len(plain) + 1
