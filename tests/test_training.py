"""The reranker's training scripts (training/) on a tiny corpus: questions from a real build's
chunks, hard negatives from sphinx-rag's own ranking, a few steps of the teacher and of the
student (the loss falls), the export (onnxruntime gives torch's scores) and its scores
(deterministic). Training never runs in CI beyond these few steps: the shipped reranker was
trained once (training/README.md) and is pinned."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "training"))

torch = pytest.importorskip("torch", reason="the training scripts need torch (pip install torch==2.13.0)")

import make_pairs  # noqa: E402
import questions  # noqa: E402
import train_reranker  # noqa: E402

pytestmark = pytest.mark.slow


def test_summaries_become_questions_in_readers_words():
    assert questions.verb_phrase("Compute the mean of an array along an axis.") == (
        "compute the mean of an array along an axis", "computes the mean of an array along an axis")
    assert questions.verb_phrase("Classifier implementing the k-nearest neighbors vote.") == (
        "implement the k-nearest neighbors vote", "implements the k-nearest neighbors vote")
    assert questions.verb_phrase("Core class which manages registration of plugins.") == (
        "manage registration of plugins", "manages registration of plugins")
    assert questions.noun_phrase("A dictionary of settings.") == "dictionary of settings"
    record = {"kind": "api", "url": "api.html#pkg.mean", "headings": ["pkg.mean"],
              "text": "mean (function in pkg)\nCompute the arithmetic mean along an axis.\nmean takes the parameters a, axis."}
    made = questions.questions_for_site([record], "pkg", random.Random(0))
    texts = {q.source: q.text for q in made}
    assert texts["card-which"] == "Which function computes the arithmetic mean along an axis?"
    assert texts["card-howto"].lower().rstrip("?").endswith("compute the arithmetic mean along an axis")
    assert all(q.positive == 0 and q.scope == "url" for q in made)
    assert questions.paraphrase("How do I compute the mean?", random.Random(1)) != "How do I compute the mean?"


def test_a_sentence_deep_in_a_section_is_asked_about_its_chunk():
    record = {"kind": "guide", "url": "deploy.html#server", "headings": ["Deployment", "Development server"],
              "text": "Deployment > Development server\nRun it locally. The development server handles only one "
                      "request at a time, so production sites should use a real WSGI server instead."}
    made = questions.questions_for_site([record], "pkg", random.Random(0))
    asked = [q for q in made if q.source == "body-sentence"]
    assert len(asked) == 1 and asked[0].scope == "chunk" and asked[0].style == "keyword"
    assert "development server handles" in asked[0].text  # the sentence's own first content words


def test_balanced_keeps_every_narrative_answer_and_as_many_api_ones():
    """86% of the generated questions are answered by an API chunk, and a teacher trained on
    them put API chunks above the guide's sections hand-written questions ask for."""
    api = [{"positive": f"f{i} (function in pkg)\nDo {i}."} for i in range(9)]
    api += [{"positive": "Parameter x of pkg.f (Do.)\nx is described as 'y'."}]
    prose = [{"positive": "Guide > Install\npip install pkg"}, {"positive": "Tutorial\nFirst steps."}]
    got = train_reranker.balanced(api + prose, seed=0)
    assert got[:2] == prose and len(got) == 4 and all(r in api for r in got[2:])
    assert got == train_reranker.balanced(api + prose, seed=0)  # seeded
    assert train_reranker.balanced(api, seed=0) == []  # no narrative answer: nothing to balance with


@pytest.fixture(scope="module")
def api_site(tmp_path_factory, rootdir) -> Path:
    """tests/roots/test-api built with the model."""
    from site_helpers import build_site, copy_with_model

    src = copy_with_model(rootdir / "test-api", tmp_path_factory.mktemp("train-src"))
    return build_site(src, tmp_path_factory.mktemp("train") / "html")


@pytest.fixture(scope="module")
def pairs(tmp_path_factory, api_site) -> Path:
    """Questions and hard negatives from the api site."""
    rows = list(make_pairs.site_pairs(make_pairs.Site(api_site), "test-api", "train", 40, 10, random.Random(0)))
    assert len(rows) >= 12, rows
    for row in rows:
        assert row["positive"] not in row["negatives"]  # an answer is never its own negative
    for row in rows[-6:]:
        row["split"] = "validation"
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(mode: str, pairs: Path, out: Path, *extra: str) -> dict:
    args = train_reranker.arguments([mode, str(pairs), str(out), "--max-tokens", "48", "--max-query-tokens", "12",
                                     "--negatives", "3", "--groups", "2", "--depth", "5", "--val-questions", "6",
                                     "--threads", "1", "--lr", "1e-4", *extra])
    return train_reranker.train(args, mode)


