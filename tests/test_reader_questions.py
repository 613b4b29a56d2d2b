"""The reader-style questions of training/reader_questions: the shape ``sphinx-rag evaluate``
reads, one file per project of training/projects.py, none from an evaluation corpus's
project, ids unique. (Their labels against the built sites: check_reader_questions.py.)"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "training"))

import check_reader_questions  # noqa: E402
import projects  # noqa: E402

from sphinx_rag.tools.evaluate import load_questions  # noqa: E402


def test_one_file_per_project_in_the_shape_evaluate_reads():
    files = sorted(check_reader_questions.QUESTIONS.glob("*.json"))
    assert {f.stem for f in files} == {p.name for p in projects.PROJECTS}
    assert not {f.stem for f in files} & set(projects.EXCLUDED)
    ids = collections.Counter()
    for f in files:
        questions = load_questions(f)
        assert len(questions) >= 30, f
        styles = collections.Counter(q["style"] for q in questions)
        assert set(styles) <= set(check_reader_questions.STYLES) and len(styles) >= 5, (f, styles)
        for q in questions:
            ids[q["id"]] += 1
            assert q["id"].startswith(f.stem + "-") and q["question"].strip(), q
            assert q["relevant"] and all(r["url"] and len(r["text_contains"]) >= 10 for r in q["relevant"]), q
    assert max(ids.values()) == 1
    raw = json.loads(files[0].read_text(encoding="utf-8"))
    assert all(set(q) == {"id", "question", "style", "relevant"} for q in raw)
