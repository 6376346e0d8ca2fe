"""Our judge prompts for BEAM: one rubric item against a response (full / partial / none), and whether two snippets
name the same event (event ordering's alignment).

BEAM's evaluation asks a judge (gpt-4.1-mini, temperature 0) about each rubric item ("nugget") on its own: score
1.0 when the response fully meets it, 0.5 when partly, 0.0 when not; meaning over wording, no penalty for style,
and a negative item ("should not ...") met by the absence of what it names. The reply is JSON `{score, reason}`.
For event ordering it asks, pair by pair, whether a line of the answer and a gold event describe the same event,
reading "yes" anywhere in the reply as a match.

The texts below are our own wording of those criteria (the reference's code and prompt texts have no licence and
are not copied; `reference_prompts` reads them from a BEAM checkout the user names, for exact parity). They are
sent through the run's judge (`Judge.grade(..., prompt=...)`: its model, client, cache and event log).
"""

from __future__ import annotations

from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.verdict import Judge

TEMPERATURE = 0.0

RUBRIC = JudgePrompt(
    name="beam-rubric",
    description="BEAM: one rubric item against the response, 1 / 0.5 / 0 (our wording of the reference's criteria)",
    system=("You grade a chat assistant's response against one item of a rubric. The assistant had a long "
            "conversation with a user and was then asked a question about it; the rubric lists what a good response "
            "does. Grade only the item you are given."),
    user=("Question the assistant was asked:\n<question>{question}</question>\n\n"
          "Rubric item:\n<rubric_item>{expected}</rubric_item>\n\n"
          "The assistant's response:\n<response>{response}</response>\n\n"
          "Score 1 when the response meets the item completely, 0.5 when it meets part of it (some of what the "
          "item asks, or it vaguely), 0 when it does not meet it at all or contradicts it. Judge what is meant, not "
          "the wording, and do not mark down style or length. An item saying what the response should not do is "
          "met when the response does not do it.\n"
          'Reply with only a JSON object: {{"score": 1 or 0.5 or 0, "reason": "<one sentence>"}}'),
    parse_attempts=2, temperature=TEMPERATURE)

SAME_EVENT = JudgePrompt(
    name="beam-same-event",
    description="BEAM event ordering: do two snippets name the same event (our wording)",
    system=("You compare two short snippets about a user's conversation with an assistant and say whether they "
            "describe the same event or fact. Wording, detail and numbering may differ."),
    user=("The question was: {question}\n\nEvent from the reference list:\n<event>{expected}</event>\n\n"
          "Item from the assistant's answer:\n<item>{response}</item>\n\n"
          "Do they describe the same event or fact? Answer with one word: yes or no."),
    parse_attempts=2, verdict="yes_no", max_tokens=5, temperature=TEMPERATURE)


async def same_event(judge: Judge, question: str, event: str, item: str, prompt: JudgePrompt | None = None) -> bool:
    """The judge's word on whether `item` (a line of the answer) is the gold `event`; JudgeUnparseable when it says
    neither yes nor no."""
    verdict = await judge.grade(question, event, item, prompt=prompt or SAME_EVENT)
    return verdict.score >= 1.0
