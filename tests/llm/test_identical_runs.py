"""Event logs and results hold nothing that varies between otherwise identical runs (event format 4): a judge cache
warm or cold, server faults that cost retries, and wall-clock latency change only the wall-clock side file
(`<log>.wall`) and the summary. And an `openai:` agent whose endpoint fails past its retries leaves errored tests
(exit status 3, 0 with --allow-errored) that `run --retry-errored` does again, byte for byte as a run that never
failed.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from ltm_harness._cli.main import main as cli
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer
from ltm_harness._store.eventlog import read_events, read_wall_facts
from ltm_harness._store.records import LLMCall

RUN = "same"
AGENT = "openai_mock"
FAST_LLM: dict[str, Any] = {"timeout": 0.5, "backoff_initial": 0.01, "backoff_max": 0.05, "max_attempts": 8,
                            "retry_budget": 60, "prices": {"mock-judge": {"prompt": 1.0, "completion": 2.0}}}


def write_config(path: Path, judge_url: str | None, **llm: Any) -> Path:
    config: dict[str, Any] = {"run_name": RUN, "agents": ["openai:mock"], "llm": {**FAST_LLM, **llm},
                              "turns": {"attempts": 2, "backoff": 0}}
    if judge_url is not None:
        config["judge"] = {"model": "mock-judge", "base_url": judge_url}
    path.write_text(yaml.safe_dump({
        "config": config,
        "datasets": {"args": {"memory_span": 2000, "dataset_examples": 1},
                     "datasets": [{"name": "delayed_recall"}, {"name": "colours"}, {"name": "names"}]},
    }))
    return path


async def run(*args: str) -> int:
    return await asyncio.to_thread(cli, ["run", *args, "--quiet", "--no-report"])


def outputs(results: Path) -> dict[str, bytes]:
    agent = results / RUN / AGENT
    return {name: (agent / name).read_bytes() for name in ("events.jsonl", "results.json")}


def summary(results: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((results / RUN / AGENT / "summary.json").read_text(encoding="utf-8"))
    return data


async def test_a_warm_judge_cache_and_server_faults_leave_events_and_results_byte_identical(tmp_path, monkeypatch):
    async with MockLLMServer() as agent_llm, MockLLMServer() as judge_llm:
        monkeypatch.setenv("OPENAI_BASE_URL", agent_llm.url)
        config = write_config(tmp_path / "run.yml", judge_llm.url)
        results = tmp_path / "results"  # one results folder: one cache (results/.llm-cache) for both runs
        assert await run("-c", str(config), "--results", str(results)) == 0
        cold = outputs(results)
        cold_summary = summary(results)
        shutil.copytree(results / RUN, tmp_path / "cold")
        judged = judge_llm.stats["requests"]
        assert judged > 0

        for server, seed in ((agent_llm, 1), (judge_llm, 2)):  # faults and latency: retries and wall time differ
            server.set_faults(FaultSettings(rate_500=0.3, latency_ms=5, seed=seed, script=["500", "drop"]))
        judge_llm.stats.clear()
        assert await run("-c", str(config), "--results", str(results), "--overwrite") == 0
        assert judge_llm.stats["requests"] == 0  # every judge call was answered by the warm cache
        assert agent_llm.stats["500"] > 0

    assert outputs(results) == cold  # byte for byte
    # what differs is in the side file and the summary: cache hits, retries, what was paid
    log = results / RUN / AGENT / "events.jsonl"
    calls = [e for e in read_events(log) if isinstance(e, LLMCall)]
    judge_calls = [c for c in calls if c.role == "judge"]
    assert judge_calls and all(c.cached for c in judge_calls)
    assert sum(c.retries for c in calls if c.role == "agent") > 0
    cold_calls = [e for e in read_events(tmp_path / "cold" / AGENT / "events.jsonl") if isinstance(e, LLMCall)]
    assert not any(c.cached or c.retries for c in cold_calls) and all(c.latency_ms > 0 for c in cold_calls)
    facts = read_wall_facts(log)
    assert sorted(facts) == [n for n, line in enumerate(log.read_text().splitlines(), 1) if '"llm_call"' in line]
    assert all(c.cost_usd and c.cost_usd > 0 for c in judge_calls)  # the price of the tokens, in both runs
    warm = summary(results)
    assert warm["usage"]["cached"] == {"judge": len(judge_calls)} and "judge" not in warm["cost_split"]
    assert cold_summary["cost_split"]["judge"] > 0 and not cold_summary["usage"]["cached"]
    from ltm_harness._report.conversation import read_session_log

    calls_seen = read_session_log(log)[0].calls  # the report takes them from the side file
    assert calls_seen["judge"].cached == len(judge_calls) and calls_seen["judge"].cost_usd == 0
    assert len(calls_seen["agent"].latencies_ms) == calls_seen["agent"].calls > 0
    assert calls_seen["agent"].retries == sum(c.retries for c in calls if c.role == "agent")
    for line in log.read_text().splitlines():  # nothing of the wall clock or the cache is in the event log
        assert "latency_ms" not in line and '"retries"' not in line and '"cached"' not in line


async def test_errored_tests_exit_3_and_retry_errored_makes_them_as_if_they_never_failed(tmp_path, monkeypatch):
    async with MockLLMServer() as agent_llm:
        monkeypatch.setenv("OPENAI_BASE_URL", agent_llm.url)
        config = write_config(tmp_path / "run.yml", None, max_attempts=2)
        assert await run("-c", str(config), "--results", str(tmp_path / "clean")) == 0
        expected = outputs(tmp_path / "clean")
        turns = [e for e in map(json.loads, expected["events.jsonl"].splitlines()) if e["type"] == "turn"]
        target = next(t for t in turns if t["test"] == "names/0" and t["question"])

        # the question's turn fails both its tries (two requests each): errored, the run goes on and finishes
        for results, extra, code in ((tmp_path / "failed", (), 3), (tmp_path / "allowed", ("--allow-errored",), 0)):
            agent_llm.set_faults(FaultSettings(script=["ok"] * target["i"] + ["500"] * 4))
            agent_llm.stats.clear()
            assert await run("-c", str(config), "--results", str(results), *extra) == code
            assert agent_llm.stats["500"] == 4
            status = {r["dataset"]: r["status"] for r in json.loads(outputs(results)["results.json"])}
            assert status["names"] == "errored"

        agent_llm.set_faults(FaultSettings())
        agent_llm.stats.clear()
        assert await run("-c", str(config), "--results", str(tmp_path / "failed"), "--retry-errored") == 0
        assert agent_llm.stats["requests"] == len(turns) - target["i"]  # live from the failed turn on only
        assert outputs(tmp_path / "failed") == expected
        assert await run("-c", str(config), "--results", str(tmp_path / "failed"), "--retry-errored",
                         "--overwrite") == 2  # refused in one line
