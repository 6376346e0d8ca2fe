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


def test_reward_evaluator_mean_over_completed_episodes():
    ev = RewardEvaluator()
    ev.reset()
    for s in steps([1.0, 2.0]) + steps([3.0], episode=1) + steps([5.0, 5.0], done_at_end=False, episode=2):
        ev.step(s)
    r = ev.get_result()
    assert r.name == "reward" and r.value == 3.0 and r.error is None
    assert r.detail == {"episodes": 2, "per_episode": [3.0, 3.0], "total": 6.0, "steps": 5,
                        "unfinished_episode": {"steps": 2, "total": 10.0}}


def test_truncated_steps_complete_an_episode():
    ev = StepCountEvaluator()
    for s in steps([0.0, 0.0, 0.0], done_at_end=False):
        ev.step(s)
    ev.step({**steps([0.0])[0], "done": False, "truncated": True})
    r = ev.get_result()
    assert r.name == "step_count" and r.value == 4.0 and r.detail["episodes"] == 1


@pytest.mark.parametrize("evaluator", [RewardEvaluator, StepCountEvaluator])
def test_no_completed_episode_gives_none_with_an_error_not_a_division_by_zero(evaluator):
    ev = evaluator()
    ev.reset()
    r = ev.get_result()
    assert r.value is None and r.error == "no episode was completed, so there is no mean to report"
    for s in steps([1.0, 1.0], done_at_end=False):
        ev.step(s)
    r = ev.get_result()
    assert r.value is None and r.detail["unfinished_episode"]["steps"] == 2


def test_reset_forgets_everything():
    ev = RewardEvaluator()
    for s in steps([1.0]):
        ev.step(s)
    ev.reset()
    assert ev.get_result().detail["episodes"] == 0


def test_reward_evaluator_needs_a_reward():
    with pytest.raises(KeyError, match="needs a 'reward'"):
        RewardEvaluator().step({"done": True})
