"""``sphinx-rag`` command line: search, ask, export-model."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from .assets import IndexDamaged, IndexMissing

__all__ = ["main"]


def _search(args) -> int:
    from .retrieve import Searcher

    searcher = Searcher(args.build_dir, fusion=args.fusion)
    results = searcher.search(args.query, k=args.k)
    if args.json:
        json.dump([r.to_json() for r in results], sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    if not results:
        print("no results")
    for r in results:
        print(f"{r.rank:2d}. [{r.kind}] {r.title}  ({r.score:.4f})")
        print(f"    {r.url}")
        snippet = " ".join(r.text.split())
        print(textwrap.indent(textwrap.fill(snippet[:300], 96), "    "))
    return 0


def _manifest_llm(searcher) -> dict:
    """``manifest["settings"]["llm"]`` of the built site, or {} (read defensively)."""
    settings = searcher.manifest.get("settings")
    llm = settings.get("llm") if isinstance(settings, dict) else None
    return llm if isinstance(llm, dict) else {}


def _ask(args) -> int:
    from .llm import client
    from .llm.endpoint import normalize_endpoint
    from .llm.prompt import build_messages
    from .llm.settings import merge_settings
    from .retrieve import Searcher

    searcher = Searcher(args.build_dir, fusion=args.fusion)
    flags = {"endpoint": args.endpoint, "model": args.model, "timeout": args.timeout,
             "temperature": args.temperature, "max_context_tokens": args.max_context_tokens,
             "project": args.project}  # None: not given
    settings = merge_settings([flags, _manifest_llm(searcher)])
    if settings is None:
        print("[sphinx-rag] no LLM endpoint: pass --endpoint URL (e.g. http://127.0.0.1:8080/v1 for "
              "llama.cpp, http://127.0.0.1:11434/v1 for Ollama), or set sphinx_rag_llm = "
              "{\"endpoint\": ..., \"model\": ...} in conf.py and rebuild.", file=sys.stderr)
        return 2
    try:
        endpoint = normalize_endpoint(settings["endpoint"])
    except ValueError as exc:
        print(f"[sphinx-rag] {exc}", file=sys.stderr)
        return 2
    model = settings["model"]  # "": the server's only model
    timeout, temperature = settings["timeout"], settings["temperature"]
    max_tokens = settings["max_context_tokens"]

    results = searcher.search(args.question, k=args.k)
    if not results:
        print("no results: nothing to ask the LLM about")
        return 0
    try:
        built = build_messages(args.question, results, project=settings["project"],
                               prompt=settings["prompt"], max_context_tokens=max_tokens)
    except ValueError as exc:  # a bad prompt in the manifest
        print(str(exc), file=sys.stderr)
        return 2
    sent = built.passages
    print("Retrieved passages:")
    sent_ids = {p.id for p in sent}  # passages too long for what is left are skipped, not cut off
    for n, r in enumerate(results, start=1):
        note = "" if r.id in sent_ids else "  (not sent: over max_context_tokens)"
        print(f"[{n}] {r.title} \u2014 {r.url}{note}")
    print(flush=True)
    if not sent:
        print(f"[sphinx-rag] warning: no passage fits in max_context_tokens={max_tokens}; "
              "the LLM gets the question alone (raise --max-context-tokens)", file=sys.stderr)

    code = 0
    written = ["\n"]  # the last text written to stdout
    try:
        if not model:
            models = client.list_models(endpoint, timeout=timeout)
            if len(models) != 1:
                offered = ", ".join(models) or "none"
                raise client.LLMError(f"no LLM model given: pass --model NAME (the server at {endpoint} "
                                      f"offers: {offered}) or set sphinx_rag_llm[\"model\"].")
            model = models[0]

        def on_token(text: str):
            sys.stdout.write(text)
            sys.stdout.flush()
            written.append(text)

        client.stream_chat(endpoint, model, built.messages, temperature=temperature, timeout=timeout,
                           on_token=on_token)
    except client.LLMError as exc:
        if not written[-1].endswith("\n"):
            sys.stdout.write("\n")
            written.append("\n")
        sys.stdout.flush()
        print(f"[sphinx-rag] {exc}", file=sys.stderr, flush=True)
        code = 3
    if len(written) > 1:  # something was streamed: end it with a blank line
        print("" if written[-1].endswith("\n") else "\n")
    print("Sources:")
    for n, r in enumerate(sent, start=1):
        print(f"[{n}] {r.title} \u2014 {r.url}")
    return code


def _export(args) -> int:
    from .export_model import export_model

    out = export_model(args.model, args.out_dir)
    print(f"exported {args.model} -> {out}")
    return 0


def _evaluate(args) -> int:
    from .evaluate import evaluate, format_table, load_questions

    report = evaluate(args.build_dir, load_questions(args.questions), methods=args.methods.split(","))
    print(format_table(report, title=args.title or str(args.questions)))
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sphinx-rag", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("search", help="search a built site's index (same ranking as the browser)")
    p.add_argument("build_dir", help="the HTML output directory of sphinx-build")
    p.add_argument("query")
    p.add_argument("--k", type=int, default=10, help="number of results (default 10)")
    p.add_argument("--json", action="store_true", help="print a JSON list of results")
    p.add_argument("--fusion", choices=("rrf", "bm25", "dense"), help="override the site's fusion method")
    p.set_defaults(func=_search)

    p = sub.add_parser("evaluate", help="Recall@k / MRR@10 of each fusion method on a question set")
    p.add_argument("build_dir")
    p.add_argument("questions", help="JSON list of {id, question, style, relevant: [{url, text_contains}]}")
    p.add_argument("--methods", default="bm25,dense,rrf")
    p.add_argument("--title", default="")
    p.add_argument("--json-out", help="also write the full report (per question) as JSON")
    p.set_defaults(func=_evaluate)

    p = sub.add_parser("ask", help="answer a question with a local LLM from the site's search results")
    p.add_argument("build_dir", help="the HTML output directory of sphinx-build")
    p.add_argument("question")
    p.add_argument("--endpoint", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1 "
                   "(default: sphinx_rag_llm of the built site)")
    p.add_argument("--model", help="model name (default: the site's, else the server's only model)")
    p.add_argument("--k", type=int, default=8, help="passages retrieved (default 8)")
    p.add_argument("--timeout", type=float, help="seconds without any data from the server before "
                   "giving up (default: the site's, else 60)")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the site's, else 0.1)")
    p.add_argument("--max-context-tokens", type=int,
                   help="the model's context window (default: the site's, else 4096)")
    p.add_argument("--project", help="project name in the prompt (default: the site's)")
    p.add_argument("--fusion", choices=("rrf", "bm25", "dense"), help="override the site's fusion method")
    p.set_defaults(func=_ask)

    p = sub.add_parser("export-model", help="export a model to int8 ONNX (for CI caches)")
    p.add_argument("model", help="Hugging Face model id or local sentence-transformers directory")
    p.add_argument("out_dir")
    p.set_defaults(func=_export)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (IndexMissing, IndexDamaged) as exc:
        print(str(exc), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
