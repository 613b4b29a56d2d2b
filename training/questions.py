"""Questions from the structure of sphinx-rag's chunks, in the styles readers use.

A chunk's text says what it is (``sphinx_rag/chunk/api.py``): an object card ("SimpleImputer
(class in sklearn.impute; simple imputer)" then its summary), a parameter ("Parameter
strategy of sklearn.impute.SimpleImputer (...)" then its description), a return value, an
attribute, a raised exception, See Also, Notes, Examples; a narrative chunk starts with its
heading path ("Guide > Section > Subsection"). Each kind gives questions whose answer is
that chunk:

* an object's summary -> "which class/function ...?", "how do I ...?", a vague natural
  question ("I need to ..., what should I use?"), keywords, and the same in other words;
* a See Also line -> the same styles, from another object's description of it (words the
  object's own docstring does not use), answered by that object's card;
* a parameter -> "how do I set ...", "what does ... control", "which parameter of X ...";
* returns, attributes, raises, examples, notes -> "what does X return", "where does X keep
  ...", "when does X raise ...", "example of X";
* a section heading -> "how do I ...?" (an -ing or imperative heading), "what is ...?"
  (a noun heading), sentences of the section that say "you can ..." -> "how can I ...?", and
  one of its sentences -> its first content words (the section's chunk, not its page).

Every question may then be paraphrased (``SYNONYMS``), lowercased or given a typo.
``equivalents`` says which other chunks answer the question as well (they are never used as
its negatives).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from words import SYNONYMS, STOPWORDS, VERBS, base_of_gerund, base_of_third_person, third_person

__all__ = ["Question", "questions_for_site", "chunk_facts"]

_CARD = re.compile(r"^(?P<short>[\w.]+) \((?P<objtype>class|function|method|exception|classmethod|staticmethod)"
                   r"(?: in (?P<module>[\w.]+))?(?:; (?P<words>[^)]*))?\)$")
_PARAM = re.compile(r"^Parameter (?P<name>\S+) of (?P<owner>[\w.]+)(?: \((?P<context>.*)\))?\.$")
_ATTR = re.compile(r"^Attribute (?P<name>\S+) of (?P<owner>[\w.]+)(?: \((?P<context>.*)\))?\.$")
_RETURN = re.compile(r"^(?P<name>.+?) is (?:returned|yielded) by (?P<owner>[\w.]+)")
_RAISE = re.compile(r"^(?P<exc>\S+) is raised by (?P<owner>[\w.]+)(?::\s*(?P<desc>.*))?")
_SEE_ALSO = re.compile(r"^See also, the objects related to (?P<owner>[\w.]+):$")
_EXAMPLE = re.compile(r"^Here is a usage example of (?P<short>\S+) \((?P<owner>[\w.]+)\):$")
_NOTES = re.compile(r"^Notes about (?P<owner>[\w.]+):$")
_DESCRIBED = re.compile(r"is described as '(?P<desc>.*)'", re.S)
_ROLE = re.compile(r":[\w:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")  # :class:`~a.B` -> a.B
_MARKUP = re.compile(r"``|`|\*\*|\*")
_YOU_CAN = re.compile(r"\b(?:you can|you may|allows you to|lets you|can be used to|is used to|helps you)\s+"
                      r"(?P<vp>[a-z][^.;:()]{12,90}?)(?:[.;:(]|$)", re.I)

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CODE_LIKE = re.compile(r"[{}=<>$]|\(\)|>>>")

OBJECT_WORDS = {"class": "class", "exception": "exception", "function": "function", "method": "method",
                "classmethod": "method", "staticmethod": "method", "attribute": "attribute", "property": "property",
                "data": "constant", "module": "module"}
#: How a reader says what a summary's verb does: "Return the plugin ..." -> "how do I get the plugin".
ASKED_AS = {"return": "get", "yield": "iterate over", "get": "get"}


@dataclass
class Question:
    text: str
    style: str  # which / howto / natural / keyword / paraphrase / typo / concept / param / ...
    source: str  # the template that made it
    positive: int  # the chunk that answers it
    scope: str  # "chunk": only the positive answers it; "url": any chunk at the positive's URL does


def clean(text: str) -> str:
    """reST roles and inline markup read as words, one line, no trailing period."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = _MARKUP.sub("", text)
    return re.sub(r"\s+", " ", text).strip().rstrip(".:;,")


