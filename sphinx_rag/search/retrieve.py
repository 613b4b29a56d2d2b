"""The reference search over a built index: keyword and dense rankings, fused, expanded.

``js/src/search/retrieve.js`` is the same search in the browser, function for function;
``tests/fixtures/rankings.json`` holds rankings computed here that the JS tests must
reproduce with bit-identical scores. Both read the same shards (``format.py``) and
make the same approximations: a very common term's postings beyond its head
(``Layout.head_postings``) have 4-bit impacts, and the dense pass scores only some
clusters (``dense.probe_order``).

A query, step by step:

1. keyword: ``lexical.tokenize`` -> each token's postings, or those of near terms for
   a typo (``keyword_scoring.expand_tokens``) -> BM25 times coverage -> top ``CANDIDATES``;
2. dense: spelling-corrected query -> a query vector (``model.embed.Embedder``, the full
   model, or ``static_encoder.StaticEncoder``, the site's fitted linear encoder) ->
   probed clusters (those of the best keyword hits, then the nearest: ``dense.py``)
   -> exact int8 scores -> top ``CANDIDATES``;
3. reciprocal-rank fusion of both lists, times each chunk's page weight; the reranking
   stage (``rerank.py``) reorders the fused top candidates for a question that asks which
   API object does something; the chunks that a query token found in at most ``RARE_DF``
   chunks names come first (``decisive_hits``; also with the keyword ranking alone);
4. ``expand.expand``: each hit becomes a passage, with the neighbouring chunks on its
   page that the ranking found relevant (relevant segment extraction; with a budget of
   characters, sized so that more passages fit in it); the passage's ``text`` joins
   their embedded texts, its ``display`` their displays (``chunk.display.join_displays``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..chunk.display import join_displays, record_display
from .dense import dense_scores, probe_order
from .expand import expand
from .index import IndexReader
from .keyword_scoring import expand_tokens, keyword_scores, typo_candidates
from .lexical import fold, identifier_tokens, split_words, tokenize
from .remote import open_index
from .cross_encoder import load_reranker, rerank_scores
from .rerank import rerank

__all__ = ["Result", "Searcher", "top_k", "rrf_fuse", "correct_spelling", "weak_match", "CANDIDATES", "FUSIONS", "ENCODERS",
           "DENSE_VOTE", "RELEVANCE_FLOOR", "MAX_QUERY_CHARS", "clip_query", "FRUGAL_PROBE_SHARE", "frugal_probe", "RARE_DF", "decisive_hits",
           "pin_decisive"]

CANDIDATES = 100  # depth of each ranking before fusion
FUSIONS = ("rrf", "bm25", "dense")
ENCODERS = ("static", "model")
#: The dense ranking's vote in the fusion, per query encoder (the keyword ranking's is 1):
#: the static encoder's ranking is weaker, and at full weight it pulled the fused ranking
#: below keyword-only on scikit-learn's API (tuned on the demo, eval/RESULTS.md).
DENSE_VOTE = {"model": 1.0, "static": 0.2}
#: Below this cosine the nearest chunk is no good match (all-MiniLM-L6-v2: the top chunk
#: of 232 evaluation questions scores >= 0.35, of 72 nonsense queries <= 0.40, median 0.22).
RELEVANCE_FLOOR = 0.3
#: A frugal reader's static-encoder queries (the browser's, under Save-Data or on a slow
#: connection: js/src/ui/model_policy.js) probe this share of the layout's vectors, a
#: quarter of the cluster bytes (eval/RESULTS.md, "Frugal readers"):
#: ``Searcher(encoder="static", probe=frugal_probe(p))`` ranks as they do.
FRUGAL_PROBE_SHARE = 4


def frugal_probe(probe: int) -> int:
    """The probe of a frugal reader's queries, for a layout's ``probe`` (retrieve.js frugalProbe)."""
    return max(1, probe // FRUGAL_PROBE_SHARE)


#: Characters (code points) of a query that are searched: the model reads 256 tokens, and a
#: pasted page of 30,000 words otherwise costs minutes of spelling correction
#: (``clip_query``; retrieve.js clipQuery the same).
MAX_QUERY_CHARS = 1000


def clip_query(query: str) -> str:
    """The part of ``query`` that is searched (its first ``MAX_QUERY_CHARS`` code points)."""
    return query[:MAX_QUERY_CHARS]


#: A query token in at most this many chunks may name them (``decisive_hits``): a table
#: row's key, one line of a long code block (a line the chunks' overlap repeats is in two).
RARE_DF = 2


def _say(message: str):
    print(message, file=sys.stderr)


@dataclass
class Result:
    rank: int
    score: float
    url: str
    title: str
    kind: str
    text: str
    id: str
    index: int
    also: list[str] = field(default_factory=list)  # URLs of the passage's other chunks (expand.py)
    display: list[list[str]] = field(default_factory=list)  # what a reader sees (chunk/display.py)
    #: the hit chunk's cosine to the query (0: its cluster was not probed; None: keywords
    #: alone): what merge.py compares across sites
    similarity: float | None = None

    def to_json(self) -> dict:
        return {"rank": self.rank, "score": self.score, "url": self.url, "title": self.title,
                "kind": self.kind, "text": self.text, "display": self.display, "id": self.id}


def _section_titles(chunk, span: list[int]) -> list[str | None]:
    """The title of each chunk of a passage, None for an API part (its display names its object)."""
    return [None if chunk(j)["kind"] == "api" else chunk(j)["title"] for j in span]


def top_k(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k best positive scores; ties go to the lower index."""
    candidates = np.flatnonzero(scores > 0)
    order = sorted(candidates.tolist(), key=lambda i: (-scores[i], i))
    return order[:k]


