"""Suggested questions for the empty search dialog, mined from the site itself.

A reader who opens the dialog and does not know what to ask sees a few questions the
docs answer well. They are made at build time from two sources, by rules (no model):

* section titles, as readers ask for them: a gerund becomes "How do I ...?"
  ("Tuning the hyper-parameters" -> "How do I tune the hyper-parameters?"), "How to X"
  becomes "How do I X?", a short noun phrase "What is X?";
* object cards (``chunk/api.py``), by their docstring's summary: one that says what the
  object is for becomes "Which class ...?" / "Which function ...?" ("Univariate imputer
  for completing missing values" -> "Which class completes missing values ...?", "X makes
  predictions ..." -> "Which class makes predictions ...?"); a class's or method's
  imperative summary becomes "How do I ...?", cut before how it is done ("Standardize
  features by removing the mean ..." -> "How do I standardize features?"); a class named
  by a short noun phrase of a technique, "What is ...?" ("Principal component analysis").
  A summary that several objects share (inherited boilerplate: "Get parameters for this
  estimator") or that names an argument (``X``, code) makes none.

Never the site's name or a listing page's title: "What is X?" is asked of a page only
when its own text says more than its title (an API page of autosummary tables, the root
page of toctrees, say nothing), and never of the root document (its title is the project's).

Only the questions whose own first result is the section or object they came from are
kept (``verified``: the search answers them), so a suggestion never leads to a poor
result. ``sphinx_rag_suggestions`` overrides or extends them. Verb forms are checked
against the site's own words: "tuning" becomes "tune" only if the docs use "tune".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

__all__ = ["Suggestion", "candidates", "title_question", "card_question", "summary_of", "verified", "choose",
           "MAX_SHOWN"]

MAX_SHOWN = 6  # questions the dialog shows
MAX_CANDIDATES = 60  # questions searched at build time at most (each is one query)
_GENERIC = {"introduction", "overview", "summary", "examples", "example", "notes", "references", "see also",
            "parameters", "returns", "attributes", "methods", "contents", "index", "api reference", "reference",
            "glossary", "changelog", "release notes", "license", "contributing", "indices and tables",
            "table of contents", "user guide", "tutorials", "tutorial", "getting started", "faq", "modules",
            "download", "gallery", "installation", "what's new", "whats new", "history", "news", "changes",
            "api", "apis", "api docs", "api documentation", "classes", "functions", "module contents",
            "submodules", "subpackages", "package contents", "documentation", "docs", "home"}
#: a page says more than its title with at least this many words of its own (a concept page)
CONCEPT_WORDS = 8
#: the root document (Sphinx's default root_doc): its title is the project's name
ROOT_DOCS = ("index",)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: nouns a summary may start with that the docs also use as verbs ("Mean squared error ...")
_NOT_VERBS = {"mean", "score", "sample", "test", "return", "get", "set", "base", "default", "data", "number"}
_CARD = re.compile(r"^(\w+) \((class|function|method|exception) in [\w.]+[;)]")
#: where an imperative summary turns from what is done to how ("... by removing the mean")
_HOW = re.compile(r"\s+(?:by|using|with|via|through|according to|based on|so that|while|when|in order to)\s+|\s*[,;(]")
#: a summary that names an argument or code ("samples in X", "the ``fit`` method") or its context
_CONTEXT = re.compile(r"(?<![\w-])(?:[B-HJ-Z]|y)(?![\w-])|`|\b(?:[Tt]his|[Tt]hese|[Ii]t)\b")
#: what a technique's name ends with ("K-Means clustering", "Principal component analysis")
_TECHNIQUE = re.compile(r"(?:ing|sis|tion|sion|ment)$")


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


def _is_verb(word: str, words: set[str]) -> bool:
    """Whether the site also writes ``word`` as a verb: its -ing or -ed form ("compute":
    "computing", "fit": "fitting"), or a verb's ending ("standardize", "simplify"; "-ise"
    only when the site writes the word in lower case: "noise", "precise"); not a noun
    ("Probability estimates")."""
    verb = word.lower()
    if verb in _NOT_VERBS or not verb.isalpha():
        return False
    stem = verb[:-1] if verb.endswith("e") else verb
    doubled = verb + verb[-1] if re.search(r"[^aeiou][aeiou][bdgmnprt]$", verb) else verb
    if any(form in words for form in (stem + "ing", doubled + "ing", stem + "ed", doubled + "ed")):
        return True
    return len(verb) > 5 and (verb.endswith(("ize", "ify")) or (verb.endswith("ise") and "=" + verb in words))


def summary_of(card_text: str) -> str:
    """The first sentence of an object card's docstring summary ('' if none)."""
    lines = card_text.split("\n")
    return re.split(r"(?<=\.)\s", lines[1].strip(), maxsplit=1)[0].rstrip(".") if len(lines) > 1 else ""


