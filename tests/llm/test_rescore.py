"""`rescore`: a finished run scored again from its event logs, without calling the agents."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from ltm_harness._cli.main import main as cli
from ltm_harness.testing import make_config, run_config

from .gpt_fixture import write_gpt_dataset


async def rescore(argv: list[str]) -> int:
    """The CLI in a thread: it runs its own event loop, while the mock server runs on the test's. The dataset folder
    of `make_run` is given again (rescore never loads dataset code named by the run folder itself)."""
    folder = [a for a in argv[1:] if not a.startswith("-")][0]
    from pathlib import Path

    ds = Path(folder).parent.parent / "ds"
    return await asyncio.to_thread(cli, [*argv, *(["--dataset-dir", str(ds)] if ds.is_dir() else [])])


def results_of(run_dir, agent):
    return json.loads((run_dir / agent / "results.json").read_text())


async def make_run(tmp_path, url, monkeypatch, agents):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    folder = tmp_path / "ds"
    write_gpt_dataset(folder)
    cfg = make_config(["fictional_facts", "colours", "kv"], span=2000, examples=2, dataset_dirs=[str(folder)],
                      llm={"backoff_initial": 0.01})
    await run_config(cfg, tmp_path / "results", agents)
    return tmp_path / "results" / "t"


async def test_rules_rescore_reproduces_the_run_without_calling_the_agent(tmp_path, mock_llm, monkeypatch, capsys):
    run_dir = await make_run(tmp_path, mock_llm.url, monkeypatch, ["openai:mock", "retrieval"])
    before = {a: results_of(run_dir, a) for a in ("openai_mock", "retrieval")}
    events_before = (run_dir / "openai_mock" / "events.jsonl").read_text()
    calls = mock_llm.stats["requests"]
    assert await rescore(["rescore", str(run_dir)]) == 0
    assert mock_llm.stats["requests"] == calls  # the agent was not called
    assert {a: results_of(run_dir, a) for a in ("openai_mock", "retrieval")} == before
    assert (run_dir / "openai_mock" / "events.jsonl").read_text() == events_before
    assert "re-scored by rules" in capsys.readouterr().out


async def test_judge_rescore_then_a_second_rescore_makes_no_calls(tmp_path, mock_llm, monkeypatch):
    run_dir = await make_run(tmp_path, mock_llm.url, monkeypatch, ["openai:mock", "oracle"])
    assert all(not r["verdicts"] for r in results_of(run_dir, "oracle"))
    agent_calls = mock_llm.stats["requests"]
    assert await rescore(["rescore", str(run_dir), "--judge", "mock-judge"]) == 0
    judge_calls = mock_llm.stats["requests"] - agent_calls
    assert judge_calls == 2 * 2 * 2  # 2 agents x 2 tests x 2 questions, nothing else
    first = {a: results_of(run_dir, a) for a in ("openai_mock", "oracle")}
    assert all(len(r["verdicts"]) == 2 for r in first["oracle"] if r["dataset"] == "fictional_facts")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["judge"] == "mock-judge"
    assert await rescore(["rescore", str(run_dir), "--judge", "mock-judge"]) == 0
    assert mock_llm.stats["requests"] - agent_calls == judge_calls  # all from the cache
    again = {a: results_of(run_dir, a) for a in ("openai_mock", "oracle")}
    assert again == first  # the same verdicts and scores: that the cache answered is in the summary only
    summary = json.loads((run_dir / "oracle" / "summary.json").read_text())
    assert summary["usage"]["cached"]["judge"] == 4


async def test_rescore_refuses_changed_definitions_and_missing_runs(tmp_path, mock_llm, monkeypatch, capsys):
    run_dir = await make_run(tmp_path, mock_llm.url, monkeypatch, ["retrieval"])
    cfg = json.loads((run_dir / "run_config.json").read_text())
    cfg["config"]["seed"] = 99
    (run_dir / "run_config.json").write_text(json.dumps(cfg))
    assert await rescore(["rescore", str(run_dir)]) == 2
    assert "cannot be re-scored" in capsys.readouterr().err
    assert await rescore(["rescore", "nothing-here", "--results", str(tmp_path)]) == 2
    assert "not found" in capsys.readouterr().err
    shutil.rmtree(run_dir / "retrieval")
    cfg["config"]["seed"] = 0
    (run_dir / "run_config.json").write_text(json.dumps(cfg))
    assert await rescore(["rescore", str(run_dir)]) == 2
    assert "no event log" in capsys.readouterr().err


async def test_a_tampered_log_is_detected(tmp_path, mock_llm, monkeypatch, capsys):
    run_dir = await make_run(tmp_path, mock_llm.url, monkeypatch, ["retrieval"])
    log = run_dir / "retrieval" / "events.jsonl"
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["type"] == "turn" and event["kind"] == "test":
            event["user"] = "something else"
            lines[i] = json.dumps(event)
            break
    log.write_text("\n".join(lines) + "\n")
    before = (run_dir / "retrieval" / "results.json").read_text()
    assert await rescore(["rescore", str(run_dir)]) == 2
    assert "differs from the recorded one" in capsys.readouterr().err
    assert (run_dir / "retrieval" / "results.json").read_text() == before  # nothing was replaced
    assert not (run_dir / "retrieval.rescoring").exists()


@pytest.mark.parametrize("isolated", [True])
async def test_isolated_runs_rescore_too(tmp_path, mock_llm, monkeypatch, isolated):
    monkeypatch.setenv("OPENAI_BASE_URL", mock_llm.url)
    cfg = make_config(["colours", "kv"], span=2000, examples=2, isolated=isolated)
    await run_config(cfg, tmp_path / "results", ["openai:mock"])
    run_dir = tmp_path / "results" / "t"
    before = results_of(run_dir, "openai_mock")
    calls = mock_llm.stats["requests"]
    assert await rescore(["rescore", str(run_dir)]) == 0
    assert results_of(run_dir, "openai_mock") == before and mock_llm.stats["requests"] == calls


async def test_a_tampered_log_of_an_isolated_run_is_refused_and_leaves_nothing(tmp_path):
    """Isolated sessions re-score concurrently: when one log is refused, the run stays as it was and no side folder
    is left behind, also when the caller's event loop goes on."""
    from ltm_harness.testing import make_config, run_config

    cfg = make_config(["colours", "kv", "shopping", "names"], span=2000, examples=3, isolated=True,
                      isolated_concurrency=4)
    await run_config(cfg, tmp_path, ["retrieval"])
    run_dir = tmp_path / "t"
    logs = sorted((run_dir / "retrieval" / "events").glob("*.jsonl"))
    first = logs[0]
    lines = first.read_text().splitlines()
    turn = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "turn")
    event = json.loads(lines[turn])
    event["user"] = "something else"
    lines[turn] = json.dumps(event)
    first.write_text("\n".join(lines) + "\n")
    before = (run_dir / "retrieval" / "results.json").read_text()
    import ltm_harness

    with pytest.raises(ltm_harness.RunFolderError, match="differs from the recorded one"):
        await ltm_harness.rescore_async(run_dir)  # in this event loop, which goes on running
    await asyncio.sleep(0.1)
    assert not (run_dir / "retrieval.rescoring").exists()
    assert (run_dir / "retrieval" / "results.json").read_text() == before
