"""Suggested questions for the empty search dialog, mined from the site itself.

A reader who opens the dialog and does not know what to ask sees a few questions the
docs answer well. They are made at build time from two sources, by rules (no model):

* section titles, as readers ask for them: a gerund becomes "How do I ...?"
  ("Tuning the hyper-parameters" -> "How do I tune the hyper-parameters?"), "How to X"
  becomes "How do I X?", a short noun phrase "What is X?";
* object cards (``chunk/api.py``), by purpose: a summary that says what the object is
  for becomes "Which class ...?" / "Which function ...?" ("Univariate imputer for
  completing missing values" -> "Which class completes missing values ...?").

Only the questions whose own first result is the section or object they came from are
kept (``verified``: the search answers them), so a suggestion never leads to a poor
result. ``sphinx_rag_suggestions`` overrides or extends them. Verb forms are checked
against the site's own words: "tuning" becomes "tune" only if the docs use "tune".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Suggestion", "candidates", "title_question", "card_question", "verified", "choose", "MAX_SHOWN"]

MAX_SHOWN = 6  # questions the dialog shows
MAX_CANDIDATES = 60  # questions searched at build time at most (each is one query)
_GENERIC = {"introduction", "overview", "summary", "examples", "example", "notes", "references", "see also",
            "parameters", "returns", "attributes", "methods", "contents", "index", "api reference", "reference",
            "glossary", "changelog", "release notes", "license", "contributing", "indices and tables",
            "table of contents", "user guide", "tutorials", "tutorial", "getting started", "faq", "modules",
            "download", "gallery", "installation", "what's new", "whats new", "history", "news", "changes"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: nouns a summary may start with that the docs also use as verbs ("Mean squared error ...")
_NOT_VERBS = {"mean", "score", "sample", "test", "return", "get", "set", "base", "default", "data", "number"}
_CARD = re.compile(r"^(\w+) \((class|function|method|exception) in [\w.]+[;)]")


@dataclass(frozen=True)
class Suggestion:
    question: str
    url: str  # where its answer is (the section or the object), for verification
    source: str  # "section" | "api"


def _words(texts) -> set[str]:
    """The site's words, lower-cased, plus each word seen written in lower case as ``=word``."""
    out = set()
    for t in texts:
        for w in _WORD.findall(t):
            out.add(w.lower())
            if w.islower():
                out.add("=" + w)
    return out


def _base_form(gerund: str, words: set[str]) -> str | None:
    """'tuning' -> 'tune', 'running' -> 'run', 'installing' -> 'install', if the site uses that word."""
    stem = gerund.lower()[:-3]
    forms = (stem + "e", stem) if len(stem) <= 2 else (stem, stem + "e")  # "using": "use", not "us"
    for candidate in (*forms, stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else None):
        if candidate and len(candidate) > 1 and candidate in words:
            return candidate
    return None


def _third_person(verb: str) -> str:
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _lower_first(text: str, words: set[str] = frozenset()) -> str:
    """A title's words as a question's: the first lower-cased unless it is an acronym or a
    name with capitals inside (NumPy); a Title Case word that the docs also write in lower
    case ("Linear Models") lower-cased too."""
    first = text.split(" ", 1)[0]
    out = text if first.isupper() or any(c.isupper() for c in first[1:]) else text[:1].lower() + text[1:]
    return " ".join(w.lower() if i and w[:1].isupper() and w[1:].islower() and "=" + w.lower() in words else w
                    for i, w in enumerate(out.split(" ")))


def title_question(title: str, words: set[str], concept: bool = False) -> str | None:
    """The question a reader would ask to find a section with this title, or None.
    ``concept``: the title names a whole page's subject ("What is X?" is asked of those only)."""
    title = re.sub(r"\s+", " ", title).strip().rstrip(".:!")
    if not title or title.lower() in _GENERIC or len(title) > 70:
        return None
    if ":" in title:  # "Cross-validation: evaluating estimator performance": the part that reads as a task
        head, tail = (part.strip() for part in title.split(":", 1))
        return title_question(tail, words, concept) or title_question(head, words, concept)
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9 ,'()-]*", title):  # code, symbols, dotted names
        return None
    tokens = title.split(" ")
    if title.endswith("?"):
        return title
    if tokens[0].lower() == "how" and len(tokens) > 2 and tokens[1].lower() == "to":
        return f"How do I {_lower_first(' '.join(tokens[2:]), words)}?"
    if tokens[0].lower().endswith("ing") and len(tokens) >= 2:
        base = _base_form(tokens[0], words)
        if base and tokens[1].lower() not in ("and", "or", "of", "with", "in", "for"):  # not a noun ("Preprocessing and ...")
            return f"How do I {base} {_lower_first(' '.join(tokens[1:]), words)}?"
        return None
    if concept and len(tokens) <= 5 and tokens[0].lower() not in ("the", "a", "an", "on", "about", "more", "other",
                                                                   "welcome", "introducing"):
        head = re.split(r" (?:of|in|for|with|to|on|and|as) ", title)[0].split(" ")[-1]  # "tasks" of "tasks with celery"
        plural = re.search(r"[^su]s$", head) is not None
        return f"What {'are' if plural else 'is'} {_lower_first(title, words)}?"
    return None


