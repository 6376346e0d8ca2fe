"""The locations_directions dataset: the agent's route is read into moves and walked on the map."""

from __future__ import annotations

import re
import sys

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config
from ltm_harness._scoring.verdict import JudgeUnparseable, JudgeVerdict

LocationsDirections = known_datasets()["locations_directions"]
mod = sys.modules[LocationsDirections.__module__]
STEP = {"North": (0, 1), "South": (0, -1), "East": (1, 0), "West": (-1, 0)}
LINE = re.compile(r"(?P<d>\d) km (?:to the )?(?P<dir>North|South|East|West)")

# A town: Park at (0, 0), Museum 3 N, Library 4 E of it, Cinema 1 S of that: the Cinema is at (4, 2).
MOVES = [[3, "North"], [4, "East"], [1, "South"]]
ROUTE = ("From the Park go 3 km North to the Museum.\nFrom the Museum go 4 km East to the Library.\n"
         "From the Library go 1 km South to the Cinema.")


class FakeJudge:
    model = "fake-judge"

    def __init__(self, score: float = 1.0) -> None:
        self.score, self.calls = score, []

    async def grade(self, question, expected, response, *, context=""):
        self.calls.append((question, expected, response, context))
        return JudgeVerdict(question=question, score=self.score, reason="fake", model=self.model,
                            prompt_hash="0" * 16, raw="")


def example():
    ds = LocationsDirections()
    script = ["There is the Park.", "Museum.", "Library.", "Cinema.", "How do I get from the Park to the Cinema?"]
    return ds, ds.make_example(0, script, [False] * 4 + [True], [ROUTE], extra={"moves": MOVES})


def score(reply: str) -> tuple[float, list[str]]:
    ds, ex = example()
    s, max_score, reasons = ds.evaluate_example(ex, ["How?"], [reply])
    assert max_score == 1.0 and reasons
    return s, reasons


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in LocationsDirections(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_generation_is_deterministic_per_seed():
    assert dumps(3) == dumps(3)
    assert dumps(3) != dumps(4)


def test_params_are_validated():
    with pytest.raises(ValidationError):
        LocationsDirections(places=6)
    with pytest.raises(ValidationError):
        LocationsDirections(known_locations=1)
    assert LocationsDirections().params.known_locations == 6  # the v3 benchmark's value


@pytest.mark.parametrize("n", [3, 6, 9])
def test_generated_towns_and_routes(n):
    for ex in LocationsDirections(seed=n, known_locations=n).generate_examples(30):
        assert ex.is_question == [False] * n + [True]
        # Every statement after the first gives one move, which is the move the example records.
        read = [(int(m["d"]), m["dir"]) for m in (LINE.search(line) for line in ex.script[1:-1])]
        assert read == [tuple(m) for m in ex.extra["moves"]]
        places = ex.extra["places"]
        assert len(set(places)) == n and f"from the {places[0]} to the {places[-1]}" in ex.script[-1]
        x = y = 0
        spots = {(0, 0)}
        for d, direction in read:
            x, y = x + d * STEP[direction][0], y + d * STEP[direction][1]
            spots.add((x, y))
        assert len(spots) == n, "no two places on one spot"
        ds = LocationsDirections()
        assert ds.evaluate_example(ex, ["q"], ex.oracle_answers)[0] == 1.0
        assert ds.answer_statement_idx(ex) == (n - 1, len(ex.script[n - 1]))


@pytest.mark.parametrize("reply", [
    ROUTE,
    "1. Start at the Park and head north for 3 kilometres to reach the Museum.\n2. Then walk four km east to the "
    "Library.\n3. Finally go 1 km to the south and you are at the Cinema.",
    "Go 3 km North, then 4 km East, then 1 km South.",
    "Walk 4 km East and then 2 km North.",  # not via the places, but it ends at the Cinema
    ROUTE + "\nIn total the Cinema is 4 km East and 2 km North of the Park.",  # the route, then the net way
    ROUTE + "\nTo recap: 3 km North, 4 km East, 1 km South.",  # the route, then the route again
])
def test_routes_that_end_at_the_destination(reply):
    s, reasons = score(reply)
    assert s == 1.0 and "Inconclusive" not in reasons[0], reasons


@pytest.mark.parametrize("reply", [
    "Go 3 km North, then 4 km West, then 1 km South.",
    "Go 3 km South, 4 km East and 1 km North.",
    "Just walk 5 km East.",
    "Go 3 km North and 4 km East, about 6 km in all, then 2 km South.",  # a total is not a step
])
def test_routes_that_end_elsewhere_are_wrong_for_sure(reply):
    s, reasons = score(reply)
    assert s == 0.0 and "Inconclusive" not in reasons[0] and "not at the destination" in reasons[0], reasons


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "Go from the Park to the Museum, then to the Library, then to the Cinema.",  # places, no moves
    "Head north to the Museum, east to the Library and south to the Cinema.",  # directions, no distances
    "The Cinema is about 4.5 km north-east of the Park, so head north-east.",  # diagonal only
])
def test_answers_without_a_route_that_can_be_followed_are_wrong_for_sure(reply):
    # The reference turns the answer into steps of whole km in a compass direction; none can be had from these.
    s, reasons = score(reply)
    assert s == 0.0 and "Inconclusive" not in reasons[0], reasons


