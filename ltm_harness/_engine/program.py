"""Tests as programs: async functions that say, ask, wait and read replies.

A test program receives a `TestContext` and awaits its methods. It is driven by the session
with a trampoline (`ProgramDriver`), not as an asyncio task: each `await ctx.say(...)` hands a
request to the scheduler, which decides deterministically when to fulfil it. Programs may still
await ordinary asyncio work (e.g. an LLM call inside a dynamic test); the driver awaits that on
their behalf and resumes them, so order never depends on event-loop timing.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Coroutine, Generator, Iterable, Literal, Mapping, Protocol, Sequence

from ltm_harness._engine.scheduler import Pause
from ltm_harness._store.events import EnvStep

if TYPE_CHECKING:
    from ltm_harness._scoring.verdict import Judge, JudgeVerdict


class Request:
    """Something a program asks the scheduler for; awaiting it yields it to the driver."""

    __slots__ = ()

    def __await__(self) -> Generator["Request", Any, Any]:
        return (yield self)


@dataclass(slots=True)
class Say(Request):
    text: str
    is_question: bool = False
    kind: Literal["test", "reset"] = "test"
    oracle: str | None = None  # what a perfect agent replies (oracle agent only)
    observe: bool = False  # history that needs no reply (the agent's `observe`)
    role: str = "user"  # who said it (history: "user", "assistant" or a named speaker; see AgentMessage.role)
    independent: bool = False  # a question answered from the memory before it: the agent goes back after it


@dataclass(slots=True)
class WaitFor(Request):
    tokens: int = 0
    time: float = 0.0
    percentage_finished: float = 0.0
    until: datetime | None = None  # the virtual clock must reach this time


@dataclass(slots=True)
class NextTurn(Request):
    """Wait for the next turn of the conversation, whoever's it is (for continual tests)."""


@dataclass(slots=True, frozen=True)
class Heard:
    """A turn of the conversation as a test program sees it."""

    index: int
    user: str
    reply: str
    time: datetime
    own: bool  # the turn was this test's message


@dataclass(slots=True)
class TestOutcome:
    score: float
    max_score: float
    reasons: list[str] = field(default_factory=list)
    unscored: bool = False  # evaluation could not be done (reason given); excluded from means
    verdicts: list["JudgeVerdict"] = field(default_factory=list)  # LLM judge verdicts behind the score
    raw_score: float | None = None  # the test's own score before normalisation (environments), kept in the results
    # One outcome per result part of a test that scores each of its questions on its own (a benchmark conversation
    # with many questions: `DatasetInterface.result_parts`), in that order; empty for a test scored as a whole.
    parts: list["TestOutcome"] = field(default_factory=list)

    __test__ = False


class TestPort(Protocol):
    """What a test program may ask of the session it runs in (and nothing else)."""

    @property
    def now(self) -> datetime: ...

    def time_of_line(self, index: int) -> datetime: ...

    def expect_in_next_reply(self, text: str | None) -> None: ...

    def record_step(self, step: "EnvStep") -> None: ...

    @property
    def judge(self) -> "Judge | None": ...

    @property
    def has_llm(self) -> bool: ...

    async def llm(self, messages: list[dict[str, str]], *, model: str | None, temperature: float | None,
                  max_tokens: int | None, json_mode: bool) -> str: ...


class TestContext:
    """What a test program can do in the conversation."""

    __test__ = False

    def __init__(self, port: TestPort) -> None:
        self._port = port
        self.responses: list[str] = []
        self.questions: list[str] = []
        self.last_heard: Heard | None = None  # this test's latest turn

    async def say(self, text: str, *, oracle: str | None = None) -> str:
        """Say a line that is not a question; returns the agent's reply."""
        reply = await Say(text, False, "test", oracle)
        return reply

    async def tell(self, text: str, role: str = "user") -> None:
        """Say a line of history that needs no reply (a benchmark's earlier sessions, say): the agent takes it in with
        its `observe`, with no model call where it can. An agent without `observe` answers it; that reply is recorded
        but never handed to the test or scored. `role`: who said it: "user" (default), "assistant" (a reply the
        agent under test gave earlier in a user-assistant chat: it remembers it as its own) or a named speaker
        (LoCoMo's "Caroline"; the text then starts with the name)."""
        if not isinstance(role, str) or not role.strip():
            raise ValueError(f"tell(): role must be a non-empty string such as 'user' or 'assistant', not {role!r}")
        await Say(text, False, "test", None, True, role)

    async def ask(self, text: str, *, oracle: str | None = None, independent: bool = False) -> str:
        """Ask a question; the reply is recorded as a response to be evaluated.

        `independent`: the question is answered from the memory as it stands before it, and then forgotten: once the
        reply is recorded the agent goes back to its state before the question (`Agent.snapshot`/`rewind`), so no
        later question sees it (the reference protocol of LoCoMo and BEAM: every question from the memory the
        history left). An agent that cannot go back hears the questions in sequence; the run says so."""
        self.questions.append(text)
        reply = await Say(text, True, "test", oracle, independent=independent)
        self.responses.append(reply)
        return reply

    async def wait(self, tokens: int = 0, time: float = 0.0, percentage_finished: float = 0.0,
                   until: datetime | None = None) -> None:
        """Let the conversation go on: `tokens` since now, `time` virtual seconds since now,
        `percentage_finished` of the memory span since this test started, and the virtual clock at `until` at least
        (a dated history: the next session's date). All that is given must hold."""
        if tokens or time or percentage_finished or until is not None:
            await WaitFor(int(tokens), float(time), float(percentage_finished), until)

    async def next_turn(self) -> Heard:
        return await NextTurn()

    def expect_in_next_reply(self, text: str | None) -> None:
        """Tell the oracle calibration agent what the next reply must contain (continual tests)."""
        self._port.expect_in_next_reply(text)

    def record_step(self, episode: int, step: int, reward: float, done: bool, *, truncated: bool = False,
                    invalid: bool = False, reason: str | None = None) -> None:
        """Record a step of an environment this test plays (the reply to its last question was the action)."""
        self._port.record_step(EnvStep(test="", episode=episode, step=step, reward=reward, done=done,
                                       truncated=truncated, invalid=invalid, reason=reason))

    @property
    def judge(self) -> "Judge | None":
        """The run's LLM judge, or None when the run has none (score by rules then)."""
        return self._port.judge

    async def llm(self, messages: list[dict[str, str]], *, model: str | None = None,
                  temperature: float | None = 0.0, max_tokens: int | None = None, json_mode: bool = False) -> str:
        """Ask the run's test LLM (config.test_llm) from inside a test program, e.g. to play a role.

        The call is recorded in the event log with its response; when a run is resumed or re-scored the
        recorded response is replayed instead of calling again. Raises ConfigError when the run has no test LLM."""
        return await self._port.llm(messages, model=model, temperature=temperature, max_tokens=max_tokens,
                                    json_mode=json_mode)

    @property
    def has_llm(self) -> bool:
        """True when the run has a test LLM (programs may then fall back to scripted lines)."""
        return self._port.has_llm

    @property
    def now(self) -> datetime:
        return self._port.now

    def time_of_line(self, index: int) -> datetime:
        """Virtual time at which this test's `index`-th message was said."""
        return self._port.time_of_line(index)


