"""The library API: run a benchmark, re-score a run, read a run folder. The command line goes through it too.

    import ltm_harness
    run = ltm_harness.run("default", agents=["retrieval", MyAgent], results="results")
    print(run.summary.agents[0].benchmark_score)
    run = ltm_harness.read_run("results/default")
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Coroutine, Sequence, TypeVar

from ltm_harness._errors import ConfigError, RunFolderError, option, option_name
from ltm_harness._agents.specs import AgentLike, check_agents
from ltm_harness._report.index import Written, refresh_index
from ltm_harness._results.models import AgentSummary, RunSummary, TestResult
from ltm_harness._results.outputs import check_finished_run, read_results, read_run_summary, read_summary
from ltm_harness._runner.claim import Claim, claim_folder
from ltm_harness._runner.config import RunConfig, Selection, load_config, resolve_config_path, select_datasets
from ltm_harness._runner.judge_batch import OnBatch, has_pending_batch, judge_in_batches, judged_in_batches
from ltm_harness._runner.modes import Fresh, Rescore, Resume, RunMode
from ltm_harness._runner.preflight import check_judge, preflight
from ltm_harness._runner.prepare import RESULTS_ROOT, PreparedRun, prepare
from ltm_harness._engine.progress import OnTurn
from ltm_harness._llm.batch import JudgeBatch
from ltm_harness._runner.run import run_all
from ltm_harness._store.eventlog import read_events
from ltm_harness._store.events import Event
from ltm_harness._store.files import read_run_file
from ltm_harness._store.layout import RunFolder

ConfigLike = RunConfig | str | Path | dict[str, Any]
T = TypeVar("T")


def run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coro)`, its result handed back from outside the main task. asyncio.run restores the Ctrl-C handler
    it installed by looking it up with `signal.getsignal`, which formats the handler, and with it the finished main
    task and the result it holds: for a run's output (its every result) that is ~15 ms of repr at the end of a run."""
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    asyncio.run(main())
    return box[0]


@dataclass
class RunOutput:
    """What a run left in its folder, typed: the run's summary, and each agent's summary, results and event logs."""

    path: Path
    summary: RunSummary
    warnings: list[str] = field(default_factory=list)  # said while the run was prepared (a run made now only)
    notes: list[str] = field(default_factory=list)  # what was done with an existing folder (a run made now only)

    @property
    def folder(self) -> RunFolder:
        return RunFolder(self.path)

    @property
    def agents(self) -> list[str]:
        return [a.agent for a in self.summary.agents]

    def agent_summary(self, agent: str) -> AgentSummary:
        return read_summary(self.folder.agent(agent))

    def results(self, agent: str) -> list[TestResult]:
        return read_results(self.folder.agent(agent))

    def events(self, agent: str) -> dict[str, list[Event]]:
        """The agent's event logs, by session (`main`, or one per test when isolated)."""
        return {sid: read_events(path) for sid, path in self.folder.agent(agent).session_logs().items()}


def read_run(path: str | Path) -> RunOutput:
    """The run in folder `path` (one that `run` wrote); a folder that is not a finished run is a RunFolderError."""
    folder = RunFolder(Path(path))
    check_finished_run(folder)
    return RunOutput(folder.path, read_run_summary(folder))


def load(config: ConfigLike) -> tuple[RunConfig, str]:
    """A config given as a RunConfig, a mapping, a YAML path or a shipped config's name, and where it came from."""
    if isinstance(config, RunConfig):
        return config.model_copy(deep=True), "config"
    if isinstance(config, dict):
        from ltm_harness._runner.config import describe_validation_error
        from pydantic import ValidationError

        try:
            return RunConfig.model_validate(config), "config"
        except ValidationError as exc:
            raise ConfigError(describe_validation_error("config", exc)) from None
    return load_config(config), str(resolve_config_path(str(config)))


