"""The sallyanne dataset: a false-belief story narrated line by line, one-word JSON answer."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._authoring.catalog import known_datasets
from ltm_harness.testing import make_config, run_config

SallyAnne = known_datasets()["sallyanne"]
mod = sys.modules[SallyAnne.__module__]
TYPES = ["theory_of_mind", "first_order", "reality", "memory"]

ENTER = re.compile(r"^On the show, (\w+) walks into the ([\w ]+)\.$")
EXIT = re.compile(r"^On the show, (\w+) leaves the ([\w ]+)\.$")
PLACED = re.compile(r"^On the show, the (\w+) (?:is|are) in the (\w+)\.$")
MOVED = re.compile(r"^On the show, (\w+) moves the (\w+) to the (\w+)\.$")
ASKED = re.compile(r"Where will (\w+) look for the (\w+)\?")


def score(reply: str, expected: str = "pantry") -> float:
    s, max_score, reasons = SallyAnne().evaluate_correct(["Where will Vera look for the kite?"], [reply], [expected])
    assert max_score == 1.0 and reasons
    return s


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in SallyAnne(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_the_lists():
    assert not set(mod.CONTAINERS) & set(mod.ROOMS)
    assert all(re.fullmatch(r"[a-z]+", c) for c in mod.CONTAINERS)  # the answer is one word
    assert len(set(mod.PEOPLE)) == len(mod.PEOPLE) >= 3


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)
    assert dumps(1) != dumps(1, question_type="reality")


def test_params_are_validated():
    with pytest.raises(ValidationError):
        SallyAnne(questions="reality")
    with pytest.raises(ValidationError):
        SallyAnne(question_type="second_order")
    assert SallyAnne().params.question_type == "theory_of_mind"


def parse(ex):
    """Replay the story: where the object is, who was in the room at the move, which line gave what."""
    lines = ex.script[1:-1]
    placed = [i for i, l in enumerate(lines) if PLACED.match(l)]
    moved = [i for i, l in enumerate(lines) if MOVED.match(l)]
    assert len(placed) == 1 and len(moved) == 1
    first = PLACED.match(lines[placed[0]]).group(2)
    mover, _, second = MOVED.match(lines[moved[0]]).groups()
    room = None
    present: set[str] = set()
    for i, line in enumerate(lines):
        if i == moved[0]:
            break
        if m := ENTER.match(line):
            who, where = m.groups()
            if i < placed[0] and who == mover:
                room = where
            present.add(f"{who}@{where}")
        elif m := EXIT.match(line):
            present.discard(f"{m.group(1)}@{m.group(2)}")
    return lines, placed[0] + 1, moved[0] + 1, first, second, mover, room, present


@pytest.mark.parametrize("qtype", TYPES)
def test_stories_are_consistent(qtype):
    ds = SallyAnne(seed=5, question_type=qtype)
    kinds = set()
    for ex in ds.generate_examples(40):
        assert ex.script[0] == mod.INTRO and ex.is_question == [False] * (len(ex.script) - 1) + [True]
        assert ex.script[-1].endswith('Answer in JSON with a single word, like this: {"answer": "word"}')
        lines, placed, moved, first, second, mover, room, present = parse(ex)
        assert first != second and placed < moved and f"{mover}@{room}" in present
        answer = ex.expected_responses[0]
        assert ex.oracle_answers == [f'{{"answer": "{answer}"}}'] and ex.extra["question_type"] == qtype
        line, _ = ds.answer_statement_idx(ex)
        if qtype == "memory":
            assert "at the beginning" in ex.script[-1] and (answer, line) == (first, placed)
            continue
        if qtype == "reality":
            assert "really" in ex.script[-1] and (answer, line) == (second, moved)
            continue
        who, obj = ASKED.search(ex.script[-1]).groups()
        assert who != mover and obj in lines[placed - 1]
        saw_it = f"{who}@{room}" in present
        kinds.add(saw_it)
        if saw_it:  # true belief: a watched the move
            assert (answer, line) == (second, moved)
        else:  # false belief: a left the room after the placement and before the move
            exit_line = ex.script.index(f"On the show, {who} leaves the {room}.")
            assert placed < exit_line < moved and (answer, line) == (first, exit_line)
            assert f"On the show, {who} walks into the {room}." not in ex.script[exit_line:]
    if qtype == "theory_of_mind":
        assert kinds == {False}
    elif qtype == "first_order":
        assert kinds == {False, True}


@pytest.mark.parametrize("reply", [
    '{"answer": "pantry"}',
    '```json\n{"answer": "pantry"}\n```',
    'She will look where she last saw it:\n```json\n{ "answer": "Pantry" }\n```',
    '{"answer": "the pantry"}',
    '{"answer": "in the pantry."}',
    '{"answer": "pantries"}',
    '{"Answer": "PANTRY"}',
    '{"answer": "pantry"} A map is only a promise that someone once got lost and came back.',  # a quote appended
    "pantry",
    "Pantry.",
    "The pantry.",
    "{'answer': 'pantry'}",  # JSON slips LLMs make are read (JSON5, pyjson5): single quotes
    '{answer: "pantry",}',  # a bare key and a trailing comma
])
def test_right_answers(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    '{"answer": "basket"}',  # the wrong container
    '{"answer": "kitchen"}',  # the room
    "basket",
    "She will look in the pantry.",  # no JSON and not a single word
    '{"answer": "pantry or basket"}',
    '{"answer": "kitchen pantry"}',
    '{"response": "pantry"}',
    '{"answer": ["pantry"]}',
    '["pantry"]',
    '{"answer": "pantry"',  # broken JSON, not a single word either
    "{'answer': 'basket',}",  # lenient JSON, wrong container
])
def test_wrong_answers(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("word,expected", [
    ("boxes", "box"), ("pantries", "pantry"), ("crates", "crate"), ("briefcases", "briefcase"), ("box", "box"),
    ("chest", "chest"), ("glass", "glass"), ("sacks", "sack"),
])
def test_singular(word, expected):
    assert mod.singular(word) == expected


def test_plural_answers_match_every_container():
    ds = SallyAnne()
    for c in mod.CONTAINERS:
        plural = c + ("es" if c.endswith(("x", "ch", "sh")) else "s") if not c.endswith("y") else c[:-1] + "ies"
        assert ds.evaluate_correct([], [f'{{"answer": "{plural}"}}'], [c])[0] == 1.0, plural


def test_reality_is_not_belief():
    ds = SallyAnne(seed=7)
    for ex in ds.generate_examples(10):
        lines, placed, moved, first, second, *_ = parse(ex)
        assert ex.expected_responses == [first]
        assert ds.evaluate_correct(ex.questions, [f'{{"answer": "{second}"}}'], ex.expected_responses)[0] == 0.0
        assert ds.evaluate_correct(ex.questions, [f'{{"answer": "{first}"}}'], ex.expected_responses)[0] == 1.0


@pytest.mark.parametrize("qtype", TYPES)
def test_oracle_scores_one_and_dont_know_zero(qtype):
    ds = SallyAnne(seed=1, question_type=qtype)
    for ex in ds.generate_examples(20):
        assert ds.evaluate_correct(ex.questions, ex.oracle_answers, ex.expected_responses)[0] == 1.0
        assert ds.evaluate_correct(ex.questions, ["I don't know."], ex.expected_responses)[0] == 0.0


def test_answer_line_falls_back_for_definitions_without_it():
    ds = SallyAnne(seed=1)
    ex = ds.generate_examples(1)[0]
    ex.extra = {}
    assert ds.answer_statement_idx(ex) == (len(ex.script) - 2, len(ex.script[-2]))


@pytest.mark.parametrize("qtype", ["theory_of_mind", "reality"])
async def test_end_to_end(tmp_path: Path, qtype: str):
    cfg = make_config([{"name": "sallyanne", "args": {"question_type": qtype}}], span=2000, examples=3, seed=1)
    summary = await run_config(cfg, tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05
