"""ltm-harness: tests the long-term memory of conversational LLM agents.

Run a benchmark and read its results::

    import ltm_harness
    out = ltm_harness.run("default", agents=["retrieval", ("mine", MyAgent)], results="results")
    print(out.summary.agents[0].benchmark_score)
    again = ltm_harness.read_run("results/default")

Write an agent (subclass `Agent`, answer `reply`), a dataset (subclass `Dataset`, make `TestExample`s, score them),
and make them known by name with the `register_*` functions or an entry point of your package. Everything this
module exports is the public API (pinned by a test); the `ltm_harness.envs` and `ltm_harness.aivle` packages export
what environments and aiVLE-style suites are written with. Every other module is private.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import DynamicExample, TestExample, Wait, spread_waits
from ltm_harness._engine.program import Heard, TestContext, TestOutcome
from ltm_harness._engine.progress import TurnProgress
from ltm_harness._errors import AgentError, ConfigError, DefinitionError, LLMError, LTMError, RunFolderError
from ltm_harness._scoring.headline import Headline, Metric
from ltm_harness._scoring.verdict import Judge, JudgeVerdict

if TYPE_CHECKING:  # imported when first used: `import ltm_harness` stays light for the command line
    from ltm_harness._agents.specs import register_agent
    from ltm_harness._api import RunOutput, read_run, rescore, rescore_async, run, run_async
    from ltm_harness._authoring.catalog import register_dataset
    from ltm_harness._envs.catalog import register_env
    from ltm_harness._llm.judge import register_judge_prompt
    from ltm_harness._protocols.aivle.catalog import register_suite
    from ltm_harness._runner.config import RunConfig

Dataset = DatasetInterface

_LAZY = {
    "run": "ltm_harness._api", "run_async": "ltm_harness._api", "rescore": "ltm_harness._api",
    "rescore_async": "ltm_harness._api", "read_run": "ltm_harness._api", "RunOutput": "ltm_harness._api",
    "RunConfig": "ltm_harness._runner.config", "register_agent": "ltm_harness._agents.specs",
    "register_dataset": "ltm_harness._authoring.catalog", "register_env": "ltm_harness._envs.catalog",
    "register_judge_prompt": "ltm_harness._llm.judge", "register_suite": "ltm_harness._protocols.aivle.catalog",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ltm_harness' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    # running and reading runs
    "run", "run_async", "rescore", "rescore_async", "read_run", "RunOutput", "RunConfig", "TurnProgress",
    # writing tests
    "Dataset", "DatasetInterface", "TestExample", "DynamicExample", "Wait", "spread_waits", "TestContext",
    "TestOutcome", "Heard", "Judge", "JudgeVerdict", "Headline", "Metric",
    # writing agents
    "Agent", "AgentMessage", "Reply",
    # making things known by name
    "register_dataset", "register_agent", "register_env", "register_judge_prompt", "register_suite",
    # errors
    "LTMError", "ConfigError", "DefinitionError", "AgentError", "LLMError", "RunFolderError",
]
__version__ = "0.2.0"
