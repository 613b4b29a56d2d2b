"""Suggested questions for the empty search dialog, mined from the site itself.

A reader who opens the dialog and does not know what to ask sees a few questions the
docs answer well. They are made at build time from two sources, by rules (no model):

* section titles, as readers ask for them: a gerund becomes "How do I ...?"
  ("Tuning the hyper-parameters" -> "How do I tune the hyper-parameters?"), "How to X"
  becomes "How do I X?", so does a how-to page's imperative title ("Deploy workers with
  systemd"), a page's short noun phrase "What is X?" / "What are X?" (agreeing with its
  head noun: "Task queues", "Imputation of missing values"); a title that already is a
  phrase of another kind makes none (a clause: "How ranking works", "What the browser
  does"; a listing: "Formats by plugin"; a gerund that modifies a noun: "a coding agent");
* object cards (``chunk/api.py``), by their docstring's summary: one that says what the
  object is for becomes "Which class ...?" / "Which function ...?" ("Univariate imputer
  for completing missing values" -> "Which class completes missing values ...?", "X makes
  predictions ..." -> "Which class makes predictions ...?"); a function's imperative
  summary "Which function ...?" ("Return the distance ..." -> "Which function returns
  the distance ...?"); a class's or method's
  imperative summary becomes "How do I ...?", cut before how it is done ("Standardize
  features by removing the mean ..." -> "How do I standardize features?"); a class named
  by a short noun phrase of a technique, "What is ...?" ("Principal component analysis").
  A summary that several objects share (inherited boilerplate: "Get parameters for this
  estimator") or that names an argument (``X``, code) makes none.

Never the site's name or a listing page's title: "What is X?" is asked of a page only
when its own text says more than its title (an API page of autosummary tables, the root
page of toctrees, say nothing), and never of the root document (its title is the project's).
Nothing is asked of the project's own housekeeping (``housekeeping``: changelog, license,
contributing, development, release notes, working on the project itself).

Up to ``MAX_SHOWN`` are chosen (``choose``), from different pages, not two that open
alike ("Which function writes ..."); a site with fewer than ``MIN_SHOWN`` fills up with
those that waited, then with plainer questions of its objects (``card_fallback_question``:
"A location in the plane" -> "Which class represents a location in the plane?").

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
MIN_SHOWN = 3  # questions a site with that many pages or objects gets at least (fallbacks fill up to it)
MAX_CANDIDATES = 60  # questions searched at build time at most (each is one query)
_GENERIC = {"introduction", "overview", "summary", "examples", "example", "notes", "references", "see also",
            "parameters", "returns", "attributes", "methods", "contents", "index", "api reference", "reference",
            "glossary", "changelog", "release notes", "license", "contributing", "indices and tables",
            "table of contents", "user guide", "tutorials", "tutorial", "getting started", "faq", "modules",
            "download", "gallery", "installation", "what's new", "whats new", "history", "news", "changes",
            "api", "apis", "api docs", "api documentation", "classes", "functions", "module contents",
            "submodules", "subpackages", "package contents", "documentation", "docs", "home",
            # a one-word page title a reader does not ask "What is ...?" of
            "architecture", "configuration", "benchmarks", "usage", "design", "internals", "concepts", "basics",
            "deployment", "performance", "troubleshooting", "advanced", "advanced usage", "quickstart",
            "quick start", "setup", "requirements", "dependencies", "about", "background", "motivation",
            "explanation", "explanations", "how-to guides", "how-to", "guides", "topics", "features", "usage guide",
            "development", "testing", "support", "help", "resources", "miscellaneous", "misc", "other",
            "frequently asked questions", "questions and answers", "q&a"}
#: a page says more than its title with at least this many words of its own (a concept page)
CONCEPT_WORDS = 8
#: the project's own housekeeping, by a part of the docname ("development/index",
#: "release_notes") or the page's title ("Contributing to imageio"): pages a reader of the
#: docs does not come to ask about
HOUSEKEEPING_DOCS = re.compile(
    r"\b(?:change ?logs?|changes|history|news|release ?notes?|releases?|release ?process|what ?s ?new|whatsnew|"
    r"licen[cs]es?|licensing|copying|contribut\w*|development|developers?|dev|dev ?guide|devguide|"
    r"code ?of ?conduct|conduct|authors?|credits|citing|citation|governance|roadmap|maintainers?|maintaining|"
    r"funding|sponsors?|acknowledge?ments?)\b", re.IGNORECASE)
HOUSEKEEPING_TITLES = re.compile(
    r"\b(?:change ?log|release notes?|what'?s new|licen[cs]e|contribut\w*|code of conduct|"
    r"developers?'? (?:guide|documentation|docs|notes)|developing \S+$|authors|credits|citing|governance|"
    r"roadmap|acknowledge?ments?|maintainers?'? guide|release process|making a release)\b", re.IGNORECASE)
#: a docname part of a how-to page (an imperative title there asks "How do I ...?")
HOW_TO_DOCS = re.compile(r"(?:^|/)(?:how[ _-]?to|howtos?|recipes?|cookbook)[^/]*(?:/|$)", re.IGNORECASE)
#: what "A ..." titles end with that name no concept ("A quick tour", "A short introduction")
_TOUR = frozenset("tour introduction overview guide look note example primer walkthrough start".split())
#: a title that already is a phrase of another kind: a clause ("How pages become chunks",
#: "What the browser does", "Why it is fast"), which "What is ...?" would garble
_CLAUSE = re.compile(r"^(?:how|what|why|when|where|which|who|whom|whose|whether|if)\b(?! to\b)", re.IGNORECASE)
#: words a noun phrase's head stops before ("Imputation of missing values": "Imputation")
_PREPOSITION = re.compile(r" (?:of|in|for|with|to|on|as|by|per|from|at|into|over|under|between|across|via|"
                          r"without|within|about|against|through|using) ")
#: words before a gerund that make it a noun's modifier ("a coding agent", "the missing values")
_DETERMINERS = frozenset("a an the this that these those my your our their its his her each every any some no "
                         "other another many few several all both".split())
#: words after a gerund that make it a verb with an object ("Tuning the hyper-parameters")
_OBJECT_STARTS = frozenset("a an the this that these those my your our their its each every any some all "
                           "multiple several new existing custom".split())
#: the root document (Sphinx's default root_doc): its title is the project's name
ROOT_DOCS = ("index",)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: nouns a summary may start with that the docs also use as verbs ("Mean squared error ...")
_NOT_VERBS = {"mean", "score", "sample", "test", "return", "get", "set", "base", "default", "data", "number"}
#: words that are never the verb of an imperative title ("The browser client": "thing" is
#: no -ing form of "the")
_FUNCTION_WORDS = frozenset("the a an this that these those some any all each every other more most few many no not "
                            "and or but if then when in on at by for with of to from as into over under about what "
                            "how why which who your our their its my his her without within across after before "
                            "between through during using via per one two three four five".split())
_CARD = re.compile(r"^(\w+) \((class|function|method|exception) in [\w.]+[;)]")
#: where an imperative summary turns from what is done to how ("... by removing the mean")
_HOW = re.compile(r"\s+(?:by|using|with|via|through|according to|based on|so that|while|when|in order to)\s+|\s*[,;(]")
#: a summary that names an argument or code ("samples in X", "the ``fit`` method") or its context
_CONTEXT = re.compile(r"(?<![\w-])(?:[B-HJ-Z]|y)(?![\w-])|`|\b(?:[Tt]his|[Tt]hese|[Ii]t)\b")
#: where a function's summary turns from what it gives to how (", by the shoelace formula")
_HOW_CUT = re.compile(r"\s*[,;(]\s*|\s+(?:using|via|through|according to|based on)\s+")
#: what a technique's name ends with ("K-Means clustering", "Principal component analysis")
_TECHNIQUE = re.compile(r"(?:ing|sis|tion|sion|ment)$")


@dataclass(frozen=True)
class Suggestion:
    question: str
    url: str  # where its answer is (the section or the object), for verification
    source: str  # "section" | "api"


def _words(texts) -> set[str]:
    """The site's words, lower-cased, plus each word seen written in lower case as ``=word``,
    each capitalized in the middle of a sentence as ``^word`` (part of a name: "on Read the
    Docs") and each "-ing word + word" seen after a determiner as ``~gerund word`` (its last
    "s" dropped: "a coding agent" gives ``~coding agent``, the gerund there a noun's modifier)."""
    out = set()
    for t in texts:
        out.update("^" + w.lower() for w in _MID_SENTENCE_CAPITAL.findall(t))
        found = _WORD.findall(t)
        for i, w in enumerate(found):
            out.add(w.lower())
            if w.islower():
                out.add("=" + w)
            if (w.lower().endswith("ing") and 0 < i < len(found) - 1 and found[i - 1].lower() in _DETERMINERS):
                out.add(f"~{w.lower()} {_singular(found[i + 1].lower())}")
    return out


#: a capitalized word after a lower-case one: part of a name ("on Read the Docs")
_MID_SENTENCE_CAPITAL = re.compile(r"(?<=[a-z] )([A-Z][a-z]+)\b")


def _singular(word: str) -> str:
    return word[:-1] if re.search(r"[^sui]s$", word) else word


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
    name = (first.isupper() and first not in ("A", "I")) or any(c.isupper() for c in first[1:])  # NumPy, CSV
    out = text if name else text[:1].lower() + text[1:]
    return " ".join(w.lower() if i and w[:1].isupper() and w[1:].islower() and "=" + w.lower() in words else w
                    for i, w in enumerate(out.split(" ")))


def title_question(title: str, words: set[str], concept: bool = False, how_to: bool = False) -> str | None:
    """The question a reader would ask to find a section with this title, or None.
    ``concept``: the title names a whole page's subject ("What is X?" is asked of those only);
    ``how_to``: the page is a how-to guide (an imperative title, "Run a server", is a task)."""
    title = re.sub(r"\s+", " ", title).strip().rstrip(".:!")
    if not title or title.lower() in _GENERIC or len(title) > 70:
        return None
    if ":" in title:  # "Cross-validation: evaluating estimator performance": the part that reads as a task,
        head, tail = (part.strip() for part in title.split(":", 1))  # else the name ("A golden set: ...")
        task, name = title_question(tail, words, concept, how_to), title_question(head, words, concept, how_to)
        return task if task and task.startswith("How") else name or task
    if title.endswith("?"):
        return title if re.fullmatch(r"[A-Z][A-Za-z0-9 ,'()-]*\?", title) else None
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9 ,'()-]*", title):  # code, symbols, dotted names
        return None
    tokens = title.split(" ")
    if tokens[0].lower() == "how" and len(tokens) > 2 and tokens[1].lower() == "to":
        return f"How do I {_as_mine(_lower_first(' '.join(tokens[2:]), words))}?"
    if _CLAUSE.match(title):  # already a clause: "How ranking works" is no noun to ask "What is" of
        return None
    if tokens[0].lower().endswith("ing") and len(tokens) >= 2:
        base = _base_form(tokens[0], words)
        second = tokens[1].lower()
        if (base and second not in ("and", "or", "of", "with", "in", "for", "by", "to")  # not a noun ("Preprocessing and ...")
                and (second in _OBJECT_STARTS or f"~{tokens[0].lower()} {_singular(second)}" not in words)):
            return f"How do I {base} {_as_mine(_lower_first(' '.join(tokens[1:]), words))}?"  # not "a coding agent"
        if not concept or tokens[1].lower() in _OBJECT_STARTS or tokens[1][:1].isupper():
            return None  # a verb of unknown base form ("Freezing ImageIO"); else a noun phrase ("Coding
            # agents", "Missing values"), which a page's title may ask what it is of
    if how_to:  # a how-to page: tasks ("Run a server"), not concepts
        named = "^" + tokens[0].lower() in words and any(t[:1].isupper() for t in tokens[1:3])  # "Read the Docs"
        if (_imperative(tokens, words) and not named
                and not re.search(r"\b(?:it|its|this|these|them|they|that)\b", title, re.IGNORECASE)):
            return f"How do I {_as_mine(_lower_first(title, words))}?"
        return None
    article = tokens[0].lower() in ("a", "an") and len(tokens) >= 3 and tokens[-1].lower() not in _TOUR
    if concept and len(tokens) <= 5 and (article or tokens[0].lower() not in (
            "the", "a", "an", "on", "about", "more", "other", "welcome", "introducing")):
        if re.search(r" (?:by|per|versus|vs) ", title):  # a listing: "Formats by plugin"
            return None
        if _is_verb(tokens[0], words) and len(tokens) >= 2 and tokens[1].lower() not in _PREPOSITIONS:
            return None  # a task ("Deploy workers with systemd"), not a thing
        phrase = _PREPOSITION.split(f" {title} ".replace(",", " ,"), maxsplit=1)[0].strip()  # "tasks" of "tasks with celery"
        if "," in title:  # a list ("themes, builders, headers"), not the name of one thing
            return None
        if " and " in f" {phrase} ":  # "Imputation and scaling"
            plural = True
        else:
            plural = re.search(r"[^sui]s$", phrase.split(" ")[-1]) is not None
        return f"What {'are' if plural else 'is'} {_lower_first(title, words)}?"
    return None


#: endings of nouns and adjectives, never of an imperative's verb ("Files", "Faster", "Settings")
_NOT_IMPERATIVE = re.compile(r"(?:s|ing|ed|ly|er|est|tion|sion|ment|ness|ity|ance|ence|ics|al|ous|ive|ful)$")
#: verbs of _NOT_VERBS that open a function's summary as verbs ("Return the distance ...")
_RETURNING = frozenset({"return", "get"})
#: words after a verb's first word that make it a noun ("Area of a polygon")
_PREPOSITIONS = frozenset("of for in to by with on at from as into about".split())


def _imperative(tokens: list[str], words: set[str]) -> bool:
    """Whether ``tokens`` open with an imperative, in a place written as tasks (a how-to
    page's title, a function's summary): a verb the site writes as one (``_is_verb``), or a
    plain word that is none of a noun's or adjective's forms, not followed by a
    preposition ("Deploy workers", "Load polygons"; not "Area of ...", "Files at ...")."""
    first, second = tokens[0], tokens[1].lower() if len(tokens) > 1 else ""
    if not second or second in _PREPOSITIONS | {"and", "or"}:
        return False
    if _is_verb(first, words):
        return True
    word = first.lower()
    return (first.isalpha() and first[1:].islower() and len(word) >= 3 and word not in _FUNCTION_WORDS
            and word not in _NOT_VERBS - _RETURNING and not _NOT_IMPERATIVE.search(word)
            and (second in _OBJECT_STARTS or re.search(r"[^sui]s$", second) is not None))  # its object follows


def _as_mine(text: str) -> str:
    """A task as the reader asks it: "your machine" -> "my machine"."""
    return re.sub(r"\byour(self)?\b", lambda m: "myself" if m.group(1) else "my", text)


def _is_verb(word: str, words: set[str]) -> bool:
    """Whether the site also writes ``word`` as a verb: its -ing or -ed form ("compute":
    "computing", "fit": "fitting"), or a verb's ending ("standardize", "simplify"; "-ise"
    only when the site writes the word in lower case: "noise", "precise"); not a noun
    ("Probability estimates")."""
    verb = word.lower()
    if (verb in _NOT_VERBS or verb in _FUNCTION_WORDS or not verb.isalpha() or len(verb) < 3
            or (word.isupper() and len(word) > 1)):  # an acronym ("SPE": no "speed" of it)
        return False
    stem = verb[:-1] if verb.endswith("e") and len(verb) > 3 else verb
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
    if kind == "function" and first[:1].isupper() and _imperative(tokens, words):  # "Return the distance ..."
        verb = first.lower() if first.lower().endswith("s") and not first.lower().endswith("ss") else _third_person(
            first.lower())
        what = _HOW_CUT.split(rest, maxsplit=1)[0]
        return f"Which function {verb} {_lower_first(what, words)}?" if len(what.split()) >= 2 else None
    if first[:1].isupper() and _is_verb(first, words):
        what = _HOW.split(summary, maxsplit=1)[0].split()  # what is done, not how
        if 2 <= len(what) <= 9:
            return f"How do I {first.lower()} {_lower_first(' '.join(what[1:]), words)}?"
        return None
    noun = re.sub(r"\s*\([^)]*\)", "", summary).strip()  # "Principal component analysis (PCA)"
    if kind == "class" and 2 <= len(noun.split()) <= 4 and _TECHNIQUE.search(noun) and " of " not in noun:
        return f"What is {_lower_first(noun, words)}?"
    return None


def card_fallback_question(card_text: str, words: set[str], shared: frozenset[str] = frozenset()) -> str | None:
    """A plainer question of an object card, asked only when the rules give a site fewer
    than ``MIN_SHOWN`` (``choose``): a class whose summary names what it is ("A location in
    the plane" -> "Which class represents a location in the plane?"), a function whose
    summary names what it gives ("Area of a simple polygon" -> "Which function gives the
    area of a simple polygon?")."""
    match = _CARD.match(card_text)
    summary = summary_of(card_text)
    if not match or not summary or summary.lower() in shared or match.group(2) not in ("class", "function"):
        return None
    if not re.fullmatch(r"[A-Za-z0-9 ,'()/-]+", summary) or _CONTEXT.search(summary):
        return None
    phrase = _HOW_CUT.split(summary, maxsplit=1)[0]
    tokens = phrase.split()
    if not 2 <= len(tokens) <= 12 or re.search(r"\b(?:class|object|that|which|who|base|mixin)\b", phrase, re.I):
        return None
    if match.group(2) == "class" and tokens[0] in ("A", "An", "The"):
        return f"Which class represents {_lower_first(phrase, words)}?"
    if match.group(2) == "function" and len(tokens) >= 3 and tokens[1] == "of":
        return f"Which function gives the {_lower_first(phrase, words)}?"
    return None


def housekeeping(doc: str, title: str, project: str = "") -> bool:
    """Whether a page or section is the project's own housekeeping (changelog, license,
    contributing, development, release notes, working on ``project`` itself, ...): no
    question is asked of it."""
    parts = [re.sub(r"[_-]+", " ", part) for part in doc.split("/")]
    if any(HOUSEKEEPING_DOCS.search(part) for part in parts) or HOUSEKEEPING_TITLES.search(title):
        return True
    return bool(project) and re.match(rf"(?:working on|hacking on|developing|maintaining|releasing|building) "
                                      rf"{re.escape(project)}\b", title, re.IGNORECASE) is not None


def candidates(records: list[dict]) -> list[Suggestion]:
    """Every question the rules make, in index order, one per section or object (its first
    chunk): objects' cards; user-guide sections down to the second heading level (the
    first: "What is X?" too); an example's title (its inner steps need their context).
    None of a housekeeping page (``housekeeping``)."""
    words = _words(r["text"] for r in records)
    page_titles: dict[str, str] = {}
    project = ""  # the root page's title: the project's name
    for r in records:
        page_titles.setdefault(r["url"].split("#", 1)[0], next((h for h in r.get("headings") or [] if h), ""))
        if r.get("doc") in ROOT_DOCS and not project:
            project = next((h for h in r.get("headings") or [] if h), "")
    counts = Counter(summary_of(r["text"]).lower() for r in records
                     if r["kind"] == "api" and r["url"] not in {None, ""} and _CARD.match(r["text"]))
    shared = frozenset(s for s, n in counts.items() if n > 1)
    said = Counter()  # words of each page's own text beyond its title
    for r in records:
        said[r["url"].split("#", 1)[0]] += max(0, len(r["text"].split()) - len(" ".join(r.get("headings") or []).split()))
    out, seen_urls, seen_pages, seen_questions = [], set(), set(), set()

    def add(question: str | None, url: str, source: str):
        if question and question.lower() not in seen_questions:
            seen_questions.add(question.lower())
            out.append(Suggestion(question, url, source))

    for r in records:
        if r["url"] in seen_urls:
            continue
        seen_urls.add(r["url"])
        headings = [h for h in r.get("headings") or [] if h]
        page = r["url"].split("#", 1)[0]
        doc = r.get("doc") or page
        if housekeeping(doc, page_titles.get(page, ""), project) or (headings and housekeeping("", headings[-1], project)):
            continue
        how_to = bool(HOW_TO_DOCS.search(doc))
        if page not in seen_pages and len(headings) >= 2 and r["kind"] != "api" and r.get("doc") not in ROOT_DOCS:
            # a page whose text starts in a section: its title still names it (the page's URL)
            add(title_question(headings[0], words, concept=said[page] >= CONCEPT_WORDS, how_to=how_to), page, "section")
        seen_pages.add(page)
        if r["kind"] == "api":  # a method's question after the classes' and functions' (choose)
            add(card_question(r["text"], words, shared),
                r["url"], "method" if (_CARD.match(r["text"]) or [None] * 3)[2] == "method" else "api")
            add(card_fallback_question(r["text"], words, shared), r["url"], "fallback")
        elif headings and len(headings) <= (1 if r["kind"] == "example" else 2):
            concept = len(headings) == 1 and said[page] >= CONCEPT_WORDS and r.get("doc") not in ROOT_DOCS
            add(title_question(headings[-1], words, concept=concept, how_to=how_to), r["url"],
                "example" if r["kind"] == "example" else "section")
    return out


def verified(searcher, suggestions: list[Suggestion]) -> list[Suggestion]:
    """The suggestions whose first result is the section or object they came from (a
    page's title's: any part of that page)."""
    out = []
    for s in suggestions:
        results = searcher.search(s.question, k=1)
        if results and (results[0].url == s.url or s.url in results[0].also
                        or ("#" not in s.url and results[0].url.split("#", 1)[0] == s.url)):
            out.append(s)
    return out


def _opening(question: str) -> str:
    """What a question asks, as far as its verb: "which function writes", "how do i retry"."""
    words = question.lower().rstrip("?").split()
    fixed = 3 if words[:3] == ["how", "do", "i"] else 2
    return " ".join(words[:fixed + 1])


def choose(records: list[dict], searcher, limit: int = MAX_SHOWN) -> list[Suggestion]:
    """Up to ``limit`` verified questions from different pages, taken in turn from the
    user guide's how-to questions, the objects' which-questions, the examples and the
    guide's what-is questions, so that the list shows the site's range: a question that
    opens as one already taken ("Which function writes ...") waits. Fewer than
    ``MIN_SHOWN``: those that waited, then the plainer fallback questions, fill up (from
    pages already asked about too: an API site may be one page)."""
    pool = candidates(records)
    buckets = [[s for s in pool if s.source == "section" and not s.question.startswith("What")],
               [s for s in pool if s.source in ("api", "method") and not s.question.startswith("What")],
               [s for s in pool if s.source == "example"],
               [s for s in pool if s.source in ("section", "api") and s.question.startswith("What")]]
    buckets[1].sort(key=lambda s: s.source == "method")  # an object's own question before its methods
    order = [b[i] for i in range(max(map(len, buckets), default=0)) for b in buckets if i < len(b)]
    picked, pages, openings, waiting = [], set(), set(), []
    tried = 0

    def take(s: Suggestion, spread: bool) -> None:
        nonlocal tried
        page = s.url.split("#", 1)[0]
        if (page in pages if spread else s.url in {p.url for p in picked}) or tried >= MAX_CANDIDATES \
                or page.startswith(("genindex", "search", "py-modindex")):
            return
        if spread and _opening(s.question) in openings:
            waiting.append(s)
            return
        tried += 1
        if verified(searcher, [s]):
            picked.append(s)
            pages.add(page)
            openings.add(_opening(s.question))

    for s in order:
        if len(picked) >= limit:
            break
        take(s, spread=True)
    for s in waiting + [s for s in pool if s.source == "fallback"]:
        if len(picked) >= min(limit, MIN_SHOWN):
            break
        take(s, spread=False)
    return picked
