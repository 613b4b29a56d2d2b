"""Training pairs for the reranker: questions from each site's chunks, hard negatives from
sphinx-rag's own ranking.

For every site that ``make_sites.py`` built, ``questions.py`` makes questions from the
chunks' structure; a seeded sample of them (balanced over templates, at most
``--per-site``) is searched with sphinx-rag's ranking as a reader with the model gets it
(``Searcher(encoder="model")``: BM25 and the model's vectors fused, the which-question
vote, decisive names pinned). The fused top ``--depth`` without the chunks that answer the
question are its hard negatives: the sibling parameters, the same object's other sections,
the guide's prose on the same topic, that sphinx-rag ranks above the answer today.

Usage (in the training environment)::

    python training/make_pairs.py SITES_DIR OUT.jsonl [--per-site 3000] [--depth 30] [--seed 0]

With ``--reader-questions training/reader_questions`` each site's questions in readers'
words are added the same way (``source``: "reader"; their answer is the chunk their label
names).

One JSON object per line: ``site``, ``split``, ``style``, ``source`` (the template),
``question``, ``positive`` (the answering chunk's text), ``negatives`` (texts, in fused
order), ``positive_rank`` (1-based rank of the answer in the fused ranking, 0: not in the
top ``depth``). The script prints what it made per site and per style.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from questions import Question, questions_for_site  # noqa: E402

#: The mix of question styles a site's sample aims at (readers' styles; what a style lacks on
#: a site goes to the others).
STYLE_MIX = {"which": 0.18, "natural": 0.14, "paraphrase": 0.16, "howto": 0.12, "param": 0.10, "keyword": 0.07,
             "typo": 0.07, "concept": 0.07, "name": 0.03, "returns": 0.02, "attr": 0.02, "raises": 0.01,
             "example": 0.01}


def sample(questions: list[Question], n: int, rng: random.Random) -> list[Question]:
    """Up to ``n`` questions in the proportions of ``STYLE_MIX`` (a style with too few
    questions leaves its share to the others), each question text once."""
    by_style: dict[str, list[Question]] = defaultdict(list)
    seen: set[str] = set()
    for q in questions:
        key = q.text.lower()
        if key not in seen:
            seen.add(key)
            by_style[q.style].append(q)
    for qs in by_style.values():
        rng.shuffle(qs)
    out: list[Question] = []
    for style, share in STYLE_MIX.items():
        take = by_style[style][: int(round(n * share))]
        del by_style[style][: len(take)]
        out += take
    rest = [q for qs in by_style.values() for q in qs]
    rng.shuffle(rest)
    return out + rest[: max(0, n - len(out))]


_DOTTED = re.compile(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)")
_CARD_MODULE = re.compile(r"^(\S+ \(\w+) in [\w.]+")


def twin_key(text: str) -> str:
    """A chunk's text without where its object lives: ``numpy.random.Generator.normal``
    and ``numpy.random.RandomState.normal`` document the same parameter in the same words,
    and a question that names neither owner is answered by both."""
    return _DOTTED.sub(r"\1", _CARD_MODULE.sub(r"\1", text))


class Site:
    """A built site as the pairs are made from it: its chunks, found by URL and by twin text,
    and sphinx-rag's ranking as a reader with the model gets it (loaded once a site)."""

    def __init__(self, html: Path):
        from sphinx_rag.search.index import IndexReader
        from sphinx_rag.search.retrieve import Searcher

        index = IndexReader(html)
        self.records = [index.chunk(i) for i in range(index.n_chunks)]
        self.by_url: dict[str, list[int]] = defaultdict(list)
        self.by_twin: dict[str, list[int]] = defaultdict(list)
        for i, r in enumerate(self.records):
            self.by_url[r["url"]].append(i)
            self.by_twin[twin_key(r["text"])].append(i)
        self.searcher = Searcher(index, encoder="model")

    def twins(self, i: int) -> set[int]:
        """Chunk ``i`` and the chunks of the same text but for where the object lives."""
        return set(self.by_twin[twin_key(self.records[i]["text"])]) | {i}

    def pair(self, question: str, positive: int, good: set[int], depth: int, **fields) -> dict | None:
        """The row of one question: ``positive``'s text, the fused top ``depth`` without the
        ``good`` chunks as negatives, the answer's fused rank; None when nothing is left."""
        scored = self.searcher.scores(question)
        ranked = sorted(scored, key=lambda i: (-scored[i], i))[:depth]
        negatives = [i for i in ranked if i not in good]
        if not negatives:
            return None
        return {**fields, "question": question, "positive": self.records[positive]["text"],
                "negatives": [self.records[i]["text"] for i in negatives],
                "positive_rank": next((k for k, i in enumerate(ranked, start=1) if i in good), 0)}


