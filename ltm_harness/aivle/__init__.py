"""aiVLE-style grading: agents, evaluators, test cases and suites, with time limits that hold in any
thread and results that are always JSON (docs/environments.md).

    suite = TestSuite("my-suite", [ReinforcementLearningTestCase(...), ...])
    results = suite.run(create_agent)   # {"suite_id": ..., "results": [{"case_id", "result": {...}}]}
    results = suite.run(chat_agent_factory("retrieval"))   # a chat agent of the harness plays every case
"""

from ltm_harness._protocols.aivle.agent import Agent, ChatAgents, chat_agent_factory
from ltm_harness._protocols.aivle.run import run_suite
from ltm_harness._protocols.aivle.evaluator import EpisodeEvaluator, EvaluationResult, Evaluator, RewardEvaluator, StepCountEvaluator
from ltm_harness._protocols.aivle.catalog import load_suite, register_suite
from ltm_harness._protocols.aivle.suite import CaseResult, SuiteResult, TestSuite
from ltm_harness._protocols.aivle.testcase import EnvDriver, ReinforcementLearningTestCase, TestCase
from ltm_harness._protocols.aivle.worker import CaseFailure, Worker, run_sync

__all__ = [
    "Agent", "ChatAgents", "chat_agent_factory", "EpisodeEvaluator", "EvaluationResult", "Evaluator",
    "RewardEvaluator", "StepCountEvaluator", "CaseResult", "SuiteResult", "TestSuite", "load_suite", "CaseFailure",
    "EnvDriver", "ReinforcementLearningTestCase", "TestCase", "Worker", "run_sync", "register_suite", "run_suite",
]
