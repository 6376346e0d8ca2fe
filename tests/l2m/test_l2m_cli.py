"""`python -m ltm_harness syllabus validate|run|metrics` on the shipped syllabi and on broken input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._protocols.l2m.metrics import read_metrics

SHIPPED = ("cl-bandit", "ant-a-bandit-guess", "ant-b-bandit-guess")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_syllabi_are_valid_for_their_declared_type(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["syllabus", "validate", name]) == 0
    out = capsys.readouterr().out
    assert f"{name}.json: valid (" in out and ("episodes, task bandit" in out or "episodes, tasks bandit" in out)


def test_validate_prints_every_violation_on_its_own_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"$phase": "1.test"}, {"$repeat": {"$episode": "a", "k": 1}, "count": 1},
                                {"$phase": "2.train"}, {"$repeat": {"$episode": "a", "k": 2}, "count": 1}]))
    assert main(["syllabus", "validate", str(path), "--type", "ANT_A", "--no-tasks"]) == 1
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [line.rsplit("[", 1)[1] for line in lines] == [
        "first-block-train]", "ant-no-variation]", "ant-several-tasks]"]
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert "3 problems (ANT_A)" in captured.err


def test_validate_without_a_type_checks_the_general_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "two.json"
    path.write_text(json.dumps([{"$phase": "1.train"}, {"$repeat": {"$episode": "a"}, "count": 1},
                                {"$repeat": {"$episode": "b"}, "count": 1}]))
    assert main(["syllabus", "validate", str(path), "--no-tasks"]) == 0
    assert "valid (general rules only; give --type for CL or ANT rules)" in capsys.readouterr().out
    assert main(["syllabus", "validate", str(path), "--type", "CL", "--no-tasks"]) == 1


def test_validate_refuses_an_unknown_task_as_run_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "unknown.json"
    path.write_text(json.dumps([{"$phase": "1.train"}, {"$repeat": {"$episode": "pong"}, "count": 1},
                                {"$repeat": {"$episode": "bandit", "colour": 3}, "count": 1}]))
    assert main(["syllabus", "validate", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.endswith("[task]") for line in lines)
    assert "unknown environment 'pong'" in lines[0] and "unknown param 'colour'" in lines[1]
    assert main(["syllabus", "validate", str(path), "--no-tasks"]) == 0  # the structure alone is fine
    capsys.readouterr()
    assert main(["syllabus", "run", str(path), "-a", "oracle", "--out", str(tmp_path / "out")]) == 2  # refused
    assert "unknown environment 'pong'" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_bandit_whose_arms_pay_alike_is_accepted_with_a_warning(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Equal probabilities are a legal task that teaches nothing (l2metrics and the reference tools take it)."""
    path = tmp_path / "flat.json"
    path.write_text(json.dumps([{"$phase": "1.train"},
                                {"$repeat": {"$episode": "bandit", "probabilities": [0.5, 0.5], "horizon": 4},
                                 "count": 2}, {"$phase": "1.test"}, {"$info": {"disable_updates": True}},
                                {"$repeat": {"$episode": "bandit", "probabilities": [0.5, 0.5], "horizon": 4},
                                 "count": 1}, {"$info": {}}]))
    assert main(["syllabus", "validate", str(path), "--type", "CL"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{path}: warning: instruction 1: task 'bandit': every arm pays with the same chance "
                               "(0.5)") and lines[0].endswith("teaches nothing; give the arms different probabilities [task]")
    assert lines[1].startswith(f"{path}: valid (CL): 2 blocks") and len(lines) == 2
    out = tmp_path / "out"
    assert main(["syllabus", "run", str(path), "-a", "oracle", "-a", "null", "--out", str(out)]) == 0
    assert "teaches nothing" in capsys.readouterr().err
    # the score column is the expected payoff: 4 pulls x 0.5 for any arm pulled; "I don't know." pulls nothing
    scores = {agent: [float(line.split("\t")[-1]) for line in
                      (out / f"flat-{agent}" / agent / "data-log.tsv").read_text().splitlines()[1:]]
              for agent in ("oracle", "null")}
    assert scores["oracle"] == [2.0, 2.0, 2.0] and scores["null"] == [0.0, 0.0, 0.0]


def test_malformed_syllabus_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    path.write_text('[{"$phase": "1.train"}, {"$repeat": {"$episode": "a"}, "count": -1}]')
    assert main(["syllabus", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: instruction 1: count:") and "Traceback" not in err


def test_run_writes_logs_and_metrics_for_each_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["syllabus", "run", "ant-a-bandit-guess", "-a", "null", "-a", "oracle", "--out", str(out),
                 "--perf-measure", "score", "--run-ste"]) == 0
    printed = capsys.readouterr().out
    assert "oracle on ant-a-bandit-guess: 24 episodes" in printed and "lifetime metrics" in printed
    for agent in ("null", "oracle"):
        scenario = out / f"ant-a-bandit-guess-{agent}"
        for file in ("logger_info.json", "scenario_info.json", f"{agent}/data-log.tsv", f"{agent}/events.jsonl",
                     "metrics.json"):
            assert (scenario / file).is_file(), file
        assert sorted(p.name for p in (out / f"ant-a-bandit-guess-{agent}-ste").iterdir()) == ["bandit", "guess"]
    oracle = read_metrics(out / "ant-a-bandit-guess-oracle" / "metrics.json")
    assert oracle.perf_measure == "score"
    assert oracle.lifetime.avg_train_perf == 101 and oracle.lifetime.avg_eval_perf == 101
    assert (oracle.lifetime.ste_rel_perf, oracle.lifetime.sample_efficiency) == (1, 1)
    assert oracle.lifetime.perf_maintenance == 0
    null = read_metrics(out / "ant-a-bandit-guess-null" / "metrics.json")
    assert null.lifetime.avg_train_perf == 1 and null.lifetime.avg_eval_perf == 1  # the lowest possible score
    scenario_info = json.loads((out / "ant-a-bandit-guess-oracle" / "scenario_info.json").read_text())
    assert (scenario_info["scenario_type"], scenario_info["agent"], scenario_info["seed"]) == ("ANT_A", "oracle", 0)


def test_metrics_recomputes_every_scenario_under_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["syllabus", "run", "cl-bandit", "-a", "oracle", "--out", str(out)]) == 0
    assert main(["syllabus", "run", "ant-b-bandit-guess", "-a", "oracle", "--out", str(out), "--seed", "2"]) == 0
    for scenario in out.iterdir():
        (scenario / "metrics.json").unlink()
    capsys.readouterr()
    assert main(["syllabus", "metrics", str(out)]) == 0
    assert "lifetime metrics" in capsys.readouterr().out
    cl = read_metrics(out / "cl-bandit-oracle" / "metrics.json")
    assert [t.task_name for t in cl.tasks] == ["bandit"] and len(cl.tasks[0].recovery_times) == 2
    ant = read_metrics(out / "ant-b-bandit-guess-oracle" / "metrics.json")
    assert [(p.kind, p.from_task, p.to_task) for p in ant.transfer] == [("forward", "bandit", "guess")]
    # the ANT-B scenario as its own expert log is refused: it trains two tasks
    assert main(["syllabus", "metrics", str(out / "cl-bandit-oracle"), "--ste", str(out / "ant-b-bandit-guess-oracle")]) == 2
    assert "trains exactly one task" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["syllabus", "run", "cl-bandit", "-a", "nobody"], "unknown agent 'nobody'"),
    (["syllabus", "run", "cl-bandit", "-a", "null", "--type", "ANT_A"], "breaks 2 rules"),
    (["syllabus", "run", "cl-bandit", "-a", "null", "--ste", "x", "--run-ste"], "either --ste DIR"),
    (["syllabus", "metrics", "does-not-exist"], "no such log folder"),
])
def test_run_and_metrics_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert re.search(message, capsys.readouterr().err)


