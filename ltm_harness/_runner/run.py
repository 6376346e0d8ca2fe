"""A whole run: one session per agent (or per test, isolated), concurrently, in a run mode; results on disk."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Callable, Sequence

from ltm_harness._agents.base import Agent
from ltm_harness._agents.specs import AgentLike, agent_choices
from ltm_harness._authoring.dataset import DatasetInterface, as_program
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.channel import TurnPolicy
from ltm_harness._engine.filler import FillerGenerator
from ltm_harness._engine.program import TestProgram
from ltm_harness._engine.progress import OnTurn
from ltm_harness._engine.session import Session, SessionSettings, SessionStats
from ltm_harness._engine.session_llm import SessionLLM, TestLLM
from ltm_harness._tokens import Tokenizer, get_tokenizer
from ltm_harness._errors import AgentError, ConfigError, LLMError, LTMError, RunFolderWriteError, option
from ltm_harness._llm.batch import JudgeBatch
from ltm_harness._llm.endpoint import resolve_endpoint
from ltm_harness._llm.judge import LLMJudge, load_judge_prompt
from ltm_harness._llm.ledger import BudgetReached, Ledger
from ltm_harness._llm.runtime import LLMRuntime
from ltm_harness._results.derive import ResultsBuilder
from ltm_harness._results.headline import DatasetHeadline, quote
from ltm_harness._results.models import (AgentSummary, DatasetHeadlines, DatasetMetrics, QuestionProtocol, RunSummary,
                                         TestResult, summarize_agent)
from ltm_harness._results.outputs import (AgentOutputs, finished_outputs, read_summary, write_agent_outputs,
                                          write_run_summary)
from ltm_harness._runner.config import RunConfig
from ltm_harness._runner.modes import Fresh, RunMode, SessionIO
from ltm_harness._runner.prepare import PreparedRun
from ltm_harness._scoring.verdict import Judge
from ltm_harness._store.events import Status
from ltm_harness._store.layout import MAIN_SESSION, slug
from ltm_harness._store.records import UsageTotals

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


def build_run_llm(config: RunConfig, cache_dir: Path, judge_model: str | None = None,
                  ledger: Ledger | None = None, batch: JudgeBatch | None = None, use_cache: bool = True) -> RunLLM:
    """The run's LLM runtime, judge (config.judge or --judge) and test LLM, checked before anything runs; `ledger`:
    the run folder's ledger of spend (its budget, config.max_cost); `batch`: the judge's requests are kept for the
    Batch API; `use_cache=False` (--no-cache): the judge answers nothing from the cache."""
    cfg = config.config
    runtime = LLMRuntime(cfg.llm, Path(cfg.llm.cache_dir) if cfg.llm.cache_dir else cache_dir, cfg.tokenizer, ledger)
    judge: Judge | None = None
    model = judge_model or cfg.judge.model
    if model:
        base_url, key = cfg.judge.endpoint_args("judge", cfg.openai)
        endpoint = resolve_endpoint(f"the judge ({model})", base_url, key)
        judge = LLMJudge(runtime.client(endpoint), model, load_judge_prompt(cfg.judge.prompt), cfg.judge.temperature,
                         use_cache=cfg.llm.cache and use_cache, batch=batch)
    test_llm = None
    if cfg.test_llm.model:
        base_url, key = cfg.test_llm.endpoint_args("test_llm", cfg.openai)
        endpoint = resolve_endpoint(f"the test LLM ({cfg.test_llm.model})", base_url, key)
        test_llm = TestLLM(runtime.client(endpoint), cfg.test_llm.model)
    return RunLLM(runtime, judge, test_llm)


def stop_at_once(llm: RunLLM | None, failed: Sequence[str],
                 replay: bool) -> Callable[[], tuple[str, Status] | None]:
    """Why an agent's sessions must stop before their next turn: the run's judge met a cause that fails every call
    (an unknown model, a refused key, an exhausted quota), or one of its sessions stopped for such a cause of the
    agent's (`failed`: their reasons, as they stop); None while neither happened. The tests a judge's stop ends are unscored (a test that needs the judge and
    cannot get it is never 0), an agent's errored. A re-scoring (`replay`) stops with that one line instead, changing
    nothing."""

    def halt() -> tuple[str, Status] | None:
        stopped = getattr(llm.judge if llm is not None else None, "stopped", None)
        if stopped is not None:
            if replay:
                raise LLMError(f"{stopped.reason}; nothing was re-scored")
            return (f"the run was stopped: {stopped.reason}; mend the judge's endpoint and continue with "
                    f"{option('resume')} (a run is judged by one model: another one judges the finished run with "
                    f"rescore)"), "unscored"
        return (failed[0], "errored") if failed else None

    return halt


def watchdog_reason(seconds: float) -> str:
    return (f"the run's watchdog stopped it after {seconds:g} s (config.watchdog); raise it and continue "
            "with run --resume")


def session_settings(config: RunConfig, agent: str, session_id: str, **override: object) -> SessionSettings:
    cfg = config.config
    policy = TurnPolicy(cfg.turns.attempts, cfg.turns.timeout, cfg.turns.backoff, cfg.turns.give_up_after,
                        cfg.turns.retry_after_max)
    settings = SessionSettings(agent_name=agent, session_id=session_id, start_time=cfg.start_time,
                               seconds_per_turn=cfg.seconds_per_turn, isolated=cfg.isolated,
                               incompatible=config.incompatible, policy=policy)
    for key, value in override.items():
        setattr(settings, key, value)
    return settings


async def play_session(io: SessionIO, tests: Sequence[TestProgram], settings: SessionSettings, tokenizer: Tokenizer,
                       filler: FillerGenerator | None, *, on_turn: OnTurn | None = None, llm: RunLLM | None = None,
                       deadline: float | None = None, watchdog: float | None = None,
                       deadline_reason: Callable[[], str] | None = None, gate: asyncio.Semaphore | None = None,
                       started: list[Session] | None = None) -> Session:
    """Run one session to its end, or to `deadline` (event-loop time: the run's watchdog, or a suite case's time
    limit; `deadline_reason` says why it stopped), then close its log and agent."""
    session_llm = SessionLLM(io.log, llm.judge if llm else None, llm.test_llm if llm else None,
                             replay=io.test_calls, judge_replay=io.judge_calls)
    session = Session(io.agent, tests, tokenizer, filler, io.log, settings, on_turn, session_llm, io.replay)
    if started is not None:
        started.append(session)
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
        session.abort(deadline_reason() if deadline_reason is not None else watchdog_reason(watchdog or 0))
    finally:
        io.log.close()
        if io.agent is not None:
            await io.agent.close()
    return session


def summarize_sessions(spec: str, results: list[TestResult], sessions: list[Session], wall: float,
                       metrics: DatasetMetrics | None = None, headlines: DatasetHeadlines | None = None,
                       usage_note: str | None = None) -> AgentSummary:
    """An agent's summary from its sessions' results and numbers (`metrics`: each dataset's own named numbers;
    `headlines`: the metrics each is quoted by; `usage_note`: what the agent's usage leaves out)."""
    usage = UsageTotals()
    for s in sessions:
        usage.merge(s.llm.usage)
    stats = [s.stats() for s in sessions]
    # the agent's cost as its replies reported it, less what its provider billed below list price (cached input)
    split = {"agent": round(sum(s.cost_usd for s in stats) - usage.discount("agent"), 10),
             **{r: v for r, v in usage.cost_usd.items() if r != "agent"}}
    failures = [s.failure for s in sessions if s.failure]
    error = f"agent {spec}: {failures[0]}" + (f" (and {len(failures) - 1} more sessions)" if len(failures) > 1 else "") \
        if failures else None
    return summarize_agent(
        spec, results, metrics, headlines,
        turns=sum(s.turns for s in stats),
        filler_turns=sum(s.filler_turns for s in stats),
        observed_turns=sum(s.observed_turns for s in stats),
        failed_turns=sum(s.failed_turns for s in stats),
        conversation_tokens=sum(s.tokens for s in stats),
        agent_prompt_tokens=sum(s.prompt_tokens for s in stats),
        agent_completion_tokens=sum(s.completion_tokens for s in stats),
        cost_usd=round(sum(split.values()), 10),
        cost_split=split,
        usage=usage,
        wall_seconds=round(wall, 3),
        error=error,
        questions=question_protocol(stats),
        usage_note=usage_note,
    )


def question_protocol(stats: Sequence[SessionStats]) -> QuestionProtocol | None:
    """How the independent questions of these sessions were asked (None: there were none)."""
    independent, in_sequence = sum(s.went_back for s in stats), sum(s.in_sequence for s in stats)
    return QuestionProtocol(independent=independent, in_sequence=in_sequence) if independent or in_sequence else None


async def run_agent(prepared: PreparedRun, spec: str, make: Callable[[], Agent], on_turn: OnTurn | None = None,
                    llm: RunLLM | None = None, mode: RunMode | None = None, deadline: float | None = None) -> AgentRun:
    """One agent's sessions in `mode` (default: a fresh run). `deadline` (event-loop time) is the run's watchdog.

    The tests share one conversation (the main session), or each has its own (`isolated`); the examples of a
    dataset whose examples are conversations of their own (`conversation_per_example`: a benchmark's conversations)
    each get a session of their own either way, with no opening message, starting at the benchmark's date."""
    mode = mode or Fresh()
    cfg = prepared.config.config
    tokenizer = get_tokenizer(cfg.tokenizer)
    shared = prepared.interleaved()
    own = list(prepared.own_conversations())
    plan = mode.agent(prepared.folder.agent(spec), main_session=bool(shared) and not cfg.isolated)
    if isinstance(plan, AgentOutputs):  # finished before: kept as it is
        return AgentRun(plan.summary.agent, plan.results, plan.summary)
    datasets = {d.name: d for d, _ in prepared.datasets}
    started = time.perf_counter()
    sessions: list[Session] = []
    observed: dict[str, int] = {}  # lines of history that needed no reply, by dataset, of the tests played
    limit = asyncio.Semaphore(cfg.isolated_concurrency)
    failed_every_call: list[str] = []  # why a session of this agent stopped for a cause that fails every call
    halt = stop_at_once(llm, failed_every_call, mode.every_turn_recorded)

    Pairs = list[tuple[DatasetInterface, TestExample]]

    async def one_session(session_id: str, chosen: Callable[[], Pairs], own: bool = False) -> list[TestResult]:
        """A session of `chosen()`'s tests; `own`: a dataset's conversation of its own (no opening message, its
        waits honoured, starting at the benchmark's date)."""
        tests = chosen()
        for dataset, example in tests:  # counted while the test is in hand: never read again for the headline
            observed[dataset.name] = observed.get(dataset.name, 0) + sum(example.observe or [])
        # the session's own tests (a conversation of its own is read once, when it starts, not again when it ends)
        held = {e.unique_id: e for _, e in tests}
        builder = ResultsBuilder(held, datasets)
        io = plan.open(session_id, make, builder.add)
        filler = FillerGenerator(tokenizer, cfg.seed, cfg.max_message_tokens)  # isolated: only for watching tests
        override: dict[str, object] = {}
        if own:
            (dataset, example), = tests
            override = {"intro": None, "isolated": False,
                        "start_time": dataset.conversation_start(example) or cfg.start_time}
        settings = session_settings(prepared.config, spec, session_id, halt=halt, **override)
        session = await play_session(io, [as_program(d, e) for d, e in tests], settings, tokenizer, filler,
                                     on_turn=on_turn, llm=llm, deadline=deadline, watchdog=cfg.watchdog,
                                     started=sessions)
        if session.every_call_fails and session.failure:
            failed_every_call.append(session.failure)
        held.clear()  # the session's log (kept to the end of the run) holds the builder: not its tests, which can be
        return builder.results  # a benchmark's whole conversation each (memory flat in the number of them)

    async def gated(session_id: str, chosen: Callable[[], Pairs], own: bool = False) -> list[TestResult]:
        """A session of its own, started when one of `isolated_concurrency` places is free: its agent, log and
        tests (a conversation of its own read from the definitions then) exist only while it runs."""
        async with limit:
            return await one_session(session_id, chosen, own)

    def isolated_session(d: DatasetInterface, e: TestExample) -> Awaitable[list[TestResult]]:
        return gated(slug(f"{d.name}__{e.example_id}"), lambda: [(d, e)])

    def own_session(d: DatasetInterface, uid: str, i: int) -> Awaitable[list[TestResult]]:
        return gated(slug(uid.replace("/", "__", 1)), lambda: [(d, prepared.examples[d.name][i])], own=True)

    jobs: list[Awaitable[list[TestResult]]] = []
    if shared and not cfg.isolated:
        jobs.append(one_session(MAIN_SESSION, lambda: shared))
    else:
        jobs += [isolated_session(d, e) for d, e in shared]
    jobs += [own_session(d, uid, i) for d, uid, i in own]
    tasks = [asyncio.ensure_future(job) for job in jobs]
    try:
        try:
            parts = await asyncio.gather(*tasks)
        except BudgetReached:  # the others stop at their next paid call: none is cut off in the middle of one
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        except BaseException:  # one session failed: stop the others before the folder is given up
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        results = [r for part in parts for r in part]
    except BaseException:
        plan.abandon()
        raise
    plan.check_used_up()
    wall = time.perf_counter() - started
    usage_note = next((agent.usage_note for s in sessions if (agent := s.channel.agent) is not None), None)
    if mode.keeps_wall_time:  # the replayed agent did not run now: keep its recorded wall time and usage note
        try:
            earlier = read_summary(plan.folder)
            wall, usage_note = earlier.wall_seconds, earlier.usage_note
        except LTMError:
            pass

    def metrics(name: str, rs: list[TestResult]) -> dict[str, float]:
        return datasets[name].summary_metrics(prepared.examples.get(name, []), rs)

    def headlines(name: str, rs: list[TestResult]) -> DatasetHeadline:
        dataset, chosen = datasets[name], prepared.examples.get(name, [])
        return quote(dataset.headline_spec(), rs, llm is not None and llm.judge is not None,
                     len(chosen) if dataset.conversation_per_example else None, observed.get(name, 0))

    summary = summarize_sessions(spec, results, sessions, wall, metrics, headlines, usage_note)
    write_agent_outputs(plan.out, results, summary)
    plan.commit()
    return AgentRun(spec, results, summary, summary.error)


async def run_all(prepared: PreparedRun, agents: Sequence[AgentLike], on_turn: OnTurn | None = None,
                  judge_model: str | None = None, mode: RunMode | None = None, batch: JudgeBatch | None = None,
                  use_cache: bool = True) -> RunSummary:
    """Every agent's sessions, concurrently; one agent failing does not lose the others' results. `batch` and
    `use_cache`: the judge's, as `build_run_llm` says."""
    mode = mode or Fresh()
    choices = agent_choices(agents)
    cfg = prepared.config.config
    if cfg.isolated and any(c.single for c in choices):
        single = next(c.name for c in choices if c.single)
        raise ConfigError(f"agent {single!r} was given as an instance, which holds one conversation; give its class "
                          "(or a function making one) for an isolated run (a fresh agent per test)")
    llm = build_run_llm(prepared.config, prepared.folder.llm_cache, judge_model, prepared.ledger, batch, use_cache)
    replay = mode.every_turn_recorded
    deadline = None if replay or cfg.watchdog is None else asyncio.get_running_loop().time() + cfg.watchdog
    try:
        if replay:
            factories: dict[str, Callable[[], Agent]] = {c.name: _no_agent(c.name) for c in choices}
        else:
            uses_openai = any(c.uses_openai for c in choices)  # its key is only needed then
            options = {"openai": {**cfg.openai.agent_kwargs(), "runtime": llm.runtime} if uses_openai else {},
                       "http": cfg.http.agent_kwargs(), "llm": {"runtime": llm.runtime}}
            factories = {c.name: c.factory(cfg.tokenizer, options) for c in choices}
        outcomes = await asyncio.gather(*(run_agent(prepared, c.name, factories[c.name], on_turn, llm, mode, deadline)
                                          for c in choices), return_exceptions=True)
    finally:
        await llm.close()
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, LTMError):
            raise outcome  # a bug, not a user's problem: let it show
    for outcome in outcomes:
        if isinstance(outcome, RunFolderWriteError):  # the folder's problem, not the agent's: said once, resumable
            raise outcome
    if replay:  # a re-scoring that fails changes nothing: the run's summary stays as it was
        failed = next((o for o in outcomes if isinstance(o, LTMError)), None)
        if failed is not None:
            raise failed
    runs = [o for o in outcomes if isinstance(o, AgentRun)]
    errors = {c.name: (str(o) if isinstance(o, AgentError) else f"agent {c.name}: {o}")
              for c, o in zip(choices, outcomes) if isinstance(o, LTMError)}
    errors.update({r.spec: r.error for r in runs if r.error})
    given = {slug(c.name) for c in choices}  # agents that finished in this folder before, not given now, stay in it
    kept = [o.summary for f in prepared.folder.agent_folders() if f.name not in given and (o := finished_outputs(f))]
    summary = RunSummary(run_name=cfg.run_name, seed=cfg.seed, isolated=cfg.isolated,
                         judge=llm.judge.model if llm.judge else None,
                         agents=[r.summary for r in runs] + kept, errors=errors)
    if mode.keeps_outputs:
        write_run_summary(prepared.folder, summary)
    return summary


def _no_agent(spec: str) -> Callable[[], Agent]:
    def make() -> Agent:
        raise AssertionError(f"a replay never makes the live agent {spec}")

    return make
