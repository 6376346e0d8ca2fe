"""AIQ-style environments: a header per test, active environments (act in turns) and passive ones
(a problem set answered at once), both seeded and playable by a chat agent through text.

Every environment owns its `random.Random` (seeded by a string, so stable across processes), renders
what it shows as text for a chat agent, and parses a reply back into an action or answers (the rules
are in `ltm_harness._envs.parsing`). A reply that cannot be read is an `InvalidAction`: it is recorded
with the reply, costs a step and an optional penalty, and the episode goes on.
"""

from __future__ import annotations

import math
import random
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal, NamedTuple, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ltm_harness._envs.header import (Action, EnvHeader, EnvParams, Example, GradedAnswers, InvalidAction, Observation,
                                      StepResult)
from ltm_harness._envs.parsing import parse_action, parse_answers

class Env(ABC):
    """Common part of active and passive tests: name, params, seed, header."""

    #: the name the registry knows this test (set) by
    test_name: ClassVar[str] = ""
    kind: ClassVar[Literal["active", "passive"]]
    Params: ClassVar[type[EnvParams]] = EnvParams
    #: values of `env_name` for a test set (sub-tests); empty for a single test
    sub_tests: ClassVar[tuple[str, ...]] = ()

    def __init__(self, seed: int = 0, **params: Any) -> None:
        self.params = self.Params(**params)
        self.rng = random.Random()
        self.seed(seed)
        self.header  # noqa: B018 - built now so that a bad header fails at construction

    def seed(self, seed: int) -> None:
        """Re-seed the environment's own generator (before `reset`, for a reproducible episode)."""
        self.current_seed = int(seed)
        self.rng.seed(f"ltm-harness-env:{self.test_name}:{self.current_seed}")
        self._on_seed()

    def _on_seed(self) -> None:
        """Draw what is fixed per seed (e.g. a bandit's arms); called by `seed`."""

    @property
    @abstractmethod
    def header(self) -> EnvHeader:
        """The test's header (may depend on the params, never on the episode)."""

    @abstractmethod
    def rules(self) -> str:
        """What the test is about, said in the first message to a chat agent."""


class ActiveEnv(Env):
    """An environment the agent acts in, step by step.

    Subclasses implement `_reset`, `_act` (for valid actions only), `_observe`, `describe`,
    `oracle_action` and `default_max_steps`. The base class counts steps, stops the episode at the
    step cap, and turns invalid actions into a recorded invalid step: same state, reward
    `-invalid_penalty`, one step used. The episode score is the sum of rewards unless `score` is
    overridden.
    """

    kind: ClassVar[Literal["active", "passive"]] = "active"

    def __init__(self, seed: int = 0, **params: Any) -> None:
        self.steps = 0
        self.total_reward = 0.0
        self.done = True
        self.invalid: list[tuple[int, InvalidAction]] = []  # (step number, what was refused)
        self.last_observation: Observation | None = None
        super().__init__(seed, **params)

    # -- to implement -----------------------------------------------------------------------
    @abstractmethod
    def _reset(self) -> None:
        """Draw and set up a new episode from `self.rng`."""

    @abstractmethod
    def _act(self, action: Action) -> tuple[float, bool, str]:
        """Apply a valid action: (reward, done, what happened in words)."""

    @abstractmethod
    def _observe(self) -> Observation:
        """The environment-specific part of the current observation."""

    @abstractmethod
    def describe(self, observation: Observation) -> str:
        """The observation in words (without the step line and the reply format)."""

    @abstractmethod
    def oracle_action(self) -> Action:
        """The optimal action in the current state. Privileged: only for calibration (the oracle agent)."""

    @abstractmethod
    def default_max_steps(self) -> int:
        """The step cap when the params do not set `max_steps`."""

    @abstractmethod
    def summary(self) -> str:
        """The outcome of the finished episode in one sentence (said to the agent at the end)."""

    # -- the episode ------------------------------------------------------------------------
    @property
    def max_steps(self) -> int:
        cap = getattr(self.params, "max_steps", None)
        return int(cap) if cap else self.default_max_steps()

    @property
    def score(self) -> float:
        """The episode's score in header units (default: the sum of rewards, penalties included)."""
        return self.total_reward

    @property
    def normalised_score(self) -> float:
        return self.header.normalise(self.score)

    def reset(self) -> Observation:
        self.steps = 0
        self.total_reward = 0.0
        self.done = False
        self.invalid = []
        self._reset()
        return self._observation("The game starts.")

    def act(self, action: Action | InvalidAction) -> StepResult:
        """Take one step. An action outside the action space (or an `InvalidAction`) is an invalid step."""
        if self.done:
            raise RuntimeError(f"{self.test_name}: the episode is over; call reset() first")
        self.steps += 1
        info: dict[str, Any] = {}
        refused = self._refusal(action)
        if refused is not None:
            self.invalid.append((self.steps, refused))
            reward, done = -self.params.invalid_penalty, False
            event = f"Your reply was not a valid action ({refused.reason}); nothing happened."
            info = {"invalid": True, "reason": refused.reason}
        else:
            assert not isinstance(action, InvalidAction)
            reward, done, event = self._act(action)
        self.total_reward += reward
        if not done and self.steps >= self.max_steps:
            done = True
            info["truncated"] = True
            event += f" That was the last of the {self.max_steps} steps."
        self.done = done
        return StepResult(self._observation(event), reward, done, info)

    def _refusal(self, action: Action | InvalidAction) -> InvalidAction | None:
        if isinstance(action, InvalidAction):
            return action
        if self.header.action_space.contains(action):
            return None
        return InvalidAction(reply=str(action), reason=f"{action!r} is not an allowed action")

    def _observation(self, event: str) -> Observation:
        obs = {"step": self.steps, "steps_left": self.max_steps - self.steps, "event": event}
        obs.update(self._observe())
        self.last_observation = obs
        return obs

    # -- text for chat agents -----------------------------------------------------------------
    def render_observation(self, observation: Observation) -> str:
        return f"{observation['event']}\n{self.describe(observation)}"

    def render(self) -> str:
        """The current observation as text."""
        if self.last_observation is None:
            raise RuntimeError(f"{self.test_name}: nothing to render before reset()")
        return self.render_observation(self.last_observation)

    def prompt(self, observation: Observation, *, label: str | None = None, first: bool = False) -> str:
        """The message a chat agent gets for `observation`: label and step, the rules on the first
        step of an episode, the observation, and the reply format."""
        name = label or self.header.name
        step = int(observation["step"]) + 1
        head = f"[{name}] Step {step} of at most {self.max_steps}."
        parts = [head]
        if first:
            parts.append(self.rules())
        else:
            parts.append(str(observation["event"]))
        parts.append(self.describe(observation))
        parts.append(self.header.action_space.reply_format())
        return "\n".join(p for p in parts if p)

    def parse_action(self, reply: str) -> Action | InvalidAction:
        """The action in a chat reply (rules in `ltm_harness._envs.parsing.parse_action`)."""
        return parse_action(reply, self.header.action_space)

    def invalid_report(self, limit: int = 200) -> list[str]:
        """One line per invalid step, with the start of the reply."""
        out = []
        for step, bad in self.invalid:
            reply = bad.reply if len(bad.reply) <= limit else bad.reply[:limit] + "..."
            out.append(f"step {step}: invalid ({bad.reason}): {reply!r}")
        return out


