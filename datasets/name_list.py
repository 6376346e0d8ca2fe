"""name_list: the user gives several names over time; the agent must list them all as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._scoring.rules import extract_json, normalize

NAMES: list[str] = json.loads((Path(__file__).parent / "data" / "first_names.json").read_text(encoding="utf-8"))["first_names"]
STATEMENTS = [
    "My name is {}.",
    "From today, please call me {}.",
    "I'd like to go by {} now.",
    "Actually, you can call me {}.",
    "Change of plan: my name is {}.",
    "I've picked a new name for myself: {}.",
    "People call me {} these days.",
]
QUESTIONS = [
    "Which names have I told you to call me so far? Please answer with a JSON list of strings.",
    "Can you list every name I've given you for myself? Reply with a JSON list of the names.",
    "What are all the names I have given you? Give them as a JSON list.",
]


class NameListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name_changes: int = Field(default=5, ge=1, le=len(NAMES))


def _entry_name(entry: Any) -> str | None:
    """A name from one entry of the reply's list: a string, or an object with a `name` string."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        for key, value in entry.items():
            if str(key).lower() == "name" and isinstance(value, str):
                return value
    return None


class NameList(DatasetInterface):
    name = "name_list"
    description = "The user gives several names over time; the agent must list every one of them as JSON."
    reset_message = "Please forget all the names I have given you for myself so far."
    Params = NameListParams
    params: NameListParams  # the validated args, typed

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            names = self.rng.sample(NAMES, self.params.name_changes)
            script = [self.rng.choice(STATEMENTS).format(n) for n in names] + [self.rng.choice(QUESTIONS)]
            is_q = [False] * len(names) + [True]
            examples.append(self.make_example(i, script, is_q, list(names), oracle_answers=[json.dumps(names)]))
        return examples

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        response = responses[0] if responses else ""
        expected = {normalize(str(n)): str(n) for n in expected_answers}
        parsed = extract_json(response)
        if parsed is None:
            return 0.0, 1.0, ["The answer has no JSON list."]
        if not isinstance(parsed, list):
            return 0.0, 1.0, [f"The answer's JSON is a {type(parsed).__name__}, not a list."]
        given: list[str] = []  # distinct normalised entries, in reply order
        for entry in parsed:
            name = _entry_name(entry)
            if name is not None and not normalize(name):
                continue  # a blank string names nobody
            key = normalize(name) if name is not None else f"<{json.dumps(entry)}>"
            if key not in given:
                given.append(key)
        correct = [k for k in given if k in expected]
        hallucinated = [k for k in given if k not in expected]
        missing = [v for k, v in expected.items() if k not in correct]
        score = max(0.0, (len(correct) - len(hallucinated)) / len(expected)) if expected else 0.0
        reasons = [f"{len(correct)} of {len(expected)} names listed."]
        if missing:
            reasons.append(f"Missing: {', '.join(missing)}.")
        if hallucinated:
            reasons.append(f"Never given: {', '.join(hallucinated)} (each cancels a correct name).")
        return score, 1.0, reasons
