"""Evaluators: they watch every step of a test case and summarise it as an `EvaluationResult`.

`reset()` is called once when a test case starts running, `begin_episode(n)` when an episode has started (after
the environment's and the agent's reset, where the reference grader resets its evaluator), `step(full_state)`
after every environment step, `get_result()` at the end (also after a time-out or an agent error, for the
partial result). `full_state` holds: state, action, reward, next_state, done, truncated, info, episode_count
(0-based) and t (0-based step within the episode).

The results are the reference grader's (aiVLE), field for field, so tools that parse its JSON read ours:
`RewardEvaluator` gives name "reward evaluation", detail the list of total reward per episode and value their
mean; `StepCountEvaluator` gives name "step count evaluation (average survival steps)", detail
{"total_episodes": N, "total_steps": M} and value M / N; a bare result is named "score" with detail []. Every
episode that started counts, the one a time-out or an error stopped too (with its partial reward and steps).
Kept from our own design where the reference is defective: `error` is always a string, never an exception
object; a value that is not a finite number becomes null (JSON has no NaN); and no started episode gives value
null with an error saying so, not a division by zero.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, Mapping

from pydantic import BaseModel, Field, field_validator, model_validator


class EvaluationResult(BaseModel):
    """The summary of a test case: JSON-compatible by construction.

    `error` is always a string (an exception given here becomes "Type: message"); `detail` is made
    JSON-compatible (values JSON cannot hold become their text); a value that is not a finite
    number becomes None, with the reason added to `error`.
    """

    name: str = "score"
    detail: Any = Field(default_factory=list)
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

    def begin_episode(self, episode: int) -> None:
        """An episode (0-based `episode`) has started: the environment and the agent were reset."""

    @abstractmethod
    def step(self, full_state: Mapping[str, Any]) -> None:
        """Record one environment step."""

    @abstractmethod
    def get_result(self) -> EvaluationResult:
        """The summary of the steps recorded since `reset` (partial results included)."""


class EpisodeEvaluator(Evaluator):
    """Sums a per-step measure over each episode; the value is its mean over the episodes that started.

    An episode starts with `begin_episode` (or, when an evaluator is fed by hand, with a step after the previous
    episode's last one or of another `episode_count`) and ends with a step that has `done` or `truncated` set.
    The episode a time-out or an error stopped counts with what it had, as in the reference grader. When no
    episode started (the agent failed before its first one), the value is None and `error` says so: a mean over
    zero episodes does not exist, and 0 would read as a real score.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.episodes: list[float] = []  # the measure's total per episode
        self.total_steps = 0
        self._open: int | None = None  # episode_count of the episode in progress

    def begin_episode(self, episode: int) -> None:
        self.episodes.append(0.0)
        self._open = episode

    @abstractmethod
    def measure(self, full_state: Mapping[str, Any]) -> float:
        """What one step adds to its episode's total."""

    @abstractmethod
    def detail(self) -> Any:
        """The result's `detail`."""

    def step(self, full_state: Mapping[str, Any]) -> None:
        value = self.measure(full_state)
        episode = full_state.get("episode_count")
        if self._open is None or (isinstance(episode, int) and episode != self._open):
            self.begin_episode(episode if isinstance(episode, int) else len(self.episodes))
        self.episodes[-1] += value
        self.total_steps += 1
        if full_state.get("done") or full_state.get("truncated"):
            self._open = None

    def get_result(self) -> EvaluationResult:
        n = len(self.episodes)
        if n == 0:
            return EvaluationResult(name=self.name, detail=self.detail(), value=None,
                                    error="no episode was started, so there is no mean to report")
        return EvaluationResult(name=self.name, detail=self.detail(), value=sum(self.episodes) / n)


class RewardEvaluator(EpisodeEvaluator):
    """Mean total reward per episode; detail: the total reward of each episode."""

    name = "reward evaluation"

    def measure(self, full_state: Mapping[str, Any]) -> float:
        if "reward" not in full_state:
            raise KeyError("RewardEvaluator needs a 'reward' in every full_state")
        return float(full_state["reward"])

    def detail(self) -> list[float]:
        return list(self.episodes)


class StepCountEvaluator(EpisodeEvaluator):
    """Mean number of steps per episode (average survival steps); detail: total episodes and total steps."""

    name = "step count evaluation (average survival steps)"

    def measure(self, full_state: Mapping[str, Any]) -> float:
        return 1.0

    def detail(self) -> dict[str, int]:
        return {"total_episodes": len(self.episodes), "total_steps": self.total_steps}
