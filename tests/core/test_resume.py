"""`run --resume`: an interrupted run continues from its event log and ends exactly as an uninterrupted one.

The cut tests below interrupt a finished run at seeded random points by cutting its event log there (the last
line torn in half, as a crash mid-write leaves it), resume it, and compare every output byte for byte with the
uninterrupted run's, counting the agent's calls: a turn already answered is never asked again.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

import ltm_harness._agents.specs as runner  # where agents are made from their specs
from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._cli.main import main
from ltm_harness._runner.config import RunConfig
from ltm_harness._errors import LTMError
from ltm_harness._store.events import TurnEvent, parse_event
from ltm_harness._runner.modes import Resume
from ltm_harness._runner.prepare import prepare
from ltm_harness._runner.run import run_all
from ltm_harness.testing import make_config

DATASETS = ["colours", "jokes", "prospective_memory", "kv", "shopping", "trigger_response"]
AGENTS = ["retrieval", "recent:400", "oracle"]


class Counting(Agent):
    """Wraps an agent and counts the turns it is asked to answer and the turns it is restored with."""

    calls: dict[str, int] = {}
    restored: dict[str, int] = {}

    def __init__(self, inner: Agent) -> None:
        super().__init__(inner.spec)
        self.inner = inner
        self.is_oracle = inner.is_oracle

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        Counting.calls[self.spec] = Counting.calls.get(self.spec, 0) + 1
        return await self.inner.reply(message, oracle_hint)

    async def restore(self, turns: list[tuple[AgentMessage, str]]) -> None:
        Counting.restored[self.spec] = Counting.restored.get(self.spec, 0) + len(turns)
        await self.inner.restore(turns)


@pytest.fixture
def counting(monkeypatch):
    real = runner.agent_factory

    def factory(spec, tokenizer, options=None):
        make = real(spec, tokenizer, options)
        return lambda: Counting(make())

    monkeypatch.setattr(runner, "agent_factory", factory)
    Counting.calls, Counting.restored = {}, {}
    return Counting


def config(**extra) -> RunConfig:
    return make_config(DATASETS, span=1500, examples=2, **extra)


async def reference(tmp_path: Path, cfg: RunConfig) -> Path:
    await run_all(prepare(cfg, tmp_path / "ref"), AGENTS)
    return tmp_path / "ref" / "t"


def turns_in(data: bytes) -> int:
    return sum(isinstance(parse_event(line), TurnEvent) for line in data.splitlines() if line.strip())


def cut(log: Path, k: int) -> None:
    """Keep the first k lines and half of the next one, as a process killed mid-write leaves the file."""
    lines = log.read_bytes().splitlines(keepends=True)
    torn = lines[k][: len(lines[k]) // 2] if k < len(lines) else b""
    log.write_bytes(b"".join(lines[:k]) + torn)


def interrupt(run_dir: Path, agent_folder: str) -> None:
    """What an interrupted run leaves: no results or summary for the agent, no summary for the run."""
    for name in ("results.json", "summary.json"):
        (run_dir / agent_folder / name).unlink(missing_ok=True)
    (run_dir / "summary.json").unlink()


def same_outputs(a: Path, b: Path) -> None:
    for agent in ("retrieval", "recent_400", "oracle"):
        for name in ("results.json",):
            assert (a / agent / name).read_bytes() == (b / agent / name).read_bytes(), (agent, name)
        logs = sorted(p.relative_to(a) for p in (a / agent).rglob("*.jsonl"))
        assert logs and logs == sorted(p.relative_to(b) for p in (b / agent).rglob("*.jsonl"))
        for rel in logs:
            assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel
        sa, sb = (json.loads((d / agent / "summary.json").read_text()) for d in (a, b))
        sa.pop("wall_seconds"), sb.pop("wall_seconds")
        assert sa == sb
    ra, rb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    for r in (ra, rb):
        for agent in r["agents"]:
            agent.pop("wall_seconds")
    assert ra == rb


async def test_resumed_runs_equal_the_uninterrupted_run_at_random_cuts(tmp_path, counting):
    cfg = config()
    ref = await reference(tmp_path, cfg)
    log = (ref / "retrieval" / "events.jsonl").read_bytes()
    n_lines = len(log.splitlines())
    total_turns = turns_in(log)
    cuts = sorted(random.Random(20261122).sample(range(1, n_lines), 5)) + [n_lines]  # the last: nothing lost but the summary
    for k in cuts:
        work = tmp_path / f"cut{k}"
        shutil.copytree(ref, work / "t")
        cut(work / "t" / "retrieval" / "events.jsonl", k)
        interrupt(work / "t", "retrieval")
        shutil.rmtree(work / "t" / "recent_400")  # this agent never started
        counting.calls, counting.restored = {}, {}
        await run_all(prepare(cfg, work, resume=True), AGENTS, mode=Resume())
        kept = turns_in(b"".join(log.splitlines(keepends=True)[:k]))
        assert counting.calls.get("retrieval", 0) == total_turns - kept, k  # no answered turn is asked again
        assert counting.restored.get("retrieval", 0) == (kept if kept < total_turns else 0), k
        assert counting.calls.get("recent:400") == turns_in((ref / "recent_400" / "events.jsonl").read_bytes())
        assert "oracle" not in counting.calls  # finished: kept as it was
        same_outputs(ref, work / "t")


async def test_resume_in_isolated_mode(tmp_path, counting):
    cfg = config(isolated=True)
    ref = await reference(tmp_path, cfg)
    work = tmp_path / "work"
    shutil.copytree(ref, work / "t")
    logs = sorted((work / "t" / "retrieval" / "events").glob("*.jsonl"))
    cut(logs[0], 5)
    logs[1].unlink()  # never started
    interrupt(work / "t", "retrieval")
    await run_all(prepare(cfg, work, resume=True), AGENTS, mode=Resume())
    same_outputs(ref, work / "t")


async def test_a_changed_config_or_harness_is_refused(tmp_path, counting):
    cfg = config()
    ref = await reference(tmp_path, cfg)
    interrupt(ref, "retrieval")
    cut(ref / "retrieval" / "events.jsonl", 40)
    other = config(seed=3)
    with pytest.raises(LTMError, match=r"run_config.json: config.seed differs from the run being resumed"):
        prepare(other, tmp_path / "ref", resume=True)
    # an event that differs from what the harness makes now (here: a recorded filler line edited by hand)
    log = ref / "retrieval" / "events.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if '"kind":"filler"' in line)
    lines[i] = lines[i].replace('"reply":"', '"reply":"changed ', 1)
    log.write_text("".join(lines))
    before = log.read_bytes()
    before = before[: before.rindex(b"\n") + 1]  # only the torn last line may go
    summary = await run_all(prepare(cfg, tmp_path / "ref", resume=True), AGENTS, mode=Resume())
    assert "differs from the one this harness makes now" in summary.errors["retrieval"]
    assert "overwrite=True" in summary.errors["retrieval"]  # said to a caller of the library
    assert log.read_bytes() == before  # nothing was written over the recorded events


def test_cli_existing_folder_behaviour(tmp_path, capsys):
    base = ["run", "--examples", "1", "--span", "1000", "-a", "retrieval", "--results", str(tmp_path),
            "--quiet", "--no-report"]
    assert main(base) == 0
    assert main(base) == 0  # a finished run is kept: the new one goes next to it
    assert "holds a finished run, kept as it is; this run writes to" in capsys.readouterr().err
    assert (tmp_path / "default-2" / "retrieval" / "results.json").is_file()
    first = (tmp_path / "default" / "retrieval" / "results.json").read_bytes()
    # interrupted: refused without --resume / --overwrite, with one line saying both
    (tmp_path / "default" / "retrieval" / "summary.json").unlink()
    assert main(base) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "interrupted run (retrieval did not finish)" in err and "--resume" in err
    assert main(base + ["--resume"]) == 0
    assert (tmp_path / "default" / "retrieval" / "results.json").read_bytes() == first
    assert main(base + ["--overwrite"]) == 0
    assert not (tmp_path / "default-3").exists()
    # nothing to resume: the run simply starts (so `until run --resume; do :; done` works on preemptible machines)
    assert main(["run", "--run-name", "fresh", "--resume", "--examples", "1", "--span", "1000", "-a", "null",
                 "--results", str(tmp_path), "--quiet", "--no-report"]) == 0
    assert "holds nothing to resume; the run starts from the beginning" in capsys.readouterr().err
    assert (tmp_path / "fresh" / "null" / "results.json").is_file()
    assert main(base + ["--resume", "--seed", "5"]) == 2
    assert "config.seed differs from the run being resumed" in capsys.readouterr().err
    # an agent added on resume joins the agents that finished; the run's summary lists them all, as the report does
    assert main(["run", "--run-name", "fresh", "--resume", "--examples", "1", "--span", "1000", "-a", "oracle",
                 "--results", str(tmp_path), "--quiet", "--no-report"]) == 0
    summary = json.loads((tmp_path / "fresh" / "summary.json").read_text())
    assert [a["agent"] for a in summary["agents"]] == ["oracle", "null"]


async def test_an_agent_that_cannot_rebuild_its_memory_is_not_resumed(tmp_path, monkeypatch):
    class Opaque(Agent):
        async def reply(self, message, oracle_hint=None):
            return Reply(text="OK.")

    cfg = config()
    await run_all(prepare(cfg, tmp_path), ["null"])
    run_dir = tmp_path / "t"
    interrupt(run_dir, "null")
    cut(run_dir / "null" / "events.jsonl", 30)
    monkeypatch.setattr(runner, "agent_factory", lambda spec, tok, options=None: lambda: Opaque(spec))
    summary = await run_all(prepare(cfg, tmp_path, resume=True), ["null"], mode=Resume())
    assert "cannot be resumed: its adapter does not implement restore()" in summary.errors["null"]