def test_teacher_student_export(pairs, tmp_path):
    teacher = _run("teacher", pairs, tmp_path / "teacher", "--steps", "24", "--eval-every", "24")
    first, last = sum(teacher["losses"][:4]) / 4, sum(teacher["losses"][-4:]) / 4
    assert last < first, teacher["losses"]  # it learns (6 questions, 4 passes)
    saved = json.loads((tmp_path / "teacher" / "training.json").read_text())
    assert saved["info"]["max_tokens"] == 48 and saved["mode"] == "teacher"

    scored = tmp_path / "scored.jsonl"  # the teacher's logits, once: the student reads them
    train_reranker.score(train_reranker.arguments(["score", str(pairs), str(scored), "--teacher", str(tmp_path / "teacher"),
                                                   "--negatives", "3", "--threads", "1"]))
    rows = [json.loads(line) for line in scored.read_text().splitlines()]
    assert all(len(r["teacher_logits"]) == 4 and len(r["negatives"]) == 3 for r in rows if r["split"] == "train")
    student = _run("student", scored, tmp_path / "student", "--teacher", str(tmp_path / "teacher"), "--layers", "0,5",
                   "--rank", "32", "--steps", "12", "--eval-every", "12")
    assert student["steps"] == 12 and all(loss == loss for loss in student["losses"])  # no NaN

    import export_reranker
    from sphinx_rag.search.cross_encoder import CrossEncoder, read_info

    export_reranker.export(tmp_path / "student", tmp_path / "exported", depth=5, rank_weight=None)  # checks ORT vs torch
    info = read_info(tmp_path / "exported")
    assert (info.max_tokens, info.depth) == (48, 5)
    model = CrossEncoder(tmp_path / "exported")
    texts = ["Baseline (class in apimod)\nPredict with simple rules.", "Filler (class in apimod)\nFills missing values."]
    first = model.logits("which class fills missing values?", texts)
    assert (first == model.logits("which class fills missing values?", texts)).all()  # deterministic


def test_a_student_on_the_labels_alone_reads_the_focused_text(pairs, tmp_path):
    """No teacher: MiniLM-L6's own layers and the labels; the chunk cut to the sentences that
    share the question's words (cross_encoder.focus_text), in training and in the export."""
    student = _run("student", pairs, tmp_path / "student", "--layers", "0,5", "--rank", "32", "--text-cut", "focus",
                   "--steps", "24", "--eval-every", "24")
    first, last = sum(student["losses"][:4]) / 4, sum(student["losses"][-4:]) / 4
    assert last < first, student["losses"]
    assert json.loads((tmp_path / "student" / "training.json").read_text())["info"]["text_cut"] == "focus"

    import export_reranker
    from sphinx_rag.search.cross_encoder import CrossEncoder, read_info

    export_reranker.export(tmp_path / "student", tmp_path / "exported", depth=5, rank_weight=None)
    assert read_info(tmp_path / "exported").text_cut == "focus"
    model = CrossEncoder(tmp_path / "exported")
    filler = "Unrelated words about plotting. " * 40
    late = f"Filler (class in apimod)\n{filler}It fills missing values."
    early = f"Filler (class in apimod)\nIt fills missing values. {filler}"
    # the sentence that answers is read wherever it stands: both read as the card line, then it
    got = model.logits("which class fills missing values?", [late, early])
    assert got[0] == got[1]


