"""API keys, from the environment or the config, appear in no file a run writes and in nothing it prints."""

from __future__ import annotations

import asyncio

import yaml

from ltm_harness.cli import main as cli

from .conftest import SECRET

CONFIG_KEY = "sk-config-JUDGE-77b1d0e2a9"
ENV_KEY = "sk-env-TESTLLM-3c55e8f0aa"


async def test_no_key_in_any_output_file(tmp_path, mock_llm, monkeypatch, capfd):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("MY_TEST_LLM_KEY", ENV_KEY)
    config = tmp_path / "run.yml"
    config.write_text(yaml.safe_dump({
        "config": {"run_name": "secrets", "agents": ["openai:mock"],
                   "judge": {"model": "mock-judge", "api_key": CONFIG_KEY},
                   "test_llm": {"model": "mock-fixed:Welcome to our table.", "api_key_env": "MY_TEST_LLM_KEY"}},
        "datasets": {"args": {"memory_span": 2000, "dataset_examples": 1},
                     "datasets": [{"name": "restaurant"}, {"name": "delayed_recall"}, {"name": "colours"}]},
    }))
    results = tmp_path / "results"
    assert await asyncio.to_thread(cli, ["run", "-c", str(config), "--results", str(results)]) == 0
    assert await asyncio.to_thread(cli, ["rescore", "secrets", "--results", str(results)]) == 0
    assert await asyncio.to_thread(cli, ["estimate", "-c", str(config)]) == 0
    # the keys were really used, so their absence below means something
    assert {r["model"] for r in mock_llm.requests} >= {"mock", "mock-judge", "mock-fixed:Welcome to our table."}
    assert mock_llm.keys == {SECRET, CONFIG_KEY, ENV_KEY}
    files = [p for p in results.rglob("*") if p.is_file()]
    assert len(files) > 10 and any(p.suffix == ".jsonl" for p in files) and any(".llm-cache" in p.parts for p in files)
    for path in files:
        data = path.read_bytes()
        for key in (SECRET, CONFIG_KEY, ENV_KEY):
            assert key.encode() not in data, (key, path)
    printed = capfd.readouterr()
    for key in (SECRET, CONFIG_KEY, ENV_KEY):
        assert key not in printed.out and key not in printed.err