@pytest.mark.parametrize("reply", [
    "Go 3 km North to the Museum, which is 3 km North of the Park. Then 4 km East and 1 km South.",  # restated once
    "Head north until you reach the Museum (3 km). Walk east to the Library (4 km). Go south to the Cinema (1 km).",
    "Step 1:\n- Direction: North\n- Distance: 3 km\nStep 2:\n- Direction: East\n- Distance: 4 km\nStep 3:\n"
    "- Direction: South\n- Distance: 1 km",
    "| From | To | Direction | Distance |\n|---|---|---|---|\n| Park | Museum | North | 3 km |\n"
    "| Museum | Library | East | 4 km |\n| Library | Cinema | South | 1 km |\n\nTotal: 8 km.",
    "Go 3,000 metres north, 4 km east and 1000 m south.",  # mixed units
    "3 km N, then 4 km E, then 1 km S.",
    "Go 3 km (1.9 miles) north, 4 km (2.5 miles) east, 1 km (0.6 miles) south.",  # conversions in brackets
    ROUTE + "\nTo come back, go 1 km North, 4 km West and 3 km South.",  # then the way back
    '[{"direction": "North", "km": 3}, {"direction": "East", "km": 4}, {"direction": "South", "km": 1}]',
])
def test_route_styles_the_rules_read(reply):
    s, reasons = score(reply)
    assert s == 1.0 and "Inconclusive" not in reasons[0], reasons


@pytest.mark.parametrize("reply, guess", [
    ("Go 3 km North, 4 km East, 1 km South. Then 2 km West to get a coffee.", 0.0),  # reaches it, then goes on
    ("Go 2 km north-east, then 2 km East.", 0.0),
    ("Walk 1.9 miles north, 2.5 miles east and 0.6 miles south.", 0.0),  # a unit the town is not measured in
    ("| Direction | Distance (km) |\n|---|---|\n| North | 3 |\n| East | 4 |\n| South | 1 |", 0.0),  # no unit by the numbers
])
def test_borderline_routes_are_inconclusive(reply, guess):
    s, reasons = score(reply)
    assert s == guess and "Inconclusive by rules; no judge" in reasons[0], reasons


def test_the_reference_s_expected_route_is_understood():
    expected = ("(Just an example, if exact instructions are followed)\nFrom Park, go 3km North to Museum.\n"
                "From Museum, go 4km East to Library.\nFrom Library, go 1km South to Cinema.")
    ds = LocationsDirections()
    assert ds.evaluate_correct(["q"], ["North 3 km, East 4 km, South 1 km."], [expected])[0] == 1.0
    assert ds.evaluate_correct(["q"], ["North 3 km, East 4 km."], [expected])[0] == 0.0


async def test_the_judge_decides_only_what_the_rules_cannot():
    ds, ex = example()
    judge = FakeJudge(score=0.0)
    sure = await ds.evaluate_with_judge(ex, ["How?"], [ROUTE], judge)
    assert sure.score == 1.0 and not judge.calls and not sure.verdicts
    unsure = await ds.evaluate_with_judge(ex, ["How?"], ["Walk 1.9 miles north, 2.5 miles east and 0.6 miles south."], judge)
    assert unsure.score == 0.0 and len(unsure.verdicts) == 1 and len(judge.calls) == 1
    _, expected, _, context = judge.calls[0]
    assert ROUTE in expected and "4 km East and 2 km North" in expected and "ends at the last" in context


async def test_an_unparseable_verdict_propagates_for_the_base_class_to_mark_unscored():
    class Broken(FakeJudge):
        async def grade(self, *a, **k):
            raise JudgeUnparseable("garbled")

    ds, ex = example()
    with pytest.raises(JudgeUnparseable):
        await ds.evaluate_with_judge(ex, ["How?"], ["Go 2 km north-east, then 2 km East."], Broken())


async def test_oracle_scores_one_and_null_zero(tmp_path):
    cfg = make_config(["locations_directions"], span=3000, examples=3)
    summary = await run_config(cfg, tmp_path, ["oracle", "null"])
    scores = {a.agent: a.datasets[0].score for a in summary.agents}
    assert scores == {"oracle": 1.0, "null": 0.0}
