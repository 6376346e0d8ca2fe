"""What the syllabus runner plays: environments through their text face (`TextEnv`), made by name.

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
from typing import Callable

from pydantic import JsonValue

from ltm_harness._envs.base import ActiveEnv, PassiveEnv
from ltm_harness._envs.catalog import make_env
from ltm_harness._envs.episode import ActiveText, ProblemSet, TextEnv
from ltm_harness._errors import DefinitionError

#: (task name, params, seed) -> the task of one variant, played for all its episodes
TaskFactory = Callable[[str, dict[str, JsonValue], int], TextEnv]


def _derived_seed(*parts: JsonValue) -> int:
    key = json.dumps(list(parts), sort_keys=True)
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")


def variant_seed(seed: int, task: str, params: dict[str, JsonValue]) -> int:
    """The seed of a variant's task: fixed by the run seed, the task name and its params."""
    return _derived_seed(seed, task, params)


def env_task_factory(name: str, params: dict[str, JsonValue], seed: int) -> TextEnv:
    """A task from an ltm_harness.envs environment; unknown names and bad params are DefinitionErrors."""
    if "seed" in params:
        raise DefinitionError(f"task {name!r}: remove the \"seed\" param; episode seeds come from the run's --seed")
    env = make_env(name, seed=seed, **params)
    if isinstance(env, ActiveEnv):
        return ActiveText(env)
    if isinstance(env, PassiveEnv):
        return ProblemSet(env, reseed=lambda episode: _derived_seed(seed, "episode", episode))
    raise DefinitionError(f"task {name!r} is neither an active nor a passive environment")  # pragma: no cover

