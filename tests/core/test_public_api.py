"""The public API is what `ltm_harness`, `ltm_harness.envs`, `ltm_harness.aivle` and `ltm_harness.l2m` export, and nothing else is
public: these lists change only on purpose."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import ltm_harness

TOP = {
    "run", "run_async", "rescore", "rescore_async", "read_run", "RunOutput", "RunConfig", "TurnProgress",
    "import_answers", "import_answers_async", "ImportOutput",
    "Dataset", "DatasetInterface", "TestExample", "DynamicExample", "Wait", "spread_waits", "TestContext",
    "TestOutcome", "Heard", "Judge", "JudgeVerdict", "Headline", "Metric",
    "Agent", "AgentMessage", "Reply",
    "register_dataset", "register_agent", "register_env", "register_judge_prompt", "register_suite",
    "LTMError", "ConfigError", "DefinitionError", "AgentError", "LLMError", "RunFolderError",
}
ENVS = {
    "Action", "ActiveEnv", "Env", "EnvHeader", "EnvParams", "Example", "GradedAnswers", "InvalidAction",
    "Observation", "PassiveEnv", "Space", "StepResult", "parse_action", "parse_answers", "ENVIRONMENTS",
    "TestSpec", "env_class", "known_envs", "make_env", "parse_test_spec", "register_env",
    "EnvDataset", "InConversation", "PassiveInConversation", "run_aiq", "evaluate_policy", "aiq_score",
    "optimal_policy", "random_policy", "play_policy",
}
AIVLE = {
    "Agent", "ChatAgents", "chat_agent_factory", "EpisodeEvaluator", "EvaluationResult", "Evaluator",
    "RewardEvaluator", "StepCountEvaluator", "CaseResult", "SuiteResult", "TestSuite", "load_suite", "CaseFailure",
    "EnvDriver", "ReinforcementLearningTestCase", "TestCase", "Worker", "run_sync", "register_suite", "run_suite",
}
L2M = {
    "scenario_metrics", "l2metrics_metrics", "read_scenario", "compute_metrics", "compute_l2metrics",
    "load_l2metrics_settings", "ScenarioLog", "MetricsReport", "L2MetricsResult", "L2MetricsSettings",
}
PUBLIC_MODULES = {"ltm_harness", "ltm_harness.__main__", "ltm_harness.envs", "ltm_harness.aivle",
                  "ltm_harness.aivle.examples", "ltm_harness.testing", "ltm_harness.l2m"}


@pytest.mark.parametrize("module,names", [("ltm_harness", TOP), ("ltm_harness.envs", ENVS),
                                          ("ltm_harness.aivle", AIVLE), ("ltm_harness.l2m", L2M)])
def test_the_public_names_are_pinned_and_all_importable(module: str, names: set[str]) -> None:
    mod = importlib.import_module(module)
    assert set(mod.__all__) == names
    for name in names:
        assert getattr(mod, name) is not None


def test_every_other_module_is_private() -> None:
    root = Path(ltm_harness.__file__).parent
    found = {"ltm_harness"} | {info.name for info in pkgutil.walk_packages([str(root)], "ltm_harness.",
                                                                             onerror=lambda name: None)}
    public = {name for name in found if not any(part.startswith("_") for part in name.split(".")[1:])}
    assert public == PUBLIC_MODULES - {"ltm_harness.__main__"}


def test_the_errors_share_one_base_and_say_what_is_wrong_by_their_type() -> None:
    for error in (ltm_harness.ConfigError, ltm_harness.DefinitionError, ltm_harness.AgentError,
                  ltm_harness.LLMError, ltm_harness.RunFolderError):
        assert issubclass(error, ltm_harness.LTMError) and error is not ltm_harness.LTMError
    assert ltm_harness.Dataset is ltm_harness.DatasetInterface


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        ltm_harness.nothing  # noqa: B018


def test_what_on_turn_hears_and_what_run_takes_are_pinned() -> None:
    import dataclasses
    import inspect

    assert [f.name for f in dataclasses.fields(ltm_harness.TurnProgress)] == [
        "agent", "session", "turn", "tokens", "tests_done", "tests_total", "scored", "score_sum", "cost_usd",
        "failed_turns", "fraction", "ended"]
    assert ltm_harness.TurnProgress.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert list(inspect.signature(ltm_harness.run_async).parameters) == [
        "config", "agents", "datasets", "exclude", "limit", "results", "run_name", "resume", "overwrite",
        "retry_errored", "judge", "reference_prompts", "on_turn", "on_prepared", "source", "judge_batch", "no_cache",
        "on_judge_batch"]
