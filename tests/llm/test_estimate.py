"""`estimate` against a real run on the mock server: calls and tokens sent within 2%."""

from __future__ import annotations

import asyncio
import json

from ltm_harness._cli.main import main as cli
from ltm_harness._runner.estimate import estimate
from ltm_harness.testing import make_config, run_config

DATASETS = ["colours", "shopping", "name_list", "jokes", "sallyanne", "prospective_memory", "trigger_response"]


async def test_the_estimate_matches_a_real_run_within_two_percent(tmp_path, mock_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    cfg = make_config(DATASETS, span=16000, examples=1, llm={"prices": {"mock": {"prompt": 1.0, "completion": 4.0}}})
    summary = await run_config(cfg, tmp_path / "results", ["openai:mock", "openai:mock@4000"])
    real = {a.agent: a for a in summary.agents}
    full, window = await estimate(cfg, "openai:mock@4000")
    assert window.max_context == 4000 and full.max_context is None
    for est, agent in ((full, "openai:mock"), (window, "openai:mock@4000")):
        got = real[agent]
        assert abs(est.agent_calls - got.turns) <= 0.02 * got.turns, (agent, est.agent_calls, got.turns)
        assert abs(est.prompt_tokens - got.agent_prompt_tokens) <= 0.02 * got.agent_prompt_tokens, (
            agent, est.prompt_tokens, got.agent_prompt_tokens)
        assert est.cost_usd is not None and abs(est.cost_usd - got.cost_usd) <= 0.02 * got.cost_usd
    assert window.prompt_tokens < full.prompt_tokens / 2


async def test_the_estimate_command_calls_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = await asyncio.to_thread(cli, ["estimate", "-a", "openai:gpt-4o-mini@2k", "--span", "2000", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["max_context"] for r in rows] == [None, 2000]
    assert rows[0]["prompt_tokens"] > rows[1]["prompt_tokens"] > 0 and rows[0]["cost_usd"] > 0
    assert not (tmp_path / "results").exists()  # a dry run leaves nothing behind


async def test_a_named_agent_is_estimated_by_its_spec(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    code = await asyncio.to_thread(cli, ["estimate", "-a", "mini=openai:gpt-4o-mini@2k", "-a", "openai:gpt-4o-mini@2k",
                                         "--span", "2000", "--json"])
    rows = json.loads(capsys.readouterr().out)[1::2]  # each agent's row for its 2k window
    assert code == 0 and [r["agent"] for r in rows] == ["mini", "openai:gpt-4o-mini@2k"]
    assert all(r["model"] == "gpt-4o-mini" and r["max_context"] == 2000 and r["cost_usd"] > 0 for r in rows)
    assert rows[0]["prompt_tokens"] == rows[1]["prompt_tokens"]
