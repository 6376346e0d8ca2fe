"""The spy_meeting dataset: three coded messages, decoded into when, where and what to bring."""

from __future__ import annotations

import re
import sys

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._scoring.rules import contains_phrase
from ltm_harness.testing import make_config, run_config
from ltm_harness._scoring.verdict import JudgeVerdict

SpyMeeting = known_datasets()["spy_meeting"]
mod = sys.modules[SpyMeeting.__module__]
LINE = {
    "time": re.compile(r"^(?P<who>[\w' -]+): We meet (?P<code>.+)\.$"),
    "place": re.compile(r"^(?P<who>[\w' -]+): The meeting place is (?P<code>.+)\.$"),
    "thing": re.compile(r"^(?P<who>[\w' -]+): Be sure to bring (?P<code>.+)\.$"),
}


class FakeJudge:
    model = "fake-judge"

    def __init__(self, score: float = 1.0) -> None:
        self.score, self.calls = score, []

    async def grade(self, question, expected, response, *, context=""):
        self.calls.append((expected, context))
        return JudgeVerdict(question=question, score=self.score, reason="fake", model=self.model,
                            prompt_hash="0" * 16, raw="")


def example():
    """Time: the rooster (dawn), place: the ships (harbour), thing: the river (boat)."""
    ds = SpyMeeting()
    codes = {topic: mod.CODES[topic][k] for topic, k in (("time", 0), ("place", 0), ("thing", 0))}
    order = ["place", "time", "thing"]
    script = ["Intro."] + [mod.LINES[t].format(who="Ada Oakes", code=codes[t][0]) for t in order] + [mod.QUESTION]
    return ds, ds.make_example(0, script, [False] * 4 + [True], [codes[t][1] for t in order], extra={
        "topics": order, "codes": [codes[t][0] for t in order],
        "rivals": [mod.rivals_of(t, codes[t][1]) for t in order]})


def score(reply: str) -> tuple[float, list[str]]:
    ds, ex = example()
    s, max_score, reasons = ds.evaluate_example(ex, [mod.QUESTION], [reply])
    assert max_score == 1.0 and len(reasons) == 3
    return s, reasons


def dumps(seed: int) -> list[dict]:
    return [e.model_dump() for e in SpyMeeting(memory_span=2000, seed=seed).generate_examples(5)]


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)


def test_takes_no_params():
    with pytest.raises(ValidationError):
        SpyMeeting(messages=4)


def test_codes_never_give_their_meanings_away():
    fixed = [mod.INTRO, mod.QUESTION] + [mod.LINES[t] for t in mod.TOPICS]
    for topic, codes in mod.CODES.items():
        assert len(codes) >= 4
        for code, meanings in codes:
            for _, other_codes in mod.CODES.items():
                for meaning in [m for _, ms in other_codes for m in ms]:
                    assert not contains_phrase(code, meaning), (code, meaning)
                    assert not any(contains_phrase(f, meaning) for f in fixed), meaning
        # Within a topic no meaning belongs to two codes (else a right answer would also be a rival).
        flat = [m.lower() for _, ms in codes for m in ms]
        assert len(flat) == len(set(flat)), topic


def test_generated_shape():
    for ex in SpyMeeting(seed=5).generate_examples(40):
        assert ex.is_question == [False] * 4 + [True] and ex.script[-1] == mod.QUESTION
        senders = re.match(r"^.* from (.+), (.+) and (.+)\. Keep", ex.script[0]).groups()
        assert len(set(senders)) == 3
        assert sorted(ex.extra["topics"]) == ["place", "thing", "time"]
        for line, topic, code, meanings, rivals in zip(ex.script[1:4], ex.extra["topics"], ex.extra["codes"],
                                                       ex.expected_responses, ex.extra["rivals"]):
            m = LINE[topic].match(line)
            assert m and m["who"] in senders and m["code"] == code
            assert (code, meanings) in mod.CODES[topic]
            assert not set(rivals) & set(meanings) and rivals
        assert {line.split(":")[0] for line in ex.script[1:4]} == set(senders)  # each sender sends one message
        assert SpyMeeting().evaluate_example(ex, ["q"], ex.oracle_answers)[0] == 1.0
        assert SpyMeeting().answer_statement_idx(ex) == (3, len(ex.script[3]))  # the last message


@pytest.mark.parametrize("reply, expected", [
    ("We meet at dawn at the harbour; bring a boat.", 1.0),
    ("Sunrise, by the docks. You need a raft or a canoe.", 1.0),
    ("At daybreak at the port. I don't know what to bring.", 2 / 3),
    ("At midday at the harbour with a boat.", 2 / 3),  # a wrong time
    ("At dawn or maybe midnight, at the harbour, with a boat.", 2 / 3),  # confused about the time
    ("I don't know.", 0.0),
])
def test_scores(reply, expected):
    s, reasons = score(reply)
    assert s == pytest.approx(expected), reasons


def test_reasons_say_which_topics_were_inconclusive():
    _, reasons = score("At dawn or maybe midnight, at the quay. Bring a ladder.")
    by_topic = dict(zip(["place", "time", "thing"], reasons))
    assert "'quay' is right" in by_topic["place"] and "Inconclusive" not in by_topic["place"]
    assert "confused" in by_topic["time"] and "Inconclusive by rules; no judge" in by_topic["time"]
    assert "'ladder' is wrong" in by_topic["thing"] and "Inconclusive" not in by_topic["thing"]


async def test_the_judge_decides_each_inconclusive_topic_alone():
    ds, ex = example()
    judge = FakeJudge(score=1.0)
    reply = "Meet when the cock crows, at the harbour, and bring something that floats."
    outcome = await ds.evaluate_with_judge(ex, [mod.QUESTION], [reply], judge)
    # place: rule-right; time and thing: no known meaning, so the judge decides them (1.0 each here).
    assert outcome.score == pytest.approx(1.0) and len(outcome.verdicts) == 2
    assert [e.split(":")[0] for e, _ in judge.calls] == ["time", "thing to bring"]
    assert "rooster crows" in judge.calls[0][1] and "dawn" in judge.calls[0][0]
    zero = await ds.evaluate_with_judge(ex, [mod.QUESTION], [reply], FakeJudge(score=0.0))
    assert zero.score == pytest.approx(1 / 3)
    sure = await ds.evaluate_with_judge(ex, [mod.QUESTION], ["dawn, harbour, boat"], judge)
    assert sure.score == 1.0 and not sure.verdicts


def test_the_reference_s_keyword_lists_score_without_extra():
    ds = SpyMeeting()
    expected = [["boat", "bridge", "raft", "kayak"], ["orchard"], ["noon", "midday"]]
    assert ds.evaluate_correct(["q"], ["At noon in the orchard, bring a kayak."], expected)[0] == 1.0
    s, _, reasons = ds.evaluate_correct(["q"], ["At noon in the orchard."], expected)
    assert s == pytest.approx(2 / 3) and "Inconclusive" in reasons[0]


async def test_oracle_scores_one_and_null_zero(tmp_path):
    summary = await run_config(make_config(["spy_meeting"], span=3000, examples=3), tmp_path, ["oracle", "null", "retrieval"])
    scores = {a.agent: a.datasets[0].score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] == 0.0 and scores["retrieval"] == 0.0  # echoing codes is no answer
