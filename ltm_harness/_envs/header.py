"""What an environment declares and exchanges: its header (name, kind, spaces, score range), its params, actions
and observations, refused replies, steps, worked examples and graded answers. Plain data, read by the environments
(`base`), the reply parsing (`parsing`) and everything that plays them."""

from __future__ import annotations

import math
import random
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator


Action = str | int
Observation = dict[str, Any]  # JSON-compatible; `render_observation` turns it into text


class Space(BaseModel):
    """What an environment accepts or shows.

    An action space is either named `choices` (matched case-insensitively) or the whole numbers
    `low`..`high`; a space with neither only describes its values (observations, answer lists).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    choices: tuple[str, ...] = ()
    low: int | None = None
    high: int | None = None

    @model_validator(mode="after")
    def _check(self) -> "Space":
        if (self.low is None) != (self.high is None):
            raise ValueError("give both low and high, or neither")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"low ({self.low}) is above high ({self.high})")
        if self.choices and self.low is not None:
            raise ValueError("a space has named choices or a number range, not both")
        if len({c.lower() for c in self.choices}) != len(self.choices):
            raise ValueError("choices must differ (ignoring case)")
        return self

    @property
    def is_range(self) -> bool:
        return self.low is not None

    def contains(self, action: object) -> bool:
        if self.choices:
            return isinstance(action, str) and action in self.choices
        if self.low is not None and self.high is not None:
            return isinstance(action, int) and not isinstance(action, bool) and self.low <= action <= self.high
        return False

    def sample(self, rng: random.Random) -> Action:
        """A uniformly random action (the random baseline policy)."""
        if self.choices:
            return rng.choice(self.choices)
        if self.low is not None and self.high is not None:
            return rng.randint(self.low, self.high)
        raise ValueError(f"the space {self.description!r} has no actions to sample")

    def reply_format(self) -> str:
        """How a chat agent should reply, for the end of every message.

        The JSON form is shown with a placeholder that is not valid JSON, so that a reply which only
        repeats the instructions is never read as an action."""
        if self.choices:
            options = ", ".join(self.choices[:-1]) + f" or {self.choices[-1]}" if len(self.choices) > 1 else self.choices[0]
            return f'Reply with one of: {options} (or as JSON: {{"action": <your choice>}}).'
        if self.low is not None and self.high is not None:
            return (f"Reply with one whole number from {self.low} to {self.high} "
                    f'(or as JSON: {{"action": <your number>}}).')
        return ""


class EnvHeader(BaseModel):
    """What every AIQ-style test declares about itself. `min_score` must be below `max_score`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["active", "passive"]
    action_space: Space  # active: the actions; passive: the form of the answers
    observation_space: Space  # active: the observations; passive: the problems
    info: str
    min_score: float
    max_score: float
    warnings: tuple[str, ...] = ()  # settings that are legal but likely a mistake (`syllabus validate` shows them)

    @model_validator(mode="after")
    def _range(self) -> "EnvHeader":
        if not (math.isfinite(self.min_score) and math.isfinite(self.max_score)):
            raise ValueError(f"{self.name}: min_score and max_score must be finite numbers")
        if self.min_score >= self.max_score:
            raise ValueError(f"{self.name}: min_score ({self.min_score:g}) must be below max_score ({self.max_score:g})")
        return self

    def normalise(self, score: float) -> float:
        """clip((score - min) / (max - min), 0, 1), rounded to 12 decimals (no float dust below 1.0)."""
        value = (score - self.min_score) / (self.max_score - self.min_score)
        return min(1.0, max(0.0, round(value, 12)))


class InvalidAction(BaseModel):
    """A reply that is not an allowed action: kept with the reply and why it was refused."""

    model_config = ConfigDict(frozen=True)

    reply: str
    reason: str


class StepResult(NamedTuple):
    """What `act` returns; unpacks as (observation, reward, done, info)."""

    observation: Observation
    reward: float
    done: bool
    info: dict[str, Any]


class EnvParams(BaseModel):
    """Parameters every environment takes (besides its seed)."""

    model_config = ConfigDict(extra="forbid")

    invalid_penalty: float = Field(default=0.0, ge=0)  # subtracted from the score per invalid reply


class Example(BaseModel):
    """A problem with its answer (train and dev splits of passive tests; never the test split)."""

    model_config = ConfigDict(frozen=True)

    problem: str
    answer: str


class GradedAnswers(BaseModel):
    """The grading of a passive test's answers."""

    correct: list[bool]
    missing: int  # answers that could not be read (wrong, and penalised)
    score: float  # in header units

    @property
    def n_correct(self) -> int:
        return sum(self.correct)
