"""Playing a session again from its event log, without calling the agent for any turn it answered.

Two uses:

* `rescore` replays every session of a finished run: the scheduler and the test programs run as before
  (they are deterministic), the agent's part is played by `TurnReplay` from the recorded replies, LLM
  calls made by test programs are handed back from the log, and only the scoring (rules, or a new judge)
  is new.
* `run --resume` replays an interrupted session the same way (judge calls are handed back too), checking
  every event against the log (`EventLog` in resume mode), then hands the conversation to the live agent:
  its memory is rebuilt from the replayed turns (`Agent.restore`) and the session goes on from the first
  turn that has no recorded reply. Independent questions the agent went back from (`went_back` in the log) are left
  out of the rebuilt memory, as they were out of the agent's: killed in the middle of a benchmark's questions, the
  agent is rebuilt to its state at the end of the history, and nothing is fed to it twice. The scheduler, the virtual clock, the filler generator's random state
  and the test programs' state are thereby exactly those of the interrupted run.

If the conversation the harness builds differs from the recorded one (the definitions or the code changed),
the replay stops with an error naming the first differing turn instead of scoring other answers than were given.
"""

from __future__ import annotations

from pathlib import Path

from ltm_harness._agents.base import Agent, AgentMessage
from ltm_harness._errors import RunFolderError
from ltm_harness._store.eventlog import SessionRecord
from ltm_harness._store.events import TurnEvent
from ltm_harness._store.records import LLMCall


class TurnReplay:
    """The recorded turns of a session, handed back in order, each checked to be the message recorded.

    With `then_live` (resuming) the record may run out: the turn after it goes to the live agent, whose memory
    is first rebuilt from the replayed turns (`restore`). Without it (re-scoring) every turn must be recorded.
    """

    def __init__(self, record: SessionRecord, *, then_live: bool) -> None:
        self._record = record
        self._next = 0
        self.then_live = then_live
        self._heard: list[tuple[AgentMessage, str]] = []
        self._restored = False

    @property
    def path(self) -> Path:
        return self._record.path

    def take(self, message: AgentMessage) -> tuple[TurnEvent, list[LLMCall]] | None:
        """The recorded turn for this message, with the agent's LLM calls behind its reply; None when the record has
        no more turns and the live agent is to answer."""
        turns = self._record.turns
        if self._next >= len(turns):
            if self.then_live:
                return None
            raise RunFolderError(f"{self._record.path}: the replay asks for turn {self._next}, but only {len(turns)} were "
                                 "recorded; the definitions or the harness changed since the run")
        event, calls = turns[self._next]
        if event.user != message.text:
            raise RunFolderError(f"{self._record.path}: turn {event.i} differs from the recorded one; the definitions or "
                                 "the harness changed since the run, so it cannot be re-scored or resumed")
        self._next += 1
        if self.then_live and not event.failed and not event.went_back:  # an independent question the agent went
            self._heard.append((message, event.reply))  # back from is not in its memory: not rebuilt either
        return event, calls

    async def go_live(self, agent: Agent) -> None:
        """Rebuild the live agent's memory from the replayed turns (once, before its first live turn)."""
        if not self._restored:
            self._restored = True
            heard, self._heard = self._heard, []
            await agent.restore(heard)

    @property
    def finished(self) -> bool:
        return self._next == len(self._record.turns)
