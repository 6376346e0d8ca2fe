"""Progress of a run, per agent: tests finished, turns, conversation tokens against the memory span,
running score, cost so far and an estimate of the time left.

On a terminal: a live rich display, one bar per agent. Otherwise (CI, a pipe): plain log lines, at
most one per agent every LOG_EVERY seconds, or sooner when another tenth of its tests is done (but
not more often than every LOG_MIN_GAP seconds), and a last line per agent if any was printed. A run
shorter than that prints none. `--quiet` creates no RunProgress at all.

`on_turn` is called after every turn of every session with its `TurnProgress` (the library's own
`on_turn` type); it only keeps the latest per session and reads the clock, and the display is updated
at most every UPDATE_EVERY seconds, so progress costs nothing measurable per turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from rich.console import Console
from rich.table import Column
from rich.progress import BarColumn, Progress, TaskID, TextColumn

from ltm_harness._tokens import plural, short_count

if TYPE_CHECKING:
    from ltm_harness._engine.progress import TurnProgress
    from ltm_harness._grid.cell import CellOutcome
    from ltm_harness._grid.ticks import CellTick

UPDATE_EVERY = 0.2  # seconds between two updates of the numbers
LOG_EVERY = 30.0  # seconds between two log lines of an agent when not on a terminal
LOG_MIN_GAP = 5.0  # seconds at least between two log lines of an agent
BAR_STEPS = 1000
BAR_WIDTH = 16  # characters of the live bar
NAME_WIDTH = 40  # an agent name longer than this wraps (never cut)


@dataclass
class AgentProgress:
    """What is known about one agent's sessions at one moment."""

    agent: str
    tests_total: int
    tests_done: int = 0
    turns: int = 0
    tokens: int = 0
    scored: int = 0
    score_sum: float = 0.0
    cost_usd: float = 0.0
    fraction: float = 0.0  # of the agent's work: finished tests, plus how far running ones are through their plan
    elapsed: float = 0.0

    @property
    def score(self) -> float | None:
        return self.score_sum / self.scored if self.scored else None

    @property
    def eta(self) -> float | None:
        """Seconds left, extrapolated from the fraction done so far."""
        if self.fraction >= 1.0:
            return 0.0
        if self.fraction < 0.01 or self.elapsed < 1.0:
            return None
        return self.elapsed * (1.0 - self.fraction) / self.fraction


def measure(agent: str, sessions: Iterable["TurnProgress"], tests_total: int, elapsed: float) -> AgentProgress:
    """The agent's progress from the latest `TurnProgress` of each of its sessions."""
    p = AgentProgress(agent, tests_total, elapsed=elapsed)
    work = 0.0  # tests' worth of work done: ended tests plus how far running ones are
    for s in sessions:
        p.tests_done += s.tests_done
        p.turns += s.turn
        p.tokens += s.tokens
        p.cost_usd += s.cost_usd
        p.scored += s.scored
        p.score_sum += s.score_sum
        work += s.fraction * s.tests_total
    if tests_total:
        p.fraction = min(work / tests_total, 1.0)
    return p


def duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"



def progress_span(datasets: Iterable[Any]) -> int | None:
    """The memory span the progress compares the conversation with: the largest of the datasets that use one (a
    benchmark in reference mode ignores it: no "(40.2x span 4k)" there); None when none does."""
    return max((d.memory_span for d in datasets if "memory_span" not in d.ignored_settings()), default=None)


def describe(p: AgentProgress, span: int | None, scores: bool = True) -> str:
    """The numbers after the agent's name: `12/21 tests, 340 turns, 1.20M tokens (2.4x span 500k), ...`
    (`scores`: with the running score and cost, which a dry run has not)."""
    parts = [f"{p.tests_done}/{plural(p.tests_total, 'test')}", plural(p.turns, "turn")]
    size = f"{short_count(p.tokens)} tokens"
    if span:
        size += f" ({p.tokens / span:.1f}x span {short_count(span)})"
    parts.append(size)
    if scores:
        parts.append("score -" if p.score is None else f"score {p.score:.2f}")
        parts.append(f"cost ${p.cost_usd:.4f}")
    eta = p.eta
    parts.append("ETA -" if eta is None else f"ETA {duration(eta)}")
    return ", ".join(parts)


