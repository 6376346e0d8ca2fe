"""HTTPAgent against a local aiohttp agent that implements the protocol of docs/http-agent.md."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from aiohttp import web

from ltm_harness._agents.specs import agent_factory
from ltm_harness.testing import serve_local
from ltm_harness._agents.base import AgentMessage
from ltm_harness._agents.http_agent import HTTPAgent
from ltm_harness._agents.lexical import terms
from ltm_harness._errors import LTMError

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)


class EchoAgent:
    """Remembers per session what it was told; answers a question with the newest statement sharing a word."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.memory: dict[str, list[str]] = {}
        self.mode = "ok"  # or: status, not-json, no-reply, reply-not-string, bare, bad-tokens

    async def handle(self, request: web.Request) -> web.Response:
        data = await request.json()
        self.requests.append(data)
        if self.mode == "status":
            return web.Response(status=503, text="agent overloaded")
        if self.mode == "not-json":
            return web.Response(text="<html>hello</html>", content_type="text/html")
        if self.mode == "no-reply":
            return web.json_response({"answer": "hi"})
        if self.mode == "reply-not-string":
            return web.json_response({"reply": ["hi"]})
        if self.mode == "bare":
            return web.json_response({"reply": "fine", "prompt_tokens": None, "extra": 1})
        if self.mode == "bad-tokens":
            return web.json_response({"reply": "hi", "prompt_tokens": "many"})
        said = self.memory.setdefault(data["session"], [])
        if self.mode == "reset-400" and data.get("reset"):
            return web.Response(status=400, text="no message")
        if data.get("reset"):
            said.clear()
            return web.Response(status=204)
        text = data["message"]
        if text.rstrip().endswith("?"):
            words = set(terms(text))
            reply = next((s for s in reversed(said) if words & set(terms(s))), "I don't know.")
        else:
            said.append(text)
            reply = "OK."
        return web.json_response({"reply": reply, "prompt_tokens": 10 * len(said), "completion_tokens": len(reply.split()),
                                  "cost_usd": 0.001})


@pytest.fixture
async def server():
    agent = EchoAgent()
    app = web.Application()
    app.router.add_post("/agent", agent.handle)
    async with serve_local(app) as url:
        agent.url = f"{url}/agent"
        yield agent


def msg(text: str, minutes: int = 0) -> AgentMessage:
    return AgentMessage(text=text, timestamp=T0 + timedelta(minutes=minutes), tokens=len(text.split()))


# -- spec -------------------------------------------------------------------------------------------
def test_spec_and_session_ids():
    a, b = HTTPAgent("http://127.0.0.1:8080/chat"), HTTPAgent("http://127.0.0.1:8080/chat")
    n = int(a.session_id.removeprefix("ltm-"))
    assert b.session_id == f"ltm-{n + 1}"
    assert a._http is None  # no connection is made when constructing
    assert isinstance(agent_factory("http://localhost:9/x")(), HTTPAgent)


@pytest.mark.parametrize("spec", ["http://", "http://:80/x", "http://host:notaport/x", "http://host:99999/"])
def test_bad_url_rejected(spec):
    with pytest.raises(LTMError):
        HTTPAgent(spec)


def test_bad_timeout_rejected():
    with pytest.raises(LTMError):
        HTTPAgent("http://127.0.0.1:1/x", timeout=0)


# -- the protocol -------------------------------------------------------------------------------------
async def test_round_trip(server):
    agent = HTTPAgent(server.url)
    first = await agent.reply(msg("My favourite colour is Teal."))
    second = await agent.reply(msg("What is my favourite colour?", 90))
    await agent.close()
    assert first.text == "OK."
    assert second.text == "My favourite colour is Teal."
    assert (second.prompt_tokens, second.completion_tokens, second.cost_usd) == (10, 5, 0.001)
    assert server.requests[0] == {"session": agent.session_id, "reset": True}  # a fresh session starts clean
    assert server.requests[1] == {"session": agent.session_id, "message": "My favourite colour is Teal.",
                                  "timestamp": "2024-01-01T09:00:00+00:00", "reset": False}
    assert server.requests[2]["timestamp"] == "2024-01-01T10:30:00+00:00"
    assert datetime.fromisoformat(server.requests[2]["timestamp"]) == T0 + timedelta(minutes=90)


async def test_a_server_left_running_forgets_an_earlier_runs_session(server):
    """Session ids repeat from one run (process) to the next: the reset a fresh session begins with makes the server
    forget what an earlier run told the same id."""
    earlier = HTTPAgent(server.url)
    await earlier.reply(msg("My favourite colour is Teal."))
    await earlier.close()
    again = HTTPAgent(server.url)
    again.session_id = earlier.session_id  # as in a second process
    assert (await again.reply(msg("What is my favourite colour?"))).text == "I don't know."
    await again.close()


async def test_an_agent_that_refuses_the_reset_is_said_once_and_still_runs(server, caplog):
    agent = HTTPAgent(server.url)
    server.mode = "reset-400"
    assert (await agent.reply(msg("My favourite colour is Teal."))).text == "OK."
    await agent.reply(msg("And my cat is Tom."))
    await agent.close()
    said = [r.getMessage() for r in caplog.records if r.name == "ltm_harness.http"]
    assert len(said) == 1 and "answered HTTP status 400 to the reset" in said[0] and "\n" not in said[0]


