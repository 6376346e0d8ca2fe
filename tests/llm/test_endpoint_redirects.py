"""One redirect policy for every outgoing request (docs/security.md, "Redirects"): an LLM's, a judge's or an agent's
endpoint that answers 302/307 is never followed. A server on 127.0.0.1 redirects every request to another loopback
address (127.0.0.2) whose server answers as an OpenAI-compatible endpoint would and records whether anything reached
it: nothing does, and the call fails in one line naming the redirect (downloads, which check each hop, are tested in
tests/datasets/test_download_bounds.py and tests/core/test_redaction_sites.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

import pytest
from aiohttp import web

from ltm_harness._cli.main import main
from ltm_harness._errors import AgentError, LLMError
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint

ASK = [{"role": "user", "content": "My cat is called Tom. What is my cat called?"}]
COMPLETION = {"id": "x", "object": "chat.completion", "created": 0, "model": "mock",
              "choices": [{"index": 0, "message": {"role": "assistant", "content": "Tom"}, "finish_reason": "stop"}],
              "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}


@asynccontextmanager
async def served(app: web.Application, host: str) -> AsyncIterator[str]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield f"http://{host}:{port}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def redirected(status: int) -> AsyncIterator[tuple[str, list[str]]]:
    """(the redirecting server's URL, the requests that reached the server it points to)."""
    reached: list[str] = []

    async def elsewhere(request: web.Request) -> web.Response:
        reached.append(f"{request.method} {request.path}")
        if request.path.endswith("/models"):
            return web.json_response({"object": "list", "data": [{"id": "mock", "object": "model"}]})
        return web.json_response(COMPLETION if request.path.endswith("/chat/completions") else {"reply": "Tom"})

    other = web.Application()
    other.router.add_route("*", "/{tail:.*}", elsewhere)
    async with served(other, "127.0.0.2") as target:

        async def redirect(request: web.Request) -> web.Response:
            return web.Response(status=status, headers={"Location": f"{target}{request.path_qs}"})

        first = web.Application()
        first.router.add_route("*", "/{tail:.*}", redirect)
        async with served(first, "127.0.0.1") as url:
            yield url, reached


@pytest.mark.parametrize("status", [302, 307])
async def test_an_llm_endpoint_s_redirect_is_never_followed_for_a_chat_or_the_model_list(status):
    async with redirected(status) as (url, reached):
        client = LLMClient(resolve_endpoint("test", f"{url}/v1"), LLMSettings(backoff_initial=0.01))
        try:
            with pytest.raises(LLMError) as chat:
                await client.chat("agent", "mock", ASK)
            with pytest.raises(LLMError) as listing:
                await client.listed_models()
        finally:
            await client.close()
    assert reached == []  # the conversation and the key never left for the other host
    for exc in (chat.value, listing.value):
        assert f"answered with a redirect (HTTP {status} to http://127.0.0.2:" in str(exc)
        assert "which is not followed" in str(exc) and exc.fatal
    assert "after" not in str(chat.value)  # not retried either


@pytest.mark.parametrize("status", [302, 307])
async def test_an_http_agent_s_redirect_is_never_followed(status):
    from ltm_harness._agents.http_agent import HTTPAgent
    from ltm_harness._agents.base import AgentMessage

    async with redirected(status) as (url, reached):
        agent = HTTPAgent(f"{url}/agent", timeout=5)
        try:
            with pytest.raises(AgentError, match=f"answered with a redirect \\(HTTP {status} to http://127.0.0.2:"):
                await agent.reply(AgentMessage(text="hello", timestamp=datetime(2024, 1, 1), tokens=1))
            with pytest.raises(AgentError, match="answered with a redirect"):
                await agent.snapshot()
        finally:
            await agent.close()
    assert reached == []


def test_the_check_before_the_first_turn_does_not_follow_a_redirect_of_the_model_list(tmp_path: Path, monkeypatch,
                                                                                       capsys):
    import asyncio
    import threading

    ready = threading.Event()
    state: dict = {}

    async def serve() -> None:
        async with redirected(302) as (url, reached):
            state.update(url=url, reached=reached, stop=asyncio.Event(), loop=asyncio.get_running_loop())
            ready.set()
            await state["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),))
    thread.start()
    try:
        assert ready.wait(30)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{state['url']}/v1")
        assert main(["run", "-c", "default", "--datasets", "colours", "--limit", "1", "-a", "openai:mock",
                     "--results", str(tmp_path)]) == 2
    finally:
        state["loop"].call_soon_threadsafe(state["stop"].set)
        thread.join(30)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "(GET /models) answered with a redirect (HTTP 302 to http://127.0.0.2:" in err
    assert state["reached"] == [] and not any(tmp_path.iterdir())


def test_the_framework_adapters_own_model_clients_follow_no_redirect():
    from ltm_harness._llm.transport import endpoint_http_client, http_client, stop_following

    assert http_client(1000, 5.0).follow_redirects is False  # openai: agents, judges, the model list
    assert endpoint_http_client().follow_redirects is False  # the Agents SDK's model client
    from openai import OpenAI

    made_by_a_framework = OpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")  # mem0's LLM and embedder
    assert made_by_a_framework._client.follow_redirects is True  # the SDK's default
    stop_following(made_by_a_framework)
    assert made_by_a_framework._client.follow_redirects is False
