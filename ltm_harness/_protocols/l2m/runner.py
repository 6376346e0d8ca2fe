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
episode). Every turn is appended to WORKER/conversation.jsonl before the next one is sent, and every
episode to WORKER/data-log.tsv when it ends, with two metric columns: `reward` (the sum of the
rewards) and `score` (the task's own episode score, e.g. a bandit's expected payoff). Timestamps come
from a virtual clock, so the same syllabus, seed and agent replies give byte-identical files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, Callable

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ltm_harness._agents.base import Agent, AgentMessage
from ltm_harness._engine.clock import VirtualClock
from ltm_harness._errors import DefinitionError, LTMError
from ltm_harness._protocols.l2m.logger import L2Logger, LogRecord, ScenarioInfo, worker_slug
from ltm_harness._protocols.l2m.syllabus import Regime, Syllabus, expand
from ltm_harness._protocols.l2m.tasks import TaskFactory, TextTask, env_task_factory, variant_seed
from ltm_harness._engine.tokens import get_tokenizer

TRANSCRIPT = "conversation.jsonl"
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


class TurnRecord(BaseModel):
    """One message to the agent and its reply, as written to conversation.jsonl."""

    i: int
    time: datetime
    exp_num: int | None  # None: the closing message after the last episode
    block_num: int | None
    block_type: str | None
    task: str | None
    step: int | None
    user: str
    user_tokens: int
    reply: str
    reward: float | None = None  # the move's reward (logged for analysis; told to the agent only in training)
    invalid: bool = False  # the reply held no move the task accepts
    reason: str | None = None  # why it was refused, as the task says


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


def make_tasks(regimes: list[Regime], factory: TaskFactory, seed: int, source: str) -> dict[str, TextTask]:
    """One task per variant, made before the run so that a bad name or param fails before the agent is called."""
    tasks: dict[str, TextTask] = {}
    for regime in regimes:
        key = _variant(regime.task, regime.params)
        if key in tasks:
            continue
        try:
            tasks[key] = factory(regime.task, dict(regime.params), variant_seed(seed, regime.task, regime.params))
        except LTMError as exc:
            raise DefinitionError(f"{source}: instruction {regime.instruction}: {exc}") from None
    return tasks


class _Conversation:
    """Sends messages to the agent on the virtual clock and appends every turn to the transcript."""

    def __init__(self, agent: Agent, settings: RunSettings, transcript: IO[str]) -> None:
        self.agent = agent
        self.tokenizer = get_tokenizer(settings.tokenizer)
        self.clock = VirtualClock(settings.start_time, settings.seconds_per_turn)
        self.transcript = transcript
        self.turns = 0

    async def say(self, text: str, regime: Regime | None, exp_num: int | None, step: int | None,
                  hint: str | None = None) -> tuple[str, TurnRecord]:
        now = self.clock.now
        tokens = self.tokenizer.count(text)
        oracle = (hint or "OK.") if self.agent.is_oracle else None
        reply = await self.agent.reply(AgentMessage(text=text, timestamp=now, tokens=tokens), oracle)
        reply_text = reply.text if isinstance(reply.text, str) else str(reply.text)
        record = TurnRecord(i=self.turns, time=now, exp_num=exp_num,
                            block_num=regime.block_num if regime else None,
                            block_type=regime.block_type if regime else None, task=regime.task if regime else None,
                            step=step, user=text, user_tokens=tokens, reply=reply_text)
        self.turns += 1
        self.clock.tick()
        return reply_text, record

    def write(self, record: TurnRecord) -> None:
        self.transcript.write(record.model_dump_json() + "\n")
        self.transcript.flush()


def _block_intro(regime: Regime) -> str:
    number = regime.phase.split(".")[0]
    if regime.block_type == "test":
        return f"Test phase {number}: rewards are not told in these games; play as well as you can."
    if regime.updates_disabled:
        return f"Training phase {number}: rewards are not told in these games."
    return f"Training phase {number}: you are told the reward of every move."


@dataclass
class _Played:
    reward: float = 0.0
    done: bool = False
    invalid: int = 0
    last_reward: float | None = None  # the final move's reward, told with the episode's end in training


