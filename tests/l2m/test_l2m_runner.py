"""Playing a syllabus to an agent: what the agent is told in train and test blocks, the logs, one
conversation, determinism, invalid replies, the oracle, and the real environments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest
from pydantic import JsonValue

from ltm_harness._agents.specs import agent_factory
from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._errors import LTMError
from ltm_harness._protocols.l2m.logger import read_scenario
from ltm_harness._protocols.l2m.runner import INTRO, RunSettings, run_syllabus
from ltm_harness._protocols.l2m.syllabus import Syllabus, parse_syllabus
from ltm_harness._envs.episode import ActiveText, ProblemSet, TextEnv
from ltm_harness._protocols.l2m.tasks import env_task_factory, variant_seed


class StepTask:
    """`steps` moves per episode; "good" earns 1, "bad" 0, anything else is refused."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.t = 0
        self.total = 0.0
        self.resets = 0

    @property
    def score(self) -> float:
        return self.total * 10

    @property
    def score_range(self) -> tuple[float, float]:
        return 0.0, 10.0 * self.steps

    def reset(self) -> int:
        self.t, self.total = 0, 0.0
        self.resets += 1
        return 0

    def act(self, action: Any) -> tuple[int, float, bool, dict[str, Any]]:
        self.t += 1
        done = self.t >= self.steps
        if action is None:
            return self.t, 0.0, done, {"invalid": True, "reason": "say good or bad"}
        reward = 1.0 if action == "good" else 0.0
        self.total += reward
        return self.t, reward, done, {}

    def parse_action(self, reply: str) -> str | None:
        words = reply.lower().split()
        return "good" if "good" in words else "bad" if "bad" in words else None

    def prompt(self, observation: Any, first: bool) -> str:
        return ("Rules: say good or bad.\n" if first else "") + f"Move {observation + 1}. Reply good or bad."

    def summary(self) -> str:
        return f"You scored {self.total:g}."

    def oracle_hint(self) -> str | None:
        return "good"


class Factory:
    def __init__(self) -> None:
        self.made: list[tuple[str, dict[str, JsonValue], int, StepTask]] = []

    def __call__(self, name: str, params: dict[str, JsonValue], seed: int) -> TextEnv:
        if name != "step":
            raise LTMError(f"unknown task {name!r}")
        steps = params.get("steps", 2)
        assert isinstance(steps, int)
        task = StepTask(steps)
        self.made.append((name, params, seed, task))
        return task


class Scripted(Agent):
    """Replies with `answer(message text, oracle hint)`; keeps every message it was sent."""

    def __init__(self, answer: Callable[[str, str | None], str], oracle: bool = False) -> None:
        super().__init__("scripted")
        self.answer = answer
        self.is_oracle = oracle
        self.seen: list[AgentMessage] = []
        self.resets = 0

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        self.seen.append(message)
        return Reply(text=self.answer(message.text, oracle_hint))

    async def reset(self) -> None:
        self.resets += 1


TRAIN_TEST = [{"$phase": "1.train"}, {"$repeat": {"$episode": "step"}, "count": 2},
              {"$phase": "1.test"}, {"$repeat": {"$episode": "step"}, "count": 1}]


def syllabus(instructions: list[dict[str, Any]] = TRAIN_TEST) -> Syllabus:
    return parse_syllabus(instructions, "syl.json")


