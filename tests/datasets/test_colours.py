import sys

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

Colours = known_datasets()["colours"]


def make(seed=0, **params):
    return Colours(memory_span=1000, seed=seed, **params)


def test_generation_is_seeded():
    a, b, c = make(1).generate_examples(4), make(1).generate_examples(4), make(2).generate_examples(4)
    assert [e.model_dump() for e in a] == [e.model_dump() for e in b]
    assert [e.script for e in a] != [e.script for e in c]


def test_shape_and_params():
    assert [e.example_id for e in make().generate_examples(3)] == ["0", "1", "2"]
    ex = make(colour_changes=5).generate_examples(1)[0]
    assert len(ex.script) == 6 and ex.is_question == [False] * 5 + [True]
    assert ex.expected_responses == [ex.extra["stated"][-1]]
    assert [w.percentage_finished for w in ex.waits] == [18.0, 36.0, 54.0, 72.0, 90.0, 0.0]
    with pytest.raises(ValidationError):
        make(colour_change=2)
    with pytest.raises(ValidationError):
        make(colour_changes=0)


@pytest.mark.parametrize("reply, score", [
    ("Your favourite colour is Red.", 1),
    ("red", 1),
    ("It used to be Brown, then Cream, and now it's Red.", 1),  # history is fine if the latest comes last
    ("**Red**!", 1),
    ("Brown.", 0),  # an older colour
    ("Red, or maybe Cream.", 0),  # a rival named after it
    ("I don't know.", 0),
    ("Reddish", 0),  # not the word
    ("", 0),
])
def test_scoring(reply, score):
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": ["Brown", "Cream", "Red"]}})
    got, max_score, reasons = ds.evaluate_example(ex, ex.questions, [reply])
    assert (got, max_score) == (score, 1.0) and reasons


def test_rivals_are_the_test_s_own_colours():
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": ["Brown", "Red"]}})
    # Gold was never stated in this test, so hedging with it is not a confusion with an earlier answer.
    assert ds.evaluate_example(ex, ex.questions, ["Red, or maybe gold."])[0] == 1.0
    # evaluate_correct alone (no example) treats every known colour as a rival, as does a definition without them.
    assert ds.evaluate_correct(ex.questions, ["Red, or maybe gold."], ["Red"])[0] == 0.0
    assert ds.evaluate_example(ex.model_copy(update={"extra": {}}), ex.questions, ["Red, or maybe gold."])[0] == 0.0


# Written from the dataset's description: "the agent must give the latest one". The reply may recall the
# earlier colours (before or after the answer) as long as the colour it gives as the current one is the latest.
STATED = ["Brown", "Cream", "Red"]


@pytest.mark.parametrize("reply", [
    "Your favourite colour is Red. Earlier you told me Brown, and then Cream.",
    "Red! Before that it was Cream, and originally Brown.",
    "Your current favourite colour is Red (you previously said Brown and Cream).",
    "You told me Brown first, then Cream, and most recently Red.",
    "The last colour you told me was Red; before that, Cream.",
    "Your favourite colour is Red, not Brown or Cream.",
    "You've mentioned Brown, Cream and Red over time; the latest one is Red.",
    "It's Red now. It used to be Brown.",
    "Brown, then Cream, then Red.",
])
def test_right_answers_that_recall_earlier_colours(reply):
    assert score_of(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "Your favourite colour is Cream. Before that it was Red.",
    "Your favourite colour is Brown. Later you changed it to Cream.",
    "Cream is your favourite colour now, it used to be Red.",
    "You said Red at first, but your favourite colour is now Cream.",
    "Brown, then Red, then Cream.",
])
def test_wrong_answers_that_name_the_right_colour_as_an_old_one(reply):
    assert score_of(reply) == 0.0


@pytest.mark.parametrize("first, second", [("Red", "Cream"), ("Red", "Brown")])
@pytest.mark.parametrize("template", ["Either {} or {}.", "{}, or maybe {}.", "I'm not sure: {} or {}.",
                                      "Perhaps {}, perhaps {}."])
def test_hedging_between_two_colours_is_wrong_in_either_order(template, first, second):
    assert score_of(template.format(first, second)) == 0.0
    assert score_of(template.format(second, first)) == 0.0


