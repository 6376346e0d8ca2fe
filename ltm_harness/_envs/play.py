"""Playing tests with Python policies (no chat): episodes, trials, normalised scores and the AIQ score.

An active test is played by a `Policy(env, observation) -> action`; a passive one is answered by a
`Solver(env, problems, train) -> answers`. Per test, as in the AIQ reference, the raw scores of the trials are
averaged first and that mean is normalised and clipped: clip((mean(s) - min) / (max - min), 0, 1), so one trial
below `min` does not count as 0 on its own (`trials_score`); the AIQ score is the mean over tests.
The oracle-like policies read the environment's privileged `oracle_action` / `oracle_answers`:
they are for calibration, to show what the maximum looks like.
"""

from __future__ import annotations

import random
import statistics
import string
from typing import Any, Callable, Sequence

from pydantic import BaseModel

from ltm_harness._envs.base import ActiveEnv, PassiveEnv

from ltm_harness._envs.header import Action, Example, InvalidAction, Observation
from ltm_harness._envs.catalog import TestSpec, make_env, parse_test_spec
from ltm_harness._envs.episode import (ActiveText, Actor, InlineSteps, Page, ProblemSet, Step, play_episode,
                                       run_inline)

Policy = Callable[[ActiveEnv, Observation], Action | InvalidAction]
Solver = Callable[[PassiveEnv, list[str], list[Example]], Sequence[str | None]]
DEFAULT_TRIALS = 10


class EpisodeResult(BaseModel):
    test: str
    seed: int
    score: float  # in header units
    min_score: float  # the header's range for this episode (a seeded environment may draw it per seed)
    max_score: float
    normalised: float
    steps: int  # steps taken (active) or problems (passive)
    invalid: int  # invalid actions (active) or unreadable answers (passive)
    summary: str


class TestScore(BaseModel):
    """A test's normalised score over its trials."""

    __test__ = False

    test: str
    kind: str
    episodes: list[EpisodeResult]

    @property
    def mean(self) -> float:
        """The mean raw score of the trials, normalised and clipped (`trials_score`); 0 with no trial."""
        return trials_score([(e.score, e.min_score, e.max_score) for e in self.episodes]) if self.episodes else 0.0


def trials_score(trials: Sequence[tuple[float, float, float]]) -> float:
    """A test's score from its trials' (raw score, min, max), as the AIQ reference aggregates them: the mean raw
    score, normalised and clipped, clip((mean(s) - min) / (max - min), 0, 1). Where an environment draws its range
    per seed, the range is the trials' mean range (the same rule when it is fixed). Rounded to 12 decimals like
    `EnvHeader.normalise`."""
    if not trials:
        raise ValueError("a test's score needs at least one trial")
    raw = statistics.fmean(t[0] for t in trials)
    low = statistics.fmean(t[1] for t in trials)
    high = statistics.fmean(t[2] for t in trials)
    if high <= low:
        raise ValueError(f"the score range [{low:g}, {high:g}] is empty; min_score must be below max_score")
    return min(1.0, max(0.0, round((raw - low) / (high - low), 12)))


def optimal_policy(env: ActiveEnv, observation: Observation) -> Action:
    """The environment's optimal action (privileged, calibration only)."""
    return env.oracle_action()


def random_policy(seed: int = 0) -> Policy:
    """Uniformly random actions from the action space."""
    rng = random.Random(f"ltm-harness-random-policy:{seed}")

    def act(env: ActiveEnv, observation: Observation) -> Action:
        return env.header.action_space.sample(rng)

    return act


def optimal_solver(env: PassiveEnv, problems: list[str], train: list[Example]) -> list[str]:
    """The test answers (privileged, calibration only)."""
    return env.oracle_answers()


def random_solver(seed: int = 0) -> Solver:
    """Random letters, as long as each problem."""
    rng = random.Random(f"ltm-harness-random-solver:{seed}")

    def solve(env: PassiveEnv, problems: list[str], train: list[Example]) -> list[str]:
        return ["".join(rng.choice(string.ascii_lowercase) for _ in p) for p in problems]

    return solve


class _PolicyActor(Actor):
    def __init__(self, env: ActiveEnv, policy: Policy) -> None:
        self.env, self.policy = env, policy

    async def act(self, observation: Any, last: Step | None) -> Any:
        return self.policy(self.env, observation)


class _SolverActor(Actor):
    def __init__(self, env: PassiveEnv, solver: Solver) -> None:
        self.env, self.solver = env, solver

    async def act(self, observation: Page, last: Step | None) -> Any:
        return list(self.solver(self.env, observation.problems, self.env.get_train()))


def play_policy(env: ActiveEnv, policy: Policy, seed: int | None = None) -> EpisodeResult:
    """One episode played by `policy` (seeded before the reset when `seed` is given)."""
    if seed is not None:
        env.seed(seed)
    run_inline(play_episode(InlineSteps(ActiveText(env)), _PolicyActor(env, policy)))
    h = env.header
    return EpisodeResult(test=h.name, seed=env.current_seed, score=env.score, min_score=h.min_score,
                         max_score=h.max_score, normalised=env.normalised_score, steps=env.steps, invalid=len(env.invalid),
                         summary=env.summary())


def solve_set(env: PassiveEnv, solver: Solver) -> EpisodeResult:
    """The problem set answered at once by `solver`."""
    problems = ProblemSet(env)
    run_inline(play_episode(InlineSteps(problems), _SolverActor(env, solver)))
    graded, answers, n = problems.graded, problems.answers, len(problems.problems)
    assert graded is not None
    return EpisodeResult(test=env.header.name, seed=env.current_seed, score=graded.score,
                         min_score=env.header.min_score, max_score=env.header.max_score,
                         normalised=env.header.normalise(graded.score), steps=n,
                         invalid=sum(a is None for a in answers[:n]) + max(0, n - len(answers)),
                         summary=f"{graded.n_correct} of {n} right")


def trial_seeds(label: str, trials: int, seed: int = 0) -> list[int]:
    """The seeds of a test's trials: drawn from the run's seed and the test's label."""
    rng = random.Random(f"ltm-harness-trials:{seed}:{label}")
    return [rng.randrange(2**31) for _ in range(trials)]


def evaluate_policy(test: TestSpec | str, policy: Policy = optimal_policy, solver: Solver = optimal_solver,
                    trials: int = DEFAULT_TRIALS, seed: int = 0) -> TestScore:
    """A test's score: active tests averaged over `trials` episodes, passive tests answered once."""
    spec = parse_test_spec(test) if isinstance(test, str) else test
    if trials < 1:
        raise ValueError("trials must be at least 1")
    env = make_env(spec.name, **spec.params)
    if isinstance(env, ActiveEnv):
        episodes = [play_policy(env, policy, s) for s in trial_seeds(spec.label, trials, seed)]
    else:
        assert isinstance(env, PassiveEnv)
        env.seed(trial_seeds(spec.label, 1, seed)[0])
        episodes = [solve_set(env, solver)]
    return TestScore(test=spec.label, kind=env.kind, episodes=episodes)


def aiq_score(scores: Sequence[TestScore]) -> float:
    """The mean of the tests' normalised scores (0 when there are none)."""
    return statistics.fmean(s.mean for s in scores) if scores else 0.0
