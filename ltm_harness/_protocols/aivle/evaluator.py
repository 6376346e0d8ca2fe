"""Evaluators: they watch every step of a test case and summarise it as an `EvaluationResult`.

`reset()` is called once when a test case starts running, `step(full_state)` after every
environment step, `get_result()` at the end (also after a time-out or an agent error, for the
partial result). `full_state` holds: state, action, reward, next_state, done, truncated, info,
episode_count (0-based) and t (0-based step within the episode). An episode is complete when a step
has `done` or `truncated` set (the step cap or `t_max` was reached).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, Mapping

from pydantic import BaseModel, field_validator, model_validator


class EvaluationResult(BaseModel):
    """The summary of a test case: JSON-compatible by construction.

    `error` is always a string (an exception given here becomes "Type: message"); `detail` is made
    JSON-compatible (values JSON cannot hold become their text); a value that is not a finite
    number becomes None, with the reason added to `error`.
    """

    name: str
    detail: Any = None
    value: float | None = None
    error: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _finite(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("value"), (int, float)) and not math.isfinite(data["value"]):
            note = f"the value {data['value']} is not a finite number"
            data = {**data, "value": None, "error": "; ".join(e for e in (_as_text(data.get("error")), note) if e)}
        return data

    @field_validator("error", mode="before")
    @classmethod
    def _error_text(cls, v: Any) -> str | None:
        return _as_text(v)

    @field_validator("detail", mode="before")
    @classmethod
    def _json_detail(cls, v: Any) -> Any:
        return _to_json(v)


def _as_text(error: Any) -> str | None:
    if error is None or isinstance(error, str):
        return error
    if isinstance(error, BaseException):
        return f"{type(error).__name__}: {error}"
    return str(error)


def _to_json(value: Any) -> Any:
    """`value` as plain JSON data: non-finite floats become None, unknown objects their repr."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_to_json(v) for v in value]
    if isinstance(value, BaseModel):
        return _to_json(value.model_dump(mode="json"))
    return repr(value)


class Evaluator(ABC):
    """Watches a test case's steps and summarises them."""

    name: str = "evaluator"

    @abstractmethod
    def reset(self) -> None:
        """Forget everything: a test case starts running."""

    @abstractmethod
    def step(self, full_state: Mapping[str, Any]) -> None:
        """Record one environment step."""

    @abstractmethod
    def get_result(self) -> EvaluationResult:
        """The summary of the steps recorded since `reset` (partial results included)."""


class EpisodeEvaluator(Evaluator):
    """Sums a per-step measure over each episode; the value is its mean over *completed* episodes.

    When no episode was completed (the agent failed or ran out of time in its first episode), the
    value is None and `error` says so: a mean over zero episodes does not exist, and 0 would read
    as a real score. A partial episode is reported in `detail` (`unfinished_episode`), never mixed
    into the value.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.completed: list[float] = []
        self.current = 0.0
        self.steps_in_current = 0
        self.total_steps = 0

    @abstractmethod
    def measure(self, full_state: Mapping[str, Any]) -> float:
        """What one step adds to its episode's total."""

    def step(self, full_state: Mapping[str, Any]) -> None:
        self.current += self.measure(full_state)
        self.steps_in_current += 1
        self.total_steps += 1
        if full_state.get("done") or full_state.get("truncated"):
            self.completed.append(self.current)
            self.current, self.steps_in_current = 0.0, 0

    def get_result(self) -> EvaluationResult:
        n = len(self.completed)
        detail = {
            "episodes": n,
            "per_episode": list(self.completed),
            "total": sum(self.completed),
            "steps": self.total_steps,
            "unfinished_episode": ({"steps": self.steps_in_current, "total": self.current}
                                   if self.steps_in_current else None),
        }
        if n == 0:
            return EvaluationResult(name=self.name, detail=detail, value=None,
                                    error="no episode was completed, so there is no mean to report")
        return EvaluationResult(name=self.name, detail=detail, value=sum(self.completed) / n)


class RewardEvaluator(EpisodeEvaluator):
    """Mean total reward per completed episode: sum of rewards / completed episodes."""

    name = "reward"

    def measure(self, full_state: Mapping[str, Any]) -> float:
        if "reward" not in full_state:
            raise KeyError("RewardEvaluator needs a 'reward' in every full_state")
        return float(full_state["reward"])


class StepCountEvaluator(EpisodeEvaluator):
    """Mean number of steps per completed episode: steps / completed episodes."""

    name = "step_count"

    def measure(self, full_state: Mapping[str, Any]) -> float:
        return 1.0
