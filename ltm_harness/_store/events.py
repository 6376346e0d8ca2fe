"""The events of a session, as the event log holds them (one JSON line each; see `eventlog` for the file).

Events are the single source of truth of a session: results and reports are derived from them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Union

from pydantic import BaseModel, Field, TypeAdapter

from ltm_harness._store.formats import EVENT_FORMAT
from ltm_harness._store.records import FailedTry, LLMCall, OmitNone
from ltm_harness._scoring.verdict import JudgeVerdict


class SessionStart(BaseModel):
    type: Literal["session_start"] = "session_start"
    format: int = EVENT_FORMAT
    agent: str
    session: str
    time: datetime
    tokenizer: str
    isolated: bool = False


NOTE = "note: "  # how the harness's notes on a turn begin (in its `errors`), told apart from the agent's errors


class TurnEvent(BaseModel):
    """One turn: the message, the reply, and for a turn the agent never answered (`failed`) why. The tries that failed
    before a reply (or all of them) are wall-clock history: `failed_tries` is not part of the event's JSON but of the
    log's side file (`TurnWallFacts`), so that a run whose faults the turn policy overcame writes the same log as a
    run without them."""


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
    tries: OmitNone[int] = None  # a failed turn: how many tries it was given, all failed (format 5; left out otherwise)
    # Format 5: a failed turn's last error first, then the harness's notes on the turn (lone surrogates replaced, a
    # cost that is not a number). Formats 2 to 4: the error of every failed try (answered turns too), then the notes.
    errors: list[str] = Field(default_factory=list)
    failed_tries: list[FailedTry] = Field(default_factory=list, exclude=True)  # in the side file (format 5)
    # history that needs no reply, handed to the agent's `observe` (its `reply` then: what an agent without one said,
    # never scored); left out of the JSON for every other turn
    observed: OmitNone[bool] = None
    # who said the message when not the user ("assistant", or a named speaker such as LoCoMo's "Caroline"); left out
    # for the user
    role: OmitNone[str] = None
    # an independent question (answered from the memory before it): True when the agent went back to its state
    # before the question once the reply was recorded (so it is not in the agent's memory, nor in the conversation's
    # length), False when the agent cannot go back (it was asked in sequence); left out for every other turn
    went_back: OmitNone[bool] = None

    def failure(self) -> tuple[int, str]:
        """A failed turn's number of tries and why the last one failed (format 5; see `as_format_5`)."""
        if self.tries is None:  # not recorded: every try's error is in `errors` (a log of an early format 5)
            return len(self.errors), self.errors[-1] if self.errors else "no reply"
        return self.tries, self.errors[0] if self.tries and self.errors else "no reply"

    def as_format_5(self) -> "TurnEvent":
        """This turn of a format 2 to 4 log as format 5 records it: the failed tries' errors left out of `errors`, a
        failed turn keeping how many tries it had and the last one's error (the harness's notes stay)."""
        notes = [e for e in self.errors if e.startswith(NOTE)]
        tried = [e for e in self.errors if not e.startswith(NOTE)]
        if not self.failed:
            return self.model_copy(update={"errors": notes})
        return self.model_copy(update={"tries": len(tried), "errors": tried[-1:] + notes})


class _TestMoment(BaseModel):
    """Where in the conversation something happened to a test (its `type` is set by each kind)."""

    __test__ = False
    type: str
    test: str
    turn: int
    pos: int
    time: datetime


class TestStart(_TestMoment):
    type: Literal["test_start"] = "test_start"
    span: int  # the memory span the test's waits refer to


Status = Literal["ok", "unscored", "errored"]


class PartEnd(BaseModel):
    """The score of one result part of a test that scores its questions one by one (see `TestEnd.parts`)."""

    score: float
    max_score: float
    status: Status
    reasons: list[str]
    verdicts: list[JudgeVerdict] = Field(default_factory=list)


class TestEnd(_TestMoment):

    type: Literal["test_end"] = "test_end"
    score: float
    max_score: float
    status: Status
    reasons: list[str]
    verdicts: list[JudgeVerdict] = Field(default_factory=list)
    raw_score: OmitNone[float] = None  # the test's own score before normalisation, when it has one (environments)
    # a test scored question by question (a benchmark conversation): each part's score, in the order of the dataset's
    # `result_parts`; the test's own score is their sum. None (left out of the JSON): scored as a whole, or errored
    parts: OmitNone[list[PartEnd]] = None


class EnvStep(BaseModel):
    """One step of an environment played in the conversation: written after the turn whose reply was the action."""

    type: Literal["env_step"] = "env_step"
    test: str
    episode: int  # 0-based, within the test
    step: int  # 0-based, within the episode
    reward: float
    done: bool
    truncated: bool = False  # the step cap ended the episode
    invalid: bool = False  # the reply held no action the environment accepts
    reason: str | None = None  # why it was refused


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


Event = Annotated[Union[SessionStart, TurnEvent, TestStart, TestEnd, EnvStep, ClockJump, SessionAborted, SessionEnd,
                        LLMCall],
                  Field(discriminator="type")]
event_adapter: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(line: str) -> Event:
    return event_adapter.validate_json(line)