def test_a_student_trained_with_the_fused_prior_learns_where_the_fused_order_is_wrong(pairs, tmp_path):
    """--prior: each question's fused top --depth in fused order, scored as at query time
    (logit - W ln(rank)); only questions whose answer is among them train."""
    rows = [json.loads(line) for line in pairs.read_text().splitlines()]
    row = next(r for r in rows if 2 <= r["positive_rank"] <= 5 and len(r["negatives"]) >= 4)
    group, at = train_reranker.fused_group(row, 5)
    assert len(group) == 5 and at == row["positive_rank"] - 1 and group[at] == row["positive"]
    assert group[:at] == row["negatives"][:at] and group[at + 1:] == row["negatives"][at:4]  # fused order kept
    assert train_reranker.fused_group({**row, "positive_rank": 0}, 5) is None  # not in the fused top 30
    assert train_reranker.fused_group({**row, "positive_rank": 6}, 5) is None  # below the depth
    trained = [r for r in rows if r["split"] == "train" and train_reranker.fused_group(r, 5)]
    passes = 3
    per_pass = (len(trained) + 1) // 2  # two questions a step
    student = _run("student", pairs, tmp_path / "student", "--layers", "0,5", "--rank", "32", "--text-cut", "focus",
                   "--prior", "1", "--steps", str(passes * per_pass), "--eval-every", str(passes * per_pass))
    losses = student["losses"]
    first, last = sum(losses[:per_pass]), sum(losses[-per_pass:])  # the same questions, once each
    assert last < first, losses
    saved = json.loads((tmp_path / "student" / "training.json").read_text())
    assert "prior1.0" in saved["metrics"] and saved["args"]["prior"] == "1.0"


def test_int8_export_keeps_fp32_only_the_weights_the_check_needs(tmp_path, monkeypatch):
    """Where every weight in int8 misses the check, the export keeps fp32 the weights whose
    rounding alone moves the logits most, one at a time, until it passes."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    import export_reranker
    from sphinx_rag.model.export import MIN_QUANT_ELEMENTS

    side = int(MIN_QUANT_ELEMENTS ** 0.5) + 1
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(size=(side, side)).astype(np.float32), name) for name in "ABC"]
    nodes = [helper.make_node("MatMul", ["x", "A"], ["a"]), helper.make_node("MatMul", ["a", "B"], ["b"]),
             helper.make_node("MatMul", ["b", "C"], ["y"])]
    graph = helper.make_model(helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, side])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, side])], weights),
        opset_imports=[helper.make_opsetid("", 17)])
    harm = {"A": 0.5, "B": 3.0, "C": 0.8}  # the deviation each weight's int8 rounding causes

    def deviation(model, out, info):
        in_int8 = {t.name[: -len("_quantized")] for t in onnx.load(str(out / "reranker.onnx")).graph.initializer
                   if t.name.endswith("_quantized")}
        return sum(harm[n] for n in in_int8)

    monkeypatch.setattr(export_reranker, "deviation", deviation)
    assert export_reranker.int8_within_check(graph, None, tmp_path, None) == ["B", "C"]  # 0.5 passes, 1.3 does not
    saved = {t.name for t in onnx.load(str(tmp_path / "reranker.onnx")).graph.initializer}
    assert {"A_quantized", "B", "C"} <= saved and "B_quantized" not in saved
    harm.update(B=0.1, C=0.2)
    assert export_reranker.int8_within_check(graph, None, tmp_path, None) == []  # all int8 passes: nothing kept


def test_the_bi_encoder_fine_tuned_on_the_pairs_tells_answers_from_hard_negatives_better(pairs, tmp_path):
    """train_embedder.py (issue 43, item 4): a few steps on the tiny corpus's pairs widen the
    cosine margin of each question's answer over its first hard negative, and the result
    is a sentence-transformers directory (what sphinx_rag_model accepts)."""
    import numpy as np
    from sentence_transformers import SentenceTransformer

    import train_embedder

    rows = [json.loads(line) for line in pairs.read_text().splitlines() if json.loads(line)["split"] == "train"]

    def margin(model) -> float:
        q = model.encode([r["question"] for r in rows], normalize_embeddings=True)
        pos = model.encode([train_embedder.as_embedded(r["positive"]) for r in rows], normalize_embeddings=True)
        neg = model.encode([train_embedder.as_embedded(r["negatives"][0]) for r in rows], normalize_embeddings=True)
        return float(np.mean((q * pos).sum(1) - (q * neg).sum(1)))

    before = margin(SentenceTransformer(str(train_reranker.minilm_dir()), device="cpu"))
    train_embedder.train(train_embedder.arguments([str(pairs), str(tmp_path / "tuned"), "--steps", "12", "--batch", "4",
                                                   "--lr", "1e-4", "--max-tokens", "64", "--threads", "1"]))
    after = margin(SentenceTransformer(str(tmp_path / "tuned"), device="cpu"))
    assert after > before, (before, after)
    assert json.loads((tmp_path / "tuned" / "training.json").read_text())["steps"] == 12
    from sphinx_rag.model.source import read_sentence_transformers_config

    # what sphinx-rag exports it with: the default model's pooling and length (trained at 64 tokens)
    read = read_sentence_transformers_config(tmp_path / "tuned")
    assert (read["pooling"], read["normalize"], read["max_seq_length"], read["dim"]) == ("mean", True, 256, 384)
    # a chunk is embedded as sphinx-rag embeds it: an API chunk by its first paragraph
    assert train_embedder.as_embedded("f (function in pkg)\nDoes f.\n\nLong options.") == "f (function in pkg)\nDoes f."
    assert train_embedder.as_embedded("Guide > Install\nRun pip.\n\nThen import.") == "Guide > Install\nRun pip.\n\nThen import."


def test_validation_mrr_ranks_each_answer_among_its_fused_candidates():
    """validation_mrr: the answer's rank by cosine among itself and its hard negatives
    (1/rank within the top 10, else 0), the chunks embedded as sphinx-rag embeds them."""
    import train_embedder

    class Scripted:
        """Questions along x; each text's cosine with them is the number in its name."""

        def encode(self, texts, **_):
            out = [[1.0, 0.0] if t.startswith("q") else [float(t.split()[-1]), 1.0] for t in texts]
            return torch.nn.functional.normalize(torch.tensor(out), dim=-1)

    def row(answer: float, negatives: list[float]) -> dict:
        return {"question": "q", "positive": f"answer {answer}", "negatives": [f"neg{i} {x}" for i, x in enumerate(negatives)]}

    rows = [row(0.9, [0.95, 0.1]),             # second: 1/2
            row(0.5, [0.1, 0.2]),              # first: 1
            row(0.1, [0.2 + i for i in range(12)])]  # below ten others: 0
    assert train_embedder.validation_mrr(Scripted(), rows) == pytest.approx((0.5 + 1 + 0) / 3)


