"""prospective_memory: the agent must append a quote to a given later reply, not before.

Line 0 shares a quote and its author; much later line 1 asks the agent to append the quote from
that author to its n-th reply, counting the reply to the request itself as the first. The test
then watches every turn of the conversation (a continual test): the n-th reply must contain the
quote, and no reply before it may.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._authoring.dataset import CallbackResult, DatasetInterface
from ltm_harness._authoring.example import TestExample
from ltm_harness._engine.program import Heard
from ltm_harness._scoring.rules import word_overlap

QUOTES: list[dict[str, str]] = json.loads(
    (Path(__file__).parent / "data" / "quotes.json").read_text(encoding="utf-8"))["quotes"]
STATEMENTS = [
    "Here is a quote I like, from {author}: \"{quote}\"",
    "I came across this line by {author} today: \"{quote}\"",
    "\"{quote}\" - {author}. I find that one worth keeping in mind.",
]
REQUEST = ("After answering the following unrelated messages, please append the quote from {author} to your "
           "{nth} reply. Count your reply to this message as the first.")
ACKNOWLEDGEMENT = "OK, I will do that."
MATCH = 0.9  # share of the quote's words a reply must contain to count as having the quote


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def has_quote(reply: str, quote: str) -> bool:
    return word_overlap(reply, quote) >= MATCH


class ProspectiveMemoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_reply: int = Field(default=6, ge=2, le=20)  # the reply to append the quote to is drawn from 2..max_reply


class ProspectiveMemory(DatasetInterface):
    name = "prospective_memory"
    description = "The agent must append a quote it was told earlier to its n-th reply after being asked to, and not sooner."
    reset_message = "You no longer need to append any quote to your replies."
    Params = ProspectiveMemoryParams
    params: ProspectiveMemoryParams  # the validated args, typed

    def generate_examples(self, num_examples: int) -> list[TestExample]:
        examples = []
        for i in range(num_examples):
            q = self.rng.choice(QUOTES)
            n = self.rng.randint(2, self.params.max_reply)
            statement = self.rng.choice(STATEMENTS).format(author=q["author"], quote=q["quote"])
            request = REQUEST.format(author=q["author"], nth=ordinal(n))
            examples.append(self.make_example(
                i, [statement, request], [False, True], [[q["quote"], q["author"], n]],
                oracle_answers=[ACKNOWLEDGEMENT], uses_callback=True,
            ))
        return examples

    def continual_evaluation_callback(self, example: TestExample, log: list[Heard]) -> CallbackResult:
        """`log[0]` is the reply to the request (the first reply), `log[k]` the (k+1)-th.

        The test ends as soon as the outcome is known: when the quote shows up too early (score 0),
        or when the n-th reply has arrived (score 1 if it holds the quote).
        """
        quote, author, n = example.expected_responses[0]
        n = int(n)
        for k, heard in enumerate(log[:n - 1]):
            if has_quote(heard.reply, quote):
                return 0.0, 1.0, [f"The quote from {author} was appended to reply {k + 1}, "
                                  f"before the {ordinal(n)} reply it was asked for."], True
        if len(log) < n:
            return 0.0, 1.0, [], False
        overlap = word_overlap(log[n - 1].reply, quote)
        if overlap >= MATCH:
            return 1.0, 1.0, [f"The {ordinal(n)} reply contains the quote from {author} (word overlap {overlap:.2f})."], True
        return 0.0, 1.0, [f"The {ordinal(n)} reply does not contain the quote from {author} "
                          f"(word overlap {overlap:.2f} < {MATCH})."], True

    def oracle_hint(self, example: TestExample, log: list[Heard]) -> str | None:
        quote, _, n = example.expected_responses[0]
        return quote if len(log) == int(n) - 1 else None

    def answer_statement_idx(self, example: TestExample) -> tuple[int, int] | None:
        """The quote line: the request names only the author."""
        return 0, len(example.script[0])
