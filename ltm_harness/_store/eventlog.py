"""The event log on disk: one JSON line per event, flushed before the next message is sent; read back whole, or
as a session's record to resume or re-score it.

Events are the single source of truth of a session: results and reports are derived from them. They hold no
wall-clock data and nothing that depends on the disk cache, so the same config, seed and agent replies give the same
log, byte for byte, whatever faults the turn policy and the LLM client overcame on the way. What does vary goes to the
log's side file (`<log>.wall`), one line per event it concerns, keyed by the event's line number: each LLM call's
latency, retries and whether the cache answered it (`WallFacts`), and each turn's failed tries with their errors and
times (`TurnWallFacts`, only for turns that had any).

Every write is one write call of a whole line: a write that fails (a full disk, a read-only folder) is taken back to
the last whole line and raised as one `RunFolderWriteError` line, so the log stays resumable.
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Callable, Protocol

from pydantic import BaseModel, TypeAdapter, ValidationError

from ltm_harness._guard.files import open_regular
from ltm_harness._errors import RunFolderError, option
from ltm_harness._store.events import (Event, SessionAborted, SessionStart, TestEnd, TurnEvent, event_adapter,
                                       parse_event)
from ltm_harness._store.files import write_failure, write_text, writing
from ltm_harness._store.formats import (EVENT_FORMAT, FAILED_TRIES_ASIDE, OLDEST_EVENT_FORMAT, RESUMABLE_EVENT_FORMAT,
                                        check_format)
from ltm_harness._store.layout import wall_log
from ltm_harness._store.records import FailedTry, LLMCall, TurnWallFacts, WallFacts

WallEntry = WallFacts | TurnWallFacts  # one line of the side file
_wall_entry: TypeAdapter[WallEntry] = TypeAdapter(WallEntry)


class Recorder(Protocol):
    """Where a session's events go, each before the next turn is sent (an `EventLog`, in a run)."""

    def write(self, event: BaseModel) -> None: ...

    @property
    def replaying(self) -> bool:
        """True while the events written are still those of an earlier run being replayed."""
        ...


class MemoryLog:
    """A recorder that keeps a session's events in memory, for a session whose log is not wanted on disk (a suite
    run from Python without a results folder)."""

    path = Path("<memory>")
    replaying = False

    def __init__(self, on_event: Callable[[BaseModel], None] | None = None) -> None:
        self.events: list[BaseModel] = []
        self.on_event = on_event

    def write(self, event: BaseModel) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def close(self) -> None:
        return None


class ResumeMismatch(RunFolderError):
    """The resumed session produced an event that differs from the recorded one."""


def _write_at(fd: int, data: bytes | memoryview, offset: int) -> int:
    """Write at `offset` (os.pwrite; a seek and a write where there is none, as on Windows); the bytes written."""
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.write(fd, data)


class _LineFile:
    """A file appended to one whole line at a time (one write call each, so the OS has it before the next turn);
    a failed write is cut back to the last whole line and raised as one RunFolderWriteError line."""

    def __init__(self, path: Path, keep_bytes: int | None) -> None:
        self.path = path
        with writing(path):
            path.parent.mkdir(parents=True, exist_ok=True)
            if keep_bytes is None:
                self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                self._size = 0
            else:
                self._fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
                os.ftruncate(self._fd, keep_bytes)
                self._size = keep_bytes

    def write(self, data: bytes) -> None:
        try:  # (as `writing` does, without a context manager per line)
            written = _write_at(self._fd, data, self._size)
            if written < len(data):  # a short write: the rest, as many times as it takes
                view = memoryview(data)[written:]
                while view:
                    view = view[_write_at(self._fd, view, self._size + len(data) - len(view)):]
        except OSError as exc:
            try:
                os.ftruncate(self._fd, self._size)  # no half line is left behind
            except OSError:
                pass
            raise write_failure(self.path, exc) from None
        self._size += len(data)

    def close(self) -> None:
        try:
            os.close(self._fd)
        except OSError:
            pass