def transcript(folder: Path, worker: str = "scripted") -> list[dict[str, Any]]:
    """Each turn of the run's event log with the move it made (its env_step event), if it made one."""
    turns: list[dict[str, Any]] = []
    for line in (folder / worker / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "turn":
            turns.append({"time": event["time"], "user": event["user"], "exp_num": None, "step": None, "reward": None,
                          "invalid": False, "reason": None})
        elif event["type"] == "env_step":
            turns[-1].update(exp_num=event["episode"], step=event["step"], reward=event["reward"],
                             invalid=event["invalid"], reason=event["reason"])
    return turns


async def test_train_blocks_tell_rewards_and_test_blocks_do_not(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "good")
    outcome = await run_syllabus(syllabus(), agent, tmp_path, factory=Factory())
    users = [m.text for m in agent.seen]
    assert users[0] == (f"{INTRO}\n\nTraining phase 1: you are told the reward of every move.\n"
                        "Game 1 of 3 (step, training).\nRules: say good or bad.\nMove 1. Reply good or bad.")
    assert users[1] == "Reward: 1.\nMove 2. Reply good or bad."
    assert users[2] == ("Reward: 1. Game over. You scored 2. Your total reward in this game: 2.\n\n"
                        "Game 2 of 3 (step, training).\nRules: say good or bad.\nMove 1. Reply good or bad.")
    assert users[4] == ("Reward: 1. Game over. You scored 2. Your total reward in this game: 2.\n\n"
                        "Test phase 1: rewards are not told in these games; play as well as you can.\n"
                        "Game 3 of 3 (step, test).\nRules: say good or bad.\nMove 1. Reply good or bad.")
    assert users[5] == "Move 2. Reply good or bad."
    assert users[6] == "Game over.\n\nThat was the last game. Thank you."
    assert not any("Reward" in u or "scored" in u for u in users[5:])
    assert (outcome.experiences, outcome.turns, outcome.invalid_replies, outcome.incomplete_episodes) == (3, 7, 0, 0)


async def test_disable_updates_in_training_withholds_rewards(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "good")
    await run_syllabus(syllabus([{"$phase": "1.train"}, {"$info": {"disable_updates": True}},
                                 {"$repeat": {"$episode": "step", "steps": 1}, "count": 2}]),
                       agent, tmp_path, factory=Factory())
    users = [m.text for m in agent.seen]
    assert "Training phase 1: rewards are not told in these games." in users[0]
    assert users[1].startswith("Game over.\n\nGame 2 of 2")
    assert not any("Reward" in u for u in users)


async def test_the_log_has_one_row_per_episode(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "bad" if "Move 2" in text else "good")
    await run_syllabus(syllabus(), agent, tmp_path, RunSettings(seed=4), factory=Factory())
    log = read_scenario(tmp_path)
    assert log.metrics_columns == ["reward", "score"]
    assert [(r.block_num, r.exp_num, r.block_type, r.task_name, r.exp_status, r.metrics) for r in log.records] == [
        (0, 0, "train", "step", "complete", {"reward": 1.0, "score": 10.0}),
        (0, 1, "train", "step", "complete", {"reward": 1.0, "score": 10.0}),
        (1, 2, "test", "step", "complete", {"reward": 1.0, "score": 10.0})]
    assert log.scenario_info == {"author": "ltm-harness", "scenario_type": "custom", "syllabus": "syl",
                                 "agent": "scripted", "seed": 4, "ranges": {"score": {"step": [0.0, 20.0]}}}
    turns = transcript(tmp_path)
    assert [(t["exp_num"], t["step"], t["reward"]) for t in turns] == [
        (0, 0, 1.0), (0, 1, 0.0), (1, 0, 1.0), (1, 1, 0.0), (2, 0, 1.0), (2, 1, 0.0), (None, None, None)]
    assert [t["time"] for t in turns[:2]] == ["2024-01-01T09:00:00Z", "2024-01-01T09:00:10Z"]
    assert log.records[0].timestamp.isoformat() == "2024-01-01T09:00:20"  # when the episode ended


async def test_one_conversation_and_one_task_per_variant(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "good")
    factory = Factory()
    instructions = [{"$phase": "1.train"}, {"$repeat": {"$episode": "step"}, "count": 2},
                    {"$repeat": {"$episode": "step", "steps": 1}, "count": 1},
                    {"$phase": "1.test"}, {"$repeat": {"$episode": "step"}, "count": 1}]
    await run_syllabus(syllabus(instructions), agent, tmp_path, RunSettings(seed=9), factory=factory)
    assert agent.resets == 0
    assert [(params, seed) for _, params, seed, _ in factory.made] == [
        ({}, variant_seed(9, "step", {})), ({"steps": 1}, variant_seed(9, "step", {"steps": 1}))]
    assert [task.resets for *_, task in factory.made] == [3, 1]  # the default variant played in train and test


async def test_runs_are_byte_identical_for_the_same_seed(tmp_path: Path) -> None:
    syl = parse_syllabus(json.loads((Path(__file__).resolve().parents[2] / "syllabi" / "ant-a-bandit-guess.json")
                                    .read_text())["instructions"], "ant.json")
    for name in ("one", "two"):
        await run_syllabus(syl, agent_factory("oracle")(), tmp_path / name, RunSettings(seed=5))
    for file in ("oracle/data-log.tsv", "oracle/events.jsonl", "scenario_info.json", "logger_info.json"):
        assert (tmp_path / "one" / file).read_bytes() == (tmp_path / "two" / file).read_bytes()
    await run_syllabus(syl, agent_factory("oracle")(), tmp_path / "other", RunSettings(seed=6))
    # another seed: other secret numbers and bandit draws
    assert (tmp_path / "one" / "oracle/data-log.tsv").read_bytes() != \
        (tmp_path / "other" / "oracle/data-log.tsv").read_bytes()


async def test_replies_without_a_move_stop_the_episode(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "maybe")
    instructions = [{"$phase": "1.train"}, {"$repeat": {"$episode": "step", "steps": 10}, "count": 2}]
    outcome = await run_syllabus(syllabus(instructions), agent, tmp_path, RunSettings(max_invalid=3), factory=Factory())
    assert (outcome.invalid_replies, outcome.incomplete_episodes, outcome.turns) == (6, 2, 7)
    assert [r.exp_status for r in read_scenario(tmp_path).records] == ["incomplete", "incomplete"]
    turns = transcript(tmp_path)
    assert (turns[0]["invalid"], turns[0]["reason"]) == (True, "say good or bad")
    assert agent.seen[3].text.startswith("Reward: 0. Game stopped: too many moves, or too many replies without a move. "
                                         "Your total reward in this game: 0.")


async def test_the_step_cap_stops_an_endless_episode(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "good")
    instructions = [{"$phase": "1.train"}, {"$repeat": {"$episode": "step", "steps": 50}, "count": 1}]
    outcome = await run_syllabus(syllabus(instructions), agent, tmp_path, RunSettings(max_steps=4), factory=Factory())
    assert (outcome.turns, outcome.incomplete_episodes) == (5, 1)
    assert read_scenario(tmp_path).records[0].metrics == {"reward": 4.0, "score": 40.0}


async def test_only_the_oracle_gets_the_hint(tmp_path: Path) -> None:
    hints: list[str | None] = []

    def answer(text: str, hint: str | None) -> str:
        hints.append(hint)
        return hint or "bad"

    await run_syllabus(syllabus(), Scripted(answer, oracle=True), tmp_path / "o", factory=Factory())
    assert hints == ["good"] * 6 + ["OK."]
    hints.clear()
    await run_syllabus(syllabus(), Scripted(answer), tmp_path / "n", factory=Factory())
    assert hints == [None] * 7


async def test_unknown_tasks_fail_before_the_agent_is_called(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "good")
    instructions = TRAIN_TEST + [{"$phase": "2.train"}, {"$repeat": {"$episode": "jump"}, "count": 1}]
    with pytest.raises(LTMError, match="syl.json: instruction 5: unknown task 'jump'"):
        await run_syllabus(syllabus(instructions), agent, tmp_path, factory=Factory())
    assert agent.seen == []


async def test_bad_environment_params_fail_before_the_agent_is_called(tmp_path: Path) -> None:
    agent = Scripted(lambda text, hint: "1")
    bad = [{"$phase": "1.train"}, {"$repeat": {"$episode": "bandit", "arms": 1}, "count": 1}]
    with pytest.raises(LTMError, match="instruction 1: environment 'bandit': arms"):
        await run_syllabus(syllabus(bad), agent, tmp_path)
    seeded = [{"$phase": "1.train"}, {"$repeat": {"$episode": "guess", "seed": 3}, "count": 1}]
    with pytest.raises(LTMError, match="instruction 1: task 'guess': remove the \"seed\" param"):
        await run_syllabus(syllabus(seeded), agent, tmp_path)
    assert agent.seen == []


async def test_the_oracle_plays_the_real_environments_perfectly(tmp_path: Path) -> None:
    instructions = [{"$phase": "1.train"},
                    {"$repeat": {"$episode": "bandit", "probabilities": [0.2, 0.9], "horizon": 4}, "count": 2},
                    {"$repeat": {"$episode": "keydoor", "env_name": "5x5"}, "count": 2},
                    {"$phase": "1.test"}, {"$repeat": {"$episode": "guess", "low": 1, "high": 20}, "count": 2}]
    outcome = await run_syllabus(syllabus(instructions), agent_factory("oracle")(), tmp_path)
    assert (outcome.invalid_replies, outcome.incomplete_episodes) == (0, 0)
    log = read_scenario(tmp_path)
    ranges = log.scenario_info["ranges"]["score"]
    assert ranges["bandit"] == pytest.approx([0.8, 3.6])  # 4 pulls of the worst / best arm
    assert [r.metrics["score"] for r in log.records] == pytest.approx([ranges[r.task_name][1] for r in log.records])


async def test_a_passive_problem_set_is_one_move_per_episode(tmp_path: Path) -> None:
    instructions = [{"$phase": "1.train"}, {"$repeat": {"$episode": "cipher", "shift": 3, "n_test": 4}, "count": 2},
                    {"$phase": "1.test"}, {"$repeat": {"$episode": "cipher", "shift": 3, "n_test": 4}, "count": 1}]
    oracle = Scripted(lambda text, hint: hint or "", oracle=True)
    await run_syllabus(syllabus(instructions), oracle, tmp_path / "o")
    assert [r.metrics for r in read_scenario(tmp_path / "o").records] == [{"reward": 4.0, "score": 4.0}] * 3
    problems = [m.text for m in oracle.seen[:3]]
    assert problems[0] != problems[1]  # a new problem set every episode
    assert "Your total reward in this game: 4. You answered" not in oracle.seen[1].text
    assert "You answered 4 of 4 right. Your total reward in this game: 4." in oracle.seen[1].text
    blank = Scripted(lambda text, hint: "no idea")
    outcome = await run_syllabus(syllabus(instructions), blank, tmp_path / "b")
    assert (outcome.invalid_replies, outcome.turns) == (3, 4)
    assert [r.metrics["reward"] for r in read_scenario(tmp_path / "b").records] == [0.0, 0.0, 0.0]


def test_the_env_factory_makes_active_and_passive_tasks() -> None:
    active = env_task_factory("guess", {"low": 1, "high": 8}, 1)
    assert isinstance(active, ActiveText)
    first = active.reset()
    assert active.env.rules() in active.prompt(first, True)
    assert active.env.rules() not in active.prompt(first, False)
    assert active.score_range == (0.0, 1.0)
    passive = env_task_factory("cipher", {"shift": 1, "n_test": 2}, 1)
    assert isinstance(passive, ProblemSet)
    assert passive.score_range == (0.0, 2.0)
    with pytest.raises(LTMError, match="unknown environment 'pong'"):
        env_task_factory("pong", {}, 0)
