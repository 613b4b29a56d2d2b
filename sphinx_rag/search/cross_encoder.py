"""The cross-encoder stage: the fused top candidates re-scored by a model that reads the
question and each chunk together.

BM25 counts words, the bi-encoder compares two vectors computed apart and fusion mixes
ranks: nothing before this stage reads the question and the passage at once. The
reranker does: a small transformer (two layers, trained here on other projects' docs:
``training/``) scores ``[CLS] question [SEP] chunk text [SEP]``, and the first ``depth``
fused candidates are reordered by that score plus a prior for their fused rank
(``combined``). Candidates below ``depth`` keep their fused order, after them.

Inputs are cut to fit the browser's budget: the question to ``max_query_tokens`` word
pieces, the chunk text (which starts with its owner or heading path:
``chunk/__init__.py``) to the rest of ``max_tokens``; a text is cut to
``CHARS_PER_TOKEN * max_tokens`` code points before it is tokenized, so that a huge chunk
costs no more than a short one.

``js/src/search/cross_encoder.js`` computes the same scores in the browser (the same
ids, the same batch, onnxruntime-web), pinned by ``tests/fixtures/cross_encoder.json``.
The files (``RERANKER_FILES``) ship in the default model's package and are published
beside the model (``index/write.py``); a missing, corrupt or mismatched file leaves the
fused order with one warning (``load_reranker``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["RERANKER_FILES", "CHARS_PER_TOKEN", "TEXT_CUTS", "RerankerInfo", "CrossEncoder", "pair_ids",
           "clip_text", "focus_text", "model_text", "combined", "rerank_scores", "read_info", "load_reranker"]

RERANKER_FILES = ("reranker.onnx", "reranker_info.json", "tokenizer.json", "vocab.txt")
#: Code points of a text that are tokenized at most, per token of the budget (a WordPiece
#: token is 4-5 characters of English prose; 8 leaves room for code and markup).
CHARS_PER_TOKEN = 8
#: The same fold of each int8 weight into an fp32 constant as the embedding model's
#: (model/embed.py SESSION_CONFIG): the browser computes in fp32 too.
SESSION_CONFIG = {"session.disable_quant_qdq": "1"}
#: How a chunk's text is cut to the model's budget: "head", its first code points
#: (``clip_text``); "focus", its first line then its sentences richest in the question's
#: words (``focus_text``).
TEXT_CUTS = ("head", "focus")
#: ``focus_text`` reads a chunk's first ``CHARS_PER_TOKEN * FOCUS_READ_TOKENS`` code points
#: at most (a hostile chunk costs no more).
FOCUS_READ_TOKENS = 2500


@dataclass(frozen=True)
class RerankerInfo:
    """``reranker_info.json``: how the model reads its inputs and how its score is used."""

    max_query_tokens: int  # word pieces of the question
    max_tokens: int  # the whole input, [CLS] and both [SEP] included
    depth: int  # fused candidates re-scored
    rank_weight: float  # the fused rank's prior: combined = logit - rank_weight * ln(rank)
    do_lower_case: bool = True
    text_cut: str = "head"  # TEXT_CUTS

    @classmethod
    def from_json(cls, data: dict) -> RerankerInfo:
        try:
            info = cls(int(data["max_query_tokens"]), int(data["max_tokens"]), int(data["depth"]),
                       float(data["rank_weight"]), bool(data.get("do_lower_case", True)),
                       str(data.get("text_cut", "head")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"reranker_info.json lacks or mistypes {exc}") from None
        if not (1 <= info.max_query_tokens < info.max_tokens - 3 and info.max_tokens <= 512 and 1 <= info.depth <= 100
                and math.isfinite(info.rank_weight) and 0 <= info.rank_weight <= 10 and info.text_cut in TEXT_CUTS):
            raise ValueError("reranker_info.json holds values out of range "
                             f"(max_query_tokens {info.max_query_tokens}, max_tokens {info.max_tokens}, "
                             f"depth {info.depth}, rank_weight {info.rank_weight}, text_cut {info.text_cut!r}: "
                             f"one of {', '.join(TEXT_CUTS)})")
        return info


def read_info(model_dir: Path) -> RerankerInfo:
    return RerankerInfo.from_json(json.loads((Path(model_dir) / "reranker_info.json").read_text(encoding="utf-8")))


def clip_text(text: str, max_tokens: int) -> str:
    """The part of ``text`` that is tokenized (its first ``CHARS_PER_TOKEN * max_tokens``
    code points; cross_encoder.js clipText the same)."""
    return text[: CHARS_PER_TOKEN * max_tokens]


_SENTENCE_END = re.compile(r"(?<=[.!?]) +")


def focus_text(query: str, text: str, max_tokens: int) -> str:
    """What of ``text`` a reranker reading ``max_tokens`` sees when it reads the parts that
    matter to ``query``: the first line (the owner or heading path, ``chunk/__init__.py``),
    then the other lines, split into sentences, with most distinct question words
    (``lexical.tokenize``) first, ties and the rest in reading order; clipped like
    ``clip_text``. A two-layer reranker reading a section's first 64 tokens misses the
    sentence a prose question asks about (eval/RESULTS.md, "A cross-encoder reranker")."""
    from .lexical import tokenize

    lines = clip_text(text, FOCUS_READ_TOKENS).split("\n")
    units = [u for line in lines[1:] for u in _SENTENCE_END.split(line) if u.strip(" \t")]
    asked = set(tokenize(query))
    shared = [len(asked.intersection(tokenize(u))) for u in units]
    order = sorted(range(len(units)), key=lambda k: (-shared[k], k))
    return clip_text("\n".join([lines[0], *(units[k] for k in order)]), max_tokens)


def model_text(query: str, text: str, info: RerankerInfo) -> str:
    """The part of a chunk's text the model reads, by ``info.text_cut``."""
    return focus_text(query, text, info.max_tokens) if info.text_cut == "focus" else clip_text(text, info.max_tokens)


