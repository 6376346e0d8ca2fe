"""A suite run: every chat agent plays the suite's cases, each case one conversation recorded in its own event
log, the agent's results written in the aiVLE schema; resumable like any run.

    results/suites/<suite-id>/<agent>.json                the agent's results (aiVLE JSON)
    results/suites/<suite-id>/<agent>/events/<case>.jsonl  each case's conversation
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ltm_harness._agents.specs import AgentLike, agent_choices
from ltm_harness._errors import AgentError
from ltm_harness._protocols.aivle.agent import ChatAgents
from ltm_harness._protocols.aivle.evaluator import EvaluationResult
from ltm_harness._protocols.aivle.suite import SuiteResult, TestSuite
from ltm_harness._protocols.aivle.testcase import TestCase
from ltm_harness._runner.claim import claim_folder
from ltm_harness._runner.modes import AgentPlan, Fresh, Resume, RunMode
from ltm_harness._store.files import read_run_file, write_model, writing
from ltm_harness._store.layout import RunFolder, suites_root


@dataclass
class SuiteRun:
    folder: RunFolder
    results: dict[str, SuiteResult]  # agent -> its results
    notes: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # agents that had finished before (resume): read back
    failed: dict[str, str] = field(default_factory=dict)  # agent -> why its run stopped (resumable; no results)


async def run_suite(suite: TestSuite, specs: Sequence[AgentLike], results_root: Path, *, resume: bool = False,
                    overwrite: bool = False,
                    on_case: Callable[[str, TestCase, EvaluationResult], None] | None = None) -> SuiteRun:
    """Run `suite` with every chat agent in `specs` (specs, NAME=SPEC, or agents as the library takes them);
    results under results_root/suites/<suite-id>/."""
    choices = agent_choices(specs)
    factories = {c.name: c.factory(None, {}) for c in choices}  # every spec checked before anything runs
    from ltm_harness._runner.config import RunConfig
    from ltm_harness._runner.preflight import preflight

    checked = await preflight(RunConfig.model_validate({"datasets": {"datasets": []}}), list(specs))  # as `run` does
    root = suites_root(results_root)
    probe = RunFolder.named(root, suite.suite_id)
    claim = claim_folder(root, suite.suite_id, resume=resume, overwrite=overwrite,
                         finished=lambda agent: probe.suite_results(agent.name).is_file())
    folder = claim.folder
    mode: RunMode = Resume() if resume else Fresh()
    run = SuiteRun(folder, {}, [*checked, *claim.notes])
    try:
        for spec in factories:
            path = folder.suite_results(spec)
            if resume and path.is_file():
                run.results[spec] = read_run_file(path, SuiteResult)
                run.kept.append(spec)
                continue
            with writing(path):
                path.unlink(missing_ok=True)
            plan = mode.agent(folder.agent(spec), main_session=False)
            assert isinstance(plan, AgentPlan), "a suite's agent folder holds no results.json, so it is never finished"
            chat = ChatAgents(spec, factories[spec], plan=plan)

            def case_done(case: TestCase, result: EvaluationResult, spec: str = spec) -> None:
                if on_case is not None:
                    on_case(spec, case, result)

            try:
                outcome = await suite.run_async(chat, case_done)
            except AgentError as exc:  # e.g. an agent that cannot rebuild its memory: the others still play
                run.failed[spec] = str(exc)
                continue
            plan.check_used_up()
            write_model(path, outcome)
            run.results[spec] = outcome
    finally:
        claim.lock.release()
    return run
