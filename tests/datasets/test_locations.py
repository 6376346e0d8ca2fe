"""The locations dataset: the distance and direction from the last place of a chain back to the first."""

from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config
from ltm_harness._scoring.verdict import JudgeUnparseable, JudgeVerdict

Locations = known_datasets()["locations"]
mod = sys.modules[Locations.__module__]

FIRST = re.compile(r"^In the middle of my home town there is the ([\w ]+)\.$")
# Each template, read independently of the generator: (place, km, direction, previous place).
RELATIVE = [
    re.compile(r"^The (?P<place>[\w ]+) is (?P<d>\d) km (?P<dir>\w+) of the (?P<prev>[\w ]+)\.$"),
    re.compile(r"^From the (?P<prev>[\w ]+), walk (?P<d>\d) km (?P<dir>\w+) and you reach the (?P<place>[\w ]+)\.$"),
    re.compile(r"^If you go (?P<d>\d) km (?P<dir>\w+) from the (?P<prev>[\w ]+), you will find the (?P<place>[\w ]+)\.$"),
    re.compile(r"^The (?P<place>[\w ]+) lies (?P<d>\d) km to the (?P<dir>\w+) of the (?P<prev>[\w ]+)\.$"),
    re.compile(r"^The last place I want to mention is the (?P<place>[\w ]+), (?P<d>\d) km (?P<dir>\w+) of the (?P<prev>[\w ]+)\.$"),
]
STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}


class FakeJudge:
    model = "fake-judge"

    def __init__(self, score: float = 1.0, fail: bool = False) -> None:
        self.score, self.fail, self.calls = score, fail, []

    async def grade(self, question, expected, response, *, context=""):
        self.calls.append((question, expected, response, context))
        if self.fail:
            raise JudgeUnparseable("no verdict in the reply", raw="???")
        return JudgeVerdict(question=question, score=self.score, reason="fake", model=self.model,
                            prompt_hash="0" * 16, raw=f"score: {self.score}")


