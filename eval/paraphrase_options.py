"""The options of issue 11, item 4 (paraphrases and concepts) that were measured and not adopted.

Each variant is evaluated exactly like the default (``sphinx-rag evaluate``'s tables), so
that eval/RESULTS.md can be reproduced; none of them is part of sphinx-rag:

- ``see-also``: build-time document expansion. Every numpydoc "See Also" entry
  ("ElasticNet: Linear regression with combined L1 and L2 priors") describes another
  object in other words; the description is attached to that object's card (the
  entry's name resolved against the cards' anchors, nearest module first). ``--embed``
  puts it in the card's first paragraph (embedded and indexed), otherwise in a last
  paragraph (indexed only). The index is rewritten from the built one into OUT.
- ``object-vote``: a reranking of the top passages. A passage holding an object card
  gets ``BETA`` times the fused scores of its other ranked chunks (its ranked parts
  vote for their object), and the passages of the first 2k hits are re-sorted.
- ``dense-prf``: pseudo-relevance feedback on the dense side (Rocchio): the query vector
  plus ``ALPHA`` times the mean of its ``M`` nearest chunk vectors, normalized, scored
  again over the same probed clusters (no extra download in a browser).
- ``adaptive-vote``: a query-adaptive fusion. The dense ranking's vote in the RRF is
  scaled by the query: ``--rule len`` 1.5 from 6 distinct words on, ``len2`` 0.7 up to
  3 words and 1.3 from 6, ``typo`` 0.6 when a word is not in the vocabulary (a typo: the model
  reads typos badly), ``both`` = ``len`` and ``typo``.

    python eval/paraphrase_options.py see-also BUILD_DIR OUT [--embed]
    python -m sphinx_rag evaluate OUT eval/sklearn_which_questions.json --methods bm25,dense,rrf
    python eval/paraphrase_options.py object-vote BUILD_DIR QUESTIONS --beta 0.1
    python eval/paraphrase_options.py dense-prf BUILD_DIR QUESTIONS --alpha 0.3 --m 3
    python eval/paraphrase_options.py adaptive-vote BUILD_DIR QUESTIONS --rule len
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path

import numpy as np

from sphinx_rag.search import index as assets
from sphinx_rag.search import retrieve
from sphinx_rag.tools import evaluate
from sphinx_rag.search.keyword_scoring import expand_tokens, keyword_scores
from sphinx_rag.index.build import write_index
from sphinx_rag.chunk import Chunk
from sphinx_rag.search.dense import dense_scores, probe_order
from sphinx_rag.search.expand import expand
from sphinx_rag.search.lexical import tokenize
from sphinx_rag.model.cache import cached_model_dir

SEE_ALSO = re.compile(r"^See also, the objects related to (\S+):")
ENTRY = re.compile(r"^([\w.]+(?:, [\w.]+)*)(?::\s*(.*))?$")


def see_also_descriptions(chunks: list[Chunk]) -> dict[int, list[str]]:
    """Card index -> the descriptions other objects' See Also sections give of it."""
    cards = {c.anchor: i for i, c in reversed(list(enumerate(chunks))) if c.card_members}
    by_tail: dict[str, list[str]] = {}
    for anchor in cards:
        parts = anchor.split(".")
        for k in range(len(parts)):
            by_tail.setdefault(".".join(parts[k:]), []).append(anchor)
    out: dict[int, list[str]] = {}
    for c in chunks:
        head = SEE_ALSO.match(c.text)
        if not head:
            continue
        entries: list[list] = []
        for line in c.text.split("\n")[1:]:
            entry = ENTRY.match(line.strip())
            if entry and (entry.group(2) is not None or not entries or entries[-1][1]):
                entries.append([entry.group(1).split(", "), entry.group(2) or ""])
            elif entries:
                entries[-1][1] += " " + line.strip()
        for names, description in entries:
            for name in names if description.strip() else []:
                candidates = by_tail.get(name, [])
                if candidates:
                    best = max(candidates, key=lambda a: len(os.path.commonprefix([a, head.group(1)])))
                    if best != head.group(1) and description.strip() not in out.get(cards[best], []):
                        out.setdefault(cards[best], []).append(description.strip())
    return out


def rewrite_with_see_also(build: Path, out: Path, embed: bool):
    records = assets.load_chunk_records(build / assets.ASSET_DIR)
    manifest = assets.read_json(build / assets.ASSET_DIR / "manifest.json")
    chunks = [Chunk.from_record(r) for r in records]
    added = see_also_descriptions(chunks)
    for i, descriptions in added.items():
        head, sep, rest = chunks[i].text.partition("\n\n")
        words = "Also described as: " + " ".join(descriptions)
        chunks[i].text = f"{head} {words}{sep}{rest}" if embed else f"{chunks[i].text}\n\n{words}"
    print(f"{sum(map(len, added.values()))} descriptions attached to {len(added)} cards")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for p in build.iterdir():
        if p.name != "_static":
            (out / p.name).symlink_to(p.resolve())
    settings = {k: v for k, v in manifest["settings"].items() if k != "query_encoder"}
    write_index(chunks, urls={r["doc"]: r["url"].partition("#")[0] for r in records}, out_dir=out / assets.ASSET_DIR,
                model_dir=cached_model_dir("sentence-transformers/all-MiniLM-L6-v2"), embeddings=True,
                settings=settings, query_encoder="model", keyword_script=False, note=print)


