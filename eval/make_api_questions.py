"""Generate known-item questions about an API corpus from its built index.

For a deterministic sample of parameter and return-value chunks, write questions
in three styles (natural, keyword, typo) whose answer is that chunk. Used for a
second, larger corpus that sphinx-rag was never tuned on (scikit-learn's API,
see benchmarks/make_api_corpus.py). Caveat, stated in eval/RESULTS.md: the
questions are made from the chunk's own names, which favours keyword matching.

    python eval/make_api_questions.py HTML_DIR OUT.json [--n 150]
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from sphinx_rag.search.index import load_chunk_records
from sphinx_rag.search.lexical import word_parts

PARAM = re.compile(r"^Parameter (\w+) of ([\w.]+)")
RETURN = re.compile(r"^(\w+) is returned by ([\w.]+)")


def words(name: str) -> str:
    return " ".join(word_parts(name))


def typo(text: str, rng: random.Random) -> str:
    """Swap two adjacent letters inside the longest word."""
    w = max(text.split(), key=len)
    if len(w) < 5:
        return text
    i = rng.randrange(1, len(w) - 2)
    return text.replace(w, w[:i] + w[i + 1] + w[i] + w[i + 2:], 1)


def make_questions(chunks: list[dict], n: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    params = [c for c in chunks if c["kind"] == "api" and PARAM.match(c["text"])]
    returns = [c for c in chunks if c["kind"] == "api" and RETURN.match(c["text"])]
    picked = rng.sample(params, min(len(params), n * 2 // 3)) + rng.sample(returns, min(len(returns), n // 3))
    out = []
    for i, c in enumerate(picked):
        m = PARAM.match(c["text"]) or RETURN.match(c["text"])
        member, owner = m.group(1), m.group(2)
        short = owner.rsplit(".", 1)[-1]
        parent = owner.rsplit(".", 2)[-2] if owner.count(".") >= 2 else ""
        if parent[:1].isupper():  # a method: name its class too, or the question is ambiguous
            short_words = f"the {words(short)} method of {words(parent)}"
            short = f"{parent}.{short}"
        else:
            short_words = words(short)
        relevant = [{"url": c["url"], "text_contains": m.group(0)}]
        if c["text"].startswith("Parameter"):
            natural = f"What does the {words(member)} parameter of {short_words} control?"
            keyword = f"{short} {member}"
        else:
            natural = f"What does {short_words} return as {words(member)}?"
            keyword = f"{short} returns {member}"
        style = ("natural", "keyword", "typo")[i % 3]
        question = {"natural": natural, "keyword": keyword, "typo": typo(natural, rng)}[style]
        out.append({"id": f"api{i:03d}", "question": question, "style": style, "relevant": relevant})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--n", type=int, default=150)
    args = parser.parse_args()
    chunks = load_chunk_records(args.html_dir)
    questions = make_questions(chunks, args.n)
    args.out.write_text(json.dumps(questions, indent=1) + "\n")
    print(f"wrote {len(questions)} questions to {args.out}")


if __name__ == "__main__":
    main()