def card_question(card_text: str, words: set[str], shared: frozenset[str] = frozenset()) -> str | None:
    """The question an object card's summary answers, or None: "Which class ...?",
    "Which function ...?", "How do I ...?" or "What is ...?" (see the module's docstring).
    ``shared``: summaries (lower case) that several objects have."""
    match = _CARD.match(card_text)
    summary = summary_of(card_text)
    if not match or not summary or summary.lower() in shared:
        return None
    name, kind = match.group(1), match.group(2)
    if kind == "exception" or not re.fullmatch(r"[A-Za-z0-9 ,'()/-]+", summary) or _CONTEXT.search(summary):
        return None
    tokens = summary.split()
    if not 2 <= len(tokens) <= 14:
        return None
    purpose = re.search(r"\bfor (\w+ing)\b (.+)$", summary)
    if purpose and kind != "method":
        base = _base_form(purpose.group(1), words)
        return f"Which {kind} {_third_person(base)} {purpose.group(2)}?" if base else None
    first, rest = tokens[0], " ".join(tokens[1:])
    if kind == "class" and first.lower() == name.lower() and len(tokens) > 2 and tokens[1].endswith("s") \
            and _is_verb(tokens[1][:-1], words):  # "DummyClassifier makes predictions ..."
        return f"Which class {' '.join(tokens[1:])}?"
    if first[:1].isupper() and _is_verb(first, words):
        if kind == "function":
            return f"Which function {_third_person(first.lower())} {rest}?"
        what = _HOW.split(summary, maxsplit=1)[0].split()  # what is done, not how
        if 2 <= len(what) <= 9:
            return f"How do I {first.lower()} {_lower_first(' '.join(what[1:]), words)}?"
        return None
    noun = re.sub(r"\s*\([^)]*\)", "", summary).strip()  # "Principal component analysis (PCA)"
    if kind == "class" and 2 <= len(noun.split()) <= 4 and _TECHNIQUE.search(noun) and " of " not in noun:
        return f"What is {_lower_first(noun, words)}?"
    return None


def candidates(records: list[dict]) -> list[Suggestion]:
    """Every question the rules make, in index order, one per section or object (its first
    chunk): objects' cards; user-guide sections down to the second heading level (the
    first: "What is X?" too); an example's title (its inner steps need their context)."""
    words = _words(r["text"] for r in records)
    counts = Counter(summary_of(r["text"]).lower() for r in records
                     if r["kind"] == "api" and r["url"] not in {None, ""} and _CARD.match(r["text"]))
    shared = frozenset(s for s, n in counts.items() if n > 1)
    said = Counter()  # words of each page's own text beyond its title
    for r in records:
        said[r["url"].split("#", 1)[0]] += max(0, len(r["text"].split()) - len(" ".join(r.get("headings") or []).split()))
    out, seen_urls, seen_questions = [], set(), set()
    for r in records:
        if r["url"] in seen_urls:
            continue
        seen_urls.add(r["url"])
        headings = [h for h in r.get("headings") or [] if h]
        page = r["url"].split("#", 1)[0]
        if r["kind"] == "api":  # a method's question after the classes' and functions' (choose)
            question = card_question(r["text"], words, shared)
            source = "method" if (_CARD.match(r["text"]) or [None] * 3)[2] == "method" else "api"
        elif headings and len(headings) <= (1 if r["kind"] == "example" else 2):
            concept = len(headings) == 1 and said[page] >= CONCEPT_WORDS and r.get("doc") not in ROOT_DOCS
            question = title_question(headings[-1], words, concept=concept)
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
               [s for s in pool if s.source in ("api", "method") and not s.question.startswith("What")],
               [s for s in pool if s.source == "example"],
               [s for s in pool if s.source in ("section", "api") and s.question.startswith("What")]]
    buckets[1].sort(key=lambda s: s.source == "method")  # an object's own question before its methods
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
