"""What Ask sends the LLM, measured: the passages that reach the prompt (``build_messages``
within ``max_context_tokens``) for each question of a set, and how many of the answer's
components (or the answering passage) they hold.

    python eval/ask_context.py BUILD_DIR QUESTIONS.json [--max-context-tokens 4096] [--k 8]
        [--endpoint URL --model NAME [--filter] [--batched-judge]] [--limit N] [--json-out FILE]

Rows:

- ``question, passages as searched``: the top k passages as the search bar shows them,
  fitted by ``build_messages`` (what Ask sent before passages were sized to the context);
- ``question, sized to the context``: the search sizes them to ``passage_budget``;
- with ``--endpoint``: ``multi-query`` (the model's rewrites searched with the question,
  fused, sized) and, with ``--filter``, the same after the model judged each passage
  (``+ filter``), and the per-passage judging applied to the question's own passages
  (``question, sized + filter``). ``--batched-judge`` also asks for all verdicts in one
  call and reports its time and agreement with the per-passage verdicts.

Metrics over the passages sent, read as the LLM reads them (their display text):
AC-Recall (share of answer components found) and AC-MRR (1 / the passage that completes
them), Hit (a relevant passage sent, matched on the passages' indexed text as
``evaluate.py`` does), the passages and characters sent, and the LLM calls' mean time
and tokens per question (the server's usage, else estimated).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sphinx_rag.tools.evaluate import answer_component_scores, is_relevant, load_questions  # noqa: E402
from sphinx_rag.llm import client  # noqa: E402
from sphinx_rag.llm.context import call_step, gather_context  # noqa: E402
from sphinx_rag.llm.judge import JUDGE_PASSAGE_CHARS  # noqa: E402
from sphinx_rag.llm.multi_query import fuse_rankings  # noqa: E402
from sphinx_rag.llm.prompt import build_messages, llm_passage, passage_budget  # noqa: E402
from sphinx_rag.llm.settings import DEFAULT_PROJECT  # noqa: E402
from sphinx_rag.search.retrieve import Searcher  # noqa: E402

BATCH_SYSTEM = ("You check which excerpts of the {project} documentation help to answer a question. Reply with "
                "the numbers of the helpful excerpts, e.g. 1, 3, or none.")


def _score(q: dict, sent: list, originals: dict) -> dict:
    """Metrics of the passages sent (llm_passage form; ``originals``: id -> the search result)."""
    row = {"sent": len(sent), "chars": sum(len(p.text) for p in sent)}
    if q.get("answer_components"):
        mrr, recall = answer_component_scores([p.text for p in sent], q["answer_components"], budget=10 ** 9,
                                              cutoff=len(sent) or 1)
        row.update({"ac-mrr": mrr, "ac-recall": recall})
    if q.get("relevant"):
        row["hit"] = float(any(is_relevant(originals[p.id], rel) for p in sent for rel in q["relevant"]))
    return row


def _batched_verdicts(complete, question: str, passages: list, project: str):
    """One call for all passages: (verdicts, Step)."""
    blocks = [f"[{n}] {p.title}\n{p.text.strip()[:JUDGE_PASSAGE_CHARS]}" for n, p in enumerate(passages, start=1)]
    messages = [{"role": "system", "content": BATCH_SYSTEM.format(project=project)},
                {"role": "user", "content": f"Question: {question}\n\nExcerpts:\n\n" + "\n\n".join(blocks)
                 + "\n\nWhich excerpts help to answer the question? Reply with their numbers."}]
    step = call_step("judge", complete, messages, 32)
    numbers = {int(n) for n in re.findall(r"\d+", step.reply)}
    return [n in numbers for n in range(1, len(passages) + 1)], step


def _variants(q: dict, searcher: Searcher, complete, args, steps: dict, agreement: list) -> dict:
    """{row name: (the passages sent, id -> their search result)} for one question."""
    question, k, project, mct = q["question"], args.k, args.project, args.max_context_tokens
    budget = passage_budget(question, k, project=project, max_context_tokens=mct)

    def searcher_into(originals: dict, sized: bool = True):
        def search(queries):
            rankings = [searcher.ranking(x)[0] for x in queries]
            scored = rankings[0] if len(rankings) == 1 else fuse_rankings(rankings)
            results = searcher.passages(scored, k, budget if sized else None)
            originals.update({r.id: r for r in results})
            return results
        return search

    def send(passages):
        return build_messages(question, passages, project=project, max_context_tokens=mct).passages

    variants = {}
    for name, sized in (("question, passages as searched", False), ("question, sized to the context", True)):
        originals: dict = {}
        variants[name] = (send([llm_passage(r) for r in searcher_into(originals, sized)([question])]), originals)
    if complete is None:
        return variants
    originals = {}
    multi = gather_context(question, searcher_into(originals), project=project, complete=complete, multi_query=True)
    steps.setdefault("rewrite", []).extend(multi.steps)
    variants["multi-query, sized"] = (send(multi.passages), originals)
    if args.filter:
        originals = {}
        search = searcher_into(originals)
        judged = gather_context(question, lambda _qs: search(multi.queries), project=project, complete=complete,
                                filter_passages=True)
        steps.setdefault("judge", []).extend(judged.steps)
        variants["multi-query, sized + filter"] = (send(judged.passages), originals)
        originals = {}
        own = gather_context(question, searcher_into(originals), project=project, complete=complete,
                             filter_passages=True)
        variants["question, sized + filter"] = (send(own.passages), originals)
        if args.batched_judge and judged.retrieved:
            verdicts, step = _batched_verdicts(complete, question, judged.retrieved, project)
            steps.setdefault("batched judge", []).append(step)
            agreement.append(sum(a == (b is not False) for a, b in zip(verdicts, judged.verdicts)) / len(verdicts))
    return variants


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--max-context-tokens", type=int, default=4096)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--project", default=DEFAULT_PROJECT)
    parser.add_argument("--endpoint")
    parser.add_argument("--model", default="")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--filter", action="store_true")
    parser.add_argument("--batched-judge", action="store_true")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args(argv)
    questions = load_questions(args.questions)[: args.limit or None]
    searcher = Searcher(args.build_dir)
    mct, k = args.max_context_tokens, args.k
    complete = None
    if args.endpoint:
        def complete(messages, max_tokens):
            return client.complete_chat(args.endpoint, args.model, messages, max_tokens=max_tokens,
                                        timeout=args.timeout)

    rows: dict[str, list[dict]] = {}
    steps: dict[str, list] = {}
    agreement: list[float] = []
    started = time.monotonic()
    for n, q in enumerate(questions, start=1):
        for name, (sent, originals) in _variants(q, searcher, complete, args, steps, agreement).items():
            rows.setdefault(name, []).append({"id": q["id"], **_score(q, sent, originals)})
        if n % 10 == 0:
            print(f"[ask_context] {n}/{len(questions)} questions, {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)

    keys = [key for key in ("ac-mrr", "ac-recall", "hit", "sent", "chars") if key in rows[next(iter(rows))][0]
            or any(key in r for r in rows[next(iter(rows))])]
    print(f"### {args.questions.name}: what Ask sends (max_context_tokens={mct}, k={k}, n={len(questions)})\n")
    print("| passages | " + " | ".join(keys) + " |")
    print("|---|" + "---|" * len(keys))
    for name, rs in rows.items():
        cells = []
        for key in keys:
            values = [r[key] for r in rs if key in r]
            cells.append("" if not values else f"{statistics.mean(values):.0f}" if key == "chars"
                         else f"{statistics.mean(values):.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if steps:
        print("\n| LLM call | calls | mean s | median s | prompt tokens | completion tokens | usage from server |")
        print("|---|---|---|---|---|---|---|")
        for kind, ss in steps.items():
            ok = [s for s in ss if not s.error]
            if not ok:
                continue
            print(f"| {kind} | {len(ss)} ({len(ss) - len(ok)} failed) | {statistics.mean(s.seconds for s in ok):.2f} | "
                  f"{statistics.median(s.seconds for s in ok):.2f} | {statistics.mean(s.prompt_tokens for s in ok):.0f} | "
                  f"{statistics.mean(s.completion_tokens for s in ok):.1f} | "
                  f"{sum(not s.estimated for s in ok)}/{len(ok)} |")
        rewrites = [s for s in steps.get("rewrite", []) if not s.error]
        if rewrites:
            counts = [len(s.result) for s in rewrites]
            print(f"\nQueries read per rewrite: mean {statistics.mean(counts):.2f}, none in "
                  f"{sum(c == 0 for c in counts)} of {len(counts)}.")
        verdicts = [s.result for s in steps.get("judge", []) if not s.error]
        if verdicts:
            print(f"Per-passage verdicts: {sum(v is True for v in verdicts)} yes, {sum(v is False for v in verdicts)} "
                  f"no, {sum(v is None for v in verdicts)} neither.")
        if agreement:
            print(f"Batched judge agrees with the per-passage verdicts on {statistics.mean(agreement):.1%} of passages.")
    if args.json_out:
        args.json_out.write_text(json.dumps({"rows": rows, "steps": {k: [s.__dict__ | {"passage": None}
                                                                         for s in v] for k, v in steps.items()}},
                                            indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
