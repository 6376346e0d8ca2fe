"""What the syllabus runner plays: the `TextTask` protocol, and tasks made from ltm_harness.envs.

A syllabus names tasks by environment name (`bandit`, `guess`, `keydoor`, `cipher`, ...) with the
environment's params. The runner makes ONE task per variant (task + params) for the whole run, seeded
from the run seed, and calls `reset()` for every episode: what is fixed per seed (a bandit's arms, a
cipher's key) stays the same across the variant's episodes, so there is something to learn, while
what is drawn per episode (a room, a secret number) changes.

Active environments are played move by move. A passive problem set is one move per episode: the
problems (with the environment's worked examples) in one message, the reply read as the answers,
the reward the environment's score. A passive variant draws a new problem set every episode (its
seed moves on), so give the cipher's `shift` or `key` in the params to keep one cipher throughout.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Protocol, runtime_checkable

from pydantic import JsonValue

from ltm_harness.envs import ActiveEnv, PassiveEnv, make_env
from ltm_harness._errors import DefinitionError


@runtime_checkable
class TextTask(Protocol):
    """A task the runner can play for many episodes, through text."""

    @property
    def score(self) -> float:
        """The finished episode's score (the environment's own measure; may differ from the reward sum)."""

    @property
    def score_range(self) -> tuple[float, float]:
        """The lowest and highest possible episode score."""

    def reset(self) -> Any:
        """Start a new episode; return its first observation."""

    def act(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]:
        """Apply the parsed reply: (observation, reward, done, info); info["invalid"] marks a refused reply."""

    def parse_action(self, reply: str) -> Any:
        """The agent's reply read as an action (a refused reply is still passed to `act`)."""

    def prompt(self, observation: Any, first: bool) -> str:
        """The message for `observation`: on the first step of an episode with the rules, always with
        how to reply."""

    def summary(self) -> str:
        """The finished episode's outcome in one sentence."""

    def oracle_hint(self) -> str | None:
        """The best reply now. Privileged: handed only to the oracle calibration agent."""


#: (task name, params, seed) -> the task of one variant, played for all its episodes
TaskFactory = Callable[[str, dict[str, JsonValue], int], TextTask]


def _derived_seed(*parts: JsonValue) -> int:
    key = json.dumps(list(parts), sort_keys=True)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")


def variant_seed(seed: int, task: str, params: dict[str, JsonValue]) -> int:
    """The seed of a variant's task: fixed by the run seed, the task name and its params."""
    return _derived_seed(seed, task, params)


class ActiveEnvTask:
    """An active environment played move by move."""

    def __init__(self, env: ActiveEnv) -> None:
        self.env = env

    @property
    def score(self) -> float:
        return self.env.score

    @property
    def score_range(self) -> tuple[float, float]:
        return self.env.header.min_score, self.env.header.max_score

    def reset(self) -> Any:
        return self.env.reset()

    def act(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]:
        observation, reward, done, info = self.env.act(action)
        return observation, reward, done, info

    def parse_action(self, reply: str) -> Any:
        return self.env.parse_action(reply)

    def prompt(self, observation: Any, first: bool) -> str:
        return self.env.prompt(observation, first=first)

    def summary(self) -> str:
        return self.env.summary()

    def oracle_hint(self) -> str | None:
        return json.dumps({"action": self.env.oracle_action()})


class PassiveEnvTask:
    """A passive problem set: one move per episode (all the answers at once); a new set every episode."""

    def __init__(self, env: PassiveEnv, seed: int) -> None:
        self.env = env
        self.seed = seed
        self.episodes = 0
        self.problems: list[str] = []
        self.correct = 0
        self._score = 0.0

    @property
    def score(self) -> float:
        return self._score

    @property
    def score_range(self) -> tuple[float, float]:
        return self.env.header.min_score, self.env.header.max_score

    def reset(self) -> Any:
        self.env.seed(_derived_seed(self.seed, "episode", self.episodes))
        self.episodes += 1
        self.problems = self.env.get_test()
        self.correct = 0
        self._score = 0.0
        return self.problems

    def act(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]:
        answers: list[str | None] = list(action)
        graded = self.env.grade(answers)
        self.correct = graded.n_correct
        self._score = graded.score
        return None, graded.score, True, {"invalid": all(a is None for a in answers), "correct": graded.n_correct}

    def parse_action(self, reply: str) -> Any:
        return self.env.parse_answers(reply, len(self.problems))

    def prompt(self, observation: Any, first: bool) -> str:
        return self.env.render_problems(self.problems, train=self.env.get_train())

    def summary(self) -> str:
        return f"You answered {self.correct} of {len(self.problems)} right."

    def oracle_hint(self) -> str | None:
        return json.dumps(self.env.oracle_answers())


def env_task_factory(name: str, params: dict[str, JsonValue], seed: int) -> TextTask:
    """A task from an ltm_harness.envs environment; unknown names and bad params are DefinitionErrors."""
    if "seed" in params:
        raise DefinitionError(f"task {name!r}: remove the \"seed\" param; episode seeds come from the run's --seed")
    env = make_env(name, seed=seed, **params)
    if isinstance(env, ActiveEnv):
        return ActiveEnvTask(env)
    if isinstance(env, PassiveEnv):
        return PassiveEnvTask(env, seed)
    raise DefinitionError(f"task {name!r} is neither an active nor a passive environment")  # pragma: no cover

