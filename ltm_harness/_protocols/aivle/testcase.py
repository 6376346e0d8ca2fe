"""Test cases: run an environment with an agent for `n_runs` episodes within a time limit.

The time limit (float seconds) covers creating the agent and every episode. It is enforced with
`asyncio.timeout` while agent and environment code run on the case's worker thread, so it works in
any thread and for fractions of a second (not `asyncio.wait_for`: on Python 3.11 it returns when a cancellation
comes as the case ends, and the suite would go on to its next case). A case whose agent fails (even in `create_agent`, before
any episode) or runs out of time still returns the evaluator's (partial) result, with `error` set
to a string that says what failed where; it never raises.
"""

from __future__ import annotations

import asyncio
import math
from abc import ABC, abstractmethod
from typing import Any, Callable, Mapping, Sequence

from ltm_harness._protocols.aivle.evaluator import EvaluationResult, Evaluator
from ltm_harness._envs.episode import Actor, Step, play_episode
from ltm_harness._errors import LTMError
from ltm_harness._protocols.aivle.agent import ChatAgents
from ltm_harness._protocols.aivle.worker import CaseFailure, Worker, guarded, run_sync
from ltm_harness._tokens import plural

CreateAgent = Callable[..., Any]  # makes an aiVLE agent from `agent_init`
CLOSE_SECONDS = 5.0  # time given to agent.close() after a case (not counted in the limit)


class TestCase(ABC):
    """A graded case: `play` runs the episodes, feeding `evaluator`; `run` adds the time limit and
    turns every failure into the result's `error`."""

    __test__ = False

    def __init__(self, case_id: str, time_limit: float, n_runs: int, agent_init: Mapping[str, Any] | None,
                 env: Any, evaluator: Evaluator) -> None:
        if not isinstance(case_id, str) or not case_id:
            raise ValueError("case_id must be a non-empty string")
        if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not math.isfinite(time_limit) \
                or time_limit <= 0:
            raise ValueError(f"case {case_id!r}: time_limit must be a positive number of seconds, not {time_limit!r}")
        if isinstance(n_runs, bool) or not isinstance(n_runs, int) or n_runs < 1:
            raise ValueError(f"case {case_id!r}: n_runs must be a whole number of at least 1, not {n_runs!r}")
        if not isinstance(evaluator, Evaluator):
            raise ValueError(f"case {case_id!r}: evaluator must be an Evaluator, not {type(evaluator).__name__}")
        self.case_id = case_id
        self.time_limit = float(time_limit)
        self.n_runs = n_runs
        self.agent_init: dict[str, Any] = dict(agent_init or {})
        self.env = env
        self.evaluator = evaluator
        self.episodes_done = 0
        self.steps_done = 0
        self.agent: Any = None

    @abstractmethod
    async def play(self, create_agent: CreateAgent, worker: Worker) -> None:
        """Create the agent (store it in `self.agent`) and run the episodes, feeding `self.evaluator`
        and counting `episodes_done` / `steps_done`. Call agent and environment code through
        `worker.call` (wrapped in `guarded`) so that the time limit holds."""

    def time_out_message(self) -> str:
        return (f"time limit of {self.time_limit:g} s exceeded after {self.episodes_done} completed "
                f"{'episode' if self.episodes_done == 1 else 'episodes'} of {self.n_runs} ({plural(self.steps_done, 'step')})")

    async def run_async(self, create_agent: CreateAgent | ChatAgents) -> EvaluationResult:
        """Run the case with the agents `create_agent(**agent_init)` makes; a chat agent of the harness (from
        `chat_agent_factory`) plays it as one conversation instead."""
        self.evaluator.reset()
        self.episodes_done = self.steps_done = 0
        self.agent = None
        worker = Worker(f"ltm-harness-case-{self.case_id}")
        error: str | None = None
        timed_out = False
        try:
            if isinstance(create_agent, ChatAgents):
                error = await create_agent.play_case(self, worker)
            else:
                async with asyncio.timeout(self.time_limit):
                    await self.play(create_agent, worker)
        except TimeoutError:
            timed_out = True
            error = self.time_out_message()
        except CaseFailure as exc:
            error = str(exc)
        except Exception as exc:  # a bug in the case itself: still a result, never a crash
            if isinstance(exc, LTMError) and isinstance(create_agent, ChatAgents):
                raise  # the harness's agent or run folder failed, not the case: the agent's run stops, resumable
            error = f"the test case failed: {type(exc).__name__}: {exc}"
        finally:
            close = getattr(self.agent, "close", None)
            if not timed_out and callable(close):
                try:
                    async with asyncio.timeout(CLOSE_SECONDS):
                        await worker.call(close)
                except Exception:  # closing is best effort; the result is already decided
                    pass
            worker.stop()
        try:
            result = self.evaluator.get_result()
        except Exception as exc:
            result = EvaluationResult(name=getattr(self.evaluator, "name", type(self.evaluator).__name__),
                                      error=f"evaluator.get_result() failed: {type(exc).__name__}: {exc}")
        if error:
            result = result.model_copy(update={"error": "; ".join(e for e in (error, result.error) if e)})
        return result

    def run(self, create_agent: CreateAgent | ChatAgents) -> EvaluationResult:
        """`run_async` from synchronous code (any thread)."""
        return run_sync(lambda: self.run_async(create_agent))