async def _episode(conv: _Conversation, task: TextTask, regime: Regime, exp_num: int, total_exps: int,
                   opening: str, settings: RunSettings) -> _Played:
    """Play one episode, writing every turn to the transcript."""
    feedback = not regime.updates_disabled
    kind = "test" if regime.block_type == "test" else "training"
    observation = task.reset()
    text = f"{opening}Game {exp_num + 1} of {total_exps} ({regime.task}, {kind}).\n{task.prompt(observation, True)}"
    played = _Played()
    step = in_a_row = 0
    while not played.done and step < settings.max_steps and in_a_row < settings.max_invalid:
        hint = task.oracle_hint() if conv.agent.is_oracle else None
        reply, record = await conv.say(text, regime, exp_num, step, hint)
        observation, reward, played.done, info = task.act(task.parse_action(reply))
        step += 1
        invalid = bool(info.get("invalid"))
        in_a_row = in_a_row + 1 if invalid else 0
        played.invalid += invalid
        played.reward += reward
        played.last_reward = reward
        reason = info.get("reason")
        conv.write(record.model_copy(update={"reward": reward, "invalid": invalid,
                                             "reason": str(reason) if reason is not None else None}))
        if not played.done:
            told = f"Reward: {reward:g}.\n" if feedback else ""
            text = f"{told}{task.prompt(observation, False)}"
    return played


def _closing(feedback: bool, played: _Played, task: TextTask) -> str:
    if not feedback:
        return "Game over." if played.done else "Game stopped."
    parts = [f"Reward: {played.last_reward:g}."] if played.last_reward is not None else []
    if played.done:
        parts += ["Game over.", task.summary()]
    else:
        parts.append("Game stopped: too many moves, or too many replies without a move.")
    parts.append(f"Your total reward in this game: {played.reward:g}.")
    return " ".join(parts)


async def run_syllabus(syllabus: Syllabus, agent: Agent, scenario_dir: Path, settings: RunSettings | None = None,
                       factory: TaskFactory | None = None, scenario_type: str = "custom",
                       on_experience: Callable[[int, int], None] | None = None) -> RunOutcome:
    """Play `syllabus` to `agent` (one conversation) and write its logs under `scenario_dir`."""
    settings = settings or RunSettings()
    regimes = expand(syllabus)
    tasks = make_tasks(regimes, factory or env_task_factory, settings.seed, syllabus.source)
    total_exps = sum(r.count for r in regimes)
    worker = worker_slug(agent.name)
    score_ranges: dict[str, list[float]] = {}
    for regime in regimes:
        low, high = tasks[_variant(regime.task, regime.params)].score_range
        known = score_ranges.setdefault(regime.task, [low, high])
        known[:] = [min(known[0], low), max(known[1], high)]
    info = ScenarioInfo(scenario_type=scenario_type, syllabus=syllabus.name, agent=agent.name, seed=settings.seed,
                        ranges={"score": score_ranges})
    scenario_dir.mkdir(parents=True, exist_ok=True)
    invalid_total = incomplete = 0
    with L2Logger(scenario_dir, worker, METRIC_COLUMNS, info) as logger, \
            (scenario_dir / worker / TRANSCRIPT).open("w", encoding="utf-8") as transcript:
        conv = _Conversation(agent, settings, transcript)
        pending = INTRO + "\n\n"
        block = -1
        for regime in regimes:
            task = tasks[_variant(regime.task, regime.params)]
            for exp_num in regime.exp_nums:
                if regime.block_num != block:
                    block = regime.block_num
                    pending += _block_intro(regime) + "\n"
                played = await _episode(conv, task, regime, exp_num, total_exps, pending, settings)
                invalid_total += played.invalid
                incomplete += 0 if played.done else 1
                pending = _closing(not regime.updates_disabled, played, task) + "\n\n"
                logger.log(LogRecord(
                    block_num=regime.block_num, exp_num=exp_num, worker_id=worker, block_type=regime.block_type,
                    task_name=regime.task, task_params=dict(regime.params),
                    exp_status="complete" if played.done else "incomplete", timestamp=conv.clock.now,
                    metrics={"reward": played.reward, "score": task.score},
                ))
                if on_experience:
                    on_experience(exp_num + 1, total_exps)
        _reply, record = await conv.say(pending + "That was the last game. Thank you.", None, None, None)
        conv.write(record)
    return RunOutcome(syllabus=syllabus.name, agent=agent.name, scenario_dir=str(scenario_dir),
                      experiences=total_exps, turns=conv.turns, invalid_replies=invalid_total,
                      incomplete_episodes=incomplete)
