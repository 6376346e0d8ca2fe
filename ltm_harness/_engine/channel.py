"""The one way a turn reaches an agent, in every mode: send, time out, try again, give up; count usage; record.

A turn is one user message and the agent's reply. A turn of history that needs no reply (`observe`) is handed to
the agent's `observe` instead (an agent without one answers it with `reply`, and that reply is recorded, never
scored); everything else (policy, record, usage) is the same. The channel asks the agent under the turn policy (`attempts`
tries, each within `timeout` seconds, `backoff` seconds before the second try, doubling after), writes the turn
to the session's event log (with the LLM calls behind the reply, just before it), and sums tokens and cost. The
tries that failed are wall-clock history (a network fault, a slow agent): they go to the log's side file with their
times, so a turn answered after failed tries is recorded as a turn answered at once. A turn that fails every try is
recorded as failed, with how many tries it had and why the last one failed (what its test's result says); an error
marked `fatal` (a wrong key, an unknown model) stops the agent at once. After `give_up_after` failed turns in a row,
or a failed first turn, the agent is taken to be down (`check_down`).

Turns recorded by an earlier run (resuming, re-scoring) are handed back by a `TurnReplay` before the agent is
asked; the channel asks the live agent only once the record is used up.
"""

from __future__ import annotations

import asyncio
import inspect
import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Literal

from ltm_harness._agents.base import USER, Agent, AgentMessage, Reply
from ltm_harness._errors import AgentError, LTMError
from ltm_harness._guard.limits import clip, clip_text, exception_line, kind_of
from ltm_harness._guard.redact import redact
from ltm_harness._guard.text import sanitize
from ltm_harness._store.eventlog import Recorder
from ltm_harness._store.events import NOTE, Status, TurnEvent
from ltm_harness._store.records import FailedTry, LLMCall
from ltm_harness._tokens import plural

if TYPE_CHECKING:  # pragma: no cover
    from ltm_harness._agents.replay import TurnReplay

TurnKind = Literal["intro", "filler", "test", "reset"]


@dataclass(frozen=True)
class TurnPolicy:
    """What a failing agent gets: `attempts` tries per turn, each bounded by `timeout` seconds, `backoff`
    seconds before the second try (doubling after). A turn that fails them all errors its test; after
    `give_up_after` failed turns in a row the agent is taken to be down and the session stops."""

    attempts: int = 3
    timeout: float | None = 600.0
    backoff: float = 0.5
    give_up_after: int = 5
    retry_after_max: float = 300.0  # the longest wait an agent's Retry-After gets (a longer ask waits this long)


class AgentDown(Exception):
    """The agent cannot go on (failed turn after turn, or an error no retry can fix: `every_call`)."""

    def __init__(self, reason: str, every_call: bool = False, status: Status = "errored") -> None:
        super().__init__(reason)
        self.every_call = every_call
        self.status = status  # how the tests it stops are recorded


@dataclass(frozen=True, slots=True)
class Turn:
    """A message to send, and where it stands in the conversation."""

    i: int
    time: datetime
    pos: int
    kind: TurnKind
    text: str
    tokens: int
    test: str | None = None
    question: bool = False
    planned: int | None = None  # a test line's offset from the test's start that its waits asked for
    hint: str | None = None  # what a perfect reply contains (given to the oracle calibration agent only)
    observe: bool = False  # history that needs no reply: handed to the agent's `observe`
    role: str = "user"  # who said it (see AgentMessage.role)
    independent: bool = False  # a question the agent forgets once answered, when it can go back (`went_back`)


@dataclass(frozen=True, slots=True)
class Answer:
    reply: str
    tokens: int
    ok: bool  # False: no try got a reply (`reply` is empty)
    went_back: bool | None = None  # an independent question: whether the agent went back to its state before it


def _one_line(exc: BaseException) -> str:
    """An attempt's error for the log: a user error's own sentence, else the exception's class and message; redacted
    (a URL the agent's code put in its exception loses its user:password and query values) before it is stored."""
    if isinstance(exc, LTMError) and str(exc).strip():
        return clip_text(redact(" ".join(str(exc).split())))
    return redact(exception_line(exc))


async def _maybe_awaited(value: Any) -> Any:
    """What an optional agent method returned, awaited when it is awaitable (authors may write it sync or async)."""
    return await value if inspect.isawaitable(value) else value


def _as_reply(reply: object) -> Reply:
    """What an agent's `reply` or `observe` returned, as a Reply: text alone, or None (history heard, nothing said)."""
    if reply is None:
        return Reply(text="")
    if isinstance(reply, str):
        return Reply(text=reply)
    if isinstance(reply, Reply) and isinstance(reply.text, str):  # (a Reply made by model_construct may hold anything)
        return reply
    what = kind_of(reply) if not isinstance(reply, Reply) else f"a Reply whose text is {kind_of(reply.text)}"
    raise AgentError(f"the agent returned {what}, not a Reply, a string or None; return the reply's text")


