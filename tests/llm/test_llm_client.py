"""The LLM client against the shipped mock server: retries, fast failures, budgets, pools, usage and cost."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web

from ltm_harness._llm.client import LLMClient, LLMError, LLMSettings, retry_after_seconds
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.mock_server import FaultSettings
from ltm_harness._llm.pricing import Price, PriceTable
from ltm_harness.testing import serve_local

ASK = [{"role": "user", "content": "My cat is called Tom."}, {"role": "assistant", "content": "Noted."},
       {"role": "user", "content": "What is my cat called?"}]


def client_for(url: str, **settings) -> LLMClient:
    settings.setdefault("backoff_initial", 0.01)
    return LLMClient(resolve_endpoint("test", url), LLMSettings(**settings))


async def test_429_with_retry_after_is_retried_and_honoured(mock_llm):
    mock_llm.set_faults(FaultSettings(script=["429", "429", "ok"], retry_after=0.25))
    client = client_for(mock_llm.url)
    started = time.perf_counter()
    result = await client.chat("agent", "mock", ASK)
    elapsed = time.perf_counter() - started
    await client.close()
    assert result.text == "My cat is called Tom."
    assert result.call.retries == 2 and mock_llm.stats["429"] == 2 and mock_llm.stats["requests"] == 3
    assert elapsed >= 0.5  # two waits of at least the 0.25 s the server asked for


async def test_5xx_drops_malformed_bodies_and_timeouts_are_retried(mock_llm):
    mock_llm.set_faults(FaultSettings(script=["500", "drop", "malformed", "timeout", "ok"], timeout_ms=3000))
    client = client_for(mock_llm.url, timeout=0.5)
    result = await client.chat("agent", "mock", ASK)
    await client.close()
    # the stalled request was cut at the 0.5 s timeout: had it been waited for (3 s), it would have answered and
    # the script's last "ok" never been reached (3 retries, not 4); counted, not timed
    assert result.text == "My cat is called Tom." and result.call.retries == 4
    assert mock_llm.stats["ok_replies"] == 1


async def test_a_4xx_fails_at_once_naming_endpoint_model_and_status(mock_llm):
    client = client_for(mock_llm.url)
    with pytest.raises(LLMError) as info:
        await client.chat("agent", "no-such-model", ASK)
    text = str(info.value)
    assert mock_llm.url in text and "no-such-model" in text and "HTTP 404" in text and "does not exist" in text
    with pytest.raises(LLMError, match="HTTP 400"):
        await client.chat("agent", "mock", [])
    await client.close()
    assert mock_llm.stats["requests"] == 2  # one request each: no retries


async def test_retries_stop_after_max_attempts(mock_llm):
    mock_llm.set_faults(FaultSettings(rate_500=1.0))
    client = client_for(mock_llm.url, max_attempts=3)
    with pytest.raises(LLMError, match=r"HTTP 500.*after 3 attempts"):
        await client.chat("judge", "mock", ASK)
    await client.close()
    assert mock_llm.stats["requests"] == 3


async def test_retry_budget_stops_instead_of_waiting_past_it(mock_llm):
    mock_llm.set_faults(FaultSettings(rate_429=1.0, retry_after=30))
    client = client_for(mock_llm.url, retry_budget=1.0)
    started = time.perf_counter()
    with pytest.raises(LLMError, match="HTTP 429"):
        await client.chat("agent", "mock", ASK)
    await client.close()
    assert mock_llm.stats["requests"] == 1  # it did not wait the 30 s asked for and try again: counted, not timed


async def test_unreachable_endpoint_is_one_clear_error(unused_tcp_port):
    client = client_for(f"http://127.0.0.1:{unused_tcp_port}/v1", max_attempts=2)
    with pytest.raises(LLMError, match="cannot be reached after 2 attempts"):
        await client.chat("agent", "mock", ASK)
    await client.close()


async def test_agent_and_judge_pools_are_separate():
    """Counted, not timed: a server holds every request until told, and counts how many of each role it holds."""
    held = {"judge": 0, "agent": 0}
    most = dict(held)
    release = asyncio.Event()

    async def chat(request: web.Request) -> web.Response:
        role = (await request.json())["messages"][0]["content"]
        held[role] += 1
        most[role] = max(most[role], held[role])
        await release.wait()
        held[role] -= 1
        return web.json_response({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "ok"}}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    async with serve_local(app) as url:
        client = client_for(f"{url}/v1", judge_concurrency=1, agent_concurrency=4)
        calls = [asyncio.create_task(client.chat(role, "mock", [{"role": "user", "content": role}]))  # type: ignore[arg-type]
                 for role in ("judge", "judge", "judge", "agent", "agent", "agent")]
        while held["agent"] < 3:  # all three agent calls reach the server while the judge's queue waits
            await asyncio.sleep(0.01)
        assert held == {"judge": 1, "agent": 3}
        release.set()
        await asyncio.gather(*calls)
        await client.close()
    assert most == {"judge": 1, "agent": 3}  # the judge one at a time, the agent all at once, not queued behind it


async def test_usage_is_counted_when_the_server_sends_none():
    async def chat(request: web.Request) -> web.Response:
        return web.json_response({"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                                  "choices": [{"index": 0, "finish_reason": "stop",
                                               "message": {"role": "assistant", "content": "Tom, your cat."}}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    async with serve_local(app) as url:
        client = client_for(f"{url}/v1")
        result = await client.chat("agent", "m", ASK)
        await client.close()
    assert result.call.usage_counted
    assert result.call.prompt_tokens == client.count_prompt(ASK)
    assert result.call.completion_tokens == 5  # "Tom, your cat."
    assert result.call.cost_usd is None  # no price for "m": reported as unpriced, never free


async def test_usage_and_cost_come_from_the_response_and_the_price_table(mock_llm):
    client = LLMClient(resolve_endpoint("test", mock_llm.url),
                       LLMSettings(prices={"mock": Price(prompt=2.0, completion=10.0)}))
    result = await client.chat("agent", "mock", ASK)
    await client.close()
    call = result.call
    assert not call.usage_counted and call.prompt_tokens == client.count_prompt(ASK)
    assert call.cost_usd == pytest.approx((call.prompt_tokens * 2.0 + call.completion_tokens * 10.0) / 1e6)
    assert call.latency_ms > 0 and call.endpoint == mock_llm.url


def test_price_table_matches_dated_model_names_and_overrides():
    table = PriceTable({"my-model": Price(prompt=1, completion=1)})
    assert table.price("gpt-4o-mini-2024-07-18") == table.price("gpt-4o-mini")
    assert table.price("gpt-4o-2024-08-06") == table.price("gpt-4o") != table.price("gpt-4o-mini")
    assert table.cost("my-model", 1_000_000, 0) == 1.0
    assert table.price("llama-3-70b") is None


def test_retry_after_forms():
    class Resp:
        def __init__(self, headers):
            self.headers = headers

    class Exc(Exception):
        def __init__(self, headers):
            self.response = Resp(headers)

    assert retry_after_seconds(Exc({"retry-after": "2"})) == 2.0
    assert retry_after_seconds(Exc({"retry-after-ms": "250"})) == 0.25
    assert 0 <= retry_after_seconds(Exc({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) < 1  # in the past: now
    assert retry_after_seconds(Exc({})) is None
