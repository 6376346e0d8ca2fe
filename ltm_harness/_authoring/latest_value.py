"""A kind of dataset: the user states a changing fact several times; only the latest value counts."""

from __future__ import annotations

from typing import Any, ClassVar

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.program import TestOutcome
from ltm_harness._scoring.current_value import LatestVerdict, read_latest
from ltm_harness._scoring.verdict import Judge

CONTEXT = ("The user told the agent their {noun} several times, changing it each time, in this order: {stated}. Only the "
           "latest counts, and it is given as the expected answer. Score 1 if the response gives that {noun} as the "
           "current one (it may recall the earlier ones as earlier), 0 if it gives another one as current, gives "
           "several as current, or hedges between them.")


class LatestValueDataset(DatasetInterface):
    """Subclasses set the value pool, statement templates (with `{}`), the question, the oracle's
    answer template and a noun for reasons, and say how many changes a test has.

    Scoring: the value the answer gives as the current one must be the latest (`read_latest`). An answer that
    gives the latest and another value as current is inconclusive by rules: the run's judge decides, and without
    a judge the test is unscored with the reason."""

    values: ClassVar[list[str]]
    statements: ClassVar[list[str]]
    question: ClassVar[str]
    answer: ClassVar[str]
    noun: ClassVar[str]
    answer_needs = "answer_statement"  # the latest value is all the answer draws on

    def changes(self) -> int:
        raise NotImplementedError(f"dataset {self.name!r} must say how many values a test states")

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            stated = self.rng.sample(self.values, self.changes())
            script = [self.rng.choice(self.statements).format(v) for v in stated] + [self.question]
            examples.append(self.make_example(
                i, script, [False] * len(stated) + [True], [stated[-1]],
                oracle_answers=[self.answer.format(stated[-1])],
                extra={"stated": stated},
            ))
        return examples

    def verdict(self, example: TestExample, response: str) -> LatestVerdict:
        """The rule's verdict on the answer to `example`; the values stated in this test are the ones that can be
        confused with the answer (without them, e.g. in imported definitions, every value of the pool is)."""
        return read_latest(response, str(example.expected_responses[0]), example.extra.get("stated", self.values),
                           self.noun)

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        return _without_judge(self.verdict(example, _answer(responses)))

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        return _without_judge(read_latest(_answer(responses), str(expected_answers[0]), self.values, self.noun))

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        response = _answer(responses)
        rule = self.verdict(example, response)
        if rule.conclusive:
            return TestOutcome(rule.score, 1.0, [rule.reason])
        if judge is None:
            return TestOutcome(0.0, 1.0, [f"unscored: {rule.reason} Inconclusive by rules, and the run has no judge."],
                               unscored=True)
        stated = example.extra.get("stated") or example.expected_responses
        verdict = await judge.grade(questions[0] if questions else self.question, str(example.expected_responses[0]),
                                    response, context=CONTEXT.format(noun=self.noun, stated=", ".join(map(str, stated))))
        return TestOutcome(verdict.score, 1.0, [f"{rule.reason} Inconclusive by rules; judge {verdict.model}: "
                                                f"{verdict.score:g} ({verdict.reason})."], verdicts=[verdict])


def _answer(responses: list[str]) -> str:
    return responses[0] if responses else ""


def _without_judge(rule: LatestVerdict) -> tuple[float, float, list[str]]:
    """The rules' verdict as `evaluate_correct` returns it; an inconclusive one scores 0 and says so (in a run it is
    judged or left unscored: see `evaluate_with_judge`)."""
    if rule.conclusive:
        return rule.score, 1.0, [rule.reason]
    return 0.0, 1.0, [f"{rule.reason} Inconclusive by rules; 0 without a judge."]