def pair_ids(query_ids: Sequence[int], text_ids: Sequence[int], *, cls: int, sep: int,
             info: RerankerInfo) -> tuple[list[int], list[int]]:
    """(input ids, token type ids) of ``[CLS] question [SEP] text [SEP]``: the question's
    first ``max_query_tokens`` pieces, the text's first pieces that fill ``max_tokens``."""
    q = list(query_ids[: info.max_query_tokens])
    t = list(text_ids[: max(0, info.max_tokens - 3 - len(q))])
    ids = [cls, *q, sep, *t, sep]
    return ids, [0] * (len(q) + 2) + [1] * (len(t) + 1)


def combined(logits: np.ndarray, rank_weight: float) -> np.ndarray:
    """The reranker's score of each candidate (in fused order, rank 1 first) plus the prior
    of its fused rank: ``logit - rank_weight * ln(rank)``, float64."""
    ranks = np.arange(1, len(logits) + 1, dtype=np.float64)
    return np.asarray(logits, dtype=np.float64) - rank_weight * np.log(ranks)


def rerank_scores(fused: dict[int, float], logits_of: Callable[[list[int]], np.ndarray],
                  info: RerankerInfo) -> dict[int, float]:
    """The fused scores with the first ``info.depth`` candidates (by -score, then index)
    reordered by ``combined`` and scored above every other candidate: each gets the best
    other score plus 1 plus its combined score's lead over the lowest (so scores still say
    the order), the rest keep theirs. ``logits_of(candidates)`` scores them."""
    if len(fused) < 2:
        return fused
    ranked = sorted(fused, key=lambda i: (-fused[i], i))
    top, rest = ranked[: info.depth], ranked[info.depth:]
    scores = combined(logits_of(top), info.rank_weight)
    floor = max((fused[i] for i in rest), default=0.0) + 1.0
    low = float(scores.min())
    out = dict(fused)
    for i, s in zip(top, scores.tolist()):
        out[i] = floor + (s - low)
    return out


class CrossEncoder:
    """The reranker of a model directory (``RERANKER_FILES``), onnxruntime + tokenizers only."""

    def __init__(self, model_dir: str | Path, *, threads: int = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        self.info = read_info(model_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        for key, value in SESSION_CONFIG.items():
            options.add_session_config_entry(key, value)
        self.session = ort.InferenceSession(str(model_dir / "reranker.onnx"), options,
                                            providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.cls, self.sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")

    def pieces(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` (already cut), no special tokens."""
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def logits(self, query: str, texts: list[str]) -> np.ndarray:
        """The model's score of (query, text) for each text, one padded batch, float32."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        q = self.pieces(clip_text(query, self.info.max_tokens))
        pairs = [pair_ids(q, self.pieces(model_text(query, t, self.info)), cls=self.cls, sep=self.sep, info=self.info)
                 for t in texts]
        width = max(len(ids) for ids, _ in pairs)
        ids = np.zeros((len(pairs), width), dtype=np.int64)
        types = np.zeros((len(pairs), width), dtype=np.int64)
        mask = np.zeros((len(pairs), width), dtype=np.int64)
        for row, (pair, kinds) in enumerate(pairs):
            ids[row, : len(pair)] = pair
            types[row, : len(kinds)] = kinds
            mask[row, : len(pair)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        (out,) = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})
        return np.asarray(out, dtype=np.float32).reshape(len(texts))


def load_reranker(index, warn: Callable[[str], None]) -> CrossEncoder | None:
    """The reranker a site publishes (``IndexReader`` or ``RemoteIndexReader``: fetched and
    cached by its sha256), checked against the manifest; None when it ships none, and None
    with one warning (the file, the hashes or the error) when it cannot be used: the caller
    keeps the fused order and nothing else changes."""
    try:
        directory = index.reranker_dir
        if directory is None:
            return None
        index.verify_reranker()
        return CrossEncoder(directory)
    except Exception as exc:  # noqa: BLE001 - a damaged or hostile file: one line, never a traceback
        lines = str(exc).strip().splitlines()
        why = lines[0] if lines else type(exc).__name__
        warn(f"{why if why.startswith('[sphinx-rag]') else '[sphinx-rag] the reranker cannot be used: ' + why[:300]}"
             "; results stay in the fused order")
        return None
