"""Test cases: time limits in float seconds from any thread, partial results, agent failures as
string errors, seeds before resets, t_max, Gym-compatible environments."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from ltm_harness.aivle import Agent, ReinforcementLearningTestCase, RewardEvaluator, StepCountEvaluator, TestSuite
from ltm_harness.envs import make_env


class Constant(Agent):
    def __init__(self, action: Any = 1, delay: float = 0.0, fail_at: tuple[int, int] | None = None) -> None:
        self.action, self.delay, self.fail_at = action, delay, fail_at
        self.episode, self.t = 0, 0

    def reset(self) -> None:
        self.episode += 1
        self.t = 0

    def step(self, state: Any) -> Any:
        self.t += 1
        if self.fail_at == (self.episode, self.t):
            raise ValueError("the agent broke")
        if self.delay:
            time.sleep(self.delay)
        return self.action


def bandit_case(**kw: Any) -> ReinforcementLearningTestCase:
    args: dict[str, Any] = dict(case_id="bandit", time_limit=10.0, n_runs=3, agent_init={},
                                env=make_env("bandit", probabilities=[0.2, 0.9], horizon=4),
                                evaluator=RewardEvaluator(), t_max=4)
    args.update(kw)
    return ReinforcementLearningTestCase(**args)


def test_a_python_agent_is_graded():
    result = bandit_case(seeds=[1, 2, 3]).run(lambda: Constant(2))
    assert result.error is None and result.name == "reward evaluation" and len(result.detail) == 3
    assert result.value == sum(result.detail) / 3
    again = bandit_case(seeds=[1, 2, 3]).run(lambda: Constant(2))
    assert again == result  # seeded runs are reproducible


def test_a_timed_out_case_returns_partial_results_with_an_error():
    case = bandit_case(time_limit=0.35, n_runs=1000)
    started = time.perf_counter()
    result = case.run(lambda: Constant(2, delay=0.02))
    elapsed = time.perf_counter() - started
    assert elapsed >= 0.3  # not before its time limit (no upper bound: a loaded machine is slower, not wrong)
    n = len(result.detail)  # the episode cut short counts too, with its partial reward (as in the reference)
    assert n >= 1 and n - case.episodes_done in (0, 1) and result.value == sum(result.detail) / n  # (how many: the speed)
    assert result.error is not None and result.error.startswith(
        f"time limit of 0.35 s exceeded after {case.episodes_done} completed "
        f"{'episode' if case.episodes_done == 1 else 'episodes'} of 1000")
    assert isinstance(result.error, str)


def test_an_agent_that_never_returns_does_not_hang_the_suite():
    release = threading.Event()
    try:
        case = bandit_case(time_limit=0.2, n_runs=2)
        started = time.perf_counter()
        result = case.run(lambda: Stuck(release))  # returns (a hang would never get here): no clock needed
        assert time.perf_counter() - started >= 0.2
        # the first episode had started (environment and agent reset): it counts, with 0 reward, as in the reference
        assert result.value == 0.0 and result.detail == [0.0] and case.episodes_done == 0
        assert result.error == "time limit of 0.2 s exceeded after 0 completed episodes of 2 (0 steps)"
    finally:
        release.set()


class Stuck(Agent):
    def __init__(self, release: threading.Event) -> None:
        self.release = release

    def reset(self) -> None:
        pass

    def step(self, state: Any) -> Any:
        self.release.wait()
        return 1


def test_an_agent_failing_before_its_first_episode_gives_an_error_not_a_crash():
    def create(**init: Any) -> Agent:
        raise RuntimeError("cannot load weights")

    result = bandit_case().run(create)
    assert result.value is None and result.detail == []  # no division by zero: no value, and the error says why
    assert result.error == ("create_agent(**agent_init) failed: RuntimeError: cannot load weights; "
                            "no episode was started, so there is no mean to report")
    result = bandit_case(agent_init={"unexpected": 1}).run(lambda: Constant())
    assert result.error is not None and result.error.startswith("create_agent(**agent_init) failed: TypeError")


def test_an_agent_failing_mid_run_keeps_the_completed_episodes():
    result = bandit_case().run(lambda: Constant(2, fail_at=(2, 3)))
    # run 1 gave 4 steps; run 2 was cut at its third step, and counts with the reward of its first two
    assert len(result.detail) == 2 and result.value == (result.detail[0] + result.detail[1]) / 2
    steps = bandit_case(evaluator=StepCountEvaluator()).run(lambda: Constant(2, fail_at=(2, 3)))
    assert steps.detail == {"total_episodes": 2, "total_steps": 6} and steps.value == 3.0
    assert result.error == "agent.step() in run 2 at step 3 failed: ValueError: the agent broke"


def test_invalid_actions_of_a_python_agent_are_steps_not_errors():
    result = bandit_case(evaluator=StepCountEvaluator()).run(lambda: Constant(action="pull!"))
    assert result.error is None and result.value == 4.0


class Recorder:
    """A Gym-style environment that records the order of calls: seed via reset(seed=), 5-tuples."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.t = 0

    def reset(self, seed: int | None = None) -> tuple[int, dict]:
        self.calls.append(f"reset(seed={seed})")
        self.t = 0
        return 0, {}

    def step(self, action: Any) -> tuple[int, float, bool, bool, dict]:
        self.t += 1
        self.calls.append("step")
        return self.t, 1.0, self.t == 2, False, {}


class SeededRecorder(Recorder):
    def seed(self, seed: int) -> None:
        self.calls.append(f"seed({seed})")


