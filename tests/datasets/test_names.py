"""The names dataset: the last name the user gave is the answer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

Names = known_datasets()["names"]
EXPECTED = ["Juliet"]  # the test stated Leonard, then Delphine, then Juliet


def score(reply: str, expected=EXPECTED) -> float:
    s, max_score, reasons = Names().evaluate_correct(["What is my name?"], [reply], expected)
    assert max_score == 1.0 and reasons
    return s


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in Names(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)


def test_generated_shape():
    for ex in Names(seed=3, name_changes=4).generate_examples(10):
        assert ex.dataset_name == "names"
        assert ex.is_question == [False] * 4 + [True]
        assert ex.script[-1] == "What is my name?"
        names = [n for n in sys.modules[Names.__module__].NAMES if any(n in line for line in ex.script[:-1])]
        assert len(names) == 4  # distinct names, one per statement
        assert ex.expected_responses[0] in ex.script[-2]
        assert len(ex.waits) == 5 and ex.waits[-2].percentage_finished == 90.0


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Names(colour_changes=3)
    with pytest.raises(ValidationError):
        Names(name_changes=0)
    assert Names(name_changes=1).params.name_changes == 1


@pytest.mark.parametrize("reply", [
    "Your name is Juliet.",
    "juliet",
    "You're Juliet!",
    "You asked me to call you **Juliet**.",
    "Earlier you said Leonard and then Delphine, but the latest name you gave me is Juliet.",
])
def test_right_answers(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    "Your name is Delphine.",
    "Your name is Leonard.",
    "Your name is Juliette.",  # not the same word
    "You haven't told me your name yet.",
])
def test_wrong_answers(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("reply,expected", [
    ("Your name is Juliet, or was it Delphine?", 0.0),  # an old name after the right one
    ("Juliet (you were Leonard before).", 1.0),  # the answer first, then an earlier name recalled
    ("You were Leonard before, but now you are Delphine.", 0.0),
    ("Leonard or Juliet, I am not sure.", 0.0),  # hedging, whichever comes first
    ("Juliet or Leonard, I am not sure.", 0.0),
    ("You were Leonard, then Juliet.", 1.0),  # old name first, the latest one last
    ("Juliet. Juliet!", 1.0),
])
def test_borderline_answers(reply, expected):
    assert score(reply) == expected


def test_a_name_from_outside_the_pool_is_scored_too():
    assert score("You are Terence.", ["Terence"]) == 1.0
    assert score("You are Juliet, not Terence.", ["Terence"]) == 0.0
    assert score("You are Terence, or maybe Juliet.", ["Terence"]) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = Names(seed=seed, name_changes=1 + seed)
    for ex in ds.generate_examples(20):
        assert ds.evaluate_correct(ex.questions, ex.oracle_answers, ex.expected_responses)[0] == 1.0
        assert ds.evaluate_correct(ex.questions, ["I don't know."], ex.expected_responses)[0] == 0.0


async def test_end_to_end(tmp_path: Path):
    summary = await run_config(make_config(["names"], span=2000, examples=3, seed=1), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05


@pytest.mark.parametrize("reply,expected", [
    ("Hi Delphine! You told me Leonard, then Delphine, and most recently Juliet.", 1.0),  # a greeting is no answer
    ("Hello Juliet! Your name is Delphine.", 0.0),
    ("You told me your name is Juliet (you said Leonard and Delphine before that).", 1.0),  # reported, then history
    ("Juliet was the name you used before Delphine.", 0.0),  # "before Delphine": Delphine is the later one
    ("You're Delphine — you switched to it after Juliet.", 0.0),  # "after Juliet": Juliet is the earlier one
    ("Leonard; no, Delphine; no wait — Juliet, the last one you told me.", 1.0),  # corrections take the earlier back
    ("You've given me Leonard, Delphine and Juliet. Which one would you like me to use?", 0.0),  # no answer given
])
def test_names_told_with_greetings_reports_and_corrections(reply, expected):
    assert score(reply) == expected


def test_a_name_stated_and_another_given_as_the_latest_is_left_to_the_judge():
    s, _, reasons = Names().evaluate_correct(["What is my name?"], ["Your name is Delphine. The latest name you gave "
                                                                    "me was Juliet."], EXPECTED)
    assert s == 0.0 and "Inconclusive by rules" in reasons[0]
