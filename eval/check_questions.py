"""Validate a question file (``demo_questions.json`` by default) against a built HTML site.

Usage::

    python eval/check_questions.py demo_docs/_build/html [eval/demo_questions.json]
    python eval/check_questions.py /tmp/flaskcorpus/_build/html eval/flask_questions.json

For every relevant entry (``text_contains`` may be left out: the anchor alone then
decides, as in the which-question sets) the script checks that

* the page of the url exists in the HTML directory,
* the anchor is an ``id`` of an element of that page.

For API pages (``api/generated/...``, or any anchor that is an object's signature, such as
Click's ``api.html#click.echo``) whose ``text_contains`` follows the chunker conventions,
it also checks that the object documents that item:

* ``Parameter <name> of <fullname>``: ``<fullname>`` is the anchor and its
  *Parameters* section lists ``<name>``;
* ``<name> is returned by <fullname>``: same for the *Returns* (or *Yields*)
  section;
* ``Attribute <name> of <fullname>``: same for the *Attributes* section.

Any other ``text_contains`` on an API page must occur in the description of
the anchored object. For user-guide, gallery and other pages the phrase must
occur in the *own* text of the section whose id is the anchor (the text of
its nested subsections excluded), i.e. the anchor is the nearest enclosing
section of the phrase.

Every context string of every ``answer_components`` entry must occur in the
plain text of some page (``sphinx_rag.tools.page_text``) and in the text of some chunk
of the site's index (else no method could ever find it), compared as the metric
compares them (``sphinx_rag.tools.evaluate.normalize_text``).

Every relevant entry must also be one a result can meet: some chunk of the index
has its URL and holds its phrase, in its text or in what the reader sees (as
``sphinx_rag.tools.evaluate.is_relevant`` scores it). A section's anchor is not one when
its answer is an object's own entry there (Flask's ``config.html#MAX_CONTENT_LENGTH``,
not ``#builtin-configuration-values``): the object's chunk links to the object.

Text is compared after collapsing whitespace and replacing typographic
quotes by ASCII quotes. The script exits with status 1 if any check fails.
"""

import argparse
import copy
import json
import re
import sys
from pathlib import Path

from bs4 import BeautifulSoup

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from sphinx_rag.search.index import IndexReader  # noqa: E402
from sphinx_rag.tools.evaluate import is_relevant, normalize_text  # noqa: E402
from sphinx_rag.search.retrieve import Result  # noqa: E402
from sphinx_rag.tools.page_text import read_page_text  # noqa: E402

STYLES = {"natural", "keyword", "typo", "synonym", "howto", "concept", "paraphrase", "which"}
PARAM_RE = re.compile(r"^Parameter (\S+) of (\S+)$")
RETURN_RE = re.compile(r"^(\S+) is returned by (\S+)$")
ATTR_RE = re.compile(r"^Attribute (\S+) of (\S+)$")
FIELDS = {
    "param": ("Parameters", "Other Parameters"),
    "return": ("Returns", "Yields"),
    "attr": ("Attributes",),
}
QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})


def normalize(text):
    return re.sub(r"\s+", " ", text.translate(QUOTES)).strip()


def texts(element):
    """Two normalized renderings: inline elements joined with and without spaces."""
    return normalize(element.get_text("")), normalize(element.get_text(" "))


def contains(element, phrase):
    phrase = normalize(phrase)
    return any(phrase in t for t in texts(element))


class Site:
    def __init__(self, root):
        self.root = Path(root)
        self._cache = {}

    def page(self, path):
        if path not in self._cache:
            file = self.root / path
            self._cache[path] = (
                BeautifulSoup(file.read_text(encoding="utf-8"), "html.parser")
                if file.is_file()
                else None
            )
        return self._cache[path]


def object_field_names(dt, field_titles):
    """Names listed in the given numpydoc fields of the object documented by ``dt``."""
    dd = dt.find_next_sibling("dd")
    if dd is None:
        return set()
    owner = dt.parent  # the <dl class="py ..."> of this object
    names = set()
    for field_list in dd.find_all("dl", class_="field-list"):
        if field_list.find_parent("dl", class_="py") is not owner:
            continue  # belongs to a nested method
        for field_dt in field_list.find_all("dt", recursive=False):
            title = normalize(field_dt.get_text("")).rstrip(":").strip()
            if title not in field_titles:
                continue
            field_dd = field_dt.find_next_sibling("dd")
            if not field_dd.find("dt"):  # Sphinx field lists (``:param x:``): an item's name is its first <strong>
                for item in field_dd.find_all("li") or [field_dd]:
                    first = item.find("strong")
                    if first is not None:
                        names.add(normalize(first.get_text("")))
            for item_dt in field_dd.find_all("dt"):
                # The name is bold text, or a link when numpydoc points to a
                # documented property; the type follows in span.classifier.
                item = copy.copy(item_dt)
                for classifier in item.find_all("span", class_="classifier"):
                    classifier.decompose()
                names.add(normalize(item.get_text("")).replace("\\", ""))
    return names


def own_section_text_element(section):
    trimmed = copy.copy(section)
    for sub in trimmed.find_all("section"):
        sub.decompose()
    return trimmed


