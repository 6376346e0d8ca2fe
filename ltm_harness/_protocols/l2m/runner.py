"""Play a syllabus to one agent, in one conversation, and log every episode in the l2logger layout.

The whole syllabus is one conversation (that is what makes it lifelong): the agent is never reset
between episodes, blocks or tasks. Each episode is a run of turns: the harness sends the task's
prompt (its rules on the first move, its observation, how to reply), reads the agent's reply as an
action and applies it. In a block with updates enabled (a train block without `$info disable_updates`)
the agent is also told the reward of every move and, at the end, the episode's outcome and total
reward; in a test block, or while updates are disabled, it is told neither (what the task itself shows
in its observations, such as "too high", stays: it is part of the task). A reply the task cannot read
is passed on as such (the task decides what it costs, usually one step); after `max_invalid` such
replies in a row, or `max_steps` moves, the episode stops and is logged as "incomplete".

Text the harness adds around the task's prompts (the task's name is given; its params are not):

    first message:        INTRO
    a block starts:       "Training phase N: ..." / "Test phase N: ..."
    an episode starts:    "Game E of T (TASK, training|test)."
    after a move (train): "Reward: R."
    episode end (train):  "Reward: R. Game over. <the task's summary> Your total reward in this game: R."
    episode end (test):   "Game over."

The end of an episode is told at the start of the next message (and in a last message after the final
episode). The syllabus is one test program in a session of the harness's engine: every turn goes through the
same channel as any run's (time limits, retries, the oracle's hints) and is recorded in WORKER/events.jsonl, the
event log of any run (with an `env_step` event per move: its reward, and whether the reply was a valid move),
before the next one is sent, so a killed run is resumed from it (`syllabus run --resume`) and gives the same
files. When the syllabus ends, WORKER/data-log.tsv is written whole, a row per episode, with two metric columns:
`reward` (the sum of the rewards) and `score` (the task's own episode score, e.g. a bandit's expected payoff).
Timestamps come from the virtual clock, so the same syllabus, seed and agent replies give byte-identical files.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ltm_harness._agents.base import Agent
from ltm_harness._engine.program import TestContext, TestOutcome, TestProgram
from ltm_harness._engine.scheduler import Pause
from ltm_harness._engine.session import SessionSettings
from ltm_harness._tokens import get_tokenizer
from ltm_harness._envs.episode import ChatActor, InlineSteps, Step, TextEnv, play_episode
from ltm_harness._errors import AgentError, DefinitionError, LTMError
from ltm_harness._protocols.l2m.logger import L2Logger, LogRecord, ScenarioInfo, worker_slug
from ltm_harness._protocols.l2m.syllabus import Regime, Syllabus, expand
from ltm_harness._protocols.l2m.tasks import TaskFactory, env_task_factory, variant_seed
from ltm_harness._runner.modes import AgentPlan, Fresh, RunMode
from ltm_harness._runner.run import play_session
from ltm_harness._store.layout import MAIN_SESSION, ScenarioFolder

METRIC_COLUMNS = ["reward", "score"]
INTRO = ("We are going to play a long series of short games, one after another. In each game you read "
         "the situation and reply with your move. In training games you are told the reward of every "
         "move; in test games you are not, so use what you learnt in training. Try to earn as much reward "
         "as you can.")


class RunSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seed: int = 0
    max_steps: int = Field(default=200, ge=1)  # a safety cap on moves per episode (tasks have their own)
    max_invalid: int = Field(default=3, ge=1)  # replies in a row without a valid move that stop the episode
    start_time: datetime = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)
    seconds_per_turn: float = Field(default=10.0, ge=0)
    tokenizer: str = "cl100k_base"


class RunOutcome(BaseModel):
    """What a run did, for the summary line."""

    syllabus: str
    agent: str
    scenario_dir: str
    experiences: int
    turns: int
    invalid_replies: int
    incomplete_episodes: int


def _variant(task: str, params: dict[str, JsonValue]) -> str:
    return json.dumps([task, params], sort_keys=True)


def make_tasks(regimes: list[Regime], factory: TaskFactory, seed: int, source: str) -> dict[str, TextEnv]:
    """One task per variant, made before the run so that a bad name or param fails before the agent is called."""
    tasks: dict[str, TextEnv] = {}
    for regime in regimes:
        key = _variant(regime.task, regime.params)
        if key in tasks:
            continue
        try:
            tasks[key] = factory(regime.task, dict(regime.params), variant_seed(seed, regime.task, regime.params))
        except LTMError as exc:
            raise DefinitionError(f"{source}: instruction {regime.instruction}: {exc}") from None
    return tasks


def _block_intro(regime: Regime) -> str:
    number = regime.phase.split(".")[0]
    if regime.block_type == "test":
        return f"Test phase {number}: rewards are not told in these games; play as well as you can."
    if regime.updates_disabled:
        return f"Training phase {number}: rewards are not told in these games."
    return f"Training phase {number}: you are told the reward of every move."


class _Player(ChatActor):
    """The agent in one game: the game's opening with its first move, the last move's reward with the next ones
    when rewards are told; every move is recorded in the event log and counted when it was not valid."""

    def __init__(self, run: "_Syllabus", ctx: TestContext, task: TextEnv, opening: str, feedback: bool,
                 exp_num: int) -> None:
        super().__init__(ctx.ask, task)
        self.run, self.ctx, self.opening, self.feedback, self.exp_num = run, ctx, opening, feedback, exp_num

    def frame(self, message: str, last: Step | None) -> str:
        if last is None:
            return f"{self.opening}{message}"
        return (f"Reward: {last.reward:g}.\n" if self.feedback else "") + message

    async def observe(self, step: Step) -> None:
        self.run.invalid += step.invalid
        reason = step.info.get("reason")
        self.ctx.record_step(self.exp_num, step.t, step.reward + 0.0, step.done, truncated=step.truncated,
                             invalid=step.invalid, reason=str(reason) if reason is not None else None)


def _closing(feedback: bool, done: bool, last_reward: float | None, total: float, task: TextEnv) -> str:
    if not feedback:
        return "Game over." if done else "Game stopped."
    parts = [f"Reward: {last_reward:g}."] if last_reward is not None else []
    if done:
        parts += ["Game over.", task.summary()]
    else:
        parts.append("Game stopped: too many moves, or too many replies without a move.")
    parts.append(f"Your total reward in this game: {total:g}.")
    return " ".join(parts)


class _Syllabus:
    """The syllabus as one test program: every episode in order, each row of the data log as it ends."""

    def __init__(self, syllabus: Syllabus, regimes: list[Regime], tasks: dict[str, TextEnv], worker: str,
                 settings: RunSettings, on_experience: Callable[[int, int], None] | None) -> None:
        self.syllabus, self.regimes, self.tasks, self.worker = syllabus, regimes, tasks, worker
        self.settings, self.on_experience = settings, on_experience
        self.total = sum(r.count for r in regimes)
        self.records: list[LogRecord] = []
        self.invalid = self.incomplete = 0
        self.finished = False

    async def __call__(self, ctx: TestContext) -> TestOutcome:
        pending = INTRO + "\n\n"
        block = -1
        for regime in self.regimes:
            task = self.tasks[_variant(regime.task, regime.params)]
            for exp_num in regime.exp_nums:
                if regime.block_num != block:
                    block = regime.block_num
                    pending += _block_intro(regime) + "\n"
                feedback = not regime.updates_disabled
                kind = "test" if regime.block_type == "test" else "training"
                opening = f"{pending}Game {exp_num + 1} of {self.total} ({regime.task}, {kind}).\n"
                in_a_row = 0

                async def stop_after(step: Step) -> bool:
                    nonlocal in_a_row
                    in_a_row = in_a_row + 1 if step.invalid else 0
                    return in_a_row >= self.settings.max_invalid

                episode = await play_episode(InlineSteps(task), _Player(self, ctx, task, opening, feedback, exp_num),
                                             max_steps=self.settings.max_steps, on_step=stop_after)
                self.incomplete += 0 if episode.done else 1
                last_reward = episode.last.reward if episode.last is not None else None
                pending = _closing(feedback, episode.done, last_reward, episode.total_reward, task) + "\n\n"
                self.records.append(LogRecord(
                    block_num=regime.block_num, exp_num=exp_num, worker_id=self.worker, block_type=regime.block_type,
                    task_name=regime.task, task_params=dict(regime.params),
                    exp_status="complete" if episode.done else "incomplete", timestamp=ctx.now,
                    metrics={"reward": episode.total_reward, "score": task.score},
                ))
                if self.on_experience:
                    self.on_experience(exp_num + 1, self.total)
        await ctx.say(pending + "That was the last game. Thank you.")
        self.finished = True
        return TestOutcome(0.0, 1.0, [f"{self.total} episodes of syllabus {self.syllabus.name}: scored by its data log "
                                      "and lifelong-learning metrics"], unscored=True)


async def run_syllabus(syllabus: Syllabus, agent: Agent, scenario_dir: Path | ScenarioFolder,
                       settings: RunSettings | None = None, factory: TaskFactory | None = None,
                       scenario_type: str = "custom", on_experience: Callable[[int, int], None] | None = None,
                       mode: RunMode | None = None, name: str | None = None) -> RunOutcome:
    """Play `syllabus` to `agent` (one conversation) and write its logs in the scenario folder (a Path: the worker
    is named after the agent). `mode`: a fresh run (default), or `Resume()` to continue an interrupted one; `name`:
    the agent's name in the logs (default: its spec)."""
    try:
        return await _run_syllabus(syllabus, agent, scenario_dir, settings, factory, scenario_type, on_experience,
                                   mode, name)
    finally:
        await agent.close()  # also when the syllabus, its tasks or the folder refused before the session started


