"""Environments inside the long conversation: an episode (or a problem set) as a test program.

An `EnvDataset` is a dataset whose every example is one episode of an environment, with its own seed.
The definition (a TestExample) keeps the environment's name, params and seed in `extra`, so the same
episode is replayed on every run; its `script` is the longest possible episode (an agent that never
gives a valid action), which the scheduler uses to plan the conversation. While running, each step
is a question: the observation as text, the reply parsed into an action. Steps are spread over
`spread_percent` of the memory span (other tests and filler come in between), and a closing line
tells the agent how the episode ended. The score is the environment's normalised score.

Passive tests send their problem set in one message (or in pages of `page_size` problems), the
train examples with the first. The test answers stay inside the environment and are never said.
The oracle calibration agent is handed the optimal action (or the answers) with every message.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._envs.base import ActiveEnv, Env, PassiveEnv
from ltm_harness._envs.header import InvalidAction
from ltm_harness._envs.episode import ActiveText, Actor, ChatActor, InlineSteps, ProblemSet, Step, play_episode, run_inline
from ltm_harness._envs.catalog import env_class, make_env
from ltm_harness._authoring.example import TestExample, Wait
from ltm_harness._engine.program import TestContext, TestOutcome

PLANNING_REPLY = InvalidAction(reply="", reason="no reply yet")
REPLY_LIMIT = 200  # characters of an invalid reply kept in the reasons


class InConversation(BaseModel):
    """Dataset args of every environment dataset, besides the environment's own params."""

    model_config = ConfigDict(extra="forbid")

    spread_percent: float = Field(default=90.0, gt=0, le=100)  # steps spread over this share of the span


class PassiveInConversation(InConversation):
    page_size: int | None = Field(default=None, ge=1, le=10_000)  # problems per message (default: all in one)


CONVERSATION_ARGS = frozenset(PassiveInConversation.model_fields)


class EpisodeDefinition(BaseModel):
    """What `extra` of an environment test holds."""

    model_config = ConfigDict(extra="forbid")

    env: str
    params: dict[str, Any]
    seed: int
    label: str


