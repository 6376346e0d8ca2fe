"""Run modes: a fresh run, resuming an interrupted one, re-scoring a finished one. The session never knows which.

A mode decides, for each agent folder, where its sessions write their event logs, which earlier turns are handed
back (a `TurnReplay` beside the agent) and which LLM calls of test programs and the judge are replayed, and how
the agent's outputs are committed:

* `Fresh`: every session starts from nothing; the agent's earlier outputs are replaced.
* `Resume`: a finished agent is read back as it is; an interrupted session is played again from its event log
  (each event checked against the one recorded, the file only appended to), the live agent's memory is rebuilt
  from the replayed turns, and the session goes on live from where the log ends, or from the first of the failed
  turns it ends with (an agent that was down is asked those turns again). With `retry_errored`, a finished agent
  with errored tests is taken up too: each of its sessions with a failed turn or an errored test is played again
  up to the first of them and goes on live from there (`SessionRecord`), so the errored tests are done again
  as if they had never failed; sessions without one are replayed whole.
* `Rescore`: every session is played again from its log with no agent at all, into a new folder that replaces
  the old outputs only once it is complete; only the scoring (rules, or a new judge) is new. A dry one replaces
  nothing: it is played to collect what a judge judging in batches asks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from pydantic import BaseModel

from ltm_harness._agents.base import Agent
from ltm_harness._agents.replay import TurnReplay
from ltm_harness._errors import ConfigError, RunFolderError
from ltm_harness._results.outputs import AgentOutputs, finished_outputs
from ltm_harness._store.eventlog import EventLog, MemoryLog, SessionRecord
from ltm_harness._store.layout import MAIN_SESSION, AgentFolder
from ltm_harness._store.records import LLMCall


@dataclass
class SessionIO:
    """What one session talks to, writes to and replays from."""

    agent: Agent | None  # None: every turn is replayed
    log: EventLog | MemoryLog
    replay: TurnReplay | None = None
    test_calls: dict[str, deque[LLMCall]] = field(default_factory=dict)  # test programs' recorded LLM calls
    judge_calls: dict[str, deque[LLMCall]] = field(default_factory=dict)  # recorded judge calls


OnEvent = Callable[[BaseModel], None]


class AgentPlan:
    """One agent's sessions in a mode: where they write and what they replay."""

    def __init__(self, mode: "RunMode", folder: AgentFolder, out: AgentFolder,
                 records: dict[str, SessionRecord] | None = None) -> None:
        self.mode = mode
        self.folder = folder
        self.out = out
        self.records = records or {}
        self._opened: list[SessionIO] = []

    def open(self, session_id: str, make_agent: Callable[[], Agent], on_event: OnEvent) -> SessionIO:
        io = self.mode.open(self, session_id, make_agent, on_event)
        self._opened.append(io)
        return io

    def check_used_up(self) -> None:
        """Every recorded event was played again (else the conversation changed, and nothing is kept)."""
        for io in self._opened:
            if io.log.replaying or (self.mode.every_turn_recorded and io.replay is not None and not io.replay.finished):
                self.abandon()
                raise RunFolderError(f"{io.log.path}: the session ended before all recorded turns were used; the "
                                     "definitions or the harness changed since the run, so it cannot be "
                                     f"{self.mode.verb}")

    def commit(self) -> None:
        if self.out != self.folder:  # a complete re-scoring replaces the old outputs (a dry one leaves them)
            if self.mode.keeps_outputs:
                self.out.swap_in(self.folder)
            else:
                self.out.clear()

    def abandon(self) -> None:
        if self.out != self.folder:  # a failed re-scoring leaves the run as it was
            self.out.clear()


class RunMode(ABC):
    name: str
    verb: str  # what cannot be done when the record does not fit ("resumed", "re-scored")
    every_turn_recorded = False
    keeps_wall_time = False  # the agent did not run now: its summary keeps the recorded wall time
    keeps_outputs = True  # False: a dry re-scoring, made only to see what its judge asks; nothing of it is kept

    @abstractmethod
    def agent(self, folder: AgentFolder, main_session: bool) -> AgentPlan | AgentOutputs:
        """The plan of an agent's sessions, or (resuming) the outputs of an agent that finished.
        `main_session`: the agent has one main conversation (its other sessions, if any, are isolated tests, suite
        cases or a benchmark's conversations of their own)."""

    @abstractmethod
    def open(self, plan: AgentPlan, session_id: str, make_agent: Callable[[], Agent], on_event: OnEvent) -> SessionIO:
        """A session's agent, event log and replays."""


