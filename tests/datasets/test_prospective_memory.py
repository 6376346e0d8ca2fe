"""The prospective_memory dataset: append a quote to the n-th reply, not sooner (a continual test)."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import ValidationError

from ltm_harness._store.eventlog import read_events

from ltm_harness._store.events import TurnEvent
from ltm_harness._engine.program import Heard
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._scoring.rules import normalize
from ltm_harness.testing import make_config, run_config

ProspectiveMemory = known_datasets()["prospective_memory"]
mod = sys.modules[ProspectiveMemory.__module__]
QUOTES = mod.QUOTES
COLOURS = sys.modules[known_datasets()["colours"].__module__].COLOURS
T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)

QUOTE = "Rain does not ruin a walk; it only edits the route."
AUTHOR = "Clementine Harrow"


def example(n: int = 3):
    ds = ProspectiveMemory()
    return ds, ds.make_example(
        0, [f'Here is a quote I like, from {AUTHOR}: "{QUOTE}"', f"... append the quote from {AUTHOR} to your reply ..."],
        [False, True], [[QUOTE, AUTHOR, n]], oracle_answers=["OK, I will do that."], uses_callback=True)


def heard(replies: list[str]) -> list[Heard]:
    return [Heard(i, "a message", r, T0, i == 0) for i, r in enumerate(replies)]


def call(replies: list[str], n: int = 3):
    ds, ex = example(n)
    score, max_score, reasons, deregister = ds.continual_evaluation_callback(ex, heard(replies))
    assert max_score == 1.0
    return score, reasons, deregister


def dumps(seed: int, **params) -> list[dict]:
    return [e.model_dump() for e in ProspectiveMemory(memory_span=2000, seed=seed, **params).generate_examples(5)]


def test_the_quotes():
    assert len(QUOTES) >= 25
    assert len({q["quote"] for q in QUOTES}) == len(QUOTES) and len({q["author"] for q in QUOTES}) == len(QUOTES)
    # Under the oracle agent a quote is appended to whatever reply is due, also to another test's
    # answer: no quote may name a colour (the colours test takes the last colour named).
    colours = {c.lower() for c in COLOURS}
    for q in QUOTES:
        assert not colours & set(normalize(q["quote"]).split()), q


def test_generation_is_deterministic_per_seed():
    assert dumps(1) == dumps(1)
    assert dumps(1) != dumps(2)


def test_generated_shape():
    ns = set()
    for ex in ProspectiveMemory(seed=3).generate_examples(40):
        quote, author, n = ex.expected_responses[0]
        ns.add(n)
        assert ex.uses_callback and ex.is_question == [False, True]
        assert quote in ex.script[0] and author in ex.script[0]
        assert quote not in ex.script[1] and author in ex.script[1]
        assert f"to your {mod.ordinal(n)} reply" in ex.script[1]
        assert ex.waits[0].percentage_finished == 90.0 and ex.waits[1].is_empty
        assert ex.oracle_answers == ["OK, I will do that."]
        assert ProspectiveMemory().answer_statement_idx(ex) == (0, len(ex.script[0]))
    assert ns == {2, 3, 4, 5, 6}
    assert {ex.expected_responses[0][2] for ex in ProspectiveMemory(seed=3, max_reply=2).generate_examples(10)} == {2}


def test_params_are_validated():
    with pytest.raises(ValidationError):
        ProspectiveMemory(max_replies=4)
    with pytest.raises(ValidationError):
        ProspectiveMemory(max_reply=1)
    assert ProspectiveMemory(max_reply=9).params.max_reply == 9


@pytest.mark.parametrize("n,text", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"), (12, "12th"),
                                    (13, "13th"), (21, "21st"), (22, "22nd")])
def test_ordinal(n, text):
    assert mod.ordinal(n) == text


def test_waits_until_the_nth_reply():
    assert call(["OK."]) == (0.0, [], False)
    assert call(["OK.", '{"answer": "12"}']) == (0.0, [], False)


@pytest.mark.parametrize("third", [
    QUOTE,
    f'{{"answer": "12"}} {QUOTE}',  # quote with extra text
    f"The answer is 12. And as {AUTHOR} said: '{QUOTE.upper()}'",
    "Rain does not ruin a walk, it only edits the route",  # punctuation does not matter
    "rain does not ruin a walk it edits the route",  # 10 of 11 words
])
def test_right_answers(third):
    score, reasons, deregister = call(["OK, I will do that.", "12", third])
    assert (score, deregister) == (1.0, True) and "3rd reply contains" in reasons[0]


@pytest.mark.parametrize("third", [
    "I don't know.",
    "12",
    "Rain does not ruin a walk.",  # part of the quote
    f"Here is the quote from {AUTHOR}.",
    "Rain never spoils a stroll; it just changes the path.",  # a paraphrase
])
def test_wrong_answers(third):
    score, reasons, deregister = call(["OK, I will do that.", "12", third])
    assert (score, deregister) == (0.0, True) and "does not contain" in reasons[0]


def test_quote_on_a_later_reply_scores_zero():
    # The 4th reply has it, but the test ended when the 3rd did not.
    score, reasons, deregister = call(["OK.", "12", "7"])
    assert (score, deregister) == (0.0, True)


@pytest.mark.parametrize("replies,early", [
    (["OK.", QUOTE], 2),  # on the 2nd reply of 3: too early, decided at once
    ([f"Sure! I'll append '{QUOTE}' later.", "12", QUOTE], 1),  # repeated in the acknowledgement
    (["OK.", QUOTE, QUOTE], 2),  # every reply from the 2nd on
])
def test_quote_too_early_scores_zero(replies, early):
    score, reasons, deregister = call(replies)
    assert (score, deregister) == (0.0, True)
    assert f"appended to reply {early}, before the 3rd reply" in reasons[0]


def test_quote_on_the_second_reply():
    assert call(["OK."], n=2) == (0.0, [], False)
    assert call(["OK.", f"12 {QUOTE}"], n=2)[0] == 1.0
    assert call(["OK.", "12"], n=2)[0] == 0.0


def test_oracle_hint_names_the_quote_for_the_nth_reply_only():
    ds, ex = example(4)
    hints = [ds.oracle_hint(ex, heard(["OK."] * k)) for k in range(1, 6)]
    assert hints == [None, None, QUOTE, None, None]


def simulate(ds, ex, reply_for) -> tuple[float, int]:
    """The default program's watch loop, with `reply_for(hint)` as the agent."""
    log = heard(["OK, I will do that."])
    for _ in range(20):
        score, max_score, _, deregister = ds.continual_evaluation_callback(ex, log)
        if deregister:
            return score / max_score, len(log)
        log.append(Heard(len(log), "filler", reply_for(ds.oracle_hint(ex, log)), T0, False))
    raise AssertionError("the callback never deregistered")


