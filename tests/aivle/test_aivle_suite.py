"""Suites: the aiVLE JSON schema, chat agents through the adapter, loading suites, the `suite` command."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._agents.base import Agent as ChatAgent
from ltm_harness._agents.base import AgentMessage, Reply
from ltm_harness.aivle import (
    Agent,
    ChatAgents,
    ReinforcementLearningTestCase,
    RewardEvaluator,
    StepCountEvaluator,
    SuiteResult,
    TestSuite,
    chat_agent_factory,
    load_suite,
)
from ltm_harness.aivle.examples import build_suite
from ltm_harness._cli.main import main
from ltm_harness.envs import ActiveEnv, make_env
from ltm_harness._errors import LTMError
from ltm_harness._runner.modes import Fresh
from ltm_harness._store.eventlog import read_events
from ltm_harness._store.events import EnvStep, SessionStart, TurnEvent
from ltm_harness._store.layout import AgentFolder


class BrokenEnv:
    def reset(self) -> Any:
        raise OSError("the simulator is down")

    def step(self, action: Any) -> Any:
        raise AssertionError("never reached")


class Halver(Agent):
    """A Python agent for the guessing game (1..100): halves the range it is told about."""

    def reset(self) -> None:
        self.lo, self.hi, self.last = 1, 100, 0

    def step(self, state: Any) -> Any:
        if "too high" in state["event"]:
            self.hi = self.last - 1
        elif "too low" in state["event"]:
            self.lo = self.last + 1
        self.last = (self.lo + self.hi) // 2
        return self.last


def test_results_round_trip_through_json_with_errors_as_strings():
    suite = TestSuite("mixed", [
        ReinforcementLearningTestCase("ok", 10.0, 2, {}, make_env("guess"), RewardEvaluator(), t_max=14, seeds=[1, 2]),
        ReinforcementLearningTestCase("env-down", 10.0, 2, {}, BrokenEnv(), StepCountEvaluator(), t_max=3),
    ])
    data = suite.run(Halver)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert list(data) == ["suite_id", "results"] and data["suite_id"] == "mixed"
    assert [r["case_id"] for r in data["results"]] == ["ok", "env-down"]
    for r in data["results"]:
        assert set(r["result"]) == {"name", "detail", "value", "error"}
    ok, down = (r["result"] for r in data["results"])
    assert ok["value"] == 1.0 and ok["error"] is None
    assert down["value"] is None and down["error"] == ("env reset for run 1 failed: OSError: the simulator is down; "
                                                       "no episode was started, so there is no mean to report")
    assert SuiteResult.model_validate(data).to_json_data() == data


def test_chat_agents_play_the_example_suite():
    oracle = build_suite().run(chat_agent_factory("oracle"))
    null = build_suite().run(chat_agent_factory("null"))
    value = {r["case_id"]: r["result"]["value"] for r in oracle["results"]}
    null_value = {r["case_id"]: r["result"]["value"] for r in null["results"]}
    assert value["guess-1-100"] == 1.0 and null_value["guess-1-100"] == 0.0
    assert null_value["keydoor-5x5"] == 25.0 and value["keydoor-5x5"] < 12  # steps: fewer is better
    assert value["bandit-3-arms"] > 5 and null_value["bandit-3-arms"] == 0.0
    assert all(r["result"]["error"] is None for r in oracle["results"] + null["results"])


class Talker(ChatAgent):
    """Says the same things every time."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__("talker")
        self.replies = replies
        self.messages: list[AgentMessage] = []
        self.closed = False

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        assert oracle_hint is None  # only the oracle is handed hints
        self.messages.append(message)
        return Reply(text=self.replies[(len(self.messages) - 1) % len(self.replies)])

    async def close(self) -> None:
        self.closed = True