async def test_optional_fields_may_be_missing(server):
    server.mode = "bare"
    agent = HTTPAgent(server.url)
    reply = await agent.reply(msg("Hello."))
    await agent.close()
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens, reply.cost_usd) == ("fine", None, None, None)


async def test_sessions_are_separate_and_reset(server):
    one, two = HTTPAgent(server.url), HTTPAgent(server.url)
    await one.reply(msg("My favourite colour is Teal."))
    assert (await two.reply(msg("What is my favourite colour?"))).text == "I don't know."
    await one.reset()
    assert server.requests[-1] == {"session": one.session_id, "reset": True}
    assert (await one.reply(msg("What is my favourite colour?"))).text == "I don't know."
    await one.close()
    await two.close()


@pytest.mark.parametrize("mode, words", [
    ("status", ["503", "agent overloaded"]),
    ("not-json", ["not JSON", "<html>"]),
    ("no-reply", ["no \"reply\" field"]),
    ("reply-not-string", ["\"reply\" of type list"]),
    ("bad-tokens", ["prompt_tokens", "'many'"]),
])
async def test_bad_answers_become_user_errors(server, mode, words):
    server.mode = mode
    agent = HTTPAgent(server.url)
    with pytest.raises(LTMError) as info:
        await agent.reply(msg("Hello."))
    await agent.close()
    text = str(info.value)
    assert server.url in text
    for word in words:
        assert word in text


async def test_reset_bad_status(server):
    server.mode = "status"
    agent = HTTPAgent(server.url)
    with pytest.raises(LTMError, match="503"):
        await agent.reset()
    await agent.close()


async def test_timeout(server):
    import asyncio

    done = asyncio.Event()

    async def slow(request: web.Request) -> web.Response:
        await asyncio.wait_for(done.wait(), 5)  # answers only once the test is over
        return web.json_response({"reply": "late"})

    app = web.Application()
    app.router.add_post("/slow", slow)
    async with serve_local(app) as url:
        agent = HTTPAgent(f"{url}/slow", timeout=0.2)
        try:
            with pytest.raises(LTMError, match="no answer within 0.2 s"):
                await agent.reply(msg("Hello."))
        finally:
            done.set()
            await agent.close()


async def test_unreachable(unused_tcp_port):
    agent = HTTPAgent(f"http://127.0.0.1:{unused_tcp_port}/agent")
    with pytest.raises(LTMError, match="cannot be reached"):
        await agent.reply(msg("Hello."))
    await agent.close()


async def test_credentials_in_url_not_shown(server):
    server.mode = "status"
    agent = HTTPAgent(server.url.replace("http://", "http://user:hunter2@"))
    with pytest.raises(LTMError) as info:
        await agent.reply(msg("Hello."))
    await agent.close()
    assert "hunter2" not in str(info.value) and "503" in str(info.value)


async def test_close_is_idempotent_and_reopens(server):
    agent = HTTPAgent(server.url)
    await agent.close()  # never used: nothing to close
    await agent.reply(msg("One."))
    await agent.close()
    await agent.close()
    assert (await agent.reply(msg("Two."))).text == "OK."
    await agent.close()


# -- a whole run ----------------------------------------------------------------------------------------
async def test_end_to_end_run(server, tmp_path):
    from ltm_harness._runner.config import RunConfig
    from ltm_harness._runner.prepare import prepare
    from ltm_harness._runner.run import run_all

    cfg = RunConfig.model_validate({"config": {"run_name": "t"}, "datasets": {
        "args": {"memory_span": 2000, "dataset_examples": 2}, "datasets": [{"name": "colours"}]}})
    summary = await run_all(prepare(cfg, tmp_path), [server.url])
    (agent,) = summary.agents
    assert agent.agent == server.url
    assert sum(d.tests for d in agent.datasets) == 2
    assert all(d.errored == 0 and d.scored == 2 for d in agent.datasets)
    assert len(server.requests) == agent.turns + 1  # and the reset before the first turn
    assert len({r["session"] for r in server.requests}) == 1  # one conversation
    assert agent.agent_prompt_tokens > 0 and agent.cost_usd == pytest.approx(0.001 * agent.turns)
    assert agent.benchmark_score > 0  # it echoes the statements it remembers


def test_timeout_from_the_environment(monkeypatch):
    monkeypatch.setenv("LTM_HTTP_TIMEOUT", "2.5")
    assert HTTPAgent("http://127.0.0.1:9/x").timeout == 2.5
    monkeypatch.setenv("LTM_HTTP_TIMEOUT", "soon")
    with pytest.raises(LTMError, match="LTM_HTTP_TIMEOUT='soon'"):
        HTTPAgent("http://127.0.0.1:9/x")


def test_timeout_from_the_config():
    from ltm_harness._agents.specs import agent_factory
    from ltm_harness.testing import make_config

    cfg = make_config(["colours"], http={"timeout": 1.5})
    make = agent_factory("http://127.0.0.1:9/x", options={"http": cfg.config.http.agent_kwargs()})
    assert make().timeout == 1.5
