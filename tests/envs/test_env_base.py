"""The environment base: headers, spaces, normalisation, the step cap and invalid actions."""

from __future__ import annotations

import math
import random

import pytest
from pydantic import ValidationError

from ltm_harness.envs import ActiveEnv, EnvHeader, InvalidAction, Space, make_env
from ltm_harness._envs.header import Action, Observation


def header(min_score: float, max_score: float) -> EnvHeader:
    return EnvHeader(name="t", kind="active", action_space=Space(description="a", choices=("x",)),
                     observation_space=Space(description="o"), info="", min_score=min_score, max_score=max_score)


@pytest.mark.parametrize("low,high", [(1.0, 1.0), (2.0, 1.0), (0.0, math.inf), (math.nan, 1.0)])
def test_header_rejects_min_not_below_max(low, high):
    with pytest.raises(ValidationError, match="min_score|finite"):
        header(low, high)


@pytest.mark.parametrize("score,expected", [(-5.0, 0.0), (0.0, 0.0), (5.0, 0.5), (10.0, 1.0), (11.0, 1.0)])
def test_normalise_clips_to_zero_one(score, expected):
    assert header(0.0, 10.0).normalise(score) == expected
    assert header(-10.0, 10.0).normalise(0.0) == 0.5


def test_spaces():
    moves = Space(description="m", choices=("up", "down"))
    assert moves.contains("up") and not moves.contains("Up") and not moves.contains(1)
    numbers = Space(description="n", low=1, high=3)
    assert numbers.contains(3) and not numbers.contains(4) and not numbers.contains(True) and not numbers.contains("2")
    rng = random.Random(0)
    assert {numbers.sample(rng) for _ in range(100)} == {1, 2, 3}
    assert {moves.sample(rng) for _ in range(100)} == {"up", "down"}
    with pytest.raises(ValidationError):
        Space(description="bad", low=3, high=1)
    with pytest.raises(ValidationError):
        Space(description="bad", low=1)
    with pytest.raises(ValidationError):
        Space(description="bad", choices=("a", "A"))
    with pytest.raises(ValidationError):
        Space(description="bad", choices=("a",), low=1, high=2)
    with pytest.raises(ValueError):
        Space(description="nothing").sample(rng)


class Corridor(ActiveEnv):
    """A test environment: walk right `length` times; reward 1 at the end."""

    test_name = "corridor"

    @property
    def header(self) -> EnvHeader:
        return EnvHeader(name="corridor", kind="active", action_space=Space(description="m", choices=("left", "right")),
                         observation_space=Space(description="x"), info="", min_score=0.0, max_score=1.0)

    def default_max_steps(self) -> int:
        return 5

    def _reset(self) -> None:
        self.x = 0

    def _act(self, action: Action) -> tuple[float, bool, str]:
        self.x += 1 if action == "right" else -1
        return (1.0, True, "out") if self.x == 3 else (0.0, False, f"at {self.x}")

    def _observe(self) -> Observation:
        return {"x": getattr(self, "x", 0)}

    def rules(self) -> str:
        return "Walk right."

    def describe(self, observation: Observation) -> str:
        return f"You are at {observation['x']}."

    def oracle_action(self) -> Action:
        return "right"

    def summary(self) -> str:
        return "done"


def test_invalid_actions_cost_a_step_and_the_penalty_and_the_episode_goes_on():
    env = Corridor(invalid_penalty=0.25)
    env.reset()
    obs, reward, done, info = env.act(InvalidAction(reply="hmm", reason="no action"))
    assert (reward, done, info["invalid"], obs["x"], obs["step"], obs["steps_left"]) == (-0.25, False, True, 0, 1, 4)
    assert "not a valid action" in obs["event"]
    obs, reward, done, info = env.act("jump")  # outside the action space: invalid as well
    assert info["invalid"] and env.invalid[-1][1].reason == "'jump' is not an allowed action"
    assert [step for step, _ in env.invalid] == [1, 2]
    for _ in range(3):
        obs, reward, done, info = env.act("right")
    assert done and reward == 1.0 and env.steps == 5
    assert env.score == pytest.approx(0.5) and env.normalised_score == pytest.approx(0.5)
    with pytest.raises(RuntimeError, match="episode is over"):
        env.act("right")
    assert env.invalid_report()[0] == "step 1: invalid (no action): 'hmm'"


def test_the_step_cap_ends_the_episode_and_counts_invalid_steps():
    env = Corridor()
    env.reset()
    results = [env.act(InvalidAction(reply="?", reason="none")) for _ in range(5)]
    assert [r.done for r in results] == [False] * 4 + [True]
    assert results[-1].info["truncated"] and "last of the 5 steps" in results[-1].observation["event"]
    assert env.score == 0.0
    env.reset()  # a new episode starts clean
    assert env.steps == 0 and env.invalid == [] and not env.done


def test_prompt_and_render():
    env = Corridor()
    with pytest.raises(RuntimeError, match="before reset"):
        env.render()
    first = env.prompt(env.reset(), label="corridor #1", first=True)
    assert first.splitlines()[0] == "[corridor #1] Step 1 of at most 5."
    assert "Walk right." in first and "You are at 0." in first and "left or right" in first
    obs, *_ = env.act("right")
    later = env.prompt(obs, label="corridor #1")
    assert "Walk right." not in later and "at 1" in later and "Step 2 of at most 5." in later
    assert env.render() == "at 1\nYou are at 1."


def test_header_is_checked_when_the_environment_is_built():
    class Flat(Corridor):
        @property
        def header(self) -> EnvHeader:
            return EnvHeader(name="flat", kind="active", action_space=Space(description="m", choices=("left",)),
                             observation_space=Space(description="x"), info="", min_score=1.0, max_score=1.0)

    with pytest.raises(ValidationError, match=r"flat: min_score \(1\) must be below max_score \(1\)"):
        Flat()


def test_a_new_environment_is_registered_by_name_and_used_everywhere():
    from ltm_harness._errors import DefinitionError
    from ltm_harness.envs import ENVIRONMENTS, register_env
    from ltm_harness._envs.play import evaluate_policy

    try:
        assert register_env(Corridor) is Corridor
        assert register_env(Corridor) is Corridor  # again: harmless
        env = make_env("corridor", seed=1, invalid_penalty=0.5)
        assert isinstance(env, Corridor) and env.params.invalid_penalty == 0.5
        assert evaluate_policy("corridor", trials=2).mean == 1.0

        class Other(Corridor):
            pass

        with pytest.raises(DefinitionError, match="environment name 'corridor' is used by code in "):
            register_env(Other)

        class Nameless(Corridor):
            test_name = ""

        with pytest.raises(DefinitionError, match="has no test_name"):
            register_env(Nameless)
    finally:
        ENVIRONMENTS.unregister("corridor")
