"""colours: the user names a favourite colour several times; only the last one counts."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness.dataset import DatasetInterface
from ltm_harness.example import TestExample
from ltm_harness.scoring import score_latest

COLOURS = [
    "Red", "Blue", "Green", "Yellow", "Orange", "Purple", "Pink", "Brown", "Black", "White", "Grey", "Cyan",
    "Magenta", "Turquoise", "Beige", "Maroon", "Navy", "Olive", "Teal", "Lavender", "Crimson", "Amber",
    "Indigo", "Violet", "Cream", "Gold", "Silver", "Scarlet", "Coral", "Mauve", "Ochre", "Saffron",
]
STATEMENTS = [
    "My favourite colour is {}.",
    "The name of my favourite colour is {}.",
    "My favourite colour could be described as {}.",
    "These days the colour I like best is {}.",
    "If you ask me for my favourite colour, I will say {}.",
]
QUESTION = "What is my favourite colour?"


class ColoursParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    colour_changes: int = Field(default=3, ge=1, le=len(COLOURS))


class Colours(DatasetInterface):
    name = "colours"
    description = "The user changes their favourite colour several times; the agent must give the latest one."
    reset_message = "Please disregard any favourite colour I have told you about so far."
    Params = ColoursParams
    params: ColoursParams  # the validated args, typed

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            colours = self.rng.sample(COLOURS, self.params.colour_changes)
            script = [self.rng.choice(STATEMENTS).format(c) for c in colours] + [QUESTION]
            is_q = [False] * len(colours) + [True]
            examples.append(self.make_example(
                i, script, is_q, [colours[-1]],
                oracle_answers=[f"Your favourite colour is {colours[-1]}."],
                extra={"stated": colours},
            ))
        return examples

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        # The colours stated in this test are the ones that can be confused with the answer.
        rivals = example.extra.get("stated", COLOURS)
        return score_latest(responses[0] if responses else "", example.expected_responses[0], rivals, "colour")

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        return score_latest(responses[0] if responses else "", expected_answers[0], COLOURS, "colour")
