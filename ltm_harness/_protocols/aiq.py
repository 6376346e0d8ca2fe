"""The AIQ-style runner: named tests with params, N trials each, played by chat agents; the AIQ score.

Every trial is one episode of a test, played in its own fresh session (isolated mode of the normal
runner), so the event logs, results and tables are the ones of any run. Active tests are played
`trials` times with seeds drawn from the run's seed; passive tests are answered once. Per test, as in
the AIQ reference, the raw scores of the trials are averaged first and that mean is normalised and clipped
(`trials_score`: one trial below the test's minimum does not count as 0 on its own); an errored trial counts
as the test's minimum (normalised 0, as errored tests count everywhere) and an unscored one not at all. The AIQ
score of an agent is the mean over tests. Outputs: `results/<run_name>/` (definitions, one folder per agent, `aiq.json`).
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Callable, Sequence, cast

from pydantic import BaseModel, ValidationError

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.progress import OnTurn
from ltm_harness._envs.catalog import TestSpec, describe_params_error, env_class, known_envs, parse_test_spec
from ltm_harness._envs.in_conversation import EnvDataset, EpisodeDefinition, InConversation, PassiveInConversation
from ltm_harness._envs.play import DEFAULT_TRIALS, trials_score
from ltm_harness._errors import ConfigError, option
from ltm_harness._results.models import RunSummary, TestResult
from ltm_harness._results.outputs import read_results
from ltm_harness._runner.claim import claim_folder
from ltm_harness._runner.config import RunConfig
from ltm_harness._runner.modes import Fresh, Resume
from ltm_harness._runner.prepare import PreparedRun, prepare
from ltm_harness._runner.run import run_all
from ltm_harness._store.files import write_model

AIQ_SPAN = 4000  # the span the definitions are made for (waits on tokens are not honoured when isolated)


class AIQTestScore(BaseModel):
    test: str
    kind: str
    trials: int
    score: float  # the trials' mean raw score, normalised and clipped (trials_score)
    std: float
    errored: int


class AIQAgentScore(BaseModel):
    agent: str
    aiq: float  # mean over tests of their scores
    tests: list[AIQTestScore]


class AIQReport(BaseModel):
    run_name: str
    seed: int
    trials: int
    tests: list[str]
    agents: list[AIQAgentScore]
    errors: dict[str, str] = {}  # agent -> why it did not finish


def default_tests() -> list[TestSpec]:
    """Every built-in test, each sub-test of a test set on its own."""
    specs: list[TestSpec] = []
    for name in known_envs():
        subs = env_class(name).sub_tests
        if subs:
            specs.extend(TestSpec(name=name, params={"env_name": s}) for s in subs)
        else:
            specs.append(TestSpec(name=name))
    return specs


def dataset_name(spec: TestSpec) -> str:
    """The test's label, made safe for file names."""
    return re.sub(r"[^A-Za-z0-9_.,=()-]+", "_", spec.label)


def aiq_dataset_class(spec: TestSpec) -> type[EnvDataset]:
    """A dataset class playing `spec`: the environment's params plus the conversation args."""
    env_cls = env_class(spec.name)
    args = PassiveInConversation if env_cls.kind == "passive" else InConversation
    params = type(f"{env_cls.__name__}AIQArgs", (env_cls.Params, args), {"__module__": __name__})
    cls = type(f"AIQ_{env_cls.__name__}", (EnvDataset,), {
        "__module__": __name__, "name": dataset_name(spec), "env_test": spec.name, "Params": params,
        "description": f"AIQ test {spec.label}",
    })
    return cast(type[EnvDataset], cls)


def _datasets(tests: Sequence[TestSpec], trials: int, seed: int) -> list[tuple[DatasetInterface, int]]:
    built: list[tuple[DatasetInterface, int]] = []
    names: dict[str, str] = {}
    for spec in tests:
        name = dataset_name(spec)
        if name in names:
            raise ConfigError(f"tests {names[name]!r} and {spec.label!r} have the same name; give each test once")
        names[name] = spec.label
        cls = aiq_dataset_class(spec)
        try:
            dataset = cls(memory_span=AIQ_SPAN, seed=seed, **spec.params)
        except ValidationError as exc:
            raise ConfigError(describe_params_error(spec.name, exc)) from None
        built.append((dataset, trials if env_class(spec.name).kind == "active" else 1))
    return built


