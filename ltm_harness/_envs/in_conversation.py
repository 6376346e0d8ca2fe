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

import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._envs.base import ActiveEnv, Env, InvalidAction, PassiveEnv
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
    page_size: int | None = Field(default=None, ge=1)  # problems per message (default: all in one)


CONVERSATION_ARGS = frozenset(PassiveInConversation.model_fields)


class EpisodeDefinition(BaseModel):
    """What `extra` of an environment test holds."""

    model_config = ConfigDict(extra="forbid")

    env: str
    params: dict[str, Any]
    seed: int
    label: str


def _pages(n: int, size: int | None) -> list[tuple[int, int]]:
    size = size or n
    return [(start, min(n, start + size)) for start in range(0, n, size)]


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
        observation = env.reset()
        lines = [env.prompt(observation, label=label, first=True)]
        while True:
            observation, _, done, _ = env.act(PLANNING_REPLY)
            if done:
                break
            lines.append(env.prompt(observation, label=label))
        lines.append(self._closing(label, env.summary(), env.normalised_score))
        return lines

    def _passive_plan(self, env: PassiveEnv, label: str) -> list[str]:
        problems, train = env.get_test(), env.get_train()
        pages = _pages(len(problems), self._page_size())
        lines = [env.render_problems(problems[a:b], start=a, train=train if p == 0 else (), label=label,
                                     part=(p + 1, len(pages))) for p, (a, b) in enumerate(pages)]
        lines.append(self._closing(label, f"You answered 0 of {len(problems)} right.", 0.0))
        return lines

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

    async def _play(self, env: ActiveEnv, definition: EpisodeDefinition, example: TestExample,
                    ctx: TestContext) -> TestOutcome:
        label = definition.label
        observation = env.reset()
        step = 0
        while True:
            text = env.prompt(observation, label=label, first=step == 0)
            hint = json.dumps({"action": env.oracle_action()})
            reply = await ctx.ask(text, oracle=hint)
            observation, _, done, _ = env.act(env.parse_action(reply))
            if done:
                break
            await self._wait_after(example, step, ctx)
            step += 1
        normalised = env.normalised_score
        await ctx.say(self._closing(label, env.summary(), normalised))
        h = env.header
        reasons = [f"{env.summary()} Score {env.score:g} in [{h.min_score:g}, {h.max_score:g}] -> {normalised:.3f}.",
                   *env.invalid_report(REPLY_LIMIT)]
        return TestOutcome(normalised, 1.0, reasons)

    async def _answer(self, env: PassiveEnv, definition: EpisodeDefinition, example: TestExample,
                      ctx: TestContext) -> TestOutcome:
        label = definition.label
        problems, train = env.get_test(), env.get_train()
        pages = _pages(len(problems), self._page_size())
        answers: list[str | None] = []
        for p, (a, b) in enumerate(pages):
            text = env.render_problems(problems[a:b], start=a, train=train if p == 0 else (), label=label,
                                       part=(p + 1, len(pages)))
            hint = json.dumps(env.oracle_answers()[a:b])
            reply = await ctx.ask(text, oracle=hint)
            answers.extend(env.parse_answers(reply, b - a, start=a))
            if p < len(pages) - 1:
                await self._wait_after(example, p, ctx)
        graded = env.grade(answers)
        normalised = env.header.normalise(graded.score)
        summary = f"You answered {graded.n_correct} of {len(problems)} right."
        await ctx.say(self._closing(label, summary, normalised))
        expected = env.oracle_answers()
        wrong = [f"{i + 1}. {problems[i]}: answered {answers[i]!r}, expected {expected[i]!r}"
                 for i, ok in enumerate(graded.correct) if not ok]
        unread = sum(a is None for a in answers)
        reasons = [f"{graded.n_correct} of {len(problems)} right ({unread} unreadable) -> {normalised:.3f}.", *wrong]
        return TestOutcome(normalised, 1.0, reasons)

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """None: an episode has no statement whose distance to a question is the point of the test."""
        return None