def test_seeds_are_applied_before_each_reset():
    env = SeededRecorder()
    result = bandit_case(env=env, n_runs=2, seeds=[7, 8], t_max=5).run(lambda: Constant())
    assert env.calls == ["seed(7)", "reset(seed=None)", "step", "step", "seed(8)", "reset(seed=None)", "step", "step"]
    assert result.value == 2.0
    gym = Recorder()
    bandit_case(env=gym, n_runs=2, seeds=[7, 8], t_max=5).run(lambda: Constant())
    assert gym.calls == ["reset(seed=7)", "step", "step", "reset(seed=8)", "step", "step"]
    plain = Recorder()
    bandit_case(env=plain, n_runs=1, t_max=5).run(lambda: Constant())
    assert plain.calls[0] == "reset(seed=None)"


def test_seeds_make_our_environments_reproducible():
    def layouts(seeds: list[int]) -> list[tuple]:
        seen: list[tuple] = []
        env = make_env("keydoor")

        class Watch(Agent):
            def reset(self) -> None:
                pass

            def step(self, state: Any) -> Any:
                if state["step"] == 0:
                    seen.append(tuple(state["map"]))
                return "up"

        bandit_case(env=env, n_runs=len(seeds), seeds=seeds, t_max=1).run(lambda: Watch())
        return seen

    three = layouts([1, 2, 1])
    assert three[0] == three[2] == layouts([1])[0] != three[1]
    assert layouts([1])[0] != layouts([2])[0]


def test_t_max_truncates_episodes():
    case = ReinforcementLearningTestCase("keydoor", time_limit=10.0, n_runs=3, agent_init=None,
                                         env=make_env("keydoor"), evaluator=StepCountEvaluator(), t_max=2)
    result = case.run(lambda: Constant("up"))
    assert result.value == 2.0 and result.detail == {"total_episodes": 3, "total_steps": 6}


@pytest.mark.parametrize("kw,message", [
    ({"seeds": [1, 2]}, "seeds has 2 entries; give none or one per run \\(n_runs = 3\\)"),
    ({"time_limit": 0}, "time_limit must be a positive number"),
    ({"time_limit": float("nan")}, "time_limit must be a positive number"),
    ({"n_runs": 0}, "n_runs must be a whole number"),
    ({"t_max": 0}, "t_max must be a whole number"),
    ({"case_id": ""}, "case_id must be a non-empty string"),
    ({"evaluator": object()}, "evaluator must be an Evaluator"),
    ({"env": object()}, "env must have reset\\(\\) and act\\(\\) or step\\(\\)"),
])
def test_case_arguments_are_checked(kw, message):
    with pytest.raises(ValueError, match=message):
        bandit_case(**kw)


def test_suite_arguments_are_checked():
    with pytest.raises(ValueError, match="used twice"):
        TestSuite("s", [bandit_case(), bandit_case()])
    with pytest.raises(ValueError, match="has no cases"):
        TestSuite("s", [])
    with pytest.raises(ValueError, match="must be a TestCase"):
        TestSuite("s", ["case"])  # type: ignore[list-item]


def test_time_limits_hold_outside_the_main_thread():
    out: dict[str, Any] = {}

    def target() -> None:
        suite = TestSuite("threads", [bandit_case(time_limit=0.25, n_runs=1000)])
        out["result"] = suite.run(lambda: Constant(2, delay=0.01))

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=5)
    assert not thread.is_alive()
    result = out["result"]["results"][0]["result"]
    assert result["error"].startswith("time limit of 0.25 s exceeded")


async def test_run_works_inside_a_running_event_loop():
    suite = TestSuite("loop", [bandit_case()])
    data = suite.run(lambda: Constant(2))  # sync call from async code: runs on another thread
    assert data["results"][0]["result"]["error"] is None
    result = await suite.run_async(lambda: Constant(2))
    assert len(result.results[0].result.detail) == 3
    assert asyncio.get_running_loop().is_running()


def test_the_environment_is_handed_over_only_when_allowed():
    class Curious(Constant):
        def bind_env(self, env: Any) -> None:
            self.peeked = env.oracle_action()

    agents: list[Curious] = []

    def create() -> Curious:
        agents.append(Curious(2))
        return agents[-1]

    bandit_case().run(create)
    assert agents[-1].peeked == 2
    bandit_case(bind_env=False).run(create)
    assert not hasattr(agents[-1], "peeked")


async def test_a_suite_cancelled_as_a_case_ends_ends_cancelled():
    # the kill lands as the case's episodes end (on Python 3.11, wait_for returned then, losing the cancellation, and
    # the suite went on to its next case)
    victim: list[asyncio.Future[Any]] = []
    made: list[str] = []

    class KilledAtItsEnd(ReinforcementLearningTestCase):
        async def play(self, create_agent: Any, worker: Any) -> None:
            await super().play(create_agent, worker)
            victim[0].cancel()

    first = KilledAtItsEnd(case_id="first", time_limit=10.0, n_runs=1, agent_init={},
                           env=make_env("bandit", probabilities=[0.2, 0.9], horizon=4), evaluator=RewardEvaluator(),
                           t_max=4)
    suite = TestSuite("killed", [first, bandit_case(case_id="second")])
    victim.append(asyncio.ensure_future(suite.run_async(lambda: made.append("agent") or Constant(2))))
    async with asyncio.timeout(60):  # a hang guard, not a speed check
        with pytest.raises(asyncio.CancelledError):
            await victim[0]
    assert made == ["agent"] and first.episodes_done == 1  # the second case never started
