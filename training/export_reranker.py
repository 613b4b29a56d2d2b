"""Export a trained reranker to the files sphinx-rag ships (``cross_encoder.RERANKER_FILES``).

The model (a teacher's transformers directory, or a student's ``model.pt``) goes to ONNX
(opset 17, dynamic batch and length), then to weight-only int8 with the embedding model's
own rewrite (``sphinx_rag.model.export.quantize_weights_int8``: int8 weights, per-channel
scales, dequantized in the graph, so every runtime computes in fp32). Beside it:
``reranker_info.json`` (how inputs are cut, the candidates' depth, the fused rank's prior
weight, chosen on the validation projects), the tokenizer and the vocabulary.

The export is checked before it is kept: onnxruntime, through the runtime's own
``CrossEncoder``, must give the torch model's logits within 1% of their range on a sample of pairs
and the same order within each question. Where int8 weights miss that, the weights whose
rounding moves the logits most are kept fp32, as few as pass (``int8_within_check``).

    python training/export_reranker.py MODEL_DIR OUT_DIR [--depth 20] [--rank-weight W] [--fp32]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from sphinx_rag.search.cross_encoder import CrossEncoder, RerankerInfo  # noqa: E402
from train_reranker import Encoder, load_model, minilm_dir, tokenizer_for  # noqa: E402

FORMAT = 1
SAMPLE = [
    ("how do I remove missing values", ["dropna (method in pandas.DataFrame)\nRemove missing values.",
                                        "fillna (method in pandas.DataFrame)\nFill NA/NaN values using the specified method.",
                                        "Parameter axis of pandas.DataFrame.dropna (Remove missing values).\naxis is described as 'Determine if rows or columns which contain missing values are removed.'"]),
    ("which function computes the inverse FFT", ["ifft (function in numpy.fft)\nCompute the one-dimensional inverse discrete Fourier Transform.",
                                                 "fft (function in numpy.fft)\nCompute the one-dimensional discrete Fourier Transform."]),
    ("progress bar for a loop", ["tqdm (class in tqdm)\nDecorate an iterable object, returning an iterator which acts exactly like the original iterable, but prints a dynamically updating progressbar every time a value is requested.",
                                 "Guide > Installation\npip install tqdm"]),
]


def export(model_dir: Path, out: Path, depth: int, rank_weight: float | None, fp32: bool = False) -> dict:
    training = json.loads((model_dir / "training.json").read_text(encoding="utf-8"))
    t = training["info"]
    info = RerankerInfo.from_json({**t, "depth": depth, "rank_weight": t["rank_weight"] if rank_weight is None
                                   else rank_weight})
    model = load_model(model_dir)
    model.config.return_dict = False
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32_path = Path(tmp) / "fp32.onnx"
        x = torch.ones((2, 16), dtype=torch.long)

        class Logits(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.inner(input_ids=input_ids, attention_mask=attention_mask,
                                  token_type_ids=token_type_ids)[0]

        axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                "token_type_ids": {0: "batch", 1: "tokens"}, "logits": {0: "batch"}}
        torch.onnx.export(Logits(model).eval(), (x, x, torch.zeros_like(x)), str(fp32_path),
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
        import onnx

        shutil.copyfile(minilm_dir() / "vocab.txt", out / "vocab.txt")
        tokenizer_for(minilm_dir()).save(str(out / "tokenizer.json"))
        data = {"format": FORMAT, "max_query_tokens": info.max_query_tokens, "max_tokens": info.max_tokens,
                "depth": info.depth, "rank_weight": info.rank_weight, "do_lower_case": True, "text_cut": info.text_cut,
                "trained": {"mode": training["mode"], "step": training["step"], "seconds": training["seconds"],
                            "validation": training["metrics"]}}
        (out / "reranker_info.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        fp32_model = onnx.load(str(fp32_path))
        if fp32:
            onnx.save(fp32_model, str(out / "reranker.onnx"))
        else:
            kept = int8_within_check(fp32_model, model, out, info)
            print(f"int8: {len(kept)} weight(s) kept fp32 for the check to pass" + (f": {kept}" if kept else ""))
    check(model, out, info, "fp32" if fp32 else "int8")
    sha = hashlib.sha256((out / "reranker.onnx").read_bytes()).hexdigest()
    print(f"{out / 'reranker.onnx'}: {(out / 'reranker.onnx').stat().st_size / 1e6:.2f} MB, sha256 {sha[:16]}")
    return data


@torch.no_grad()
def deviation(model, out: Path, info: RerankerInfo) -> float:
    """How far onnxruntime (the runtime's CrossEncoder reading ``out``) is from torch on
    SAMPLE: the largest logit difference over its tolerance (1% of the logits' range, 0.05
    at least; at most 1 passes), infinite where the order within a question differs."""
    runtime = CrossEncoder(out)
    enc = Encoder(tokenizer_for(minilm_dir()), info)
    worst = 0.0
    for query, texts in SAMPLE:
        want = model(**enc.batch([(query, t) for t in texts]))[0].reshape(-1).numpy()
        got = runtime.logits(query, texts)
        if list(np.argsort(-want)) != list(np.argsort(-got)):
            return math.inf
        worst = max(worst, float(np.abs(want - got).max()) / max(0.05, 0.01 * float(want.max() - want.min())))
    return worst


def check(model, out: Path, info: RerankerInfo, weights: str = "int8"):
    """The export gives torch's logits (``deviation`` at most 1): a model that ships passes."""
    off = deviation(model, out, info)
    if off > 1:
        raise SystemExit(f"[export] onnxruntime's logits ({weights} weights) differ from torch's by {off:.2f} times "
                         "the tolerance (1% of their range, 0.05 at least) or in their order")
    print(f"export checked: onnxruntime gives torch's logits ({weights} weights) within {off:.2f} of the tolerance "
          "(1% of their range), the same order")


def int8_within_check(fp32_model, model, out: Path, info: RerankerInfo) -> list[str]:
    """Write ``out/reranker.onnx``, the ONNX ``fp32_model`` in int8 with the fewest weights
    kept fp32 for the check against torch's ``model`` to pass: none if it passes as it is,
    else the weights whose int8 rounding alone moves the logits most, one at a time (a
    student's logits were 0.057 off with every weight in int8, over the 0.05 tolerance,
    though its rankings were the fp32 model's; the six-layer teacher's 0.18). Returns the
    names kept fp32."""
    import copy

    import onnx

    from sphinx_rag.model.export import quantize_weights_int8

    def write(keep) -> float:
        onnx.save(quantize_weights_int8(copy.deepcopy(fp32_model), keep), str(out / "reranker.onnx"))
        return deviation(model, out, info)

    if write(()) <= 1:
        return []
    quantized = sorted({t.name for t in fp32_model.graph.initializer}
                       - {t.name for t in quantize_weights_int8(copy.deepcopy(fp32_model)).graph.initializer})
    alone = {name: write([n for n in quantized if n != name]) for name in quantized}  # only this one in int8
    keep: list[str] = []
    for name in sorted(quantized, key=lambda n: -alone[n]):
        keep.append(name)
        if write(keep) <= 1:
            return keep
    raise SystemExit("[export] even fp32 weights differ from torch's logits")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--rank-weight", type=float, default=None, help="default: the one chosen in training")
    parser.add_argument("--fp32", action="store_true",
                        help="keep fp32 weights (the teacher, for compare_rerankers.py: never shipped)")
    args = parser.parse_args(argv)
    export(args.model_dir, args.out_dir, args.depth, args.rank_weight, args.fp32)
    return 0


if __name__ == "__main__":
    sys.exit(main())
