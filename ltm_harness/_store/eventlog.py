"""The event log on disk: one JSON line per event, flushed before the next message is sent; read back whole, or
as a session's record to resume or re-score it.

Events are the single source of truth of a session: results and reports are derived from them. They hold no
wall-clock data but an LLM call's latency and retries, so the same config, seed and agent replies give the same log.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import BinaryIO, Callable, Protocol

from pydantic import BaseModel, ValidationError

from ltm_harness._errors import RunFolderError
from ltm_harness._store.events import Event, SessionAborted, SessionStart, TurnEvent, event_adapter, parse_event
from ltm_harness._store.formats import EVENT_FORMAT, OLDEST_EVENT_FORMAT, RESUMABLE_EVENT_FORMAT, check_format
from ltm_harness._store.records import LLMCall


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


class EventLog:
    """Append-only JSONL writer; every event is flushed to the OS as it is written.

    Resuming (`recorded`): the file's first `keep_bytes` bytes hold the events of the interrupted run. The
    session is played again from the start; while recorded events remain, each new event must equal the next
    recorded one and is not written again, so the file only ever grows, and a crash at any moment loses at most
    the event being written. Once the recorded events are used up, new events are appended.
    """

    def __init__(self, path: Path, recorded: list[str] | None = None, keep_bytes: int = 0,
                 on_event: Callable[[BaseModel], None] | None = None) -> None:
        self.path = path
        self.on_event = on_event  # sees every event of the session, replayed or new (e.g. to build its results)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._recorded = recorded or []
        self._cursor = 0
        self._file: BinaryIO
        if recorded is None:
            self._file = path.open("wb")
        else:
            self._file = path.open("r+b")
            self._file.truncate(keep_bytes)  # a torn last line, or agent calls of a turn never recorded
            self._file.seek(keep_bytes)

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
                    "or ltm-harness changed since the run, so it cannot be resumed; run it again with --overwrite")
            self._cursor += 1
        else:
            self._file.write(line.encode("utf-8") + b"\n")
            self._file.flush()
        if self.on_event is not None:
            self.on_event(event)

    def close(self) -> None:
        self._file.close()


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
        raw = path.read_bytes()
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot read the event log ({exc.strerror or type(exc).__name__}); "
                             "the run folder is damaged") from None
    lines: list[str] = []
    events: list[Event] = []
    offsets: list[int] = []  # the byte offset where each kept line ends
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
                                 "(run it again with --overwrite)") from None
        if not lines:
            check_session_start(path, event)
        lines.append(text)
        events.append(event)
        offsets.append(end)
    return lines, events, offsets


class SessionRecord:
    """One session's recorded turns (with the agent's LLM calls behind each), test-LLM and judge calls.

    With `resume`, the log may end anywhere (the process was killed): a torn last line, the agent's LLM calls
    of a turn whose reply was never recorded, and an aborted ending (watchdog, agent down) are left out, and
    `keep_bytes` says how much of the file holds the events kept.
    """

    def __init__(self, path: Path, resume: bool = False) -> None:
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
            while n and _agent_call(events[n - 1]):  # the reply these calls made was never recorded
                n -= 1
            lines, events = lines[:n], events[:n]
        self.lines = lines
        self.keep_bytes = offsets[len(lines) - 1] if lines else 0
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


def _agent_call(event: Event) -> bool:
    return isinstance(event, LLMCall) and event.role == "agent"