def test_a_chat_agent_plays_a_case_as_one_recorded_conversation(tmp_path: Path):
    env = make_env("keydoor", env_name="5x5")
    assert isinstance(env, ActiveEnv)
    chat = Talker(["Let me think about it.", '{"action": "up"}', "left or right?"])
    plan = Fresh().agent(AgentFolder(tmp_path / "talker"), main_session=False)
    case = ReinforcementLearningTestCase("k", 10.0, 2, {"ignored": True}, env, StepCountEvaluator(), t_max=6, seeds=[3, 4])
    result = case.run(ChatAgents("talker", lambda: chat, plan=plan))
    assert result.error is None and result.value == 6.0 and chat.closed
    events = read_events(tmp_path / "talker" / "events" / "k.jsonl")
    turns = [e for e in events if isinstance(e, TurnEvent)]
    steps = [e for e in events if isinstance(e, EnvStep)]
    assert len(turns) == 12 and [(s.episode, s.step) for s in steps] == [(e, t) for e in (0, 1) for t in range(6)]
    assert [s.invalid for s in steps] == [True, False, True] * 4
    first, second = turns[0], turns[1]
    assert first.user.startswith("[keydoor-5x5 episode 1] Step 1 of at most 25.") and "Walk onto the key" in first.user
    assert second.pos == first.user_tokens + first.reply_tokens and second.time > first.time
    assert turns[6].user.startswith("[keydoor-5x5 episode 2] Step 1") and "Walk onto the key" in turns[6].user
    # The environment keeps the invalid replies of its current (second) episode: steps 7 to 12.
    assert [bad.reply for _, bad in env.invalid] == ["Let me think about it.", "left or right?"] * 2
    assert "Your reply was not a valid action (no allowed action found in the reply)" in second.user


def test_a_chat_agent_needs_a_text_environment():
    case = ReinforcementLearningTestCase("gym", 5.0, 1, {}, BrokenEnv(), RewardEvaluator(), t_max=3)
    result = case.run(chat_agent_factory("retrieval"))
    assert result.error is not None and result.error.startswith(
        "a chat agent needs an environment with a text interface (an ltm_harness.envs.ActiveEnv), not BrokenEnv")


SUITE_FILE = textwrap.dedent("""
    from ltm_harness.aivle import TestSuite, ReinforcementLearningTestCase, RewardEvaluator
    from ltm_harness.envs import make_env

    def build():
        return TestSuite("from-file", [ReinforcementLearningTestCase(
            "guess", 30.0, 2, {}, make_env("guess", high=20), RewardEvaluator(), t_max=10, seeds=[1, 2])])

    not_a_suite = 3
    made_wrong = lambda: "nope"
""")


def test_load_suite(tmp_path: Path):
    assert load_suite("ltm_harness.aivle.examples:suite").suite_id == "text-envs"
    assert load_suite("ltm_harness.aivle.examples").suite_id == "text-envs"  # NAME defaults to suite
    assert load_suite("ltm_harness.aivle.examples:build_suite").suite_id == "text-envs"  # a factory
    path = tmp_path / "my_suite.py"
    path.write_text(SUITE_FILE, encoding="utf-8")
    assert load_suite(f"{path}:build").suite_id == "from-file"
    with pytest.raises(LTMError, match="has no 'suite'"):
        load_suite(str(path))
    with pytest.raises(LTMError, match="not_a_suite is a int, not a TestSuite"):
        load_suite(f"{path}:not_a_suite")
    with pytest.raises(LTMError, match=r"made_wrong\(\) returned str, not a TestSuite"):
        load_suite(f"{path}:made_wrong")
    with pytest.raises(LTMError, match="suite 'no_such_module_here:suite': cannot import 'no_such_module_here'"):
        load_suite("no_such_module_here:suite")
    with pytest.raises(LTMError, match="missing.py does not exist"):
        load_suite(str(tmp_path / "missing.py"))
    with pytest.raises(LTMError, match="ltm_harness.aivle.examples has no 'nothing'; write MODULE:NAME"):
        load_suite("ltm_harness.aivle.examples:nothing")
    with pytest.raises(LTMError, match="unknown suite 'nothing-here'; known suites: text-envs"):
        load_suite("nothing-here")
    assert load_suite("text-envs").suite_id == "text-envs"  # the built-in suite by name
    (tmp_path / "broken.py").write_text("raise RuntimeError('oops')\n", encoding="utf-8")
    with pytest.raises(LTMError, match="failed to import \\(RuntimeError: oops\\)"):
        load_suite(str(tmp_path / "broken.py"))


