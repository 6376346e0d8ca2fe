"""A kind of dataset: the user states a changing fact several times; only the latest value counts."""

from __future__ import annotations

from typing import Any, ClassVar

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._scoring.rules import score_latest


class LatestValueDataset(DatasetInterface):
    """Subclasses set the value pool, statement templates (with `{}`), the question, the oracle's
    answer template and a noun for reasons, and say how many changes a test has."""

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

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        # The values stated in this test are the ones that can be confused with the answer.
        rivals = example.extra.get("stated", self.values)
        return score_latest(responses[0] if responses else "", str(example.expected_responses[0]), rivals, self.noun)

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        # Without the example (e.g. imported definitions), every value of the pool is a rival.
        return score_latest(responses[0] if responses else "", str(expected_answers[0]), self.values, self.noun)