class PassiveEnv(Env):
    """A problem set answered at once.

    Subclasses implement `get_test` (problems only), `_answers` (kept inside the environment, never
    shown), `render_problems`, and optionally `get_train` / `get_dev` (problems with answers).
    `evaluate(answers)` returns the score in header units; `None` answers (unreadable) are wrong.
    """

    kind: ClassVar[Literal["active", "passive"]] = "passive"

    @abstractmethod
    def get_test(self) -> list[str]:
        """The test problems, without answers."""

    def get_train(self) -> list[Example]:
        """Worked examples the agent may learn from."""
        return []

    def get_dev(self) -> list[Example]:
        """Held-out examples with answers, for an agent to check itself before the test."""
        return []

    @abstractmethod
    def _answers(self) -> list[str]:
        """The test answers. Private to the environment: never put into a message."""

    @abstractmethod
    def render_problems(self, problems: Sequence[str], *, start: int = 0, train: Sequence[Example] = (),
                        label: str | None = None, part: tuple[int, int] | None = None) -> str:
        """A message asking for the answers to `problems` (numbered from `start + 1`), with the
        worked `train` examples if given; `part` = (page, pages) when the set is sent in pages."""

    def is_correct(self, answer: str | None, expected: str) -> bool:
        return answer is not None and answer.strip().strip("\"'.").lower() == expected.lower()

    def grade(self, answers: Sequence[str | None]) -> GradedAnswers:
        """Per-problem correctness and the score: `_score(correct)` minus `invalid_penalty` per
        missing (unreadable) answer."""
        expected = self._answers()
        padded = list(answers[:len(expected)]) + [None] * max(0, len(expected) - len(answers))
        correct = [self.is_correct(a, e) for a, e in zip(padded, expected)]
        missing = sum(a is None for a in padded)
        return GradedAnswers(correct=correct, missing=missing,
                             score=self._score(correct) - self.params.invalid_penalty * missing)

    def _score(self, correct: list[bool]) -> float:
        """Score in header units from per-problem correctness (default: the number right)."""
        return float(sum(correct))

    def evaluate(self, answers: Sequence[str | None]) -> float:
        """The score of `answers` (one per test problem, in order) in header units."""
        return self.grade(answers).score

    def parse_answers(self, reply: str, count: int, start: int = 0) -> list[str | None]:
        """`count` answers from a chat reply (rules in `ltm_harness._envs.parsing.parse_answers`)."""
        return parse_answers(reply, count, first_number=start + 1)

    def oracle_answers(self) -> list[str]:
        """The test answers. Privileged: only for calibration (the oracle agent)."""
        return list(self._answers())