class EnvDriver:
    """Drives an environment of this harness (`act`) or a Gym-compatible one (`step`, 4- or 5-tuples;
    `reset` returning an observation or (observation, info)). A seed is applied before the reset:
    with the environment's `seed(s)` when it has one, else as `reset(seed=s)`."""

    def __init__(self, env: Any) -> None:
        if not callable(getattr(env, "reset", None)) or not (callable(getattr(env, "act", None))
                                                              or callable(getattr(env, "step", None))):
            raise ValueError(f"env must have reset() and act() or step(); {type(env).__name__} has not")
        self.env = env
        self._pending_seed: int | None = None

    def seed(self, seed: int) -> None:
        method = getattr(self.env, "seed", None)
        if callable(method):
            method(seed)
        else:
            self._pending_seed = seed

    def reset(self) -> Any:
        if self._pending_seed is not None:
            seed, self._pending_seed = self._pending_seed, None
            out = self.env.reset(seed=seed)
        else:
            out = self.env.reset()
        if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict):
            return out[0]
        return out

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """(next_state, reward, done, truncated, info)."""
        method = getattr(self.env, "act", None)
        out = method(action) if callable(method) else self.env.step(action)
        if len(out) == 5:
            obs, reward, terminated, truncated, info = out
            return obs, float(reward), bool(terminated), bool(truncated), dict(info or {})
        obs, reward, done, info = out
        info = dict(info or {})
        return obs, float(reward), bool(done), bool(info.get("truncated", False)), info


