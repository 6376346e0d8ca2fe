"""One episode loop for every environment, whoever acts in it, and the text a chat agent plays it through.

`play_episode` runs one episode: reset, then act / step until the episode is done, truncated (the step cap), or a
hook says stop. Who acts is an `Actor`: a chat agent in the conversation (`ChatActor`, which frames every step as
one message, the same way in every mode), a Python agent of an aiVLE suite (on a worker thread), or a policy.

A chat agent plays an environment through its `TextEnv` face: the message for an observation, the reply read back
as an action, the summary of a finished episode, and (for the oracle calibration agent only) the best reply now.
`ActiveText` is that face of an active environment; `ProblemSet` turns a passive problem set into an episode of one
step per page of problems, graded at the last page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Coroutine, Protocol, TypeVar, runtime_checkable

from ltm_harness._envs.base import ActiveEnv, PassiveEnv

from ltm_harness._envs.header import Action, GradedAnswers, InvalidAction, Observation

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Step:
    """One step of an episode (the aiVLE `full_state`, typed)."""

    t: int  # 0-based step within the episode
    state: Any  # the observation acted on
    action: Any
    reward: float
    next_state: Any
    done: bool
    truncated: bool  # stopped by the step cap, not by the environment
    info: dict[str, Any]

    @property
    def invalid(self) -> bool:
        return bool(self.info.get("invalid"))


class StepEnv(Protocol):
    """An environment as the loop drives it: `step` gives (observation, reward, done, truncated, info)."""

    async def reset(self) -> Any: ...

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]: ...


class Actor:
    """Who acts in an episode. `begin` is called after the reset, before the first action; `observe` after every
    step (the chat actor records it in the conversation's event log)."""

    async def begin(self) -> None:
        return None

    async def act(self, observation: Any, last: Step | None) -> Any:
        raise NotImplementedError

    async def observe(self, step: Step) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Episode:
    steps: int
    total_reward: float
    done: bool  # the environment ended the episode (not the step cap, nor a hook)
    last: Step | None


async def play_episode(env: StepEnv, actor: Actor, *, max_steps: int | None = None,
                       on_step: Callable[[Step], Awaitable[bool]] | None = None) -> Episode:
    """One episode. `on_step` is awaited after every step (the last one too); True stops the episode there."""
    observation = await env.reset()
    await actor.begin()
    last: Step | None = None
    total = 0.0
    t = 0
    while max_steps is None or t < max_steps:
        action = await actor.act(observation, last)
        next_state, reward, done, truncated, info = await env.step(action)
        truncated = truncated or (not done and max_steps is not None and t + 1 == max_steps)
        last = Step(t, observation, action, reward, next_state, done, truncated, info)
        t += 1
        total += reward
        await actor.observe(last)
        stop = await on_step(last) if on_step is not None else False
        if done or truncated or stop:
            break
        observation = next_state
    return Episode(t, total, bool(last and last.done), last)


def run_inline(coro: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never waits on anything (the loop over in-process environments and
    policies), from synchronous code, with no event loop."""
    try:
        coro.send(None)
    except StopIteration as stop:
        value: T = stop.value
        return value
    coro.close()
    raise RuntimeError("run_inline: the episode waited on something; run it with asyncio instead")


# -- the text face of an environment -----------------------------------------------------------------------
@runtime_checkable
class TextEnv(Protocol):
    """An environment a chat agent plays through text, for many episodes."""

    @property
    def score(self) -> float:
        """The finished episode's score (the environment's own measure; may differ from the reward sum)."""

    @property
    def score_range(self) -> tuple[float, float]:
        """The lowest and highest possible episode score."""

    def reset(self) -> Any:
        """Start a new episode; return its first observation."""

    def act(self, action: Any) -> tuple[Any, float, bool, dict[str, Any]]:
        """Apply the parsed reply: (observation, reward, done, info); info["invalid"] marks a refused reply."""

    def parse_action(self, reply: str) -> Any:
        """The agent's reply read as an action (a refused reply is still passed to `act`)."""

    def prompt(self, observation: Any, first: bool) -> str:
        """The message for `observation`: on the first step of an episode with the rules, always with
        how to reply."""

    def summary(self) -> str:
        """The finished episode's outcome in one sentence."""

    def oracle_hint(self) -> str | None:
        """The best reply now. Privileged: handed only to the oracle calibration agent."""


class InlineSteps:
    """A `TextEnv` (or any env with reset/act) as the loop drives it, in this thread."""

    def __init__(self, env: TextEnv) -> None:
        self.env = env

    async def reset(self) -> Any:
        return self.env.reset()

    async def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, done, info = self.env.act(action)
        return observation, float(reward), bool(done), bool(info.get("truncated", False)), dict(info or {})


class ActiveText:
    """An active environment played move by move; `label` names it in every message (default: its header name)."""

    def __init__(self, env: ActiveEnv, label: str | None = None) -> None:
        self.env = env
        self.label = label

    @property
    def score(self) -> float:
        return self.env.score

    @property
    def score_range(self) -> tuple[float, float]:
        return self.env.header.min_score, self.env.header.max_score

    def reset(self) -> Observation:
        return self.env.reset()

    def act(self, action: Action | InvalidAction) -> tuple[Any, float, bool, dict[str, Any]]:
        observation, reward, done, info = self.env.act(action)
        return observation, reward, done, info

    def parse_action(self, reply: str) -> Action | InvalidAction:
        return self.env.parse_action(reply)

    def prompt(self, observation: Any, first: bool) -> str:
        return self.env.prompt(observation, label=self.label, first=first)

    def summary(self) -> str:
        return self.env.summary()

    def oracle_hint(self) -> str | None:
        return json.dumps({"action": self.env.oracle_action()})


@dataclass(frozen=True, slots=True)
class Page:
    """A page of a problem set: its problems, where they start, and the worked examples shown with it."""

    problems: list[str]
    start: int
    number: int  # 0-based
    pages: int


class ProblemSet:
    """A passive problem set as an episode: one step per page of `page_size` problems (all at once by default),
    graded at the last. With `reseed`, every episode draws a new problem set, seeded by `reseed(episode number)`."""

    def __init__(self, env: PassiveEnv, *, label: str | None = None, page_size: int | None = None,
                 reseed: Callable[[int], int] | None = None) -> None:
        self.env = env
        self.label = label
        self.page_size = page_size
        self.reseed = reseed
        self.episodes = 0
        self.problems: list[str] = []
        self.answers: list[str | None] = []
        self.graded: GradedAnswers | None = None
        self._pages: list[tuple[int, int]] = []
        self._page_no = 0

    @property
    def score(self) -> float:
        return self.graded.score if self.graded is not None else 0.0

    @property
    def score_range(self) -> tuple[float, float]:
        return self.env.header.min_score, self.env.header.max_score

    def reset(self) -> Page:
        if self.reseed is not None:
            self.env.seed(self.reseed(self.episodes))
        self.episodes += 1
        self.problems = self.env.get_test()
        size = self.page_size or len(self.problems)
        self._pages = [(a, min(len(self.problems), a + size)) for a in range(0, len(self.problems), size)]
        self.answers, self.graded, self._page_no = [], None, 0
        return self._page()

    def _page(self) -> Page:
        a, b = self._pages[self._page_no]
        return Page(self.problems[a:b], a, self._page_no, len(self._pages))

    def act(self, action: list[str | None]) -> tuple[Any, float, bool, dict[str, Any]]:
        self.answers.extend(action)
        self._page_no += 1
        if self._page_no < len(self._pages):
            return self._page(), 0.0, False, {}
        self.graded = self.env.grade(self.answers)
        return None, self.graded.score, True, {"invalid": all(a is None for a in self.answers),
                                               "correct": self.graded.n_correct}

    def parse_action(self, reply: str) -> list[str | None]:
        page = self._page()
        return self.env.parse_answers(reply, len(page.problems), start=page.start)

    def prompt(self, observation: Page, first: bool) -> str:
        train = self.env.get_train() if observation.number == 0 else ()
        return self.env.render_problems(observation.problems, start=observation.start, train=train, label=self.label,
                                        part=(observation.number + 1, observation.pages))

    def summary(self) -> str:
        correct = self.graded.n_correct if self.graded is not None else 0
        return f"You answered {correct} of {len(self.problems)} right."

    def oracle_hint(self) -> str | None:
        page = self._page()
        return json.dumps(self.env.oracle_answers()[page.start:page.start + len(page.problems)])


# -- chat agents ------------------------------------------------------------------------------------------------
Ask = Callable[..., Awaitable[str]]  # ctx.ask(text, oracle=hint) -> the reply


class ChatActor(Actor):
    """A chat agent acting in an episode: each step is one question in the conversation, framed by `frame`
    (by default the environment's own message), the reply read back as the action. `record` is told every step
    (a session writes it to the event log)."""

    def __init__(self, ask: Ask, env: TextEnv, record: Callable[[Step], None] | None = None) -> None:
        self.ask = ask
        self.env = env
        self.record = record

    def frame(self, message: str, last: Step | None) -> str:
        """The message a step is said with; subclasses add what comes around the environment's own."""
        return message

    async def act(self, observation: Any, last: Step | None) -> Any:
        text = self.frame(self.env.prompt(observation, last is None), last)
        reply = await self.ask(text, oracle=self.env.oracle_hint())
        return self.env.parse_action(reply)

    async def observe(self, step: Step) -> None:
        if self.record is not None:
            self.record(step)
