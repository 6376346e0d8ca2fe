"""bandit: a multi-armed bandit told in text.

Each arm pays 1 point with its own fixed probability, else 0. The agent is told only the result of
its last pull, so doing well needs remembering the earlier ones. The probabilities are given, or
drawn per seed (and kept across episodes of that seed, like a real machine).

Score: the *expected* payoff of the pulled arms (the sum of their probabilities), so luck neither
helps nor hurts; the rewards the agent sees are the actual draws. An invalid reply pulls nothing.
Min = horizon x worst probability, max = horizon x best: always pulling the best arm scores 1.0. Equal
probabilities are legal (the reference tools accept them) but teach nothing, as every arm is as good as any other:
the range is then 0 to horizon, so every policy scores that probability, and the header says so in a warning.
"""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from ltm_harness._envs.base import ActiveEnv

from ltm_harness._envs.header import Action, EnvHeader, EnvParams, Observation, Space


class BanditParams(EnvParams):
    arms: int | None = Field(default=None, ge=2, le=20)  # default 3, or the number of probabilities
    probabilities: list[float] | None = None  # each in [0, 1]; drawn per seed when not given
    horizon: int = Field(default=10, ge=1, le=1000)  # pulls per episode (the step cap)

    @field_validator("probabilities")
    @classmethod
    def _check(cls, probs: list[float] | None, info: ValidationInfo) -> list[float] | None:
        if probs is None:
            return probs
        if not 2 <= len(probs) <= 20:
            raise ValueError("give 2 to 20 probabilities, one per arm")
        if any(not 0.0 <= p <= 1.0 for p in probs):
            raise ValueError("every probability must be between 0 and 1")
        arms = info.data.get("arms")
        if arms is not None and arms != len(probs):
            raise ValueError(f"arms is {arms} but {len(probs)} probabilities are given; give one of them")
        return probs


class Bandit(ActiveEnv):
    test_name = "bandit"
    Params = BanditParams
    params: BanditParams
    probabilities: list[float]
    last_arm: int | None = None
    last_reward: int | None = None
    pulls: list[int] = []  # pulls per arm this episode
    points = 0

    def _on_seed(self) -> None:
        given = self.params.probabilities
        if given is not None:
            self.probabilities = list(given)
            return
        n = self.params.arms or 3
        while True:  # distinct enough that the best arm can be told apart
            probs = [round(self.rng.uniform(0.05, 0.95), 2) for _ in range(n)]
            ordered = sorted(probs)
            if ordered[-1] - ordered[-2] >= 0.1:
                self.probabilities = probs
                return

    @property
    def n_arms(self) -> int:
        return len(self.probabilities)

    @property
    def header(self) -> EnvHeader:
        h = self.params.horizon
        low, high = min(self.probabilities), max(self.probabilities)
        same = low == high  # every policy scores the same: the range any bandit of this horizon fits
        return EnvHeader(
            name="bandit", kind="active",
            action_space=Space(description="the arm to pull, numbered from 1", low=1, high=self.n_arms),
            observation_space=Space(description="step, steps_left, event, arm (last pulled or null), "
                                                "reward (of the last pull or null)"),
            info=f"{self.n_arms}-armed Bernoulli bandit, {h} pulls; score = expected payoff of the pulls",
            min_score=0.0 if same else h * low, max_score=float(h) if same else h * high,
            warnings=(f"every arm pays with the same chance ({low:g}), so no arm is better than another and the "
                      "task teaches nothing; give the arms different probabilities",) if same else (),
        )

    def default_max_steps(self) -> int:
        return self.params.horizon

    def _reset(self) -> None:
        self.last_arm = None
        self.last_reward = None
        self.pulls = [0] * self.n_arms
        self.points = 0

    def _act(self, action: Action) -> tuple[float, bool, str]:
        arm = int(action)
        p = self.probabilities[arm - 1]
        reward = 1 if self.rng.random() < p else 0
        self.last_arm, self.last_reward = arm, reward
        self.pulls[arm - 1] += 1
        self.points += reward
        won = "won 1 point" if reward else "won nothing"
        return float(reward), False, f"You pulled arm {arm} and {won}."

    @property
    def score(self) -> float:
        """Expected payoff of the pulls (counted per arm, so that always pulling one arm scores exactly
        horizon x its probability), minus the penalties."""
        expected = sum(n * p for n, p in zip(self.pulls, self.probabilities))
        return expected - self.params.invalid_penalty * len(self.invalid)

    def _observe(self) -> Observation:
        return {"arm": self.last_arm, "reward": self.last_reward}

    def rules(self) -> str:
        return (f"A slot machine has {self.n_arms} arms, numbered 1 to {self.n_arms}. Each arm pays 1 point "
                f"with its own fixed chance, or nothing. You have {self.params.horizon} pulls; win as many "
                "points as you can. I will only tell you the result of your last pull, so keep track yourself.")

    def describe(self, observation: Observation) -> str:
        return f"Pulls left: {observation['steps_left']}."

    def oracle_action(self) -> Action:
        best = max(self.probabilities)
        return self.probabilities.index(best) + 1

    def summary(self) -> str:
        return f"You won {self.points} points in {self.steps} pulls."
