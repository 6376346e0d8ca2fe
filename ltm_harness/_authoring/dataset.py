"""`DatasetInterface`: how a dataset generates its tests, runs them and scores them."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from ltm_harness._authoring.example import TestExample, Wait, spread_waits
from ltm_harness._engine.program import Heard, TestContext, TestOutcome, TestProgram
from ltm_harness._engine.scheduler import Pause
from ltm_harness._scoring.verdict import Judge, JudgeUnparseable

CallbackResult = tuple[float, float, list[str], bool]
MAX_CALLBACK_TURNS = 2000


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetInterface:
    """Base class of every dataset.

    Subclasses set `name`, `description`, optionally `reset_message` and a pydantic `Params`
    model for their config args, and implement `generate_examples`. Scoring is either
    `evaluate_correct` (after the test's questions are answered) or, for tests with
    `uses_callback`, `continual_evaluation_callback` (after every turn once the test asked its
    last line). Tests whose script must be decided during the conversation override `run`.
    """

    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    reset_message: ClassVar[str] = ""
    Params: ClassVar[type[BaseModel]] = NoParams
    #: What a question's answer draws on when its example does not declare `needs` (see `needed_lines`):
    #: "statements", every statement said before it; "answer_statement", the answer statement alone
    #: (`answer_statement_idx`), for answers that one line decides (the latest value, one key of several).
    answer_needs: ClassVar[Literal["statements", "answer_statement"]] = "statements"

    def __init__(self, memory_span: int = 4000, seed: int = 0, **params: Any) -> None:
        self.memory_span = int(memory_span)
        self.seed = int(seed)
        self.params = self.Params(**params)
        # Seeded by a string: stable across processes and Python hash seeds.
        self.rng = random.Random(f"ltm-harness:{self.seed}:{self.name}")

    # -- generation -----------------------------------------------------------------------
    def source_files(self) -> list[Path]:
        """Files besides the module whose contents decide the tests (their edits regenerate definitions)."""
        return []

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        raise NotImplementedError(f"dataset {self.name!r} does not implement generate_examples")

    def make_example(
        self,
        index: int,
        script: list[str],
        is_question: list[bool],
        expected_responses: list[Any],
        *,
        waits: list[Wait] | None = None,
        oracle_answers: list[str] | None = None,
        needs: list[list[int]] | None = None,
        **fields: Any,
    ) -> TestExample:
        """A TestExample of this dataset; waits default to lines spread over 90% of the span. `needs`: the lines
        each question's answer depends on, one list per question (default: see `needed_lines`)."""
        return TestExample(
            dataset_name=self.name,
            example_id=str(index),
            script=script,
            is_question=is_question,
            waits=waits if waits is not None else spread_waits(len(script)),
            expected_responses=expected_responses,
            oracle_answers=oracle_answers or [],
            needs=needs or [],
            **fields,
        )

    # -- scoring --------------------------------------------------------------------------
    def evaluate_correct(
        self, questions: list[str], responses: list[str], expected_answers: list[Any]
    ) -> tuple[float, float, list[str]]:
        raise NotImplementedError(f"dataset {self.name!r} does not implement evaluate_correct")

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        """Score a finished test. Default: `evaluate_correct` with the example's expected responses;
        override it when scoring needs more of the example (e.g. data kept in `extra`)."""
        return self.evaluate_correct(questions, responses, example.expected_responses)

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        """Score a finished test, with the run's LLM judge when there is one (None: rules only).

        Default: the rules of `evaluate_example`. Datasets whose rules can be inconclusive override this
        and ask `judge.grade(...)` for those answers, keeping the verdicts in `TestOutcome.verdicts`.
        A `JudgeUnparseable` raised here makes the test unscored with the reason, never a 0.
        """
        score, max_score, reasons = self.evaluate_example(example, questions, responses)
        return TestOutcome(score, max_score, list(reasons))

    async def evaluate_correct_gpt(self, judge: Judge, questions: list[str], responses: list[str],
                                   expected_answers: list[Any], context: str = "") -> TestOutcome:
        """The LLM judge's score: each response graded against its expected answer (0..1 each).

        Every verdict (model, prompt hash, raw reply) is kept with the score. An unparseable verdict
        raises JudgeUnparseable, which leaves the test unscored."""
        verdicts = [await judge.grade(q, str(e), r, context=context)
                    for q, r, e in zip(questions, responses, expected_answers)]
        reasons = [f"judge {v.model}: {v.score:g} ({v.reason})" for v in verdicts]
        if len(responses) < len(expected_answers):
            reasons.append(f"{len(expected_answers) - len(responses)} question(s) were not answered")
        return TestOutcome(sum(v.score for v in verdicts), float(len(expected_answers)), reasons, verdicts=verdicts)

    def continual_evaluation_callback(self, example: TestExample, log: list[Heard]) -> CallbackResult:
        """Called with the turns since the test's last line (that turn first) after every turn.

        Returns (score, max_score, reasons, deregister); the test ends when deregister is True.
        """
        raise NotImplementedError(f"dataset {self.name!r} uses callbacks but has no continual_evaluation_callback")

    def oracle_hint(self, example: TestExample, log: list[Heard]) -> str | None:
        """For callback tests: what the *next* reply must contain to be perfect (oracle only)."""
        return None

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """(script line, character index) after which nothing relevant to the answer is said.

        Default: the end of the last statement before the first question.
        """
        first_q = example.is_question.index(True) if True in example.is_question else len(example.script)
        for i in range(first_q - 1, -1, -1):
            if not example.is_question[i]:
                return i, len(example.script[i])
        return None

    def gap_questions(self, example: TestExample) -> set[int] | None:
        """Line numbers of the questions whose information gap is measured (None: every question after
        the answer statement). Questions that do not depend on the statement are left out."""
        return None

    def needed_lines(self, example: TestExample) -> dict[int, tuple[int, ...]]:
        """For each question (by script line), the earlier lines its answer depends on: its memory distance is
        measured from the earliest of them. A question that needs no line is left out.

        Default: what the example declares in `needs`; else, with `answer_needs = "statements"` (the default),
        every statement (line that is not a question) said before the question, and with
        `answer_needs = "answer_statement"` the answer statement's line (`answer_statement_idx`) for the questions
        after it. Datasets whose answers draw on other lines declare them in `needs` or override this.
        """
        out: dict[int, tuple[int, ...]] = {}
        answer = self.answer_statement_idx(example) if self.answer_needs == "answer_statement" else None
        for line, is_q in enumerate(example.is_question):
            if not is_q:
                continue
            declared = example.needs_of(line)
            if declared is not None:
                needed = declared
            elif self.answer_needs == "answer_statement":
                needed = [answer[0]] if answer is not None and answer[0] < line else []
            else:
                needed = [i for i in range(line) if not example.is_question[i]]
            if needed:
                out[line] = tuple(sorted(set(needed)))
        return out

    # -- running ----------------------------------------------------------------------------
    async def run(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        """The default program: say the script with its waits, then score it."""
        answers = iter(example.oracle_answers)
        last = len(example.script) - 1
        for i, (line, is_q, wait) in enumerate(zip(example.script, example.is_question, example.waits)):
            if is_q:
                await ctx.ask(line, oracle=next(answers, None))
            else:
                await ctx.say(line)
            if i < last:
                await ctx.wait(wait.tokens, wait.time, wait.percentage_finished)
        if example.uses_callback:
            return await self._watch(example, ctx)
        return await self.score(example, ctx)

    async def score(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        """`evaluate_with_judge` on what the test asked and heard; an unparseable verdict leaves it unscored."""
        try:
            return await self.evaluate_with_judge(example, ctx.questions, ctx.responses, ctx.judge)
        except JudgeUnparseable as exc:
            return TestOutcome(0.0, 1.0, [f"unscored: the judge's verdict could not be parsed: {exc.reason}"], unscored=True)

    async def _watch(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        assert ctx.last_heard is not None, "a callback test starts watching after it has said a line"
        log: list[Heard] = [ctx.last_heard]
        for _ in range(MAX_CALLBACK_TURNS):
            score, max_score, reasons, deregister = self.continual_evaluation_callback(example, log)
            if deregister:
                ctx.expect_in_next_reply(None)
                return TestOutcome(score, max_score, list(reasons))
            ctx.expect_in_next_reply(self.oracle_hint(example, log))
            log.append(await ctx.next_turn())
        return TestOutcome(0.0, 1.0, [f"the callback did not finish within {MAX_CALLBACK_TURNS} turns"], unscored=True)


def as_program(dataset: DatasetInterface, example: TestExample) -> TestProgram:
    """The example as a session runs it: the dataset's program, with the lines and waits to plan with."""

    async def program(ctx: TestContext) -> TestOutcome:
        return await dataset.run(example, ctx)

    answer = dataset.answer_statement_idx(example)
    return TestProgram(
        id=example.unique_id, group=dataset.name, span=dataset.memory_span, script=tuple(example.script),
        pauses=tuple(Pause(w.tokens, w.time, w.percentage_finished) for w in example.waits), program=program,
        interleave=example.can_be_interleaved, anchor_line=answer[0] if answer else None,
        reset_message=dataset.reset_message, needs=dataset.needed_lines(example),
    )
