"""The one way a turn reaches an agent, in every mode: send, time out, try again, give up; count usage; record.

A turn is one user message and the agent's reply. A turn of history that needs no reply (`observe`) is handed to
the agent's `observe` instead (an agent without one answers it with `reply`, and that reply is recorded, never
scored); everything else (policy, record, usage) is the same. The channel asks the agent under the turn policy (`attempts`
tries, each within `timeout` seconds, `backoff` seconds before the second try, doubling after), writes the turn
to the session's event log (with the LLM calls behind the reply, just before it), and sums tokens and cost. A turn
that fails every try is recorded as failed, with why each try failed; an error marked `fatal` (a wrong key, an
unknown model) stops the agent at once. After `give_up_after` failed turns in a row, or a failed first turn, the
agent is taken to be down (`check_down`).

Turns recorded by an earlier run (resuming, re-scoring) are handed back by a `TurnReplay` before the agent is
asked; the channel asks the live agent only once the record is used up.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable, Literal

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._errors import LTMError
from ltm_harness._guard.text import sanitize
from ltm_harness._store.eventlog import Recorder
from ltm_harness._store.events import TurnEvent
from ltm_harness._store.records import LLMCall

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
    """The agent cannot go on (failed turn after turn, or an error no retry can fix)."""


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


@dataclass(frozen=True, slots=True)
class Answer:
    reply: str
    tokens: int
    ok: bool  # False: no try got a reply (`reply` is empty)


def _one_line(exc: BaseException) -> str:
    """An attempt's error for the log: a user error's own sentence, else the exception's class and message."""
    text = " ".join(str(exc).split())[:300]
    if isinstance(exc, LTMError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _as_reply(reply: object) -> Reply:
    """What an agent's `reply` or `observe` returned, as a Reply: text alone, or None (history heard, nothing said)."""
    if reply is None:
        return Reply(text="")
    if isinstance(reply, str):
        return Reply(text=reply)
    if isinstance(reply, Reply):
        return reply
    raise TypeError(f"the agent returned {type(reply).__name__}, not a Reply, a string or None")


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

    @property
    def is_oracle(self) -> bool:
        return self.agent is not None and self.agent.is_oracle

    async def send(self, turn: Turn) -> Answer:
        """Ask the agent (or the record), write the turn, and return the reply with its token count."""
        answer, errors = await self._ask(AgentMessage(text=turn.text, timestamp=turn.time, tokens=turn.tokens,
                                                      observe=turn.observe), turn.hint)
        reply = answer or Reply(text="")
        reply_text = reply.text if isinstance(reply.text, str) else str(reply.text)
        notes: list[str] = []
        reply_text, replaced = sanitize(reply_text)
        if replaced:  # text no UTF-8 file can hold: replaced, and said in the turn's errors as a note
            notes.append(f"note: the reply held {replaced} lone surrogate{'s' if replaced != 1 else ''} (invalid "
                         "Unicode), replaced by U+FFFD")
        user_text, replaced = sanitize(turn.text)
        if replaced:
            notes.append(f"note: the message held {replaced} lone surrogate{'s' if replaced != 1 else ''}, replaced "
                         "by U+FFFD in the log")
        cost = reply.cost_usd
        if cost is not None and not (isinstance(cost, (int, float)) and math.isfinite(cost) and cost >= 0):
            notes.append(f"note: the reply's cost_usd {cost!r} is not a finite non-negative number; recorded as unknown")
            cost = None
        errors = [*errors, *notes] if notes else errors
        reply_tokens = self.count(reply_text)
        for call in reply.llm_calls:
            self.record_call(call)
        self.recorder.write(TurnEvent(
            i=turn.i, time=turn.time, pos=turn.pos, kind=turn.kind, test=turn.test, question=turn.question,
            planned=turn.planned, user=user_text, user_tokens=turn.tokens, reply=reply_text, reply_tokens=reply_tokens,
            prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens, cost_usd=cost,
            failed=answer is None, errors=errors, observed=True if turn.observe else None,
        ))
        self._last_failed = answer is None
        self.observed_turns += turn.observe
        if answer is None:
            self.failed_turns += 1
            self._failed_in_a_row += 1
            self.failed_reason = (f"the agent failed turn {turn.i} after {len(errors)} "
                                  f"attempt{'s' if len(errors) != 1 else ''}: {errors[-1] if errors else 'no reply'}")
        else:
            self._failed_in_a_row = 0
            self._answered += 1
        if cost:
            self.cost_usd += cost
        self.prompt_tokens += reply.prompt_tokens or 0
        self.completion_tokens += reply.completion_tokens or 0
        return Answer(reply_text, reply_tokens, answer is not None)

    def check_down(self) -> None:
        """Raise AgentDown when the last turn failed and the agent counts as down."""
        if not self._last_failed:
            return
        if self._answered == 0:
            raise AgentDown(f"the agent failed its first turn ({self.failed_reason}); the session was stopped")
        if self._failed_in_a_row >= self.policy.give_up_after:
            raise AgentDown(f"the agent failed {self._failed_in_a_row} turns in a row (last: {self.failed_reason}); "
                            "the session was stopped")

    async def _ask(self, message: AgentMessage, hint: str | None) -> tuple[Reply | None, list[str]]:
        """The agent's reply under the turn policy, and why each failed attempt failed (None: all failed).
        A replayed turn gives its recorded outcome instead of asking."""
        if self.replay is not None:
            taken = self.replay.take(message)
            if taken is not None:
                return taken
        agent = self.agent
        assert agent is not None, "a replay without a live agent answers every turn or raises"
        if self.replay is not None:
            await self.replay.go_live(agent)
        policy = self.policy
        errors: list[str] = []
        asked: float | None = None  # the wait the agent asked for with its last failure (Retry-After)
        for attempt in range(policy.attempts):
            if attempt:
                wait = policy.backoff * 2 ** (attempt - 1) if policy.backoff else 0.0
                if asked is not None:
                    wait = max(wait, min(asked, policy.retry_after_max))
                if wait:
                    await asyncio.sleep(wait)
                asked = None
            try:
                async with asyncio.timeout(policy.timeout) as within:
                    if message.observe:
                        reply = await agent.observe(message)
                    else:
                        reply = await agent.reply(message, hint if agent.is_oracle else None)
                return _as_reply(reply), errors
            except TimeoutError as exc:
                if not within.expired():
                    errors.append(_one_line(exc))
                else:
                    errors.append(f"no reply within {policy.timeout:g} s")
            except Exception as exc:
                if getattr(exc, "fatal", False):  # e.g. a wrong key or model name: no retry can help
                    raise AgentDown(f"the agent cannot be used: {exc}") from None
                asked = getattr(exc, "retry_after", None)
                errors.append(_one_line(exc))
        return None, errors
