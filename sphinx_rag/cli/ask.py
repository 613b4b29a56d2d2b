"""``sphinx-rag ask``: the Ask of the search dialog on a terminal: retrieve as the site
does, send the passages to a local OpenAI-compatible server, stream its cited answer
(cleaned for the terminal), then list the passages it was given."""

from __future__ import annotations

import sys

from .terminal import StreamCleaner, clean
from .text import StdoutClosed, text_argument

__all__ = ["run_ask", "passage_lines", "step_line", "citation_note"]


def _manifest_llm(searcher) -> dict:
    """``manifest["settings"]["llm"]`` of the built site, or {} (read defensively)."""
    settings = searcher.manifest.get("settings")
    llm = settings.get("llm") if isinstance(settings, dict) else None
    return llm if isinstance(llm, dict) else {}


def passage_lines(results, sent, max_context_tokens: int, rejected=()) -> list[str]:
    """The retrieved passages in rank order, one line each: ``[n] title — url`` for the
    passages sent to the LLM (n: their number in the prompt, which the answer cites),
    ``[-] title — url  (not sent: ...)`` for the others: judged not relevant (their ids
    in ``rejected``) or not fitting.

    ``sent`` is ``build_messages(...).passages``: a subsequence of ``results`` (by id),
    the top one possibly cut after a sentence.
    """
    by_id = {p.id: (n, p) for n, p in enumerate(sent, start=1)}
    lines = []
    for r in results:
        if r.id in by_id:
            n, p = by_id[r.id]
            note = "" if p.text == r.text else f"  (cut to fit max_context_tokens={max_context_tokens})"
            lines.append(f"[{n}] {clean(r.title)} \u2014 {clean(r.url)}{note}")
        elif r.id in rejected:
            lines.append(f"[-] {clean(r.title)} \u2014 {clean(r.url)}  (not sent: judged not relevant)")
        else:
            lines.append(f"[-] {clean(r.title)} \u2014 {clean(r.url)}  (not sent: does not fit in "
                         f"max_context_tokens={max_context_tokens})")
    return lines


STEP_HEADINGS = {"rewrite": "Search queries (the model rewrites the question):",
                 "judge": "Relevance (the model judges each passage, one call each):"}


def step_line(step) -> str:
    """One extra LLM call as the terminal shows it: what it gave, its time and tokens."""
    tokens = f"{step.prompt_tokens}+{step.completion_tokens} tokens{' (estimated)' if step.estimated else ''}"
    cost = f"({step.seconds:.2f} s, {tokens})"
    if step.error:
        return f"  failed after {step.seconds:.2f} s: {clean(step.error)}"
    if step.kind == "rewrite":
        queries = " | ".join(clean(q) for q in step.result) or "none usable: the question alone"
        return f"  {queries}  {cost}"
    verdict = {True: "yes", False: "no", None: "kept (neither yes nor no)"}[step.result]
    return f"  {verdict:<4} {clean(step.passage.title)}  {cost}"


def citation_note(answer: str, sent: int) -> str:
    """A line saying the answer cites no passage, or one it was not given; "" when it cites
    only passages sent (the follow-up list is not the answer)."""
    from ..llm.thread import citation_check, parse_follow_ups

    check = citation_check(parse_follow_ups(answer)[0], sent)
    if check["unknown"]:
        numbers = ", ".join(f"[{n}]" for n in check["unknown"])
        return (f"[sphinx-rag] note: the answer cites {numbers}, which it was not given ({sent} passage"
                f"{'' if sent == 1 else 's'} sent)")
    if sent and not check["cited"] and answer.strip():
        return "[sphinx-rag] note: the answer cites none of the passages it was given: check it against them"
    return ""


