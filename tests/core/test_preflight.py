"""Before the first turn each agent is checked once: an agent that cannot answer at all (no key, nothing listening, a
model the endpoint does not list, a Python agent whose own check fails) stops the run in one line with exit 2 and
nothing written (no folder, no table, no report, no run in the index); a server without a model list, and an HTTP
agent that does not implement the ping, still run."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from aiohttp import web

from ltm_harness import Agent
from ltm_harness._api import run_async
from ltm_harness._cli.main import main
from ltm_harness._errors import AgentError, LTMError
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness.testing import make_config, serve_local

CONFIG = make_config([{"name": "colours", "args": {"colour_changes": 2}}], span=1000)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_cli(tmp_path: Path, *agents: str) -> list[str]:
    words = ["run", "-c", "default", "--datasets", "colours", "--limit", "1", "--results", str(tmp_path)]
    for agent in agents:
        words += ["-a", agent]
    return words


def nothing_written(tmp_path: Path) -> bool:
    return not any(tmp_path.iterdir())


def test_no_key_is_one_line_and_exit_2_with_nothing_written(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(run_cli(tmp_path, "openai:gpt-4o-mini")) == 2
    out, err = capsys.readouterr()
    assert err == ("error: agent 'openai:gpt-4o-mini': no API key for https://api.openai.com/v1; set OPENAI_API_KEY "
                   "(or point OPENAI_BASE_URL at a local server, which needs none)\n")
    assert out == "" and nothing_written(tmp_path)


def test_an_endpoint_with_nothing_listening_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    port = free_port()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    assert main(run_cli(tmp_path, "retrieval", "openai:mock")) == 2
    out, err = capsys.readouterr()
    assert err == (f"error: agent 'openai:mock': http://127.0.0.1:{port}/v1 (GET /models) cannot be reached; check "
                   "the base URL and that the server is running\n")
    assert out == "" and nothing_written(tmp_path)  # retrieval, which could answer, did not play either


def test_an_http_agent_with_nothing_listening_is_one_line_and_exit_2(tmp_path, capsys):
    port = free_port()
    assert main(run_cli(tmp_path, f"http://127.0.0.1:{port}/chat")) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: agent http://127.0.0.1:{port}/chat: cannot be reached (ClientConnectorError") \
        and err.endswith("check that it is running\n") and err.count("\n") == 1
    assert nothing_written(tmp_path)


async def test_the_model_must_be_listed_by_the_endpoint(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        with pytest.raises(AgentError) as exc:
            await run_async(CONFIG, ["openai:gpt-4o-mni"], results=tmp_path)
        assert str(exc.value).startswith(f"agent 'openai:gpt-4o-mni': {server.url} does not list the model "
                                         "'gpt-4o-mni' (it lists ")
        assert "check the model name, or set config.preflight: false" in str(exc.value)
        assert nothing_written(tmp_path) and not server.requests  # no chat call was made
        out = await run_async(CONFIG, ["openai:mock"], results=tmp_path)  # a listed model plays
        assert out.summary.errors == {} and server.requests
        # with the checks off, the unlisted model reaches its first turn (and fails there, as before)
        off = CONFIG.model_copy(deep=True)
        off.config.preflight = False
        off.config.run_name = "off"
        failed = await run_async(off, ["openai:gpt-4o-mni"], results=tmp_path)
        assert "gpt-4o-mni" in failed.summary.errors["openai:gpt-4o-mni"]


async def chat_only_server():
    """An OpenAI-compatible server without GET /models (404), as some local servers are."""
    async def chat(request: web.Request) -> web.Response:
        return web.json_response({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "Red."}}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    return app


async def test_an_endpoint_without_a_model_list_is_a_note_and_the_run_goes_on(tmp_path, monkeypatch):
    async with serve_local(await chat_only_server()) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url + "/v1")
        out = await run_async(CONFIG, ["openai:anything"], results=tmp_path)
    assert out.summary.errors == {}
    assert (f"agent 'openai:anything': {url}/v1 lists no models (GET /models answered 404), so the model 'anything' "
            "is checked by the first turn") in out.notes


async def test_an_http_agent_that_does_not_implement_the_ping_still_runs(tmp_path):
    seen: list[str] = []

    async def agent(request: web.Request) -> web.Response:  # POST only: the ping's GET gets aiohttp's 405
        body = await request.json()
        if not body.get("reset"):
            seen.append(body.get("message", ""))
        return web.json_response({"reply": "Red."})

    app = web.Application()
    app.router.add_post("/chat", agent)
    gets: list[str] = []

    @web.middleware
    async def count(request: web.Request, handler):  # type: ignore[no-untyped-def]
        if request.method == "GET":
            gets.append(request.path)
        return await handler(request)

    app.middlewares.append(count)
    async with serve_local(app) as url:
        out = await run_async(CONFIG, [f"{url}/chat"], results=tmp_path)
    assert out.summary.errors == {} and gets == ["/chat"]  # pinged once, and the ping was no message
    assert seen and "" not in seen


class Unready(Agent):
    async def preflight(self) -> str | None:
        raise RuntimeError("model weights not found in ./weights")

    async def reply(self, message, oracle_hint=None):  # pragma: no cover - never reached
        return "Red."


class Counted(Agent):
    made = 0

    def __init__(self) -> None:
        super().__init__("counted")
        Counted.made += 1

    async def reply(self, message, oracle_hint=None):
        return "Red."


async def test_a_python_agent_is_made_and_may_check_itself(tmp_path):
    with pytest.raises(AgentError, match=r"agent 'Unready': its preflight check failed \(RuntimeError: model weights "
                                         r"not found in ./weights\); fix the agent"):
        await run_async(CONFIG, [Unready], results=tmp_path)
    assert nothing_written(tmp_path)
    out = await run_async(CONFIG, [Counted], results=tmp_path)
    assert out.summary.errors == {} and Counted.made == 2  # one made for the check, one for the conversation


async def test_a_framework_agent_that_does_not_load_stops_the_run_before_it_starts(tmp_path, monkeypatch):
    pytest.importorskip("langgraph")
    graph = tmp_path / "graph.py"
    graph.write_text("raise RuntimeError('the graph module fails to load')\n")
    with pytest.raises(LTMError) as exc:
        await run_async(CONFIG, [f"langgraph:{graph}:graph"], results=tmp_path / "results")
    assert "the graph module fails to load" in str(exc.value) and not (tmp_path / "results").exists()


def test_the_cli_prints_the_note_of_an_endpoint_without_a_model_list(tmp_path, monkeypatch, capsys):
    async def serve() -> int:
        async with serve_local(await chat_only_server()) as url:
            monkeypatch.setenv("OPENAI_BASE_URL", url + "/v1")
            return await asyncio.to_thread(main, run_cli(tmp_path, "openai:anything") + ["--quiet", "--no-report"])

    assert asyncio.run(serve()) == 0
    assert "note: agent 'openai:anything': " in capsys.readouterr().err


@pytest.mark.parametrize("command", [["aiq"], ["suite", "ltm_harness.aivle.examples:suite"]])
def test_aiq_and_suites_check_their_agents_as_run_does(tmp_path, capsys, command):
    port = free_port()
    assert main([*command, "-a", f"http://127.0.0.1:{port}/chat", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"error: agent http://127.0.0.1:{port}/chat: cannot be reached")
    assert nothing_written(tmp_path)


async def test_a_model_list_longer_than_ten_thousand_is_searched_whole_and_counted_right():
    from ltm_harness._agents.openai_chat import OpenAIChatAgent

    names = [f"model-{i}" for i in range(12_000)]

    async def models(request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": n, "object": "model"} for n in names]})

    app = web.Application()
    app.router.add_get("/v1/models", models)
    async with serve_local(app) as url:
        listed_late = OpenAIChatAgent("openai:model-11999", base_url=f"{url}/v1")
        assert await listed_late.preflight() is None  # listed after the first 10,000: no false refusal
        missing = OpenAIChatAgent("openai:model-x", base_url=f"{url}/v1")
        with pytest.raises(AgentError, match=r"does not list the model 'model-x' \(it lists 12,000: model-0, "):
            await missing.preflight()
        for agent in (listed_late, missing):
            await agent.close()
