"""Imported answers matched to the benchmark's questions as the run asks them, never guessed.

LoCoMo: an answer names its conversation (a sample id, or mem0's index into locomo10.json) and its question by
index in the sample's `qa` list or by text; texts are compared with their whitespace collapsed, and a text asked
several times in one conversation takes its answers in order among the equal ones. LongMemEval: by question_id.
MemoryAgentBench: by `<source>:<query_id>`, the question's place among its source's questions in file order; an
answer whose golds (the file's `answer`) are not the question's is unmatched (the file was made from another
revision of the data, or another cap on rows), never scored against another question.
An answer whose conversation or question is not in the run is unmatched; a question given more than one answer
(by index or id), or more answers to a text than it is asked, gets none of them: they are listed as duplicated and
the question stays unanswered (unscored), so no answer is ever picked for it. An answer the file makes ambiguous (a
key given twice) is counted as duplicated and never used. A LoCoMo answer giving both an index and a text that
disagree (the index's question reads otherwise) is unmatched: neither is trusted over the other. The publisher's
scores that are not in [0, 1] are listed as invalid and never kept (so never averaged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Literal

from pydantic import BaseModel

from ltm_harness._guard.limits import clip
from ltm_harness._interop.answers.formats import AnswersFile, ImportedAnswer

MAX_LISTED = 50  # unmatched and duplicated answers listed by name (all are counted)


@dataclass(frozen=True)
class AskedQuestion:
    """A question of the run, as its result is named (`conv-26.q17`, a LongMemEval question_id)."""

    example_id: str  # the test (conversation) it is asked in
    result_id: str
    key: str  # LoCoMo: its index in the sample's qa list; LongMemEval: its question_id
    text: str
    golds: tuple[str, ...] = ()  # MemoryAgentBench: its golds, to check an answer's (empty: no check)


class TheirScore(BaseModel):
    """The publisher's own scores of one matched answer, kept beside ours (never used as ours)."""

    result_id: str
    f1: float | None = None
    bleu: float | None = None
    judge: float | None = None
    judge_model: str | None = None


class MatchReport(BaseModel):
    """How the file's answers met the run's questions: what the import says and the run folder keeps."""

    file: str
    file_format: str  # formats.FORMAT_NAMES
    answers: int  # in the file
    questions: int  # asked in the run
    matched: int  # questions that got exactly one answer
    unanswered: int  # questions with no (usable) answer: unscored
    unmatched: int
    duplicated: int
    unmatched_list: list[str] = field(default_factory=list)  # "line 7: conversation conv-99 is not in the run"
    duplicated_list: list[str] = field(default_factory=list)
    theirs: list[TheirScore] = field(default_factory=list)
    invalid_scores: int = 0  # the publisher's scores not in [0, 1] (shown as invalid, never averaged)
    invalid_list: list[str] = field(default_factory=list)


@dataclass
class Matched:
    """Each test's questions in the order asked, each with its imported response (None: none usable)."""

    by_example: dict[str, list[tuple[str, str | None]]]
    report: MatchReport


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _their(a: ImportedAnswer, result_id: str) -> TheirScore | None:
    if a.their_f1 is None and a.their_bleu is None and a.their_judge is None:
        return None
    return TheirScore(result_id=result_id, f1=a.their_f1, bleu=a.their_bleu, judge=a.their_judge,
                      judge_model=a.their_judge_model)


