"""LongMemEval's scoring: a rule for the replies it can safely decide, the judge for the rest, and the metrics.

The reference scores every reply with an LLM judge (`judge`). Without one, `rule_verdict` decides only what it
safely can, and leaves the rest unscored (counted, never guessed):

* an empty or blank reply is wrong (0.0);
* an abstention question (`_abs` id) is right (1.0) when the reply recognisably declines ("I don't know", "you
  haven't mentioned ...", "there is no information about ..."; `ABSTAINS`) without venturing a guess ("maybe",
  "probably", "I think", ...);
* another question is right (1.0) when the gold answer is in the reply as whole words after normalising both:
  lower case, accents, punctuation and the articles a/an/the dropped, digit groups joined ("1,000"), number words
  from two to ninety-nine written as digits ("forty-two" -> 42; not "one", which is as often a pronoun), and only
  when nothing in the reply could turn that mention around: no other number than the gold's when the gold has
  one, no negation, contrast, alternative, earlier value or hedge (`_TURNS`: "not", "but", "or", "used to",
  "previously", "maybe", ...), at most 80 words;
* another question (preference questions too) is wrong (0.0) when the reply recognisably declines, ventures no
  guess, says no more than `MAX_DECLINE_WORDS` words and does not mention the gold answer: the history holds the
  answer, so declining cannot be right (an agent without memory is decided wrong, not left unscored);
* a preference question (its "answer" is a rubric) and everything else: unscored (None).

`score_reply` uses the judge when the run has one (every non-blank reply goes to it, as in the reference) and the
rule otherwise. `metrics` computes what the reference reports: accuracy per question type, the task-averaged
accuracy (unweighted mean of the type accuracies), the overall accuracy and the abstention accuracy, each over the
scored questions, with the unscored counted beside them.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict

from ltm_harness._interop.longmemeval.data import QUESTION_TYPES, LMEQuestion, QuestionType
from ltm_harness._interop.longmemeval.judge import judge_verdict
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.verdict import Judge, JudgeUnavailable, JudgeUnparseable, JudgeVerdict, not_judged

MAX_RULE_WORDS = 80  # longer replies mention too much for a mention of the answer to mean it was given
MAX_DECLINE_WORDS = 30  # longer replies that decline may still say something the judge would count
_UNITS = {w: n for n, w in enumerate("zero _ two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split()) if w != "_"}
_TENS = {w: 10 * n for n, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
         if w != "_"}
_ARTICLES = {"a", "an", "the"}
_DIGIT_GROUPS = re.compile(r"(?<=\d)[,_](?=\d{3}\b)")
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
# Abstaining: said of the information, or of the assistant's knowledge of it. Matched on the normalised reply.
ABSTAINS = [re.compile(p) for p in (
    r"\bi (?:do not|dont|don t) (?:know|recall|remember)\b",
    r"\bi (?:am not|m not) (?:sure|aware)\b",
    r"\bi (?:cannot|can not|cant|can t|am unable to|m unable to) (?:answer|tell|say|determine|find|recall|know)\b",
    r"\bi (?:do not|dont|don t) have (?:any |enough )?(?:information|info|details|record|data|knowledge)\b",
    r"\byou (?:have not|havent|haven t|did not|didnt|didn t|never) (?:mentioned|mention|told|tell|said|say|shared|"
    r"share|specified|specify|provided|provide|given|give)\b",
    r"\b(?:no|not enough|insufficient) (?:information|info|details|record|mention|data)\b",
    r"\b(?:was|were|is|has|have) (?:not|never|nt) (?:been )?(?:mentioned|specified|provided|shared|given|said)\b",
    r"\b(?:wasn t|weren t|isn t|hasn t|haven t) (?:been )?(?:mentioned|specified|provided|shared|given|said)\b",
    r"\bthere is no (?:mention|record)\b",
    r"\b(?:not|never) mentioned\b",
    r"\b(?:cannot|can not|cant|can t) be (?:answered|determined)\b",
    r"\bunanswerable\b",
)]
# Words that may turn a mention of the gold answer around, or show a guess.
_TURNS = re.compile(r"\b(?:not|no|never|nor|neither|none|nt|t|but|however|although|though|instead|rather|or|"
                    r"unless|except|previously|formerly|earlier|before|used to|no longer|anymore|any more|"
                    r"maybe|perhaps|probably|possibly|likely|unlikely|might|could|guess|think|believe|unsure|"
                    r"uncertain|approximately|roughly)\b")
_GUESS = re.compile(r"\b(?:maybe|perhaps|probably|possibly|likely|might|could be|guess|i think|i believe|"
                    r"approximately|roughly)\b")


def normalise(text: str) -> str:
    """Lower case, no accents, punctuation or articles, digit groups joined, number words two..ninety-nine as
    digits, single spaces."""
    text = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    text = _DECIMAL.sub("\x00", _DIGIT_GROUPS.sub("", text))
    text = "".join(c if c.isalnum() or c == "\x00" else " " for c in text).replace("\x00", ".")
    words = [w for w in text.split() if w not in _ARTICLES]
    out: list[str] = []
    for word in words:
        unit = 1 if word == "one" else _UNITS.get(word)
        if unit is not None and 0 < unit < 10 and out and out[-1] in _TENS:  # "forty two": one number
            out.append(str(_TENS[out.pop()] + unit))
        elif unit is not None and word != "one":
            out.append(str(unit))
        else:
            out.append(word)
    return " ".join(str(_TENS[w]) if w in _TENS else w for w in out)


def abstains(reply: str) -> bool:
    """The reply recognisably declines to answer, and ventures no guess."""
    text = normalise(reply)
    return any(p.search(text) for p in ABSTAINS) and not _GUESS.search(text)


def contains_answer(answer: str, reply: str) -> bool:
    """The gold answer is in the reply as whole words (normalised), with nothing that could turn it around."""
    gold, said = normalise(answer), normalise(reply)
    if not gold or len(said.split()) > MAX_RULE_WORDS or f" {gold} " not in f" {said} ":
        return False
    if set(_NUMBER.findall(said)) != set(_NUMBER.findall(gold)):
        return False  # another number beside the gold's (or a number where the gold has none)
    return not _TURNS.search(said.replace(gold, " "))


def declines_answerable(answer: str, reply: str) -> bool:
    """A short reply that declines, ventures no guess and does not mention the gold answer anywhere."""
    gold, said = normalise(answer), normalise(reply)
    return (abstains(reply) and len(said.split()) <= MAX_DECLINE_WORDS
            and not (gold and f" {gold} " in f" {said} "))


def rule_verdict(question: LMEQuestion, reply: str) -> float | None:
    """1.0 or 0.0 when a rule can safely decide (module docstring), else None (unscored: for a judge)."""
    if not reply.strip():
        return 0.0
    if question.is_abstention:
        return 1.0 if abstains(reply) else None
    if declines_answerable(question.answer, reply):
        return 0.0
    if question.question_type == "single-session-preference":
        return None
    return 1.0 if contains_answer(question.answer, reply) else None


class LMEScore(BaseModel):
    """How one reply was scored."""

    model_config = ConfigDict(frozen=True)

    score: float | None  # None: unscored
    by: Literal["rule", "judge", "none"]  # "none": the rule could not decide and there is no judge
    reason: str
    verdict: JudgeVerdict | None = None


async def score_reply(question: LMEQuestion, reply: str, judge: Judge | None,
                      prompts: dict[str, JudgePrompt] | None = None) -> LMEScore:
    """With a judge: a blank reply is wrong, every other one is judged with the prompt for its kind (`prompts`:
    ours by default). Without: `rule_verdict`."""
    if not reply.strip():
        return LMEScore(score=0.0, by="rule", reason="the reply is empty")
    if judge is not None:
        try:
            verdict = await judge_verdict(judge, question, reply, prompts)
        except JudgeUnavailable as exc:  # the judge could not be asked: a rule's decision stays, the rest is unscored
            decided = rule_verdict(question, reply)
            if decided is None:
                return LMEScore(score=None, by="judge", reason=not_judged(exc))
            return LMEScore(score=decided, by="rule", reason=f"decided by the rule ({not_judged(exc)})")
        except JudgeUnparseable as exc:
            return LMEScore(score=None, by="judge", reason=f"unscored: {exc.reason}")
        return LMEScore(score=verdict.score, by="judge", reason=verdict.reason, verdict=verdict)
    score = rule_verdict(question, reply)
    if score is None:
        return LMEScore(score=None, by="none", reason="unscored: no rule decides this reply and the run has no judge")
    if question.is_abstention:
        return LMEScore(score=score, by="rule", reason="the reply declines to answer, as it should")
    if score == 0.0:
        return LMEScore(score=score, by="rule", reason="the reply declines to answer, but the history holds the answer")
    return LMEScore(score=score, by="rule", reason="the reply gives the answer")


class LMERow(BaseModel):
    """One question's outcome, as `metrics` needs it."""

    model_config = ConfigDict(frozen=True)

    question_type: QuestionType
    is_abstention: bool
    score: float | None  # None: unscored