def first_sentence(text: str) -> str:
    text = clean(text)
    m = re.match(r"(.+?[a-z0-9)\]])\.(?:\s|$)", text)
    return (m.group(1) if m else text)[:220]


def words_of(name: str) -> str:
    """``SimpleImputer`` -> "simple imputer", ``read_csv`` -> "read csv"."""
    name = name.rsplit(".", 1)[-1]
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ")
    return re.sub(r"\s+", " ", name).strip().lower()


def chunk_facts(record: dict) -> dict:
    """What a chunk is (its kind of content and names), read from its text."""
    text = record["text"]
    first, _, rest = text.partition("\n")
    if record["kind"] == "api":
        for kind, pattern in (("card", _CARD), ("param", _PARAM), ("attr", _ATTR), ("see_also", _SEE_ALSO),
                              ("example", _EXAMPLE), ("notes", _NOTES), ("raises", _RAISE), ("returns", _RETURN)):
            m = pattern.match(first)
            if m:
                facts = {"type": kind, **{k: v for k, v in m.groupdict().items() if v}}
                described = _DESCRIBED.search(text)
                if described:
                    facts["desc"] = described.group("desc")
                if kind == "card":
                    if "." in facts["short"] or rest.startswith(("The parameters of ", "The description of ")):
                        break  # an object's signature chunk ("a.b.C (class)"), not its card
                    lines = [ln for ln in rest.split("\n") if ln and " takes the parameters " not in ln]
                    facts["summary"] = lines[0] if lines else ""
                if kind == "see_also":
                    facts["entries"] = [ln for ln in rest.split("\n") if ":" in ln]
                return facts
        m = re.match(r"^(?P<full>[\w.]+) \((?P<objtype>attribute|property|data|module)\)$", first)
        described = re.match(r"The description of \S+ is as follows\.\n(?P<summary>[^\n]+)", rest)
        if m and described:  # an object without a card: its summary is in its signature chunk
            return {"type": "card", "short": m.group("full").rsplit(".", 1)[-1], "objtype": m.group("objtype"),
                    "summary": described.group("summary")}
        return {"type": "signature"}
    headings = [h for h in record.get("headings", []) if h]
    return {"type": "section" if record["kind"] == "guide" else "gallery", "headings": headings, "body": rest}


# --- turning a summary into a verb phrase -----------------------------------------------------

def verb_phrase(summary: str) -> tuple[str, str] | None:
    """(base-form verb phrase, third-person verb phrase) of a summary, when it says what the
    object does: "Compute the mean." -> ("compute the mean", "computes the mean");
    "Classifier implementing X" -> ("implement X", "implements X"); "Class which manages X"
    -> ("manage X", "manages X")."""
    s = first_sentence(summary)
    if not s:
        return None
    words = s.split()
    head = words[0].lower()
    if head in VERBS:
        rest = " ".join(words[1:])
        return f"{head} {rest}".strip(), f"{third_person(head)} {rest}".strip()
    third = base_of_third_person(head)
    if third:  # "Computes the mean"
        rest = " ".join(words[1:])
        return f"{third} {rest}".strip(), f"{head} {rest}".strip()
    m = re.search(r"\b(?:which|that)\s+(\w+)\s+(.*)", s)
    if m and base_of_third_person(m.group(1)):
        base = base_of_third_person(m.group(1))
        return f"{base} {m.group(2)}", f"{m.group(1)} {m.group(2)}"
    m = re.search(r"^\w[\w -]{0,40}?\s(\w+ing)\s+(.*)", s)
    if m and base_of_gerund(m.group(1)):
        base = base_of_gerund(m.group(1))
        return f"{base} {m.group(2)}", f"{third_person(base)} {m.group(2)}"
    return None


def noun_phrase(summary: str) -> str | None:
    """A summary that names what the object is ("A dictionary of settings"), lowercased."""
    s = first_sentence(summary)
    if not s or verb_phrase(s) or len(s.split()) > 14:
        return None
    s = re.sub(r"^(?:a|an|the)\s+", "", s, flags=re.I)
    return s[0].lower() + s[1:] if s else None


def shorten(vp: str, rng: random.Random, max_words: int = 12) -> str:
    """A verb phrase cut at a clause boundary or at ``max_words`` (readers ask short)."""
    vp = re.split(r"\s(?:using|via|according to|given|where|such that|with respect to)\s|, ", vp)[0]
    words = vp.split()
    if len(words) > max_words:
        words = words[: rng.randint(max(4, max_words - 4), max_words)]
        while words and words[-1].lower() in STOPWORDS:
            words.pop()
    return " ".join(words)


