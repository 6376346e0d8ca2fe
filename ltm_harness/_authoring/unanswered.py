"""A question the agent did not answer because it has no answer to give (an imported answers file with none for
it): its reply is NOT_ANSWERED, and whatever the dataset's rule made of that reply, the question is unscored with
that reason, never counted as wrong. Applied after every dataset's scoring, so it holds in runs and rescores alike."""

from __future__ import annotations

from typing import Sequence

from ltm_harness._engine.program import TestOutcome
from ltm_harness._scoring.not_answered import NOT_ANSWERED, REASON

__all__ = ["NOT_ANSWERED", "REASON", "mark_not_answered"]


def mark_not_answered(outcome: TestOutcome, responses: Sequence[str], part_questions: Sequence[int]) -> TestOutcome:
    """`outcome` with the parts (or the whole test) whose question was replied NOT_ANSWERED left unscored.
    `part_questions`: the question each part scores (its index among the test's questions), in order."""
    missing = {k for k, r in enumerate(responses) if r == NOT_ANSWERED}
    if not missing:
        return outcome
    if not outcome.parts:
        return TestOutcome(0.0, outcome.max_score, [REASON], unscored=True)
    parts = [TestOutcome(0.0, p.max_score, [REASON], unscored=True) if q in missing else p
             for p, q in zip(outcome.parts, part_questions)] + outcome.parts[len(part_questions):]
    return TestOutcome(sum(p.score for p in parts if not p.unscored), outcome.max_score, outcome.reasons,
                       verdicts=outcome.verdicts, raw_score=outcome.raw_score, parts=parts)
