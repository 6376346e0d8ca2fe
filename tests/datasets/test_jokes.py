"""The jokes dataset: which joke was told a given (virtual) time ago."""

from __future__ import annotations

import json
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._store.eventlog import read_events

from ltm_harness._store.events import TurnEvent
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._results.models import TestResult
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness._scoring.rules import normalize
from ltm_harness.testing import make_config

Jokes = known_datasets()["jokes"]
mod = sys.modules[Jokes.__module__]
JOKES: list[str] = mod.JOKES
QUOTES = sys.modules[known_datasets()["prospective_memory"].__module__].QUOTES

TOLD = [
    "My calendar left me for a planner. Apparently our days together were numbered.",
    "I started a band called Duvet. We only play covers.",
    "The astronaut ended the relationship because she needed more space.",
    "Garden hoses are just like people: they get twisted under pressure.",
]
TARGET = TOLD[2]


def score(reply: str, target: str = TARGET, told: list[str] = TOLD) -> float:
    """The score of a test that told `told` and asks about `target`."""
    ds = Jokes()
    ex = ds.make_example(0, [*told, mod.QUESTION], [False] * len(told) + [True], [target], oracle_answers=[target])
    s, max_score, reasons = ds.evaluate_example(ex, ["Which joke did I tell you about 2 hours ago?"], [reply])
    assert max_score == 1.0 and reasons
    return s


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in Jokes(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_the_pool():
    assert len(JOKES) >= 40 and len(set(JOKES)) == len(JOKES)
    assert all(j in JOKES for j in TOLD)


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)
    assert dumps(1, jokes_told=3) != dumps(1)


def test_generated_shape():
    for ex in Jokes(seed=3, jokes_told=5).generate_examples(20):
        assert ex.is_temporal and not ex.uses_callback
        assert ex.is_question == [False] * 5 + [True]
        assert ex.script[-1] == "Which joke did I tell you about {elapsed} ago?"
        assert len(set(ex.script[:-1])) == 5 and all(j in JOKES for j in ex.script[:-1])
        assert ex.expected_responses[0] in ex.script[:-1] and ex.oracle_answers == ex.expected_responses
        assert [w.percentage_finished for w in ex.waits] == [18.0, 36.0, 54.0, 72.0, 90.0, 0.0]
        assert all(30 * 60 <= w.time <= 240 * 60 and w.time % 60 == 0 for w in ex.waits[:-1])
        assert ex.waits[-1].is_empty
        line = ex.script.index(ex.expected_responses[0])
        assert Jokes().answer_statement_idx(ex) == (line, len(ex.script[line]))
    targets = {ex.script.index(ex.expected_responses[0]) for ex in Jokes(seed=4).generate_examples(30)}
    assert targets == {0, 1, 2, 3}  # any told joke can be the one asked about


def test_params_are_validated():
    with pytest.raises(ValidationError):
        Jokes(joke_told=3)
    with pytest.raises(ValidationError):
        Jokes(jokes_told=0)
    with pytest.raises(ValidationError):
        Jokes(jokes_told=len(JOKES) + 1)
    assert Jokes(jokes_told=1).params.jokes_told == 1


@pytest.mark.parametrize("minutes,text", [
    (200, "3 hours and 20 minutes"),
    (60, "1 hour"),
    (120, "2 hours"),
    (35, "40 minutes"),  # halves round up
    (34.9, "30 minutes"),
    (64, "1 hour"),
    (65, "1 hour and 10 minutes"),
    (119.9, "2 hours"),
    (61 * 60 + 6, "61 hours and 10 minutes"),
])
def test_elapsed_is_said_in_hours_and_minutes(minutes, text):
    assert mod.describe_elapsed(timedelta(minutes=minutes)) == text


@pytest.mark.parametrize("reply", [
    TARGET,
    "You told me this one: the astronaut ended the relationship because she needed more space!",
    "THE ASTRONAUT ENDED THE RELATIONSHIP, BECAUSE SHE NEEDED MORE SPACE",
    "It was the one where an astronaut ended the relationship because she needed space.",  # 9 of 10 words
])
def test_right_answers(reply):
    assert score(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "I don't know.",
    "",
    TOLD[1],  # another told joke
    TOLD[0],
    JOKES[-1],  # a joke of the pool that was not told
    "The one about the space traveller who broke up because she wanted room.",  # a paraphrase
    "The astronaut joke.",
    "You told me a joke about an astronaut and a relationship.",
])
def test_wrong_answers(reply):
    assert score(reply) == 0.0


