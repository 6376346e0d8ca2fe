"""A whole run: datasets -> definitions -> one session per agent (concurrently) -> results on disk."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import TypeAdapter, ValidationError

from ltm_harness._agents.specs import Agent, agent_factory, display_spec
from ltm_harness._runner.config import RunConfig
from ltm_harness._authoring.dataset import DatasetInterface, as_program
from ltm_harness._results.derive import ResultsBuilder
from ltm_harness._authoring.definitions import definitions_match, load_or_generate
from ltm_harness._errors import AgentError, ConfigError, LTMError, RunFolderError
from ltm_harness._store.events import EventLog
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.filler import FillerGenerator
from ltm_harness._store.formats import check_summary_format, write_atomic
from ltm_harness._registry.datasets import discover, get_dataset_class
from ltm_harness._results.models import AgentSummary, RunSummary, TestResult, summarize_agent
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._engine.session_llm import SessionLLM, TestLLM
from ltm_harness._llm.judge import LLMJudge, load_judge_prompt
from ltm_harness._store.records import UsageTotals
from ltm_harness._llm.runtime import LLMRuntime
from ltm_harness._agents.replay import SessionRecord, TurnReplay
from ltm_harness._engine.session import Session, SessionSettings, TurnPolicy
from ltm_harness._scoring.verdict import Judge
from ltm_harness._engine.tokens import get_tokenizer

RESULTS_ROOT = Path("results")


def slug(text: str) -> str:
    """A safe folder name: no separators, no leading dots (so never `.` or `..`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).lstrip("._").rstrip("_") or "run"


@dataclass
class PreparedRun:
    config: RunConfig
    datasets: list[tuple[DatasetInterface, int]]
    examples: dict[str, list[TestExample]]
    run_dir: Path
    reused_definitions: bool = False
    warnings: list[str] = field(default_factory=list)

    def interleaved(self) -> list[tuple[DatasetInterface, TestExample]]:
        """Tests in start order: the first example of every dataset, then the second, and so on."""
        out = []
        depth = max((len(v) for v in self.examples.values()), default=0)
        for i in range(depth):
            for dataset, _ in self.datasets:
                exs = self.examples[dataset.name]
                if i < len(exs):
                    out.append((dataset, exs[i]))
        return out


def dataset_dirs(cfg: RunConfig, source: str) -> list[Path]:
    """`config.dataset_dirs`, relative paths taken from the config file's folder."""
    base = Path(source).parent if Path(source).is_file() else Path.cwd()
    dirs = []
    for i, d in enumerate(cfg.config.dataset_dirs):
        path = (base / d).resolve()
        if not path.is_dir():
            raise ConfigError(f"{source}: config.dataset_dirs[{i}]: folder {path} does not exist; fix the path "
                            "(relative paths start at the config file's folder)")
        dirs.append(path)
    return dirs


def build_datasets(cfg: RunConfig, source: str = "config",
                   registry: dict[str, type[DatasetInterface]] | None = None) -> list[tuple[DatasetInterface, int]]:
    if registry is None:
        registry = discover(dataset_dirs(cfg, source))
    built = []
    seen = set()
    for i, entry in enumerate(cfg.datasets.datasets):
        try:
            cls = get_dataset_class(entry.name, registry)
        except LTMError as exc:
            raise ConfigError(f"{source}: datasets.datasets[{i}].name: {exc}") from None
        if entry.name in seen:
            raise ConfigError(f"{source}: datasets.datasets[{i}]: dataset {entry.name!r} is listed twice; list it once")
        seen.add(entry.name)
        try:
            common = entry.common(cfg.datasets.args)
            dataset = cls(memory_span=common.memory_span, seed=cfg.config.seed, **entry.params)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            fix = "remove it or fix its spelling" if err["type"] == "extra_forbidden" else "fix the value"
            raise ConfigError(f"{source}: datasets.datasets[{i}].args.{where}: {err['msg']}; {fix}") from None
        built.append((dataset, common.dataset_examples))
    if not built:
        raise ConfigError(f"{source}: datasets.datasets is empty; list at least one dataset")
    return built


