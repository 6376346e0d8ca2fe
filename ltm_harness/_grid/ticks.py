"""How far a running cell got, as its executor reports it to the driver: a cell's turns become ticks, at most every
TICK_EVERY seconds. Used on this process (the local executor) and in Ray workers alike."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ltm_harness._engine.progress import TurnProgress

TICK_EVERY = 0.5  # seconds between two progress ticks of a cell


@dataclass
class CellTick:
    """How far a running cell got: its tests done, turns and conversation tokens, and its running score."""

    tests_done: int = 0
    turns: int = 0
    tokens: int = 0
    scored: int = 0
    score_sum: float = 0.0

    @property
    def score(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None


class Ticker:
    """Turns a cell's turns into ticks sent at most every TICK_EVERY seconds (`on_turn` runs after every turn)."""

    def __init__(self, send: Callable[[CellTick], object]) -> None:
        self.send = send
        self.sessions: dict[str, TurnProgress] = {}  # the latest of each session of the cell
        self.last = 0.0

    def on_turn(self, turn: TurnProgress) -> None:
        self.sessions[turn.session] = turn
        now = time.monotonic()
        if now - self.last >= TICK_EVERY:
            self.last = now
            self.send(self.tick())

    def tick(self) -> CellTick:
        t = CellTick()
        for s in self.sessions.values():
            t.tests_done += s.tests_done
            t.turns += s.turn
            t.tokens += s.tokens
            t.scored += s.scored
            t.score_sum += s.score_sum
        return t
