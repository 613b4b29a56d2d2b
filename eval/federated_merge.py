"""Merging several sites' results (sphinx_rag/search/merge.py) on federated pairs of evaluation corpora.

Usage::

    python eval/federated_merge.py features OUT.json SITE=QUESTIONS [SITE=QUESTIONS ...] [--encoder static]
    python eval/federated_merge.py table OUT.json

``features`` searches every question set on every site (the top 10 as ``sphinx-rag
search`` gives them: passages, the site's weak-match verdict, each hit's cosine) and
writes them; a SITE given as ``SITE=-`` has no questions of its own. ``table`` merges
each pair of sites, in both orders, with the adopted merge and the alternatives measured,
and prints Hit@1 / MRR@10 on each side's own questions against that site alone, then the
same with the second site of each pair taken as searched by keywords alone (no cosines),
then with a hostile third site added to each pair (``HOSTILE_HITS`` hits holding none of
the query's words, each claiming the cosine its scales buy, a million; a good match by its
own verdict), which should cost the pair's questions nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sphinx_rag.tools.evaluate import is_relevant  # noqa: E402
from sphinx_rag.search.merge import Entry, merge_answers  # noqa: E402
from sphinx_rag.search.retrieve import Searcher  # noqa: E402

K = 10


def features(sites: list[tuple[str, str]], encoder: str) -> dict:
    questions = {site: (json.loads(Path(q).read_text()) if q != "-" else []) for site, q in sites}
    out = {"sites": [site for site, _ in sites], "questions": {s: [q["question"] for q in qs] for s, qs in questions.items()},
           "runs": {}}
    for site, _ in sites:
        searcher = Searcher(site, encoder=encoder)
        out["runs"][site] = {}
        for owner, qs in questions.items():
            rows = []
            for q in qs:
                vector = None if searcher.fusion == "bm25" else searcher.query_vector(q["question"])
                results, weak = searcher.search_with_match(q["question"], k=K, vector=vector)
                rows.append({"weak": bool(weak) and bool(results), "hits": [
                    {"key": f"{site}/{r.url} {r.id}", "rank": r.rank, "text": r.text, "title": r.title,
                     "similarity": r.similarity,
                     "relevant": owner == site and any(is_relevant(r, rel) for rel in q["relevant"])}
                    for r in results]})
            out["runs"][site][owner] = rows
            print(f"{label(site)} x {label(owner)}: {len(rows)}", file=sys.stderr)
    return out


def label(site: str) -> str:
    """A site's short name: the directory its _build is in (its src's parent)."""
    parts = Path(site).parts
    name = parts[parts.index("_build") - 1] if "_build" in parts else parts[-1]
    return parts[parts.index("_build") - 2] if name == "src" else name.removesuffix("_docs")


# -- merges: each takes [(hits, weak)] and the sites' names, returns hits best first ------------

def adopted(answers, names, keyword=None):
    entries = [([Entry(h["key"], h["text"], h["title"], None if n == keyword else h["similarity"]) for h in hits],
                weak) for n, (hits, weak) in enumerate(answers)]
    return [answers[n][0][i] for n, i in merge_answers(ANSWER_QUERY[0], entries, names, K)]


def reciprocal_rank(answers, names, keyword=None):
    """The merge before: 1 / (60 + rank), ties to the site listed first."""
    scores, first = {}, {}
    for n, (hits, _) in enumerate(answers):
        for h in hits:
            scores[h["key"]] = scores.get(h["key"], 0) + 1 / (60 + h["rank"])
            first.setdefault(h["key"], (n, h["rank"], h))
    return [first[k][2] for k in sorted(scores, key=lambda k: (-scores[k], first[k][0], first[k][1]))]


def _interleave(value, ties=lambda h, name: (h["key"],)):
    """Weak sites last, then the best ``value`` among the sites' next hits, then ``ties``."""
    def merge(answers, names, keyword=None):
        heads, out, seen = [0] * len(answers), [], set()
        while True:
            live = [n for n in range(len(answers)) if heads[n] < len(answers[n][0])]
            if not live:
                return out
            n = min(live, key=lambda n: (answers[n][1], -value(answers[n][0][heads[n]], n == keyword),
                                         *ties(answers[n][0][heads[n]], names[n])))
            h = answers[n][0][heads[n]]
            heads[n] += 1
            if h["key"] not in seen:
                seen.add(h["key"])
                out.append(h)
    return merge


def _like_merge(value):
    """``_interleave`` with ties broken as merge.py breaks them (title words, key, site name)."""
    from sphinx_rag.search.merge import _share, match_words

    words = match_words(ANSWER_QUERY[0])
    return _interleave(value, lambda h, name: (-_share(words, h["title"]), h["key"], name))


def _coverage(h):
    from sphinx_rag.search.merge import _share, match_words

    return _share(match_words(ANSWER_QUERY[0]), h["text"])


def _cosine(h, kw):
    """A hit's cosine as the merge before issue 42 took it (keywords alone: 0.5)."""
    return 0.5 if kw or h["similarity"] is None else h["similarity"]


def _clamped(h, kw):
    return min(max(_cosine(h, kw), -1.0), 1.0)


def _capped(cap):
    """coverage + cosine, the cosine clamped to [-1, 1] and at most coverage + cap."""
    return _like_merge(lambda h, kw: _coverage(h) + min(_clamped(h, kw), _coverage(h) + cap))