def _warnings(cfg: RunConfig, datasets: list[tuple[DatasetInterface, int]], source: str, known: set[str]) -> list[str]:
    out = []
    for i, pair in enumerate(cfg.config.incompatibilities):
        for name in pair:
            if name not in known:
                out.append(f"{source}: config.incompatibilities[{i}]: {name!r} is not a known dataset (a typo?)")
    for dataset, _ in datasets:
        if dataset.memory_span < 1000:
            out.append(f"{dataset.name}: a memory span of {dataset.memory_span} tokens is below 1000; "
                       "information gaps may miss their targets by more than 10%")
    return out


RUN_CONFIG = "run_config.json"  # the config a run was made with (secrets masked), for rescore


# Settings that change how a run is carried out but not what is said or scored: a run may be resumed with other values.
OPERATIONAL = {"agents", "watchdog", "turns", "llm", "http", "debug", "isolated_concurrency"}


def _config_difference(saved: dict[str, Any], now: dict[str, Any], where: str = "") -> str | None:
    """The first setting (dotted path) that differs between two config dumps, ignoring operational ones."""
    for key in sorted(set(saved) | set(now)):
        if where == "config" and key in OPERATIONAL:
            continue
        path = f"{where}.{key}" if where else key
        a, b = saved.get(key), now.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found = _config_difference(a, b, path)
            if found:
                return found
        elif a != b:
            return path
    return None


def _saved_config(cfg: RunConfig, dirs: list[Path]) -> RunConfig:
    saved = cfg.model_copy(deep=True)
    saved.config.dataset_dirs = [str(d) for d in dirs]  # absolute: the saved config has no folder of its own
    return saved


def prepare(cfg: RunConfig, results_root: Path = RESULTS_ROOT, source: str = "config",
            existing_only: bool = False, resume: bool = False) -> PreparedRun:
    """Datasets and their definitions for `cfg`. With `existing_only`, the run folder's definitions must
    be reused as they are (re-scoring): anything that would regenerate them is an error instead. With `resume`,
    the run folder must hold a run made with the same config (operational settings aside) and definitions."""
    dirs = dataset_dirs(cfg, source)
    registry = discover(dirs)
    datasets = build_datasets(cfg, source, registry)
    run_dir = results_root / slug(cfg.config.run_name)
    saved = _saved_config(cfg, dirs)
    resuming = resume and _check_resumable(run_dir, saved)
    if (existing_only or resuming) and not definitions_match(run_dir / "definitions", datasets):
        raise RunFolderError(f"{run_dir / 'definitions'}: the datasets' code or settings changed since the run, so its "
                        f"answers cannot be {'resumed' if resuming else 're-scored'} with these definitions; "
                        f"run it again {'with --overwrite' if resuming else 'instead'}")
    examples, reused = load_or_generate(run_dir / "definitions", datasets)
    if not reused:
        clear_run(run_dir)  # results of other definitions no longer belong with these
    if not existing_only:
        write_atomic(run_dir / RUN_CONFIG, saved.model_dump_json(indent=2) + "\n")
    return PreparedRun(cfg, datasets, examples, run_dir, reused, _warnings(cfg, datasets, source, set(registry)))


def _check_resumable(run_dir: Path, saved: RunConfig) -> bool:
    """Whether the run folder holds agent outputs to resume (False: nothing ran yet, it simply starts)."""
    if not run_dir.is_dir():
        return False
    has_outputs = any(run_folder_state(run_dir))
    path = run_dir / RUN_CONFIG
    if not path.is_file():
        if has_outputs:
            raise RunFolderError(f"{path}: missing, so the run cannot be resumed; run it again with --overwrite")
        return False
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise RunFolderError(f"{path}: cannot be read, so the run cannot be resumed; run it again with --overwrite") from None
    differs = _config_difference(before if isinstance(before, dict) else {}, json.loads(saved.model_dump_json()))
    if differs:
        raise ConfigError(f"{path}: {differs} differs from the run being resumed; give the same config and options "
                        "as when it started (-c, --span, --examples, --seed ...), or run it again with --overwrite")
    return has_outputs


