"""guess: find a secret whole number, told only "higher" or "lower" about the last guess.

The secret is drawn every episode. The agent hears only about its last guess, so narrowing the range
needs remembering the earlier answers. Halving the range finds any secret in at most
k = ceil(log2(n + 1)) guesses for n numbers.

Reward: on the right guess, min(1, k / guesses taken) (invalid replies count as guesses); 0 when the
secret is not found within the step cap (default 2k).
"""

from __future__ import annotations

import math

from pydantic import Field, ValidationInfo, field_validator

from ltm_harness._envs.base import ActiveEnv

from ltm_harness._envs.header import Action, EnvHeader, EnvParams, Observation, Space


class GuessParams(EnvParams):
    low: int = Field(default=1, ge=-1_000_000, le=1_000_000)
    high: int = Field(default=100, ge=-1_000_000, le=1_000_000)
    max_steps: int | None = Field(default=None, ge=1, le=1000)  # default: twice the guesses halving needs

    @field_validator("high")
    @classmethod
    def _range(cls, high: int, info: ValidationInfo) -> int:
        low = info.data.get("low")
        if low is not None and high <= low:
            raise ValueError(f"high ({high}) must be above low ({low})")
        return high


class NumberGuess(ActiveEnv):
    test_name = "guess"
    Params = GuessParams
    params: GuessParams

    secret = 0
    found = False
    last_guess: int | None = None
    lo = 0  # the range still possible given the answers so far (for the oracle)
    hi = 0

    @property
    def optimal_guesses(self) -> int:
        """Guesses that halving needs for the worst secret: ceil(log2(n + 1))."""
        n = self.params.high - self.params.low + 1
        return math.ceil(math.log2(n + 1))

    @property
    def header(self) -> EnvHeader:
        p = self.params
        return EnvHeader(
            name="guess", kind="active",
            action_space=Space(description="a guess", low=p.low, high=p.high),
            observation_space=Space(description="step, steps_left, event, last_guess, low, high"),
            info=f"find a secret number from {p.low} to {p.high}; reward = min(1, {self.optimal_guesses} / guesses)",
            min_score=0.0, max_score=1.0,
        )

    def default_max_steps(self) -> int:
        return 2 * self.optimal_guesses

    def _reset(self) -> None:
        self.secret = self.rng.randint(self.params.low, self.params.high)
        self.found = False
        self.last_guess = None
        self.lo, self.hi = self.params.low, self.params.high

    def _act(self, action: Action) -> tuple[float, bool, str]:
        guess = int(action)
        self.last_guess = guess
        if guess == self.secret:
            self.found = True
            return min(1.0, self.optimal_guesses / self.steps), True, f"{guess} is right!"
        if guess > self.secret:
            self.hi = min(self.hi, guess - 1)
            return 0.0, False, f"Your guess {guess} is too high."
        self.lo = max(self.lo, guess + 1)
        return 0.0, False, f"Your guess {guess} is too low."

    def _observe(self) -> Observation:
        return {"last_guess": self.last_guess, "low": self.params.low, "high": self.params.high}

    def rules(self) -> str:
        p = self.params
        return (f"I am thinking of a whole number from {p.low} to {p.high}. Guess it. After each guess I will "
                f"tell you only whether that guess was too high or too low, so keep track yourself. You have "
                f"{self.max_steps} guesses; the fewer you need, the better.")

    def describe(self, observation: Observation) -> str:
        return f"Guesses left: {observation['steps_left']}."

    def oracle_action(self) -> Action:
        return (self.lo + self.hi) // 2

    def summary(self) -> str:
        if self.found:
            return f"You found {self.secret} with guess number {self.steps}."
        return f"You did not find the number within {self.steps} guesses; it was {self.secret}."
