"""names: the user tells the agent their name several times; only the last one counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness.dataset import DatasetInterface
from ltm_harness.example import TestExample
from ltm_harness.scoring import score_latest

NAMES: list[str] = json.loads((Path(__file__).parent / "data" / "first_names.json").read_text(encoding="utf-8"))["first_names"]
STATEMENTS = [
    "My name is {}.",
    "Hi, I'm {}, by the way.",
    "Please call me {} from now on.",
    "Just so you know, my name is {}.",
    "I've decided I'd like to be called {} now.",
    "You can call me {}.",
    "These days everyone knows me as {}.",
]
QUESTION = "What is my name?"


class NamesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name_changes: int = Field(default=3, ge=1, le=len(NAMES))


class Names(DatasetInterface):
    name = "names"
    description = "The user gives their name several times; the agent must say the latest one."
    reset_message = "Please disregard any names I have given you for myself so far."
    Params = NamesParams
    params: NamesParams  # the validated args, typed

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            names = self.rng.sample(NAMES, self.params.name_changes)
            script = [self.rng.choice(STATEMENTS).format(n) for n in names] + [QUESTION]
            is_q = [False] * len(names) + [True]
            examples.append(self.make_example(
                i, script, is_q, [names[-1]],
                oracle_answers=[f"Your name is {names[-1]}."],
            ))
        return examples

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        # Every name a test can state is in NAMES (score_latest adds the expected one for imported definitions).
        return score_latest(responses[0] if responses else "", str(expected_answers[0]), NAMES, "name")
