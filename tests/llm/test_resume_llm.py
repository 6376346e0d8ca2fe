"""Resuming a run of a chat-model agent, with a judge and a test LLM, against the mock server.

The chat agent's memory (its history, and the window of it that fits `@N` tokens) is rebuilt from the events:
after the resume, every request it sends is the one the uninterrupted run sent at that turn. Turns, judge
calls and test-LLM calls already in the log are never made again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ltm_harness._store.events import TurnEvent, parse_event
from ltm_harness._store.records import LLMCall
from ltm_harness._runner.modes import Resume
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness.testing import make_config

from .gpt_fixture import write_gpt_dataset

AGENT = "openai:mock@700"
FOLDER = "openai_mock_700"


def config(tmp_path: Path):
    folder = tmp_path / "ds"
    write_gpt_dataset(folder)
    return make_config(["fictional_facts", "colours", "restaurant"], span=2000, examples=2,
                       dataset_dirs=[str(folder)], llm={"backoff_initial": 0.01, "cache": False},
                       judge={"model": "mock-judge"}, test_llm={"model": "mock-fixed:Lovely evening, isn't it?"})


def without_timing(data: bytes) -> list[dict]:
    """The events (format 4 holds no wall-clock fact: latency and retries are in the side file)."""
    out = [json.loads(line) for line in data.splitlines()]
    assert not any("latency_ms" in e or "retries" in e for e in out)
    return out


def requests_by_model(requests: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in requests:
        out.setdefault(r["model"], []).append(r)
    return out


async def test_resume_rebuilds_the_chat_history_and_makes_no_call_twice(tmp_path, mock_llm, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    cfg = config(tmp_path)
    await run_all(prepare(cfg, tmp_path / "ref"), [AGENT])
    ref = tmp_path / "ref" / "t"
    ref_requests = requests_by_model(mock_llm.requests)
    log = (ref / FOLDER / "events.jsonl").read_bytes()
    lines = log.splitlines(keepends=True)
    events = [parse_event(line) for line in lines]
    judge_at = [i for i, e in enumerate(events) if isinstance(e, LLMCall) and e.role == "judge"]
    test_at = [i for i, e in enumerate(events) if isinstance(e, LLMCall) and e.role == "test"]
    agent_at = [i for i, e in enumerate(events) if isinstance(e, LLMCall) and e.role == "agent"]
    assert len(judge_at) >= 2 and len(test_at) >= 2
    # cuts: right after an agent call whose turn was never written (the call is dropped and made again),
    # and just after a judge call and after a test-LLM call
    cuts = [agent_at[len(agent_at) // 2] + 1, judge_at[0] + 1, test_at[1] + 1]
    for k in cuts:
        work = tmp_path / f"cut{k}"
        shutil.copytree(ref, work / "t")
        (work / "t" / FOLDER / "events.jsonl").write_bytes(b"".join(lines[:k]))
        for name in ("results.json", "summary.json"):
            (work / "t" / FOLDER / name).unlink()
        kept = events[:k]
        while isinstance(kept[-1], LLMCall) and kept[-1].role == "agent":
            kept.pop()
        n_turns = sum(isinstance(e, TurnEvent) for e in kept)
        n_judge = sum(isinstance(e, LLMCall) and e.role == "judge" for e in kept)
        n_test = sum(isinstance(e, LLMCall) and e.role == "test" for e in kept)
        mock_llm.requests.clear()
        summary = await run_all(prepare(cfg, work, resume=True), [AGENT], mode=Resume())
        assert not summary.errors
        made = requests_by_model(mock_llm.requests)
        # exactly the calls the interrupted run had not made, and each request the same as then
        assert made["mock"] == ref_requests["mock"][n_turns:], k
        assert made.get("mock-judge", []) == ref_requests["mock-judge"][n_judge:], k
        assert made.get("mock-fixed:Lovely evening, isn't it?", []) == ref_requests["mock-fixed:Lovely evening, isn't it?"][n_test:], k
        assert (work / "t" / FOLDER / "results.json").read_bytes() == (ref / FOLDER / "results.json").read_bytes()
        assert without_timing((work / "t" / FOLDER / "events.jsonl").read_bytes()) == without_timing(log)
        assert (work / "t" / FOLDER / "events.jsonl").read_bytes() == log  # byte for byte