def keywords(text: str, rng: random.Random, n: tuple[int, int] = (2, 4)) -> str:
    content = [w for w in re.findall(r"[A-Za-z][\w-]*", text.lower()) if w not in STOPWORDS and len(w) > 2]
    content = list(dict.fromkeys(content))
    if not content:
        return ""
    k = min(len(content), rng.randint(*n))
    return " ".join(content[:k])


# --- variants -------------------------------------------------------------------------------

def paraphrase(question: str, rng: random.Random) -> str | None:
    """The question with one to three of its words replaced by everyday synonyms (None when
    none of its words has one)."""
    tokens = question.split(" ")
    spots = [i for i, t in enumerate(tokens) if t.lower().strip("?,.") in SYNONYMS]
    if not spots:
        return None
    rng.shuffle(spots)
    for i in spots[: rng.randint(1, 3)]:
        bare = tokens[i].lower().strip("?,.")
        tail = tokens[i][len(tokens[i].rstrip("?,.")):]
        tokens[i] = rng.choice(SYNONYMS[bare]) + tail
    out = " ".join(tokens)
    return out if out != question else None


def typo(question: str, rng: random.Random) -> str | None:
    """One typo (a dropped, doubled or swapped letter) in one word of five letters or more."""
    tokens = question.split(" ")
    spots = [i for i, t in enumerate(tokens) if len(t) >= 5 and t.isalpha() and t.lower() not in STOPWORDS]
    if not spots:
        return None
    i = rng.choice(spots)
    w = tokens[i]
    j = rng.randint(1, len(w) - 2)
    op = rng.choice(("drop", "double", "swap"))
    w = w[:j] + w[j + 1:] if op == "drop" else w[:j] + w[j] + w[j:] if op == "double" else \
        w[:j] + w[j + 1] + w[j] + w[j + 2:]
    tokens[i] = w
    return " ".join(tokens)


# --- templates per kind of chunk ------------------------------------------------------------

def card_questions(f: dict, i: int, rng: random.Random, project: str) -> list[Question]:
    out = []
    obj = OBJECT_WORDS.get(f["objtype"], "function")
    summary = f.get("summary", "")
    vp = verb_phrase(summary)
    short, words = f["short"], words_of(f["short"])
    scope = "url"
    if vp:
        base, third = shorten(vp[0], rng), shorten(vp[1], rng)
        verb, _, rest = base.partition(" ")
        base = f"{ASKED_AS.get(verb, verb)} {rest}".strip()
        out += [Question(f"Which {obj} {third}?", "which", "card-which", i, scope),
                Question(rng.choice([f"How do I {base}?", f"How can I {base}?", f"how to {base}"]), "howto",
                         "card-howto", i, scope),
                Question(rng.choice([f"I need to {base}, what should I use?", f"is there a way to {base}?",
                                     f"what should I use to {base}?", f"can {project} {base}?",
                                     f"what's the easiest way to {base}"]), "natural", "card-natural", i, scope),
                Question(keywords(base, rng), "keyword", "card-keyword", i, scope)]
    else:
        np_ = noun_phrase(summary)
        if np_:
            out += [Question(rng.choice([f"Which {obj} is {_article(np_)}?", f"Which {obj} represents {np_}?",
                                         f"what gives me {_article(np_)}?"]), "which", "card-which-np", i, scope),
                    Question(keywords(np_, rng), "keyword", "card-keyword", i, scope)]
    if rng.random() < 0.5:
        out.append(Question(rng.choice([f"what does {short} do?", f"what is {short} for?", f"{words}",
                                        f"what is the {words} {obj}?"]), "name", "card-name", i, scope))
    return [q for q in out if len(q.text.split()) >= 2]


def _article(np_: str) -> str:
    if re.match(r"^(?:[a-z]+s|data|information|\w+ of \w+s)\b", np_) and not np_.startswith(("class", "analysis")):
        return np_
    return ("an " if np_[:1] in "aeiou" else "a ") + np_


