"""Our LLM-judge prompts for the number memory vendors publish on LoCoMo ("J": the share of CORRECT verdicts over
categories 1-4, category 5 left out), in two variants:

* `lenient` (prompts/judge/locomo-lenient.json): CORRECT when the response refers to the same thing or topic as
  the gold answer, dates in any form or relative, as the vendors' judge counts;
* `strict` (prompts/judge/locomo-strict.json): CORRECT only when it states the gold answer's facts (every part of
  it); dates may differ in format only.

Both are our own wording of those criteria. They are ordinary judge prompts (found by name like `default`, so a
run selects one with `judge: {prompt: locomo-lenient}`) and ask for `{"reason", "correct": true|false}`, which the
harness's judge reads as a score of 1 or 0; a reply it cannot read, even after asking again, raises
`JudgeUnparseable`, which leaves the question unscored, never wrong. The same answers can score far apart under
the two (one published comparison: 35% or 91% by the judge prompt alone), so a result names the prompt it was judged by.
"""

from __future__ import annotations

from typing import Literal

from ltm_harness._interop.locomo.data import ADVERSARIAL, CATEGORY_NAMES, LocomoQuestion
from ltm_harness._llm.judge import load_judge_prompt
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.verdict import Judge, JudgeVerdict

JudgeVariant = Literal["lenient", "strict"]
JUDGE_PROMPT_NAMES: dict[JudgeVariant, str] = {"lenient": "locomo-lenient", "strict": "locomo-strict"}
JUDGED_CATEGORIES = frozenset(CATEGORY_NAMES) - {ADVERSARIAL}  # the vendors' J leaves adversarial questions out


def judge_prompt(variant: JudgeVariant) -> JudgePrompt:
    return load_judge_prompt(JUDGE_PROMPT_NAMES[variant])


def is_judged(question: LocomoQuestion) -> bool:
    """Whether the question counts towards J (categories 1-4, with a gold answer)."""
    return question.category in JUDGED_CATEGORIES and question.answer is not None


async def grade(judge: Judge, question: LocomoQuestion, response: str, *, context: str = "") -> JudgeVerdict:
    """The judge's verdict on `response` to `question`: the question as the file words it (without the hints
    the agent was asked with) and its whole gold answer. Raises JudgeUnparseable (unscored) as every judge does."""
    gold = question.answer
    if question.category not in JUDGED_CATEGORIES or gold is None:
        raise ValueError(f"question {question.index} (category {question.category}) is not judged for J")
    return await judge.grade(question.question, gold, response, context=context)
