"""Offline study of a reranking stage over the fused top candidates (issue 27, item 1).

For one built site, this script

1. runs sphinx-rag's retrieval (the same keyword and dense passes and fusion as
   ``retrieve.Searcher``) for the site's question sets and for training queries the
   site itself gives: the static encoder's pseudo-queries (titles, sentences and word
   spans cut from the chunks, ``encoder_fit.pseudo_queries``) and the questions
   ``suggest.candidates`` mines from section titles and object cards ("How do I ...?",
   "Which class ...?"), each with the chunk(s) it came from;
2. computes features of every (query, candidate) pair in the fused top ``DEPTH``;
3. fits rerankers on the training queries only (the question sets are never used to
   fit anything) and reports, for each, the question sets' metrics after reranking
   (``expand`` and ``evaluate`` as sphinx-rag computes them).

Runs are cached in ``--cache`` (a pickle per site, encoder and query set), so features
and models can be changed without running retrieval again.

Usage::

    python benchmarks/rerank_study.py SITE_HTML Q.json [Q2.json ...] --encoder model --cache /tmp/rr
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import pickle
import re
import sys
import time
from pathlib import Path

import harness  # noqa: F401 - puts the repository and tests/ on sys.path
import numpy as np

from sphinx_rag.index import suggest
from sphinx_rag.tools.evaluate import _score_question, load_questions
from sphinx_rag.search.expand import expand
from sphinx_rag.search.keyword_scoring import expand_tokens, keyword_scores
from sphinx_rag.search.lexical import tokenize
from sphinx_rag.search.retrieve import CANDIDATES, DENSE_VOTE, Result, Searcher, rrf_fuse, top_k
from sphinx_rag.index.encoder_fit import pseudo_queries

DEPTH = 30  # fused candidates the reranker reorders
TRAIN_VERSION = 5  # of training_queries (part of the run cache key)


# -- retrieval runs --------------------------------------------------------------------------

def run_query(searcher: Searcher, query: str, vector: np.ndarray, encoder: str) -> dict:
    """The retrieval's parts for one query: the fused top DEPTH with each candidate's
    keyword and dense score and rank, and the fused ranking below it (ids only)."""
    index = searcher.index
    tokens = tokenize(query)
    expansions = expand_tokens(tokens, index.postings, index.near)
    kscores = keyword_scores(index.n_chunks, tokens, expansions)
    keyword = top_k(kscores, CANDIDATES)
    dense = searcher.dense_scores(query, vector, keyword)
    dense_rank = top_k(dense, CANDIDATES)
    fused = rrf_fuse([keyword, dense_rank], searcher.rrf_k, index.weights, [1.0, DENSE_VOTE[encoder]])
    ranked = sorted(fused, key=lambda i: (-fused[i], i))
    krank = {c: r for r, c in enumerate(keyword, start=1)}
    drank = {c: r for r, c in enumerate(dense_rank, start=1)}
    exact = {t: bool(ex) and len(ex) == 1 and ex[0][1] == 1.0 for t, ex in expansions.items()}
    cards = [c - index.chunk(c).get("card", 0) if index.chunk(c)["kind"] == "api" else -1 for c in ranked[:DEPTH]]
    return {"query": query, "tokens": tokens, "exact": exact, "ranked": ranked, "vector": np.asarray(vector, np.float32),
            "fused": [fused[c] for c in ranked[:DEPTH]],
            "kscore": [float(kscores[c]) for c in ranked[:DEPTH]], "krank": [krank.get(c, 0) for c in ranked[:DEPTH]],
            "dscore": [float(dense[c]) for c in ranked[:DEPTH]], "drank": [drank.get(c, 0) for c in ranked[:DEPTH]],
            "kmax": float(kscores.max(initial=0.0)), "dmax": float(dense.max(initial=0.0)),
            "card": cards, "card_dscore": [float(dense[c]) if c >= 0 else 0.0 for c in cards]}


_PARAM = re.compile(r"^Parameter (\w+) of ([\w.]+)")
_CARD_HEAD = re.compile(r"^(\w+) \((class|function|method|exception|attribute|property|data) in ")


def training_queries(index, limit: int, seed: int = 7) -> list[tuple[str, list[int], str]]:
    """(query, positive chunk ids, source) from the site alone, never from a question set:

    * ``span``/``title``: the static encoder's pseudo-queries (a sample of ``limit``);
    * ``section``/``api``: the questions ``suggest`` mines from section titles and cards;
    * ``which``: "Which <kind> <summary>?" of every card;
    * ``param``: "What does the <name> parameter of <object> do?" of parameter chunks.
    """
    records = index.chunks()
    texts = [r["text"] for r in records]
    titles = [r.get("title", "") for r in records]
    by_url: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        by_url.setdefault(r["url"], []).append(i)
    rng = np.random.default_rng(seed)
    pairs = pseudo_queries(texts, titles, budget=max(limit * 4, 2000))
    pick = rng.choice(len(pairs), size=min(limit, len(pairs)), replace=False)
    folded = [" ".join(t.split()) for t in texts]
    out = []
    for j in sorted(pick.tolist()):
        query, source = pairs[j]
        if query == titles[source].strip():  # a title: every chunk of that section
            out.append((query, by_url[records[source]["url"]], "title"))
        else:  # a span or sentence: every chunk that holds it (chunks overlap, texts repeat)
            needle = " ".join(query.split())
            out.append((query, [i for i, t in enumerate(folded) if needle in t] or [source], "span"))
    extra = [(s.question, by_url[s.url], s.source) for s in suggest.candidates(records)]
    for i, r in enumerate(records):
        head, _, rest = r["text"].partition("\n")
        m = _CARD_HEAD.match(head) if r.get("members") is not None or r["kind"] == "api" else None
        if r.get("members") and m:
            summary = re.split(r"(?<=\.)\s", rest.strip(), maxsplit=1)[0].rstrip(".")
            summary = re.sub(r":\w+:`~?([^`]+)`", r"\1", summary).replace("``", "")
            if 2 <= len(summary.split()) <= 20:
                extra.append((f"Which {m.group(2)} {summary[:1].lower() + summary[1:]}?", by_url[r["url"]], "which"))
        p = _PARAM.match(head)
        if p:
            obj = p.group(2).rsplit(".", 1)[-1]
            extra.append((f"What does the {p.group(1)} parameter of {obj} do?", [i], "param"))
    rng.shuffle(extra)
    return out + extra[:limit]


def model_dir_with_cache(index) -> Path:
    """The exported model whose sqlite embedding cache holds the pseudo-queries' vectors."""
    for d in sorted((Path.home() / ".cache" / "sphinx-rag" / "models").glob("*")):
        if (d / "embedding_cache.sqlite").exists():
            return d
    return index.model_dir


