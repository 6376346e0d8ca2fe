"""The shipped mock server: models, behaviours, faults and its command."""

from __future__ import annotations

import asyncio
import json
import sys

import aiohttp

from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer, judge_reply, retrieval_reply


async def post(url: str, model: str, messages: list[dict]) -> tuple[int, dict]:
    async with aiohttp.ClientSession() as s:
        async with s.post(f"{url}/chat/completions", json={"model": model, "messages": messages}) as r:
            return r.status, await r.json()


async def test_models_and_an_openai_shaped_reply(mock_llm):
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{mock_llm.url}/models") as r:
            ids = [m["id"] for m in (await r.json())["data"]]
    assert {"mock", "mock-judge", "mock-generator"} <= set(ids)
    status, body = await post(mock_llm.url, "mock-fixed:Hello there.", [{"role": "user", "content": "Hi"}])
    assert status == 200 and body["choices"][0]["message"]["content"] == "Hello there."
    assert body["usage"]["completion_tokens"] == 3 and body["usage"]["prompt_tokens"] == 1 + 3 + 3


async def test_unknown_model_is_404(mock_llm):
    status, body = await post(mock_llm.url, "gpt-9", [{"role": "user", "content": "Hi"}])
    assert status == 404 and "gpt-9" in body["error"]["message"]


def test_retrieval_answers_from_context_filler_and_statements():
    msgs = [{"role": "user", "content": "[2024-01-01 09:00 UTC] My favourite colour is teal. I live in Oslo."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "[2024-01-01 09:01 UTC] Arithmetic practice. Answer as JSON.\nWhat is 2 plus 40?"},
            {"role": "assistant", "content": '{"answer": 40}'},
            {"role": "user", "content": "What is my favourite colour?"}]
    assert retrieval_reply(msgs) == "My favourite colour is teal."
    assert retrieval_reply(msgs[:3]) == '{"answer": 40}'  # the final number of the last line, as JSON
    assert retrieval_reply(msgs[:1]) == "Noted."
    assert retrieval_reply([{"role": "user", "content": "Where is the moon base?"}]) == "I don't know."


def test_judge_verdicts():
    ok = judge_reply([{"role": "user", "content": "<expected>Kestrel</expected><response>It is Kestrel.</response>"}])
    bad = judge_reply([{"role": "user", "content": "<expected>Kestrel</expected><response>Noor</response>"}])
    assert json.loads(ok)["score"] == 1.0 and json.loads(bad)["score"] == 0.0


async def test_fault_rates_are_seeded():
    async def outcomes(seed: int) -> list[str]:
        server = MockLLMServer(FaultSettings(rate_429=0.3, rate_500=0.2, seed=seed))
        return [server._outcome() for _ in range(200)]

    a, b, c = await outcomes(1), await outcomes(1), await outcomes(2)
    assert a == b != c
    assert 40 < a.count("429") < 80 and 20 < a.count("500") < 60


async def test_the_mock_llm_command_serves(unused_tcp_port):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ltm_harness", "mock-llm", "--port", str(unused_tcp_port), "--rate-500", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
        assert f"http://127.0.0.1:{unused_tcp_port}/v1" in line
        status, body = await post(f"http://127.0.0.1:{unused_tcp_port}/v1", "mock-echo",
                                  [{"role": "user", "content": "ping"}])
        assert status == 200 and body["choices"][0]["message"]["content"] == "ping"
    finally:
        proc.terminate()
        await proc.wait()


async def test_the_mock_llm_command_rejects_bad_rates():
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "ltm_harness", "mock-llm", "--rate-429", "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode == 2 and err.decode().startswith("error: --rate-429:") and "Traceback" not in err.decode()