class Fresh(RunMode):
    name, verb = "fresh", "run"

    def agent(self, folder: AgentFolder, main_session: bool) -> AgentPlan:
        folder.clear()  # this agent's earlier outputs for the same definitions are replaced
        return AgentPlan(self, folder, folder)

    def open(self, plan: AgentPlan, session_id: str, make_agent: Callable[[], Agent], on_event: OnEvent) -> SessionIO:
        return SessionIO(_with_state(make_agent(), plan.out, session_id),
                         EventLog(plan.out.session_log(session_id), on_event=on_event))


class Resume(RunMode):
    name, verb = "resume", "resumed"

    def __init__(self, retry_errored: bool = False) -> None:
        self.retry_errored = retry_errored

    def agent(self, folder: AgentFolder, main_session: bool) -> AgentPlan | AgentOutputs:
        done = finished_outputs(folder)
        if done is not None and not (self.retry_errored and any(r.status == "errored" for r in done.results)):
            return done
        logs = folder.session_logs()
        if logs and (MAIN_SESSION in logs) != main_session:
            raise ConfigError(f"{folder.path}: the run was made with isolated: {MAIN_SESSION not in logs}; resume it "
                              "with the same config")
        folder.forget_results()  # a damaged leftover, or the outputs of a stopped agent: made again at the end
        return AgentPlan(self, folder, folder, {sid: SessionRecord(path, resume=True, retry_errored=self.retry_errored)
                                                for sid, path in logs.items()})

    def open(self, plan: AgentPlan, session_id: str, make_agent: Callable[[], Agent], on_event: OnEvent) -> SessionIO:
        path = plan.out.session_log(session_id)
        record = plan.records.get(path.stem if session_id != "main" else session_id)
        agent = _with_state(make_agent(), plan.out, session_id)
        if record is None or not record.lines:  # never started, or killed before its first event: start afresh
            return SessionIO(agent, EventLog(path, on_event=on_event))
        return SessionIO(agent, EventLog(path, record.lines, record.keep_bytes, on_event=on_event),
                         TurnReplay(record, then_live=True), dict(record.test_calls), dict(record.judge_calls))


def _with_state(agent: Agent, folder: AgentFolder, session_id: str) -> Agent:
    """The agent, told where its own memory files for this session go (`Agent.state_dir`): the folder exists before
    its first turn (an agent opens its SQLite file or session file there on turn 1)."""
    agent.state_dir = folder.state_dir(session_id)
    agent.state_dir.mkdir(parents=True, exist_ok=True)
    return agent


class Rescore(RunMode):
    name, verb = "rescore", "re-scored"
    every_turn_recorded = True
    keeps_wall_time = True

    def __init__(self, dry: bool = False) -> None:
        self.keeps_outputs = not dry  # dry: the run's outputs stay as they were (a judge batch's requests collected)

    def agent(self, folder: AgentFolder, main_session: bool) -> AgentPlan:
        records = {sid: SessionRecord(path) for sid, path in folder.session_logs().items()}
        if not records:
            raise RunFolderError(f"{folder.path}: no event log to re-score; run the agent first")
        out = folder.rescoring()
        out.clear()
        return AgentPlan(self, folder, out, records)

    def open(self, plan: AgentPlan, session_id: str, make_agent: Callable[[], Agent], on_event: OnEvent) -> SessionIO:
        path = plan.out.session_log(session_id)
        record = plan.records.get(path.stem if session_id != "main" else session_id)
        if record is None:
            plan.abandon()
            raise RunFolderError(f"{plan.folder.path}: the session {session_id!r} has no event log to re-score; run "
                                 "the agent again")
        return SessionIO(None, EventLog(path, on_event=on_event), TurnReplay(record, then_live=False),
                         dict(record.test_calls))