class Channel:
    """Turns to one agent (None: every turn must come from `replay`), recorded in `recorder`."""

    def __init__(self, agent: Agent | None, policy: TurnPolicy, recorder: Recorder, count: Callable[[str], int],
                 record_call: Callable[[LLMCall], None], replay: "TurnReplay | None" = None) -> None:
        self.agent = agent
        self.policy = policy
        self.recorder = recorder
        self.count = count
        self.record_call = record_call
        self.replay = replay
        self.cost_usd = 0.0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.failed_turns = 0
        self.observed_turns = 0  # turns of history that needed no reply
        self.failed_reason = ""
        self._failed_in_a_row = 0
        self._answered = 0
        self._last_failed = False
        self.went_back = 0  # independent questions the agent answered and then forgot (went back)
        self.in_sequence = 0  # independent questions the agent could not go back from (asked in sequence)
        self._can_go_back: bool | None = None  # known once the first independent question is asked live
        self._mark: tuple[Any] | None = None  # the agent's snapshot before the independent questions now asked

    @property
    def is_oracle(self) -> bool:
        return self.agent is not None and self.agent.is_oracle

    async def send(self, turn: Turn) -> Answer:
        """Ask the agent (or the record), write the turn, and return the reply with its token count."""
        message = AgentMessage(text=turn.text, timestamp=turn.time, tokens=turn.tokens, observe=turn.observe,
                               role=turn.role)
        recorded = self.replay.take(message) if self.replay is not None else None
        if recorded is not None:
            event, calls = self._replayed(turn, *recorded)
        else:
            event, calls = await self._live(turn, message)
        for call in calls:
            self.record_call(call)
        self.recorder.write(event)
        if event.went_back is not None:
            self.went_back += event.went_back
            self.in_sequence += not event.went_back
        if recorded is None and event.went_back:  # recorded first: a kill before it is undone resumes exactly
            await self._go_back()
        self._last_failed = event.failed
        self.observed_turns += turn.observe
        if event.failed:
            self.failed_turns += 1
            self._failed_in_a_row += 1
            tries, why = event.failure()
            self.failed_reason = (f"the agent failed turn {turn.i} after {tries} attempt{'s' if tries != 1 else ''}: "
                                  f"{why}")
        else:
            self._failed_in_a_row = 0
            self._answered += 1
        if event.cost_usd:
            self.cost_usd += event.cost_usd
        self.prompt_tokens += event.prompt_tokens or 0
        self.completion_tokens += event.completion_tokens or 0
        return Answer(event.reply, event.reply_tokens, not event.failed, event.went_back)

    def _event(self, turn: Turn, user: str, reply: str, **outcome: Any) -> TurnEvent:
        outcome.setdefault("went_back", None)
        return TurnEvent(i=turn.i, time=turn.time, pos=turn.pos, kind=turn.kind, test=turn.test, question=turn.question,
                         planned=turn.planned, user=user, user_tokens=turn.tokens, reply=reply,
                         reply_tokens=self.count(reply), observed=True if turn.observe else None,
                         role=turn.role if turn.role != USER else None, **outcome)

    # -- independent questions: going back ----------------------------------------------------------------------
    async def _prepare_going_back(self, agent: Agent, turn: Turn) -> bool | None:
        """Before a live turn: for an independent question, whether the agent will go back after it (a snapshot of
        its state taken now, unless the one taken before the previous independent question still holds); None for
        any other turn (which makes the snapshot stale)."""
        if not turn.independent:
            self._mark = None
            return None
        if self._can_go_back is None:
            self._can_go_back = agent.can_go_back
        if self._can_go_back and self._mark is None:
            try:
                self._mark = (await _maybe_awaited(agent.snapshot()),)
            except NotImplementedError:  # the agent says, when asked, that it cannot (an HTTP agent without the route)
                self._can_go_back = False
            except Exception as exc:
                raise AgentDown(f"the agent failed to take a snapshot of its state before an independent question: "
                                f"{_one_line(exc)}") from None
        return bool(self._can_go_back)

    async def _go_back(self) -> None:
        """After an independent question was recorded: the agent back to its state before it."""
        assert self.agent is not None and self._mark is not None
        try:
            await _maybe_awaited(self.agent.rewind(self._mark[0]))
        except Exception as exc:
            raise AgentDown(f"the agent failed to go back to its state before an independent question: "
                            f"{_one_line(exc)}") from None

    def _replayed(self, turn: Turn, recorded: TurnEvent, calls: list[LLMCall]) -> tuple[TurnEvent, list[LLMCall]]:
        """The turn as the record has it (reply, usage, failure and notes), at this turn's place."""
        return self._event(turn, sanitize(turn.text)[0], recorded.reply, prompt_tokens=recorded.prompt_tokens,
                           completion_tokens=recorded.completion_tokens, cost_usd=recorded.cost_usd,
                           failed=recorded.failed, tries=recorded.tries, errors=list(recorded.errors),
                           went_back=recorded.went_back), calls

    async def _live(self, turn: Turn, message: AgentMessage) -> tuple[TurnEvent, list[LLMCall]]:
        """The turn as the live agent answers it. What the event says of a failed turn is how many tries it had and
        why the last failed; every failed try, with its time, goes to the side file (`failed_tries`)."""
        agent = self.agent
        assert agent is not None, "a replay without a live agent answers every turn or raises"
        if self.replay is not None:
            await self.replay.go_live(agent)
        went_back = await self._prepare_going_back(agent, turn)
        reply, failures = await self._ask(agent, message, turn.hint)
        notes: list[str] = []
        reply_text, replaced = sanitize(reply.text if reply is not None else "")
        if replaced:  # text no UTF-8 file can hold: replaced, and said in the turn's errors as a note
            notes.append(f"{NOTE}the reply held {replaced} lone surrogate{'s' if replaced != 1 else ''} (invalid "
                         "Unicode), replaced by U+FFFD")
        user_text, replaced = sanitize(turn.text)
        if replaced:
            notes.append(f"{NOTE}the message held {replaced} lone surrogate{'s' if replaced != 1 else ''}, replaced "
                         "by U+FFFD in the log")
        if reply is None:
            return self._event(turn, user_text, "", failed=True, tries=len(failures),
                               errors=[failures[-1].error, *notes], failed_tries=failures, went_back=went_back), []
        cost = reply.cost_usd
        if cost is not None and not (isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0):
            notes.append(f"{NOTE}the reply's cost_usd {clip(cost)} is not a finite non-negative number; recorded as "
                         "unknown")
            cost = None
        return self._event(turn, user_text, reply_text, prompt_tokens=reply.prompt_tokens,
                           completion_tokens=reply.completion_tokens, cost_usd=cost, errors=notes,
                           failed_tries=failures, went_back=went_back), reply.llm_calls

    def check_down(self) -> None:
        """Raise AgentDown when the last turn failed and the agent counts as down."""
        if not self._last_failed:
            return
        if self._answered == 0:
            raise AgentDown(f"the agent failed its first turn ({self.failed_reason}); the session was stopped")
        if self._failed_in_a_row >= self.policy.give_up_after:
            raise AgentDown(f"the agent failed {plural(self._failed_in_a_row, 'turn')} in a row (last: {self.failed_reason}); "
                            "the session was stopped")

    async def _ask(self, agent: Agent, message: AgentMessage, hint: str | None) -> tuple[Reply | None, list[FailedTry]]:
        """The agent's reply under the turn policy (None: every try failed), and the tries that failed."""
        policy = self.policy
        failures: list[FailedTry] = []
        asked: float | None = None  # the wait the agent asked for with its last failure (Retry-After)
        for attempt in range(policy.attempts):
            if attempt:
                wait = policy.backoff * 2 ** (attempt - 1) if policy.backoff else 0.0
                if asked is not None:
                    wait = max(wait, min(asked, policy.retry_after_max))
                if wait:
                    await asyncio.sleep(wait)
                asked = None
            started, clock = datetime.now(timezone.utc), time.perf_counter()
            try:
                async with asyncio.timeout(policy.timeout) as within:
                    if message.observe:
                        reply = await agent.observe(message)
                    else:
                        reply = await agent.reply(message, hint if agent.is_oracle else None)
                return _as_reply(reply), failures
            except TimeoutError as exc:
                error = _one_line(exc) if not within.expired() else f"no reply within {policy.timeout:g} s"
            except Exception as exc:
                if getattr(exc, "fatal", False):  # e.g. a wrong key or model name: no retry can help
                    raise AgentDown(f"the agent cannot be used: {exc}", every_call=True) from None
                asked = getattr(exc, "retry_after", None)
                error = _one_line(exc)
                if getattr(exc, "retry", True) is False:  # e.g. a prompt longer than the model's context: the turn
                    failures.append(FailedTry(error=error, started=started,  # fails, and is not asked again
                                              latency_ms=round((time.perf_counter() - clock) * 1000, 1)))
                    break
            failures.append(FailedTry(error=error, started=started,
                                      latency_ms=round((time.perf_counter() - clock) * 1000, 1)))
        return None, failures
