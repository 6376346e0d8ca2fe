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
    with pytest.raises(LTMError, match="trials=0: there must be at least 1 trial; give trials=1 or more"):
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


def test_trials_are_aggregated_as_the_reference_mean_raw_then_normalise_and_clip():
    from ltm_harness._envs.play import EpisodeResult, TestScore, trials_score

    # one trial far below the minimum does not count as 0 on its own: the mean raw score (3) is normalised
    assert trials_score([(-2.0, 0.0, 10.0), (8.0, 0.0, 10.0)]) == 0.3
    assert trials_score([(-20.0, 0.0, 10.0), (8.0, 0.0, 10.0)]) == 0.0 and trials_score([(12.0, 0.0, 10.0)]) == 1.0
    with pytest.raises(ValueError, match="range"):
        trials_score([(1.0, 2.0, 2.0)])

    def episode(score: float) -> EpisodeResult:
        return EpisodeResult(test="t", seed=0, score=score, min_score=0.0, max_score=10.0,
                             normalised=min(1.0, max(0.0, score / 10)), steps=1, invalid=0, summary="")

    assert TestScore(test="t", kind="active", episodes=[episode(-2.0), episode(8.0)]).mean == 0.3  # not 0.4


AGENT = '''
from ltm_harness import Agent


class HalfRight(Agent):
    """Fresh per trial: the first one made pulls the best arm (2), the next one never gives a move."""

    made = 0

    def __init__(self, spec=None):
        super().__init__(spec)
        HalfRight.made += 1
        self.good = HalfRight.made % 2 == 1

    async def reply(self, message, oracle_hint=None):
        return "2" if self.good else "I would rather not."
'''


async def test_aiq_averages_the_raw_scores_of_the_trials_before_normalising(tmp_path: Path):
    (tmp_path / "half_right.py").write_text(AGENT, encoding="utf-8")
    spec = f"half={tmp_path / 'half_right.py'}:HalfRight"
    test = "bandit,probabilities=[0.2,0.9],horizon=5,invalid_penalty=0"
    report = await run_aiq([test], [spec], trials=2, results_root=tmp_path, run_name="half")
    results = json.loads((tmp_path / "half" / "half" / "results.json").read_text())
    raws = sorted(r["raw_score"] for r in results)
    # the good trial scores the maximum 5 x 0.9; the other gives no move (3 refusals end it): 0, below the minimum 1
    assert raws == [0.0, pytest.approx(4.5)] and sorted(r["score"] for r in results) == [0.0, 1.0]
    low, high = 5 * 0.2, 5 * 0.9
    assert report.agents[0].tests[0].score == pytest.approx((2.25 - low) / (high - low))  # 0.357, not 0.5
