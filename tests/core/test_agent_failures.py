"""An agent that fails: turns retried by the policy, then the test errored with the reason, the other tests going
on; an agent that is down stops its session; the watchdog ends any run, and the run can then be resumed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ltm_harness._agents.specs as runner  # where agents are made from their specs
from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._agents.baselines import NullAgent, RetrievalAgent
from ltm_harness._errors import LTMError
from ltm_harness._store.eventlog import read_events
from ltm_harness._store.events import SessionAborted, TurnEvent
from ltm_harness._runner.modes import Resume
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness.testing import make_config

FAST = {"attempts": 3, "backoff": 0.0, "timeout": 0.2, "give_up_after": 3}


class Flaky(Agent):
    """Retrieval, except for the messages `fail` says: it raises (or stalls) on them, `times` times each."""

    def __init__(self, spec: str, fail, times: int = 99, stall: bool = False, inner: Agent | None = None) -> None:
        super().__init__(spec)
        self.inner = inner or RetrievalAgent("retrieval")
        self.fail, self.times, self.stall = fail, times, stall
        self.failures: dict[str, int] = {}
        self.asked = 0

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        self.asked += 1
        if self.fail(message.text) and self.failures.get(message.text, 0) < self.times:
            self.failures[message.text] = self.failures.get(message.text, 0) + 1
            if self.stall:
                await asyncio.sleep(30)
            raise ConnectionError("the agent's backend went away")
        return await self.inner.reply(message, oracle_hint)

    async def restore(self, turns):
        await self.inner.restore(turns)


def use(monkeypatch, make) -> None:
    monkeypatch.setattr(runner, "agent_factory", lambda spec, tok, options=None: lambda: make(spec))


def results(run_dir: Path, agent: str = "retrieval") -> dict[str, dict]:
    return {f"{r['dataset']}/{r['example_id']}": r
            for r in json.loads((run_dir / agent / "results.json").read_text())}


def derived_equals_written(cfg, results_root: Path) -> None:
    """results.json is still what the event log says, failed turns and stopped sessions included."""
    from ltm_harness._results.derive import results_from_events

    prepared = prepare(cfg, results_root, resume=True)
    examples = {e.unique_id: e for exs in prepared.examples.values() for e in exs}
    datasets = {d.name: d for d, _ in prepared.datasets}
    derived = results_from_events(read_events(results_root / "t" / "retrieval" / "events.jsonl"), examples, datasets)
    written = json.loads((results_root / "t" / "retrieval" / "results.json").read_text())
    assert [r.model_dump(mode="json") for r in derived] == written


def config(**extra):
    return make_config(["colours", "kv", "prospective_memory", "shopping"], span=1500, examples=1,
                       turns=FAST, **extra)


async def reference(tmp_path: Path) -> dict[str, dict]:
    await run_all(prepare(config(), tmp_path / "ref"), ["retrieval"])
    return results(tmp_path / "ref" / "t")


async def test_a_turn_that_fails_once_is_retried_and_nothing_changes(tmp_path, monkeypatch):
    ref = await reference(tmp_path)
    use(monkeypatch, lambda spec: Flaky(spec, lambda text: "?" in text, times=1))
    summary = await run_all(prepare(config(), tmp_path), ["retrieval"])
    assert results(tmp_path / "t") == ref
    turns = [e for e in read_events(tmp_path / "t" / "retrieval" / "events.jsonl") if isinstance(e, TurnEvent)]
    retried = [t for t in turns if t.failed_tries]  # read back from the side file
    assert retried and all(not t.failed and not t.errors and [f.error for f in t.failed_tries] ==
                           ["ConnectionError: the agent's backend went away"] for t in retried)
    log, clean = (root / "t" / "retrieval" / "events.jsonl" for root in (tmp_path, tmp_path / "ref"))
    assert log.read_bytes() == clean.read_bytes()  # the retries left no trace in the log
    assert summary.agents[0].failed_turns == 0 and not summary.errors


async def test_a_question_that_always_fails_errors_only_its_test(tmp_path, monkeypatch):
    ref = await reference(tmp_path)
    agents: list[Flaky] = []

    def make(spec):
        agents.append(Flaky(spec, lambda text: "What is my favourite colour?" in text))
        return agents[-1]

    use(monkeypatch, make)
    summary = await run_all(prepare(config(), tmp_path), ["retrieval"])
    got = results(tmp_path / "t")
    assert got["colours/0"]["status"] == "errored"
    assert got["colours/0"]["reasons"] == [
        f"the agent failed turn {got['colours/0']['end_turn'] - 1} after 3 attempts: "
        "ConnectionError: the agent's backend went away"]
    for name, r in got.items():  # the others are scored as before (one empty reply moved their gaps a little)
        if name != "colours/0":
            assert (r["status"], r["score"]) == (ref[name]["status"], ref[name]["score"]), name
    assert agents[0].failures == {next(iter(agents[0].failures)): 3}  # tried 3 times, then left
    failed = [e for e in read_events(tmp_path / "t" / "retrieval" / "events.jsonl") if isinstance(e, TurnEvent) and e.failed]
    assert len(failed) == 1 and failed[0].reply == "" and failed[0].tries == 3 and len(failed[0].failed_tries) == 3
    assert failed[0].errors == ["ConnectionError: the agent's backend went away"]
    assert summary.agents[0].failed_turns == 1 and not summary.errors
    assert summary.agents[0].datasets[0].errored == 1
    derived_equals_written(config(), tmp_path)


async def test_a_turn_that_times_out_is_retried_then_errors_its_test(tmp_path, monkeypatch):
    use(monkeypatch, lambda spec: Flaky(spec, lambda text: "What is my favourite colour?" in text, stall=True))
    await run_all(prepare(config(), tmp_path), ["retrieval"])
    got = results(tmp_path / "t")["colours/0"]
    assert got["status"] == "errored" and got["reasons"][0].endswith("after 3 attempts: no reply within 0.2 s")


async def test_a_failed_turn_errors_the_tests_that_watch_it(tmp_path, monkeypatch):
    cfg = make_config(["prospective_memory", "colours"], span=1500, examples=1, turns=FAST)
    state: dict[str, str] = {}

    def fail(text: str) -> bool:  # the first message after the prospective-memory request: the test watches it
        if "please append the quote" in text:
            state["asked"] = text
        elif "asked" in state and "failing" not in state:
            state["failing"] = text
        return text == state.get("failing")

    # Null inside: retrieval would answer the request with the quote (its best match), ending the test at once.
    use(monkeypatch, lambda spec: Flaky(spec, fail, inner=NullAgent("null")))
    await run_all(prepare(cfg, tmp_path), ["retrieval"])
    events = read_events(tmp_path / "t" / "retrieval" / "events.jsonl")
    failed = [e for e in events if isinstance(e, TurnEvent) and e.failed]
    assert len(failed) == 1
    got = results(tmp_path / "t")
    watching = [r for r in got.values() if "a turn this test watches" in " ".join(r["reasons"])]
    assert [r["dataset"] for r in watching] == ["prospective_memory"] and watching[0]["status"] == "errored"


async def test_an_agent_that_is_down_stops_its_session_with_every_test_accounted_for(tmp_path, monkeypatch):
    seen: list[int] = []

    def make(spec):
        agent = Flaky(spec, lambda text: len(seen) > 12)
        original = agent.reply

        async def reply(message, hint=None):
            seen.append(1)
            return await original(message, hint)

        agent.reply = reply  # type: ignore[method-assign]
        return agent

    use(monkeypatch, make)
    cfg = make_config(["colours", "kv", "jokes", "shopping"], span=1500, examples=2, turns=FAST)
    summary = await run_all(prepare(cfg, tmp_path), ["retrieval"])
    assert "failed 3 turns in a row" in summary.errors["retrieval"]
    got = results(tmp_path / "t")
    assert len(got) == 8  # every test has a result
    errored = [r for r in got.values() if r["status"] == "errored"]
    assert errored and all("the session was stopped" in r["reasons"][0] or "the agent failed turn" in r["reasons"][0]
                           for r in errored)
    assert any(r["reasons"][0].startswith("not started:") for r in errored)
    events = read_events(tmp_path / "t" / "retrieval" / "events.jsonl")
    assert sum(isinstance(e, SessionAborted) for e in events) == 1 and events[-1].type == "session_end"
    derived_equals_written(cfg, tmp_path)


async def test_an_error_no_retry_can_fix_stops_at_once(tmp_path, monkeypatch):
    class WrongKey(Agent):
        calls = 0

        async def reply(self, message, oracle_hint=None):
            WrongKey.calls += 1
            if WrongKey.calls > 3:
                raise LTMError("the endpoint answered HTTP 401: invalid key; check the key", fatal=True)
            return Reply(text="OK.")

    use(monkeypatch, WrongKey)
    summary = await run_all(prepare(config(), tmp_path), ["retrieval"])
    assert WrongKey.calls == 4  # not retried
    assert "the agent cannot be used: the endpoint answered HTTP 401" in summary.errors["retrieval"]


async def test_the_watchdog_ends_a_run_and_resume_finishes_it_identically(tmp_path, monkeypatch):
    ref = await reference(tmp_path)

    class Slow(RetrievalAgent):
        async def reply(self, message, oracle_hint=None):
            await asyncio.sleep(0.01)
            return await super().reply(message, oracle_hint)

    use(monkeypatch, Slow)
    loop = asyncio.get_running_loop()
    started = loop.time()
    summary = await run_all(prepare(config(watchdog=0.3), tmp_path), ["retrieval"])
    assert loop.time() - started < 5
    assert "the run's watchdog stopped it after 0.3 s (config.watchdog)" in summary.errors["retrieval"]
    got = results(tmp_path / "t")
    assert len(got) == len(ref) and any(r["status"] == "errored" for r in got.values())
    # the watchdog's ending is not a result: resuming (with more time) continues from before it
    from ltm_harness._results.outputs import folder_state
    from ltm_harness._store.layout import RunFolder

    state = folder_state(RunFolder(tmp_path / "t"))
    assert (state.finished, state.interrupted) == ([], ["retrieval"])
    summary = await run_all(prepare(config(watchdog=60), tmp_path, resume=True), ["retrieval"], mode=Resume())
    assert not summary.errors and results(tmp_path / "t") == ref
    assert (tmp_path / "t" / "retrieval" / "events.jsonl").read_bytes() == \
        (tmp_path / "ref" / "t" / "retrieval" / "events.jsonl").read_bytes()


@pytest.mark.parametrize("field,value", [("attempts", 0), ("timeout", -1), ("give_up_after", 0)])
def test_turn_policy_values_are_checked(tmp_path, field, value):
    from ltm_harness._runner.config import RunConfig
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        RunConfig.model_validate({"config": {"turns": {field: value}}})
