"""One BEAM answer scored: the rubric judge item by item, event ordering by alignment, or, without a judge, the rule
for clear abstentions; ours or the reference's arithmetic (see `scoring`).

Judge calls per question: one per rubric item (nine abilities), as the reference; event ordering one per (answer
line, gold event) pair tried until a match (the reference's alignment), and none for the rubric items there (the
published tables do not use them). A judge reply that cannot be read even after asking again leaves the question
unscored with the reason (ours); in the reference's arithmetic an unreadable alignment reply counts as no match, as
its code reads anything without "yes".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ltm_harness._interop.beam.judge import RUBRIC, SAME_EVENT, same_event
from ltm_harness._interop.beam.probing import BeamQuestion
from ltm_harness._interop.beam.reference_prompts import QUESTION_SLOT, ReferencePrompts
from ltm_harness._interop.beam.scoring import Variant, align, answer_lines, order_score, rubric_score, rule_verdict
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.verdict import (Judge, JudgePending, JudgeUnavailable, JudgeUnparseable, JudgeVerdict,
                                          not_judged)

ORDER_REASON = "event order:"  # the reason line summary_metrics reads F1 and tau_norm from
RULE_REASON = "rule:"


@dataclass
class Graded:
    score: float | None  # None: unscored
    by: Literal["judge", "rule", "none"]
    reasons: list[str] = field(default_factory=list)
    verdicts: list[JudgeVerdict] = field(default_factory=list)


async def grade(q: BeamQuestion, response: str, judge: Judge | None, variant: Variant = "ours",
                prompts: ReferencePrompts | None = None) -> Graded:
    if judge is None:
        score = rule_verdict(q.ability, response)
        if score is None:
            return Graded(None, "none", ["unscored: no rule decides this answer and the run has no judge (run with "
                                         "--judge MODEL, or rescore the run with one)"])
        return Graded(score, "rule", [f"{RULE_REASON} a clear abstention on an abstention question"])
    if not q.rubric:
        return Graded(None, "none", ["unscored: the question has no rubric in the data"])
    try:
        return await _judged(q, response, judge, variant, prompts)
    except JudgeUnavailable as exc:  # the judge could not be asked: a rule's decision stays, the rest is unscored
        score = rule_verdict(q.ability, response)
        if score is None:
            return Graded(None, "judge", [not_judged(exc)])
        return Graded(score, "rule", [f"{RULE_REASON} a clear abstention on an abstention question", not_judged(exc)])


async def _judged(q: BeamQuestion, response: str, judge: Judge, variant: Variant,
                  prompts: ReferencePrompts | None) -> Graded:
    question = QUESTION_SLOT if variant == "reference" else q.question
    if q.ability == "event_ordering":
        return await _order(q, response, judge, variant, prompts, question)
    prompt = prompts.rubric if prompts else RUBRIC
    verdicts: list[JudgeVerdict] = []
    scores: list[float] = []
    pending: JudgePending | None = None
    for item in q.rubric:
        try:
            verdict = await judge.grade(question, item, response, prompt=prompt)
        except JudgePending as exc:  # kept for the judge's batch: the other items are asked too, for the same batch
            pending = exc
            continue
        except JudgeUnavailable:
            raise
        except JudgeUnparseable as exc:
            return Graded(None, "judge", [f"unscored: the judge's verdict on a rubric item could not be read "
                                          f"({exc.reason})"], verdicts)
        verdicts.append(verdict)
        scores.append(verdict.score)
    if pending is not None:
        raise pending
    score = rubric_score(scores, variant)
    items = ", ".join(f"{s:g}" for s in scores)
    arithmetic = "int() of each item, as the published code" if variant == "reference" else "1 / 0.5 / 0"
    return Graded(score, "judge", [f"rubric ({arithmetic}): items {items}; mean {score:.3f}"], verdicts)


async def _order(q: BeamQuestion, response: str, judge: Judge, variant: Variant, prompts: ReferencePrompts | None,
                 question: str) -> Graded:
    prompt = prompts.same_event if prompts else SAME_EVENT
    verdicts: list[JudgeVerdict] = []
    unread: list[str] = []

    pending: list[JudgePending] = []

    async def matches(event: str, line: str) -> bool:
        try:
            return await same_event(_Recording(judge, verdicts), question, event, line, prompt)
        except JudgePending as exc:  # kept for the judge's batch: every pair the alignment may need is asked
            pending.append(exc)
            return False
        except JudgeUnavailable:
            raise
        except JudgeUnparseable as exc:
            unread.append(exc.reason)
            return False

    aligned = await align(q.rubric, answer_lines(response, variant), matches)
    if pending:
        raise pending[0]
    if unread and variant == "ours":
        return Graded(None, "judge", [f"unscored: the judge's word on whether two events are the same could not be "
                                      f"read ({unread[0]})"], verdicts)
    result = order_score(q.rubric, aligned)
    score = result.score(variant)
    tau = "undefined" if result.tau_norm is None else f"{result.tau_norm:.4f}"
    line = f"{ORDER_REASON} F1 {result.f1:.4f}, tau_norm {tau}, precision {result.precision:.3f}, recall " \
           f"{result.recall:.3f}"
    if score is None:
        return Graded(None, "judge", [line, "unscored: the reference's tau-b is undefined (NaN) for this answer"],
                      verdicts)
    rule = "tau_norm alone, as the published tables" if variant == "reference" else "tau_norm x F1"
    return Graded(score, "judge", [line, f"score ({rule}): {score:.3f}"], verdicts)


class _Recording:
    """The run's judge, keeping every verdict it gives (the alignment's, for the results)."""

    def __init__(self, judge: Judge, into: list[JudgeVerdict]) -> None:
        self.judge, self.into, self.model = judge, into, judge.model

    async def grade(self, question: str, expected: str, response: str, *, context: str = "",
                    prompt: JudgePrompt | None = None) -> JudgeVerdict:
        verdict = await self.judge.grade(question, expected, response, context=context, prompt=prompt)
        self.into.append(verdict)
        return verdict