async def run_aiq(tests: Sequence[TestSpec | str] | None, agents: Sequence[str], *, trials: int = DEFAULT_TRIALS,
                  seed: int = 0, results_root: Path = Path("results"), run_name: str = "aiq", concurrency: int = 8,
                  on_turn: OnTurn | None = None, resume: bool = False,
                  overwrite: bool = False, on_note: Callable[[str], None] | None = None) -> AIQReport:
    """Play `tests` (specs such as "keydoor,env_name=6x6"; None: every built-in test) with every agent
    and return the AIQ report (also written to results/<run_name>/aiq.json). The run folder follows the rules of
    any run: a finished one is kept (the new run goes to `<name>-2`), an interrupted one is continued with `resume`
    or discarded with `overwrite`; `on_note` hears what was done with an existing folder. The report's `run_name` is
    the folder's name."""
    if trials < 1:
        raise ConfigError(f"{option('trials', trials)}: there must be at least 1 trial; give {option('trials', 1)} or "
                          "more")
    specs = [parse_test_spec(t) if isinstance(t, str) else t for t in tests] if tests else default_tests()
    datasets = _datasets(specs, trials, seed)
    from ltm_harness._runner.preflight import preflight

    checked = await preflight(RunConfig.model_validate({"datasets": {"datasets": []}}), list(agents))  # as `run` does
    claim = claim_folder(results_root, run_name, resume=resume, overwrite=overwrite)
    try:
        if on_note is not None:  # what was done with an existing folder, or found in it
            for note in [*checked, *claim.notes, *([claim.resuming] if claim.resuming else [])]:
                on_note(note)
        cfg = RunConfig.model_validate({
            "config": {"run_name": claim.run_name, "seed": seed, "isolated": True,
                       "isolated_concurrency": concurrency},
            "datasets": {"args": {"memory_span": AIQ_SPAN}, "datasets": [{"name": d.name} for d, _ in datasets]},
        })
        prepared = prepare(cfg, results_root, resume=resume, datasets=datasets)
        summary = await run_all(prepared, list(agents), on_turn=on_turn, mode=Resume() if resume else Fresh())
        report = _report(summary, specs, prepared, claim.run_name, seed, trials)
        write_model(prepared.folder.aiq_report, report)
    finally:
        claim.lock.release()
    return report


def _test_score(dataset: DatasetInterface, examples: Sequence[TestExample], results: list[TestResult]) -> float | None:
    """The test's score from its trials (None when no trial could be scored)."""
    assert isinstance(dataset, EnvDataset)
    by_id = {r.example_id: r for r in results}
    trials: list[tuple[float, float, float]] = []
    for example in examples:
        result = by_id.get(example.example_id)
        if result is None or result.status == "unscored":
            continue
        header = dataset.make_env(EpisodeDefinition.model_validate(example.extra)).header
        low, high = header.min_score, header.max_score
        if result.status == "errored":
            raw = low
        elif result.raw_score is not None:
            raw = result.raw_score
        else:  # a result written before raw scores were kept: its normalised score is all there is
            raw = low + result.normalized * (high - low)
        trials.append((raw, low, high))
    return trials_score(trials) if trials else None


def _report(summary: RunSummary, specs: list[TestSpec], prepared: PreparedRun, run_name: str, seed: int,
            trials: int) -> AIQReport:
    labels = {dataset_name(s): s for s in specs}
    agent_scores = []
    for agent in summary.agents:
        by_name = {d.dataset: d for d in agent.datasets}
        results = read_results(prepared.folder.agent(agent.agent))
        scores = []
        for dataset, n in prepared.datasets:
            d = by_name[dataset.name]
            spec = labels[dataset.name]
            mine = [r for r in results if r.dataset == dataset.name]
            score = _test_score(dataset, prepared.examples[dataset.name], mine)
            scores.append(AIQTestScore(test=spec.label, kind=env_class(spec.name).kind, trials=n,
                                       score=(d.score or 0.0) if score is None else score, std=d.std, errored=d.errored))
        agent_scores.append(AIQAgentScore(agent=agent.agent, aiq=statistics.fmean(s.score for s in scores), tests=scores))
    return AIQReport(run_name=run_name, seed=seed, trials=trials, tests=[s.label for s in specs], agents=agent_scores,
                     errors=summary.errors)
