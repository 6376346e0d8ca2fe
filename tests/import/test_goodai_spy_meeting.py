"""Imported spy_meeting tests carry the reference's other meanings, so answers that hedge across meetings are
penalised as the reference penalises them (a third per confused topic here; the reference takes one third off once)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._authoring.example import TestExample
from ltm_harness._interop.goodai import import_goodai
from ltm_harness._interop.goodai_converters import SPY_REFERENCE_MEANINGS, spy_rivals

QUESTION = ("Given the clandestine messages you have received, tell me as specifically as you can, when and where a "
            "meeting is going to happen and what you should bring.")
# A made-up test in the reference's v3 format (its templates, its codes and keyword lists).
TEST = {
    "script": ["You will be given three messages from different people Wren Talbot, Ines Okafor, and Milo Brandt.",
               "Ines Okafor: We will rendezvous where the apples grow.",
               "Milo Brandt: Bring to the meeting a way to get across a river.",
               "Wren Talbot: The time we will meet is when the sun is high.", QUESTION],
    "is_question": [False, False, False, False, True],
    "waits": [{"percentage_finished": 22.5}, {"percentage_finished": 45.0}, {"percentage_finished": 67.5},
              {"percentage_finished": 90.0}, {}],
    "expected_responses": [["orchard"], ["boat", "bridge", "raft", "kayak"], ["noon", "midday"]],
    "can_be_interleaved": True, "is_temporal": False, "uses_callback": False,
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> TestExample:
    root = tmp_path_factory.mktemp("ref")
    (root / "Spy Meeting").mkdir()
    (root / "Spy Meeting" / "0.def.json").write_text(json.dumps(TEST))
    result = import_goodai(root, root / "results", "spy", span=4000)
    path = result.run_dir / "definitions" / "spy_meeting" / "0.def.json"
    return TestExample.model_validate_json(path.read_text())


def test_imported_tests_carry_the_other_meanings_of_each_topic(imported):
    assert imported.extra["topics"] == ["place", "thing", "time"]
    place, thing, time = imported.extra["rivals"]
    assert "orchard" not in place and {"shore", "port", "factory"} <= set(place)
    assert not {"boat", "kayak"} & set(thing) and {"car", "passport", "key"} <= set(thing)
    assert not {"noon", "midday"} & set(time) and {"dawn", "sunset", "midnight"} <= set(time)


@pytest.mark.parametrize("reply, expected", [
    # right
    ("At noon, in the orchard; bring a boat.", 1.0),
    ("Time: midday. Place: the orchard. Bring: a kayak or a raft.", 1.0),
    # wrong: a meaning of another meeting's code instead of this one's
    ("At sunset on the beach; bring a passport.", 0.0),
    ("At dawn, in the orchard, with a boat.", 2 / 3),
    # hedging across meetings: this meeting's meaning and another's for the same topic
    ("At noon or maybe at sunset, in the orchard; bring a boat.", 2 / 3),
    ("In the orchard, or was it the docks? At noon, with a kayak.", 2 / 3),
    ("At noon or midnight, in the orchard or at the port; bring a boat or a car.", 0.0),
])
def test_imported_answers_are_scored_with_the_other_meanings(imported, reply, expected):
    ds = known_datasets()["spy_meeting"]()
    score, _, reasons = ds.evaluate_example(imported, imported.questions, [reply])
    assert score == pytest.approx(expected), reasons


def test_a_hedge_is_reported_as_confusion(imported):
    ds = known_datasets()["spy_meeting"]()
    _, _, reasons = ds.evaluate_example(imported, imported.questions, ["At noon or maybe at sunset, in the orchard, a boat."])
    assert any("also 'sunset' (confused)" in r for r in reasons), reasons


def test_rivals_never_hold_an_accepted_meaning():
    for topic, meanings in SPY_REFERENCE_MEANINGS.items():
        for m in meanings:
            assert m not in spy_rivals(topic, [m.upper()])
    assert spy_rivals("unknown", ["x"]) == []