def test_an_agent_that_fails_keeps_its_partial_log_and_spares_the_others(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import ltm_harness._agents.specs as agents
    from ltm_harness._agents.base import Agent, AgentMessage, Reply

    class Flaky(Agent):
        calls = 0

        async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
            Flaky.calls += 1
            if Flaky.calls > 12:
                raise ConnectionError("connection reset by peer")
            return Reply(text="2")

    real = agents.agent_factory
    monkeypatch.setattr(agents, "agent_factory",
                        lambda spec, *a, **k: (lambda: Flaky(spec)) if spec == "flaky" else real(spec, *a, **k))
    out = tmp_path / "out"
    assert main(["syllabus", "run", "cl-bandit", "-a", "flaky", "-a", "null", "--out", str(out)]) == 1
    captured = capsys.readouterr()
    assert ("error: agent flaky: the agent failed turn 12 after 3 attempts: ConnectionError: connection reset by "
            f"peer; the log so far is in {out / 'cl-bandit-flaky' / 'flaky' / 'events.jsonl'}") in captured.err
    assert "null on cl-bandit: 33 episodes" in captured.out
    # the turns before the failure are in the event log (each move with its reward); no data log or metrics are
    # written for a syllabus that did not end: once the agent answers again, `syllabus run --resume` continues it
    events = [json.loads(line) for line in (out / "cl-bandit-flaky" / "flaky" / "events.jsonl").read_text().splitlines()]
    turns = [e for e in events if e["type"] == "turn"]
    assert len(turns) == 13 and turns[-1]["failed"] and not any(t["failed"] for t in turns[:-1])
    assert len([e for e in events if e["type"] == "env_step"]) == 12
    assert not (out / "cl-bandit-flaky" / "flaky" / "data-log.tsv").exists()
    assert not (out / "cl-bandit-flaky" / "metrics.json").exists()


def test_a_refused_folder_lets_go_of_the_others_and_agents_are_closed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """When one agent's folder holds an interrupted run, the command refuses in one line and holds no other agent's
    folder afterwards; an agent whose syllabus stops before its session starts is still closed."""
    out = tmp_path / "out"
    assert main(["syllabus", "run", "cl-bandit", "-a", "oracle", "-a", "null", "--out", str(out)]) == 0
    (out / "cl-bandit-null" / "null" / "data-log.tsv").unlink()  # null's run is now an interrupted one
    capsys.readouterr()
    assert main(["syllabus", "run", "cl-bandit", "-a", "oracle", "-a", "null", "--out", str(out)]) == 2
    assert "cl-bandit-null holds an interrupted run; pass --resume" in capsys.readouterr().err
    from ltm_harness._store.layout import ScenarioFolder

    taken = ScenarioFolder(out / "cl-bandit-oracle-2", "oracle")  # where oracle's new run was to go
    assert taken.path.is_dir()
    taken.lock().acquire().release()  # free: the refused command let go of it

    import asyncio

    import ltm_harness._protocols.l2m.runner as runner
    from ltm_harness._agents.baselines import NullAgent
    from ltm_harness._protocols.l2m.syllabus import load_syllabus

    closed: list[str] = []

    class Closing(NullAgent):
        async def close(self) -> None:
            closed.append(self.spec)

    def broken(*args: object, **kwargs: object) -> object:
        raise ValueError("no such task")

    monkeypatch.setattr(runner, "make_tasks", broken)
    with pytest.raises(ValueError):
        asyncio.run(runner.run_syllabus(load_syllabus("cl-bandit"), Closing("null"), tmp_path / "x"))
    assert closed == ["null"]