def test_the_bi_encoder_keeps_its_best_validation_step(pairs, tmp_path):
    """--validate-every: scored before the first step and every N steps on the validation
    projects' questions; OUT_DIR holds the best-scoring step and training.json the curve."""
    import train_embedder

    out = tmp_path / "tuned"
    result = train_embedder.train(train_embedder.arguments([
        str(pairs), str(out), "--steps", "6", "--batch", "4", "--lr", "1e-4", "--max-tokens", "64",
        "--threads", "1", "--validate-every", "3"]))
    curve = result["validation"]
    assert [c["step"] for c in curve] == [0, 3, 6]
    assert all(0 < c["mrr@10"] <= 1 for c in curve), curve
    saved = json.loads((out / "training.json").read_text())
    best = max(curve, key=lambda c: c["mrr@10"])  # the first of equals: a later step must do better
    assert saved["steps"] == best["step"] and saved["validation_mrr@10"] == curve
    from sphinx_rag.model.source import read_sentence_transformers_config

    assert read_sentence_transformers_config(out)["max_seq_length"] == 256  # saved at the length it is read at


def test_questions_in_readers_words_become_pairs_with_the_labelled_answer(api_site, capsys):
    """make_pairs.reader_pairs: the answer is the chunk the label names (URL and phrase), the
    negatives the fused top 10 without it; a label no chunk holds is reported and skipped."""
    from sphinx_rag.search.index import IndexReader

    index = IndexReader(api_site)
    chunk = next(c for c in (index.chunk(i) for i in range(index.n_chunks))
                 if c["kind"] == "api" and len(c["text"].split("\n", 1)[-1].split()) >= 6)
    phrase = " ".join(chunk["text"].split("\n", 1)[-1].split()[:5])
    questions = [{"id": "t-1", "question": "what is " + phrase.lower(), "style": "natural",
                  "relevant": [{"url": chunk["url"], "text_contains": phrase}]},
                 {"id": "t-2", "question": "anything", "style": "howto",
                  "relevant": [{"url": chunk["url"], "text_contains": "words no chunk has anywhere"}]}]
    rows = list(make_pairs.reader_pairs(make_pairs.Site(api_site), "test-api", "train", questions, 10))
    assert len(rows) == 1 and "t-2: no chunk at" in capsys.readouterr().out
    row = rows[0]
    assert row["source"] == "reader" and row["question"] == questions[0]["question"]
    assert phrase in " ".join(row["positive"].split()) and row["positive"] not in row["negatives"]
    assert 1 <= row["positive_rank"] <= 10 and 0 < len(row["negatives"]) <= 10
