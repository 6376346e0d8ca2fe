"""jokes: the user tells jokes hours apart, then asks which one they told some time ago.

A temporal test. Every joke is followed by a wait on the conversation (spread over the span) *and*
on the virtual clock (30 to 240 minutes, drawn per joke). The question names how long ago the
target joke was told; that time is measured on the virtual clock when the question is about to be
asked (this test overrides `run`), rounded to 10 minutes and said in hours and minutes. The last
script line holds the question template with an `{elapsed}` placeholder.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import DatasetInterface
from ltm_harness._authoring.example import TestExample, spread_waits
from ltm_harness._engine.program import TestContext, TestOutcome
from ltm_harness._scoring.rules import normalize, word_overlap
from ltm_harness._scoring.verdict import Judge

JOKES: list[str] = json.loads((Path(__file__).parent / "data" / "jokes.json").read_text(encoding="utf-8"))["jokes"]
QUESTION = "Which joke did I tell you about {elapsed} ago?"
PLACEHOLDER = "{elapsed}"
MIN_WAIT_MINUTES = 30
MAX_WAIT_MINUTES = 240
MATCH = 0.8  # share of the joke's words the reply must contain
MAYBE = 0.4  # below MATCH but at least this: perhaps the joke retold in other words (the judge decides)
JUDGE_CONTEXT = ("The expected answer is a joke the user told earlier. The response is correct if it identifies that "
                 "joke, word for word or retold in other words; it is wrong if it gives another joke or several.")


def describe_elapsed(elapsed: timedelta) -> str:
    """`elapsed` rounded to the nearest 10 minutes (halves up), e.g. "3 hours and 20 minutes"."""
    minutes = int(elapsed.total_seconds() / 600 + 0.5) * 10
    hours, minutes = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours != 1 else ''}")
    if minutes or not hours:
        parts.append(f"{minutes} minutes")
    return " and ".join(parts)


class JokesParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    jokes_told: int = Field(default=4, ge=1, le=len(JOKES))


class Jokes(DatasetInterface):
    name = "jokes"
    answer_needs = "answer_statement"  # the joke asked about
    description = "The user tells jokes hours apart; the agent must say which one was told a given time ago."
    reset_message = "Please forget the jokes I have told you so far."
    Params = JokesParams
    params: JokesParams  # the validated args, typed

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        n = self.params.jokes_told
        for i in range(num_examples):
            jokes = self.rng.sample(JOKES, n)
            target = self.rng.randrange(n)
            waits = spread_waits(n + 1)
            for w in waits[:-1]:
                w.time = float(self.rng.randint(MIN_WAIT_MINUTES, MAX_WAIT_MINUTES) * 60)
            examples.append(self.make_example(
                i, jokes + [QUESTION], [False] * n + [True], [jokes[target]],
                waits=waits, oracle_answers=[jokes[target]], is_temporal=True,
            ))
        return examples

    @staticmethod
    def _target_line(example: TestExample) -> int:
        return example.script.index(example.expected_responses[0])

    async def run(self, example: TestExample, ctx: TestContext) -> TestOutcome:
        jokes = example.script[:-1]
        for line, wait in zip(jokes, example.waits):
            await ctx.say(line)
            await ctx.wait(wait.tokens, wait.time, wait.percentage_finished)
        elapsed = ctx.now - ctx.time_of_line(self._target_line(example))
        question = example.script[-1].replace(PLACEHOLDER, describe_elapsed(elapsed))
        oracle = example.oracle_answers[0] if example.oracle_answers else example.expected_responses[0]
        await ctx.ask(question, oracle=oracle)
        return await self.score(example, ctx)

    def evaluate_example(self, example: TestExample, questions: list[str],
                         responses: list[str]) -> tuple[float, float, list[str]]:
        # The jokes told in this test are the ones that can be confused with the answer.
        return self._score(responses[0] if responses else "", example.expected_responses[0], example.script[:-1])

    def evaluate_correct(self, questions: list[str], responses: list[str],
                         expected_answers: list[Any]) -> tuple[float, float, list[str]]:
        # Without the example, every joke of the pool is a rival.
        return self._score(responses[0] if responses else "", expected_answers[0], JOKES)

    async def evaluate_with_judge(self, example: TestExample, questions: list[str], responses: list[str],
                                  judge: Judge | None) -> TestOutcome:
        """Rules first; a reply that shares some but too few of the joke's words (a retelling) goes to the judge."""
        score, max_score, reasons = self.evaluate_example(example, questions, responses)
        reply = responses[0] if responses else ""
        target = example.expected_responses[0]
        hit = word_overlap(reply, target)
        if score > 0 or hit < MAYBE or any(word_overlap(reply, j) >= hit for j in example.script[:-1]
                                           if normalize(j) != normalize(target)):
            return TestOutcome(score, max_score, reasons)
        if judge is None:
            return TestOutcome(score, max_score, reasons + ["Inconclusive by rules (perhaps a retelling); no judge was given."])
        verdict = await judge.grade(questions[0] if questions else "", target, reply, context=JUDGE_CONTEXT)
        return TestOutcome(verdict.score, 1.0, reasons + [f"judge {verdict.model}: {verdict.score:g} ({verdict.reason})"],
                           verdicts=[verdict])

    @staticmethod
    def _score(reply: str, target: str, rivals: list[str]) -> tuple[float, float, list[str]]:
        """Right if the reply holds the target joke (>= 80% of its words) and no rival joke as well as it."""
        hit = word_overlap(reply, target)
        if hit < MATCH:
            return 0.0, 1.0, [f"The answer does not contain the joke {target!r} (word overlap {hit:.2f} < {MATCH})."]
        key = normalize(target)
        for other in rivals:
            if normalize(other) == key:
                continue
            rival = word_overlap(reply, other)
            if rival >= hit:
                return 0.0, 1.0, [f"The answer matches another joke, {other!r}, as well as the right one "
                                  f"(word overlap {rival:.2f} >= {hit:.2f})."]
        return 1.0, 1.0, [f"The answer contains the joke {target!r} (word overlap {hit:.2f})."]

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """The target joke: what was said after it does not change which joke the question is about."""
        line = self._target_line(example)
        return line, len(example.script[line])
