"""Ask's extra LLM steps, without a server: the queries read from a small model's answer
(llm/multi_query.py), the fusion of their rankings, and the judge's verdicts (llm/judge.py)."""

from sphinx_rag.llm.judge import JUDGE_PASSAGE_CHARS, judge_messages, kept_passages, parse_verdict
from sphinx_rag.llm.multi_query import MAX_QUERIES, fuse_rankings, parse_queries, rewrite_messages

QUESTION = "How do I fill missing values with the mean?"


def test_the_rewrite_prompt_asks_for_queries_not_an_answer():
    system, user = rewrite_messages(QUESTION, "mlkit")
    assert system["role"] == "system" and "mlkit" in system["content"] and "never answer" in system["content"]
    assert user["content"].endswith(f"Question: {QUESTION}") and "one query per line" in user["content"]


def test_queries_are_read_from_sloppy_answers():
    # numbered, quoted, bold, a preamble, the same query twice
    answer = ('Here are three search queries:\n1. "SimpleImputer mean strategy"\n2. **impute missing values**\n'
              "3. SimpleImputer mean strategy")
    assert parse_queries(answer, QUESTION) == ["SimpleImputer mean strategy", "impute missing values"]
    # a numbered list on one line; labels; separators; a code fence; chatter after the list
    assert parse_queries("1. SimpleImputer 2. impute missing 3. mean", QUESTION) == ["SimpleImputer", "impute missing",
                                                                                      "mean"]
    assert parse_queries("- Query 1: `SimpleImputer`\n* Q2) 'fill NaN'", QUESTION) == ["SimpleImputer", "fill NaN"]
    assert parse_queries("SimpleImputer | impute mean; fill missing", QUESTION) == ["SimpleImputer", "impute mean",
                                                                                     "fill missing"]
    assert parse_queries("```\nSimpleImputer mean\n```\nI hope this helps!", QUESTION) == ["SimpleImputer mean"]
    # at most MAX_QUERIES, duplicates by case and punctuation dropped
    assert parse_queries("a b\nA, b?\nc\nd\ne", QUESTION) == ["a b", "c", "d"][:MAX_QUERIES]


def test_no_query_means_the_question_alone():
    assert parse_queries("", QUESTION) == []
    assert parse_queries(QUESTION, QUESTION) == []  # the question repeated
    assert parse_queries("how do i fill MISSING values with the mean", QUESTION) == []
    prose = ("Sure! You should use SimpleImputer(strategy='mean'), which replaces every missing value in each column "
             "by the mean of that column, as the documentation of the impute module explains in detail.")
    assert parse_queries(prose, QUESTION) == []


def test_rankings_are_fused_by_reciprocal_rank():
    fused = fuse_rankings([{7: 0.9, 3: 0.5}, {3: 2.0, 5: 1.0, 7: 0.1}], rrf_k=60)
    assert fused == {7: 1 / 61 + 1 / 63, 3: 1 / 62 + 1 / 61, 5: 1 / 62}
    assert fuse_rankings([{1: 1.0, 2: 1.0}]) == {1: 1 / 61, 2: 1 / 62}  # ties: the lower chunk first


def test_judge_messages_show_one_passage_cut_at_its_beginning():
    system, user = judge_messages(QUESTION, "Impute > Univariate", "  SimpleImputer {x}\n", "mlkit")
    assert "yes or no" in system["content"] and "mlkit" in system["content"]
    assert "Excerpt (Impute > Univariate):\nSimpleImputer {x}\n\n" in user["content"]
    long = judge_messages(QUESTION, "T", "word " * 1000, "p")[1]["content"]
    assert "word " * (JUDGE_PASSAGE_CHARS // 5 - 1) in long and len(long) < JUDGE_PASSAGE_CHARS + 300


def test_verdicts_read_the_first_yes_or_no():
    for reply in ("Yes", "yes.", "**Yes**", "The excerpt is relevant.", "YES! It helps"):
        assert parse_verdict(reply) is True, reply
    for reply in ("No", "no, it does not.", "Answer: no", "Not relevant.", "It is irrelevant"):
        assert parse_verdict(reply) is False, reply
    for reply in ("Maybe", "", "1", "I think so", "yesterday", "n/a"):
        assert parse_verdict(reply) is None, reply


def test_only_clear_rejections_drop_a_passage():
    assert kept_passages(["a", "b", "c"], [True, False, None]) == ["a", "c"]
    assert kept_passages(["a", "b"], [False, False]) == ["a", "b"]  # every one rejected: all sent