def weak_match(tokens: list[str], expansions: dict, dense_best: float | None, floor: float) -> bool:
    """True when no chunk holds at least half of the query's words exactly (typo matches do
    not count) and, with semantic search, no chunk is nearer the query than ``floor``: the
    results are only the nearest, not a good match.

    Measured (eval/RESULTS.md): with both signals no evaluation question is flagged and 85%
    of nonsense queries are; keyword-only, 8 of 232 questions (synonyms) and all nonsense.
    """
    distinct = list(dict.fromkeys(tokens))
    counts: dict[int, int] = {}
    for t in distinct:
        ex = expansions[t]
        if len(ex) == 1 and ex[0][1] == 1.0:
            for d in ex[0][0].docs.tolist():
                counts[d] = counts.get(d, 0) + 1
    covered = bool(counts) and 2 * max(counts.values()) >= len(distinct)
    return not covered and (dense_best is None or dense_best < floor)


def decisive_hits(query: str, expansions: dict) -> set[int]:
    """The chunks that decisive query tokens name.

    A token is decisive when it is matched exactly (not a typo's near terms) and is in at
    most ``RARE_DF`` chunks. Written as an identifier or a code (``lexical.identifier_tokens``:
    a row's key ``SN0421``, a code line's ``codeline19999``, ``create_app``), it names every
    chunk that holds it. A plain word (a station's code name ``brakelomiru``) names only a
    chunk that also holds every other query word the index knows: such a chunk is the only
    one with the whole query. A rare word asked in passing (a question's "emit") does not.
    """
    names = set(identifier_tokens(query))
    known = [ex for ex in expansions.values() if ex]
    out: set[int] = set()
    for token, ex in expansions.items():
        if len(ex) == 1 and ex[0][1] == 1.0 and ex[0][0].df <= RARE_DF:
            out.update(d for d in ex[0][0].docs.tolist() if token in names or all(_holds(other, d) for other in known))
    return out


def _holds(expansion, chunk: int) -> bool:
    """Whether one of a token's expansions (its postings, or its near terms') has the chunk."""
    for postings, _ in expansion:
        at = int(np.searchsorted(postings.docs, chunk))
        if at < len(postings.docs) and postings.docs[at] == chunk:
            return True
    return False