async def run_async(config: ConfigLike = "default", agents: Sequence[AgentLike] | None = None, *,
                    datasets: Sequence[str] | str | None = None, exclude: Sequence[str] | str | None = None,
                    limit: int | None = None, results: str | Path = RESULTS_ROOT, run_name: str | None = None,
                    resume: bool = False, overwrite: bool = False, retry_errored: bool = False,
                    judge: str | None = None, reference_prompts: str | Path | None = None,
                    on_turn: OnTurn | None = None,
                    on_prepared: Callable[[PreparedRun, Claim], None] | None = None,
                    source: str | None = None, judge_batch: bool = False, no_cache: bool = False,
                    on_judge_batch: OnBatch | None = None) -> RunOutput:
    """Run a benchmark config against agents (specs such as "retrieval", "openai:gpt-4o-mini@8k"; default: the
    config's `agents`). `datasets` plays only these of the config's datasets, `exclude` leaves these out (names as a
    list or as "a,b"), `limit` plays at most that many examples of each; the selection is saved with the run, and
    resuming it takes the same one. A finished run in the folder is kept (the new run goes to `<name>-2`); an
    interrupted one is continued with `resume=True` or discarded with `overwrite=True`; `retry_errored=True` resumes
    and also does the errored tests of agents that finished again (each session replayed up to its first failed
    turn or errored test, then live), so that their results are those of a run in which they never failed.
    `reference_prompts` (a LongMemEval or BEAM checkout) judges the config's longmemeval (beam) datasets with the
    reference's own prompt texts, read from it (nothing in it is run). `on_turn` is called after every turn with a `TurnProgress`. `on_prepared` is called with the prepared run and
    its claim on the folder (with what was said about it) before any agent is called; `source` names where a config
    given as an object came from (its folder is where relative `dataset_dirs` start). `judge_batch` sends the
    judge's requests through the provider's Batch API once every agent has finished (half the price; the run waits
    for the batch, `on_judge_batch` hearing its progress; see docs/paid-runs.md); `no_cache` makes every judge
    request again instead of answering it from the judge cache."""
    if (resume or retry_errored) and overwrite:
        kept = "retry_errored" if retry_errored else "resume"
        raise ConfigError(f"{option(kept)} and {option('overwrite')} exclude each other ({option(kept)} keeps the run"
                          f"{' and does its errored tests again' if retry_errored else ''}, {option('overwrite')} "
                          "discards it); give one of them")
    selection = Selection.given(datasets, exclude, limit)
    resume = resume or retry_errored
    cfg, loaded_from = load(config)
    source = source or loaded_from
    if run_name:
        cfg.config.run_name = run_name
    if judge:
        cfg.config.judge.model = judge
    if reference_prompts is not None:
        use_reference_prompts(cfg, reference_prompts)
    select_datasets(cfg, selection, source)  # a name the config does not list is said before any folder is touched
    if judge_batch:
        needs_judge(cfg)
    chosen = list(agents or cfg.config.agents)
    check_agents(chosen)  # a wrong agent is said before any folder is touched
    checked = await preflight(cfg, chosen)  # and one that cannot answer at all (nothing listening, no key)
    root = Path(results)
    claim = claim_folder(root, cfg.config.run_name, resume=resume, overwrite=overwrite, retry_errored=retry_errored)
    claim.notes.extend(checked)
    try:
        cfg.config.run_name = claim.run_name
        prepared = prepare(cfg, root, source, resume=resume)
        if on_prepared is not None:
            on_prepared(prepared, claim)
    except BaseException:
        claim.give_up()
        raise
    index_warning = None
    written: Written | None = None  # the folder and the summary this run wrote there
    try:
        mode: RunMode = Resume(retry_errored) if resume else Fresh()
        judge_batch = judge_batch or resume and has_pending_batch(prepared.folder)  # as the run was started
        if judge_batch:
            judged_in_batches(prepared.folder)
        batch = JudgeBatch(read_cache=not no_cache) if judge_batch else None
        summary = await run_all(prepared, chosen, on_turn, mode=mode, batch=batch, use_cache=not no_cache)
        if not summary.errors and (batch is not None or has_pending_batch(prepared.folder)):
            summary = await judge_in_batches(prepared, [a.agent for a in summary.agents],
                                             None if resume else batch,  # resumed: agents kept had verdicts pending
                                             read_cache=not no_cache, more_batches=judge_batch,
                                             on_batch=on_judge_batch) or summary
        if isinstance(mode, Fresh):  # every summary in it made now from results held here (a resumed one may keep some)
            written = Written(prepared.run_dir, summary)
    finally:
        claim.lock.release()
        index_warning = refresh_index(root, written)  # results/index.html lists the run, finished or not
    protocol = [w for a in summary.agents if a.questions is not None and (w := a.questions.warning(a.agent))]
    spend = prepared.ledger.notes if prepared.ledger is not None else []  # unpriced models, unbounded replies
    return RunOutput(prepared.run_dir, summary, list(prepared.warnings) + protocol + spend
                     + ([index_warning] if index_warning else []), claim.notes)


