"""What `on_turn` hears after every turn, and once more when a conversation ends: where that conversation stands
(public as `ltm_harness.TurnProgress`).

A frozen dataclass, as `Heard` is, rather than a pydantic model: one is made after every turn of every session
while someone listens, it never crosses a file or a process, and nothing in it needs validating."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class TurnProgress:
    """One conversation (session) of one agent, right after a turn (or as it ended: `ended`): what it did so far, its
    tests and their score.

    A run has one conversation per agent (`session == "main"`), or one per test when isolated; the progress of an
    agent is the sum over its conversations (the latest `TurnProgress` of each)."""

    agent: str  # the agent's name (its folder and table column)
    session: str  # the conversation: "main", or the test's own name when isolated
    turn: int  # turns so far in this conversation (the one just done included)
    tokens: int  # conversation tokens so far (messages and replies)
    tests_done: int  # tests of this conversation that ended (ok, unscored or errored)
    tests_total: int  # tests this conversation plays
    scored: int  # ended tests that count in the score: errored ones as 0, unscored ones not at all
    score_sum: float  # their normalised scores (0..1 each), summed
    cost_usd: float  # what the agent cost so far, as it reported
    failed_turns: int  # turns the agent failed after every retry
    fraction: float  # of this conversation's work done, 0..1: ended tests plus how far running ones are
    ended: bool = False  # the conversation is over (every test ended, or the agent stopped early): no turn follows

    @property
    def score(self) -> float | None:
        """The mean normalised score of the tests scored so far (None before the first)."""
        return self.score_sum / self.scored if self.scored else None


OnTurn = Callable[[TurnProgress], None]