class EventLog:
    """Append-only JSONL writer; every event is handed to the OS as it is written.

    Resuming (`recorded`): the file's first `keep_bytes` bytes hold the events of the interrupted run. The
    session is played again from the start; while recorded events remain, each new event must equal the next
    recorded one and is not written again, so the file only ever grows, and a crash at any moment loses at most
    the event being written. Once the recorded events are used up, new events are appended. The side file of
    wall-clock facts (`wall_log`) keeps the entries of the lines kept and is appended to the same way.
    """

    def __init__(self, path: Path, recorded: list[str] | None = None, keep_bytes: int = 0,
                 on_event: Callable[[BaseModel], None] | None = None) -> None:
        self.path = path
        self.on_event = on_event  # sees every event of the session, replayed or new (e.g. to build its results)
        self._recorded = recorded or []
        self._cursor = 0
        self._lines = len(self._recorded)  # lines in the file
        self._wall_path = wall_log(path)
        if recorded is None:
            self._file = _LineFile(path, None)
            with writing(self._wall_path):
                self._wall_path.unlink(missing_ok=True)
        else:
            self._file = _LineFile(path, keep_bytes)  # cut: a torn last line, or events to be made again
            kept = [f for f in _read_wall(path).values() if f.line <= self._lines]
            if kept or self._wall_path.exists():
                write_text(self._wall_path, "".join(f.model_dump_json() + "\n" for f in kept))
        self._wall: _LineFile | None = None

    @property
    def replaying(self) -> bool:
        return self._cursor < len(self._recorded)

    def write(self, event: BaseModel) -> None:
        line = event.model_dump_json()
        if self._cursor < len(self._recorded):
            if line != self._recorded[self._cursor]:
                raise ResumeMismatch(
                    f"{self.path}: event {self._cursor + 1} of the log differs from the one this harness makes now "
                    f"({_kind(self._recorded[self._cursor])} recorded, {_kind(line)} now); the config, the definitions "
                    f"or ltm-harness changed since the run, so it cannot be resumed; run it again with "
                    f"{option('overwrite')}")
            self._cursor += 1
        else:
            self._file.write(line.encode("utf-8") + b"\n")
            self._lines += 1
            facts = _wall_facts(event, self._lines)
            if facts is not None:
                if self._wall is None:
                    self._wall = _LineFile(self._wall_path, self._wall_path.stat().st_size
                                           if self._wall_path.exists() else 0)
                self._wall.write(facts.model_dump_json().encode("utf-8") + b"\n")
        if self.on_event is not None:
            self.on_event(event)

    def close(self) -> None:
        self._file.close()
        if self._wall is not None:
            self._wall.close()


def _wall_facts(event: BaseModel, line: int) -> WallEntry | None:
    """The side-file line of the event written on line `line`, if it has one."""
    if isinstance(event, LLMCall):
        return event.wall_facts(line)
    if isinstance(event, TurnEvent) and event.failed_tries:
        return TurnWallFacts(line=line, failed_tries=event.failed_tries)
    return None


def _read_wall(event_log: Path) -> dict[int, WallEntry]:
    """The wall-clock side file of an event log, by line number of the event (the last entry of a line wins;
    unreadable lines, such as one torn by a crash, are skipped: these facts are only reported)."""
    facts: dict[int, WallEntry] = {}
    try:
        with open_regular(wall_log(event_log), None) as fh:  # a FIFO or device in its place is refused, never read
            raw = fh.read()
    except OSError:
        return facts
    for chunk in raw.splitlines():
        try:
            entry = _wall_entry.validate_json(chunk)
        except ValueError:
            continue
        facts[entry.line] = entry
    return facts


def read_wall_facts(event_log: Path) -> dict[int, WallFacts]:
    """The LLM calls' entries of an event log's side file, by line number of the `llm_call` event."""
    return {n: f for n, f in _read_wall(event_log).items() if isinstance(f, WallFacts)}


def read_failed_tries(event_log: Path) -> dict[int, list[FailedTry]]:
    """The failed tries of the turns of an event log (from its side file), by line number of the `turn` event; turns
    answered at their first try are not in it."""
    return {n: f.failed_tries for n, f in _read_wall(event_log).items() if isinstance(f, TurnWallFacts)}


def _kind(line: str) -> str:
    try:
        event = event_adapter.validate_json(line)
    except ValueError:
        return "an unreadable event"
    turn = getattr(event, "i", None)
    return f"{event.type}" + (f" {turn}" if turn is not None else "")


def check_session_start(path: Path, event: Event) -> None:
    """An event log starts with `session_start` in a format this version reads."""
    if not isinstance(event, SessionStart):
        raise RunFolderError(f"{path}: the event log does not start with a session_start event; it is not an ltm-harness "
                        "event log, or it is damaged; run the benchmark again")
    check_format(path, event.format, EVENT_FORMAT, OLDEST_EVENT_FORMAT, "event log")


def read_events(path: Path) -> list[Event]:
    """Every event of a log, checked (a damaged or foreign log is a RunFolderError)."""
    return _read_log(path, resume=False)[1]


