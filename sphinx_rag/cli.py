"""``sphinx-rag`` command line: search, ask, export-model."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap

from .assets import IndexMissing

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


def _export(args) -> int:
    from .export_model import export_model

    out = export_model(args.model, args.out_dir)
    print(f"exported {args.model} -> {out}")
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

    p = sub.add_parser("export-model", help="export a model to int8 ONNX (for CI caches)")
    p.add_argument("model", help="Hugging Face model id or local sentence-transformers directory")
    p.add_argument("out_dir")
    p.set_defaults(func=_export)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except IndexMissing as exc:
        print(str(exc), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