def collect(site: Path, encoder: str, questions: dict[str, list[dict]], train: int, cache: Path) -> dict:
    searcher = Searcher(site, encoder=encoder)
    key = hashlib.sha256(json.dumps([TRAIN_VERSION, str(site), encoder, sorted(questions), train, DEPTH,
                                     searcher.index.manifest.get("dir")]).encode()).hexdigest()[:16]
    path = cache / f"runs-{key}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes())
    index = searcher.index
    data: dict = {"sets": {}, "train": []}
    for name, qs in questions.items():
        t = time.perf_counter()
        data["sets"][name] = [run_query(searcher, q["question"], searcher.query_vector(q["question"]), encoder)
                              for q in qs]
        print(f"  {name}: {len(qs)} questions in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    queries = training_queries(index, train)
    texts = [q for q, _, _ in queries]
    if encoder == "model":
        from sphinx_rag.model.embed import embed_cached

        v, s = embed_cached(texts, model_dir_with_cache(index))
        vectors = v.astype(np.float32) * s[:, None]
    else:
        zero = np.zeros(index.dim, dtype=np.float32)
        vectors = [index.encoder().encode(t) for t in texts]
        vectors = [zero if x is None else x for x in vectors]
    t = time.perf_counter()
    for (q, positives, source), vec in zip(queries, vectors):
        run = run_query(searcher, q, np.asarray(vec, dtype=np.float32), encoder)
        run["positives"], run["source"] = positives, source
        data["train"].append(run)
    print(f"  training: {len(queries)} queries in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(data))
    return data


# -- features --------------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


class Features:
    """Per-candidate features from a run and the chunk records (what the browser has: the
    candidates' text records, their keyword and dense scores and ranks)."""

    NAMES = ["fused", "inv_rank", "k_inv", "d_inv", "k_norm", "d_cos", "d_gap", "cov_head", "cov_text",
             "name_exact", "is_card", "is_api", "n_parts", "log_len", "sect_first", "prox",
             "cov_title", "which_card", "which_api", "howto_guide"]

    def __init__(self, index):
        self.index = index
        self._tok: dict[int, tuple] = {}

    def chunk_tokens(self, i: int):
        if i not in self._tok:
            r = self.index.chunk(i)
            head = r["text"].split("\n", 1)[0]
            toks = tokenize(r["text"])
            last = (r.get("headings") or [""])[-1]
            self._tok[i] = (set(tokenize(head)), set(toks), toks, {_loose(t) for t in tokenize(last)})
        return self._tok[i]

    def object_name(self, i: int) -> str | None:
        r = self.index.chunk(i)
        if r["kind"] != "api" or "#" not in r["url"]:
            return None
        return r["url"].split("#", 1)[1].rsplit(".", 1)[-1].lower()

    def of(self, run: dict) -> np.ndarray:
        ids = run["ranked"][:DEPTH]
        q = list(dict.fromkeys(t for t in run["tokens"]))
        nq = max(len(q), 1)
        qset = set(q)
        words = {w.lower() for w in _IDENT.findall(run["query"])}
        words |= {w.rsplit(".", 1)[-1] for w in words}
        qloose = {_loose(t) for t in q}
        which = bool(_WHICH.search(run["query"]))
        howto = bool(re.match(r"\s*how\b", run["query"], re.I))
        cards = {}
        for i in ids[:20]:
            r = self.index.chunk(i)
            owner = i - r.get("card", 0)
            cards[owner] = cards.get(owner, 0) + 1
        rows = []
        for n, i in enumerate(ids):
            r = self.index.chunk(i)
            head, text, seq, title = self.chunk_tokens(i)
            name = self.object_name(i)
            owner = i - r.get("card", 0)
            prev = self.index.chunk(i - 1)["url"] if i > 0 else None
            rows.append([
                run["fused"][n] * 61.0,
                1.0 / (n + 1),
                1.0 / run["krank"][n] if run["krank"][n] else 0.0,
                1.0 / run["drank"][n] if run["drank"][n] else 0.0,
                run["kscore"][n] / run["kmax"] if run["kmax"] > 0 else 0.0,
                run["dscore"][n],
                run["dmax"] - run["dscore"][n],
                len(qset & head) / nq,
                len(qset & text) / nq,
                1.0 if name and name in words else 0.0,
                1.0 if r.get("members") else 0.0,
                1.0 if r["kind"] == "api" else 0.0,
                math.log1p(cards.get(owner, 0)) if r["kind"] == "api" else 0.0,
                math.log(max(len(r["text"]), 1)) / 8.0,
                1.0 if prev != r["url"] else 0.0,
                _proximity(seq, qset),
                len(qloose & title) / nq,
                1.0 if which and r.get("members") else 0.0,
                1.0 if which and r["kind"] == "api" else 0.0,
                1.0 if howto and r["kind"] != "api" else 0.0,
            ])
        return np.asarray(rows, dtype=np.float64)


_WHICH = re.compile(r"\b(which|what)\s+(\w+\s+){0,2}?(class|function|method|exception|decorator|type|object|"
                    r"attribute|property|estimator|model|transformer)\b", re.I)


def _loose(t: str) -> str:
    """A looser stem for title matching: 'showing', 'shows', 'show' -> 'show'."""
    for suffix in ("ing", "ed", "es", "s"):
        if t.endswith(suffix) and len(t) - len(suffix) >= 3:
            t = t[:-len(suffix)]
            break
    return t[:-1] if t.endswith("e") and len(t) > 3 else t


def _proximity(seq: list[str], q: set[str]) -> float:
    """1 / (the shortest window holding every matched query term / their count): 1 when
    they stand together, small when scattered."""
    matched = q.intersection(seq)
    if len(matched) < 2:
        return 0.0
    need, have, best, left = len(matched), {}, len(seq), 0
    for right, t in enumerate(seq):
        if t in matched:
            have[t] = have.get(t, 0) + 1
        while len(have) == need:
            best = min(best, right - left + 1)
            lt = seq[left]
            if lt in have:
                have[lt] -= 1
                if not have[lt]:
                    del have[lt]
            left += 1
    return need / best


def title_vectors(index, model_dir: Path) -> np.ndarray:
    """Per chunk, the model's vector of what names its place: a guide chunk's heading path,
    an API chunk's object card (its name line and summary)."""
    from sphinx_rag.model.embed import embed_cached

    texts = []
    for i in range(index.n_chunks):
        r = index.chunk(i)
        if r["kind"] == "api":
            card = index.chunk(i - r.get("card", 0))
            texts.append("\n".join(card["text"].split("\n", 2)[:2]))
        else:
            texts.append(" > ".join(r.get("headings") or [r.get("title", "")]))
    v, s = embed_cached(texts, model_dir)
    return v.astype(np.float32) * s[:, None]


# -- models ----------------------------------------------------------------------------------

def fit_linear(xs: list[np.ndarray], positives: list[np.ndarray], l2: float = 1.0) -> np.ndarray:
    """Listwise softmax (ListNet top-1) over each query's candidates, L2-penalised."""
    from scipy.optimize import minimize

    dim = xs[0].shape[1]

    def loss(w):
        total, grad = 0.0, np.zeros(dim)
        for x, pos in zip(xs, positives):
            s = x @ w
            s = s - s.max()
            e = np.exp(s)
            z = e.sum()
            p = e / z
            zp = e[pos].sum()
            total -= math.log(zp / z)
            grad -= (e[pos] / zp) @ x[pos] - p @ x
        total /= len(xs)
        grad /= len(xs)
        return total + l2 * w @ w / 2, grad + l2 * w

    w0 = np.zeros(dim)
    w0[0] = 1.0
    res = minimize(loss, w0, jac=True, method="L-BFGS-B")
    return res.x


def rerank(run: dict, scores: np.ndarray) -> list[int]:
    head = run["ranked"][:DEPTH]
    order = sorted(range(len(head)), key=lambda n: (-scores[n], n))
    return [head[n] for n in order] + run["ranked"][DEPTH:]


# -- evaluation ------------------------------------------------------------------------------

def passages(index, ranked: list[int], k: int = 10) -> list[Result]:
    chunk = index.chunk
    out = []
    for rank, (hit, span) in enumerate(expand(ranked, chunk, index.n_chunks, k), start=1):
        c = chunk(hit)
        out.append(Result(rank, 0.0, c["url"], c["title"], c["kind"], "\n\n".join(chunk(j)["text"] for j in span),
                          c["id"], hit, [chunk(j)["url"] for j in span if j != hit]))
    return out


def metrics(index, questions: list[dict], rankings: list[list[int]]) -> dict:
    rows = []
    for q, ranked in zip(questions, rankings):
        row = _score_question(passages(index, ranked), q, q.get("relevant") or [])
        rows.append({"style": q.get("style", ""), **row})
    out = {"n": len(rows)}
    for key in ("recall@1", "recall@10", "mrr@10", "ac-mrr@10"):
        vals = [r[key] for r in rows if key in r]
        if vals:
            out[key] = sum(vals) / len(vals)
    out["by_style"] = {s: sum(r["mrr@10"] for r in rows if r["style"] == s and "mrr@10" in r)
                       / max(1, sum(1 for r in rows if r["style"] == s and "mrr@10" in r))
                       for s in sorted({r["style"] for r in rows})}
    out["per_q"] = [r.get("mrr@10", 0.0) for r in rows]
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site")
    parser.add_argument("questions", nargs="+")
    parser.add_argument("--encoder", default="model", choices=("model", "static"))
    parser.add_argument("--train", type=int, default=2000, help="pseudo-queries sampled for training")
    parser.add_argument("--cache", default="/tmp/rerank-study")
    parser.add_argument("--l2", type=float, default=0.01)
    parser.add_argument("--features", default="", help="comma-separated subset of Features.NAMES")
    parser.add_argument("--sources", default="", help="comma-separated training sources to keep")
    parser.add_argument("--easy", type=float, default=None,
                        help="keep easy training queries (fused top-1 right) down to this share")
    args = parser.parse_args(argv)
    qsets = {Path(p).stem: load_questions(Path(p)) for p in args.questions}
    data = collect(Path(args.site), args.encoder, qsets, args.train, Path(args.cache))
    index = Searcher(Path(args.site), encoder=args.encoder).index
    feats = Features(index)
    cols = [Features.NAMES.index(n) for n in args.features.split(",")] if args.features else list(
        range(len(Features.NAMES)))
    names = [Features.NAMES[c] for c in cols]
    keep = set(args.sources.split(",")) if args.sources else None
    train = [r for r in data["train"] if set(r["positives"]) & set(r["ranked"][:DEPTH])
             and (keep is None or r["source"] in keep)]
    if args.easy is not None:
        easy = [r for r in train if r["ranked"][0] in set(r["positives"])]
        hard = [r for r in train if r["ranked"][0] not in set(r["positives"])]
        n_easy = min(len(easy), int(round(len(hard) * args.easy / (1 - args.easy))))
        pick = np.random.default_rng(3).choice(len(easy), size=n_easy, replace=False)
        train = hard + [easy[j] for j in sorted(pick.tolist())]
    xs = [feats.of(r)[:, cols] for r in train]
    pos = [np.array([n for n, c in enumerate(r["ranked"][:DEPTH]) if c in set(r["positives"])]) for r in train]
    print(f"training queries with a positive in the top {DEPTH}: {len(train)} of {len(data['train'])}")
    for src in sorted({r["source"] for r in data["train"]}):
        rs = [r for r in data["train"] if r["source"] == src]
        top1 = sum(r["ranked"][:1] and r["ranked"][0] in set(r["positives"]) for r in rs) / len(rs)
        print(f"  {src:8s} {len(rs):5d} queries, fused top-1 on a positive {top1:.2f}")
    w = fit_linear(xs, pos, args.l2)
    print("weights:", ", ".join(f"{n} {v:+.3f}" for n, v in zip(names, w)))
    for name, qs in qsets.items():
        runs = data["sets"][name]
        base = metrics(index, qs, [r["ranked"] for r in runs])
        new = metrics(index, qs, [rerank(r, feats.of(r)[:, cols] @ w) for r in runs])
        for label, m in (("fused", base), ("reranked", new)):
            print(f"{name:28s} {label:9s} MRR@10 {m['mrr@10']:.3f} Hit@1 {m['recall@1']:.3f} "
                  f"R@10 {m['recall@10']:.3f}" + (f" AC-MRR {m['ac-mrr@10']:.3f}" if "ac-mrr@10" in m else "")
                  + "  " + " ".join(f"{s} {v:.3f}" for s, v in m["by_style"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