def test_suite_command(tmp_path: Path, capsys):
    code = main(["suite", "ltm_harness.aivle.examples:suite", "-a", "oracle", "-a", "recent:500",
                 "--results", str(tmp_path), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "keydoor-5x5" in out and "step count evaluation" in out and "recent:500" in out
    folder = tmp_path / "suites" / "text-envs"
    data = json.loads((folder / "oracle.json").read_text())
    assert SuiteResult.model_validate(data).suite_id == "text-envs"
    assert (folder / "recent_500.json").is_file()
    events = read_events(folder / "oracle" / "events" / "guess-1-100.jsonl")
    assert isinstance(events[0], SessionStart) and events[0].session == "guess-1-100"
    turns = [e for e in events if isinstance(e, TurnEvent)]
    assert turns and all(t.test == "guess-1-100" and t.user.startswith("[guess episode") for t in turns)


def test_suite_command_errors(tmp_path: Path, capsys):
    path = tmp_path / "down.py"
    path.write_text(textwrap.dedent("""
        from ltm_harness.aivle import TestSuite, ReinforcementLearningTestCase, StepCountEvaluator

        class Down:
            def reset(self):
                raise OSError("the simulator is down")
            def step(self, action):
                return None

        suite = TestSuite("down", [ReinforcementLearningTestCase("c", 5.0, 1, {}, Down(), StepCountEvaluator(), t_max=2)])
    """), encoding="utf-8")
    assert main(["suite", f"{path}:suite", "--results", str(tmp_path), "--quiet"]) == 3  # finished, a case errored
    captured = capsys.readouterr()
    assert "text interface" in captured.out and "1 case result(s) have an error" in captured.err
    error = json.loads((tmp_path / "suites" / "down" / "retrieval.json").read_text())["results"][0]["result"]["error"]
    assert error.startswith("a chat agent needs an environment with a text interface")
    assert main(["suite", "ltm_harness.aivle.examples:suite", "-a", "nobody", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: unknown agent 'nobody'") and "Traceback" not in err
    assert main(["suite", "nowhere:suite", "--results", str(tmp_path)]) == 2
    assert "suite 'nowhere:suite': cannot import 'nowhere'" in capsys.readouterr().err


def test_an_agent_that_cannot_resume_a_suite_stops_with_one_line_and_stays_resumable(tmp_path: Path, capsys):
    """An agent error (here: no restore) is not a result of the case: the agent's results are not written, the
    other agents still play, the command says why in one line, and a later resume can continue it."""
    agent_file = tmp_path / "forgetful.py"
    agent_file.write_text(textwrap.dedent("""
        from ltm_harness import Agent

        class Forgetful(Agent):
            async def reply(self, message, oracle_hint=None):
                return '{"action": 50}'
    """), encoding="utf-8")
    args = ["suite", "text-envs", "-a", f"f={agent_file}:Forgetful", "-a", "oracle", "--results", str(tmp_path),
            "--quiet"]
    assert main(args) == 0
    folder = tmp_path / "suites" / "text-envs"
    (folder / "f.json").unlink()  # as if killed in the middle of its last case
    log = folder / "f" / "events" / "guess-1-100.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text("".join(lines[:6]), encoding="utf-8")
    capsys.readouterr()
    assert main([*args, "--resume"]) == 1
    err = capsys.readouterr().err
    assert "cannot be resumed" in err and "no results written for f; --resume continues it" in err
    assert "Traceback" not in err
    assert not (folder / "f.json").exists() and (folder / "oracle.json").is_file()
    assert len(log.read_text(encoding="utf-8").splitlines()) == 6  # nothing was played live in its place