def run_ask(args) -> int:
    from ..llm import client
    from ..llm.context import gather_context
    from ..llm.endpoint import normalize_endpoint
    from ..llm.multi_query import fuse_rankings
    from ..llm.prompt import build_messages, passage_budget
    from ..llm.settings import merge_settings
    from ..search.retrieve import Searcher

    question = text_argument(args.question, "question", 'a question, e.g. "how do I impute missing values?"')
    if question is None:
        return 2
    searcher = Searcher(args.build_dir, fusion=args.fusion, encoder=args.encoder, rerank=not args.no_rerank)
    flags = {"endpoint": args.endpoint, "model": args.model, "timeout": args.timeout,
             "temperature": args.temperature, "max_context_tokens": args.max_context_tokens,
             "max_answer_chars": args.max_answer_chars, "multi_query": args.multi_query,
             "filter_passages": args.filter_passages, "project": args.project}  # None: not given
    settings = merge_settings([flags, _manifest_llm(searcher)])
    if settings is None:
        print("[sphinx-rag] no LLM endpoint: pass --endpoint URL (e.g. http://127.0.0.1:8080/v1 for "
              "llama.cpp, http://127.0.0.1:11434/v1 for Ollama), or set sphinx_rag_llm = "
              "{\"endpoint\": ..., \"model\": ...} in conf.py and rebuild.", file=sys.stderr)
        return 2
    try:
        endpoint = normalize_endpoint(settings["endpoint"])
    except ValueError as exc:
        print(clean(f"[sphinx-rag] {exc}"), file=sys.stderr)
        return 2
    timeout, temperature = settings["timeout"], settings["temperature"]
    max_tokens, project = settings["max_context_tokens"], settings["project"]
    try:
        budget = passage_budget(question, args.k, project=project, prompt=settings["prompt"],
                                max_context_tokens=max_tokens)
    except ValueError as exc:  # a bad prompt in the manifest
        print(clean(str(exc)), file=sys.stderr)
        return 2
    chosen = [settings["model"]]  # "": the server's only model, asked once

    def model() -> str:
        if not chosen[0]:
            models = client.list_models(endpoint, timeout=timeout)
            if len(models) != 1:
                offered = ", ".join(models) or "none"
                raise client.LLMError(f"no LLM model given: pass --model NAME (the server at {endpoint} "
                                      f"offers: {offered}) or set sphinx_rag_llm[\"model\"].")
            chosen[0] = models[0]
        return chosen[0]

    def complete(messages, max_reply_tokens):
        return client.complete_chat(endpoint, model(), messages, max_tokens=max_reply_tokens, timeout=timeout)

    def search(queries):  # the passages of the queries' fused rankings, sized to the context
        rankings = [searcher.ranking(q)[0] for q in queries]
        return searcher.passages(rankings[0] if len(rankings) == 1 else fuse_rankings(rankings), args.k, budget)

    headed: set[str] = set()

    def started(kind, _passage):  # a heading before the first call of each kind
        if kind not in headed:
            headed.add(kind)
            print(STEP_HEADINGS[kind], flush=True)

    context = gather_context(question, search, project=project, complete=complete,
                             multi_query=settings["multi_query"], filter_passages=settings["filter_passages"],
                             on_step_start=started, on_step=lambda step: print(step_line(step), flush=True))
    results = context.retrieved
    if not results:
        print("no results: nothing to ask the LLM about")
        return 0
    built = build_messages(question, context.passages, project=project, prompt=settings["prompt"],
                           max_context_tokens=max_tokens)
    sent = built.passages
    rejected = {p.id for p, verdict in zip(results, context.verdicts) if verdict is False} - {p.id for p in sent}
    if context.steps:
        print()
    print("Retrieved passages:")
    for line in passage_lines(results, sent, max_tokens, rejected):
        print(line)
    print(flush=True)
    if not sent:
        print(f"[sphinx-rag] warning: no passage fits in max_context_tokens={max_tokens}; "
              "the LLM gets the question alone (raise --max-context-tokens)", file=sys.stderr)

    code = 0
    cleaner = StreamCleaner()  # the answer reaches the terminal without its escape sequences
    answer: list[str] = []  # as the model wrote it (citations checked at the end)
    written = ["\n"]  # the last text written to stdout

    def write(text: str):
        if text:
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:
                raise StdoutClosed from None
            written.append(text)

    try:
        client.stream_chat(endpoint, model(), built.messages, temperature=temperature, timeout=timeout,
                           max_chars=settings["max_answer_chars"],
                           on_token=lambda t: (answer.append(t), write(cleaner.feed(t))))
    except client.LLMError as exc:
        write(cleaner.end())
        if not written[-1].endswith("\n"):
            write("\n")
        print(clean(f"[sphinx-rag] {exc}"), file=sys.stderr, flush=True)
        code = 3
    write(cleaner.end())
    if not written[-1].endswith("\n"):  # the answer's last line
        print()
    note = citation_note("".join(answer), len(sent)) if code == 0 else ""
    if note:
        print(note, file=sys.stderr, flush=True)
    return code