Program = Callable[[TestContext], Coroutine[Any, Any, TestOutcome]]


@dataclass(frozen=True, slots=True)
class TestProgram:
    """A test as a session runs it: its program, and the planned lines and pauses the scheduler plans with."""

    __test__ = False

    id: str  # unique in the run, e.g. `colours/0`
    group: str  # the dataset: tests of one group never overlap, incompatibilities are between groups
    span: int  # the memory span its waits refer to
    script: tuple[str, ...]  # the planned lines (a dynamic test may say others)
    pauses: tuple[Pause, ...]  # after each planned line
    program: Program
    interleave: bool = True
    anchor_line: int | None = None  # the line holding the answer (gaps and later waits are measured from it)
    reset_message: str = ""  # said after the test ends, when it fits
    # question line -> the earlier lines its answer depends on (its memory distance is measured from the first)
    needs: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    observed: tuple[bool, ...] = ()  # planned lines that are history needing no reply; () for none
    parts: int = 0  # the results it is scored as, one per question part (`TestOutcome.parts`); 0: one, as a whole
    line_tokens: tuple[int, ...] = ()  # each planned line's tokens, counted when the test was made; (): not given
    tokens_by: str = ""  # the encoding that counted them (used only by a session with that tokenizer)


def memory_distance(positions: Sequence[int], needed: Iterable[int], at: int) -> int | None:
    """Conversation tokens from the start of the earliest needed line to position `at` (a question's start):
    the window an agent must keep to have every needed line whole. `positions[i]` is where the test's line i was
    said; needed lines not said (yet) are ignored; None when none was said."""
    said = [positions[i] for i in needed if 0 <= i < len(positions)]
    return at - min(said) if said else None


async def _awaited(future: "asyncio.Future[Any] | None") -> BaseException | None:
    """Wait for what a program awaits (a future, or None: a bare yield such as `asyncio.sleep(0)`) as its task would.
    The program runs in the session's task, so a cancellation of that task meanwhile (a kill, or one the program's own
    code makes: `asyncio.timeout`, an anyio cancel scope in the HTTP client) is the program's: it goes to the future
    (whose await in the program then raises CancelledError) or, when there is none or it is done already, it is
    returned, to be raised in the program. Never lost, and never raised past the program that may handle it."""
    if future is None:
        try:
            await asyncio.sleep(0)
        except asyncio.CancelledError as cancel:
            return cancel
        return None
    while not future.done():
        try:
            await asyncio.wait([future])
        except asyncio.CancelledError as cancel:
            if not future.cancel(cancel.args[0] if cancel.args else None):
                return cancel
    return None


class ProgramDriver:
    """Runs a program coroutine up to its next `Request` (or its end)."""

    __slots__ = ("_coro", "done", "result", "error")

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None

    async def step(self, value: Any = None) -> Request | None:
        send, throw = value, None
        while True:
            try:
                yielded = self._coro.send(send) if throw is None else self._coro.throw(throw)
            except StopIteration as stop:
                self.done, self.result = True, stop.value
                return None
            except Exception as exc:  # a broken test program errors its test, not the run
                self.done, self.error = True, exc
                return None
            send = None
            if isinstance(yielded, Request):
                return yielded
            # A bare yield (e.g. asyncio.sleep(0)) or an asyncio future the program awaits (LLM call, sleep, ...):
            # wait for it, then resume.
            if getattr(yielded, "_asyncio_future_blocking", False):
                yielded._asyncio_future_blocking = False
            throw = await _awaited(yielded)

    def close(self) -> None:
        if not self.done:
            self._coro.close()
            self.done = True
