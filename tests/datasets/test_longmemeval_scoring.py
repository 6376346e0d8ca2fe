"""LongMemEval's scoring without a judge decides only what it safely can (a table of replies, right, wrong and
undecided), and the metrics are computed as the reference reports them."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ltm_harness._interop.longmemeval.data import QUESTION_TYPES, LMEQuestion
from ltm_harness._interop.longmemeval.judge import PROMPTS
from ltm_harness._interop.longmemeval.scoring import (LABELS, LMERow, abstains, metrics, normalise, rule_verdict,
                                                      score_reply)
from ltm_harness._scoring.verdict import JudgeUnparseable, JudgeVerdict

WHEN = datetime(2023, 5, 30, 23, 40, tzinfo=timezone.utc)


def question(answer: str, kind: str = "single-session-user", qid: str = "q1") -> LMEQuestion:
    return LMEQuestion(question_id=qid, question_type=kind, question="?", answer=answer, question_date=WHEN,
                       question_date_text="2023/05/30 (Tue) 23:40", sessions=[], answer_session_ids=[])


@pytest.mark.parametrize("text, normal", [
    ("Forty-two days!", "42 days"),
    ("The Salt Road", "salt road"),
    ("It cost $1,000 and 2.5 kg.", "it cost 1000 and 2.5 kg"),
    ("twenty one", "21"),
    ("ninety-nine", "99"),
    ("one of them", "one of them"),  # "one" is as often a pronoun: left alone
    ("Café in Málaga", "cafe in malaga"),
    ("I don\u2019t know", "i don t know"),
    ("An apple, a pear", "apple pear"),
])
def test_normalising(text, normal):
    assert normalise(text) == normal


@pytest.mark.parametrize("answer, reply, score", [
    ("Luna", "Your cat is called Luna.", 1.0),
    ("Luna", "luna", 1.0),
    ("The Salt Road", "I recommended the salt road, a slow and gentle novel.", 1.0),
    ("42 days", "It took forty-two days.", 1.0),
    ("4", "You have bought four kitchen gadgets.", 1.0),
    ("3", "Three.", 1.0),
    ("$75", "You spent 75 dollars at SaveMart.", 1.0),
    ("Málaga", "You moved to Malaga.", 1.0),
    ("1", "You have one cat.", None),  # "one" is not read as a number
    ("Luna", "Lunar eclipses are lovely.", None),  # whole words only
    ("Lyon", "You used to live in Lyon.", None),  # an earlier value
    ("Lyon", "You live in Leeds, not Lyon.", None),  # negation
    ("Lyon", "Lyon or Leeds, I'm not sure which.", None),  # alternatives, a hedge
    ("Lyon", "Probably Lyon.", None),
    ("Lyon", "You moved from Leeds to Lyon, but earlier you lived in Bristol.", None),
    ("4", "4 in March and 3 in April, so 7 in all.", None),  # other numbers beside the gold's
    ("42 days", "42 weeks", None),
    ("The Salt Road", "Book 2: The Salt Road", None),  # a number where the gold has none
    ("Lyon", "Lyon " + "and more words " * 30, None),  # too long to trust a mention
    ("Luna", "Your cat's name is Biscuit.", None),  # wrong, but a rule does not say so: the judge does
    ("Luna", "", 0.0),
    ("Luna", "   \n", 0.0),
])
def test_the_rule_decides_only_what_it_safely_can(answer, reply, score):
    assert rule_verdict(question(answer), reply) == score


def test_a_preference_rubric_is_never_matched_by_a_rule():
    rubric = question("The user would prefer suggestions about hiking.", "single-session-preference")
    assert rule_verdict(rubric, "The user would prefer suggestions about hiking.") is None
    assert rule_verdict(rubric, "") == 0.0


ABSTAINING = [
    "I don't know.",
    "I do not know which city that is.",
    "I'm not sure; you never told me.",
    "I don\u2019t recall you mentioning a hamster.",
    "You haven't mentioned a hamster, only your cat Luna.",
    "You did not tell me what the tickets cost.",
    "There is no information about that in our conversations.",
    "I don't have any information about your neighbourhood.",
    "That wasn't mentioned in our chats.",
    "It was never specified.",
    "There's not enough information to say how many days passed.",
    "I can't answer that: the price was not mentioned.",
    "This question cannot be answered from what you told me.",
]
ANSWERING = [
    "Your hamster is called Luna.",
    "I don't know exactly, but probably 12 days.",
    "I'm not sure, maybe Lyon?",
    "I think it was about 40 dollars; you didn't say exactly.",
    "You know it: Lyon.",
    "12 days.",
]


@pytest.mark.parametrize("reply", ABSTAINING)
def test_an_abstention_question_is_right_when_the_reply_declines(reply):
    assert abstains(reply)
    assert rule_verdict(question("You did not mention a hamster.", "multi-session", "x_abs"), reply) == 1.0


@pytest.mark.parametrize("reply", ANSWERING)
def test_a_guess_or_an_answer_to_an_abstention_question_is_left_to_a_judge(reply):
    assert not abstains(reply)
    assert rule_verdict(question("You did not mention a hamster.", "multi-session", "x_abs"), reply) is None


def test_abstention_is_told_by_the_id_not_the_type():
    explained = "You did not mention your hamster's name."
    assert rule_verdict(question(explained, "single-session-user", "7161e7e2_abs"), "I don't know.") == 1.0
    # declining an answerable question is wrong (its history holds the answer), whatever its type says
    assert rule_verdict(question(explained, "single-session-user", "7161e7e2"), "I don't know.") == 0.0
    assert rule_verdict(question(explained, "single-session-user", "abs_7161e7e2"), "I don't know.") == 0.0


class FakeJudge:
    model = "fake"

    def __init__(self, score: float | None) -> None:
        self.score = score
        self.calls: list[tuple[str, str, str, object]] = []

    async def grade(self, question, expected, response, *, context="", prompt=None):
        self.calls.append((question, expected, response, prompt))
        if self.score is None:
            raise JudgeUnparseable("neither yes nor no", "hmm")
        return JudgeVerdict(question=question, score=self.score, reason="said so", model="fake", prompt_hash="h",
                            raw="yes" if self.score else "no")


async def test_with_a_judge_every_non_blank_reply_is_judged_with_the_prompt_for_its_kind():
    judge = FakeJudge(0.0)
    q = question("Luna")
    scored = await score_reply(q, "Your cat is called Luna.", judge)  # the rule would say 1.0; the judge decides
    assert scored.score == 0.0 and scored.by == "judge" and scored.verdict is not None
    assert judge.calls == [("?", "Luna", "Your cat is called Luna.", PROMPTS["single-session-user"])]
    await score_reply(question("x", "temporal-reasoning", "t_abs"), "No idea", judge)
    assert judge.calls[-1][3] is PROMPTS["abstention"]
    blank = await score_reply(q, " ", judge)
    assert blank.score == 0.0 and blank.by == "rule" and len(judge.calls) == 2  # a blank reply costs no call


async def test_an_unparseable_verdict_is_unscored_never_wrong():
    scored = await score_reply(question("Luna"), "Luna", FakeJudge(None))
    assert scored.score is None and scored.by == "judge" and "neither yes nor no" in scored.reason


async def test_without_a_judge_the_rule_scores_or_leaves_unscored():
    assert (await score_reply(question("Luna"), "Luna.", None)).score == 1.0
    undecided = await score_reply(question("Luna"), "Biscuit.", None)
    assert undecided.score is None and undecided.by == "none" and "no judge" in undecided.reason
    assert (await score_reply(question("x", qid="a_abs"), "You never told me.", None)).score == 1.0


def test_metrics_as_the_reference_reports_them():
    rows = [
        ("single-session-user", False, 1.0), ("single-session-user", False, 0.0), ("single-session-user", True, 1.0),
        ("multi-session", False, 1.0), ("multi-session", True, 0.0), ("multi-session", False, None),
        ("temporal-reasoning", False, 0.0),
        LMERow(question_type="knowledge-update", is_abstention=False, score=1.0),
    ]
    m = metrics(rows)
    assert list(m.accuracy_by_type) == list(QUESTION_TYPES)
    assert m.accuracy_by_type["single-session-user"] == pytest.approx(2 / 3)
    assert m.accuracy_by_type["multi-session"] == 0.5  # the unscored question is left out, and counted
    assert m.accuracy_by_type["temporal-reasoning"] == 0.0 and m.accuracy_by_type["knowledge-update"] == 1.0
    assert m.accuracy_by_type["single-session-preference"] is None  # no question of the type
    assert m.task_averaged_accuracy == pytest.approx((2 / 3 + 0.5 + 0.0 + 1.0) / 4)  # unweighted over the types
    assert m.overall_accuracy == pytest.approx(4 / 7)  # weighted by questions
    assert m.abstention_accuracy == 0.5 and m.abstention_questions == 2 and m.abstention_unscored == 0
    assert m.questions == 8 and m.unscored == 1 and m.unscored_by_type["multi-session"] == 1
    assert m.questions_by_type["single-session-user"] == 3
    assert set(LABELS) <= set(type(m).model_fields)


def test_metrics_of_nothing_scored_are_none():
    m = metrics([("multi-session", True, None)])
    assert m.overall_accuracy is None and m.task_averaged_accuracy is None and m.abstention_accuracy is None
    assert m.unscored == 1 and m.abstention_unscored == 1
    with pytest.raises(Exception):
        metrics([("open-domain", False, 1.0)])


@pytest.mark.parametrize("reply", ABSTAINING)
def test_declining_an_answerable_question_is_decided_wrong(reply):
    """The history holds the answer: a reply that declines cannot be right (so an agent without memory is decided
    wrong, never left out of the rule-decided accuracy), a preference question's too."""
    assert rule_verdict(question("Paris"), reply) == 0.0
    assert rule_verdict(question("The user would prefer hiking.", "single-session-preference"), reply) == 0.0


def test_a_decline_that_guesses_or_mentions_the_answer_is_left_to_the_judge():
    assert rule_verdict(question("12 days"), "I don't know exactly, but probably 12 days.") is None
    assert rule_verdict(question("Luna"), "You haven't mentioned a hamster, only your cat Luna.") is None
    assert rule_verdict(question("Paris"), "I'm not sure, maybe Lyon?") is None
