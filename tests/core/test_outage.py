"""An agent that goes down, then comes back: resuming goes on live from the first failed turn, `--retry-errored` does
the errored tests of a finished run again, and both end byte for byte where a run that never failed ends.

The agent is a real HTTP agent on 127.0.0.1 (docs/http-agent.md) whose server can be switched down (HTTP 503) for
every message, or for chosen ones, and counts what it is sent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import pytest
from aiohttp import web

from ltm_harness._api import run_async
from ltm_harness._store.eventlog import read_events
from ltm_harness._store.events import SessionAborted, TurnEvent
from ltm_harness.testing import make_config, serve_local

TURNS = {"attempts": 2, "backoff": 0.0, "timeout": 5, "give_up_after": 3}
COMMON = {"what", "which", "is", "the", "a", "my", "you", "i", "me", "to", "of", "do", "did", "please", "tell"}


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in COMMON}


@dataclass
class Server:
    """A remembering HTTP agent: replies with the latest message that shares a word with the new one."""

    down: Callable[[str], bool] = lambda message: False  # which messages get HTTP 503
    memory: dict[str, list[str]] = field(default_factory=dict)
    answered: list[str] = field(default_factory=list)  # the messages answered, in order
    refused: int = 0  # messages answered 503
    restores: int = 0

    @property
    def messages(self) -> int:
        return len(self.answered)

    async def chat(self, request: web.Request) -> web.Response:
        data: dict[str, Any] = await request.json()
        if "restore" in data:
            self.restores += 1
            self.memory[data["session"]] = [turn["message"] for turn in data["restore"]]
            return web.json_response({})
        message = data["message"]
        if self.down(message):
            self.refused += 1
            return web.json_response({"error": "down for maintenance"}, status=503)
        said = self.memory.setdefault(data["session"], [])
        words = _words(message)
        reply = next((m for m in reversed(said) if words & _words(m)), "OK.")
        said.append(message)
        self.answered.append(message)
        return web.json_response({"reply": reply})


@pytest.fixture
async def agent() -> AsyncIterator[tuple[Server, str]]:
    server = Server()
    app = web.Application()
    app.router.add_post("/chat", server.chat)
    async with serve_local(app) as url:
        yield server, f"web={url}/chat"


def config():
    return make_config(["colours", "kv", "prospective_memory", "shopping"], span=1500, examples=1, turns=TURNS)


def files(run: Path) -> dict[str, bytes]:
    """The outputs that must not depend on the outage: the event log and the results."""
    return {name: (run / "web" / name).read_bytes() for name in ("events.jsonl", "results.json")}


async def reference(tmp_path: Path, server: Server, spec: str) -> dict[str, bytes]:
    output = await run_async(config(), [spec], results=tmp_path / "ref")
    assert not output.summary.errors
    server.memory.clear()
    server.refused = 0
    server.answered.clear()
    return files(output.path)


async def test_resume_after_an_outage_goes_live_from_the_first_failed_turn(tmp_path, agent):
    server, spec = agent
    expected = await reference(tmp_path, server, spec)
    total = sum(isinstance(e, TurnEvent) for e in read_events(tmp_path / "ref" / "t" / "web" / "events.jsonl"))

    server.down = lambda message: server.messages >= 20  # the agent goes down after 20 answers, for good
    output = await run_async(config(), [spec], results=tmp_path / "out")
    assert "failed 3 turns in a row" in output.summary.errors["web"]
    events = read_events(output.path / "web" / "events.jsonl")
    failed = [e for e in events if isinstance(e, TurnEvent) and e.failed]
    assert len(failed) == 3 and failed[0].i == 20 and sum(isinstance(e, SessionAborted) for e in events) == 1

    server.down = lambda message: False  # back up
    answered = server.messages
    output = await run_async(config(), [spec], results=tmp_path / "out", resume=True)
    assert not output.summary.errors
    # one restore with the 20 turns answered, then every turn from the first failed one, asked live
    assert server.restores == 1 and server.messages - answered == total - 20
    assert files(output.path) == expected
    assert output.summary.agents[0].failed_turns == 0


async def test_resume_while_the_agent_is_still_down_stops_again_and_changes_nothing_answered(tmp_path, agent):
    server, spec = agent
    expected = await reference(tmp_path, server, spec)
    server.down = lambda message: server.messages >= 20
    await run_async(config(), [spec], results=tmp_path / "out")
    output = await run_async(config(), [spec], results=tmp_path / "out", resume=True)  # still down
    assert "failed 3 turns in a row" in output.summary.errors["web"]
    events = read_events(output.path / "web" / "events.jsonl")
    assert [e.i for e in events if isinstance(e, TurnEvent) and e.failed] == [20, 21, 22]
    server.down = lambda message: False
    output = await run_async(config(), [spec], results=tmp_path / "out", resume=True)
    assert not output.summary.errors and files(output.path) == expected


async def test_retry_errored_does_the_errored_tests_again_as_if_they_had_never_failed(tmp_path, agent):
    server, spec = agent
    expected = await reference(tmp_path, server, spec)
    question = "What is my favourite colour?"
    server.down = lambda message: question in message  # one question fails every try; the rest goes on
    output = await run_async(config(), [spec], results=tmp_path / "out")
    assert not output.summary.errors  # finished, with an errored test
    results = {r.dataset: r for r in output.results("web")}
    assert results["colours"].status == "errored" and "HTTP status 503" in results["colours"].reasons[0]
    errored = [r.status for r in results.values()].count("errored")
    assert errored < 4  # the others went on (a test watching the failed turn errs too)

    server.down = lambda message: False
    output = await run_async(config(), [spec], results=tmp_path / "out", resume=True)  # resume keeps a finished run
    assert [r.status for r in output.results("web")].count("errored") == errored
    before = server.messages
    output = await run_async(config(), [spec], results=tmp_path / "out", retry_errored=True)
    assert not output.summary.errors and all(r.status == "ok" for r in output.results("web"))
    assert files(output.path) == expected
    events = read_events(output.path / "web" / "events.jsonl")
    first_failed = next(e.i for e in read_events(tmp_path / "ref" / "t" / "web" / "events.jsonl")
                        if isinstance(e, TurnEvent) and question in e.user)
    turns = sum(isinstance(e, TurnEvent) for e in events)
    assert server.messages - before == turns - first_failed  # only from the failed turn on, asked live
    assert question in server.answered[before]  # the first asked live: the turn that failed
    assert server.restores == 1

    # a finished run without errored tests: --retry-errored asks the agent nothing and keeps every file as it is
    before = server.messages
    output = await run_async(config(), [spec], results=tmp_path / "out", retry_errored=True)
    assert server.messages == before and files(output.path) == expected


async def test_retry_errored_with_nothing_there_runs_the_benchmark(tmp_path, agent):
    server, spec = agent
    expected = await reference(tmp_path, server, spec)
    output = await run_async(config(), [spec], results=tmp_path / "out", retry_errored=True)
    assert files(output.path) == expected and any("nothing to resume" in n for n in output.notes)