def match_answers(file: AnswersFile, questions: Iterable[AskedQuestion],
                  benchmark: Literal["locomo", "longmemeval", "memoryagentbench"],
                  conversations_in_file: list[str] | None = None) -> Matched:
    """Match `file`'s answers to `questions` (in the run's order). `conversations_in_file`: LoCoMo's sample ids in
    the data file's order, for mem0's conversation indices."""
    asked = list(questions)
    by_example: dict[str, list[AskedQuestion]] = {}
    for q in asked:
        by_example.setdefault(q.example_id, []).append(q)
    chosen: dict[str, list[ImportedAnswer]] = {}  # result_id -> the answers given to it
    unmatched: list[str] = []
    duplicated_extra: list[str] = []
    text_seen: dict[tuple[str, str], int] = {}
    by_key = {q.key: q for q in asked}
    invalid = [f"{a.where}: their {score} is not a score in [0, 1]; not used" for a in file.answers
               for score in a.invalid_scores]
    for a in file.answers:
        if a.unusable is not None:
            duplicated_extra.append(f"{a.where}: {a.unusable}; never used")
            continue
        if benchmark == "memoryagentbench":
            found = by_key.get(a.question_id or "")
            if found is None:
                unmatched.append(f"{a.where}: question {a.question_id!r} is not a question of the run")
                continue
            if a.golds and found.golds and not set(a.golds) <= set(found.golds):
                unmatched.append(f"{a.where}: question {a.question_id!r} has the gold {clip(found.golds[0])} in the "
                                 f"run, the file {clip(a.golds[0])}: another revision of the data?")
                continue
            chosen.setdefault(found.result_id, []).append(a)
            continue
        if benchmark == "longmemeval":
            target = next((q for q in by_example.get(a.question_id or "", [])), None)
            if target is None:
                unmatched.append(f"{a.where}: question_id {a.question_id!r} is not a question of the run")
                continue
            chosen.setdefault(target.result_id, []).append(a)
            continue
        conversation = a.conversation or ""
        if conversation.startswith("#"):
            k = int(conversation[1:])
            if conversations_in_file is None or k >= len(conversations_in_file):
                unmatched.append(f"{a.where}: conversation index {k} is not in the data file")
                continue
            conversation = conversations_in_file[k]
        qs = by_example.get(conversation)
        if qs is None:
            unmatched.append(f"{a.where}: conversation {conversation!r} is not in the run")
            continue
        if a.question_index is not None:
            target = next((q for q in qs if q.key == str(a.question_index)), None)
            if target is None:
                unmatched.append(f"{a.where}: {conversation} has no question {a.question_index} in the run")
                continue
            if a.question is not None and _norm(a.question) != _norm(target.text):
                unmatched.append(f"{a.where}: question_index {a.question_index} of {conversation} reads "
                                 f"{clip(target.text, 80)}, not the line's question {clip(a.question, 80)}")
                continue
            chosen.setdefault(target.result_id, []).append(a)
            continue
        text = _norm(a.question or "")
        equal = [q for q in qs if _norm(q.text) == text]
        if not equal:
            unmatched.append(f"{a.where}: no question of {conversation} in the run reads {a.question!r}")
            continue
        n = text_seen.get((conversation, text), 0)
        text_seen[(conversation, text)] = n + 1
        if n >= len(equal):
            duplicated_extra.append(f"{a.where}: one answer more to {a.question!r} in {conversation} than it is asked "
                                    f"({len(equal)})")
            continue
        chosen.setdefault(equal[n].result_id, []).append(a)
    responses: dict[str, str] = {}
    duplicated = list(duplicated_extra)
    theirs = []
    for result_id, given in chosen.items():
        if len(given) > 1:
            duplicated += [f"{a.where}: {result_id} is answered {len(given)} times; none of its answers is used"
                           for a in given]
            continue
        responses[result_id] = given[0].response
        if (their := _their(given[0], result_id)) is not None:
            theirs.append(their)
    table = {example: [(q.text, responses.get(q.result_id)) for q in qs] for example, qs in by_example.items()}
    report = MatchReport(file=file.path, file_format=file.format, answers=len(file.answers), questions=len(asked),
                         matched=len(responses), unanswered=len(asked) - len(responses), unmatched=len(unmatched),
                         duplicated=len(duplicated), unmatched_list=unmatched[:MAX_LISTED],
                         duplicated_list=duplicated[:MAX_LISTED], theirs=theirs, invalid_scores=len(invalid),
                         invalid_list=invalid[:MAX_LISTED])
    return Matched(table, report)
