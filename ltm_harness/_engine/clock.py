"""The virtual clock of a conversation: it moves per turn and jumps when tests wait on time."""

from __future__ import annotations

from datetime import datetime, timedelta


class VirtualClock:
    def __init__(self, start: datetime, seconds_per_turn: float) -> None:
        self.now = start
        self._step = timedelta(seconds=seconds_per_turn)

    def tick(self) -> None:
        self.now += self._step

    def jump_to(self, when: datetime) -> None:
        if when > self.now:
            self.now = when