@pytest.mark.parametrize("reply, expected", [
    ("Red. Red!", 1.0),  # said twice
    ("Red (not Cream).", 1.0),  # a negated rival is no hedge
    ("Brown, Cream, Red.", 1.0),  # values stated one after another, no word on which is current: the latest last
    ("Red, Cream, Brown.", 0.0),
    ("Red? Or was it Cream?", 0.0),  # a hedge across two sentences
    ("Your favourite colour is Red. You also mentioned Brown and Cream.", 1.0),  # the answer, then recalled ones
])
def test_borderline_answers(reply, expected):
    assert score_of(reply) == expected


def score_of(reply: str) -> float:
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": STATED}})
    got, max_score, reasons = ds.evaluate_example(ex, ex.questions, [reply])
    assert max_score == 1.0 and reasons
    return got


def test_oracle_answers_score_one():
    ds = make(3)
    for ex in ds.generate_examples(10):
        assert ds.evaluate_example(ex, ex.questions, ex.oracle_answers)[0] == 1.0


async def test_end_to_end(tmp_path):
    summary = await run_config(make_config(["colours"], span=1500, examples=3), tmp_path, ["oracle", "null", "retrieval"])
    score = {a.agent: a.benchmark_score for a in summary.agents}
    assert score["oracle"] == 1.0 and score["null"] == 0.0 and score["retrieval"] > 0.0


def test_the_dataset_s_own_statements_are_no_hedge():
    # "could be described as" is how a statement says the colour, not a doubt about it
    assert score_of("My favourite colour could be described as Brown. My favourite colour could be described as Red.") == 1.0


# Answers of a published reference run that the rule misread before it read histories (issue 22): each gives the
# latest colour of its test as the current one.
@pytest.mark.parametrize("stated, reply", [
    (["Brown", "Cream", "Red"], "First you said brown, then cream, and most recently red."),
    (["Magenta", "Cyan", "Purple", "Yellow"],
     "Your favourite colour is Yellow. However, you've mentioned several: Magenta, Cyan, Yellow, Purple."),
    (["Brown", "Cream", "Red"], "It was Brown, but it was changed to Cream and then Red."),
    (["Brown", "Cream", "Red"], "I think you said Cream, but then you said Red?"),
    (["Blue", "Green", "Cyan"], "You told me several colours:\n- 2024-03-01 10:02: blue\n- 2024-03-02 11:40: green\n"
                                "- 2024-03-04 09:15: cyan\nMost recently, you mentioned cyan."),
])
def test_histories_told_in_order_give_their_latest(stated, reply):
    assert verdict(reply, stated) == (1.0, True)
    # the same answer is wrong for a test whose latest colour was another of those it names
    assert verdict(reply, [stated[-1], stated[0]]) == (0.0, True)


@pytest.mark.parametrize("reply", [
    "Your favourite colour is Red. Most recently, though, you told me Cream.",  # stated, and another marked latest
    "Your favourite colour is Cream. Later you changed it to Red.",  # stated, then a change after it
    "You like Red and Cream the most right now.",
])
def test_an_answer_giving_two_colours_as_current_is_inconclusive(reply):
    assert verdict(reply, STATED) == (0.0, False)


def verdict(reply: str, stated: list[str]) -> tuple[float, bool]:
    ex = make().generate_examples(1)[0].model_copy(update={"expected_responses": [stated[-1]], "extra": {"stated": stated}})
    v = make().verdict(ex, reply)
    return v.score, v.conclusive


class FakeJudge:
    model = "fake-judge"

    def __init__(self, score: float) -> None:
        self.score, self.calls = score, []

    async def grade(self, question, expected, response, *, context=""):
        from ltm_harness._scoring.verdict import JudgeVerdict

        self.calls.append((question, expected, response, context))
        return JudgeVerdict(question=question, score=self.score, reason="fake", model=self.model,
                            prompt_hash="0" * 16, raw="")