def run(config: ConfigLike = "default", agents: Sequence[AgentLike] | None = None, **options: Any) -> RunOutput:
    """`run_async` from synchronous code (not from inside a running event loop: use `await run_async(...)` there)."""
    return run_to_end(run_async(config, agents, **options))


def trusted_dataset_code(cfg: RunConfig, saved_at: Path, config: str | Path | None = None,
                         dataset_dirs: Sequence[str | Path] = ()) -> str:
    """Make `cfg` (read from a results folder) name only dataset code the user chose: never the folder's own
    `dataset_dirs` or file/module specs, which a results folder received from someone else could point anywhere.
    Dataset code comes from the built-ins and installed packages, plus the `dataset_dirs` and specs of the user's
    `config`, plus `dataset_dirs` given here. Returns one line saying where dataset code came from."""
    from ltm_harness._registry.loading import is_object_spec
    from ltm_harness._runner.prepare import config_base, dataset_spec

    folders: list[Path] = []
    allowed: set[str] = set()
    said = ["built-in datasets and installed packages"]
    if config is not None:
        user_path = resolve_config_path(str(config))
        user = load_config(user_path)
        base = config_base(str(user_path))
        folders += [(base / d).resolve() for d in user.config.dataset_dirs]
        allowed = {dataset_spec(e.name, base) for e in user.datasets.datasets}
        said.append(f"the config {user_path}")
    for d in dataset_dirs:
        folder = Path(d).resolve()
        if not folder.is_dir():
            raise ConfigError(f"{option_name('dataset_dirs')} {d}: no such folder; give a folder of dataset code")
        folders.append(folder)
    if dataset_dirs:
        said.append(f"{option_name('dataset_dirs')} " + " ".join(str(d) for d in dataset_dirs))
    for i, entry in enumerate(cfg.datasets.datasets):
        if is_object_spec(entry.name) and entry.name not in allowed:
            raise ConfigError(f"{saved_at}: datasets.datasets[{i}].name: {entry.name!r} is code named by the results "
                              f"folder, which is never run from there; give the config that names it "
                              f"({option_name('config')})")
    cfg.config.dataset_dirs = [str(f) for f in folders]
    return "dataset code from: " + ", ".join(said)


