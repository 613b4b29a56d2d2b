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


def test_a_model_that_repeats_its_prompt_gives_no_query():
    # Gemma 3 270M's real reply to the rewrite prompt (scripts/real_llm_demo.py --multi-query):
    # the question again, then the prompt, cut at the token limit. It used to give three
    # "queries" (the question with a stray word, the system prompt, "Write 3 short").
    question = "What are the values of the strategy parameter in a dummy classifier?"
    system, user = (m["content"] for m in rewrite_messages(question, "mlkit"))
    reply = (f"Question: {question[:-1]} mendatang\n{system}\n\n{user}\n{system}\n\nWrite 3 short")
    assert parse_queries(reply, question) == []
    assert parse_queries(f"**User:** {question}\nstrategy parameter DummyClassifier", question) == [
        "strategy parameter DummyClassifier"]
    # queries that share a few of the prompt's words are still queries
    assert parse_queries("names of the DummyClassifier strategy options\nmost_frequent prior stratified",
                         question) == ["names of the DummyClassifier strategy options", "most_frequent prior stratified"]


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


# -- the context of an answer: the steps together (llm/context.py) --------------------------

def passages_for(queries):
    return [{"title": f"T{n}", "url": f"u{n}.html", "text": f"passage {n} for {' + '.join(queries)}"}
            for n in range(3)]


class FakeModel:
    """complete(messages, max_tokens): rewrites, then verdicts, from lists; records calls."""

    def __init__(self, rewrite="", verdicts=(), usage=None, fail_at=None):
        self.rewrite, self.verdicts, self.usage, self.fail_at = rewrite, list(verdicts), usage, fail_at
        self.calls = []

    def __call__(self, messages, max_tokens):
        from sphinx_rag.llm.client import LLMUnreachable

        self.calls.append((messages, max_tokens))
        if len(self.calls) == self.fail_at:
            raise LLMUnreachable("Could not connect to the LLM server")
        if "search queries" in messages[0]["content"]:
            return self.rewrite, self.usage
        return self.verdicts.pop(0), self.usage


def test_multi_query_searches_the_question_and_the_model_queries():
    from sphinx_rag.llm.context import gather_context
    from sphinx_rag.llm.multi_query import REWRITE_MAX_TOKENS

    model, searched, steps = FakeModel('1. "SimpleImputer mean"\n2. impute NaN'), [], []
    context = gather_context(QUESTION, lambda qs: searched.append(qs) or passages_for(qs), project="mlkit",
                             complete=model, multi_query=True, on_step=steps.append)
    assert searched == [[QUESTION, "SimpleImputer mean", "impute NaN"]] and context.queries == searched[0]
    assert len(model.calls) == 1 and model.calls[0][1] == REWRITE_MAX_TOKENS
    (step,) = steps
    assert step.kind == "rewrite" and step.result == ["SimpleImputer mean", "impute NaN"] and step.estimated
    assert step.prompt_tokens > 20 and step.completion_tokens == 10  # ceil(37 characters / 4)
    # the server's usage when it sends one
    model = FakeModel("impute NaN", usage={"prompt_tokens": 71, "completion_tokens": 5, "total_tokens": 76})
    step = gather_context(QUESTION, passages_for, project="p", complete=model, multi_query=True).steps[0]
    assert (step.prompt_tokens, step.completion_tokens, step.estimated) == (71, 5, False)
    # no usable query, or the call failed: the question alone
    for model in (FakeModel("Sure! Just use the mean.", verdicts=["yes"] * 3), FakeModel("x", fail_at=1)):
        searched = []
        context = gather_context(QUESTION, lambda qs, seen=searched: seen.append(qs) or passages_for(qs),
                                 project="p", complete=model, multi_query=True, filter_passages=True)
        assert searched == [[QUESTION]] and context.queries == [QUESTION]
    assert context.steps[0].error.startswith("Could not connect") and len(model.calls) == 1  # no judging after it


def test_filtering_drops_the_passages_the_model_rejects():
    from sphinx_rag.llm.context import gather_context
    from sphinx_rag.llm.judge import JUDGE_MAX_TOKENS

    model = FakeModel(verdicts=["Yes.", "No, it does not.", "Maybe"])
    context = gather_context(QUESTION, passages_for, project="p", complete=model, filter_passages=True)
    assert [p["title"] for p in context.passages] == ["T0", "T2"] and context.verdicts == [True, False, None]
    assert len(context.retrieved) == 3 and [s.kind for s in context.steps] == ["judge"] * 3
    assert all(max_tokens == JUDGE_MAX_TOKENS for _, max_tokens in model.calls)
    assert "passage 1 for" in model.calls[1][0][1]["content"]  # one passage per call
    model = FakeModel(verdicts=["no", "no", "no"])  # every one rejected: all sent
    assert len(gather_context(QUESTION, passages_for, project="p", complete=model, filter_passages=True).passages) == 3
    model = FakeModel(verdicts=["no", "no", "no"], fail_at=2)  # a failed call ends the judging, keeps the rest
    context = gather_context(QUESTION, passages_for, project="p", complete=model, filter_passages=True)
    assert [p["title"] for p in context.passages] == ["T1", "T2"] and len(model.calls) == 2
    # off, or no endpoint (complete None): no call, the passages as searched
    assert gather_context(QUESTION, passages_for, project="p", multi_query=True, filter_passages=True).steps == []
