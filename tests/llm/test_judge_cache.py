"""Nothing judged twice: the judge cache is keyed by (endpoint, model, the full request), so a rescore with the same
judge and prompts makes no call, another endpoint serving a model of the same name is asked, `--no-cache` forces the
calls, and the agents' calls are never cached."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from ltm_harness._api import rescore_async, run_async
from ltm_harness._cli.main import main as cli
from ltm_harness._llm.client import cache_key
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.mock_server import MockLLMServer
from ltm_harness.testing import make_config

DATA = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
JUDGED = 8


def config(**judge):
    return make_config([{"name": "locomo", "args": {"data_file": str(DATA)}}], span=4000, examples=2,
                       judge={"model": "mock-judge", **judge})


def test_the_key_holds_the_endpoint_the_model_and_the_whole_request():
    a, b = resolve_endpoint("j", "http://127.0.0.1:1/v1"), resolve_endpoint("j", "http://127.0.0.1:2/v1")
    messages = [{"role": "user", "content": "Is it right?"}]
    key = cache_key(a, "m", messages, {"temperature": 0.0})
    assert key != cache_key(b, "m", messages, {"temperature": 0.0})
    assert key != cache_key(a, "n", messages, {"temperature": 0.0})
    assert key != cache_key(a, "m", messages, {"temperature": 0.0, "max_tokens": 5})
    assert key != cache_key(a, "m", [{"role": "user", "content": "Is it right?!"}], {"temperature": 0.0})
    assert key == cache_key(resolve_endpoint("j", "http://127.0.0.1:1/v1", "sk-other"), "m", messages,
                            {"temperature": 0.0})  # the key used is not part of it


async def test_a_rescore_with_the_same_judge_makes_no_call_and_no_cache_forces_them(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        out = await run_async(config(), ["openai:mock"], results=tmp_path)
        agent_calls, judge_calls = server.stats["model:mock"], server.stats["model:mock-judge"]
        assert judge_calls == JUDGED
        results = (out.path / "openai_mock" / "results.json").read_text()
        for _ in range(2):
            await rescore_async(out.path)
            assert server.stats["model:mock-judge"] == judge_calls  # 0 calls: every verdict from the cache
        assert (out.path / "openai_mock" / "results.json").read_text() == results
        code = await asyncio.to_thread(cli, ["rescore", str(out.path), "--no-cache"])
        assert code == 0 and server.stats["model:mock-judge"] == 2 * judge_calls  # forced
        await rescore_async(out.path)
        assert server.stats["model:mock-judge"] == 2 * judge_calls
        assert server.stats["model:mock"] == agent_calls  # a rescore never calls the agent


async def test_another_endpoint_serving_the_same_model_name_is_asked(tmp_path, monkeypatch):
    async with MockLLMServer() as first, MockLLMServer() as second:
        monkeypatch.setenv("OPENAI_BASE_URL", first.url)
        await run_async(config(), ["openai:mock"], results=tmp_path)
        assert first.stats["model:mock-judge"] == JUDGED
        await run_async(config(base_url=second.url), ["openai:mock"], results=tmp_path, overwrite=True)
        assert second.stats["model:mock-judge"] == JUDGED and first.stats["model:mock-judge"] == JUDGED


async def test_the_agents_calls_are_never_cached(tmp_path, monkeypatch):
    async with MockLLMServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        await run_async(config(), ["openai:mock"], results=tmp_path)
        once = server.stats["model:mock"]
        await run_async(config(), ["openai:mock"], results=tmp_path, overwrite=True)
        assert once > 0 and server.stats["model:mock"] == 2 * once
        assert server.stats["model:mock-judge"] == JUDGED  # while the judge's were
        summary = json.loads((tmp_path / "t" / "openai_mock" / "summary.json").read_text())
        assert summary["usage"]["cached"] == {"judge": JUDGED}