def card_question(card_text: str, words: set[str]) -> str | None:
    """'Which class ...?' from an object card whose summary says what the object is for."""
    match = _CARD.match(card_text)
    lines = card_text.split("\n")
    if not match or len(lines) < 2:
        return None
    kind = match.group(2)
    if kind not in ("class", "function"):  # methods are too many and too alike ("Which method fits ...?")
        return None
    summary = re.split(r"(?<=\.)\s", lines[1].strip(), maxsplit=1)[0].rstrip(".")
    if not 3 <= len(summary.split()) <= 14 or not re.fullmatch(r"[A-Za-z0-9 ,'()/-]+", summary):
        return None
    purpose = re.search(r"\bfor (\w+ing)\b (.+)$", summary)
    if purpose:
        base = _base_form(purpose.group(1), words)
        return f"Which {kind} {_third_person(base)} {purpose.group(2)}?" if base else None
    first, _, rest = summary.partition(" ")
    verb = first.lower()
    # an imperative summary ("Compute the ..."): the docs also use the word as a verb ("computing")
    gerund = (verb[:-1] if verb.endswith("e") else verb) + "ing"
    if kind == "function" and rest and first[:1].isupper() and gerund in words and verb not in _NOT_VERBS:
        return f"Which {kind} {_third_person(verb)} {rest}?"
    return None


def candidates(records: list[dict]) -> list[Suggestion]:
    """Every question the rules make, in index order, one per section or object (its first
    chunk): objects' cards; user-guide sections down to the second heading level (the
    first: "What is X?" too); an example's title (its inner steps need their context)."""
    words = _words(r["text"] for r in records)
    out, seen_urls, seen_questions = [], set(), set()
    for r in records:
        if r["url"] in seen_urls:
            continue
        seen_urls.add(r["url"])
        headings = [h for h in r.get("headings") or [] if h]
        if r["kind"] == "api":
            question, source = card_question(r["text"], words), "api"
        elif headings and len(headings) <= (1 if r["kind"] == "example" else 2):
            question = title_question(headings[-1], words, concept=len(headings) == 1)
            source = "example" if r["kind"] == "example" else "section"
        else:
            question = None
        if question and question.lower() not in seen_questions:
            seen_questions.add(question.lower())
            out.append(Suggestion(question, r["url"], source))
    return out


def verified(searcher, suggestions: list[Suggestion]) -> list[Suggestion]:
    """The suggestions whose first result is the section or object they came from."""
    out = []
    for s in suggestions:
        results = searcher.search(s.question, k=1)
        if results and (results[0].url == s.url or s.url in results[0].also):
            out.append(s)
    return out


def choose(records: list[dict], searcher, limit: int = MAX_SHOWN) -> list[Suggestion]:
    """Up to ``limit`` verified questions from different pages, taken in turn from the
    user guide's how-to questions, the objects' which-questions, the examples and the
    guide's what-is questions, so that the list shows the site's range."""
    pool = candidates(records)
    buckets = [[s for s in pool if s.source == "section" and s.question.startswith("How")],
               [s for s in pool if s.source == "api"],
               [s for s in pool if s.source == "example"],
               [s for s in pool if s.source == "section" and not s.question.startswith("How")]]
    order = [b[i] for i in range(max(map(len, buckets), default=0)) for b in buckets if i < len(b)]
    picked, pages, tried = [], set(), 0
    for s in order:
        page = s.url.split("#", 1)[0]
        if page in pages or page.startswith(("genindex", "search", "py-modindex")):
            continue
        if tried >= MAX_CANDIDATES or len(picked) >= limit:
            break
        tried += 1
        if verified(searcher, [s]):
            picked.append(s)
            pages.add(page)
    return picked