def run_folder_state(run_dir: Path) -> tuple[list[str], list[str]]:
    """The agent folders of a run folder: those that finished and those that were interrupted (or stopped early
    by the watchdog or an agent that was down)."""
    finished, interrupted = [], []
    for child in sorted(run_dir.iterdir()) if run_dir.is_dir() else []:
        if not child.is_dir() or child.name == "definitions" or child.name.endswith(".rescoring"):
            continue
        if finished_agent(child) is not None:
            finished.append(child.name)
        elif (child / "events.jsonl").is_file() or (child / "events").is_dir():
            interrupted.append(child.name)
    return finished, interrupted


def free_run_name(results_root: Path, name: str) -> str:
    """`name`, or `name-2`, `name-3`, ... : the first whose folder holds no agent outputs."""
    candidate, n = name, 1
    while any(run_folder_state(results_root / slug(candidate))):
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def clear_run(run_dir: Path) -> None:
    """Remove agent outputs and the summary of earlier runs in this folder, never anything else: the definitions
    stay (reused if they match). Used by --overwrite, and when the definitions are regenerated."""
    (run_dir / "summary.json").unlink(missing_ok=True)
    (run_dir / RUN_CONFIG).unlink(missing_ok=True)
    for report in run_dir.glob("report.*") if run_dir.is_dir() else []:  # the report of those results
        report.unlink()
    for child in run_dir.iterdir() if run_dir.is_dir() else []:
        if child.is_dir() and child.name != "definitions" and any(
                (child / f).exists() for f in ("events.jsonl", "events", "results.json", "summary.json")):
            shutil.rmtree(child)


@dataclass
class AgentRun:
    spec: str
    results: list[TestResult]
    summary: AgentSummary
    error: str | None = None  # why its session stopped early (watchdog, agent down), if it did


@dataclass
class RunLLM:
    """The LLM side of a run: shared client runtime, the judge and the test LLM (each optional)."""

    runtime: LLMRuntime
    judge: Judge | None = None
    test_llm: TestLLM | None = None

    async def close(self) -> None:
        await self.runtime.close()


def build_run_llm(prepared: PreparedRun, judge_model: str | None = None) -> RunLLM:
    """The run's LLM runtime, judge (config.judge or --judge) and test LLM, checked before anything runs."""
    cfg = prepared.config.config
    cache_dir = Path(cfg.llm.cache_dir) if cfg.llm.cache_dir else prepared.run_dir.parent / ".llm-cache"
    runtime = LLMRuntime(cfg.llm, cache_dir, cfg.tokenizer)
    judge: Judge | None = None
    model = judge_model or cfg.judge.model
    if model:
        base_url, key = cfg.judge.endpoint_args("judge", cfg.openai)
        endpoint = resolve_endpoint(f"the judge ({model})", base_url, key)
        judge = LLMJudge(runtime.client(endpoint), model, load_judge_prompt(cfg.judge.prompt), cfg.judge.temperature,
                         use_cache=cfg.llm.cache)
    test_llm = None
    if cfg.test_llm.model:
        base_url, key = cfg.test_llm.endpoint_args("test_llm", cfg.openai)
        endpoint = resolve_endpoint(f"the test LLM ({cfg.test_llm.model})", base_url, key)
        test_llm = TestLLM(runtime.client(endpoint), cfg.test_llm.model)
    return RunLLM(runtime, judge, test_llm)


