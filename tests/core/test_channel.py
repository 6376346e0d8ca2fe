"""The channel alone: one turn to an agent under the turn policy, recorded; replayed turns before live ones."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import BaseModel

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._agents.replay import TurnReplay
from ltm_harness._store.eventlog import SessionRecord
from ltm_harness._engine.channel import AgentDown, Channel, Turn, TurnPolicy
from ltm_harness._errors import AgentError
from ltm_harness._store.eventlog import EventLog
from ltm_harness._store.events import SessionStart, TurnEvent

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


class Memory:
    """A recorder that keeps the events."""

    replaying = False

    def __init__(self) -> None:
        self.events: list[BaseModel] = []

    def write(self, event: BaseModel) -> None:
        self.events.append(event)


class Flaky(Agent):
    """Fails its first `fails` calls (with `error`), then echoes; remembers what it was restored with."""

    def __init__(self, fails: int = 0, error: Exception | None = None, delay: float = 0.0) -> None:
        super().__init__("flaky")
        self.fails, self.error, self.delay = fails, error or RuntimeError("boom"), delay
        self.calls = 0
        self.restored: list[tuple[AgentMessage, str]] | None = None

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.calls <= self.fails:
            raise self.error
        return Reply(text=f"echo {message.text}", cost_usd=0.5, prompt_tokens=3, completion_tokens=2)

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        self.restored = turns


def channel(agent: Agent | None, policy: TurnPolicy = TurnPolicy(attempts=3, backoff=0.0), replay=None):
    recorder = Memory()
    return Channel(agent, policy, recorder, lambda text: len(text.split()), lambda call: None, replay), recorder


def turn(i: int, text: str = "hello there") -> Turn:
    return Turn(i, T0, 10 * i, "test", text, len(text.split()), test="t/0", question=True, planned=0)


async def test_a_turn_is_retried_recorded_with_its_failed_tries_and_counted():
    ch, rec = channel(Flaky(fails=2))
    answer = await ch.send(turn(0))
    assert answer.ok and answer.reply == "echo hello there" and answer.tokens == 3
    (event,) = rec.events
    assert isinstance(event, TurnEvent) and not event.failed and event.tries is None
    assert event.errors == []  # the failed tries are wall-clock history: the side file's, not the event's
    assert [t.error for t in event.failed_tries] == ["RuntimeError: boom", "RuntimeError: boom"]
    assert all(t.started.tzinfo is not None and t.latency_ms >= 0 for t in event.failed_tries)
    assert "boom" not in event.model_dump_json()
    assert (ch.cost_usd, ch.prompt_tokens, ch.completion_tokens, ch.failed_turns) == (0.5, 3, 2, 0)


async def test_a_turn_that_fails_every_try_is_recorded_failed_and_a_failed_first_turn_means_down():
    ch, rec = channel(Flaky(fails=99, error=AgentError("agent x: cannot be reached; check it")))
    answer = await ch.send(turn(0))
    assert not answer.ok and answer.reply == ""
    (event,) = rec.events
    # the turn keeps what its test's result says: how many tries, and why the last failed (the user error's own words)
    assert event.failed and event.tries == 3 and event.errors == ["agent x: cannot be reached; check it"]
    assert [t.error for t in event.failed_tries] == ["agent x: cannot be reached; check it"] * 3
    assert ch.failed_reason == "the agent failed turn 0 after 3 attempts: agent x: cannot be reached; check it"
    with pytest.raises(AgentDown, match="failed its first turn"):
        ch.check_down()


async def test_give_up_after_failed_turns_in_a_row():
    agent = Flaky()
    ch, _ = channel(agent, TurnPolicy(attempts=1, backoff=0.0, give_up_after=2))
    await ch.send(turn(0))
    ch.check_down()
    agent.fails, agent.calls = 99, 0
    await ch.send(turn(1))
    ch.check_down()  # one failed turn in a row
    await ch.send(turn(2))
    with pytest.raises(AgentDown, match="2 turns in a row"):
        ch.check_down()


async def test_a_try_that_takes_too_long_is_abandoned():
    ch, rec = channel(Flaky(delay=1.0), TurnPolicy(attempts=2, timeout=0.05, backoff=0.0))
    answer = await ch.send(turn(0))
    (event,) = rec.events
    assert not answer.ok and event.tries == 2 and event.errors == ["no reply within 0.05 s"]
    assert [t.error for t in event.failed_tries] == ["no reply within 0.05 s"] * 2
    assert all(t.latency_ms >= 45 for t in event.failed_tries)  # each try waited for its timeout


async def test_a_fatal_error_stops_the_agent_without_retries():
    agent = Flaky(fails=99, error=AgentError("agent x: answered HTTP 401", fatal=True))
    ch, rec = channel(agent)
    with pytest.raises(AgentDown, match="cannot be used"):
        await ch.send(turn(0))
    assert agent.calls == 1 and rec.events == []


async def test_only_the_oracle_is_handed_the_hint():
    seen: list[str | None] = []

    class Spy(Flaky):
        async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
            seen.append(oracle_hint)
            return Reply(text="ok")

    plain = Spy()
    ch, _ = channel(plain)
    await ch.send(Turn(0, T0, 0, "test", "q", 1, hint="the answer"))
    oracle = Spy()
    oracle.is_oracle = True
    ch, _ = channel(oracle)
    await ch.send(Turn(0, T0, 0, "test", "q", 1, hint="the answer"))
    assert seen == [None, "the answer"]


async def test_recorded_turns_come_first_then_the_live_agent_restored_with_them(tmp_path: Path):
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    log.write(SessionStart(agent="a", session="s", time=T0, tokenizer="cl100k_base"))
    recorded, _ = channel(Flaky())
    recorded.recorder = log
    for i in range(2):
        await recorded.send(turn(i, f"line {i}"))
    log.close()
    live = Flaky()
    ch, rec = channel(live, replay=TurnReplay(SessionRecord(path, resume=True), then_live=True))
    answers = [await ch.send(turn(i, f"line {i}")) for i in range(3)]
    assert [a.reply for a in answers] == ["echo line 0", "echo line 1", "echo line 2"]
    assert live.calls == 1  # only the turn past the record
    assert live.restored is not None and [(m.text, r) for m, r in live.restored] == [
        ("line 0", "echo line 0"), ("line 1", "echo line 1")]
    # a re-scoring has no live agent: a turn past the record is an error, not a call
    ch, _ = channel(None, replay=TurnReplay(SessionRecord(path), then_live=False))
    await ch.send(turn(0, "line 0"))
    await ch.send(turn(1, "line 1"))
    with pytest.raises(Exception, match="only 2 were recorded"):
        await ch.send(turn(2, "line 2"))
