"""The shopping dataset: the final list after additions and removals, as JSON."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.example import TestExample
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

Shopping = known_datasets()["shopping"]
ITEMS = sys.modules[Shopping.__module__].ITEMS
SHARED_DEFS = Path(__file__).resolve().parents[3] / "shared" / "goodai-v3-32k-definitions" / "Shopping"
EXPECTED = [["courgette", 3], ["bottle of shampoo", 1], ["muffin", 1], ["banana", 3]]
ORACLE = json.dumps([{"item": i, "quantity": q} for i, q in EXPECTED])


def score(reply: str, expected=EXPECTED) -> float:
    s, max_score, reasons = Shopping().evaluate_correct(["What is on my list?"], [reply], expected)
    assert max_score == 1.0 and reasons
    return s


def listing(*pairs) -> str:
    return json.dumps([{"item": i, "quantity": q} for i, q in pairs])


def dumps(seed: int) -> list[dict]:
    return [e.model_dump() for e in Shopping(memory_span=2000, seed=seed).generate_examples(5)]


def replay(script: list[str]) -> dict[str, int]:
    """Re-read the generated lines independently of the generator and track the list."""
    forms = sorted(((p, s) for s, p in ITEMS), key=lambda f: -len(f[0])) + sorted(((s, s) for s, _ in ITEMS), key=lambda f: -len(f[0]))
    state: dict[str, int] = {}
    for line in script:
        item = next(s for form, s in forms if re.search(rf"\b{re.escape(form)}\b", line))
        m = re.search(r"\b(one|another|\d+)\b", line)
        q = 1 if m[1] in ("one", "another") else int(m[1])
        if re.search(r"\b(remove|off)\b", line, re.I):
            assert state.get(item, 0) >= q, f"removes more {item} than listed: {line}"
            state[item] -= q
            if not state[item]:
                del state[item]
        else:
            if "another" in line or " more " in line:
                assert item in state, f"adds more of an item not on the list: {line}"
            state[item] = state.get(item, 0) + q
    return state


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)


@pytest.mark.parametrize("changes", [1, 2, 6, 25])
def test_expected_list_is_the_true_final_list(changes):
    ds = Shopping(seed=changes, item_changes=changes)
    for ex in ds.generate_examples(30):
        assert ex.is_question == [False] * changes + [True]
        assert ex.expected_responses, "the final list is never empty"
        assert all(q > 0 for _, q in ex.expected_responses)
        assert replay(ex.script[:-1]) == {i: q for i, q in ex.expected_responses}
        assert ex.script[0].startswith(("Please add", "Could you put", "I need to buy", "Add "))


def test_removals_happen():
    lines = [line for ex in Shopping(seed=0, item_changes=10).generate_examples(20) for line in ex.script]
    assert any("off" in line or "Remove" in line for line in lines)
    assert any("another" in line or " more " in line for line in lines)


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Shopping(items=3)
    with pytest.raises(ValidationError):
        Shopping(item_changes=0)


@pytest.mark.parametrize("reply", [
    ORACLE,
    "Here's your current shopping list:\n```json\n" + json.dumps(
        [{"item": i, "quantity": q} for i, q in EXPECTED], indent=2) + "\n```",
    # capitals, plurals, another order, quantities as strings
    listing(("Bananas", "3"), ("Courgettes", 3), ("Muffin", 1), ("Bottles of shampoo", 1.0)),
    '[{"Item": "courgette", "Quantity": 3}, {"item": "bottle of shampoo", "quantity": 1}, '
    '{"item": "muffins", "quantity": 1}, {"item": "banana", "quantity": 3}]',
])
def test_right_answers(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    "[]",  # an empty list scores nothing
    "Your list has 3 courgettes, a bottle of shampoo, a muffin and 3 bananas.",  # no JSON
    '{"item": "banana", "quantity": 3}',  # an object, not a list
    listing(("carrot", 2), ("egg", 6)),
])
def test_wrong_answers(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("reply,expected", [
    # every item right plus one that is not on the list: precision 4/5
    (listing(*EXPECTED, ("carrot", 2)), (1 + 1 + 4 / 5) / 3),
    # one wrong quantity
    (listing(("courgette", 3), ("bottle of shampoo", 1), ("muffin", 1), ("banana", 2)), (1 + 3 / 4 + 1) / 3),
    # partial list, all listed items right
    (listing(("courgette", 3), ("muffin", 1)), (2 / 4 + 2 / 4 + 1) / 3),
    # not consolidated: the quantities add up, but the duplicate entry costs precision
    (listing(("courgette", 2), ("courgettes", 1), ("bottle of shampoo", 1), ("muffin", 1), ("banana", 3)),
     (1 + 1 + 4 / 5) / 3),
    # an item removed earlier still listed, with quantity 0
    (listing(*EXPECTED, ("pencil", 0)), (1 + 1 + 4 / 5) / 3),
    # quantities missing
    ('[{"item": "courgette"}, {"item": "bottle of shampoo"}, {"item": "muffin"}, {"item": "banana"}]', (1 + 0 + 1) / 3),
    # one entry that is not an object
    (json.dumps([{"item": i, "quantity": q} for i, q in EXPECTED] + ["2 carrots"]), (1 + 1 + 4 / 5) / 3),
])
def test_borderline_answers(reply, expected):
    assert score(reply) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(5))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = Shopping(seed=seed, item_changes=2 + 3 * seed)
    for ex in ds.generate_examples(20):
        saved = TestExample.model_validate_json(ex.model_dump_json())  # as read back from disk
        for e in (ex, saved):
            assert ds.evaluate_correct(e.questions, e.oracle_answers, e.expected_responses)[0] == 1.0
            assert ds.evaluate_correct(e.questions, ["I don't know."], e.expected_responses)[0] == 0.0
            assert ds.evaluate_correct(e.questions, ["[]"], e.expected_responses)[0] == 0.0


@pytest.mark.skipif(not SHARED_DEFS.is_dir(), reason="reference definitions (../shared) are not present")
def test_scores_reference_definitions():
    ds = Shopping()
    for path in sorted(SHARED_DEFS.glob("*.def.json")):
        ex = TestExample(dataset_name="shopping", example_id=path.stem, **json.loads(path.read_text()))
        reply = listing(*((i.title() + "s", q) for i, q in ex.expected_responses))
        assert ds.evaluate_correct(ex.questions, [reply], ex.expected_responses)[0] == 1.0


async def test_end_to_end(tmp_path: Path):
    summary = await run_config(make_config(["shopping"], span=2000, examples=3, seed=1), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05


# Items named with a unit noun are the item: "toilet paper rolls" are toilet paper (the reference's items are bare:
# toilet paper, soap, milk, toothpaste, leek, potato).
REF_EXPECTED = [["toilet paper", 2], ["soap", 3], ["milk", 2], ["toothpaste", 1], ["potato", 4]]


@pytest.mark.parametrize("reply", [
    listing(("toilet paper rolls", 2), ("soap bars", 3), ("bottles of milk", 2), ("tube of toothpaste", 1),
            ("potatoes", 4)),
    listing(("Rolls of Toilet Paper", 2), ("bars of soap", 3), ("milk bottles", 2), ("toothpaste tubes", 1),
            ("bag of potatoes", 4)),
    listing(("toilet paper (rolls)", 2), ("soap", 3), ("cartons of milk", 2), ("toothpaste", 1), ("potato", 4)),
    # unit nouns and a trailing comma together
    '[{"item": "toilet paper rolls", "quantity": 2}, {"item": "soap bars", "quantity": 3}, '
    '{"item": "milk", "quantity": 2}, {"item": "toothpaste", "quantity": 1}, {"item": "potatoes", "quantity": 4},]',
])
def test_right_answers_with_unit_nouns(reply):
    assert score(reply, REF_EXPECTED) == 1.0


@pytest.mark.parametrize("reply", [
    listing(("paper towels", 2), ("soap dispenser", 3)),  # other things, not a unit of the item
    listing(("bottles", 2), ("rolls", 3)),  # a unit noun alone names nothing
])
def test_wrong_answers_with_unit_nouns(reply):
    assert score(reply, REF_EXPECTED) == 0.0


@pytest.mark.parametrize("reply,expected", [
    # "bin bag" ends in a unit noun that is part of its name: "bins" are another thing
    (listing(("bins", 1)), 0.0),
    (listing(("bin bags", 1)), 1.0),
    # a tin of soup is soup, in whatever unit
    (listing(("cans of soup", 2)), 1.0),
    (listing(("soup", 2)), 1.0),
])
def test_borderline_unit_nouns_of_the_harness_s_own_items(reply, expected):
    want = [["bin bag", 1]] if "bin" in reply else [["tin of soup", 2]]
    assert score(reply, want) == pytest.approx(expected)
