"""Gradable agents (aiVLE style), and chat agents of the harness playing test cases.

An `Agent` has `step(state) -> action` and `reset()` (called once before every episode). Test cases
call them on a worker thread, so they may block. The optional `bind_env(env)` hook is called once
with the test case's environment before the first episode.

A chat agent of the harness (`chat_agent_factory("retrieval")`) is not called step by step from a thread: each
case is one conversation in a session of the harness's engine (see `ChatAgents`).
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from typing import Any, Callable

from ltm_harness._agents.base import Agent as ChatAgent
from ltm_harness._agents.specs import agent_factory
from ltm_harness._engine.channel import TurnPolicy
from ltm_harness._engine.program import TestContext, TestOutcome, TestProgram
from ltm_harness._engine.scheduler import Pause
from ltm_harness._engine.session import SessionSettings
from ltm_harness._tokens import DEFAULT_ENCODING, get_tokenizer
from ltm_harness._envs.base import ActiveEnv
from ltm_harness._envs.episode import ActiveText, ChatActor, Step
from ltm_harness._protocols.aivle.worker import CaseFailure, Worker
from ltm_harness._runner.modes import AgentPlan, SessionIO
from ltm_harness._runner.run import play_session
from ltm_harness._store.eventlog import MemoryLog

START_TIME = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


class Agent(ABC):
    """An agent a test case can grade."""

    @abstractmethod
    def step(self, state: Any) -> Any:
        """The action for the observed `state`."""

    @abstractmethod
    def reset(self) -> None:
        """Prepare for a new episode (called once before every episode)."""

    def bind_env(self, env: Any) -> None:
        """Called once with the test case's environment before the first episode (optional)."""

    def close(self) -> None:
        """Release resources after the test case (optional)."""


class ChatAgents:
    """`create_agent` for a chat agent of the harness (oracle, retrieval, openai:..., http://...): every test case
    is played as one conversation with a fresh chat agent, in a session of the harness's engine, so each turn has
    the turn policy (time limit, retries), is recorded in the case's event log and can be resumed.

    Each step is the environment's observation as one message (its rules with the first step of every episode),
    labelled "<environment> episode N"; the reply is read as the action (an unreadable one is an `InvalidAction`,
    which the environment records and counts as a step). The agent keeps its memory across the episodes of a case,
    as a learning agent keeps what it learnt. The oracle calibration agent is handed the optimal action. The case's
    `agent_init` is ignored (a chat agent takes its settings from its spec). A chat agent plays cases whose
    environment has a text interface (an `ltm_harness.envs.ActiveEnv`) and that play episodes
    (`ReinforcementLearningTestCase`).

    `plan` (from a run mode) says where each case's event log goes and what is replayed; without one the events are
    kept in memory only."""

    def __init__(self, spec: str, make: Callable[[], ChatAgent], *, tokenizer: str = DEFAULT_ENCODING,
                 plan: "AgentPlan | None" = None, start_time: datetime = START_TIME, seconds_per_turn: float = 10.0,
                 policy: TurnPolicy | None = None) -> None:
        self.spec = spec
        self.make = make
        self.tokenizer = get_tokenizer(tokenizer)
        self.plan = plan
        self.start_time = start_time
        self.seconds_per_turn = seconds_per_turn
        self.policy = policy or TurnPolicy()

    @property
    def name(self) -> str:
        return self.spec

    async def play_case(self, case: Any, worker: Worker) -> str | None:
        """Play `case` as one conversation; the error that stopped it, if one did."""
        if not isinstance(case.env, ActiveEnv) or not callable(getattr(case, "episodes", None)):
            return (f"a chat agent needs an environment with a text interface (an ltm_harness.envs.ActiveEnv), not "
                    f"{type(case.env).__name__}, in a case that plays episodes (ReinforcementLearningTestCase)")
        failure: list[str] = []

        async def program(ctx: TestContext) -> TestOutcome:
            try:
                await case.episodes(_CaseActor(ctx, ActiveText(case.env)), worker)
            except CaseFailure as exc:
                failure.append(str(exc))
                return TestOutcome(0.0, 1.0, [str(exc)], unscored=True)
            result = case.evaluator.get_result()
            return TestOutcome(0.0, 1.0, [f"{result.name}: {result.value}"], unscored=True)

        if self.plan is not None:
            io = self.plan.open(case.case_id, self.make, lambda event: None)
        else:
            io = SessionIO(self.make(), MemoryLog())
        test = TestProgram(id=case.case_id, group="suite", span=0, script=("",), pauses=(Pause(),), program=program)
        settings = SessionSettings(agent_name=self.spec, session_id=case.case_id, start_time=self.start_time,
                                   seconds_per_turn=self.seconds_per_turn, intro=None, policy=self.policy)
        deadline = asyncio.get_running_loop().time() + case.time_limit
        session = await play_session(io, [test], settings, self.tokenizer, None, deadline=deadline,
                                     deadline_reason=case.time_out_message)
        return failure[0] if failure else session.failure


class _CaseActor(ChatActor):
    """A chat agent in a case's episodes: the environment's messages, labelled with the episode's number."""

    def __init__(self, ctx: TestContext, env: ActiveText) -> None:
        super().__init__(ctx.ask, env)
        self.ctx, self.text, self.episode = ctx, env, 0

    async def begin(self) -> None:
        self.episode += 1
        self.text.label = f"{self.text.env.header.name} episode {self.episode}"

    async def observe(self, step: Step) -> None:
        reason = step.info.get("reason")
        self.ctx.record_step(self.episode - 1, step.t, step.reward + 0.0, step.done, truncated=step.truncated,
                             invalid=step.invalid, reason=str(reason) if reason is not None else None)


def chat_agent_factory(spec: str, tokenizer: str = DEFAULT_ENCODING,
                       options: dict[str, dict[str, Any]] | None = None) -> ChatAgents:
    """`create_agent` for a chat agent spec (checked now, as the run's agents are)."""
    return ChatAgents(spec, agent_factory(spec, tokenizer, options), tokenizer=tokenizer)