async def rescore_async(path: str | Path, *, judge: str | None = None, no_judge: bool = False,
                        reference_prompts: str | Path | None = None, on_turn: OnTurn | None = None,
                        config: str | Path | None = None, dataset_dirs: Sequence[str | Path] = (),
                        max_cost: float | None = None, judge_batch: bool = False, no_cache: bool = False,
                        on_judge_batch: OnBatch | None = None) -> RunOutput:
    """Score a finished run again from its event logs, without calling its agents: by the datasets' rules, or with
    the LLM judge `judge` (default: the run's own judge, unless `no_judge`); `reference_prompts` as for `run`.
    `max_cost`: the most (USD) the re-scoring may spend on the judge; reaching it raises `BudgetReached` and leaves
    the run as it was (the verdicts paid for stay in the judge's cache, so a re-scoring with more pays nothing twice).
    The judge's answers come from the judge cache (`no_cache`: asked again); `judge_batch` as for `run`, and a judge
    batch the run was waiting for when it was stopped is collected first in any case (never submitted again).

    Dataset code is never taken from the run folder (its saved `dataset_dirs` and file specs are ignored): it comes
    from the built-ins, installed packages, the user's `config` (its `dataset_dirs` and specs) and `dataset_dirs`;
    the output's `notes` say which."""
    output = read_run(path)
    folder = output.folder
    cfg = read_run_file(folder.run_config, RunConfig)
    code_from = trusted_dataset_code(cfg, folder.run_config, config, dataset_dirs)
    for section in (cfg.config.openai, cfg.config.judge, cfg.config.test_llm):
        if section.api_key is not None and set(section.api_key.get_secret_value()) <= {"*"}:
            section.api_key = None  # saved masked; the key comes from the environment now
    cfg.config.max_cost = max_cost  # a re-scoring's own budget, never the run's
    if no_judge:
        cfg.config.judge.model = None
    elif judge:
        cfg.config.judge.model = judge
    if reference_prompts is not None:
        use_reference_prompts(cfg, reference_prompts)
    if judge_batch:
        needs_judge(cfg)
    agents = output.agents
    if not agents:
        raise RunFolderError(f"{folder.path}: no agent finished in this run, so there is nothing to re-score")
    await check_judge(cfg)  # a judge that cannot answer is said now, before the folder is touched
    with folder.lock():
        prepared = prepare(cfg, folder.path.parent, str(folder.run_config), existing_only=True, folder=folder)
        waiting = judge_batch or has_pending_batch(folder)
        summary = await judge_in_batches(prepared, agents, None, read_cache=not no_cache, more_batches=judge_batch,
                                         on_batch=on_judge_batch) if waiting else None
        if summary is None:
            summary = await run_all(prepared, agents, on_turn, mode=Rescore(), use_cache=not no_cache)
    index_warning = refresh_index(folder.path.parent)
    return RunOutput(folder.path, summary, [index_warning] if index_warning else [], notes=[code_from])


def needs_judge(cfg: RunConfig) -> None:
    """What `judge_batch` needs, said before anything runs: a judge, and the judge cache its answers go into."""
    if not cfg.config.judge.model:
        raise ConfigError(f"{option('judge_batch')} sends the judge's requests as a batch, but there is no judge; give "
                          f"{option('judge', 'MODEL')} (or config.judge.model)")
    if not cfg.config.llm.cache:
        raise ConfigError(f"{option('judge_batch')} keeps the batch's answers in the judge cache, which "
                          "config.llm.cache turns off; set llm.cache: true")


def use_reference_prompts(cfg: RunConfig, checkout: str | Path) -> None:
    """Judge the config's longmemeval datasets with the reference's own prompt texts, read (parsed, never run) from
    a LongMemEval checkout (or its beam datasets, from a BEAM checkout; its memoryagentbench datasets' templates,
    from a MemoryAgentBench checkout); checked now, so a wrong folder is said
    before anything runs."""
    from ltm_harness._interop.beam import reference_prompts as beam
    from ltm_harness._interop.longmemeval.reference_prompts import load_reference_prompts

    path = Path(checkout).expanduser().resolve()
    from ltm_harness._interop.mab import reference_prompts as mab

    if mab.is_mab_checkout(path):  # a MemoryAgentBench checkout: its wrappers, query templates and LME judge prompts
        mab.load_reference_templates(path)
        if not cfg.datasets.set_for("memoryagentbench", "reference_prompts", str(path)):
            raise ConfigError(f"{option('reference_prompts', str(checkout))}: the run has no memoryagentbench "
                              "dataset, whose templates these are; leave it out")
        return
    if beam.is_beam_checkout(path):  # a BEAM checkout: its rubric and alignment prompts, for the beam datasets
        beam.load_reference_prompts(path)
        if not cfg.datasets.set_for("beam", "reference_prompts", str(path)):
            raise ConfigError(f"{option('reference_prompts', str(checkout))}: the run has no beam dataset, whose "
                              "judge these prompts are for; leave it out")
        return
    load_reference_prompts(path)
    if not cfg.datasets.set_for("longmemeval", "reference_prompts", str(path)):
        raise ConfigError(f"{option('reference_prompts', str(checkout))}: the run has no longmemeval dataset, whose "
                          "judge these prompts are for; leave it out")