def answers(q: Question, site: Site) -> set[int]:
    """The chunks that answer ``q``: its positive, its twins, and for a question about a
    whole object or section every chunk at the positive's URL."""
    same = site.twins(q.positive)
    return same | set(site.by_url[site.records[q.positive]["url"]]) if q.scope == "url" else same


def site_pairs(site: Site, name: str, split: str, n: int, depth: int, rng: random.Random):
    for q in sample(questions_for_site(site.records, name, rng), n, rng):
        row = site.pair(q.text, q.positive, answers(q, site), depth, site=name, split=split, style=q.style,
                        source=q.source)
        if row is not None:
            yield row


def reader_pairs(site: Site, name: str, split: str, questions: list[dict], depth: int):
    """Pairs from questions in readers' words (``reader_questions/SITE.json``): the answer is
    the chunk at the label's URL that holds its phrase (``check_reader_questions.holds``) and
    that chunk's twins, the negatives the fused top ``depth`` without them, as for the
    generated questions."""
    from check_reader_questions import holds

    for q in questions:
        label = q["relevant"][0]
        held = [i for i in site.by_url[label["url"]] if holds(site.records[i], label)]
        if not held:
            print(f"[make_pairs] {name} {q['id']}: no chunk at {label['url']} holds its phrase (skipped)", flush=True)
            continue
        good = set().union(*(site.twins(i) for i in held))
        row = site.pair(q["question"], held[0], good, depth, site=name, split=split, style=q["style"],
                        source="reader")
        if row is not None:
            yield row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--per-site", type=int, default=3000, help="questions per training site (validation: half)")
    parser.add_argument("--depth", type=int, default=30, help="fused candidates the negatives come from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma-separated site names")
    parser.add_argument("--reader-questions", type=Path, default=None, metavar="DIR",
                        help="also each site's questions in readers' words, DIR/SITE.json (source 'reader')")
    args = parser.parse_args(argv)
    sites = json.loads((args.sites_dir / "sites.json").read_text(encoding="utf-8"))
    styles: Counter = Counter()
    with open(args.out, "w", encoding="utf-8") as out:
        for site, info in sorted(sites.items()):
            if args.only and site not in args.only.split(","):
                continue
            started = time.time()
            rng = random.Random(f"{args.seed}:{site}")
            n = args.per_site if info["split"] == "train" else args.per_site // 2
            built = Site(Path(info["html"]))
            rows = list(site_pairs(built, site, info["split"], n, args.depth, rng))
            written = args.reader_questions / f"{site}.json" if args.reader_questions else None
            if written is not None and written.is_file():
                rows += reader_pairs(built, site, info["split"], json.loads(written.read_text(encoding="utf-8")),
                                     args.depth)
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                styles[(info["split"], row["style"])] += 1
            top1 = sum(r["positive_rank"] == 1 for r in rows) / max(1, len(rows))
            found = sum(r["positive_rank"] > 0 for r in rows) / max(1, len(rows))
            print(f"{site:18s} {info['split']:10s} {info['chunks']:6d} chunks {len(rows):5d} questions  "
                  f"answer first {top1:.2f}, in top {args.depth} {found:.2f}  ({time.time() - started:.0f} s)",
                  flush=True)
    print("questions by split and style:")
    for (split, style), count in sorted(styles.items()):
        print(f"  {split:10s} {style:12s} {count:6d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
