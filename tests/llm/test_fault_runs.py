"""Whole runs survive LLM faults: with the mock server injecting 429 storms (with Retry-After), 500s,
timeouts, dropped connections and malformed bodies, a run of an `openai:` agent judged by an LLM gives
exactly the results of a fault-free run, and its retries show in the event log, the summary and the table.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ltm_harness._cli.main import main as cli
from ltm_harness._llm.mock_server import FaultSettings, MockLLMServer
from ltm_harness._store.eventlog import read_failed_tries, read_wall_facts

RUN = "faults"
AGENT_DIR = "openai_mock"
# Measurements of a run rather than outcomes of it: they differ between runs by design (records.py).
MEASURED = ("latency_ms", "retries")
# Small waits and a short request timeout, so that every fault costs a fraction of a second.
FAST_LLM: dict[str, Any] = {"timeout": 0.25, "backoff_initial": 0.01, "backoff_max": 0.05,
                            "max_attempts": 15, "retry_budget": 60}


def write_config(path: Path, datasets: list[str], judge_url: str | None = None,
                 turns: dict[str, Any] | None = None, **llm: Any) -> Path:
    """The agent talks to OPENAI_BASE_URL; with `judge_url`, the run is judged by `mock-judge` there."""
    config: dict[str, Any] = {"run_name": RUN, "agents": ["openai:mock"], "llm": {**FAST_LLM, **llm}}
    if turns is not None:
        config["turns"] = turns  # the session's policy for a failing agent: tries per turn, each one LLM call
    if judge_url is not None:
        config["judge"] = {"model": "mock-judge", "base_url": judge_url}
    path.write_text(yaml.safe_dump({
        "config": config,
        "datasets": {"args": {"memory_span": 2000, "dataset_examples": 1},
                     "datasets": [{"name": name} for name in datasets]},
    }))
    return path


async def run(config: Path, results: Path) -> tuple[int, float]:
    started = time.perf_counter()
    code = await asyncio.to_thread(cli, ["run", "-c", str(config), "--results", str(results), "--quiet"])
    return code, time.perf_counter() - started


def events(results: Path) -> list[dict[str, Any]]:
    """The events, each `llm_call` with its measurements from the log's wall-clock side file."""
    path = results / RUN / AGENT_DIR / "events.jsonl"
    facts = read_wall_facts(path)
    log = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for n, event in enumerate(log, 1):
        assert not any(m in event for m in MEASURED)  # never in the event itself
        if event["type"] == "llm_call":
            event.update(facts[n].model_dump(include=set(MEASURED)))
    return log


def without_measurements(log: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k not in MEASURED} if e["type"] == "llm_call" else e for e in log]