ANSWER_QUERY = [""]  # the query being merged (the merges above read it)
MERGES = {
    "reciprocal rank, ties to the site listed first (before)": reciprocal_rank,
    "weak last, then rank (ties: key)": _interleave(lambda h, kw: -h["rank"]),
    "weak last, then coverage": _interleave(lambda h, kw: _coverage(h)),
    "weak last, then cosine": _interleave(lambda h, kw: 0.0 if kw else h["similarity"] or 0.0),
    "weak last, then coverage + cosine, keywords alone 0 (not adopted)":
        _interleave(lambda h, kw: _coverage(h) + (0.0 if kw else h["similarity"] or 0.0)),
    "weak last, then coverage + cosine, keywords alone 0.5 (merge.py before issue 42)": _like_merge(
        lambda h, kw: _coverage(h) + _cosine(h, kw)),
    "... the cosine clamped to [-1, 1]": _like_merge(lambda h, kw: _coverage(h) + _clamped(h, kw)),
    "... clamped, then coverage first, the cosine only between equal coverage": _like_merge(
        lambda h, kw: _coverage(h) * 10 + _clamped(h, kw)),
    "... clamped, the cosine at most coverage + 0.1": _capped(0.1),
    "... clamped, the cosine at most coverage + 0.5": _capped(0.5),
    "... clamped, the cosine at most coverage + 0.75": _capped(0.75),
    "... clamped, the cosine at most coverage + 0.25 (adopted: merge.py)": adopted,
}
HOSTILE_HITS = 6


def metrics(ranked_lists):
    hit1 = float(np.mean([bool(r) and r[0]["relevant"] for r in ranked_lists]))
    mrr = float(np.mean([next((1 / i for i, h in enumerate(r[:K], 1) if h["relevant"]), 0.0) for r in ranked_lists]))
    return hit1, mrr


def hostile_answer(n: int) -> tuple[list[dict], bool]:
    """A site that buys ranks with its scales: hits holding none of the query's words (the
    hit's text is a word no query holds), each claiming a cosine of a million (the dense
    tier now clamps it to 1; the merge does too), a good match by its own verdict."""
    return [{"key": f"https://hostile.invalid/{n}/{j} h:{j}", "rank": j + 1, "text": "zzyzx", "title": "",
             "similarity": 1e6, "relevant": False} for j in range(HOSTILE_HITS)], False


def evaluate(data: dict, keyword_second: bool = False, hostile: bool = False) -> dict:
    """{merge: [(pair, owner, alone, merged A,B, merged B,A, n)]}; ``hostile``: a third site
    (``hostile_answer``) listed first."""
    runs, questions = data["runs"], data["questions"]
    out: dict[str, list] = {}
    for a, b in itertools.combinations(data["sites"], 2):
        for owner in (a, b):
            if not questions[owner]:
                continue
            alone = metrics([r["hits"] for r in runs[owner][owner]])
            for name, merge in MERGES.items():
                both = []
                for order in ((a, b), (b, a)):
                    ranked = []
                    for i, query in enumerate(questions[owner]):
                        ANSWER_QUERY[0] = query
                        answers = [(runs[s][owner][i]["hits"], runs[s][owner][i]["weak"]) for s in order]
                        names = [label(s) for s in order]
                        keyword = order.index(b) if keyword_second else None
                        if hostile:
                            answers, names = [hostile_answer(i), *answers], ["hostile", *names]
                            keyword = None if keyword is None else keyword + 1
                        ranked.append(merge(answers, names, keyword)[:K])
                    both.append(metrics(ranked))
                out.setdefault(name, []).append((f"{label(a)} + {label(b)}", label(owner), alone, *both,
                                                 len(questions[owner])))
    return out


def table(data: dict) -> str:
    lines = []
    for keyword_second, hostile in ((False, False), (True, False), (False, True)):
        results = evaluate(data, keyword_second, hostile)
        title = ("A hostile site added to each pair (listed first):" if hostile
                 else "Second site of each pair searched by keywords alone:" if keyword_second else "All sites semantic:")
        lines += ["", title, "",
                  "| merge | alone Hit@1 / MRR | merged A,B Hit@1 / MRR | merged B,A Hit@1 / MRR |", "|---|---|---|---|"]
        for name, rows in results.items():
            w = np.array([r[-1] for r in rows], dtype=float)

            def avg(i, j, rows=rows, w=w):
                return float(np.average([r[i][j] for r in rows], weights=w))
            lines.append(f"| {name} | {avg(2, 0):.3f} / {avg(2, 1):.3f} | {avg(3, 0):.3f} / {avg(3, 1):.3f} | "
                         f"{avg(4, 0):.3f} / {avg(4, 1):.3f} |")
        if not keyword_second and not hostile:
            lines += ["", "| pair (questions of) | alone Hit@1 / MRR | adopted merge A,B | B,A | before A,B | B,A |",
                      "|---|---|---|---|---|---|"]
            before = {(r[0], r[1]): r for r in results[next(iter(MERGES))]}
            for pair, owner, alone, ab, ba, _ in results[list(MERGES)[-1]]:
                old = before[(pair, owner)]
                lines.append(f"| {pair} ({owner}) | {alone[0]:.3f} / {alone[1]:.3f} | {ab[0]:.3f} / {ab[1]:.3f} | "
                             f"{ba[0]:.3f} / {ba[1]:.3f} | {old[3][0]:.3f} / {old[3][1]:.3f} | "
                             f"{old[4][0]:.3f} / {old[4][1]:.3f} |")
    return "\n".join(lines).strip()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=("features", "table"))
    p.add_argument("out")
    p.add_argument("sites", nargs="*", metavar="SITE=QUESTIONS")
    p.add_argument("--encoder", default="model", choices=("model", "static"))
    args = p.parse_args(argv)
    if args.action == "features":
        data = features([tuple(s.split("=", 1)) for s in args.sites], args.encoder)
        Path(args.out).write_text(json.dumps(data))
    else:
        print(table(json.loads(Path(args.out).read_text())))


if __name__ == "__main__":
    main()
