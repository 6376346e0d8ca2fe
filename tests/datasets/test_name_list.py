"""The name_list dataset: every name the user gave, as a JSON list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.example import TestExample
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

NameList = known_datasets()["name_list"]
SHARED_DEFS = Path(__file__).resolve().parents[3] / "shared" / "goodai-v3-32k-definitions" / "NameList"
EXPECTED = ["Katrina", "Esther", "Oscar", "Zachary", "Gordon"]


def score(reply: str, expected=EXPECTED) -> float:
    s, max_score, reasons = NameList().evaluate_correct(["Which names?"], [reply], expected)
    assert max_score == 1.0 and reasons
    return s


def dumps(seed: int) -> list[dict]:
    return [e.model_dump() for e in NameList(memory_span=2000, seed=seed).generate_examples(5)]


def test_generation_is_deterministic_per_seed():
    assert dumps(4) == dumps(4)
    assert dumps(4) != dumps(5)


def test_generated_shape():
    for ex in NameList(seed=2, name_changes=7).generate_examples(10):
        assert ex.is_question == [False] * 7 + [True]
        assert "JSON" in ex.script[-1]
        assert len(set(ex.expected_responses)) == 7
        for name, line in zip(ex.expected_responses, ex.script):
            assert name in line  # the names in the order they were given
        assert json.loads(ex.oracle_answers[0]) == ex.expected_responses


def test_params_are_validated():
    with pytest.raises(ValidationError):
        NameList(names=5)
    with pytest.raises(ValidationError):
        NameList(name_changes=0)


@pytest.mark.parametrize("reply", [
    '["Katrina", "Esther", "Oscar", "Zachary", "Gordon"]',
    'Here are all the names you gave me:\n```json\n["Katrina", "Esther", "Oscar", "Zachary", "Gordon"]\n```\nLet me know if I missed one!',
    '["gordon", "ZACHARY", "oscar", "Esther", "katrina"]',  # order and case do not matter
    '["Katrina", "Esther", "Oscar", "Zachary", "Gordon", "Gordon"]',  # a repeat is not a new name
    '[{"name": "Katrina"}, {"name": "Esther"}, {"name": "Oscar"}, {"name": "Zachary"}, {"name": "Gordon"}]',
    '["Katrina", "Esther", "Oscar", "Zachary", "Gordon", ""]',  # a blank entry names nobody
])
def test_right_answers(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    "You told me Katrina, Esther, Oscar, Zachary and Gordon.",  # no JSON
    '{"names": ["Katrina", "Esther", "Oscar", "Zachary", "Gordon"]}',  # JSON, but not a list
    '["Katrina", "Esther", "Oscar"',  # broken JSON
    "[]",
    '["Alice", "Bob"]',
])
def test_wrong_answers(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("reply,expected", [
    ('["Katrina", "Esther", "Oscar"]', 0.6),  # partial list
    ('["Gordon"]', 0.2),  # only the latest name
    ('["Katrina", "Esther", "Oscar", "Zachary", "Gordon", "Fiona"]', 0.8),  # one hallucinated name
    ('["Katrina", "Esther", "Oscar", "Fiona"]', 0.4),
    ('["Katrina", "Esther", "Fiona", "Bob", "Carl"]', 0.0),  # more hallucinated than right: floored at 0
    ('["Katrina", "Esther", "Oscar", "Zachary", "Gordon", 42]', 0.8),  # a non-name entry is wrong too
])
def test_borderline_answers(reply, expected):
    assert score(reply) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = NameList(seed=seed, name_changes=1 + 2 * seed)
    for ex in ds.generate_examples(20):
        assert ds.evaluate_correct(ex.questions, ex.oracle_answers, ex.expected_responses)[0] == 1.0
        assert ds.evaluate_correct(ex.questions, ["I don't know."], ex.expected_responses)[0] == 0.0


@pytest.mark.skipif(not SHARED_DEFS.is_dir(), reason="reference definitions (../shared) are not present")
def test_scores_reference_definitions():
    ds = NameList()
    for path in sorted(SHARED_DEFS.glob("*.def.json")):
        raw = json.loads(path.read_text())
        ex = TestExample(dataset_name="name_list", example_id=path.stem, **raw)
        assert ds.evaluate_correct(ex.questions, [json.dumps(ex.expected_responses)], ex.expected_responses)[0] == 1.0


async def test_end_to_end(tmp_path: Path):
    summary = await run_config(make_config(["name_list"], span=2000, examples=3, seed=1), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05


# The slips LLMs make in JSON are read (JSON5, the pyjson5 package): the names are what the answer is scored on.
@pytest.mark.parametrize("reply", [
    '["Katrina", "Esther", "Oscar", "Zachary", "Gordon",]',  # trailing comma
    "['Katrina', 'Esther', 'Oscar', 'Zachary', 'Gordon']",  # single quotes
    '```json\n[\n  "Katrina",\n  "Esther",\n  "Oscar",\n  "Zachary",\n  "Gordon",\n]\n```',
    '[\n  "Katrina", // the first\n  "Esther",\n  "Oscar",\n  "Zachary",\n  "Gordon" /* the latest */\n]',  # comments
    '[{name: "Katrina"}, {name: "Esther"}, {name: "Oscar"}, {name: "Zachary"}, {name: "Gordon"},]',  # bare keys
])
def test_right_answers_with_json_slips(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "[Katrina, Esther, Oscar, Zachary, Gordon]",  # no quotes at all: not JSON, nothing is guessed
    '["Katrina", "Esther", "Oscar", "Zachary", "Gordon",',  # a list that never closes
])
def test_wrong_answers_that_are_not_json_even_leniently(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("reply,expected", [
    ("['Katrina', 'Esther', 'Fiona',]", 0.2),  # lenient JSON is scored like strict JSON: 2 right, 1 never given
    ('You gave me [several names]. Here they are: ["Katrina", "Esther",]', 0.4),  # prose in brackets is skipped
])
def test_borderline_answers_with_json_slips(reply, expected):
    assert score(reply) == pytest.approx(expected)