class ReinforcementLearningTestCase(TestCase):
    """`n_runs` episodes of at most `t_max` steps each. `seeds` is empty or has one seed per run,
    applied before that run's reset. The agent is created once (with `agent_init`), handed the
    environment (`bind_env`, if it has it) and reset before every episode.

    Agents run in this process, so the environment object handed to `bind_env` is theirs to read
    (chat agents need it to render observations). When grading untrusted Python agents, pass
    `bind_env=False`: they then only ever see the observations."""

    def __init__(self, case_id: str, time_limit: float, n_runs: int, agent_init: Mapping[str, Any] | None,
                 env: Any, evaluator: Evaluator, t_max: int, seeds: Sequence[int] | None = None,
                 bind_env: bool = True) -> None:
        super().__init__(case_id, time_limit, n_runs, agent_init, env, evaluator)
        if isinstance(t_max, bool) or not isinstance(t_max, int) or t_max < 1:
            raise ValueError(f"case {case_id!r}: t_max must be a whole number of at least 1, not {t_max!r}")
        seeds = list(seeds or [])
        if seeds and len(seeds) != n_runs:
            raise ValueError(f"case {case_id!r}: seeds has {len(seeds)} entries; give none or one per run "
                             f"(n_runs = {n_runs})")
        self.t_max = t_max
        self.seeds = seeds
        self.bind_env = bind_env
        self.driver = EnvDriver(env)
        self.where = "run 1"  # the run being played, for the messages of failures

    async def play(self, create_agent: CreateAgent, worker: Worker) -> None:
        self.agent = agent = await guarded("create_agent(**agent_init)", worker.call(create_agent, **self.agent_init))
        bind = getattr(agent, "bind_env", None) if self.bind_env else None
        if callable(bind):
            await guarded("agent.bind_env(env)", worker.call(bind, self.env))
        await self.episodes(_ThreadActor(agent, worker, self), worker)

    async def episodes(self, actor: Actor, worker: Worker) -> None:
        """The case's `n_runs` episodes played by `actor`, every step handed to the evaluator."""
        for run in range(self.n_runs):
            self.where = f"run {run + 1}"
            if self.seeds:
                await guarded(f"seeding the environment for {self.where}",
                              worker.call(self.driver.seed, self.seeds[run]))

            async def evaluate(step: Step, run: int = run) -> bool:
                full_state = {"state": step.state, "action": step.action, "reward": step.reward,
                              "next_state": step.next_state, "done": step.done, "truncated": step.truncated,
                              "info": step.info, "episode_count": run, "t": step.t}
                try:
                    self.evaluator.step(full_state)
                except Exception as exc:
                    raise CaseFailure(f"evaluator.step() in {self.where} at step {step.t + 1} failed: "
                                      f"{type(exc).__name__}: {exc}") from exc
                self.steps_done += 1
                return False

            await play_episode(_ThreadedEnv(self.driver, worker, self), _Counted(actor, self, run),
                               max_steps=self.t_max, on_step=evaluate)
            self.episodes_done += 1


class _Counted(Actor):
    """`actor`, telling the evaluator that an episode began once the environment and the agent were reset (where
    the reference grader resets its evaluator: from there on, the episode counts even if it is cut short)."""

    def __init__(self, actor: Actor, case: ReinforcementLearningTestCase, run: int) -> None:
        self.actor, self.case, self.run = actor, case, run

    async def begin(self) -> None:
        await self.actor.begin()
        try:
            self.case.evaluator.begin_episode(self.run)
        except Exception as exc:
            raise CaseFailure(f"evaluator.begin_episode() in {self.case.where} failed: "
                              f"{type(exc).__name__}: {exc}") from exc

    async def act(self, observation: Any, last: Step | None) -> Any:
        return await self.actor.act(observation, last)

    async def observe(self, step: Step) -> None:
        await self.actor.observe(step)


class _ThreadedEnv:
    """The case's environment, driven on its worker thread (so the time limit holds while it runs)."""

    def __init__(self, driver: EnvDriver, worker: Worker, case: ReinforcementLearningTestCase) -> None:
        self.driver, self.worker, self.case = driver, worker, case
        self.t = 0

    async def reset(self) -> Any:
        return await guarded(f"env reset for {self.case.where}", self.worker.call(self.driver.reset))

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return await guarded(f"env step in {self.case.where} at step {self.t}", self.worker.call(self.driver.step, action))


class _ThreadActor(Actor):
    """A Python agent of the suite, called on the worker thread: reset before every episode, then a step per move."""

    def __init__(self, agent: Any, worker: Worker, case: ReinforcementLearningTestCase) -> None:
        self.agent, self.worker, self.case = agent, worker, case

    async def begin(self) -> None:
        await guarded(f"agent.reset() before {self.case.where}", self.worker.call(self.agent.reset))

    async def act(self, observation: Any, last: Step | None) -> Any:
        t = last.t + 2 if last is not None else 1
        return await guarded(f"agent.step() in {self.case.where} at step {t}", self.worker.call(self.agent.step,
                                                                                               observation))