class ObjectVote(retrieve.Searcher):
    beta = 0.1

    def search_with_match(self, query, k=10, vector=None):
        scored, weak = self.ranking(query, vector)
        ranked = sorted(scored, key=lambda i: (-scored[i], i))
        chunk = self.index.chunk
        passages = expand(ranked, chunk, self.index.n_chunks, 2 * k)

        def value(passage):
            hit, span = passage
            if not any(chunk(j).get("members") for j in span):
                return scored[hit]
            return scored[hit] + self.beta * sum(scored.get(j, 0.0) for j in span if j != hit)

        order = sorted(range(len(passages)), key=lambda p: (-value(passages[p]), p))[:k]
        results = []
        for rank, p in enumerate(order, start=1):
            hit, span = passages[p]
            c = chunk(hit)
            results.append(retrieve.Result(
                rank, scored[hit], c["url"], c["title"], c["kind"], "\n\n".join(chunk(j)["text"] for j in span),
                c["id"], hit, [chunk(j)["url"] for j in span if j != hit],
                retrieve.join_displays([retrieve.record_display(chunk(j)) for j in span])))
        return results, weak


class DensePRF(retrieve.Searcher):
    alpha, m = 0.3, 3

    def dense_scores(self, query, vector=None):
        vector = self.query_vector(query) if vector is None else vector
        centroids, scales = self.index.centroids()
        clusters = [self.index.cluster(c) for c in probe_order(vector, centroids, scales, self.index.cluster_sizes,
                                                               self.probe)]

        def score(q):
            out = np.zeros(self.index.n_chunks, dtype=np.float64)
            for cluster in clusters:
                out[cluster.ids] = dense_scores(q, cluster.vectors, cluster.scales)
            return out

        first = score(vector)
        rows = {int(i): cl.vectors[k].astype(np.float64) * float(cl.scales[k])
                for cl in clusters for k, i in enumerate(cl.ids)}
        top = np.argsort(-first, kind="stable")[:self.m]
        q = np.asarray(vector, np.float64) + self.alpha * np.mean([rows[int(t)] for t in top], axis=0)
        return score((q / np.linalg.norm(q)).astype(np.float32))


class AdaptiveVote(retrieve.Searcher):
    rule = "len"

    def vote(self, tokens: list[str], expansions: dict) -> float:
        words = len(dict.fromkeys(tokens))
        typo = any(len(e) != 1 or e[0][1] != 1.0 for e in expansions.values())
        if self.rule in ("typo", "both") and typo:
            return 0.6
        if self.rule == "len2":
            return 0.7 if words <= 3 else 1.3 if words >= 6 else 1.0
        return 1.5 if words >= 6 and self.rule != "typo" else 1.0

    def ranking(self, query, vector=None):
        if self.fusion != "rrf":
            return super().ranking(query, vector)
        tokens = tokenize(query)
        expansions = expand_tokens(tokens, self.index.postings, self.index.near)
        dense = self.dense_scores(query, vector)
        weak = retrieve.weak_match(tokens, expansions, float(dense.max(initial=0.0)), self.floor)
        rankings = [retrieve.top_k(keyword_scores(self.index.n_chunks, tokens, expansions), retrieve.CANDIDATES),
                    retrieve.top_k(dense, retrieve.CANDIDATES)]
        votes = [1.0, self.vote(tokens, expansions) * retrieve.DENSE_VOTE[self.encoder]]
        return retrieve.rrf_fuse(rankings, self.rrf_k, self.index.weights, votes), weak


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("variant", choices=["see-also", "object-vote", "dense-prf", "adaptive-vote"])
    parser.add_argument("build", type=Path)
    parser.add_argument("target", type=Path, help="OUT (see-also) or a questions file")
    parser.add_argument("--embed", action="store_true")
    parser.add_argument("--beta", type=float, default=0.1)
    parser.add_argument("--alpha", type=float, default=0.3)
    parser.add_argument("--m", type=int, default=3)
    parser.add_argument("--rule", choices=["len", "len2", "typo", "both"], default="len")
    args = parser.parse_args()
    if args.variant == "see-also":
        rewrite_with_see_also(args.build, args.target, args.embed)
        return
    searcher = {"object-vote": ObjectVote, "dense-prf": DensePRF, "adaptive-vote": AdaptiveVote}[args.variant]
    searcher.beta, searcher.alpha, searcher.m, searcher.rule = args.beta, args.alpha, args.m, args.rule
    evaluate.Searcher = searcher
    methods = ["dense-model", "rrf-model"] if args.variant == "dense-prf" else ["rrf-model"]
    report = evaluate.evaluate(args.build, evaluate.load_questions(args.target), methods)
    print(evaluate.format_table(report, f"{args.target} ({args.variant})"))


if __name__ == "__main__":
    main()
