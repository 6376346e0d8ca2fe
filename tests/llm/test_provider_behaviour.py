"""The provider as it really behaves, on the mock server, and the client's answer to each: a real rate limit (429 with
Retry-After, x-ratelimit-* headers) paced by a rate gate and never an error; 502/503 and responses cut in the middle
retried; context_length_exceeded never retried (the test errored with that cause); a content filter's finish or a
refusal recorded as the reply; and the mock's own bill, which a run's reported cost equals, per agent and for the
judge (cached input at its price)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from ltm_harness._api import run_async
from ltm_harness._errors import LLMError
from ltm_harness._llm.client import LLMClient, LLMSettings
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.mock_server import REFUSAL, FaultSettings, MockLLMServer
from ltm_harness._llm.pricing import Price, PriceTable
from ltm_harness._llm.ratelimit import RateGate, Seen, reset_seconds
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
FAST = LLMSettings(backoff_initial=0.01, backoff_max=0.05, timeout=5.0, retry_budget=60.0)
SAY = [{"role": "user", "content": "Hello there, how are you today?"}]


def client(server: MockLLMServer, settings: LLMSettings = FAST) -> LLMClient:
    return LLMClient(resolve_endpoint("test", server.url), settings)


# -- rate limits -----------------------------------------------------------------------------------------------------

def test_reset_times_read_as_openai_writes_them() -> None:
    assert reset_seconds("1s") == 1.0 and reset_seconds("6m0s") == 360.0 and reset_seconds("20ms") == 0.02
    assert reset_seconds("2m3.5s") == 123.5 and reset_seconds("1h") == 600.0 and reset_seconds("1.25") == 1.25
    assert reset_seconds("soon") is None and reset_seconds(None) is None


def test_the_gate_halves_on_a_429_once_per_pause_and_waits_what_the_headers_say() -> None:
    now = [100.0]
    gate = RateGate(16, clock=lambda: now[0])
    gate.observe(Seen(429, {"retry-after-ms": "500"}))
    assert gate.limit == 8 and gate.paused_until == pytest.approx(100.5)
    gate.observe(Seen(429, {"retry-after-ms": "200"}))  # the same over-full moment: not halved again
    assert gate.limit == 8 and gate.paused_until == pytest.approx(100.5)
    now[0] = 101.0
    gate.observe(Seen(200, {}))
    assert gate.limit == pytest.approx(8 + 1 / 8)  # additive increase
    # no request left of 10, all back in 1 s: one request is back in a tenth of it
    gate.observe(Seen(200, {"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "0",
                            "x-ratelimit-reset-requests": "1s"}))
    assert gate.paused_until == pytest.approx(101.1)


async def test_the_mock_keeps_a_real_limit_and_says_it_in_headers() -> None:
    async with MockLLMServer(FaultSettings(rpm=2, tpm=100_000, limit_window=60)) as server:
        async with aiohttp.ClientSession() as s:
            seen = []
            for _ in range(3):
                async with s.post(f"{server.url}/chat/completions", json={"model": "mock", "messages": SAY}) as r:
                    seen.append((r.status, dict(r.headers)))
    assert [status for status, _ in seen] == [200, 200, 429]
    assert seen[0][1]["x-ratelimit-remaining-requests"] == "1" and seen[0][1]["x-ratelimit-limit-requests"] == "2"
    assert int(seen[0][1]["x-ratelimit-remaining-tokens"]) < 100_000
    assert seen[1][1]["x-ratelimit-reset-requests"].endswith("s") and float(seen[2][1]["retry-after-ms"]) > 0
    assert server.stats["over_limit"] == 1


async def test_many_calls_against_a_rate_limit_all_succeed_and_the_gate_slows_down() -> None:
    async with MockLLMServer(FaultSettings(rpm=10, limit_window=0.5)) as server:
        c = client(server)
        results = await asyncio.gather(*(c.chat("agent", "mock", SAY) for _ in range(40)))
        await c.close()
    assert len(results) == 40 and server.stats["ok_replies"] == 40  # not one call errored for a 429
    gate = c.limits.gate(c.endpoint, "mock")
    assert gate.rate_limited == server.stats["over_limit"] < 40  # the gate paced most calls under the limit
    assert gate.lowest_limit < gate.ceiling


# -- faults retried, and those that are not --------------------------------------------------------------------------

async def test_server_errors_and_a_response_cut_in_the_middle_are_retried() -> None:
    async with MockLLMServer(FaultSettings(script=["502", "503", "cut", "500", "ok"])) as server:
        c = client(server)
        result = await c.chat("agent", "mock-fixed:Fine, thanks.", SAY)
        await c.close()
    assert result.text == "Fine, thanks." and result.call.retries == 4
    assert server.stats["cut"] == 1 and sum(line.requests for line in server.bill.online.values()) == 1


async def test_a_stream_cut_in_the_middle_never_ends() -> None:
    async with MockLLMServer(FaultSettings(script=["cut"])) as server:
        async with aiohttp.ClientSession() as s:
            with pytest.raises(aiohttp.ClientPayloadError):
                async with s.post(f"{server.url}/chat/completions",
                                  json={"model": "mock-fixed:one two three four", "messages": SAY,
                                        "stream": True}) as r:
                    await r.read()
    assert not server.bill.online  # never billed: it never arrived whole


async def test_a_prompt_longer_than_the_context_is_never_asked_again() -> None:
    async with MockLLMServer(FaultSettings(context=10)) as server:
        c = client(server)
        with pytest.raises(LLMError, match="context_length_exceeded") as failed:
            await c.chat("agent", "mock", SAY * 3)
        await c.close()
    assert failed.value.retry is False and server.stats["requests"] == 1


async def test_a_run_whose_prompts_outgrow_the_context_errors_those_tests_with_that_cause_asked_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with MockLLMServer(FaultSettings(contexts={"mock": 300})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        cfg = make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2)
        out = await run_async(cfg, ["openai:mock"], results=tmp_path)
    errored = [r for r in out.results("openai:mock") if r.status == "errored"]
    assert errored and all("context_length_exceeded" in r.reasons[0] and "after 1 attempt" in r.reasons[0]
                           for r in errored)  # the conversation's tests, errored with that cause
    assert server.stats["context_length_exceeded"] == 1  # asked once: no retry by the client nor by the turn policy
    assert any(r.status == "ok" for r in out.results("openai:mock"))  # the shorter conversation went on


async def test_a_content_filter_finish_and_a_refusal_are_the_reply() -> None:
    async with MockLLMServer(FaultSettings(script=["content_filter", "refusal"])) as server:
        c = client(server)
        filtered = await c.chat("agent", "mock-fixed:Something.", SAY)
        refused = await c.chat("agent", "mock-fixed:Something.", SAY)
        await c.close()
    assert filtered.text == "" and refused.text == REFUSAL
    assert filtered.call.retries == refused.call.retries == 0 and refused.call.completion_tokens > 0


async def test_max_tokens_cuts_the_reply_as_a_provider_does() -> None:
    async with MockLLMServer() as server:
        c = client(server)
        result = await c.chat("agent", "mock-fixed:one two three four five six seven", SAY, max_tokens=3)
        await c.close()
    assert result.text == "one two three" and result.call.completion_tokens == 3


# -- the bill --------------------------------------------------------------------------------------------------------

PRICES = {"mock": Price(prompt=2.0, completion=8.0, cached_prompt=0.5),
          "mock-retrieval": Price(prompt=3.0, completion=12.0, cached_prompt=0.75),
          "mock-judge": Price(prompt=1.0, completion=4.0)}


async def test_the_runs_cost_is_the_mocks_bill_per_agent_and_for_the_judge(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    async with MockLLMServer(FaultSettings(prompt_cache=True, cache_min_tokens=128)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        cfg = make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                          llm={"prices": {m: p.model_dump() for m, p in PRICES.items()}, "cache": False},
                          judge={"model": "mock-judge"})
        out = await run_async(cfg, ["openai:mock", "openai:mock-retrieval"], results=tmp_path)
        bill = server.bill
    prices = PriceTable(PRICES)
    assert sum(line.cached_tokens for line in bill.online.values()) > 0  # the prompt cache served some input
    by_agent = {a.agent: a for a in out.summary.agents}
    for agent, model in (("openai:mock", "mock"), ("openai:mock-retrieval", "mock-retrieval")):
        assert by_agent[agent].cost_split["agent"] == pytest.approx(bill.usd(prices, {model}), rel=1e-3)
    judged = sum(a.cost_split.get("judge", 0.0) for a in out.summary.agents)
    assert judged > 0 and judged == pytest.approx(bill.usd(prices, {"mock-judge"}), rel=1e-3)
    assert out.summary.agents[0].cost_split["agent"] < prices.cost("mock", bill.online["mock"].prompt_tokens,
                                                                  bill.online["mock"].completion_tokens)
