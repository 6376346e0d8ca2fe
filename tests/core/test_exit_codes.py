"""Every command that runs agents (`run`, `aiq`, `suite`, `syllabus run`, `grid`) ends with the same exit codes, the
table of docs/exit-codes.md: 0 done; 1 an agent failed or stopped early; 2 an error, said in one line; 3 done,
but some tests errored, and 0 then with --allow-errored. Each command's codes, with offline agents and tiny configs,
suites, syllabi and studies, run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ltm_harness._cli.main import main

# An agent whose every turn fails with an error no retry can fix: taken to be down at its first turn.
DOWN_AGENT = """
from ltm_harness import Agent, AgentError

class Down(Agent):
    async def reply(self, message, oracle_hint=None):
        raise AgentError("the agent's backend refused the key", fatal=True)
"""
# A dataset whose scoring is wrong (a score above the maximum): each of its tests errors, the run finishes.
WRONG_DATASET = """
from ltm_harness import DatasetInterface

class Wrong(DatasetInterface):
    name = "wrong"

    def generate_examples(self, n):
        return [self.make_example(str(i), ["Remember 7.", "What number?"], [False, True], ["7"]) for i in range(n)]

    def evaluate_example(self, example, questions, responses):
        return 5.0, 1.0, ["a score above the maximum"]
"""
CONFIG = """
config: {run_name: x, dataset_dirs: [ds]}
datasets:
  args: {memory_span: 1000, dataset_examples: 1}
  datasets:
    - {name: colours}
    - {name: wrong}
"""
# An environment whose second step raises: the trial playing it errors.
BROKEN_ENV = """
from ltm_harness.envs import ActiveEnv, EnvHeader, Space

class Broken(ActiveEnv):
    test_name = "broken"

    @property
    def header(self):
        return EnvHeader(name="broken", kind="active", action_space=Space(description="m", choices=("left", "right")),
                         observation_space=Space(description="x"), info="", min_score=0.0, max_score=1.0)

    def default_max_steps(self):
        return 3

    def _reset(self):
        self.x = 0

    def _act(self, action):
        self.x += 1
        if self.x == 2:
            raise RuntimeError("the environment broke")
        return 0.0, False, "on"

    def _observe(self):
        return {"x": self.x}

    def rules(self):
        return "Walk right."

    def describe(self, observation):
        return f"You are at {observation['x']}."

    def oracle_action(self):
        return "right"

    def summary(self):
        return "done"
"""
SUITES = """
from ltm_harness.aivle import ReinforcementLearningTestCase, RewardEvaluator, TestSuite
from ltm_harness.envs import make_env

class NoText:  # a gym-style environment with no text interface: a chat agent cannot play it, the case errors
    def reset(self):
        return 0

    def step(self, action):
        return 0, 0.0, True, {}

def case(case_id, env):
    return ReinforcementLearningTestCase(case_id, 30.0, 1, {}, env, RewardEvaluator(), t_max=4, seeds=[1])

good = TestSuite("good", [case("guess", make_env("guess", low=1, high=4))])
bad = TestSuite("bad", [case("guess", make_env("guess", low=1, high=4)), case("notext", NoText())])
"""
# An agent with no restore(): a run of it that was cut short cannot be resumed.
FORGETFUL_AGENT = """
from ltm_harness import Agent

class Forgetful(Agent):
    async def reply(self, message, oracle_hint=None):
        return '{"action": 2}'
