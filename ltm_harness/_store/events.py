"""The event log: one JSON line per event, flushed before the next message is sent.

Events are the single source of truth of a session: results and reports are derived from them.
They hold no wall-clock data, so the same config, seed and agent replies give a byte-identical log.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, BinaryIO, Callable, Literal, Protocol, Union

from pydantic import BaseModel, Field, TypeAdapter

from ltm_harness._errors import RunFolderError
from ltm_harness._store.formats import EVENT_FORMAT, OLDEST_EVENT_FORMAT, check_format
from ltm_harness._store.records import LLMCall
from ltm_harness._scoring.verdict import JudgeVerdict

__all__ = ["EVENT_FORMAT", "Event", "EventLog", "read_events"]


class SessionStart(BaseModel):
    type: Literal["session_start"] = "session_start"
    format: int = EVENT_FORMAT
    agent: str
    session: str
    time: datetime
    tokenizer: str
    isolated: bool = False


class TurnEvent(BaseModel):
    type: Literal["turn"] = "turn"
    i: int
    time: datetime
    pos: int  # conversation tokens before this turn's message
    kind: Literal["intro", "filler", "test", "reset"]
    test: str | None = None
    question: bool = False
    planned: int | None = None  # for a test's line: the offset from the test's start its waits asked for
    user: str
    user_tokens: int
    reply: str
    reply_tokens: int
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    failed: bool = False  # the agent gave no reply within the turn policy; `reply` is empty
    errors: list[str] = Field(default_factory=list)  # why each failed attempt of this turn failed


class TestStart(BaseModel):
    __test__ = False
    type: Literal["test_start"] = "test_start"
    test: str
    turn: int
    pos: int
    time: datetime
    span: int  # the memory span the test's waits refer to


class TestEnd(BaseModel):
    __test__ = False
    type: Literal["test_end"] = "test_end"
    test: str
    turn: int
    pos: int
    time: datetime
    score: float
    max_score: float
    status: Literal["ok", "unscored", "errored"]
    reasons: list[str]
    verdicts: list[JudgeVerdict] = Field(default_factory=list)


class ClockJump(BaseModel):
    type: Literal["clock_jump"] = "clock_jump"
    turn: int
    time: datetime
    to: datetime


class SessionAborted(BaseModel):
    """The session stopped early (the run's watchdog, or the agent failing turn after turn). The tests still
    running or queued end as errored right after this event; `run --resume` continues from before it."""

    type: Literal["session_aborted"] = "session_aborted"
    turn: int
    pos: int
    time: datetime
    reason: str


class SessionEnd(BaseModel):
    type: Literal["session_end"] = "session_end"
    turns: int
    pos: int
    time: datetime


Event = Annotated[Union[SessionStart, TurnEvent, TestStart, TestEnd, ClockJump, SessionAborted, SessionEnd, LLMCall],
                  Field(discriminator="type")]
_event_adapter: TypeAdapter[Event] = TypeAdapter(Event)


class Recorder(Protocol):
    """Where a session's events go, each before the next turn is sent (an `EventLog`, in a run)."""

    def write(self, event: BaseModel) -> None: ...

    @property
    def replaying(self) -> bool:
        """True while the events written are still those of an earlier run being replayed."""
        ...


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
        event = _event_adapter.validate_json(line)
    except ValueError:
        return "an unreadable event"
    turn = getattr(event, "i", None)
    return f"{event.type}" + (f" {turn}" if turn is not None else "")


def parse_event(line: str) -> Event:
    return _event_adapter.validate_json(line)


def check_session_start(path: Path, event: Event) -> None:
    """An event log starts with `session_start` in a format this version reads."""
    if not isinstance(event, SessionStart):
        raise RunFolderError(f"{path}: the event log does not start with a session_start event; it is not an ltm-harness "
                        "event log, or it is damaged; run the benchmark again")
    check_format(path, event.format, EVENT_FORMAT, OLDEST_EVENT_FORMAT, "event log")


def read_events(path: Path) -> list[Event]:
    with path.open(encoding="utf-8") as f:
        events = [_event_adapter.validate_json(line) for line in f if line.strip()]
    if events:
        check_session_start(path, events[0])
    return events