@pytest.mark.parametrize("seed", range(4))
def test_oracle_scores_one_and_dont_know_zero(seed):
    ds = ProspectiveMemory(seed=seed, max_reply=2 + seed)
    for ex in ds.generate_examples(15):
        n = ex.expected_responses[0][2]
        assert simulate(ds, ex, lambda hint: " ".join(['{"answer": "3"}'] + ([hint] if hint else []))) == (1.0, n)
        assert simulate(ds, ex, lambda hint: "I don't know.") == (0.0, n)


async def test_end_to_end(tmp_path: Path):
    summary = await run_config(make_config(["prospective_memory"], span=2000, examples=3, seed=1), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == 1.0 and scores["null"] <= 0.05


async def test_end_to_end_with_other_tests(tmp_path: Path):
    # The oracle appends the quote to whatever reply is due, here often another test's answer.
    names = ["colours", "jokes", "prospective_memory", "trigger_response", "sallyanne"]
    summary = await run_config(make_config(names, span=1500, examples=3, seed=3), tmp_path, ["oracle", "null"])
    scores = {a.agent: a.benchmark_score for a in summary.agents}
    assert scores["oracle"] == len(names) and scores["null"] <= 0.05
    quotes = [q["quote"] for q in QUOTES]
    events = read_events(tmp_path / "t" / "oracle" / "events.jsonl")
    assert any(e.question and not e.test.startswith("prospective_memory/") and any(q in e.reply for q in quotes)
               for e in events if isinstance(e, TurnEvent) and e.kind == "test")  # this seed makes it happen
