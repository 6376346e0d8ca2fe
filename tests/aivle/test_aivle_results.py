"""Evaluation results are always JSON; the evaluators' formulas; no division by zero."""

from __future__ import annotations

import json
import math

import pytest

from ltm_harness.aivle import EvaluationResult, RewardEvaluator, StepCountEvaluator


def steps(rewards: list[float], done_at_end: bool = True, episode: int = 0) -> list[dict]:
    out = []
    for t, r in enumerate(rewards):
        last = t == len(rewards) - 1
        out.append({"state": t, "action": 0, "reward": r, "next_state": t + 1, "done": last and done_at_end,
                    "truncated": False, "info": {}, "episode_count": episode, "t": t})
    return out


def test_errors_are_strings_and_values_finite():
    r = EvaluationResult(name="x", error=ValueError("bad input"))
    assert r.error == "ValueError: bad input"
    r = EvaluationResult(name="x", value=math.nan, error="first")
    assert r.value is None and r.error == "first; the value nan is not a finite number"
    r = EvaluationResult(name="x", value=math.inf)
    assert r.value is None and "inf" in (r.error or "")


def test_detail_is_made_json():
    class Thing:
        def __repr__(self) -> str:
            return "<thing>"

    r = EvaluationResult(name="x", detail={"a": (1, 2), 3: {7}, "t": Thing(), "n": math.inf,
                                           "nested": [{"k": float("nan")}]}, value=1)
    assert r.detail == {"a": [1, 2], "3": [7], "t": "<thing>", "n": None, "nested": [{"k": None}]}
    data = r.model_dump(mode="json")
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_reward_evaluator_gives_the_reference_shape():
    ev = RewardEvaluator()
    ev.reset()
    for s in steps([1.0, 2.0]) + steps([3.0], episode=1) + steps([5.0, 5.0], done_at_end=False, episode=2):
        ev.step(s)
    r = ev.get_result()
    # the episode still open (cut short) counts with its partial reward, as in the reference grader
    assert r.model_dump() == {"name": "reward evaluation", "detail": [3.0, 3.0, 10.0], "value": 16.0 / 3,
                              "error": None}


def test_step_count_evaluator_gives_the_reference_shape():
    ev = StepCountEvaluator()
    for s in steps([0.0, 0.0, 0.0], done_at_end=False):
        ev.step(s)
    ev.step({**steps([0.0])[0], "t": 3, "done": False, "truncated": True})
    ev.step({**steps([0.0])[0], "episode_count": 1})
    r = ev.get_result()
    assert r.model_dump() == {"name": "step count evaluation (average survival steps)",
                              "detail": {"total_episodes": 2, "total_steps": 5}, "value": 2.5, "error": None}


def test_an_episode_counts_from_its_start_even_without_a_step():
    ev = RewardEvaluator()
    ev.begin_episode(0)
    for s in steps([2.0]):
        ev.step(s)
    ev.begin_episode(1)  # reset, then stopped before its first step
    assert ev.get_result().detail == [2.0, 0.0] and ev.get_result().value == 1.0


def test_a_bare_result_is_named_score_with_an_empty_detail():
    assert EvaluationResult().model_dump() == {"name": "score", "detail": [], "value": None, "error": None}


@pytest.mark.parametrize("evaluator,empty", [(RewardEvaluator, []),
                                              (StepCountEvaluator, {"total_episodes": 0, "total_steps": 0})])
def test_no_episode_gives_none_with_an_error_not_a_division_by_zero(evaluator, empty):
    ev = evaluator()
    ev.reset()
    r = ev.get_result()
    assert r.value is None and r.detail == empty
    assert r.error == "no episode was started, so there is no mean to report"


def test_reset_forgets_everything():
    ev = RewardEvaluator()
    for s in steps([1.0]):
        ev.step(s)
    ev.reset()
    assert ev.get_result().detail == []