"""
SYLLABUS = [{"$phase": "1.train"},
            {"$repeat": {"$episode": "bandit", "probabilities": [0.2, 0.8], "horizon": 2}, "count": 1},
            {"$phase": "1.test"},
            {"$repeat": {"$episode": "bandit", "probabilities": [0.2, 0.8], "horizon": 2}, "count": 1}]


@pytest.fixture(autouse=True)
def _files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in {"down.py": DOWN_AGENT, "ds/wrong.py": WRONG_DATASET, "c.yml": CONFIG,
                       "broken_env.py": BROKEN_ENV, "suites.py": SUITES, "forgetful.py": FORGETFUL_AGENT,
                       "tiny.json": json.dumps(SYLLABUS)}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")


def said(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err


def one_error_line(capsys: pytest.CaptureFixture[str], *parts: str) -> None:
    err = said(capsys)
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert all(part in err for part in parts), err


def test_run(capsys: pytest.CaptureFixture[str]) -> None:
    run = ["run", "-c", "c.yml", "--results", "results", "--quiet", "--no-report"]
    assert main([*run, "-a", "oracle", "--exclude", "wrong"]) == 0
    said(capsys)
    assert main([*run, "-a", "oracle"]) == 3  # the wrong dataset's test errored
    assert "warning: agent oracle: 1 errored: the test's scoring returned a wrong score" in said(capsys)
    assert main([*run, "-a", "oracle", "--allow-errored"]) == 0
    said(capsys)
    assert main([*run, "-a", "down.py:Down", "--exclude", "wrong"]) == 1
    assert "error: agent down.py:Down: " in said(capsys)
    assert main([*run, "-a", "down.py:Down", "--allow-errored"]) == 1  # allows errored tests, not a failed agent
    said(capsys)
    assert main([*run, "-a", "nobody"]) == 2
    one_error_line(capsys, "unknown agent 'nobody'")


def test_aiq(capsys: pytest.CaptureFixture[str]) -> None:
    aiq = ["aiq", "--trials", "1", "--results", "results", "--quiet"]
    assert main([*aiq, "--test", "guess,high=20", "-a", "oracle"]) == 0
    said(capsys)
    assert main([*aiq, "--test", "broken_env.py:Broken", "-a", "oracle"]) == 3
    assert "warning: agent oracle: 1 trial errored" in said(capsys)
    assert main([*aiq, "--test", "broken_env.py:Broken", "-a", "oracle", "--allow-errored"]) == 0
    said(capsys)
    assert main([*aiq, "--test", "guess,high=20", "-a", "down.py:Down", "--allow-errored"]) == 1
    assert "error: agent down.py:Down: " in said(capsys)
    assert main([*aiq, "--test", "maze", "-a", "oracle"]) == 2
    one_error_line(capsys, "maze")


def test_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = ["--results", "results", "--quiet"]
    assert main(["suite", "suites.py:good", "-a", "oracle", *suite]) == 0
    said(capsys)
    assert main(["suite", "suites.py:bad", "-a", "oracle", *suite]) == 3  # a case's result has an error
    assert "warning: 1 case result(s) have an error" in said(capsys)
    assert main(["suite", "suites.py:bad", "-a", "oracle", "--allow-errored", *suite]) == 0
    said(capsys)
    # An agent that fails its turns in a case: the case's result has the error (as aiVLE grades it), so 3.
    assert main(["suite", "suites.py:good", "-a", "down.py:Down", *suite]) == 3
    said(capsys)
    # An agent whose run stops without results (here: cut short, and it cannot be resumed): 1, --resume goes on.
    agent = ["-a", "f=forgetful.py:Forgetful", "--allow-errored"]
    assert main(["suite", "suites.py:good", *agent, "--overwrite", *suite]) == 0
    folder = tmp_path / "results" / "suites" / "good"
    (folder / "f.json").unlink()
    log = folder / "f" / "events" / "guess.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    first_turn = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "turn")
    log.write_text("".join(lines[:first_turn + 1]), encoding="utf-8")
    assert main(["suite", "suites.py:good", *agent, "--resume", *suite]) == 1
    assert "cannot be resumed" in said(capsys)
    assert main(["suite", "suites.py:good", "-a", "nobody", *suite]) == 2
    one_error_line(capsys, "unknown agent 'nobody'")


def test_syllabus_run(capsys: pytest.CaptureFixture[str]) -> None:
    """A turn the agent fails after every retry stops its syllabus: a syllabus never finishes with errored
    episodes, so 3 is never given, and --allow-errored (accepted as everywhere) changes nothing."""
    run = ["syllabus", "run", "tiny.json", "--out", "out"]
    assert main([*run, "-a", "oracle"]) == 0
    assert main([*run, "-a", "oracle", "--allow-errored"]) == 0
    said(capsys)
    assert main([*run, "-a", "down.py:Down", "--allow-errored"]) == 1
    assert "error: agent down.py:Down: " in said(capsys)
    assert main([*run, "-a", "nobody"]) == 2
    one_error_line(capsys, "unknown agent 'nobody'")


def test_grid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    studies = {"ok": "agents: [oracle]\ndatasets: [colours]\n", "errored": "agents: [oracle]\n",
               "down": "agents: [down.py:Down]\ndatasets: [colours]\n", "wrong": "agents: [oracle]\nspans: 3\n"}
    for name, body in studies.items():
        (tmp_path / f"{name}.yml").write_text(f"name: {name}\nbase: c.yml\n{body}", encoding="utf-8")
    grid = ["--results", "results", "--quiet", "--no-report"]
    assert main(["grid", "ok.yml", *grid]) == 0
    said(capsys)
    assert main(["grid", "errored.yml", *grid]) == 3  # the cell finished, its wrong dataset's test errored
    assert "warning: cell oracle__seed0: 1 test errored" in said(capsys)
    # Run again: the finished cell is not run again, and what its tests did still sets the code.
    assert main(["grid", "errored.yml", *grid]) == 3
    assert main(["grid", "errored.yml", "--allow-errored", *grid]) == 0
    said(capsys)
    assert main(["grid", "down.yml", "--allow-errored", *grid]) == 1  # a failed cell is a failed agent
    assert "error: cell " in said(capsys)
    assert main(["grid", "wrong.yml", *grid]) == 2
    one_error_line(capsys, "wrong.yml", "spans")
