"""The event log: one JSON line per event, flushed before the next message is sent.

Events are the single source of truth of a session: results and reports are derived from them.
They hold no wall-clock data, so the same config, seed and agent replies give a byte-identical log.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from ltm_harness.llm.records import LLMCall
from ltm_harness.verdict import JudgeVerdict

EVENT_FORMAT = 1


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


class SessionEnd(BaseModel):
    type: Literal["session_end"] = "session_end"
    turns: int
    pos: int
    time: datetime


Event = Annotated[Union[SessionStart, TurnEvent, TestStart, TestEnd, ClockJump, SessionEnd, LLMCall],
                  Field(discriminator="type")]
_event_adapter: TypeAdapter[Event] = TypeAdapter(Event)


class EventLog:
    """Append-only JSONL writer; every event is flushed to the OS as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w", encoding="utf-8")

    def write(self, event: BaseModel) -> None:
        self._file.write(event.model_dump_json())
        self._file.write("\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_events(path: Path) -> list[Event]:
    with path.open(encoding="utf-8") as f:
        return [_event_adapter.validate_json(line) for line in f if line.strip()]
