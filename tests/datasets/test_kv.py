"""The kv dataset: the value stored under one of several keys."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._results.models import TestResult
from ltm_harness.testing import make_config, run_config

KeyValue = known_datasets()["kv"]
EXPECTED = ["484664"]  # stored under KEY-9RXD; KEY-R9HZ holds 426611


def score(reply: str, expected=EXPECTED) -> float:
    s, max_score, reasons = KeyValue().evaluate_correct(["What value is stored under key KEY-9RXD?"], [reply], expected)
    assert max_score == 1.0 and reasons
    return s


def dumps(seed: int) -> list[dict]:
    return [e.model_dump() for e in KeyValue(memory_span=2000, seed=seed).generate_examples(5)]


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)


def test_generated_shape():
    ds = KeyValue(seed=0, pairs=5)
    for ex in ds.generate_examples(20):
        assert ex.is_question == [False] * 5 + [True]
        keys = [re.search(r"KEY-[A-Z0-9]{4}", line)[0] for line in ex.script]
        values = [re.search(r"\b\d{6}\b", line)[0] for line in ex.script[:-1]]
        assert len(set(keys[:-1])) == 5 and len(set(values)) == 5
        assert keys[-1] == ex.extra["key"]
        asked = keys.index(keys[-1])
        assert values[asked] == ex.expected_responses[0]


def test_answer_statement_is_the_line_storing_the_asked_key():
    ds = KeyValue(seed=3, pairs=4)
    positions = set()
    for ex in ds.generate_examples(40):
        line, char = ds.answer_statement_idx(ex)
        assert ex.extra["key"] in ex.script[line] and ex.expected_responses[0] in ex.script[line]
        assert not ex.is_question[line] and char == len(ex.script[line])
        positions.add(line)
    assert positions == {0, 1, 2, 3}  # not always the last statement


def test_answer_statement_falls_back_without_extra():
    ex = KeyValue(seed=3).generate_examples(1)[0].model_copy(update={"extra": {}})
    assert KeyValue().answer_statement_idx(ex) == (2, len(ex.script[2]))


def test_params_are_validated():
    with pytest.raises(ValidationError):
        KeyValue(keys=3)
    with pytest.raises(ValidationError):
        KeyValue(pairs=0)


@pytest.mark.parametrize("reply", [
    "484664",
    "The value stored under key KEY-9RXD is 484664.",
    "KEY-9RXD holds **484664**.",
    "You asked me to keep `484664` under that key.",
])
def test_right_answers(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    "426611",  # another key's value
    "The value is 4846640.",  # not the whole number
    "The value is 48466.",
    "484 664",
    "The key is KEY-9RXD.",
])
def test_wrong_answers(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("reply,expected", [
    ("Either 426611 or 484664, I'm not sure which.", 1.0),  # the exact value is there
    ("484664-A", 1.0),  # whole word up to punctuation
    ("It was 484,664.", 0.0),  # formatted differently
])
def test_borderline_answers(reply, expected):
    assert score(reply) == expected


@pytest.mark.parametrize("seed", range(5))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = KeyValue(seed=seed, pairs=1 + 2 * seed)
    for ex in ds.generate_examples(20):
        assert ds.evaluate_correct(ex.questions, ex.oracle_answers, ex.expected_responses)[0] == 1.0
        assert ds.evaluate_correct(ex.questions, ["I don't know."], ex.expected_responses)[0] == 0.0


async def test_end_to_end(tmp_path: Path):
    summary = await run_config(make_config(["kv"], span=2000, examples=3, seed=1), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05
    # The gap is measured from the line storing the asked key, not from the last statement.
    results = [TestResult.model_validate(r) for r in json.loads((tmp_path / "t" / "null" / "results.json").read_text())]
    spans = {r.example_id: r for r in results}
    defs = {p.stem.removesuffix(".def"): json.loads(p.read_text()) for p in (tmp_path / "t" / "definitions" / "kv").glob("*.def.json")}
    for eid, d in defs.items():
        (gap,) = spans[eid].gaps
        pairs = len(d["script"]) - 1
        # Lines are spread evenly up to 90% of the span; the asked key was stored at line answer_line.
        expected_gap = 0.9 * 2000 * (pairs - d["extra"]["answer_line"]) / pairs
        assert abs(gap.target_tokens - expected_gap) <= 60, (eid, gap, expected_gap)


def test_a_hedge_naming_every_stored_value_scores_zero():
    ds = known_datasets()["kv"](memory_span=2000, seed=4, pairs=3)
    ex = ds.generate_examples(1)[0]
    values = ex.extra["values"]
    expected = ex.expected_responses[0]
    hedge = f"It is one of {', '.join(values)}, not sure which."
    score, _, reasons = ds.evaluate_example(ex, ex.questions, [hedge])
    assert score == 0.0 and "other stored values" in reasons[0]
    assert ds.evaluate_example(ex, ex.questions, [f"It is {expected}."])[0] == 1.0
    # An unrelated number does not count as a hedge.
    assert ds.evaluate_example(ex, ex.questions, [f"{expected}, stored at 9:00."])[0] == 1.0
