"""sphinx_rag.llm (prompt, fitting, endpoint, streaming, settings merge) and ``sphinx-rag ask``.

The streaming and CLI tests talk real HTTP to tests/fake_llm_server.py run as a
separate process on 127.0.0.1 (one mode per model name). Nothing here measures time.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from sphinx_rag.search.index import ASSET_DIR
from sphinx_rag.config import ConfigError, llm_settings
from sphinx_rag.llm import client
from sphinx_rag.llm.endpoint import normalize_endpoint
from sphinx_rag.llm.prompt import (ANSWER_RESERVE_TOKENS, MESSAGE_OVERHEAD_TOKENS, PASSAGE_HEADER_CHARS,
                                   build_messages, estimate_tokens, fit_passages, format_passages, passage_budget)
from sphinx_rag.llm.settings import browser_settings, merge_settings
from sphinx_rag.llm.template import DEFAULT_PROMPT, validate_prompt
from sphinx_rag.search.retrieve import Result
from site_helpers import fake_llm_server

HERE = Path(__file__).resolve().parent
QUESTION = "What are the values of the strategy parameter in a dummy classifier?"


# -- fixtures ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fake_server():
    """Base URL (no /v1) of a fake LLM server process; stopped with SIGTERM at the end."""
    with fake_llm_server(idle_minutes=5) as url:
        yield url


def last_request(base: str) -> dict:
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{base}/_last_request") as r:
        return json.load(r)


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there any more
    return port


def passage(n: int, sentences: int = 5, title: str | None = None) -> dict:
    text = " ".join(f"Sentence {i} of passage {n} says something useful here." for i in range(sentences))
    return {"title": title or f"Title {n}", "url": f"page{n}.html#s{n}", "text": text, "rank": n}


# -- prompt and passages ------------------------------------------------------------------

def test_estimate_tokens_is_chars_over_4():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("é" * 8) == 2  # code points, not bytes


def test_format_passages_numbered_with_title_and_url():
    text = format_passages([passage(1, 1), passage(2, 1)])
    assert text == ("[1] Title 1 (page1.html#s1)\nSentence 0 of passage 1 says something useful here.\n\n"
                    "[2] Title 2 (page2.html#s2)\nSentence 0 of passage 2 says something useful here.")


def test_fit_passages_keeps_all_when_they_fit():
    results = [passage(n) for n in range(1, 6)]
    assert fit_passages(results, 100_000, 1000) == results


def test_fit_passages_drops_lowest_ranked_first():
    results = [passage(n) for n in range(1, 6)]
    two = estimate_tokens(format_passages(results[:2]))
    for budget in (two, two + 10):
        kept = fit_passages(results, 1000 + budget, 1000)
        assert kept == results[:2]  # a prefix in rank order, texts untouched


def is_sentence_prefix(cut: str, full: str) -> bool:
    """cut is full up to the end of a sentence (or line)."""
    rest = full[len(cut):]
    return full.startswith(cut) and (rest == "" or (cut[-1] in ".!?" and rest[0].isspace())
                                     or rest[0] == "\n")


def test_fit_passages_cuts_the_top_passage_at_a_sentence_boundary():
    top = passage(1, sentences=20)
    results = [top, passage(2)]
    header = estimate_tokens("[1] Title 1 (page1.html#s1)\n")
    for budget in range(header + 14, estimate_tokens(format_passages([top])), 7):
        kept = fit_passages(results, budget, 0)
        assert len(kept) == 1
        cut = kept[0]["text"]
        assert cut and cut != top["text"]
        assert is_sentence_prefix(cut, top["text"]), (budget, cut[-40:])
        assert cut.endswith("here.")  # never mid-sentence
        assert estimate_tokens(format_passages(kept)) <= budget
        assert kept[0]["title"] == "Title 1" and top["text"].count("Sentence") == 20  # input untouched


def test_fit_passages_never_mid_sentence_even_with_line_breaks_and_abbreviations():
    text = ("Use a baseline, e.g. the prior strategy, to compare models. It is cheap!\n"
            "def fit(X, y): returns self\nA final sentence that is rather long to force a cut.")
    result = Result(1, 1.0, "a.html", "A", "guide", text, "a#0", 0)
    allowed = {"Use a baseline, e.g. the prior strategy, to compare models.",
               "Use a baseline, e.g. the prior strategy, to compare models. It is cheap!",
               "Use a baseline, e.g. the prior strategy, to compare models. It is cheap!\n"
               "def fit(X, y): returns self"}
    seen = set()
    for budget in range(0, 80):
        kept = fit_passages([result], budget, 0)
        if kept:
            assert isinstance(kept[0], Result)
            if kept[0].text != text:
                assert kept[0].text in allowed
                seen.add(kept[0].text)
    assert seen == allowed  # all three cuts happen, never "Use a baseline, e.g."


def test_fit_passages_returns_nothing_when_no_sentence_fits():
    assert fit_passages([passage(1)], 10, 0) == []
    assert fit_passages([passage(1)], 100, 200) == []  # prompt alone over the budget
    assert fit_passages([], 100, 0) == []


def test_build_messages_default_prompt():
    results = [passage(1), passage(2)]
    built = build_messages("How to frobnicate?", results, project="mlkit")
    system, user = built.messages
    assert system["role"] == "system" and user["role"] == "user"
    assert "expert of the mlkit project" in system["content"]
    for rule in ("only from the provided content", "succinct", "backticks", "[n]", "does not contain"):
        assert rule in system["content"]
    assert "[1] Title 1 (page1.html#s1)\nSentence 0 of passage 1" in user["content"]
    assert "[2] Title 2 (page2.html#s2)" in user["content"]
    assert user["content"].endswith("Question: How to frobnicate?")
    assert built.passages == results
    assert "{" not in system["content"] and "---" not in user["content"]


def test_passage_budget_is_what_the_window_leaves_for_the_passages():
    empty = build_messages("q?", [], project="p", max_context_tokens=4096).messages  # "(no documentation ...)"
    reserve = (sum(estimate_tokens(m["content"]) for m in empty) - estimate_tokens("(no documentation excerpt was "
               "found)") + ANSWER_RESERVE_TOKENS + MESSAGE_OVERHEAD_TOKENS)
    budget = passage_budget("q?", 8, project="p", max_context_tokens=4096)
    assert abs(budget - (4 * (4096 - reserve) - 8 * PASSAGE_HEADER_CHARS)) <= 4  # the estimate rounds up
    # passages of that many characters (and their header lines) fit in the window
    results = [{"title": "T", "url": "u.html#x", "text": "word " * (budget // 40)} for _ in range(8)]
    assert len(build_messages("q?", results, project="p", max_context_tokens=4096).passages) == 8
    assert passage_budget("q?", 8, project="p", max_context_tokens=1024) < budget
    assert passage_budget("q?", 8, project="p", max_context_tokens=200) == 1  # nothing left, never 0
    with pytest.raises(ConfigError, match="placeholder"):
        passage_budget("q?", 8, project="p", prompt="no placeholders")


def test_build_messages_fits_the_context_window():
    results = [passage(n, sentences=40) for n in range(1, 9)]
    built = build_messages("q?", results, project="p", max_context_tokens=2048)
    assert 1 <= len(built.passages) < 8 and built.passages == results[:len(built.passages)]
    total = sum(estimate_tokens(m["content"]) for m in built.messages)
    assert total + ANSWER_RESERVE_TOKENS <= 2048
    assert f"[{len(built.passages) + 1}]" not in built.messages[1]["content"]


def test_prompt_override_single_user_message_and_literal_braces():
    prompt = "Project {project}; use {{braces}}.\n{passages}\nQ: {question}"
    built = build_messages("why?", [passage(1, 1)], project="demo", prompt=prompt)
    assert built.messages == [{"role": "user", "content": (
        "Project demo; use {braces}.\n[1] Title 1 (page1.html#s1)\n"
        "Sentence 0 of passage 1 says something useful here.\nQ: why?")}]


@pytest.mark.parametrize("prompt, fragment", [
    ("Answer from {passages}", "must contain the placeholder {question}"),
    ("Answer {question}", "must contain the placeholder {passages}"),
    ("{passages} {question} {projct}", "unknown placeholder {projct}"),
    ("{passages} {question} {}", "unknown placeholder {}"),
    ("{passages} {question:>10}", "unknown placeholder {question:>10}"),
    ("{passages} {question} }", "not a valid template"),
    ("", "non-empty string"),
])
def test_prompt_validation(prompt, fragment):
    assert fragment in validate_prompt(prompt)
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        llm_settings({"endpoint": "http://127.0.0.1:8080", "model": "m", "prompt": prompt})
    with pytest.raises(ConfigError, match=re.escape(fragment)):
        build_messages("q", [], project="p", prompt=prompt)


@pytest.mark.parametrize("given, expected", [
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ("http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"),
    ("http://localhost:11434/v1/chat/completions", "http://localhost:11434/v1"),
    ("localhost:11434", "http://localhost:11434/v1"),
    ("https://llm.example.org/openai", "https://llm.example.org/openai/v1"),
    ("http://host:8000/v2/", "http://host:8000/v2"),
])
def test_normalize_endpoint(given, expected):
    assert normalize_endpoint(given) == expected


@pytest.mark.parametrize("bad", ["", "ftp://host/v1", "http://", "javascript:alert(1)", "not a url", "mailto:a@b",
                                 "http://host:99999", "http://a b"])
def test_normalize_endpoint_rejects(bad):
    with pytest.raises(ValueError):
        normalize_endpoint(bad)


def test_iter_sse():
    lines = [b": comment\n", b"event: message\n", b"data: {\"a\": 1}\r\n", b"\r\n",
             b"data: line one\n", b"data:line two\n", b"\n", b"\n", b"data: [DONE]"]
    it = iter(lines)
    assert list(client.iter_sse(lambda: next(it, b""))) == ['{"a": 1}', "line one\nline two", "[DONE]"]


# -- settings: the manifest's settings.llm and the merge rule ------------------------------------

def test_browser_settings():
    assert browser_settings({}, "p") == {}
    s = llm_settings({"endpoint": "http://127.0.0.1:8080", "model": "gemma3"})
    b = browser_settings({"endpoint": "127.0.0.1:8080/v1", "model": "m", "timeout": 5}, "mlkit")
    assert b == {**s, "model": "m", "timeout": 5.0, "project": "mlkit"}
    assert json.loads(json.dumps(b)) == b


def test_merge_settings_gives_the_shared_fixture():
    """tests/fixtures/llm_settings.json pins the rule for both runtimes (js/test/llm_settings.test.js)."""
    cases = json.loads((HERE / "fixtures" / "llm_settings.json").read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 10 and any(c["expected"] is None for c in cases)
    for case in cases:
        assert merge_settings(case["layers"]) == case["expected"], case["name"]


def test_merge_settings_as_sphinx_rag_ask_uses_it():
    """[flags, site]: a flag given overrides the site; None falls back to it; "" means none."""
    site = browser_settings({"endpoint": "http://127.0.0.1:8080", "model": "gemma3", "timeout": 30}, "mlkit")
    flags = dict.fromkeys(("endpoint", "model", "timeout", "temperature", "max_context_tokens", "max_answer_chars",
                           "project"))
    assert merge_settings([flags, site]) == site
    given = {**flags, "model": "llama3", "max_context_tokens": 2048, "temperature": 0.0}
    assert merge_settings([given, site]) == {**site, "model": "llama3", "max_context_tokens": 2048,
                                             "temperature": 0.0}
    assert merge_settings([{**flags, "model": "", "project": ""}, site]) == {**site, "model": "",
                                                                            "project": "documented"}
    assert merge_settings([flags, {}]) is None and merge_settings([{"endpoint": ""}, site]) is None
    only = merge_settings([{"endpoint": "localhost:11434"}, {}])
    assert only == {"endpoint": "localhost:11434", "model": "", "max_context_tokens": 4096, "temperature": 0.1,
                    "timeout": 60.0, "max_answer_chars": 20000, "multi_query": False, "filter_passages": False,
                    "prompt": DEFAULT_PROMPT, "project": "documented"}
    assert merge_settings([{**flags, "max_answer_chars": 5000}, site])["max_answer_chars"] == 5000
    # --multi-query / --no-filter-passages over a site's switches (None: not given, the site's)
    switched = browser_settings({"endpoint": "http://h:1", "model": "m", "filter_passages": True}, "p")
    merged = merge_settings([{**flags, "multi_query": True}, switched])
    assert (merged["multi_query"], merged["filter_passages"]) == (True, True)
    merged = merge_settings([{**flags, "filter_passages": False}, switched])
    assert (merged["multi_query"], merged["filter_passages"]) == (False, False)


# -- streaming against the fake server (in process) ------------------------------------------

def test_stream_chat_streams_tokens(fake_server):
    tokens = []
    msgs = build_messages("q?", [passage(1, 1, "Alpha"), passage(2, 1)], project="p").messages
    answer = client.stream_chat(fake_server, "normal", msgs, on_token=tokens.append, timeout=30)
    assert len(tokens) > 5 and "".join(tokens) == answer
    assert '"Alpha"' in answer and "[1]" in answer and "[2]" in answer
    body = last_request(fake_server)
    assert body["stream"] is True and body["model"] == "normal" and body["messages"] == msgs
    assert body["temperature"] == 0.1
    assert body["max_tokens"] == ANSWER_RESERVE_TOKENS  # the answer room the context fit reserved


def test_stream_chat_errors_keep_partial_text(fake_server):
    msgs = [{"role": "user", "content": "[1] T (u)\nx"}]
    with pytest.raises(client.LLMIncomplete) as exc:
        client.stream_chat(fake_server + "/v1/", "disconnect", msgs, timeout=30)
    assert exc.value.partial.startswith("According to") and "incomplete" in str(exc.value)
    with pytest.raises(client.LLMHTTPError) as exc:
        client.stream_chat(fake_server, "error500", msgs, timeout=30)
    assert exc.value.status == 500 and exc.value.server_message == "model crashed: out of memory"
    with pytest.raises(client.LLMTimeout):
        client.stream_chat(fake_server, "slow", msgs, timeout=0.3)
    with pytest.raises(client.LLMUnreachable, match="connection refused"):
        client.stream_chat(f"http://127.0.0.1:{closed_port()}", "normal", msgs, timeout=30)
    assert "answers this [1]" in client.stream_chat(fake_server, "json", msgs, timeout=30)
    assert client.list_models(fake_server)[:2] == ["normal", "slow"]


# -- the CLI ------------------------------------------------------------------------------------

def ask(site: Path, *args: str, question: str = QUESTION) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "sphinx_rag", "ask", str(site), question, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def expected_passages(demo_html):
    from sphinx_rag.llm.prompt import llm_passage
    from sphinx_rag.search.retrieve import Searcher

    results = Searcher(demo_html).search(QUESTION, k=8)
    assert len(results) == 8
    return [llm_passage(r) for r in results]  # the LLM reads the display form


def assert_sources(stdout: str, results):
    """The retrieved passages listed once, first, as [n] title — url (all sent: n is the rank)."""
    listing = "\n".join(f"[{n}] {r.title} \u2014 {r.url}" for n, r in enumerate(results, start=1))
    assert stdout.startswith("Retrieved passages:\n" + listing + "\n\n")
    assert stdout.count(listing) == 1 and stdout.count("Retrieved passages:") == 1
    assert "Sources:" not in stdout  # no second listing after the answer


def answer_of(stdout: str) -> str:
    """What follows the listing (and its blank line): the answer, with its last line break."""
    answer = stdout.split("\n\n", 1)[1]
    assert answer.endswith("\n") and not answer.endswith("\n\n")
    return answer.rstrip("\n")


def test_ask_normal(fake_server, demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "normal")
    assert proc.returncode == 0, proc.stderr
    assert_sources(proc.stdout, expected_passages)
    answer = answer_of(proc.stdout)
    assert f'the passage titled "{expected_passages[0].title}" answers this [1]' in answer
    assert answer.endswith("[2].") and proc.stderr == ""
    body = last_request(fake_server)
    assert body["stream"] is True and body["model"] == "normal"
    user = body["messages"][-1]["content"]
    for n, r in enumerate(expected_passages, start=1):
        assert f"[{n}] {r.title} ({r.url})\n{r.text.strip()[:50]}" in user
    # the display form, not the embedded text: no template wording, no reST markup
    assert "Parameters:\nstrategy : " in user
    assert "is described as" not in user and ":class:`" not in user and "``" not in user
    assert QUESTION in user


@pytest.mark.parametrize("mode, note", [
    ("nocite", "[sphinx-rag] note: the answer cites none of the passages it was given: check it against them\n"),
    ("farcite", "[sphinx-rag] note: the answer cites [42], which it was not given (8 passages sent)\n"),
])
def test_ask_says_when_the_answer_cites_nothing_or_a_passage_not_given(fake_server, demo_html, expected_passages,
                                                                        mode, note):
    proc = ask(demo_html, "--endpoint", fake_server, "--model", mode)
    assert proc.returncode == 0 and proc.stderr == note
    assert_sources(proc.stdout, expected_passages)


def test_citation_check_reads_every_citation_and_names_those_not_given():
    from sphinx_rag.cli.ask import citation_note
    from sphinx_rag.llm.thread import citation_check

    assert citation_check("It fills NaN [2][3], as [1, 3] says; [1000] and [x] are no citations.", 3) == {
        "cited": [1, 2, 3], "unknown": []}
    assert citation_check("See [0] and [2, 9].", 4) == {"cited": [0, 2, 9], "unknown": [0, 9]}
    assert citation_check("Nothing cited.", 2) == {"cited": [], "unknown": []}
    assert citation_note("Fine [1].\n\nFollow-up questions:\n- More [7]?", 1) == ""  # the follow-ups are not the answer
    assert citation_note("", 3) == "" and citation_note("No passage was sent, no citation.", 0) == ""


def test_ask_json_body(fake_server, demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", fake_server + "/v1", "--model", "json")
    assert proc.returncode == 0, proc.stderr
    assert_sources(proc.stdout, expected_passages)
    assert "answers this [1]" in proc.stdout


def test_ask_slow_times_out(fake_server, demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "slow", "--timeout", "0.3")
    assert proc.returncode == 3
    assert "did not answer within 0.3 s" in proc.stderr and "timeout" in proc.stderr
    assert_sources(proc.stdout, expected_passages)


def test_ask_disconnect_keeps_partial_answer(fake_server, demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "disconnect")
    assert proc.returncode == 3
    assert "the answer is incomplete" in proc.stderr
    answer = answer_of(proc.stdout)
    assert answer.startswith("According to the documentation,") and "[2]" not in answer
    assert_sources(proc.stdout, expected_passages)


def test_ask_error500(fake_server, demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "error500")
    assert proc.returncode == 3
    assert "HTTP 500" in proc.stderr and "model crashed: out of memory" in proc.stderr
    assert_sources(proc.stdout, expected_passages)


def test_ask_unreachable_still_prints_sources(demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", f"http://127.0.0.1:{closed_port()}", "--model", "m")
    assert proc.returncode == 3
    assert "Could not connect to the LLM server" in proc.stderr and "connection refused" in proc.stderr
    assert_sources(proc.stdout, expected_passages)


def test_ask_lists_each_passage_once_with_its_citation_number(fake_server, demo_html, expected_passages):
    """In a small context window: [n] is the number the passage has in the prompt (so the
    answer's [n] finds it), [-] marks the passages not sent, and a cut top passage says so.
    The passages are those of the search sized to the window (passage_budget)."""
    from sphinx_rag.llm.prompt import llm_passage, passage_budget
    from sphinx_rag.search.retrieve import Searcher

    searcher = Searcher(demo_html)
    scored = searcher.ranking(QUESTION)[0]

    def passages_at(budget: int) -> list:
        sized = passage_budget(QUESTION, 8, project="mlkit", max_context_tokens=budget)
        return [llm_passage(r) for r in searcher.passages(scored, 8, sized)]

    def sent_at(budget: int) -> list:
        return build_messages(QUESTION, passages_at(budget), project="mlkit", max_context_tokens=budget).passages

    def ranks(budget: int) -> list[int]:
        ids = [r.id for r in passages_at(budget)]
        return [ids.index(p.id) for p in sent_at(budget)]

    budgets = range(500, 4096, 10)
    with_gap = next(b for b in budgets if ranks(b) and ranks(b) != list(range(len(ranks(b)))))  # renumbered
    top_cut = next(b for b in budgets if sent_at(b) and sent_at(b)[0].text != passages_at(b)[0].text)
    assert passages_at(with_gap) != expected_passages  # sized to the small window
    for budget in (with_gap, top_cut):
        proc = ask(demo_html, "--endpoint", fake_server, "--model", "normal", "--project", "mlkit",
                   "--max-context-tokens", str(budget))
        assert proc.returncode == 0, proc.stderr
        results = passages_at(budget)
        sent = {p.id: (n, p) for n, p in enumerate(sent_at(budget), start=1)}
        user = last_request(fake_server)["messages"][-1]["content"]
        listing = proc.stdout.split("\n\n", 1)[0].splitlines()
        assert listing[0] == "Retrieved passages:" and len(listing) == 1 + len(results)
        for line, r in zip(listing[1:], results):
            if r.id in sent:
                n, p = sent[r.id]
                cut = f"  (cut to fit max_context_tokens={budget})" if p.text != r.text else ""
                assert line == f"[{n}] {r.title} \u2014 {r.url}{cut}"
                assert f"[{n}] {r.title} ({r.url})\n{p.text.strip()[:80]}" in user
            else:
                assert line == f"[-] {r.title} \u2014 {r.url}  (not sent: does not fit in max_context_tokens={budget})"
        assert f"[{len(sent) + 1}] " not in user and proc.stdout.count("\u2014") == len(results)


def test_ask_without_endpoint_is_a_usage_error(demo_html):
    proc = ask(demo_html)
    assert proc.returncode == 2 and "--endpoint" in proc.stderr and "sphinx_rag_llm" in proc.stderr


def test_ask_defaults_from_the_manifest(fake_server, demo_html, expected_passages, tmp_path):
    """endpoint, model, project and prompt come from manifest["settings"]["llm"] of the site."""
    src = demo_html / ASSET_DIR
    dst = tmp_path / ASSET_DIR
    dst.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file():
            shutil.copy(f, dst / f.name)
        else:  # the model directory
            (dst / f.name).symlink_to(f, target_is_directory=True)
    manifest = json.loads((dst / "manifest.json").read_text())
    prompt = "Custom prompt for {project}.\n---\n{passages}\nQUESTION: {question}"
    manifest["settings"]["llm"] = browser_settings(
        {"endpoint": fake_server, "model": "normal", "prompt": prompt}, "mlkit")
    (dst / "manifest.json").write_text(json.dumps(manifest))
    proc = ask(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert_sources(proc.stdout, expected_passages)
    body = last_request(fake_server)
    assert body["messages"][0] == {"role": "system", "content": "Custom prompt for mlkit."}
    assert body["messages"][1]["content"].endswith("QUESTION: " + QUESTION)


def test_fit_passages_skips_a_long_passage_and_keeps_the_next():
    """A huge second passage does not stop the smaller third from being sent."""
    results = [passage(1), passage(2, sentences=400), passage(3)]
    budget = estimate_tokens(format_passages([results[0], results[2]])) + 5
    kept = fit_passages(results, budget, 0)
    assert [p["title"] for p in kept] == ["Title 1", "Title 3"]
    huge_first = [passage(1, sentences=400), passage(2), passage(3)]
    kept = fit_passages(huge_first, 300, 0)  # the top one cut to fit, then the others if they still do
    assert kept[0]["title"] == "Title 1" and kept[0]["text"] != huge_first[0]["text"]
    assert estimate_tokens(format_passages(kept)) <= 300


# -- hostile servers ----------------------------------------------------------------------------

def other_requests(base: str) -> list:
    """What the fake server's other host (where its redirects point) has received."""
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{base}/_other_requests") as r:
        return json.load(r)


@pytest.mark.parametrize("status", [307, 302])
def test_a_redirect_is_refused_and_named(fake_server, status):
    """Nothing goes to the host a redirect points to; the error names the redirect and that host."""
    before = other_requests(fake_server)
    msgs = [{"role": "user", "content": "[1] T (u)\nsecret question"}]
    with pytest.raises(client.LLMRedirect) as exc:
        client.stream_chat(f"{fake_server}/redirect{status}/v1", "normal", msgs, timeout=30)
    other = exc.value.location.split("/v1/")[0].removeprefix("http://")
    assert exc.value.status == status and other.startswith("127.0.0.1:") and other not in fake_server
    assert f"answered HTTP {status} " in str(exc.value) and f"a redirect to another host, {other} " in str(exc.value)
    with pytest.raises(client.LLMRedirect, match=f"HTTP {status} .*{other}"):
        client.list_models(f"{fake_server}/redirect{status}/v1")
    assert other_requests(fake_server) == before


@pytest.mark.parametrize("status", [307, 302])
def test_ask_reports_a_redirect_in_one_line(fake_server, demo_html, expected_passages, status):
    before = other_requests(fake_server)
    for model in (("--model", "normal"), ()):  # POST /chat/completions; GET /models (no model given)
        proc = ask(demo_html, "--endpoint", f"{fake_server}/redirect{status}/v1", *model)
        assert proc.returncode == 3 and proc.stderr.count("\n") == 1, proc.stderr
        assert re.match(rf"\[sphinx-rag\] The LLM server at {fake_server}/redirect{status}/v1 answered HTTP "
                        rf"{status} \w[\w ]+, a redirect to another host, 127\.0\.0\.1:\d+ \(", proc.stderr)
        assert "sphinx-rag follows no redirect, so nothing was sent there" in proc.stderr
        assert "invalid JSON" not in proc.stderr
        assert_sources(proc.stdout, expected_passages)
    assert other_requests(fake_server) == before


TERMINAL_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_ask_strips_escape_sequences_from_pages_answer_and_errors(fake_server, hostile_site):
    """Hostile titles in the passage list, escapes cut across tokens in the streamed answer,
    and one in the server's error message: none reaches the terminal."""
    proc = subprocess.run([sys.executable, "-m", "sphinx_rag", "ask", str(hostile_site), "zorblax", "--endpoint",
                           f"{fake_server}/escapes/v1", "--model", "m"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3
    assert not TERMINAL_CONTROLS.search(proc.stdout + proc.stderr), repr(proc.stdout + proc.stderr)
    assert "[1] Escapes  zorblax page > Clear  section \u2014 escapes.html#" in proc.stdout
    assert proc.stdout.endswith("\n\nThe answer is 42 [1]. See the docs or evil text in red.\n")
    assert proc.stderr == (f"[sphinx-rag] The LLM server at {fake_server}/escapes/v1 reported an error while "
                           "answering: model failed  badly\n")
    assert "PWNED" not in proc.stdout + proc.stderr and "evil.example" not in proc.stdout


def test_the_answer_cap_ends_an_endless_stream(fake_server):
    msgs = [{"role": "user", "content": "[1] T (u)\nx"}]
    tokens = []
    with pytest.raises(client.LLMAnswerTooLong) as exc:
        client.stream_chat(fake_server, "huge", msgs, timeout=30, max_chars=2500, on_token=tokens.append)
    assert len(exc.value.partial) == 2500 and "".join(tokens) == exc.value.partial
    assert "cut at 2,500 characters (the max_answer_chars setting)" in str(exc.value)
    assert client.stream_chat(fake_server, "md3000", msgs, timeout=30, max_chars=3000)  # exactly the cap: whole


def test_ask_cuts_a_50_mb_answer_at_the_cap(fake_server, demo_html, expected_passages):
    """The default cap (20,000 characters), then --max-answer-chars: the answer stops there with a
    note, the connection is closed (the server sent a small part of its 50 MB)."""
    for flag, cap in (((), 20_000), (("--max-answer-chars", "5000"), 5000)):
        proc = ask(demo_html, "--endpoint", fake_server, "--model", "huge", *flag)
        assert proc.returncode == 3
        assert len(answer_of(proc.stdout)) == cap
        assert proc.stderr == (f"[sphinx-rag] The answer was cut at {cap:,} characters (the max_answer_chars "
                               "setting): the server did not end it.\n")
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{fake_server}/_last_stream") as r:
            stream = json.load(r)
        assert stream["mode"] == "huge" and not stream["complete"] and stream["sent"] < 10_000_000, stream


def test_ask_a_question_cut_in_an_emoji(fake_server, demo_html):
    """Undecodable argv bytes (half an emoji) in the question: U+FFFD, not a traceback."""
    proc = subprocess.run([sys.executable, "-m", "sphinx_rag", "ask", os.fsencode(demo_html),
                           QUESTION.encode() + b" \xf0\x9f\x8e", "--endpoint", fake_server, "--model", "normal"],
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr == b"" and b"answers this [1]" in proc.stdout
    assert last_request(fake_server)["messages"][-1]["content"].endswith(QUESTION + " \ufffd")


def test_ask_into_a_closed_pipe_exits_quietly(fake_server, demo_html):
    """`sphinx-rag ask ... | head -3`: the reader goes away while the answer streams; no
    traceback, and no false "connection to the LLM server broke"."""
    proc = subprocess.Popen([sys.executable, "-m", "sphinx_rag", "ask", str(demo_html), QUESTION, "--endpoint",
                             fake_server, "--model", "slow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while proc.stdout.readline() not in (b"\n", b""):  # the passage list, up to its blank line
        pass
    proc.stdout.close()  # the answer (after 1.5 s) finds no reader
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141, stderr
    assert stderr == ""


# -- Ask's extra calls: multi-query and filtering (llm/context.py) against the fake server --------

def requests_log(base: str) -> list[dict]:
    with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(f"{base}/_requests") as r:
        return json.load(r)


def test_complete_chat_returns_the_reply_and_the_server_usage(fake_server):
    from sphinx_rag.llm.judge import judge_messages
    from sphinx_rag.llm.multi_query import parse_queries, rewrite_messages

    question = "How do I impute missing values with the median?"
    reply, usage = client.complete_chat(fake_server, "normal", rewrite_messages(question, "mlkit"), max_tokens=128)
    assert parse_queries(reply, question) == ["impute missing values", "median values missing"]
    assert usage["completion_tokens"] == len(reply.split()) and usage["prompt_tokens"] > 40
    body = last_request(fake_server)
    assert body["stream"] is False and body["max_tokens"] == 128 and body["temperature"] == 0.0
    reply, usage = client.complete_chat(fake_server, "nousage", judge_messages(question, "Missing values", "The median of each "
                                        "column fills missing values.", "mlkit"), max_tokens=8)
    assert (reply, usage) == ("Yes.", None)
    with pytest.raises(client.LLMHTTPError, match="out of memory"):
        client.complete_chat(fake_server, "error500", rewrite_messages(question, "p"), max_tokens=8)
    with pytest.raises(client.LLMRedirect):
        client.complete_chat(fake_server, "redirect307", rewrite_messages(question, "p"), max_tokens=8)
    with pytest.raises(client.LLMUnreachable):
        client.complete_chat(f"http://127.0.0.1:{closed_port()}", "m", rewrite_messages(question, "p"), max_tokens=8)


def test_ask_with_multi_query_and_filtering_reports_every_call(fake_server, demo_html):
    before = len(requests_log(fake_server))
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "normal", "--multi-query", "--filter-passages",
               question="How do I replace missing values with the mean of each column?")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # the rewrite: its queries (the fake's, read from its sloppy list), time and the server's tokens
    assert re.match(r"Search queries \(the model rewrites the question\):\n  replace missing values \| column each "
                    r"mean  \(\d+\.\d\d s, \d+\+\d+ tokens\)\n", out), out
    # then one verdict per passage, each with its time and tokens
    heading = "Relevance (the model judges each passage, one call each):\n"
    verdicts = re.findall(r"^  (yes|no)  +(.+?)  \(\d+\.\d\d s, \d+\+\d+ tokens\)$", out.split(heading, 1)[1], re.M)
    log = requests_log(fake_server)[before:]
    assert [r["kind"] for r in log] == ["rewrite"] + ["judge"] * len(verdicts) + ["answer"] and len(verdicts) == 8
    assert [r["max_tokens"] for r in log[:2]] == [128, 8] and not any(r["stream"] for r in log[:-1])
    assert {v for v, _ in verdicts} == {"yes", "no"}
    # the rejected passages are listed as such and not sent
    listing = out.split("Retrieved passages:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    rejected = [line for line in listing if line.endswith("(not sent: judged not relevant)")]
    assert len(rejected) == sum(v == "no" for v, _ in verdicts) and len(listing) == 8
    user = last_request(fake_server)["messages"][-1]["content"]
    assert user.count("\n[") + user.startswith("[") == 8 - len(rejected)  # "[n] Title (URL)" lines
    assert "answers this [1]" in out


def test_ask_falls_back_when_the_model_gives_no_query_nor_verdict(fake_server, demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "noqueries", "--multi-query", "--filter-passages")
    assert proc.returncode == 0, proc.stderr
    assert "\n  none usable: the question alone  (" in proc.stdout
    assert proc.stdout.count("  kept (neither yes nor no) ") == 8
    listing = "\n".join(f"[{n}] {r.title} \u2014 {r.url}" for n, r in enumerate(expected_passages, start=1))
    assert "Retrieved passages:\n" + listing + "\n\n" in proc.stdout  # the question's own passages, all sent
    # no usage from the server: the tokens are estimated
    proc = ask(demo_html, "--endpoint", fake_server, "--model", "nousage", "--multi-query")
    assert proc.returncode == 0 and re.search(r"\d+\+\d+ tokens \(estimated\)\)\n", proc.stdout), proc.stdout


def test_ask_extra_calls_to_a_stopped_server_end_in_the_answer_error(demo_html, expected_passages):
    proc = ask(demo_html, "--endpoint", f"http://127.0.0.1:{closed_port()}", "--model", "m", "--multi-query",
               "--filter-passages")
    assert proc.returncode == 3
    assert re.search(r"^  failed after \d+\.\d\d s: Could not connect", proc.stdout, re.M)
    assert "Relevance" not in proc.stdout  # no judging after a failed call
    assert "Could not connect to the LLM server" in proc.stderr


# -- Ask as a conversation (llm/thread.py; tests/fixtures/ask_thread.json pins the JS side) ----------

def test_a_follow_up_reads_the_earlier_turns_before_its_own_question():
    from sphinx_rag.llm.thread import MAX_THREAD_TURNS

    thread = [{"question": f"Question {n}?", "answer": f"Answer {n} [1][2].\n\nFollow-up questions:\n- Next {n}?"}
              for n in range(5)]
    built = build_messages("And then?", [passage(1)], project="p", thread=thread)
    roles = [m["role"] for m in built.messages]
    assert roles == ["system"] + ["user", "assistant"] * MAX_THREAD_TURNS + ["user"]
    assert [m["content"] for m in built.messages[1:-1]] == [
        "Question 2?", "Answer 2.", "Question 3?", "Answer 3.", "Question 4?", "Answer 4."]  # citations, follow-ups off
    assert built.messages[-1]["content"].endswith("Question: And then?")
    # the earlier turns count in the reserve: the passages get what they leave
    assert (passage_budget("And then?", 8, project="p", thread=thread)
            < passage_budget("And then?", 8, project="p"))
    # a custom template without a system message: the turns come first
    custom = build_messages("q?", [passage(1)], project="p", prompt="{passages}\nQ: {question}", thread=thread[-1:])
    assert [m["role"] for m in custom.messages] == ["user", "assistant", "user"]


def test_the_thread_is_bounded_by_characters_and_by_the_window():
    from sphinx_rag.llm.thread import MAX_THREAD_CHARS, MAX_TURN_ANSWER_CHARS, history

    prose = "This sentence is long enough to count. " * 60  # 2,340 characters
    assert [a for _, a in history([{"question": "q?", "answer": prose}], 8192)] == [
        prose[:MAX_TURN_ANSWER_CHARS].rsplit(". ", 1)[0] + ". …"]  # cut after a whole sentence
    long = "word " * 600  # no sentence end: cut at MAX_TURN_ANSWER_CHARS
    thread = [{"question": "First?", "answer": long}, {"question": "Second?", "answer": long},
              {"question": "Third?", "answer": long}]
    turns = history(thread, 8192)
    assert [q for q, _ in turns] == ["Second?", "Third?"]  # three cut answers pass MAX_THREAD_CHARS
    assert all(len(a) == MAX_TURN_ANSWER_CHARS + 1 and a.endswith("word …") for _, a in turns)
    assert sum(len(q) + len(a) for q, a in turns) <= MAX_THREAD_CHARS
    assert [q for q, _ in history(thread, 1600)] == ["Third?"]  # a quarter of the room after the answer's
    assert history(thread, 600) == [] and history([None, {"question": "q"}, "x"], 4096) == []


def test_a_follow_up_is_searched_with_the_thread_and_the_rewrite_sees_it():
    from sphinx_rag.llm.context import gather_context
    from sphinx_rag.llm.thread import thread_query

    thread = [{"question": "How do I impute missing values?", "answer": "Use SimpleImputer."},
              {"question": "Which strategies are there?", "answer": "mean, median, most_frequent, constant."}]
    assert thread_query(thread, "And the median?") == ("How do I impute missing values? Which strategies are there? "
                                                       "And the median?")
    assert thread_query([], "Alone?") is None
    searched, calls = [], []

    def complete(messages, max_tokens):
        calls.append(messages)
        return ("median imputation" if messages[0]["content"].startswith("You write") else "yes"), None

    context = gather_context("And the median?", lambda qs: searched.append(qs) or [passage(1)], project="p",
                             complete=complete, multi_query=True, filter_passages=True, thread=thread)
    assert searched == [["And the median?", thread_query(thread, "And the median?"), "median imputation"]]
    assert context.queries == searched[0]
    assert "Earlier questions:\n- How do I impute missing values?\n- Which strategies are there?" in calls[0][1]["content"]
    assert calls[1][1]["content"].startswith("Question: How do I impute missing values? Which strategies")


@pytest.mark.parametrize("reply, answer, questions", [
    ("Use it [1].\n\nFollow-up questions:\n- How?\n- **Why not?**\n- \"When?\" [2]\n- Fourth?",
     "Use it [1].", ["How?", "Why not?", "When?"]),
    ("Use it.\n\n### Suggested follow-up questions\n1. Is it fast?\n2. Is it fast?", "Use it.", ["Is it fast?"]),
    ("Use it.\nFollow-up questions:\nThe docs say more; read them.", None, []),  # prose: none, text kept
    ("Use it.\nFollow-up questions:\n- not a question\n- " + "x" * 300 + "?", "Use it.", []),
    ("Use it, no list.", None, []),
    ("", "", []),
])
def test_suggested_follow_ups_are_parsed_defensively(reply, answer, questions):
    from sphinx_rag.llm.thread import parse_follow_ups

    assert parse_follow_ups(reply) == (reply if answer is None else answer, questions)


def test_the_default_prompt_asks_for_follow_ups_in_the_form_parsed():
    from sphinx_rag.llm.thread import parse_follow_ups

    assert 'a line "Follow-up questions:", then one question per line, each starting with "- "' in DEFAULT_PROMPT
    assert parse_follow_ups("A.\nFollow-up questions:\n- Why B?") == ("A.", ["Why B?"])