def check_entry(site, entry):
    """Return a list of error strings for one relevant entry."""
    url = entry.get("url", "")
    phrase = entry.get("text_contains", "")
    if "#" not in url:
        return [f"url {url!r} has no #anchor"]
    path, anchor = url.split("#", 1)
    soup = site.page(path)
    if soup is None:
        return [f"page {path} does not exist"]
    target = soup.find(id=anchor)
    if target is None:
        return [f"anchor #{anchor} not found in {path}"]
    if "text_contains" not in entry:
        return []  # the object's anchor alone decides (the which-question sets: a URL per answer)
    if not phrase:
        return ["empty text_contains"]

    if path.startswith("api/") or target.name == "dt":  # an API page, or an object signature on any page
        for kind, regex in (("param", PARAM_RE), ("return", RETURN_RE), ("attr", ATTR_RE)):
            m = regex.match(phrase)
            if not m:
                continue
            name, fullname = m.groups()
            if fullname != anchor:
                return [f"{phrase!r}: object {fullname} differs from anchor #{anchor}"]
            if target.name != "dt":
                return [f"anchor #{anchor} is not an object signature"]
            names = object_field_names(target, FIELDS[kind])
            if name not in names:
                return [f"{phrase!r}: {name} not in {FIELDS[kind][0]} of {fullname} ({sorted(names)})"]
            return []
        scope = target.find_next_sibling("dd") if target.name == "dt" else target
        scope = target.parent if scope is None else scope
        if not contains(scope, phrase):
            return [f"{phrase!r} not found in the description of #{anchor} in {path}"]
        return []

    section = target if target.name == "section" else target.find_parent("section")
    if section is None:
        return [f"#{anchor} in {path} is not inside a section"]
    if section is not target:
        return [f"#{anchor} in {path} is not a section id (use #{section.get('id')})"]
    if not contains(own_section_text_element(section), phrase):
        where = "a subsection of" if contains(section, phrase) else "nowhere in"
        return [f"{phrase!r} is {where} section #{anchor} of {path}"]
    return []


class Texts:
    """Normalised plain text of every page and of every chunk, read once."""

    def __init__(self, root):
        root = Path(root)
        self.pages = [normalize_text(read_page_text(p).text) for p in sorted(root.rglob("*.html"))
                      if not p.relative_to(root).as_posix().startswith("_")]
        self.chunks = [normalize_text(c["text"]) for c in IndexReader(root).chunks()]

    def check(self, context):
        n = normalize_text(context)
        if not any(n in page for page in self.pages):
            return [f"context {context!r} is on no page"]
        if not any(n in chunk for chunk in self.chunks):
            return [f"context {context!r} is in no chunk of the index"]
        return []


class Chunks:
    """The index's chunks as one-chunk results, read once: can any of them meet an entry?"""

    def __init__(self, root):
        records = IndexReader(Path(root)).chunks()
        self.results = [Result(1, 0.0, c["url"], c["title"], c["kind"], c["text"], c["id"], i, [], c.get("display") or [])
                        for i, c in enumerate(records)]

    def check(self, entry):
        if any(is_relevant(r, entry) for r in self.results):
            return []
        return [f"no chunk at {entry['url']} holds {entry.get('text_contains')!r}: no result could ever meet it"]


def check_components(texts, components):
    if not isinstance(components, list) or not components:
        return ["answer_components must be a non-empty list of lists of strings"]
    errors = []
    for comp in components:
        if not isinstance(comp, list) or not comp or not all(isinstance(c, str) and c.strip() for c in comp):
            errors.append(f"component {comp!r} is not a non-empty list of strings")
            continue
        for context in comp:
            errors.extend(texts.check(context))
    return errors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html_dir", help="root of the built HTML site")
    parser.add_argument(
        "questions",
        nargs="?",
        default=str(Path(__file__).with_name("demo_questions.json")),
        help="question file (default: demo_questions.json next to this script)",
    )
    args = parser.parse_args(argv)

    questions = json.loads(Path(args.questions).read_text(encoding="utf-8"))
    site = Site(args.html_dir)
    texts = None
    chunks = Chunks(args.html_dir)
    errors = []
    seen = set()
    n_entries = 0
    for q in questions:
        qid = q.get("id", "?")
        if qid in seen:
            errors.append(f"{qid}: duplicate id")
        seen.add(qid)
        if not q.get("question"):
            errors.append(f"{qid}: empty question")
        if q.get("style") not in STYLES:
            errors.append(f"{qid}: bad style {q.get('style')!r}")
        if not q.get("relevant") and not q.get("answer_components"):
            errors.append(f"{qid}: neither relevant entries nor answer components")
        if "answer_components" in q:
            texts = texts or Texts(args.html_dir)
            errors.extend(f"{qid}: {e}" for e in check_components(texts, q["answer_components"]))
        for entry in q.get("relevant", []):
            n_entries += 1
            problems = check_entry(site, entry)
            errors.extend(f"{qid}: {e}" for e in problems or chunks.check(entry))

    for e in errors:
        print(e)
    print(
        f"{len(questions)} questions, {n_entries} relevant entries, "
        f"{len(errors)} problem(s)"
    )
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
