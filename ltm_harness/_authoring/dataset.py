"""`DatasetInterface`: how a dataset generates its tests, runs them and scores them."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, Mapping, Protocol, Sequence

from pydantic import BaseModel, ConfigDict

from ltm_harness._authoring.example import TestExample, Wait, spread_waits
from ltm_harness._authoring.unanswered import mark_not_answered
from ltm_harness._engine.program import Heard, TestContext, TestOutcome, TestProgram
from ltm_harness._engine.scheduler import Pause
from ltm_harness._scoring.headline import GOODAI, Headline, HeadlineResult
from ltm_harness._scoring.verdict import Judge, JudgePending, JudgeUnparseable, JudgeVerdict, not_judged
from ltm_harness._tokens import plural

CallbackResult = tuple[float, float, list[str], bool]
MAX_CALLBACK_TURNS = 2000


class ResultView(HeadlineResult, Protocol):
    """What `summary_metrics` reads of a test's result (a `TestResult`): what a headline reads, and the replies."""

    @property
    def responses(self) -> Sequence[str]: ...


@dataclass(frozen=True)
class ResultPart:
    """One result of a test that is scored question by question (a benchmark conversation with many questions):
    its id (the result's example id is `<example_id>.<id>`), which of the test's questions it scores (0-based, in
    the order they are asked), and its labels (e.g. `{"category": "temporal"}`: results are summed up per label)."""

    id: str
    question: int
    labels: Mapping[str, str] = field(default_factory=dict)


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
    #: Each example is a conversation of its own (a benchmark's conversation or haystack): played in a session of its
    #: own, concurrently with the others, with no opening message, starting at `conversation_start`; its waits are
    #: honoured (filler where they ask for it), unlike `isolated` runs.
    conversation_per_example: ClassVar[bool] = False
    #: Args that change only how answers are scored (a judge prompt's variant, a checkout of a benchmark's own judge
    #: prompts): left out of the definitions' fingerprint, so that a run keeps its tests (and can be re-scored) when
    #: they change.
    scoring_args: ClassVar[frozenset[str]] = frozenset()
    #: The metrics this dataset is quoted by (ltm_harness/_scoring/headline.py; docs/datasets.md): names, and how they
    #: aggregate per-question results. Default: the GoodAI benchmark's mean score, with its LTM score and gaps. A
    #: headline that depends on the dataset's args (a judge prompt's name) overrides `headline_spec`.
    headline: ClassVar[Headline] = GOODAI

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

    def ignored_settings(self) -> dict[str, tuple[str, dict[str, str]]]:
        """The run settings (`memory_span`, `seed`) and args this dataset's args make meaningless, each with why and
        the args that would give it a meaning ({} when none would): `run` refuses a `--span` or `--seed` that every
        dataset of the run ignores, in one line naming them. Default: none."""
        return {}

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        raise NotImplementedError(f"dataset {self.name!r} does not implement generate_examples")

    def make_example(
        self,
        index: int | str,
        script: list[str],
        is_question: list[bool],
        expected_responses: list[Any],
        *,
        waits: list[Wait] | None = None,
        oracle_answers: list[str] | None = None,
        needs: list[list[int]] | None = None,
        **fields: Any,
    ) -> TestExample:
        """A TestExample of this dataset, its id `index` (a number, or a benchmark's own id); waits default to lines
        spread over 90% of the span. `needs`: the lines each question's answer depends on, one list per question
        (default: see `needed_lines`)."""
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
        verdicts: list[JudgeVerdict] = []
        pending: JudgePending | None = None
        for q, r, e in zip(questions, responses, expected_answers):
            try:
                verdicts.append(await judge.grade(q, str(e), r, context=context))
            except JudgePending as exc:  # kept for the judge's batch: the other answers are asked too, for the same one
                pending = exc
        if pending is not None:
            raise pending
        reasons = [f"judge {v.model}: {v.score:g} ({v.reason})" for v in verdicts]
        if len(responses) < len(expected_answers):
            missed = len(expected_answers) - len(responses)
            reasons.append(f"{plural(missed, 'question')} {'was' if missed == 1 else 'were'} not answered")
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

    def answer_statements(self, example: TestExample) -> dict[int, tuple[int, int]] | None:
        """For tests whose questions each draw on lines of their own (a benchmark conversation): per question line,
        the (line, character index) after which nothing its answer needs is said; each question's gap is measured
        from there. None (the default): `answer_statement_idx` for every question."""
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
        statements: list[int] = []  # the lines before this one that are not questions
        asked = 0  # questions before this one (its index in `needs`)
        for line, is_q in enumerate(example.is_question):
            if not is_q:
                statements.append(line)
                continue
            declared = example.needs[asked] if example.needs else None  # as `example.needs_of(line)`, in one step
            asked += 1
            if declared is not None:
                needed = tuple(sorted(set(declared)))
            elif self.answer_needs == "answer_statement":
                needed = (answer[0],) if answer is not None and answer[0] < line else ()
            else:
                needed = tuple(statements)
            if needed:
                out[line] = needed
        return out

    # -- results ----------------------------------------------------------------------------
    def result_parts(self, example: TestExample) -> list[ResultPart]:
        """The results a test is scored as, when it scores its questions one by one (its program then returns a
        `TestOutcome` with one part per entry, in this order). Default: none, the test is one result."""
        return []

    def result_labels(self, example: TestExample) -> dict[str, str]:
        """Labels of a test scored as a whole (e.g. a question's type): results are summed up per label."""
        return {}

    def summary_metrics(self, examples: Sequence[TestExample], results: Sequence[ResultView]) -> dict[str, float]:
        """Named numbers of this dataset's results beside its mean score, as a benchmark reports them (e.g. a
        task-averaged accuracy, or how many known errors its data has). Default: none."""
        return {}

    def headline_spec(self) -> Headline:
        """The headline of this instance (default: the class's `headline`)."""
        return self.headline

    def conversation_start(self, example: TestExample) -> datetime | None:
        """When a conversation of its own starts (`conversation_per_example`): the benchmark's first date. None: the
        run's `start_time`."""
        return None

    # -- running ----------------------------------------------------------------------------
    async def run(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        """The default program: say the script with its waits, then score it."""
        answers = iter(example.oracle_answers)
        last = len(example.script) - 1
        for i, (line, is_q, wait) in enumerate(zip(example.script, example.is_question, example.waits)):
            if is_q:
                await ctx.ask(line, oracle=next(answers, None), independent=bool(example.independent_questions))
            elif example.observed(i):
                await ctx.tell(line, example.role(i))
            else:
                await ctx.say(line)
            if i < last:
                await ctx.wait(wait.tokens, wait.time, wait.percentage_finished, wait.until)
        if example.uses_callback:
            return await self._watch(example, ctx)
        # a question an imported answers file has no answer to is unscored, whatever the rule makes of the marker
        return mark_not_answered(await self.score(example, ctx), ctx.responses,
                                 [p.question for p in self.result_parts(example)])

    async def score(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        """`evaluate_with_judge` on what the test asked and heard; a verdict the judge could not give (unreadable, or
        the judge could not be asked) leaves it unscored, saying why."""
        try:
            return await self.evaluate_with_judge(example, ctx.questions, ctx.responses, ctx.judge)
        except JudgeUnparseable as exc:
            return TestOutcome(0.0, 1.0, [not_judged(exc)], unscored=True)

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


_NO_PAUSE = Pause()


def _pause(wait: Wait) -> Pause:
    """A wait as the scheduler plans it (most lines of a benchmark's history wait for nothing: one shared value)."""
    if not (wait.tokens or wait.time or wait.percentage_finished or wait.until is not None):
        return _NO_PAUSE
    return Pause(wait.tokens, wait.time, wait.percentage_finished, wait.until)


def as_program(dataset: DatasetInterface, example: TestExample) -> TestProgram:
    """The example as a session runs it: the dataset's program, with the lines and waits to plan with."""

    async def program(ctx: TestContext) -> TestOutcome:
        return await dataset.run(example, ctx)

    answer = dataset.answer_statement_idx(example)
    return TestProgram(
        id=example.unique_id, group=dataset.name, span=dataset.memory_span, script=tuple(example.script),
        pauses=tuple(_pause(w) for w in example.waits), program=program,
        interleave=example.can_be_interleaved, anchor_line=answer[0] if answer else None,
        reset_message=dataset.reset_message, needs=dataset.needed_lines(example),
        observed=tuple(example.observe) if example.observe else (), parts=len(dataset.result_parts(example)),
        line_tokens=tuple(example.line_tokens.counts) if example.line_tokens else (),
        tokens_by=example.line_tokens.encoding if example.line_tokens else "",
    )
