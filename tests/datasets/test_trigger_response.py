"""The trigger_response dataset: reply with a set phrase whenever the trigger happens."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

TriggerResponse = known_datasets()["trigger_response"]
mod = sys.modules[TriggerResponse.__module__]
TRIGGERS = mod.TRIGGERS
PHRASE = "Stand up and stretch for a minute."


def score(replies: list[str], phrase: str = PHRASE) -> float:
    s, max_score, reasons = TriggerResponse().evaluate_correct(["I'm sleepy."] * len(replies), replies, [phrase] * len(replies))
    assert max_score == len(replies) and len(reasons) == len(replies)
    return s


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in TriggerResponse(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_the_pairs():
    assert len(TRIGGERS) >= 15
    assert len({t[1] for t in TRIGGERS}) == len(TRIGGERS)
    ds = TriggerResponse()
    for _, phrase, messages in TRIGGERS:
        assert len(messages) >= 3
        for m in messages:  # a trigger message alone (echoed) does not hold the phrase
            assert ds.evaluate_correct([m], [m], [phrase])[0] == 0.0
        for _, other, _ in TRIGGERS:  # one phrase is not mistaken for another
            if other != phrase:
                assert ds.evaluate_correct(["?"], [other], [phrase])[0] == 0.0


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)


def test_generated_shape():
    ds = TriggerResponse(seed=3)
    for ex in ds.generate_examples(20):
        phrase = ex.expected_responses[0]
        trigger, _, messages = next(t for t in TRIGGERS if t[1] == phrase)
        assert ex.script[0] == f"From now on, whenever I {trigger}, reply with: '{phrase}'"
        assert ex.is_question == [False, True, True, True]
        assert ex.expected_responses == [phrase] * 3 and ex.oracle_answers == [phrase] * 3
        assert len(set(ex.script[1:])) == 3 and set(ex.script[1:]) <= set(messages)  # three different messages
        assert [w.percentage_finished for w in ex.waits] == [30.0, 60.0, 90.0, 0.0]
        # The default answer statement is the instruction: the last statement before the first trigger.
        assert ds.answer_statement_idx(ex) == (0, len(ex.script[0]))
    ex = TriggerResponse(seed=3, triggers=5).generate_examples(1)[0]
    assert ex.is_question == [False] + [True] * 5 and len(set(ex.script[1:])) == 3  # distinct first, then repeats


def test_params_are_validated():
    with pytest.raises(ValidationError):
        TriggerResponse(trigger=3)
    with pytest.raises(ValidationError):
        TriggerResponse(triggers=0)
    assert TriggerResponse(triggers=1).generate_examples(1)[0].is_question == [False, True]


@pytest.mark.parametrize("reply", [
    PHRASE,
    "stand up and stretch for a minute",
    "Stand up, and stretch for a minute!",
    "Sure thing. 'Stand up and stretch for a minute.' You've got this.",
    "Stand up and stretch for one minute.",  # 6 of 7 words
])
def test_right_answers(reply):
    assert score([reply]) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    "You should get some rest.",
    "Stand up and stretch.",  # 4 of 7 words
    "Get up and have a stretch for a bit.",  # a paraphrase
    "Learn one new word today.",  # another pair's phrase
])
def test_wrong_answers(reply):
    assert score([reply]) == 0.0


def test_each_trigger_scores_a_point():
    assert score([PHRASE, PHRASE, PHRASE]) == 3.0
    assert score([PHRASE, "Have a nap.", PHRASE]) == 2.0
    assert score(["OK.", "I don't know.", f"{PHRASE} {PHRASE}"]) == 1.0
    assert score(["Stand up and stretch for a", "up and stretch for a minute", "stand stretch minute"]) == 2.0  # 6/7, 6/7, 3/7


@pytest.mark.parametrize("seed", range(4))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = TriggerResponse(seed=seed, triggers=1 + seed)
    for ex in ds.generate_examples(20):
        n = len(ex.questions)
        assert ds.evaluate_correct(ex.questions, ex.oracle_answers, ex.expected_responses) == (
            float(n), float(n), [f"Trigger {i}: the reply contains {ex.expected_responses[0]!r}." for i in range(1, n + 1)])
        assert ds.evaluate_correct(ex.questions, ["I don't know."] * n, ex.expected_responses)[0] == 0.0


async def test_end_to_end(tmp_path: Path):
    summary = await run_config(make_config(["trigger_response"], span=2000, examples=3, seed=1), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05
