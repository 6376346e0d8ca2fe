"""Environments inside the long conversation: episodes as test programs, scored next to memory tests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest

from ltm_harness._agents.base import Agent, AgentMessage, Reply
from ltm_harness._runner.config import load_config
from ltm_harness.envs import ActiveEnv, PassiveEnv, make_env
from ltm_harness._envs.in_conversation import EpisodeDefinition
from ltm_harness._envs.play import play_policy
from ltm_harness._errors import LTMError
from ltm_harness._store.eventlog import read_events
from ltm_harness._store.events import TurnEvent
from ltm_harness._authoring.catalog import known_datasets
from ltm_harness._runner.prepare import build_datasets, prepare
from ltm_harness._runner.run import run_agent
from ltm_harness.testing import make_config, run_config

ENV_DATASETS = ["env_bandit", "env_keydoor", "env_guess", "env_cipher"]


class Scripted(Agent):
    """A chat agent whose reply is a function of the message."""

    def __init__(self, spec: str, answer: Callable[[str], str]) -> None:
        super().__init__(spec)
        self.answer = answer
        self.heard: list[str] = []

    async def reply(self, message: AgentMessage, oracle_hint: str | None = None) -> Reply:
        self.heard.append(message.text)
        return Reply(text=self.answer(message.text))


def turns(path: Path) -> list[TurnEvent]:
    return [e for e in read_events(path) if isinstance(e, TurnEvent)]


async def test_oracle_scores_one_and_null_zero_next_to_memory_tests(tmp_path: Path):
    cfg = make_config(["colours", *ENV_DATASETS], span=3000, examples=2, seed=3)
    summary = await run_config(cfg, tmp_path, ["oracle", "null"])
    scores = {a.agent: {d.dataset: (d.score, d.errored) for d in a.datasets} for a in summary.agents}
    for name in ["colours", *ENV_DATASETS]:
        assert scores["oracle"][name] == (1.0, 0), name
        assert scores["null"][name] == (0.0, 0), name
    log = turns(tmp_path / "t" / "oracle" / "events.jsonl")
    order = [t.test.split("/")[0] for t in log if t.test]
    # Interleaved: some test's line comes between two steps of an environment episode.
    first, last = order.index("env_bandit"), len(order) - 1 - order[::-1].index("env_bandit")
    assert set(order[first:last]) - {"env_bandit"}


async def test_definitions_keep_the_episode_and_runs_are_reproducible(tmp_path: Path):
    logs = []
    for attempt in ("a", "b"):
        cfg = make_config(ENV_DATASETS, span=2000, examples=2, seed=5)
        prepared = prepare(cfg, tmp_path / attempt)
        await run_agent(prepared, "retrieval", lambda: discover_agent("retrieval"))
        logs.append((tmp_path / attempt / "t" / "retrieval" / "events.jsonl").read_bytes())
        for name in ENV_DATASETS:
            for ex in prepared.examples[name]:
                d = EpisodeDefinition.model_validate(ex.extra)
                assert d.env == known_datasets()[name].env_test and d.label == f"{name} #{int(ex.example_id) + 1}"  # type: ignore[attr-defined]
                assert ex.is_question == [True] * (len(ex.script) - 1) + [False]
    assert logs[0] == logs[1]


def discover_agent(spec: str) -> Agent:
    from ltm_harness._agents.specs import agent_factory

    return agent_factory(spec)()


async def test_the_score_is_the_environments_normalised_score(tmp_path: Path):
    """An agent that always says "right" scores what the same policy scores on the same episode."""
    prepared = prepare(make_config(["env_keydoor"], span=2000, examples=4, seed=2), tmp_path)
    run = await run_agent(prepared, "right", lambda: Scripted("right", lambda text: "I go right."))
    by_id = {r.example_id: r for r in run.results}
    for ex in prepared.examples["env_keydoor"]:
        d = EpisodeDefinition.model_validate(ex.extra)
        env = make_env(d.env, seed=d.seed, **d.params)
        assert isinstance(env, ActiveEnv)
        expected = play_policy(env, lambda e, o: "right")
        assert by_id[ex.example_id].score == expected.normalised
        assert len(by_id[ex.example_id].responses) == expected.steps


async def test_unreadable_replies_are_invalid_steps_recorded_with_the_reply(tmp_path: Path):
    prepared = prepare(make_config(["env_guess"], span=2000, examples=1, seed=1, isolated=True), tmp_path)
    replies = iter(["Hmm, hard to say!", "50 or 51?", '{"action": 500}'])

    def vague(text: str) -> str:
        return next(replies, "no idea") if text.startswith("[env_guess #1]") else "OK."

    run = await run_agent(prepared, "vague", lambda: Scripted("vague", vague))
    result = run.results[0]
    assert result.status == "ok" and result.score == 0.0
    env = make_env("guess")
    assert isinstance(env, ActiveEnv)
    assert len(result.responses) == env.max_steps  # every invalid reply used a guess, none was free
    reasons = "\n".join(result.reasons)
    assert "step 1: invalid (no allowed action found in the reply): 'Hmm, hard to say!'" in reasons
    assert "step 2: invalid (the reply names several actions: 50, 51): '50 or 51?'" in reasons
    assert "step 3: invalid (500 is not an allowed action)" in reasons


async def test_steps_are_spread_over_the_span(tmp_path: Path):
    span = 4000
    prepared = prepare(make_config(["env_bandit", "colours"], span=span, examples=1, seed=0), tmp_path)
    await run_agent(prepared, "null", lambda: discover_agent("null"))
    log = turns(tmp_path / "t" / "null" / "events.jsonl")
    steps = [t for t in log if t.test == "env_bandit/0"]
    assert len(steps) == 11 and [t.question for t in steps] == [True] * 10 + [False]
    start = steps[0].pos
    for k, turn in enumerate(steps[1:10], start=1):
        assert turn.pos - start >= k * 0.9 * span / 9 - 1
    assert steps[9].pos - start <= 0.9 * span * 1.1
    assert steps[10].user.startswith("[env_bandit #1] That is the end of this task.")


async def test_passive_answers_never_appear_in_any_message_to_the_agent(tmp_path: Path):
    cfg = make_config([{"name": "env_cipher", "args": {"env_name": kind, "page_size": 3, "n_test": 7}}
                       for kind in ("substitution",)] + ["colours", "kv"], span=2000, examples=4, seed=11)
    prepared = prepare(cfg, tmp_path)
    heard: list[str] = []

    def echo(text: str) -> str:
        heard.append(text)
        return text  # repeats everything it is told: no message may hold an answer to repeat

    run = await run_agent(prepared, "echo", lambda: Scripted("echo", echo))
    summary = await run_config(cfg, tmp_path, ["oracle", "retrieval"])
    assert {a.agent: a.datasets[1].score for a in summary.agents}["oracle"] == 1.0
    messages = heard + [t.user for agent in ("oracle", "retrieval")
                        for t in turns(tmp_path / "t" / agent / "events.jsonl")]
    said = set(re.findall(r"[a-z]+", " ".join(messages).lower()))
    answers = set()
    for ex in prepared.examples["env_cipher"]:
        d = EpisodeDefinition.model_validate(ex.extra)
        env = make_env(d.env, seed=d.seed, **d.params)
        assert isinstance(env, PassiveEnv)
        answers |= set(env.oracle_answers())
        assert ex.expected_responses == env.oracle_answers()
    assert len(answers) == 28 and not answers & said
    echo_scores = [r.score for r in run.results if r.dataset == "env_cipher"]
    assert echo_scores == [0.0] * 4


async def test_a_problem_set_in_pages(tmp_path: Path):
    cfg = make_config([{"name": "env_cipher", "args": {"page_size": 3, "n_test": 8}}], span=2000, examples=1, seed=4)
    prepared = prepare(cfg, tmp_path)
    ex = prepared.examples["env_cipher"][0]
    d = EpisodeDefinition.model_validate(ex.extra)
    env = make_env(d.env, seed=d.seed, **d.params)
    assert isinstance(env, PassiveEnv)
    key = dict(zip(env.get_test(), env.oracle_answers()))

    def solve(text: str) -> str:  # answers numbered lines, one right answer left out on purpose
        lines = [line for line in text.splitlines() if re.match(r"^\d+\. ", line)]
        out = []
        for line in lines:
            number, word = line.split(". ", 1)
            if number != "5":
                out.append(f"{number}. {key[word]}")
        return "\n".join(out) or "OK"

    run = await run_agent(prepared, "solver", lambda: Scripted("solver", solve))
    result = run.results[0]
    assert len(result.questions) == 3
    assert "part 1 of 3" in result.questions[0] and "Worked examples" in result.questions[0]
    assert "part 3 of 3" in result.questions[2] and "Worked examples" not in result.questions[2]
    assert "7. " in result.questions[2] and "8. " in result.questions[2]
    assert result.score == pytest.approx(7 / 8)
    assert any(r.startswith("5. ") and "answered None" in r for r in result.reasons)


def test_dataset_args_are_checked(tmp_path: Path):
    cfg = make_config([{"name": "env_keydoor", "args": {"env_name": "9x9"}}])
    with pytest.raises(LTMError, match=r"datasets\.datasets\[0\]\.args\.env_name"):
        build_datasets(cfg)
    cfg = make_config([{"name": "env_bandit", "args": {"page_size": 3}}])
    with pytest.raises(LTMError, match=r"args\.page_size: Extra inputs"):
        build_datasets(cfg)
    cfg = make_config([{"name": "env_cipher", "args": {"spread_percent": 0}}])
    with pytest.raises(LTMError, match=r"args\.spread_percent"):
        build_datasets(cfg)


def test_shipped_environments_config_and_default_config_unchanged():
    cfg = load_config("environments")
    names = [e.name for e in cfg.datasets.datasets]
    assert set(ENV_DATASETS) <= set(names) and {"colours", "kv"} <= set(names)
    assert build_datasets(cfg)
    default = [e.name for e in load_config("default").datasets.datasets]
    assert not any(n.startswith("env_") for n in default)


def test_definition_json_holds_no_rendered_answers_of_active_tests():
    ds = known_datasets()["env_guess"](memory_span=2000, seed=0)
    ex = ds.generate_examples(1)[0]
    data = json.loads(ex.model_dump_json())
    assert data["expected_responses"] == [] and set(data["extra"]) == {"env", "params", "seed", "label"}


USER_MODULE = '''
from ltm_harness.envs import ActiveEnv, EnvHeader, EnvParams, Space, register_env
from ltm_harness._envs.in_conversation import EnvDataset, InConversation


class StairsParams(EnvParams):
    height: int = 3


@register_env
class Stairs(ActiveEnv):
    test_name = "stairs_docs_example"
    Params = StairsParams

    @property
    def header(self):
        return EnvHeader(name="stairs", kind="active", action_space=Space(description="a move", choices=("climb", "rest")),
                         observation_space=Space(description="floor"), info="climb to the top", min_score=0, max_score=1)

    def default_max_steps(self):
        return 2 * self.params.height

    def _reset(self):
        self.floor = 0

    def _act(self, action):
        if action == "climb":
            self.floor += 1
        done = self.floor == self.params.height
        return (self.params.height / self.steps if done else 0.0), done, f"You {action}."

    def _observe(self):
        return {"floor": getattr(self, "floor", 0)}

    def rules(self):
        return "Climb to the top floor."

    def describe(self, observation):
        return f"You are on floor {observation['floor']}."

    def oracle_action(self):
        return "climb"

    def summary(self):
        return f"You are on floor {self.floor}."


class StairsArgs(StairsParams, InConversation):
    pass


class EnvStairs(EnvDataset):
    name = "env_stairs"
    env_test = "stairs_docs_example"
    description = "Climb the stairs."
    Params = StairsArgs
'''


def test_a_user_environment_runs_in_a_conversation_from_a_dataset_folder(tmp_path: Path):
    from ltm_harness._cli.main import main
    from ltm_harness.envs import ENVIRONMENTS

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "stairs.py").write_text(USER_MODULE, encoding="utf-8")
    (tmp_path / "c.yml").write_text(
        "config: {run_name: stairs, dataset_dirs: [mine]}\n"
        "datasets:\n  args: {memory_span: 1500, dataset_examples: 2}\n"
        "  datasets:\n    - name: env_stairs\n      args: {height: 4}\n    - name: colours\n", encoding="utf-8")
    try:
        code = main(["run", "-c", str(tmp_path / "c.yml"), "-a", "oracle", "-a", "null", "--results", str(tmp_path),
                     "--quiet"])
        assert code == 0
        summary = json.loads((tmp_path / "stairs" / "summary.json").read_text())
        scores = {a["agent"]: {d["dataset"]: d["score"] for d in a["datasets"]} for a in summary["agents"]}
        assert scores["oracle"]["env_stairs"] == 1.0 and scores["null"]["env_stairs"] == 0.0
    finally:
        ENVIRONMENTS.unregister("stairs_docs_example")