class EnvDataset(DatasetInterface):
    """Base of the environment datasets: set `name`, `env_test` (a registry name) and `Params`
    (the environment's Params combined with `InConversation` or `PassiveInConversation`)."""

    env_test: ClassVar[str] = ""
    reset_message = ""

    def env_params(self) -> dict[str, Any]:
        """The params handed to the environment (the dataset args minus the conversation ones)."""
        return self.params.model_dump(mode="json", exclude=set(CONVERSATION_ARGS))

    def _spread(self) -> float:
        return float(getattr(self.params, "spread_percent", 90.0))

    def _page_size(self) -> int | None:
        size = getattr(self.params, "page_size", None)
        return int(size) if size else None

    def make_env(self, definition: EpisodeDefinition) -> Env:
        return make_env(definition.env, seed=definition.seed, **definition.params)

    # -- definitions ------------------------------------------------------------------------
    def generate_examples(self, num_examples: int) -> list[TestExample]:
        env_class(self.env_test)  # a clear error for a wrong registry name
        params = self.env_params()
        examples = []
        for i in range(num_examples):
            definition = EpisodeDefinition(env=self.env_test, params=params, seed=self.rng.randrange(2**31),
                                           label=f"{self.name} #{i + 1}")
            env = self.make_env(definition)
            if isinstance(env, ActiveEnv):
                script, expected = self._active_plan(env, definition.label), []
                description = (f"One episode of {env.header.name} (seed {definition.seed}). The script is the longest "
                               "possible episode (no valid action), used to plan the conversation; the agent's "
                               "messages follow its own actions.")
            else:
                assert isinstance(env, PassiveEnv)
                script, expected = self._passive_plan(env, definition.label), env.oracle_answers()
                description = f"The problem set of {env.header.name} (seed {definition.seed})."
            examples.append(TestExample(
                dataset_name=self.name, example_id=str(i), description=description, script=script,
                is_question=[True] * (len(script) - 1) + [False], waits=self._waits(len(script) - 1),
                expected_responses=expected, extra=definition.model_dump(mode="json"),
            ))
        return examples

    def _waits(self, asked: int) -> list[Wait]:
        """Question k (of `asked`) is said once k * spread / (asked - 1) percent of the span has passed;
        the closing line right after the last question."""
        if asked <= 1:
            return [Wait() for _ in range(asked + 1)]
        step = self._spread() / (asked - 1)
        return [Wait(percentage_finished=round((k + 1) * step, 6)) for k in range(asked - 1)] + [Wait(), Wait()]

    def _active_plan(self, env: ActiveEnv, label: str) -> list[str]:
        text = ActiveText(env, label)
        planner = _Planner(text)
        run_inline(play_episode(InlineSteps(text), planner))
        return [*planner.lines, self._closing(label, env.summary(), env.normalised_score)]

    def _passive_plan(self, env: PassiveEnv, label: str) -> list[str]:
        text = ProblemSet(env, label=label, page_size=self._page_size())
        planner = _Planner(text)
        run_inline(play_episode(InlineSteps(text), planner))
        return [*planner.lines, self._closing(label, text.summary(), 0.0)]

    @staticmethod
    def _closing(label: str, summary: str, normalised: float) -> str:
        return f"[{label}] That is the end of this task. {summary} Score: {normalised:.2f} out of 1."

    # -- the test program ---------------------------------------------------------------------
    async def run(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        definition = EpisodeDefinition.model_validate(example.extra)
        env = self.make_env(definition)
        if isinstance(env, ActiveEnv):
            return await self._play(env, definition, example, ctx)
        assert isinstance(env, PassiveEnv)
        return await self._answer(env, definition, example, ctx)

    async def _wait_after(self, example: TestExample, index: int, ctx: TestContext) -> None:
        wait = example.waits[index] if index < len(example.waits) else Wait()
        await ctx.wait(wait.tokens, wait.time, wait.percentage_finished)

    async def _play_in_conversation(self, text: ActiveText | ProblemSet, example: TestExample,
                                    ctx: TestContext) -> None:
        """The episode, one question per step, with the test's waits between steps."""

        async def between(step: Step) -> bool:
            if not (step.done or step.truncated):
                await self._wait_after(example, step.t, ctx)
            return False

        def record(step: Step) -> None:
            ctx.record_step(0, step.t, step.reward + 0.0, step.done, truncated=step.truncated, invalid=step.invalid,
                            reason=None if step.info.get("reason") is None else str(step.info["reason"]))

        await play_episode(InlineSteps(text), ChatActor(ctx.ask, text, record), on_step=between)

    async def _play(self, env: ActiveEnv, definition: EpisodeDefinition, example: TestExample,
                    ctx: TestContext) -> TestOutcome:
        label = definition.label
        await self._play_in_conversation(ActiveText(env, label), example, ctx)
        normalised = env.normalised_score
        await ctx.say(self._closing(label, env.summary(), normalised))
        h = env.header
        reasons = [f"{env.summary()} Score {env.score:g} in [{h.min_score:g}, {h.max_score:g}] -> {normalised:.3f}.",
                   *env.invalid_report(REPLY_LIMIT)]
        return TestOutcome(normalised, 1.0, reasons, raw_score=env.score)

    async def _answer(self, env: PassiveEnv, definition: EpisodeDefinition, example: TestExample,
                      ctx: TestContext) -> TestOutcome:
        label = definition.label
        problems = ProblemSet(env, label=label, page_size=self._page_size())
        await self._play_in_conversation(problems, example, ctx)
        graded, answers = problems.graded, problems.answers
        assert graded is not None
        normalised = env.header.normalise(graded.score)
        await ctx.say(self._closing(label, problems.summary(), normalised))
        expected = env.oracle_answers()
        wrong = [f"{i + 1}. {problems.problems[i]}: answered {answers[i]!r}, expected {expected[i]!r}"
                 for i, ok in enumerate(graded.correct) if not ok]
        unread = sum(a is None for a in answers)
        reasons = [f"{graded.n_correct} of {len(problems.problems)} right ({unread} unreadable) -> {normalised:.3f}.",
                   *wrong]
        return TestOutcome(normalised, 1.0, reasons, raw_score=graded.score)

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """None: an episode has no statement whose distance to a question is the point of the test."""
        return None


class _Planner(Actor):
    """Plans the longest possible episode: never a valid action; keeps every message it would be sent."""

    def __init__(self, text: ActiveText | ProblemSet) -> None:
        self.text = text
        self.lines: list[str] = []

    async def act(self, observation: Any, last: Step | None) -> Any:
        self.lines.append(self.text.prompt(observation, last is None))
        if isinstance(self.text, ProblemSet):
            return [None] * len(observation.problems)
        return PLANNING_REPLY
