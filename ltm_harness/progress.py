"""Live progress on a terminal: one bar per agent (tests finished, turns, conversation tokens).

Shown only when the output is a terminal and not --quiet; updates are throttled so that the
progress display costs nothing measurable per turn.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from ltm_harness.session import Session

UPDATE_EVERY = 0.2  # seconds


class RunProgress:
    def __init__(self, console: Console, agents: list[str], tests_per_agent: int) -> None:
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(), console=console, transient=True,
        )
        self._tasks = {a: self._progress.add_task(a, total=tests_per_agent, detail="") for a in agents}
        self._sessions: dict[str, dict[str, "Session"]] = {a: {} for a in agents}
        self._last = 0.0

    def __enter__(self) -> "RunProgress":
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.refresh()
        self._progress.stop()

    def on_turn(self, session: "Session") -> None:
        self._sessions[session.settings.agent_name][session.settings.session_id] = session
        now = time.monotonic()
        if now - self._last >= UPDATE_EVERY:
            self._last = now
            self.refresh()

    def refresh(self) -> None:
        for name, sessions in self._sessions.items():
            done = sum(len(s.results) for s in sessions.values())
            turns = sum(s.turns for s in sessions.values())
            tokens = sum(s.pos for s in sessions.values())
            score = sum(r.normalized for s in sessions.values() for r in s.results if r.status == "ok")
            detail = f"{turns:,} turns  {tokens:,} tokens"
            if done:
                detail += f"  mean score {score / done:.2f}"
            self._progress.update(self._tasks[name], completed=done, detail=detail)