class LMEMetrics(BaseModel):
    """What LongMemEval's evaluation reports, each accuracy over the scored questions (None when there are none)."""

    accuracy_by_type: dict[str, float | None]  # every type, in QUESTION_TYPES order
    questions_by_type: dict[str, int]
    unscored_by_type: dict[str, int]
    task_averaged_accuracy: float | None  # unweighted mean of the type accuracies (types with scored questions)
    overall_accuracy: float | None
    abstention_accuracy: float | None
    abstention_questions: int
    abstention_unscored: int
    questions: int
    unscored: int


# The reference's names for the metrics (src/evaluation/print_qa_metrics.py), for tables.
LABELS = {"task_averaged_accuracy": "Task-averaged Accuracy", "overall_accuracy": "Overall Accuracy",
          "abstention_accuracy": "Abstention Accuracy"}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def metrics(rows: Iterable[LMERow | tuple[str, bool, float | None]]) -> LMEMetrics:
    """The metrics of per-question outcomes (LMERow, or (question_type, is_abstention, score) tuples)."""
    scores: dict[str, list[float]] = {t: [] for t in QUESTION_TYPES}
    counts = dict.fromkeys(QUESTION_TYPES, 0)
    unscored = dict.fromkeys(QUESTION_TYPES, 0)
    abstention: list[float] = []
    abstention_count = abstention_unscored = 0
    for raw in rows:
        row = raw if isinstance(raw, LMERow) else LMERow.model_validate(dict(zip(LMERow.model_fields, raw)))
        counts[row.question_type] += 1
        abstention_count += row.is_abstention
        if row.score is None:
            unscored[row.question_type] += 1
            abstention_unscored += row.is_abstention
            continue
        scores[row.question_type].append(row.score)
        if row.is_abstention:
            abstention.append(row.score)
    by_type = {t: _mean(scores[t]) for t in QUESTION_TYPES}
    return LMEMetrics(
        accuracy_by_type=by_type, questions_by_type=counts, unscored_by_type=unscored,
        task_averaged_accuracy=_mean([a for a in by_type.values() if a is not None]),
        overall_accuracy=_mean([s for values in scores.values() for s in values]),
        abstention_accuracy=_mean(abstention), abstention_questions=abstention_count,
        abstention_unscored=abstention_unscored, questions=sum(counts.values()), unscored=sum(unscored.values()))