def param_questions(f: dict, i: int, rng: random.Random) -> list[Question]:
    name, owner = f["name"].strip("*"), f["owner"]
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or name in ("None", "True", "False"):
        return []  # a line numpydoc misread as a parameter
    short, owner_words = owner.rsplit(".", 1)[-1], words_of(owner)
    pwords = words_of(name)
    desc = first_sentence(f.get("desc", ""))
    out = [Question(rng.choice([f"what does {name} do in {short}?", f"what is the {name} parameter of {short}?",
                                f"{short} {name}", f"{owner_words} {pwords} parameter"]), "param", "param-name", i, "chunk")]
    m = re.match(r"^(?:the|a|an)\s+(.{6,90})$", desc, re.I)
    if m:
        np_ = shorten(m.group(1), rng, 10)
        out.append(Question(rng.choice([f"How do I set the {np_} in {short}?", f"how do I change the {np_} of the "
                                        f"{owner_words}?", f"which parameter of {short} controls the {np_}?",
                                        f"{owner_words} {np_}"]), "param", "param-np", i, "chunk"))
    m = re.match(r"^(?:whether|if true,?)\s+(?:to\s+)?(.{6,90})$", desc, re.I)
    if m:
        clause = shorten(m.group(1), rng, 10)
        out.append(Question(rng.choice([f"how do I make {short} {clause}?", f"can {short} {clause}?",
                                        f"option to {clause} in {owner_words}"]), "param", "param-flag", i, "chunk"))
    if desc and rng.random() < 0.3:
        out.append(Question(keywords(desc, rng) + f" {short}", "keyword", "param-keyword", i, "chunk"))
    if "{" in f.get("accepts", "") or "accepts the values" in desc:
        out.append(Question(f"what values can {name} take in {short}?", "param", "param-values", i, "chunk"))
    return out


def member_questions(f: dict, i: int, rng: random.Random) -> list[Question]:
    kind, owner = f["type"], f.get("owner", "")
    short, owner_words = owner.rsplit(".", 1)[-1], words_of(owner)
    desc = first_sentence(f.get("desc", ""))
    if kind == "returns":
        q = [Question(rng.choice([f"what does {short} return?", f"what is returned by {short}?",
                                  f"{short} return value", f"what do I get back from {owner_words}?"]),
                      "returns", "returns", i, "chunk")]
    elif kind == "attr":
        name = f["name"]
        q = [Question(rng.choice([f"what is the {name} attribute of {short}?", f"{short} {name}"]), "attr",
                      "attr-name", i, "chunk")]
        m = re.match(r"^(?:the|a|an)\s+(.{6,90})$", desc, re.I)
        if m:
            np_ = shorten(m.group(1), rng, 10)
            q.append(Question(rng.choice([f"how do I get the {np_} from a fitted {owner_words}?",
                                          f"which attribute of {short} holds the {np_}?",
                                          f"where does {short} store the {np_}?"]), "attr", "attr-np", i, "chunk"))
    elif kind == "raises":
        exc = f["exc"].rsplit(".", 1)[-1]
        q = [Question(rng.choice([f"when does {short} raise {exc}?", f"why do I get {exc} from {short}?",
                                  f"{short} {exc}"]), "raises", "raises", i, "chunk")]
    elif kind == "example":
        q = [Question(rng.choice([f"example of {short}", f"how do I use {short}? show me an example",
                                  f"{owner_words} usage example", f"sample code for {owner_words}"]),
                      "example", "example", i, "chunk")]
    elif kind == "notes":
        q = [Question(rng.choice([f"how does {short} work?", f"{owner_words} implementation details",
                                  f"notes on {short}"]), "concept", "notes", i, "chunk")]
    else:
        q = []
    return q


def see_also_questions(f: dict, cards: dict[str, int], rng: random.Random, project: str) -> list[Question]:
    """Another object's card, asked for in the words a See Also line describes it with."""
    out = []
    for line in f.get("entries", []):
        names, _, desc = line.partition(":")
        target = cards.get(names.split(",")[0].strip().rsplit(".", 1)[-1])
        desc = clean(desc)
        if target is None or len(desc.split()) < 3:
            continue
        vp = verb_phrase(desc)
        if vp:
            base, third = shorten(vp[0], rng), shorten(vp[1], rng)
            text = rng.choice([f"which function {third}?", f"how do I {base}?", f"I want to {base}"])
        else:
            np_ = noun_phrase(desc)
            if not np_:
                continue
            text = rng.choice([f"which function gives {_article(np_)}?", f"{np_}?", f"how do I get {_article(np_)}?"])
        out.append(Question(text, "which", "see-also", target, "url"))
    return out