async def _run_syllabus(syllabus: Syllabus, agent: Agent, scenario_dir: Path | ScenarioFolder,
                        settings: RunSettings | None, factory: TaskFactory | None, scenario_type: str,
                        on_experience: Callable[[int, int], None] | None, mode: RunMode | None,
                        name: str | None) -> RunOutcome:
    settings = settings or RunSettings()
    name = name or agent.name
    regimes = expand(syllabus)
    tasks = make_tasks(regimes, factory or env_task_factory, settings.seed, syllabus.source)
    folder = scenario_dir if isinstance(scenario_dir, ScenarioFolder) else ScenarioFolder(scenario_dir,
                                                                                          worker_slug(name))
    score_ranges: dict[str, list[float]] = {}
    for regime in regimes:
        low, high = tasks[_variant(regime.task, regime.params)].score_range
        known = score_ranges.setdefault(regime.task, [low, high])
        known[:] = [min(known[0], low), max(known[1], high)]
    info = ScenarioInfo(scenario_type=scenario_type, syllabus=syllabus.name, agent=name, seed=settings.seed,
                        ranges={"score": score_ranges})
    program = _Syllabus(syllabus, regimes, tasks, folder.worker, settings, on_experience)
    plan = (mode or Fresh()).agent(folder.agent, main_session=True)
    assert isinstance(plan, AgentPlan), "a syllabus worker folder holds no results.json, so it is never finished"
    io = plan.open(MAIN_SESSION, lambda: agent, lambda event: None)
    test = TestProgram(id=f"syllabus/{syllabus.name}", group="syllabus", span=0, script=("",), pauses=(Pause(),),
                       program=program)
    settings_ = SessionSettings(agent_name=name, session_id=MAIN_SESSION, start_time=settings.start_time,
                                seconds_per_turn=settings.seconds_per_turn, intro=None)
    session = await play_session(io, [test], settings_, get_tokenizer(settings.tokenizer), None)
    plan.check_used_up()
    if not program.finished:
        why = session.failure or session.channel.failed_reason or "the syllabus did not finish"
        raise AgentError(f"agent {name}: {why}; the log so far is in {io.log.path}")
    with L2Logger(folder.path, folder.worker, METRIC_COLUMNS, info) as logger:
        for record in program.records:
            logger.log(record)
    return RunOutcome(syllabus=syllabus.name, agent=name, scenario_dir=str(folder.path),
                      experiences=program.total, turns=session.stats().turns, invalid_replies=program.invalid,
                      incomplete_episodes=program.incomplete)
