"""aiVLE-style grading: agents, evaluators, test cases and suites, with time limits that hold in any
thread and results that are always JSON (docs/environments.md).

    suite = TestSuite("my-suite", [ReinforcementLearningTestCase(...), ...])
    results = suite.run(create_agent)   # {"suite_id": ..., "results": [{"case_id", "result": {...}}]}
"""

from ltm_harness._protocols.aivle.agent import Agent, ChatAgents, chat_agent_factory
from ltm_harness._protocols.aivle.evaluator import EpisodeEvaluator, EvaluationResult, Evaluator, RewardEvaluator, StepCountEvaluator
from ltm_harness._protocols.aivle.suite import CaseResult, SuiteResult, TestSuite, load_suite
from ltm_harness._protocols.aivle.testcase import CaseFailure, EnvDriver, ReinforcementLearningTestCase, TestCase
from ltm_harness._protocols.aivle.worker import Worker, run_sync

__all__ = [
    "Agent", "ChatAgents", "chat_agent_factory", "EpisodeEvaluator", "EvaluationResult", "Evaluator",
    "RewardEvaluator", "StepCountEvaluator", "CaseResult", "SuiteResult", "TestSuite", "load_suite", "CaseFailure",
    "EnvDriver", "ReinforcementLearningTestCase", "TestCase", "Worker", "run_sync",
]
