"""MemoryAgentBench's two judged sources, through the run's judge (`--judge MODEL`: its client, cache, ledger and
event log):

* LongMemEval in MAB (`longmemeval_s*`): the reference's `llm_based_eval/longmem_qa_evaluate.py` is LongMemEval's
  own yes/no check per question type (abstention for `_abs` ids), so the question goes through the `longmemeval`
  dataset's scoring (`ltm_harness._interop.longmemeval.scoring.score_reply`: our prompts per kind, or the
  reference's texts read from `llm_based_eval/longmem_qa_evaluate.py` of a MemoryAgentBench checkout); without a
  judge, its rule decides what it safely can and leaves the rest unscored. The gold is the first accepted answer;
  `args: {scoring: reference}` sends the list's Python repr, as the reference does for a list of golds.
* the book summaries (`infbench_sum_eng_shots2`): HELMET's scheme as the reference runs it, in our words: the
  summary's fluency (1 fluent, 0 not), its recall (the share of the row's key points, `metadata.keypoints`, it
  supports) and its precision (the share of its sentences the expert summary supports), each one judge call read as
  our JSON verdict; the score is fluency x 2PR / (P + R) (0 when P + R = 0). Without a judge it is unscored.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Sequence

from ltm_harness._interop.longmemeval.data import QUESTION_TYPES, LMEQuestion
from ltm_harness._interop.longmemeval.reference_prompts import load_reference_prompts
from ltm_harness._interop.longmemeval.scoring import LMEScore, score_reply
from ltm_harness._scoring.judge_prompt import JudgePrompt
from ltm_harness._scoring.verdict import Judge, JudgeUnparseable, JudgeVerdict

LME_SCRIPT = "llm_based_eval/longmem_qa_evaluate.py"
_EPOCH = datetime(2023, 1, 1)


def lme_question(question: str, golds: Sequence[str], question_id: str | None, question_type: str | None,
                 reference: bool) -> LMEQuestion:
    qtype = question_type if question_type in QUESTION_TYPES else "multi-session"
    answer = str(list(golds)) if reference else (golds[0] if golds else "")
    return LMEQuestion(question_id=question_id or "mab", question_type=qtype, question=question,  # type: ignore[arg-type]
                       answer=answer, question_date=_EPOCH, question_date_text="", sessions=[], answer_session_ids=[])


async def lme_score(q: LMEQuestion, reply: str, judge: Judge | None, checkout: str | None) -> LMEScore:
    prompts = load_reference_prompts(Path(checkout).expanduser() / LME_SCRIPT) if judge is not None and checkout \
        else None
    return await score_reply(q, reply, judge, prompts)


def _prompt(name: str, user: str) -> JudgePrompt:
    return JudgePrompt(name=f"mab-summary-{name}", description=f"MemoryAgentBench's summary {name} (HELMET's "
                       "scheme, our wording)", user=user, parse_attempts=2, temperature=0.1)


_JSON = ' Reply with only the JSON object {{"score": <the number>, "reason": "<one sentence>"}}.'
FLUENCY = _prompt("fluency", (
    "You are judging the fluency of a summary of a book ({question}). A fluent summary is readable English "
    "prose, coherent, without repetition loops, fragments or garbled text; its content does not matter here, nor "
    "whether it matches this expert summary, given only so you know the book: <expected>{expected}</expected>\n\n"
    "Summary to judge:\n<response>{response}</response>\n\nScore 1 if the summary is fluent, 0 if not." + _JSON))
RECALL = _prompt("recall", (
    "You are checking which key points of a book ({question}) a summary states. Key points, one per line:\n"
    "<expected>{expected}</expected>\n\nSummary:\n<response>{response}</response>\n\nCount the key points the summary states or clearly implies (a point "
    "it contradicts or leaves out does not count). Score = that count divided by the number of key points, a "
    "number from 0 to 1." + _JSON))
PRECISION = _prompt("precision", (
    "You are checking a summary of a book ({question}) against an expert's summary of it.\n\nExpert summary:\n"
    "<expected>{expected}</expected>\n\nSummary to check:\n<response>{response}</response>\n\nCount the sentences of the summary to check whose content the "
    "expert summary supports. Score = that count divided by the number of its sentences, a number from 0 to 1."
    + _JSON))


async def summary_score(judge: Judge, question: str, golds: Sequence[str], keypoints: Sequence[str],
                        reply: str, reference: bool) -> tuple[float | None, str, list[JudgeVerdict]]:
    """(fluency x F1 or None when unscored, the reason, the verdicts)."""
    expert = str(list(golds)) if reference else (golds[0] if golds else "")
    points = "\n".join(f"- {p}" for p in keypoints if p) or expert
    verdicts: list[JudgeVerdict] = []
    try:
        for prompt, expected in ((FLUENCY, expert), (RECALL, points), (PRECISION, expert)):
            verdicts.append(await judge.grade(question[:200], expected, reply, prompt=prompt))
    except JudgeUnparseable as exc:
        return None, f"unscored: the summary judge's verdict could not be read ({exc.reason})", verdicts
    fluency = 1.0 if verdicts[0].score >= 0.5 else 0.0
    recall, precision = verdicts[1].score, verdicts[2].score
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return fluency * f1, (f"summary judge: fluency {fluency:g} x F1 {f1:.3f} (recall {recall:.3f}, precision "
                          f"{precision:.3f})"), verdicts


