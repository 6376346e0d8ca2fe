"""The example suite's results JSON equals what the reference grader (aiVLE) writes for the same episodes.

tests/data/aivle-text-envs-oracle.json is the expected JSON. It was derived from REFERENCE.md section 3 (the
reference grader's result format), not from our evaluators: `reference_results` below restates the reference's
loop (per run: seed, env reset, agent reset, then at most t_max steps, stopping at `done`) and its evaluators
(RewardEvaluator: name "reward evaluation", detail the total reward of each episode, value their mean;
StepCountEvaluator: name "step count evaluation (average survival steps)", detail {"total_episodes",
"total_steps"}, value total_steps / total_episodes), and the file is its output for the example suite played by
the environments' optimal actions, written with `json.dumps(..., indent=2)`. One deliberate difference from the
reference, kept on purpose: the seed is applied *before* each reset (the reference applies it after, so its first
episode is unseeded). The tests check that the file is that derivation, and that our suite writes exactly it,
with a Python agent and with the harness's chat oracle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ltm_harness.aivle import Agent, ReinforcementLearningTestCase, RewardEvaluator, StepCountEvaluator, TestSuite
from ltm_harness.aivle import chat_agent_factory
from ltm_harness.aivle.examples import build_suite

EXPECTED = Path(__file__).resolve().parents[1] / "data" / "aivle-text-envs-oracle.json"


class OracleAgent(Agent):
    """A graded Python agent that plays the environment's optimal action (it reads the environment it is bound to)."""

    def bind_env(self, env: Any) -> None:
        self.env = env

    def reset(self) -> None:
        pass

    def step(self, state: Any) -> Any:
        return self.env.oracle_action()


def reference_results(suite: TestSuite) -> dict[str, Any]:
    """The reference grader's JSON for `suite` played by optimal actions (REFERENCE.md section 3, restated)."""
    results = []
    for case in suite.cases:
        assert isinstance(case, ReinforcementLearningTestCase)
        env, episodes = case.env, []
        for run in range(case.n_runs):
            if case.seeds:
                env.seed(case.seeds[run])
            state = env.reset()
            rewards: list[float] = []
            episodes.append(rewards)
            for _ in range(case.t_max):
                state, reward, done, _info = env.act(env.oracle_action())
                rewards.append(reward)
                if done:
                    break
        if isinstance(case.evaluator, RewardEvaluator):
            totals = [sum(r) for r in episodes]
            result = {"name": "reward evaluation", "detail": totals, "value": sum(totals) / len(episodes),
                      "error": None}
        else:
            assert isinstance(case.evaluator, StepCountEvaluator)
            steps = sum(len(r) for r in episodes)
            result = {"name": "step count evaluation (average survival steps)",
                      "detail": {"total_episodes": len(episodes), "total_steps": steps},
                      "value": steps / len(episodes), "error": None}
        results.append({"case_id": case.case_id, "result": result})
    return {"suite_id": suite.suite_id, "results": results}


def _expected() -> dict[str, Any]:
    return json.loads(EXPECTED.read_text(encoding="utf-8"))


def test_the_expected_file_is_the_reference_format_applied_to_the_example_suite() -> None:
    derived = reference_results(build_suite())
    assert json.loads(json.dumps(derived, indent=2)) == _expected()


def test_a_python_agent_gets_the_reference_json_exactly() -> None:
    data = build_suite().run(OracleAgent)
    assert json.dumps(data, indent=2) == json.dumps(_expected(), indent=2)


def test_the_chat_oracle_gets_the_reference_json_exactly() -> None:
    data = build_suite().run(chat_agent_factory("oracle"))
    assert data == _expected()
