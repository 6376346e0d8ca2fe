"""Playing a finished session again from its event log, without calling the agent.

`rescore` replays every session of a run: the scheduler and the test programs run as before (they are
deterministic), the agent's part is played by `ReplayAgent` from the recorded replies, LLM calls made
by test programs are handed back from the log, and only the scoring (rules, or a new judge) is new.
If the conversation the harness builds differs from the recorded one (the definitions or the code
changed), the replay stops with an error naming the first differing turn instead of scoring other
answers than were given.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

from ltm_harness.agents.base import Agent, AgentMessage, Reply
from ltm_harness.errors import UserError
from ltm_harness.events import TurnEvent, read_events
from ltm_harness.llm.records import LLMCall


class SessionRecord:
    """One session's recorded turns (with the agent's LLM calls behind each) and test-LLM calls."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            events = read_events(path)
        except (OSError, ValueError) as exc:
            raise UserError(f"{path}: cannot read the event log ({type(exc).__name__}); the run folder is damaged") from None
        self.turns: list[tuple[TurnEvent, list[LLMCall]]] = []
        self.test_calls: dict[str, deque[LLMCall]] = {}
        pending: list[LLMCall] = []
        for e in events:
            if isinstance(e, LLMCall):
                if e.role == "agent":
                    pending.append(e)
                elif e.role == "test" and e.test is not None:
                    self.test_calls.setdefault(e.test, deque()).append(e)
            elif isinstance(e, TurnEvent):
                self.turns.append((e, pending))
                pending = []


class ReplayAgent(Agent):
    """Answers with the replies recorded in a session's event log, checking each message is the same."""

    def __init__(self, spec: str, record: SessionRecord) -> None:
        super().__init__(spec)
        self._record = record
        self._next = 0

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        turns = self._record.turns
        if self._next >= len(turns):
            raise UserError(f"{self._record.path}: the replay asks for turn {self._next}, but only {len(turns)} were "
                            "recorded; the definitions or the harness changed since the run")
        event, calls = turns[self._next]
        if event.user != message.text:
            raise UserError(f"{self._record.path}: turn {event.i} differs from the recorded one; the definitions or the "
                            "harness changed since the run, so it cannot be re-scored")
        self._next += 1
        return Reply(text=event.reply, prompt_tokens=event.prompt_tokens, completion_tokens=event.completion_tokens,
                     cost_usd=event.cost_usd, llm_calls=calls)

    @property
    def finished(self) -> bool:
        return self._next == len(self._record.turns)
