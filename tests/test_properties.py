"""Property-based tests (hypothesis): random Unicode through tokenizing, chunking and BM25.

Invariants: nothing crashes; chunks stay within their token budget; Python's and the
browser's tokenizers give the same tokens (one node run per generated batch).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sphinx_rag.search.bm25 import build_index
from sphinx_rag.chunk.narrative import MAX_CHARS_PER_TOKEN, Block, pack_blocks
from sphinx_rag.model.embed import count_tokens, load_tokenizer
from sphinx_rag.search.keyword_scoring import expand_tokens, keyword_scores
from sphinx_rag.search.lexical import strip_invisible, tokenize
from sphinx_rag.model.source import resolve_model_source

REPO = Path(__file__).resolve().parent.parent

# Scripts and troublemakers: Latin with accents, Greek, Cyrillic, CJK, kana, Hangul,
# Devanagari, Arabic, combining marks, zero-width and bidi controls, emoji, whitespace.
ALPHABET = st.sampled_from(list(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,;:!?()[]{}'\"`*#/\\"
    "àéîõüçñßÆøΩμέγαЁлкаж中文字検索欠損値モデルのライブラリガ한국어검색हिन्दीمرحبا"
    "\u0301\u0308\u3099\u093f\u094d\u200b\u200c\u200d\u200e\u202e\u2066\u2069\ufeff\u00ad"
    "😀🚀👍🏽 \t\n\u00a0\u3000"))
TEXT = st.text(alphabet=ALPHABET, max_size=120)
INVISIBLE = set("\u200b\u200c\u200d\u200e\u202e\u2066\u2069\ufeff\u00ad")


@pytest.fixture(scope="module")
def count():
    tok = load_tokenizer(resolve_model_source("all-MiniLM-L6-v2"), 256)
    return lambda text: count_tokens(tok, text)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_tokens_are_clean_words(text):
    tokens = tokenize(text)
    assert all(t and not any(c.isspace() or c in INVISIBLE for c in t) for t in tokens)
    assert tokens == tokenize(strip_invisible(text))  # invisible characters never change a token


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(TEXT, min_size=1, max_size=6), st.integers(min_value=24, max_value=96))
@example(paragraphs=["0:0:0:0A02:0:0:0:0"], budget=24)  # one short word of more tokens than the room
def test_chunks_stay_within_the_budget(count, paragraphs, budget):
    texts = pack_blocks("Page > Section", [Block(p) for p in paragraphs], count, budget, overlap=8)
    room = max(16, budget - count("Page > Section"))
    for t in texts:
        body = t.split("\n", 1)[1]
        assert count(body) <= room or len(body.split()) == 1  # a single word may only be a [UNK]
        assert len(body) <= MAX_CHARS_PER_TOKEN * room
    words = [w for p in paragraphs for w in p.split()]
    if words and not any(c in "\u200b" for c in "".join(paragraphs)):
        # nothing lost: every word that fits the room is whole (a longer one, "0:0:0:0A02:0:0:0:0"
        # is 20 tokens, is cut inside, like one of 40 characters or more)
        whole = {w for w in words if len(w) < 40 and count(w) <= room}
        assert set(" ".join(t.split("\n", 1)[1] for t in texts).split()) >= whole


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=12), TEXT)
def test_bm25_scores_are_finite(documents, query):
    index = build_index([tokenize(d) for d in documents])
    tokens = tokenize(query)
    near = lambda term: [(t, index.doc_freq(t)) for t in index.vocab]  # noqa: E731
    scores = keyword_scores(index.n_docs, tokens, expand_tokens(tokens, index.postings, near))
    assert np.isfinite(scores).all()  # (BM25Okapi's floored idf may be negative in a tiny corpus)
    assert len(scores) == len(documents)


NODE_TOKENIZE = """
import { tokenize } from "./js/src/search/lexical.js";
import { readFileSync } from "node:fs";
const texts = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(texts.map((t) => tokenize(t))));
"""


@settings(max_examples=12, deadline=None)
@given(st.lists(TEXT, min_size=20, max_size=40))
def test_python_and_browser_tokens_are_equal(texts):
    node = shutil.which("node")
    assert node, "node (>= 20) is needed: see scripts/setup_and_build.sh"
    proc = subprocess.run([node, "--input-type=module", "-e", NODE_TOKENIZE], input=json.dumps(texts),
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [tokenize(t) for t in texts]


@given(st.lists(st.integers(min_value=0, max_value=2**64 - 1), max_size=50))
def test_varints_are_leb128_and_read_back(values):
    """Each value as 7-bit groups, low first, the high bit set on all but the last."""
    from sphinx_rag.search.shards import read_varints, varints

    expected = bytearray()
    for v in values:
        while v >= 0x80:
            expected.append((v & 0x7F) | 0x80)
            v >>= 7
        expected.append(v)
    assert varints(values) == bytes(expected)
    assert read_varints(varints(values), len(values))[0] == values