def section_questions(f: dict, record: dict, i: int, rng: random.Random, project: str) -> list[Question]:
    out = []
    headings = f["headings"]
    if not headings:
        return out
    h = clean(headings[-1])
    parent = clean(headings[-2]) if len(headings) > 1 else project
    first_word = h.split()[0].lower() if h.split() else ""
    scope = "url"
    if h.endswith("?"):
        out.append(Question(h, "natural", "heading-question", i, scope))
    elif re.match(r"^how to\s", h, re.I):
        out.append(Question(f"How do I {h[7:]}?", "howto", "heading-howto", i, scope))
    elif base_of_gerund(first_word):
        rest = " ".join(h.split()[1:])
        base = base_of_gerund(first_word)
        out.append(Question(rng.choice([f"How do I {base} {rest}?", f"how can I {base} {rest}",
                                        f"{base} {rest} in {project}"]), "howto", "heading-gerund", i, scope))
    elif first_word in VERBS and len(h.split()) > 2:
        out.append(Question(rng.choice([f"How do I {h[0].lower() + h[1:]}?", f"how to {h.lower()}"]), "howto",
                            "heading-imperative", i, scope))
    elif 1 <= len(h.split()) <= 6 and h.lower() not in ("introduction", "overview", "examples", "example", "usage",
                                                         "notes", "summary", "reference", "api", "see also"):
        out.append(Question(rng.choice([f"What is {h.lower()}?" if not h.lower().endswith("s") else f"What are {h.lower()}?",
                                        f"explain {h.lower()} in {project}", f"{h.lower()} {parent.lower()}",
                                        f"{project} {h.lower()}"]), "concept", "heading-noun", i, scope))
    body = clean(f.get("body", ""))
    for m in list(_YOU_CAN.finditer(body))[:2]:
        vp = shorten(m.group("vp"), rng, 12)
        if len(vp.split()) >= 3:
            out.append(Question(rng.choice([f"how can I {vp}?", f"is it possible to {vp}?", f"how to {vp}"]),
                                "natural", "body-you-can", i, "chunk"))
    # a sentence deep in the section, asked in its own words: the answer is this chunk, not
    # its heading's page (prose questions ask what a paragraph says: eval/RESULTS.md)
    sentences = [x for x in _SENTENCE.split(body) if 8 <= len(x.split()) <= 40 and not _CODE_LIKE.search(x)]
    if sentences:
        kw = keywords(rng.choice(sentences), rng, (3, 5))
        if len(kw.split()) >= 3:
            out.append(Question(rng.choice([kw, f"{h.lower()} {kw}", f"{kw} in {project}"]), "keyword",
                                "body-sentence", i, "chunk"))
    return out


def variants(q: Question, rng: random.Random) -> list[Question]:
    """A paraphrase and, sometimes, a typo or lowercase copy of a question."""
    out = []
    p = paraphrase(q.text, rng)
    if p:
        out.append(Question(p, "paraphrase", q.source + "+synonym", q.positive, q.scope))
    if rng.random() < 0.25:
        t = typo(q.text, rng)
        if t:
            out.append(Question(t, "typo", q.source + "+typo", q.positive, q.scope))
    if rng.random() < 0.15:
        out.append(Question(q.text.lower().rstrip("?"), q.style, q.source + "+lower", q.positive, q.scope))
    return out


def questions_for_site(records: list[dict], project: str, rng: random.Random) -> list[Question]:
    """Every question the templates make for one site's chunks (then sampled by make_pairs)."""
    facts = [chunk_facts(r) for r in records]
    cards = {}
    for i, f in enumerate(facts):
        if f["type"] == "card":
            cards.setdefault(f["short"], i)
    out: list[Question] = []
    for i, (f, r) in enumerate(zip(facts, records)):
        kind = f["type"]
        if kind == "card":
            qs = card_questions(f, i, rng, project)
        elif kind == "param":
            qs = param_questions(f, i, rng)
        elif kind in ("returns", "attr", "raises", "example", "notes"):
            qs = member_questions(f, i, rng)
        elif kind == "see_also":
            qs = see_also_questions(f, cards, rng, project)
        elif kind in ("section", "gallery"):
            qs = section_questions(f, r, i, rng, project)
        else:
            qs = []
        qs = [q for q in qs if q.text and len(q.text) <= 200]
        for q in list(qs):
            qs += variants(q, rng)
        out += qs
    return out