def rescore(path: str | Path, **options: Any) -> RunOutput:
    """`rescore_async` from synchronous code."""
    return run_to_end(rescore_async(path, **options))


@dataclass
class ImportOutput(RunOutput):
    """An imported answers file's run, and how its answers met the benchmark's questions."""

    match: Any = None  # MatchReport (ltm_harness._interop.answers.matching)


async def import_answers_async(benchmark: str, file: str | Path, *, name: str, results: str | Path = RESULTS_ROOT,
                               run_name: str | None = None, data_file: str | Path | None = None,
                               examples: int | None = None, judge: str | None = None, limit: int | None = None,
                               resume: bool = False, overwrite: bool = False, on_turn: OnTurn | None = None,
                               on_claimed: Callable[[str], None] | None = None,
                               max_cost: float | None = None, judge_batch: bool = False, no_cache: bool = False,
                               on_judge_batch: OnBatch | None = None) -> ImportOutput:
    """Import another tool's published answers to a benchmark (`locomo`, `longmemeval`, a LongMemEval config such as
    `longmemeval-s`, or a config naming one of them) as a run of its own, agent `name`: the benchmark is played through
    the engine with an agent answering each question from the file, and scored by the reference's rules (and `judge`
    when given). Answers are matched to the questions, never guessed; the output's `match` counts and lists the
    unmatched and duplicated ones, and keeps the publisher's own scores. `data_file` and `examples` (conversations or
    questions to play) are set as `run`'s `args.data_file` and --examples are, so a live run of the same config plays
    the same questions (and `compare` takes both). An interrupted import is continued with `resume=True` (the answers
    played are replayed from its event log) or discarded with `overwrite=True`, as `run`'s; `on_claimed` is called
    with the run's name once its folder is claimed. `max_cost` bounds what the judge may spend (USD; reaching it
    raises `BudgetReached`, and `resume=True` with a higher one goes on). See docs/commands.md (import-answers)."""
    from ltm_harness._interop.answers.run import answers_config, answers_on_prepared, fit_config, write_match_report

    cfg, kind, source = answers_config(benchmark, data_file)
    if examples is not None:
        cfg.datasets.set_for_all("dataset_examples", examples)
    plan = answers_on_prepared(Path(file), kind, name)  # reads the file now: a bad file is said before any folder
    fit_config(cfg, plan)  # MemoryAgentBench: the sources its output file answers
    cfg.config.run_name = run_name or f"{cfg.config.run_name}-{name}"
    cfg.config.max_cost = max_cost

    def prepared(run: PreparedRun, claim: Claim) -> None:
        if on_claimed is not None:
            on_claimed(claim.run_name)
        plan.on_prepared(run, claim)

    out = await run_async(cfg, [(name, plan.make_agent)], results=results, judge=judge, limit=limit, resume=resume,
                          overwrite=overwrite, on_turn=on_turn, on_prepared=prepared, source=source,
                          judge_batch=judge_batch, no_cache=no_cache, on_judge_batch=on_judge_batch)
    match = plan.report()
    write_match_report(RunFolder(out.path), name, match)
    return ImportOutput(out.path, out.summary, out.warnings, out.notes, match=match)


def import_answers(benchmark: str, file: str | Path, **options: Any) -> ImportOutput:
    """`import_answers_async` from synchronous code."""
    return run_to_end(import_answers_async(benchmark, file, **options))