async def test_the_judge_decides_only_the_answers_the_rule_cannot_read():
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": STATED}})
    judge = FakeJudge(score=1.0)
    sure = await ds.evaluate_with_judge(ex, ex.questions, ["Brown, then Cream, and now Red."], judge)
    assert (sure.score, sure.max_score, sure.unscored, judge.calls) == (1.0, 1.0, False, [])
    assert sure.reasons == ["'Red' is the colour the answer gives (marked as the current one)."]
    reply = "Your favourite colour is Cream. Later you changed it to Red."
    unsure = await ds.evaluate_with_judge(ex, ex.questions, [reply], judge)
    assert (unsure.score, unsure.max_score, unsure.unscored) == (1.0, 1.0, False)
    assert [v.model for v in unsure.verdicts] == ["fake-judge"]
    assert unsure.reasons == ["The answer gives both 'Red' (the end of the sequence it tells) and 'Cream' (stated as the "
                              "answer) as the current colour. Inconclusive by rules; judge fake-judge: 1 (fake)."]
    question, expected, response, context = judge.calls[0]
    assert (question, expected, response) == ("What is my favourite colour?", "Red", reply)
    assert "their colour several times" in context and "in this order: Brown, Cream, Red." in context
    # a definition without the stated values (imported): the judge is told the latest, and asked the dataset's question
    bare = ex.model_copy(update={"extra": {}})
    await ds.evaluate_with_judge(bare, [], ["Your favourite colour is Cream. Later you changed it to Red."], judge)
    assert judge.calls[1][0] == "What is my favourite colour?" and "in this order: Red." in judge.calls[1][3]
    # the question as the test asked it
    await ds.evaluate_with_judge(ex, ["Which colour do I like now?"], [reply], judge)
    assert judge.calls[2][0] == "Which colour do I like now?"
    assert (await ds.evaluate_with_judge(ex, ex.questions, ["Your favourite colour is Cream. Later you changed it to Red."],
                                         FakeJudge(score=0.0))).score == 0.0


async def test_without_a_judge_an_inconclusive_answer_is_unscored_with_the_reason():
    ds = make()
    ex = ds.generate_examples(1)[0].model_copy(update={"expected_responses": ["Red"], "extra": {"stated": STATED}})
    out = await ds.evaluate_with_judge(ex, ex.questions, ["Your favourite colour is Cream. Later you changed it to Red."], None)
    assert out.unscored and (out.score, out.max_score) == (0.0, 1.0)
    assert out.reasons == ["unscored: The answer gives both 'Red' (the end of the sequence it tells) and 'Cream' (stated "
                           "as the answer) as the current colour. Inconclusive by rules, and the run has no judge."]
    # the reference's evaluate_correct has no "unscored": it scores 0 and says why
    score, max_score, reasons = ds.evaluate_correct(ex.questions, ["Your favourite colour is Cream. Later you changed it to Red."], ["Red"])
    assert (score, max_score) == (0.0, 1.0) and reasons[0].endswith("Inconclusive by rules; 0 without a judge.")
    assert ds.evaluate_correct(ex.questions, [], ["Red"]) == (0.0, 1.0, ["'Red' is not in the answer."])
    assert ds.evaluate_correct(ex.questions, ["Red."], ["Red"]) == (1.0, 1.0, ["'Red' is the only colour in the answer."])
    assert (await ds.evaluate_with_judge(ex, ex.questions, [], None)).reasons == ["'Red' is not in the answer."]


def test_a_run_leaves_self_contradicting_answers_unscored_and_out_of_the_mean(tmp_path):
    import re

    import ltm_harness
    from ltm_harness import Agent, AgentMessage

    colour_names = sys.modules[Colours.__module__].COLOURS
    said = re.compile(r"\b(" + "|".join(colour_names) + r")\b")

    class TwoMinds(Agent):
        """Answers with the first colour it heard as the favourite, and the last as the latest."""

        def __init__(self) -> None:
            super().__init__("two-minds")
            self.heard: list[str] = []

        async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> str:
            if message.text == "What is my favourite colour?":
                first, last = self.heard[0], self.heard[-1]
                self.heard = []
                return f"Your favourite colour is {first}. Most recently, though, you told me {last}."
            if "favourite colour" in message.text or "colour I like best" in message.text:
                self.heard += said.findall(message.text)
            return "OK."

    out = ltm_harness.run(make_config(["colours"], span=1000, examples=2), agents=[TwoMinds, "oracle"], results=tmp_path)
    results = out.results("TwoMinds")
    assert [r.status for r in results] == ["unscored", "unscored"]
    assert all("Inconclusive by rules, and the run has no judge" in r.reasons[0] for r in results)
    dataset = next(d for a in out.summary.agents if a.agent == "TwoMinds" for d in a.datasets)
    assert dataset.unscored == 2


def test_a_latest_value_dataset_must_say_how_many_values_a_test_states():
    from ltm_harness._authoring.latest_value import LatestValueDataset

    class Fruit(LatestValueDataset):
        name = "fruit"
        values, statements = ["Apple", "Pear"], ["I like {}."]
        question, answer, noun = "Which fruit?", "{}.", "fruit"

    with pytest.raises(NotImplementedError, match="dataset 'fruit' must say how many values a test states"):
        Fruit().generate_examples(1)