class RunProgress:
    """Progress of the agents of a run; use as a context manager around the run, pass `on_turn` to it."""

    def __init__(self, console: Console, agents: list[str], tests_per_agent: int, span: int | None = None,
                 live: bool | None = None, clock: Callable[[], float] = time.monotonic, scores: bool = True) -> None:
        self.console = console
        self.scores = scores
        self.agents = list(agents)
        self.tests_per_agent = tests_per_agent
        self.span = span
        self.live = console.is_terminal if live is None else live
        self._clock = clock
        self._sessions: dict[str, dict[str, "TurnProgress"]] = {a: {} for a in agents}
        self._started = clock()
        self._last = -UPDATE_EVERY
        self._last_line = {a: self._started for a in agents}
        self._last_tenth = {a: 0 for a in agents}
        self._lines = {a: 0 for a in agents}
        self._progress: Progress | None = None
        self._tasks: dict[str, TaskID] = {}
        if self.live:
            # Agent names are never cut: their column is as wide as the longest (up to NAME_WIDTH); the numbers
            # wrap under themselves in the room left, so a narrow terminal (80 columns) shows them on two lines.
            name_width = min(max((len(a) for a in agents), default=0), NAME_WIDTH)
            self._progress = Progress(
                TextColumn("{task.description}", table_column=Column(width=name_width, overflow="fold")),
                BarColumn(bar_width=BAR_WIDTH),
                TextColumn("{task.fields[detail]}", table_column=Column(ratio=1, min_width=24, overflow="fold")),
                console=console, transient=True, expand=True,
            )
            self._tasks = {a: self._progress.add_task(a, total=BAR_STEPS, detail="") for a in agents}

    def __enter__(self) -> "RunProgress":
        self._started = self._clock()
        self._last_line = {a: self._started for a in self.agents}
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        now = self._clock()
        if self._progress is not None:
            self._show(now)
            self._progress.stop()
            return
        for agent in self.agents:
            if self._lines[agent]:  # a run long enough to have shown progress gets a last line too
                self._print(agent, now, "end")

    def on_turn(self, turn: "TurnProgress") -> None:
        self._sessions[turn.agent][turn.session] = turn
        now = self._clock()
        if now - self._last >= UPDATE_EVERY:
            self._last = now
            self.refresh(now)

    def snapshot(self, agent: str, now: float | None = None) -> AgentProgress:
        now = self._clock() if now is None else now
        return measure(agent, self._sessions[agent].values(), self.tests_per_agent, now - self._started)

    def refresh(self, now: float | None = None) -> None:
        now = self._clock() if now is None else now
        if self._progress is not None:
            self._show(now)
            return
        for agent in self.agents:
            p = self.snapshot(agent, now)
            tenth = int(10 * p.tests_done / self.tests_per_agent) if self.tests_per_agent else 0
            since = now - self._last_line[agent]
            if since >= LOG_EVERY or (tenth > self._last_tenth[agent] and since >= LOG_MIN_GAP):
                self._last_tenth[agent] = tenth
                self._print(agent, now)

    def _show(self, now: float) -> None:
        assert self._progress is not None
        for agent in self.agents:
            p = self.snapshot(agent, now)
            self._progress.update(self._tasks[agent], completed=round(p.fraction * BAR_STEPS),
                                  detail=describe(p, self.span, self.scores))

    def _print(self, agent: str, now: float, prefix: str = "progress") -> None:
        p = self.snapshot(agent, now)
        self._last_line[agent] = now
        self._lines[agent] += 1
        self.console.print(f"[{duration(now - self._started)}] {prefix} {agent}: {describe(p, self.span, self.scores)}",
                           markup=False, highlight=False, soft_wrap=True)


class StudyProgress:
    """Progress of a study (`grid`): cells finished / running / failed / waiting, and a line per running cell (its
    tests, turns, tokens and running score). Live on a terminal; otherwise a plain line when a cell starts, ends or
    fails, and a count of the cells at most every LOG_EVERY seconds. Pass it as the driver's events."""

    def __init__(self, console: Console, total: int, skipped: int = 0, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.total = total
        self.live = console.is_terminal if live is None else live
        self._clock = clock
        self._started = clock()
        self._last_log = self._started
        self.done = skipped
        self.failed = 0
        self.running: dict[str, str] = {}  # cell -> its line
        self._where: dict[str, str] = {}
        self._progress: Progress | None = None
        self._overall: TaskID | None = None
        self._cells: dict[str, TaskID] = {}
        if self.live:
            self._progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
                                      console=console, transient=True)
            self._overall = self._progress.add_task("cells", total=max(total, 1), detail="")

    def __enter__(self) -> "StudyProgress":
        self._started = self._clock()
        if self._progress is not None:
            self._progress.start()
            self._show()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def counts(self) -> str:
        waiting = self.total - self.done - self.failed - len(self.running)
        return (f"{self.done}/{self.total} cells done, {len(self.running)} running, {self.failed} failed, "
                f"{waiting} waiting")

    def started(self, cell_id: str, where: str) -> None:
        fresh = cell_id not in self.running
        self.running[cell_id] = self.running.get(cell_id, "starting")
        self._where[cell_id] = where
        if self._progress is not None:
            if fresh:
                self._cells[cell_id] = self._progress.add_task(f"  {cell_id}", total=None, detail=where)
            self._show()
        elif fresh:
            self._print(f"started {cell_id} ({where})")

    def tick(self, cell_id: str, tick: "CellTick") -> None:
        if cell_id not in self.running:
            return
        score = tick.score
        self.running[cell_id] = (f"{plural(tick.tests_done, 'test')} done, {plural(tick.turns, 'turn')}, {short_count(tick.tokens)} "
                                 f"tokens, score {'-' if score is None else f'{score:.2f}'}")
        if self._progress is not None:
            self._progress.update(self._cells[cell_id], detail=f"{self.running[cell_id]} ({self._where[cell_id]})")
        else:
            now = self._clock()
            if now - self._last_log >= LOG_EVERY:
                self._last_log = now
                self._print(self.counts() + "; " + "; ".join(f"{c}: {line}" for c, line in self.running.items()))

    def finished(self, outcome: "CellOutcome") -> None:
        cell_id = outcome.cell_id
        self.running.pop(cell_id, None)
        ok = outcome.state == "finished"
        if ok:
            self.done += 1
        else:
            self.failed += 1
        line = (f"finished {cell_id}: score {outcome.score or 0.0:.2f} ({outcome.wall_seconds:.1f} s)" if ok
                else f"failed {cell_id}: {outcome.error}")
        if self._progress is not None:
            task = self._cells.pop(cell_id, None)
            if task is not None:
                self._progress.remove_task(task)
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)
            self._show()
        else:
            self._print(line)

    def _show(self) -> None:
        assert self._progress is not None and self._overall is not None
        self._progress.update(self._overall, completed=self.done + self.failed, detail=self.counts())

    def _print(self, text: str) -> None:
        self.console.print(f"[{duration(self._clock() - self._started)}] {text}", markup=False, highlight=False,
                           soft_wrap=True)
