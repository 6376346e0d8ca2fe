"""kv: the agent is asked to remember values stored under keys, then asked for one of them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._scoring.rules import contains_phrase

# No vowels (no accidental words) and no look-alike characters (0/O, 1/I/L).
KEY_CHARS = "BCDFGHJKMNPQRSTVWXZ23456789"
STATEMENTS = [
    "Please remember: the value stored under key {k} is {v}.",
    "Please store the value {v} under key {k} and keep it for later.",
    "Note this down for me: key {k} holds the value {v}.",
    "Could you remember that the value for key {k} is {v}?",
]
QUESTIONS = [
    "What value is stored under key {k}?",
    "Which value did I ask you to keep under key {k}?",
]


class KvParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pairs: int = Field(default=3, ge=1, le=100)


class KeyValue(DatasetInterface):
    name = "kv"
    answer_needs = "answer_statement"  # the line that stores the asked key
    description = "The agent is told values stored under several keys and later asked for the value of one key."
    reset_message = "Please forget all the keys and values I asked you to remember so far."
    Params = KvParams
    params: KvParams  # the validated args, typed

    def _key(self) -> str:
        return "KEY-" + "".join(self.rng.choice(KEY_CHARS) for _ in range(4))

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            keys: list[str] = []
            while len(keys) < self.params.pairs:
                key = self._key()
                if key not in keys:
                    keys.append(key)
            values = [str(v) for v in self.rng.sample(range(100000, 1000000), self.params.pairs)]
            asked = self.rng.randrange(self.params.pairs)
            script = [self.rng.choice(STATEMENTS).format(k=k, v=v) for k, v in zip(keys, values)]
            script.append(self.rng.choice(QUESTIONS).format(k=keys[asked]))
            is_q = [False] * self.params.pairs + [True]
            examples.append(self.make_example(
                i, script, is_q, [values[asked]],
                oracle_answers=[f"The value stored under key {keys[asked]} is {values[asked]}."],
                extra={"key": keys[asked], "answer_line": asked, "values": values},
            ))
        return examples

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """The line that stores the asked key (not necessarily the last statement)."""
        line = example.extra.get("answer_line")
        if isinstance(line, int) and 0 <= line < len(example.script):
            return line, len(example.script[line])
        return super().answer_statement_idx(example)

    def evaluate_example(self, example: TestExample, questions: list[str], responses: list[str]) -> tuple[float, float, list[str]]:
        # A reply that also names the test's other values is a hedge, not an answer.
        return self._score(responses[0] if responses else "", str(example.expected_responses[0]),
                           [str(v) for v in example.extra.get("values", [])])

    def evaluate_correct(self, questions: list[str], responses: list[str], expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        return self._score(responses[0] if responses else "", str(expected_answers[0]), [])

    @staticmethod
    def _score(response: str, expected: str, rivals: list[str]) -> tuple[float, float, list[str]]:
        if not contains_phrase(response, expected):
            return 0.0, 1.0, [f"{expected!r} is not in the answer."]
        named = [v for v in rivals if v != expected and contains_phrase(response, v)]
        if named:
            return 0.0, 1.0, [f"{expected!r} is in the answer, but so are other stored values: {', '.join(named)}."]
        return 1.0, 1.0, [f"{expected!r} is in the answer."]
