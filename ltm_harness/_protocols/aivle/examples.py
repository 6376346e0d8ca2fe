"""An example suite of the built-in text environments, runnable offline (public as ltm_harness.aivle.examples):

    python -m ltm_harness suite ltm_harness.aivle.examples:suite -a retrieval
    python -m ltm_harness suite ltm_harness.aivle.examples:suite -a oracle -a null

`suite` is built by `build_suite()`; a suite module may export either.
"""

from __future__ import annotations

from ltm_harness._protocols.aivle.evaluator import RewardEvaluator, StepCountEvaluator
from ltm_harness._protocols.aivle.suite import TestSuite
from ltm_harness._protocols.aivle.testcase import ReinforcementLearningTestCase
from ltm_harness._envs.catalog import make_env


def build_suite(time_limit: float = 120.0) -> TestSuite:
    """Three cases: a 3-armed bandit (mean reward), a 5x5 key-and-door room (mean steps) and the
    number-guessing game (mean reward), three seeded runs each."""
    return TestSuite("text-envs", [
        ReinforcementLearningTestCase(
            "bandit-3-arms", time_limit=time_limit, n_runs=3, agent_init={},
            env=make_env("bandit", probabilities=[0.2, 0.5, 0.8], horizon=10),
            evaluator=RewardEvaluator(), t_max=10, seeds=[1, 2, 3]),
        ReinforcementLearningTestCase(
            "keydoor-5x5", time_limit=time_limit, n_runs=3, agent_init={},
            env=make_env("keydoor", env_name="5x5"), evaluator=StepCountEvaluator(), t_max=25, seeds=[1, 2, 3]),
        ReinforcementLearningTestCase(
            "guess-1-100", time_limit=time_limit, n_runs=3, agent_init={},
            env=make_env("guess", low=1, high=100), evaluator=RewardEvaluator(), t_max=14, seeds=[1, 2, 3]),
    ])


suite = build_suite()