@pytest.mark.parametrize("reply,expected", [
    (f"Either '{TARGET}' or '{TOLD[1]}'.", 0.0),  # both jokes: not decided
    (f"{TOLD[1]} No wait, I mean: {TARGET}", 0.0),  # both jokes in full, whatever the order
    ("The astronaut ended the relationship because she needed more.", 1.0),  # 9 of 10 words
    ("The astronaut ended the relationship because she.", 0.0),  # 7 of 10 words
    (f"{TARGET} (You also told me one about a band.)", 1.0),  # a mention, not the other joke
])
def test_borderline_answers(reply, expected):
    assert score(reply) == float(expected)


def test_rivals_are_the_told_jokes_or_else_the_pool():
    untold = JOKES[-1]
    assert untold not in TOLD
    reply = f"{TARGET} {untold}"
    assert score(reply) == 1.0  # the untold joke was never said in this test
    assert Jokes().evaluate_correct([], [reply], [TARGET])[0] == 0.0  # without the example: the whole pool
    assert score(reply, told=TOLD + [untold]) == 0.0
    outsider = "A penguin opened a bakery, but the rolls kept sliding off the counter."
    assert score(outsider, target=outsider, told=TOLD + [outsider]) == 1.0
    assert score(f"{outsider} {TOLD[0]}", target=outsider, told=TOLD + [outsider]) == 0.0


def test_any_told_joke_is_told_apart_from_any_other():
    ds = Jokes()
    for target in JOKES:
        assert ds.evaluate_correct([], [target], [target])[0] == 1.0
        for other in JOKES:
            if other != target:
                assert ds.evaluate_correct([], [other], [target])[0] == 0.0


def test_oracle_scores_one_even_with_a_quote_appended():
    # Under the oracle agent a prospective-memory quote may be appended to any reply.
    ds = Jokes()
    for i, target in enumerate(JOKES):
        q = QUOTES[i % len(QUOTES)]["quote"]
        assert ds.evaluate_correct([], [f"{target} {q}"], [target])[0] == 1.0
    # Every pair, the fast way: no other joke has all its words in a joke plus a quote.
    words = {j: normalize(j).split() for j in JOKES}
    for target in JOKES:
        for q in QUOTES:
            have = set(words[target]) | set(normalize(q["quote"]).split())
            for other in JOKES:
                if other != target:
                    assert not all(w in have for w in words[other]), (target, q, other)


@pytest.mark.parametrize("seed", range(4))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = Jokes(seed=seed, jokes_told=1 + seed)
    for ex in ds.generate_examples(20):
        assert ds.evaluate_example(ex, ex.questions, ex.oracle_answers)[0] == 1.0
        assert ds.evaluate_correct(ex.questions, ex.oracle_answers, ex.expected_responses)[0] == 1.0
        assert ds.evaluate_example(ex, ex.questions, ["I don't know."])[0] == 0.0


STATED = re.compile(r"about (?:(\d+) hours?)?(?: and )?(?:(\d+) minutes)? ago\?$")


async def test_end_to_end(tmp_path: Path):
    prepared = prepare(make_config(["jokes"], span=2000, examples=3, seed=1), tmp_path)
    summary = await run_all(prepared, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05

    run_dir = tmp_path / "t" / "oracle"
    results = {r["example_id"]: TestResult.model_validate(r) for r in json.loads((run_dir / "results.json").read_text())}
    turns = [e for e in read_events(run_dir / "events.jsonl") if isinstance(e, TurnEvent) and e.kind == "test"]
    for ex in prepared.examples["jokes"]:
        mine = [t for t in turns if t.test == ex.unique_id]
        assert [t.user for t in mine[:-1]] == ex.script[:-1] and mine[-1].question
        # The time waits were respected: at least the drawn minutes passed between consecutive lines.
        for i, wait in enumerate(ex.waits[:-1]):
            assert mine[i + 1].time - mine[i].time >= timedelta(seconds=wait.time)
        # The question names the time since the target joke on the virtual clock, to 10 minutes.
        question = results[ex.example_id].questions[0]
        assert question == mine[-1].user
        m = STATED.search(question)
        assert m, question
        stated = int(m.group(1) or 0) * 60 + int(m.group(2) or 0)
        target = mine[ex.script.index(ex.expected_responses[0])]
        actual = (mine[-1].time - target.time).total_seconds() / 60
        assert stated % 10 == 0 and abs(stated - actual) <= 5 + 1  # rounding, plus a few turns of 10 s
        assert stated >= 30
        # The gap is measured from the target joke.
        assert results[ex.example_id].gaps[0].achieved_tokens == mine[-1].pos - target.pos - target.user_tokens


async def test_end_to_end_isolated(tmp_path: Path):
    prepared = prepare(make_config(["jokes"], span=2000, examples=2, seed=2, isolated=True), tmp_path)
    summary = await run_all(prepared, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] == 0.0
