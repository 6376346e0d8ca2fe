"""Our yes/no judge prompts for LongMemEval, one per kind of question, with the reference's criteria.

LongMemEval's evaluation asks a judge model (gpt-4o-2024-08-06, temperature 0, at most 10 tokens) whether a
response is correct, and reads "yes" anywhere in its lower-cased reply as correct. What counts differs by kind:

* the default (single-session-user, single-session-assistant, multi-session): the response contains the correct
  answer, or works through every step to it; giving only part of what the answer needs is wrong;
* temporal-reasoning: the same, and a count of days, weeks or months off by one is still correct;
* knowledge-update: the response may mention earlier information as long as it gives the updated answer;
* single-session-preference: the "answer" is a rubric; correct when the response recalls and uses the user's
  information as the rubric describes (not necessarily every point of it);
* abstention (any question whose id ends in `_abs`): correct when the response identifies the question as one it
  cannot answer (the information was never given, or is incomplete).

The texts below are our own, written to those criteria (the reference's are not copied; `reference_prompts` reads
them from a LongMemEval checkout the user names, for exact parity). Each prompt is a single user message, as the
reference sends, read as a yes/no verdict, at temperature 0 with the reply capped at 10 tokens; the run's judge
model, client, cache and event log are used (`Judge.grade(..., prompt=...)`). A reply saying neither yes nor no is
asked again once, then left unscored (never counted wrong).
"""

from __future__ import annotations

from ltm_harness._interop.longmemeval.data import QUESTION_TYPES, LMEQuestion
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.verdict import Judge, JudgeVerdict

JUDGE_KINDS: tuple[str, ...] = QUESTION_TYPES + ("abstention",)
MAX_TOKENS = 10  # the reference's judge settings
TEMPERATURE = 0.0

_ASK = "Answer with one word: yes or no."
_DEFAULT = (
    "You are checking a chat assistant's answer to a question about its earlier conversations with a user.\n\n"
    "Question: {question}\n\nReference answer: {expected}\n\nAssistant's response: {response}\n\n"
    "Say yes if the response gives the reference answer, in any wording, or works through every step needed to "
    "reach it. Say no if it gives a different answer, gives only part of what the reference answer requires, or "
    "gives no answer.{extra} " + _ASK)
_TEMPORAL = (" When the question asks for a number of days, weeks, months or years, a count that is off by one "
             "(say 17 days where the reference says 18) still counts as correct.")
_UPDATE = (
    "You are checking a chat assistant's answer to a question about its earlier conversations with a user. The "
    "user's information changed over time; the reference answer is the most recent value.\n\n"
    "Question: {question}\n\nReference answer: {expected}\n\nAssistant's response: {response}\n\n"
    "Say yes if the response gives the reference answer as the current one, even if it also mentions what was "
    "true before. Say no if it gives an outdated or different value as the answer, or gives no answer. " + _ASK)
_PREFERENCE = (
    "You are checking a chat assistant's reply to a user who asked for advice or a recommendation. A good reply "
    "remembers what the user said about themselves in earlier conversations and tailors itself to it. Instead of "
    "one right answer you get a rubric describing such a reply.\n\n"
    "Question: {question}\n\nRubric: {expected}\n\nAssistant's response: {response}\n\n"
    "Say yes if the response draws on the user's own information correctly, as the rubric describes; it need not "
    "cover every point of the rubric. Say no if it ignores, contradicts or misremembers that information. " + _ASK)
_ABSTENTION = (
    "You are checking a chat assistant's answer to a question that cannot be answered from its earlier "
    "conversations with the user; the explanation says why.\n\n"
    "Question: {question}\n\nExplanation: {expected}\n\nAssistant's response: {response}\n\n"
    "Say yes if the response recognises that it cannot answer: for example it says the information was never "
    "given or is incomplete, or that something related was mentioned but not what was asked. Say no if it answers "
    "the question as though the information were known. " + _ASK)


def _prompt(kind: str, user: str) -> JudgePrompt:
    return JudgePrompt(name=f"longmemeval-{kind}", description=f"LongMemEval's criteria for {kind} questions "
                       "(our wording)", user=user, parse_attempts=2, verdict="yes_no", max_tokens=MAX_TOKENS,
                       temperature=TEMPERATURE)


_default = _DEFAULT.format(question="{question}", expected="{expected}", response="{response}", extra="")
PROMPTS: dict[str, JudgePrompt] = {
    "single-session-user": _prompt("single-session-user", _default),
    "single-session-assistant": _prompt("single-session-assistant", _default),
    "multi-session": _prompt("multi-session", _default),
    "temporal-reasoning": _prompt("temporal-reasoning", _DEFAULT.format(
        question="{question}", expected="{expected}", response="{response}", extra=_TEMPORAL)),
    "knowledge-update": _prompt("knowledge-update", _UPDATE),
    "single-session-preference": _prompt("single-session-preference", _PREFERENCE),
    "abstention": _prompt("abstention", _ABSTENTION),
}


def judge_kind(question: LMEQuestion) -> str:
    """The prompt a question is judged with: "abstention" for an `_abs` id, whatever its type; else its type."""
    return "abstention" if question.is_abstention else question.question_type


def judge_prompt(question: LMEQuestion, prompts: dict[str, JudgePrompt] | None = None) -> JudgePrompt:
    """The judge prompt for `question`, from `prompts` (keyed by JUDGE_KINDS; ours by default, or the reference's
    read by `reference_prompts.load_reference_prompts`)."""
    return (prompts or PROMPTS)[judge_kind(question)]


async def judge_verdict(judge: Judge, question: LMEQuestion, reply: str,
                        prompts: dict[str, JudgePrompt] | None = None) -> JudgeVerdict:
    """The judge's verdict on `reply`, with the prompt for the question's kind; JudgeUnparseable when the judge
    gave no yes or no (the question is then unscored)."""
    return await judge.grade(question.question, question.answer, reply, prompt=judge_prompt(question, prompts))