def replay(script: list[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """Places and their positions, re-read from the lines."""
    places = [FIRST.match(script[0])[1]]
    positions = [(0, 0)]
    for line in script[1:]:
        m = next(p.match(line) for p in RELATIVE if p.match(line))
        assert m["prev"] == places[-1], line
        dx, dy = STEP[m["dir"]]
        x, y = positions[-1]
        places.append(m["place"])
        positions.append((x + int(m["d"]) * dx, y + int(m["d"]) * dy))
    return places, positions


def example(answer: str = "3 km West"):
    ds = Locations()
    d, r = answer.split(" km ")
    return ds, ds.make_example(0, ["In the middle of my home town there is the Museum.", "How far?"], [False, True],
                               [answer], extra={"distance": int(d), "direction": r})


def score(reply: str, answer: str = "3 km West") -> tuple[float, list[str]]:
    ds, ex = example(answer)
    s, max_score, reasons = ds.evaluate_example(ex, ["How far?"], [reply])
    assert max_score == 1.0 and reasons
    return s, reasons


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in Locations(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)
    assert dumps(1, known_locations=4) != dumps(1)


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Locations(known_location=5)
    with pytest.raises(ValidationError):
        Locations(known_locations=2)
    with pytest.raises(ValidationError):
        Locations(known_locations=len(mod.PLACES) + 1)
    assert Locations().params.known_locations == 5


@pytest.mark.parametrize("n", [3, 5, 8])
def test_the_answer_is_the_way_back_from_the_last_place(n):
    for ex in Locations(seed=n, known_locations=n).generate_examples(30):
        assert ex.is_question == [False] * n + [True]
        places, positions = replay(ex.script[:-1])
        assert len(set(places)) == n and len(set(positions)) == n, "distinct places on distinct spots"
        x, y = positions[-1]
        assert (x == 0) != (y == 0), "the last place is on an axis through the first, not on it"
        d = abs(x) + abs(y)
        direction = ("West" if x > 0 else "East") if x else ("South" if y > 0 else "North")
        assert ex.expected_responses == [f"{d} km {direction}"]
        assert ex.extra == {"distance": d, "direction": direction}
        assert f"from the {places[-1]} straight back to the {places[0]}" in ex.script[-1]
        assert Locations().answer_statement_idx(ex) == (n - 1, len(ex.script[n - 1]))
        assert score(ex.oracle_answers[0], ex.expected_responses[0])[0] == 1.0


@pytest.mark.parametrize("reply", [
    "It is 3 km West.",
    "3 kilometres to the west",
    "Go west for three km.",
    "West, 3 km.",
    "Step by step: from the Cinema you went 1 km East, then 2 km North... Adding it up, the Museum is 3 km West "
    "of the Cinema.",
    "First the Library is 2 km North. Then 4 km South.\nSo you have to walk 3 km westwards to get back.",
    "The distance is 3 km and the direction is west.",  # said apart in one sentence: read as one answer
    "It is 3,000 metres west.",
    "3 km W",
])
def test_right_answers(reply):
    s, reasons = score(reply)
    assert s == 1.0 and "Inconclusive" not in reasons[0], reasons


@pytest.mark.parametrize("reply", [
    "It is 2 km West.",
    "3 km East.",
    "Go 3 km west first. Then the answer is: 4 km North.",
    "You go 3 km north-west.",
])
def test_wrong_answers_are_wrong_for_sure(reply):
    s, reasons = score(reply)
    assert s == 0.0 and "Inconclusive" not in reasons[0], reasons


@pytest.mark.parametrize("reply, guess", [
    ("I don't know.", 0.0),
    ("The distance is 3 km. I think the direction is west, or maybe east.", 0.0),  # said apart, with two directions
    ("Either 3 km West or 3 km East.", 0.0),  # two answers in the final sentence: the last one read
    ("It is 3 km.", 0.0),
])
def test_borderline_answers_are_inconclusive_and_the_rules_guess_stands(reply, guess):
    s, reasons = score(reply)
    assert s == guess and "Inconclusive by rules; no judge" in reasons[0], reasons


def test_the_reference_s_expected_answers_are_understood():
    ds = Locations()
    assert ds.evaluate_correct(["q"], ["So: 4 km North."], ["4 km North"])[0] == 1.0
    assert ds.evaluate_correct(["q"], ["So: 4 km South."], [["4 km North"]])[0] == 0.0
    same = "They are in the same location."
    assert ds.evaluate_correct(["q"], ["Both are at the same spot, no distance at all."], [same])[0] == 1.0
    s, _, reasons = ds.evaluate_correct(["q"], ["2 km East."], [same])
    assert s == 0.0 and "Inconclusive" in reasons[0]


async def test_the_judge_decides_only_what_the_rules_cannot():
    ds, ex = example()
    judge = FakeJudge(score=1.0)
    sure = await ds.evaluate_with_judge(ex, ["How far?"], ["It is 3 km East."], judge)
    assert sure.score == 0.0 and not sure.verdicts and not judge.calls
    unsure = await ds.evaluate_with_judge(ex, ["How far?"], ["Head back towards the setting sun for three clicks."], judge)
    assert unsure.score == 1.0 and len(unsure.verdicts) == 1 and unsure.verdicts[0].model == "fake-judge"
    question, expected, response, context = judge.calls[0]
    assert expected == "3 km West" and "three clicks" in response and "back to the first" in context
    assert "judge fake-judge: 1" in unsure.reasons[0]
    alone = await ds.evaluate_with_judge(ex, ["How far?"], ["Head back towards the setting sun."], None)
    assert alone.score == 0.0 and "no judge" in alone.reasons[0]


async def test_an_unparseable_verdict_leaves_the_test_unscored():
    ds, ex = example()
    ctx = SimpleNamespace(questions=["How far?"], responses=["No idea."], judge=FakeJudge(fail=True))
    outcome = await ds.score(ex, ctx)
    assert outcome.unscored and "could not be read" in outcome.reasons[0]


async def test_oracle_scores_one_and_null_zero(tmp_path):
    cfg = make_config([{"name": "locations", "args": {"known_locations": 6}}], span=3000, examples=3)
    summary = await run_config(cfg, tmp_path, ["oracle", "null", "retrieval"])
    scores = {a.agent: a.datasets[0].score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] == 0.0 and scores["retrieval"] < 1.0
