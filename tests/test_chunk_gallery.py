"""sphinx-gallery chunks, parsed from the example scripts with sphinx-gallery's parser."""

import pytest

from site_helpers import chunks_of


@pytest.mark.sphinx("html", testroot="gallery")
def test_simple_and_tutorial_examples(app):
    app.build()
    chunks = [c for c in chunks_of(app.outdir) if c["kind"] == "example"]
    simple = [c for c in chunks if c["doc"] == "auto_examples/plot_simple"]
    assert [c["text"] for c in simple] == [
        "Plot a thing > Example text\nSimple example text.\n\nMore text about it.",
        "Plot a thing > Example code\nimport numpy as np\nprint(np.ones(3))\n\nprint(2)",
    ]
    assert {c["url"] for c in simple} == {"auto_examples/plot_simple.html#plot-a-thing"}

    tutorial = [c for c in chunks if c["doc"] == "auto_examples/plot_tutorial"]
    assert [(c["title"], c["url"].split("#")[1]) for c in tutorial] == [
        ("Imputing missing values", "imputing-missing-values"),
        ("Imputing missing values > Loading the data", "loading-the-data"),
        ("Imputing missing values > Imputing", "imputing"),
    ]
    # one chunk per section, text and code together
    assert tutorial[1]["text"] == ("Imputing missing values > Loading the data\nWe load some data.\n\n"
                                   "import numpy as np\nX = np.array([[1, np.nan]])")
    # sphinx-gallery's timing pages are excluded by default
    assert not any("sg_execution_times" in c["doc"] for c in chunks_of(app.outdir))
