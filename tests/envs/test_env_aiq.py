"""The AIQ runner: named tests with params and trials, played by chat agents; the AIQ score."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ltm_harness._cli.main import main
from ltm_harness._protocols.aiq import AIQReport, default_tests, run_aiq
from ltm_harness._errors import LTMError
from ltm_harness._store.eventlog import read_events
from ltm_harness._store.events import TurnEvent


async def test_aiq_of_oracle_and_null(tmp_path: Path):
    tests = ["bandit,horizon=5", "keydoor,env_name=6x6", "cipher,env_name=substitution,n_test=4"]
    report = await run_aiq(tests, ["oracle", "null"], trials=3, seed=2, results_root=tmp_path)
    assert report.tests == ["bandit(horizon=5)", "keydoor(env_name=6x6)", "cipher(env_name=substitution,n_test=4)"]
    scores = {a.agent: a for a in report.agents}
    assert scores["oracle"].aiq == 1.0 and scores["null"].aiq == 0.0
    assert [t.trials for t in scores["oracle"].tests] == [3, 3, 1]  # passive tests are answered once
    assert [t.kind for t in scores["oracle"].tests] == ["active", "active", "passive"]
    run_dir = tmp_path / "aiq"
    assert AIQReport.model_validate_json((run_dir / "aiq.json").read_text()) == report
    logs = sorted((run_dir / "oracle" / "events").glob("*.jsonl"))
    assert len(logs) == 7  # every trial in its own session
    for log in logs:
        tests_in_log = {e.test for e in read_events(log) if isinstance(e, TurnEvent) and e.test}
        assert len(tests_in_log) == 1
    results = json.loads((run_dir / "null" / "results.json").read_text())
    assert len(results) == 7 and all(r["score"] == 0.0 for r in results)


async def test_aiq_is_the_mean_over_tests_of_the_trial_means(tmp_path: Path):
    report = await run_aiq(["keydoor", "guess"], ["retrieval"], trials=4, results_root=tmp_path, run_name="r")
    agent = report.agents[0]
    assert agent.aiq == pytest.approx(sum(t.score for t in agent.tests) / 2)
    # The same run again keeps the finished one (as any run does), goes to r-2 and gives the same scores;
    # with overwrite it replaces it, reusing the definitions, and gives the same report.
    again = await run_aiq(["keydoor", "guess"], ["retrieval"], trials=4, results_root=tmp_path, run_name="r")
    assert again.run_name == "r-2" and again.model_copy(update={"run_name": "r"}) == report
    again = await run_aiq(["keydoor", "guess"], ["retrieval"], trials=4, results_root=tmp_path, run_name="r",
                          overwrite=True)
    assert again == report


async def test_aiq_errors(tmp_path: Path):
    with pytest.raises(LTMError, match="unknown environment 'maze'"):
        await run_aiq(["maze"], ["oracle"], results_root=tmp_path)
    with pytest.raises(LTMError, match="have the same name; give each test once"):
        await run_aiq(["guess", "guess"], ["oracle"], results_root=tmp_path)
    with pytest.raises(LTMError, match="--trials must be at least 1"):
        await run_aiq(["guess"], ["oracle"], trials=0, results_root=tmp_path)


def test_default_tests_cover_every_sub_test():
    labels = [t.label for t in default_tests()]
    assert labels == ["bandit", "cipher(env_name=shift)", "cipher(env_name=substitution)", "guess",
                      "keydoor(env_name=5x5)", "keydoor(env_name=6x6)", "keydoor(env_name=7x7)"]


def test_aiq_command(tmp_path: Path, capsys):
    code = main(["aiq", "-a", "oracle", "-a", "null", "--test", "guess,high=50", "--test", "cipher", "--trials", "2",
                 "--results", str(tmp_path), "--run-name", "cli aiq", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "guess(high=50)" in out and "AIQ" in out and "1.000" in out and "0.000" in out
    assert (tmp_path / "cli_aiq" / "aiq.json").is_file()
    assert main(["aiq", "--test", "keydoor,env_name=8x8", "--results", str(tmp_path)]) == 2
    assert "env_name: Input should be '5x5', '6x6' or '7x7'" in capsys.readouterr().err
    assert main(["aiq", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "keydoor" in listed and "5x5, 6x6, 7x7" in listed and "passive" in listed


def test_aiq_command_names_agents_and_keeps_a_finished_run(tmp_path: Path, capsys, monkeypatch):
    """With a live display (a terminal), a named agent is shown by its name; a second run beside a finished one says
    where it writes and prints that folder."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich draws the live display as on a terminal
    args = ["aiq", "-a", "mine=oracle", "--test", "guess,high=20", "--trials", "1", "--results", str(tmp_path)]
    assert main(args) == 0
    first = capsys.readouterr()
    assert "mine" in first.out and "Traceback" not in first.err
    assert main(args) == 0
    second = capsys.readouterr()
    said = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", second.out + second.err).replace("\n", "")  # the display's codes out
    assert "holds a finished run, kept as it is" in said
    assert f"results in {tmp_path / 'aiq-2'}/" in said
    assert json.loads((tmp_path / "aiq-2" / "aiq.json").read_text())["run_name"] == "aiq-2"