def pin_decisive(fused: dict[int, float], decisive: set[int]) -> dict[int, float]:
    """The fused (or keyword) scores with the chunks that decisive tokens name above every
    other chunk, in their own order: when one of them does not score above all the others
    already, each gets twice the best score added (0 before for one that no ranking reached;
    else the scores stay as they are). The dense
    ranking cannot tell ``codeline19998`` from ``codeline19999``; by rank alone its votes
    would put chunks that only look alike above the one chunk that has the name asked for."""
    if not decisive or not fused:
        return fused
    rest = max((score for i, score in fused.items() if i not in decisive), default=0.0)
    if all(fused.get(i, 0.0) > rest for i in decisive):
        return fused
    top = max(fused.values())
    return fused | {i: fused.get(i, 0.0) + 2 * top for i in decisive}


def rrf_fuse(rankings: list[list[int]], k: int, weights: np.ndarray, votes: list[float] | None = None) -> dict[int, float]:
    """Reciprocal-rank fusion: sum of vote / (k + rank) (rank from 1; each ranking's vote 1
    unless given), times the chunk weight."""
    fused: dict[int, float] = {}
    for n, ranking in enumerate(rankings):
        vote = 1.0 if votes is None else votes[n]
        for rank, idx in enumerate(ranking, start=1):
            fused[idx] = fused.get(idx, 0.0) + vote / (k + rank)
    return {i: s * float(weights[i]) for i, s in fused.items()}


def correct_spelling(query: str, known, near, model_words: set[str]) -> str:
    """The query with misspelt words replaced by their nearest corpus term, for embedding.

    A word is corrected only when neither the corpus (``known(term)``) nor the
    embedding model's own vocabulary knows it: "clasifier" becomes "classifier",
    while a real word the docs happen not to use ("inference") is left alone.
    WordPiece would otherwise cut a typo into meaningless pieces. ``near(term)``
    gives the vocabulary terms (with df) a typo of ``term`` can reach.
    """
    out = []
    for piece, is_word in split_words(query):
        if is_word:
            tokens = tokenize(piece)
            if len(tokens) == 1 and not known(tokens[0]) and fold(piece).lower() not in model_words:
                vocab = dict(near(tokens[0]))
                candidates = typo_candidates(tokens[0], sorted(vocab), vocab.__getitem__)
                if candidates:
                    piece = candidates[0][1]
        out.append(piece)
    return "".join(out)