def _events_files(agent_dir: Path) -> dict[str, Path]:
    """Session id -> its event log, in an agent folder of a finished run."""
    if (agent_dir / "events.jsonl").is_file():
        return {"main": agent_dir / "events.jsonl"}
    return {p.stem: p for p in sorted((agent_dir / "events").glob("*.jsonl"))}


def watchdog_reason(seconds: float) -> str:
    return (f"the run's watchdog stopped it after {seconds:g} s (config.watchdog); raise it and continue "
            "with run --resume")


def _write_results(out_dir: Path, results: list[TestResult], summary: AgentSummary) -> None:
    write_atomic(out_dir / "results.json", "[\n" + ",\n".join(r.model_dump_json() for r in results) + "\n]\n")
    write_atomic(out_dir / "summary.json", summary.model_dump_json(indent=2) + "\n")


def finished_agent(agent_dir: Path) -> AgentRun | None:
    """The outputs of an agent that finished in this run folder (None if it did not)."""
    summary_path, results_path = agent_dir / "summary.json", agent_dir / "results.json"
    if not (summary_path.is_file() and results_path.is_file()):
        return None
    try:
        data = json.loads(summary_path.read_text(encoding="utf-8"))
        check_summary_format(summary_path, data)
        summary = AgentSummary.model_validate(data)
        results = TypeAdapter(list[TestResult]).validate_json(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # damaged: the agent is resumed from its events instead
    if summary.error:
        return None  # stopped early (watchdog, agent down): resumed from where it stopped
    return AgentRun(summary.agent, results, summary)


async def run_agent(prepared: PreparedRun, spec: str, make: Callable[[], Agent],
                    on_turn: Callable[[Session], None] | None = None, llm: RunLLM | None = None,
                    replay: bool = False, resume: bool = False, deadline: float | None = None) -> AgentRun:
    """One agent's sessions.

    With `replay` (re-scoring), the agent's recorded replies (and the test programs' recorded LLM calls) are
    played back from the run folder and only the scoring is done again. With `resume`, an agent that finished
    is read back from its folder, and an interrupted one is replayed from its event logs up to where it stopped,
    then goes on live (see ltm_harness/replay.py). `deadline` (event-loop time) is the run's watchdog.
    """
    cfg = prepared.config.config
    tokenizer = get_tokenizer(cfg.tokenizer)
    agent_dir = prepared.run_dir / slug(spec)
    records: dict[str, SessionRecord] = {}
    if resume:
        done = finished_agent(agent_dir)
        if done is not None:
            return done
        if agent_dir.exists() and cfg.isolated != (agent_dir / "events").is_dir() and any(_events_files(agent_dir)):
            raise ConfigError(f"{agent_dir}: the run was made with isolated: {not cfg.isolated}; resume it with the same config")
        records = {sid: SessionRecord(path, resume=True) for sid, path in _events_files(agent_dir).items()}
    if replay:
        records = {sid: SessionRecord(path) for sid, path in _events_files(agent_dir).items()}
        if not records:
            raise RunFolderError(f"{agent_dir}: no event log to re-score; run the agent first")
    out_dir = agent_dir.with_name(agent_dir.name + ".rescoring") if replay else agent_dir
    if out_dir.exists() and not resume:
        shutil.rmtree(out_dir)  # this agent's earlier outputs for the same definitions are replaced
    if resume:
        for stale in ("results.json", "summary.json"):
            (out_dir / stale).unlink(missing_ok=True)  # a damaged leftover; made again at the end
    tests = prepared.interleaved()
    started = time.perf_counter()
    sessions: list[Session] = []
    replays: list[tuple[TurnReplay, EventLog]] = []
    policy = TurnPolicy(cfg.turns.attempts, cfg.turns.timeout, cfg.turns.backoff, cfg.turns.give_up_after)

    def settings(session_id: str) -> SessionSettings:
        return SessionSettings(
            agent_name=spec, session_id=session_id, start_time=cfg.start_time, seconds_per_turn=cfg.seconds_per_turn,
            isolated=cfg.isolated, incompatible=prepared.config.incompatible, policy=policy,
        )

    examples = {e.unique_id: e for exs in prepared.examples.values() for e in exs}
    datasets = {d.name: d for d, _ in prepared.datasets}

    async def one_session(session_id: str, chosen: list[tuple[DatasetInterface, TestExample]], log_path: Path,
                          gate: asyncio.Semaphore | None = None) -> list[TestResult]:
        record = records.get(session_id)
        if replay and record is None:
            raise RunFolderError(f"{agent_dir}: the session {session_id!r} has no event log to re-score; run the agent again")
        if record is not None and not record.lines:
            record = None  # killed before its first event: start it afresh
        agent = None if replay else make()
        turns = TurnReplay(record, then_live=not replay) if record is not None else None
        builder = ResultsBuilder(examples, datasets)
        log = (EventLog(log_path, record.lines, record.keep_bytes, on_event=builder.add) if resume and record is not None
               else EventLog(log_path, on_event=builder.add))
        session_llm = SessionLLM(log, llm.judge if llm else None, llm.test_llm if llm else None,
                                 replay=dict(record.test_calls) if record is not None else {},
                                 judge_replay=dict(record.judge_calls) if resume and record is not None else {})
        filler = FillerGenerator(tokenizer, cfg.seed, cfg.max_message_tokens)  # isolated: only for watching tests
        session = Session(agent, [as_program(d, e) for d, e in chosen], tokenizer, filler, log, settings(session_id),
                          on_turn, session_llm, turns)
        sessions.append(session)
        if turns is not None:
            replays.append((turns, log))
        try:
            async with asyncio.timeout_at(deadline) as watch:
                if gate is None:
                    await session.run()
                else:
                    async with gate:
                        await session.run()
        except TimeoutError:
            if not watch.expired():
                raise
            session.abort(watchdog_reason(cfg.watchdog or 0))
        finally:
            log.close()
            if agent is not None:
                await agent.close()
        return builder.results

    async def one(dataset: DatasetInterface, example: TestExample) -> list[TestResult]:
        sid = slug(f"{example.dataset_name}__{example.example_id}")
        return await one_session(sid, [(dataset, example)], out_dir / "events" / f"{sid}.jsonl", limit)

    limit = asyncio.Semaphore(cfg.isolated_concurrency)
    try:
        if not cfg.isolated:
            results = await one_session("main", tests, out_dir / "events.jsonl")
        else:
            parts = await asyncio.gather(*(one(d, e) for d, e in tests))
            results = [r for part in parts for r in part]
    except BaseException:
        if replay:  # a failed re-scoring leaves the run as it was
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    for agent, log in replays:
        if log.replaying or (replay and not agent.finished):
            if replay:
                shutil.rmtree(out_dir)
            raise RunFolderError(f"{log.path}: the session ended before all recorded turns were used; the definitions or "
                            f"the harness changed since the run, so it cannot be {'re-scored' if replay else 'resumed'}")
    wall = time.perf_counter() - started
    usage = UsageTotals()
    for s in sessions:
        usage.merge(s.llm.usage)
    agent_cost = sum(s.channel.cost_usd for s in sessions)
    split = {"agent": round(agent_cost, 10), **{r: v for r, v in usage.cost_usd.items() if r != "agent"}}
    if replay:  # the replayed agent did not run now: keep its recorded wall time
        try:
            wall = AgentSummary.model_validate_json((agent_dir / "summary.json").read_text(encoding="utf-8")).wall_seconds
        except (OSError, ValueError):
            pass
    failures = [s.failure for s in sessions if s.failure]
    stats = [s.stats() for s in sessions]
    error = f"agent {spec}: {failures[0]}" + (f" (and {len(failures) - 1} more sessions)" if len(failures) > 1 else "") \
        if failures else None
    summary = summarize_agent(
        spec, results,
        turns=sum(s.turns for s in stats),
        filler_turns=sum(s.filler_turns for s in stats),
        failed_turns=sum(s.failed_turns for s in stats),
        conversation_tokens=sum(s.tokens for s in stats),
        agent_prompt_tokens=sum(s.prompt_tokens for s in stats),
        agent_completion_tokens=sum(s.completion_tokens for s in stats),
        cost_usd=round(sum(split.values()), 10),
        cost_split=split,
        usage=usage,
        wall_seconds=round(wall, 3),
        error=error,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_results(out_dir, results, summary)
    if replay:  # the new outputs replace the old ones only once they are complete
        shutil.rmtree(agent_dir)
        out_dir.rename(agent_dir)
    return AgentRun(spec, results, summary, error)


async def run_all(prepared: PreparedRun, agent_specs: list[str],
                  on_turn: Callable[[Session], None] | None = None, judge_model: str | None = None,
                  replay: bool = False, resume: bool = False) -> RunSummary:
    if not agent_specs:
        raise ConfigError("no agent given; pass -a AGENT (e.g. -a retrieval) or list `agents` in the config")
    twice = sorted({display_spec(a) for a in agent_specs if agent_specs.count(a) > 1})
    if twice:
        raise ConfigError(f"agent {twice[0]!r} is given twice; give each -a once")
    shown = {spec: display_spec(spec) for spec in agent_specs}  # never a URL's password: it is stored and shown
    folders: dict[str, str] = {}
    for spec in agent_specs:
        other = folders.setdefault(slug(shown[spec]), spec)
        if other != spec:
            raise ConfigError(f"agents {shown[other]!r} and {shown[spec]!r} would write to the same folder "
                            f"{slug(shown[spec])!r}; give one of them differently")
    cfg = prepared.config.config
    llm = build_run_llm(prepared, judge_model)
    deadline = None if replay or cfg.watchdog is None else asyncio.get_running_loop().time() + cfg.watchdog
    try:
        if replay:
            factories: dict[str, Callable[[], Agent]] = {spec: _no_agent(spec) for spec in agent_specs}
        else:
            uses_openai = any(spec.startswith("openai:") for spec in agent_specs)  # its key is only needed then
            options = {"openai": {**cfg.openai.agent_kwargs(), "runtime": llm.runtime} if uses_openai else {},
                       "http": cfg.http.agent_kwargs()}
            factories = {spec: agent_factory(spec, cfg.tokenizer, options) for spec in agent_specs}
        outcomes = await asyncio.gather(*(run_agent(prepared, shown[spec], factories[spec], on_turn, llm, replay, resume,
                                                    deadline) for spec in agent_specs), return_exceptions=True)
    finally:
        await llm.close()
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, LTMError):
            raise outcome  # a bug, not a user's problem: let it show
    runs = [o for o in outcomes if isinstance(o, AgentRun)]
    # One agent failing does not lose the others' results: they are kept, and the failure is reported beside them.
    errors = {shown[spec]: (str(o) if isinstance(o, AgentError) else f"agent {shown[spec]}: {o}")
              for spec, o in zip(agent_specs, outcomes) if isinstance(o, LTMError)}
    if replay and errors:  # a re-scoring that fails changes nothing: the run's summary stays as it was
        raise ConfigError(next(iter(errors.values())))
    errors.update({r.spec: r.error for r in runs if r.error})
    summary = RunSummary(run_name=cfg.run_name, seed=cfg.seed, isolated=cfg.isolated,
                         judge=llm.judge.model if llm.judge else None,
                         agents=[r.summary for r in runs], errors=errors)
    write_atomic(prepared.run_dir / "summary.json", summary.model_dump_json(indent=2) + "\n")
    return summary


def _no_agent(spec: str) -> Callable[[], Agent]:
    def make() -> Agent:
        raise AssertionError(f"a replay never makes the live agent {spec}")

    return make
