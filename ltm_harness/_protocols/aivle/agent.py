"""Gradable agents (aiVLE style) and the adapter that makes any chat agent of the harness one.

An `Agent` has `step(state) -> action` and `reset()` (called once before every episode). Test cases
call them on a worker thread, so they may block. The optional `bind_env(env)` hook is called once
with the test case's environment before the first episode; chat agents need it to turn an
observation into a message and a reply into an action.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from typing import Any, Callable

from ltm_harness._agents.specs import Agent as ChatAgent
from ltm_harness._agents.specs import AgentMessage, agent_factory
from ltm_harness._engine.clock import VirtualClock
from ltm_harness._envs.base import Action, ActiveEnv, InvalidAction, Observation
from ltm_harness._store.events import TurnEvent
from ltm_harness._engine.tokens import DEFAULT_ENCODING, get_tokenizer

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


class ChatAgentAdapter(Agent):
    """A chat agent of the harness (oracle, retrieval, openai:..., http://...) as a gradable agent.

    Each step renders the observation as a message (the rules with the first step of every episode),
    sends it to the chat agent and reads the reply as an action; an unreadable reply becomes an
    `InvalidAction`, which the environment records and counts as a step. `reset` starts a new episode
    in the same conversation: the agent keeps its memory across the episodes of a test case, as a
    learning agent keeps what it learnt. The oracle calibration agent is handed the environment's
    optimal action with every message. `agent_init` of the test case is accepted and ignored (a
    chat agent takes its settings from its spec).

    The chat agent's async `reply` runs on an event loop owned by this adapter, in the thread that
    calls `step` (a test case's worker thread); do not call `step` from a thread running a loop.
    """

    def __init__(self, chat: ChatAgent, *, tokenizer: str = DEFAULT_ENCODING, start_time: datetime = START_TIME,
                 seconds_per_turn: float = 10.0, agent_init: dict[str, Any] | None = None) -> None:
        self.chat = chat
        self.agent_init = dict(agent_init or {})
        self.env: ActiveEnv | None = None
        self.turns: list[TurnEvent] = []  # every message and reply, in the event log's format
        self.episode = 0
        self._first = True
        self._pos = 0
        self._tokenizer = get_tokenizer(tokenizer)
        self._clock = VirtualClock(start_time, seconds_per_turn)
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return self.chat.name

    def bind_env(self, env: Any) -> None:
        if not isinstance(env, ActiveEnv):
            raise TypeError(f"a chat agent needs an environment with a text interface (an ltm_harness.envs.ActiveEnv), "
                            f"not {type(env).__name__}")
        self.env = env

    def reset(self) -> None:
        self.episode += 1
        self._first = True

    def _run(self, coro: Any) -> Any:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coro)

    def step(self, state: Observation) -> Action | InvalidAction:
        env = self.env
        if env is None:
            raise RuntimeError("ChatAgentAdapter.step before bind_env: the test case must hand over its environment")
        label = f"{env.header.name} episode {self.episode or 1}"
        text = env.prompt(state, label=label, first=self._first)
        self._first = False
        hint = json.dumps({"action": env.oracle_action()}) if self.chat.is_oracle else None
        tokens = self._tokenizer.count(text)
        now = self._clock.now
        reply = self._run(self.chat.reply(AgentMessage(text=text, timestamp=now, tokens=tokens), hint))
        reply_text = reply.text if isinstance(reply.text, str) else str(reply.text)
        reply_tokens = self._tokenizer.count(reply_text)
        self.turns.append(TurnEvent(
            i=len(self.turns), time=now, pos=self._pos, kind="test", test=label, question=True, user=text,
            user_tokens=tokens, reply=reply_text, reply_tokens=reply_tokens, prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens, cost_usd=reply.cost_usd,
        ))
        self._pos += tokens + reply_tokens
        self._clock.tick()
        return env.parse_action(reply_text)

    def close(self) -> None:
        try:
            self._run(self.chat.close())
        finally:
            if self._loop is not None:
                self._loop.close()


def chat_agent_factory(spec: str, tokenizer: str = DEFAULT_ENCODING,
                       options: dict[str, dict[str, Any]] | None = None) -> Callable[..., ChatAgentAdapter]:
    """`create_agent(**agent_init)` for a chat agent spec (checked now, as `ltm_harness._agents.specs.agent_factory`)."""
    make = agent_factory(spec, tokenizer, options)

    def create_agent(**agent_init: Any) -> ChatAgentAdapter:
        return ChatAgentAdapter(make(), tokenizer=tokenizer, agent_init=agent_init)

    return create_agent