def _read_log(path: Path, resume: bool) -> tuple[list[str], list[Event], list[int]]:
    """The log's lines, their events and the byte offset where each ends; with `resume`, a last line cut short by a
    crash is left out rather than refused."""
    try:
        with open_regular(path, None) as fh:  # a FIFO or device in its place is refused, never read
            raw = fh.read()
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot read the event log ({exc.strerror or type(exc).__name__}); "
                             "the run folder is damaged") from None
    lines: list[str] = []
    events: list[Event] = []
    offsets: list[int] = []  # the byte offset where each kept line ends
    facts = _read_wall(path)
    at = 0
    for chunk in raw.splitlines(keepends=True):
        end = at + len(chunk)
        complete = chunk.endswith(b"\n")
        text = chunk.decode("utf-8", errors="replace").strip()
        at = end
        if not text:
            continue
        try:
            event = parse_event(text)
        except (ValidationError, ValueError):
            if resume and not complete:  # the last line, cut short by a crash
                break
            raise RunFolderError(f"{path}: line {len(lines) + 1} is not a valid event; the run folder is damaged "
                                 f"(run it again with {option('overwrite')})") from None
        if not lines:
            check_session_start(path, event)
        entry = facts.get(len(lines) + 1)
        if isinstance(event, LLMCall):
            event = event.with_facts(entry if isinstance(entry, WallFacts) else None)
        elif isinstance(event, TurnEvent) and isinstance(entry, TurnWallFacts):
            event = event.model_copy(update={"failed_tries": entry.failed_tries})
        lines.append(text)
        events.append(event)
        offsets.append(end)
    return lines, events, offsets


class SessionRecord:
    """One session's recorded turns (with the agent's LLM calls behind each), test-LLM and judge calls.

    With `resume`, the log may end anywhere (the process was killed), and what failed at its end is done again:
    a torn last line, the agent's LLM calls of a turn whose reply was never recorded, an aborted ending (watchdog,
    agent down), and the failed turns the log ends with (an outage: failed turns with no answered turn after them)
    are left out, so the session goes on live from the first of those turns. With `retry_errored` too, the record
    also ends before the session's first failed turn or errored test (`retry_point`), so that all of it is done
    again live. `keep_bytes` says how much of the file holds the events kept.
    """

    def __init__(self, path: Path, resume: bool = False, retry_errored: bool = False) -> None:
        self.path = path
        lines, events, offsets = _read_log(path, resume)
        if resume and events:
            start = events[0]
            check_format(path, getattr(start, "format", 0), EVENT_FORMAT, RESUMABLE_EVENT_FORMAT, "event log (to resume)")
        if resume:
            n = len(events)
            aborted = next((i for i, e in enumerate(events) if isinstance(e, SessionAborted)), None)
            if aborted is not None:  # continue the session from where it was stopped
                n = aborted
            if retry_errored:
                n = min(n, retry_point(events))
            n = _outage_start(events, n)
            while n and _agent_call(events[n - 1]):  # the reply these calls made was never recorded
                n -= 1
            lines, events = lines[:n], events[:n]
        self.lines = lines
        self.keep_bytes = offsets[len(lines) - 1] if lines else 0
        if events and getattr(events[0], "format", EVENT_FORMAT) < FAILED_TRIES_ASIDE:  # replayed as format 5 has them
            events = [e.as_format_5() if isinstance(e, TurnEvent) else e for e in events]
        self.turns: list[tuple[TurnEvent, list[LLMCall]]] = []
        self.test_calls: dict[str, deque[LLMCall]] = {}
        self.judge_calls: dict[str, deque[LLMCall]] = {}
        pending: list[LLMCall] = []
        for e in events:
            if isinstance(e, LLMCall):
                if e.role == "agent":
                    pending.append(e)
                elif e.role in ("test", "judge") and e.test is not None:
                    calls = self.test_calls if e.role == "test" else self.judge_calls
                    calls.setdefault(e.test, deque()).append(e)
            elif isinstance(e, TurnEvent):
                self.turns.append((e, pending))
                pending = []


def retry_point(events: list[Event]) -> int:
    """Where `--retry-errored` takes a session up live: its first failed turn, errored test, or failed test-program
    LLM call of a test that did not end well (errored, or not ended in the log: a replayed failure would error it
    again); the log's length if it has none. Everything before it is replayed; everything from it on is made again."""
    ended_well = {e.test for e in events if isinstance(e, TestEnd) and e.status != "errored"}
    for i, e in enumerate(events):
        if (isinstance(e, TurnEvent) and e.failed) or (isinstance(e, TestEnd) and e.status == "errored") or \
                (isinstance(e, LLMCall) and e.role == "test" and e.error is not None and e.test not in ended_well):
            return i
    return len(events)


def _outage_start(events: list[Event], n: int) -> int:
    """The first of the failed turns that `events[:n]` ends with (no answered turn after them), or `n`: resuming
    asks those turns again, live."""
    start = n
    for i in range(n - 1, -1, -1):
        e = events[i]
        if isinstance(e, TurnEvent):
            if not e.failed:
                break
            start = i
    return start


def _agent_call(event: Event) -> bool:
    return isinstance(event, LLMCall) and event.role == "agent"