class Searcher:
    """Open a built index once, then answer queries (shards are read on first use)."""

    def __init__(self, path: Path | str | IndexReader, *, fusion: str | None = None, rrf_k: int | None = None,
                 probe: int | None = None, encoder: str | None = None, rerank: bool = False,
                 warn: Callable[[str], None] | None = None):
        # a local HTML directory, a published site's URL, or an index already open
        self.index = path if isinstance(path, IndexReader) else open_index(path)
        settings = self.index.manifest.get("settings", {})
        self.fusion = fusion or settings.get("fusion", "rrf")
        if self.fusion not in FUSIONS:
            raise ValueError(f"[sphinx-rag] fusion must be one of {FUSIONS}, got {self.fusion!r}")
        self.rrf_k = rrf_k or settings.get("rrf_k", 60)
        if self.fusion != "bm25" and not self.index.has_vectors:
            self.fusion = "bm25"  # keyword-only index
        #: vectors the dense pass scores at least (whole clusters, nearest first)
        self.probe = probe or self.index.manifest["layout"]["probe"]
        self.floor = settings.get("relevance_floor", RELEVANCE_FLOOR)
        #: the query encoder: the site's final tier unless asked ("both" ends on the model)
        self.encoder = encoder or ("static" if settings.get("query_encoder") == "static" else "model")
        if self.encoder not in ENCODERS:
            raise ValueError(f"[sphinx-rag] encoder must be one of {ENCODERS}, got {self.encoder!r}")
        self._embedder = None
        self._model_words: set[str] | None = None
        #: the cross-encoder stage (cross_encoder.py) after the fusion: what a reader gets once
        #: the browser has the model; off by default, so that ``ranking`` is the fused one the
        #: parity fixtures pin (the CLI, MCP and ``evaluate``'s -rerank methods turn it on)
        self.reranking = rerank
        self._cross = None
        self.warn = warn or _say

    @property
    def cross_encoder(self):
        """The site's reranker (None: off, not shipped, or unusable: said once through ``warn``)."""
        if not self.reranking or self.fusion != "rrf":
            return None
        if self._cross is None:
            self._cross = load_reranker(self.index, self.warn) or False
        return self._cross or None

    @property
    def manifest(self) -> dict:
        return self.index.manifest

    @property
    def embedder(self):
        if self._embedder is None:
            from ..model.embed import Embedder

            self.index.verify_model()
            self._embedder = Embedder(self.index.model_dir)
        return self._embedder

    def _check_encoder(self):
        if self.encoder == "static" and not self.index.has_encoder:
            raise ValueError("[sphinx-rag] this index has no static query encoder (sphinx_rag_query_encoder = "
                             "'model', or too few chunks to fit one): use the encoder 'model'")
        if self.encoder == "model" and self.index.model_dir is None:
            raise ValueError("[sphinx-rag] this index ships no query model (sphinx_rag_query_encoder = 'static'): "
                             "use the encoder 'static'")

    def embedding_query(self, query: str) -> str:
        """The text actually embedded for a query (clipped, spelling corrected)."""
        query = clip_query(query)
        if self._model_words is None:
            if self.encoder == "static":
                lines = self.index.encoder().vocab.decode("utf-8").splitlines()
            else:
                lines = (self.index.model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
            self._model_words = {w for w in lines if not w.startswith("##")}
        return correct_spelling(query, lambda t: self.index.postings(t) is not None, self.index.near,
                                self._model_words)

    def query_vector(self, query: str) -> np.ndarray:
        """The query's vector from the chosen encoder (zeros: the static encoder knows none
        of its tokens, so no chunk is semantically near)."""
        self._check_encoder()
        text = self.embedding_query(clip_query(query))
        if self.encoder == "static":
            vector = self.index.encoder().encode(text)
            return np.zeros(self.index.dim, dtype=np.float32) if vector is None else vector
        return self.embedder.embed([text])[0]

    def bm25_scores(self, query: str) -> np.ndarray:
        """The keyword ranking: BM25 times query-term coverage over the stored postings."""
        tokens = tokenize(clip_query(query))
        expansions = expand_tokens(tokens, self.index.postings, self.index.near)
        return keyword_scores(self.index.n_chunks, tokens, expansions)

    def dense_scores(self, query: str, vector: np.ndarray | None = None, hits: list[int] = ()) -> np.ndarray:
        """Exact int8 scores of the chunks in the probed clusters, 0 elsewhere: the clusters
        of the best keyword ``hits`` first (``guided_clusters``), then the nearest."""
        if vector is None:
            vector = self.query_vector(query)
        centroids, centroid_scales = self.index.centroids()
        out = np.zeros(self.index.n_chunks, dtype=np.float64)
        first = self.guided_clusters(hits)
        for c in probe_order(vector, centroids, centroid_scales, self.index.cluster_sizes, self.probe, first):
            cluster = self.index.cluster(c)
            out[cluster.ids] = dense_scores(vector, cluster.vectors, cluster.scales)
        return out

    def guided_clusters(self, hits: list[int]) -> list[int]:
        """The clusters of the first ``guide_hits`` keyword hits, in their order, at most
        ``guide_clusters`` (``format.Layout``; none when the index has one cluster), and
        no cluster that would take them past the probe's budget of vectors (the dense
        tier's bytes stay those of an unguided probe)."""
        layout = self.index.manifest["layout"]
        limit = layout.get("guide_clusters", 0)
        sizes = self.index.cluster_sizes
        out: list[int] = []
        covered = 0
        for c in [self.index.cluster_of(i) for i in hits[:layout.get("guide_hits", 0)]]:  # the browser reads these at once
            if c is None:
                return []
            if len(out) >= limit:
                break
            if c not in out and covered + sizes[c] <= self.probe:
                out.append(c)
                covered += sizes[c]
        return out

    def ranking(self, query: str, vector: np.ndarray | None = None) -> tuple[dict[int, float], bool]:
        """Final score of every candidate chunk, and whether they are only a weak match
        (``weak_match``, from the same keyword and dense passes)."""
        scored, weak, _ = self._ranking(query, vector)
        return scored, weak

    def _ranking(self, query: str, vector: np.ndarray | None) -> tuple[dict[int, float], bool, np.ndarray | None]:
        """``ranking``, and the dense scores (None: keywords alone)."""
        query = clip_query(query)
        tokens = tokenize(query)
        expansions = expand_tokens(tokens, self.index.postings, self.index.near)
        kscores = keyword_scores(self.index.n_chunks, tokens, expansions)
        keyword = top_k(kscores, CANDIDATES) if self.fusion == "rrf" else []  # what the rrf probe follows
        dense = None if self.fusion == "bm25" else self.dense_scores(query, vector, keyword)
        weak = weak_match(tokens, expansions, None if dense is None else float(dense.max(initial=0.0)), self.floor)
        weights = self.index.weights
        if self.fusion == "bm25":  # the coverage factor can put the one chunk asked for below others too
            s = kscores * weights
            return pin_decisive({i: float(s[i]) for i in top_k(s, CANDIDATES)}, decisive_hits(query, expansions)), weak, None
        if self.fusion == "dense":
            s = np.where(dense > 0, dense * weights, dense)
            return {i: float(s[i]) for i in top_k(s, CANDIDATES)}, weak, dense
        fused = rrf_fuse([keyword, top_k(dense, CANDIDATES)], self.rrf_k, weights, [1.0, DENSE_VOTE[self.encoder]])
        reranked = rerank(query, fused, lambda i: self.index.chunk(i)["kind"], weights, self.rrf_k)
        cross = self.cross_encoder
        if cross is not None:
            reranked = rerank_scores(reranked, lambda top: cross.logits(query, [self.index.chunk(i)["text"] for i in top]),
                                     cross.info)
        return pin_decisive(reranked, decisive_hits(query, expansions)), weak, dense

    def scores(self, query: str, vector: np.ndarray | None = None) -> dict[int, float]:
        """Final score of every candidate chunk."""
        return self.ranking(query, vector)[0]

    def weak_match(self, query: str, vector: np.ndarray | None = None) -> bool:
        """Whether the results of ``query`` are only the nearest, not a good match."""
        return self.ranking(query, vector)[1]

    def search(self, query: str, k: int = 10, vector: np.ndarray | None = None,
               budget: int | None = None) -> list[Result]:
        """The k best passages (expand.py): each a hit and its relevant neighbours, in page
        order; with a ``budget`` (characters), passages sized so that more of them fit in it."""
        return self.search_with_match(query, k, vector, budget)[0]

    def search_with_match(self, query: str, k: int = 10, vector: np.ndarray | None = None,
                          budget: int | None = None) -> tuple[list[Result], bool]:
        """``search`` and ``weak_match`` from one pass over the index."""
        scored, weak, dense = self._ranking(query, vector)
        results = self.passages(scored, k, budget)
        for r in results:
            r.similarity = None if dense is None else float(dense[r.index])
        return results, weak

    def passages(self, scored: dict[int, float], k: int = 10, budget: int | None = None) -> list[Result]:
        """The k best passages of a ranking (chunk -> score; ``ranking``'s, or several fused)."""
        ranked = sorted(scored, key=lambda i: (-scored[i], i))
        chunk = self.index.chunk
        out = []
        for rank, (hit, span) in enumerate(expand(ranked, chunk, self.index.n_chunks, k, budget), start=1):
            c = chunk(hit)
            text = "\n\n".join(chunk(j)["text"] for j in span)
            display = join_displays([record_display(chunk(j)) for j in span], _section_titles(chunk, span), c["title"])
            out.append(Result(rank, scored[hit], c["url"], c["title"], c["kind"], text, c["id"], hit,
                              [chunk(j)["url"] for j in span if j != hit], display))
        return out