def summary(results: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((results / RUN / AGENT_DIR / "summary.json").read_text(encoding="utf-8"))
    return data


def outcomes(results: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((results / RUN / AGENT_DIR / "results.json").read_text(encoding="utf-8"))
    return data


def test_the_mock_draws_429_storms_and_timeouts():
    server = MockLLMServer(FaultSettings(rate_429=0.1, storm_429=4, rate_timeout=0.1, seed=3))
    drawn = "".join({"429": "R", "timeout": "T", "ok": "."}[server._outcome()] for _ in range(600))
    storms = [len(run) for run in drawn.replace("T", ".").split(".") if run]
    assert len(storms) > 5 and min(storms) >= 4  # a 429 never comes alone: always a storm of 4 or more
    assert 30 < drawn.count("T") < 90  # about 10% of the draws that are not part of a storm
    server.set_faults(FaultSettings(rate_429=0.1, storm_429=4, rate_timeout=0.1, seed=3))
    assert "".join({"429": "R", "timeout": "T", "ok": "."}[server._outcome()] for _ in range(600)) == drawn


@pytest.fixture
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # the table's caption on one line, to read it back


async def test_a_run_under_every_kind_of_fault_gives_the_fault_free_results(tmp_path, mock_llm, monkeypatch,
                                                                              capfd, wide):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    async with MockLLMServer() as judge_llm:  # the judge on its own server, so that it gets its own faults
        config = write_config(tmp_path / "run.yml", ["delayed_recall", "jokes", "colours"], judge_url=judge_llm.url)
        clean, faulty = tmp_path / "clean", tmp_path / "faulty"
        servers = (mock_llm, judge_llm)

        code, _ = await run(config, clean)
        assert code == 0
        assert all(s.stats["requests"] == s.stats["ok"] > 0 for s in servers)  # both used, fault-free
        clean_requests = [s.stats["requests"] for s in servers]
        capfd.readouterr()

        # Each request is faulty with probability 0.5 and a 429 comes as a storm of three; the first
        # requests to each server are one fault of each kind, so every kind hits both roles whatever is drawn.
        for server, seed in ((mock_llm, 7), (judge_llm, 8)):
            server.set_faults(FaultSettings(
                rate_429=0.1, storm_429=3, retry_after=0.02, rate_500=0.15, rate_drop=0.1, rate_malformed=0.1,
                rate_timeout=0.05, timeout_ms=3000, seed=seed, script=["429", "500", "drop", "malformed", "timeout"]))
            server.stats.clear()
        code, _ = await run(config, faulty)
        printed = capfd.readouterr()
    assert code == 0, printed.err
    for server, requests in zip(servers, clean_requests):
        stats = server.stats
        for kind in ("429", "500", "drop", "malformed", "timeout"):
            assert stats[kind] > 0, (kind, dict(stats))
        assert stats["ok"] == requests == stats["ok_replies"]  # the faults cost retries, not answers
        assert stats["abandoned"] == stats["timeout"]  # every stalled request was cut by the client's timeout

    # Identical outcomes: the scores, verdicts and reasons, and the whole conversation.
    results_json = RUN + "/" + AGENT_DIR + "/results.json"
    assert (faulty / results_json).read_bytes() == (clean / results_json).read_bytes()
    assert {r["status"] for r in outcomes(faulty)} == {"ok"} and len(outcomes(faulty)) == 3
    assert any(v["model"] == "mock-judge" for r in outcomes(faulty) for v in r["verdicts"])  # really judged
    log, clean_log = events(faulty), events(clean)
    assert without_measurements(log) == without_measurements(clean_log)
    events_jsonl = RUN + "/" + AGENT_DIR + "/events.jsonl"
    assert (faulty / events_jsonl).read_bytes() == (clean / events_jsonl).read_bytes()  # byte for byte

    # The retries are visible: per call in the log, per role in the summary, in the printed table.
    calls = [e for e in log if e["type"] == "llm_call"]
    assert all(e["retries"] == 0 for e in clean_log if e["type"] == "llm_call")
    by_role = {role: sum(e["retries"] for e in calls if e["role"] == role) for role in ("agent", "judge")}
    retries = summary(faulty)["usage"]["retries"]
    assert retries == by_role and by_role["agent"] > 0 and by_role["judge"] > 0
    for role, server in zip(("agent", "judge"), servers):  # every failed request was one retry
        assert by_role[role] == server.stats["requests"] - server.stats["ok"]
    assert summary(clean)["usage"]["retries"] == {"agent": 0, "judge": 0}
    assert f"retries {sum(by_role.values())}" in printed.out
    run_summary = json.loads((faulty / RUN / "summary.json").read_text(encoding="utf-8"))
    assert run_summary["agents"][0]["usage"]["retries"] == by_role and not run_summary["errors"]


async def test_a_storm_of_429s_is_waited_out_as_the_server_asks(tmp_path, mock_llm, monkeypatch, capfd, wide):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    config = write_config(tmp_path / "run.yml", ["colours"], backoff_initial=0.0)
    code, _ = await run(config, tmp_path / "clean")
    assert code == 0

    storm, retry_after = 12, 0.04
    mock_llm.set_faults(FaultSettings(script=["429"] * storm, retry_after=retry_after))
    mock_llm.stats.clear()
    capfd.readouterr()
    code, elapsed = await run(config, tmp_path / "storm")
    printed = capfd.readouterr()
    assert code == 0, printed.err
    assert mock_llm.stats["429"] == storm
    first = next(e for e in events(tmp_path / "storm") if e["type"] == "llm_call")
    assert first["retries"] == storm  # the whole storm fell on the first call, which waited it out
    assert first["latency_ms"] >= storm * retry_after * 1000  # at least what the server asked, in sum
    assert elapsed >= storm * retry_after
    assert summary(tmp_path / "storm")["usage"]["retries"] == {"agent": storm}
    assert f"retries {storm}" in printed.out
    assert outcomes(tmp_path / "storm") == outcomes(tmp_path / "clean")


async def test_an_agent_failing_past_its_retries_errors_that_test_only(tmp_path, mock_llm, monkeypatch, capfd):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    config = write_config(tmp_path / "run.yml", ["colours", "names", "kv"],
                          turns={"attempts": 2, "backoff": 0}, max_attempts=2)
    code, _ = await run(config, tmp_path / "clean")
    assert code == 0
    # Without a judge, the agent's calls are the server's requests, one per turn, in turn order.
    turns = [e for e in events(tmp_path / "clean") if e["type"] == "turn"]
    target = next(t for t in turns if t["test"] == "names/0" and t["question"])
    assert target["i"] < len(turns) - 1  # turns follow it

    # The question's turn fails both its tries of two requests each; the next turn's first request
    # fails too, and is retried as usual.
    mock_llm.set_faults(FaultSettings(script=["ok"] * target["i"] + ["500"] * 5))
    capfd.readouterr()
    await run(config, tmp_path / "failing")  # the run ends with an exit code, not an exception
    printed = capfd.readouterr()
    assert "Traceback" not in printed.out + printed.err
    assert mock_llm.stats["500"] == 5
    status = {r["dataset"]: r for r in outcomes(tmp_path / "failing")}
    assert status["names"]["status"] == "errored"
    assert any("HTTP 500" in reason for reason in status["names"]["reasons"]), status["names"]["reasons"]
    assert status["colours"]["status"] == status["kv"]["status"] == "ok"
    log = [e for e in events(tmp_path / "failing") if e["type"] == "turn"]
    failed = log[target["i"]]
    assert failed["failed"] and failed["tries"] == 2 and len(failed["errors"]) == 1 and "HTTP 500" in failed["errors"][0]
    path = tmp_path / "failing" / RUN / AGENT_DIR / "events.jsonl"
    tries = read_failed_tries(path)  # both tries, with their times, in the side file
    (line,) = [n for n, e in enumerate(events(tmp_path / "failing"), 1) if e["type"] == "turn" and e["failed"]]
    assert list(tries) == [line] and len(tries[line]) == 2 and all("HTTP 500" in t.error for t in tries[line])
    calls = [e for e in events(tmp_path / "failing") if e["type"] == "llm_call"]
    assert [c["retries"] for c in calls].count(1) == 1  # the next turn's call, retried once
