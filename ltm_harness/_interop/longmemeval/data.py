"""LongMemEval's questions as typed models, read one at a time from files of up to several GB.

A LongMemEval file (Wu et al., ICLR 2025; `longmemeval_oracle.json`, `longmemeval_s_cleaned.json`,
`longmemeval_m_cleaned.json`) is a JSON list of questions, each with its own haystack: parallel lists
`haystack_session_ids`, `haystack_dates` ("2023/05/30 (Tue) 23:40") and `haystack_sessions` (lists of
`{role, content, has_answer?}` turns), and the ids of its evidence sessions. `LMEQuestion` zips the three lists
into dated `LMESession`s sorted by date (a stable sort, as the reference's long-context baseline feeds them; the
oracle file's haystacks are not sorted, the S and M files' are). A question whose id ends in `_abs` is an
abstention question whatever its type: its `answer` explains why it cannot be answered. Dates carry no time zone
in the files; they are read as UTC, as the harness's virtual clock counts.

The M file is about 2.7 GB, so files are never read whole: `stream.list_items` (ijson's C tokenizer) builds one
question at a time, so memory stays at about one question (a few MB) whatever the file's size. Questions not asked
for (`only`) are skipped as soon as their `question_id` is read, nothing of them built. A file that is not shaped as
LongMemEval's is one `DefinitionError` naming the file, the question and the first bad field.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Generator, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.longmemeval.stream import list_items

QuestionType = Literal["single-session-user", "single-session-assistant", "single-session-preference",
                       "temporal-reasoning", "knowledge-update", "multi-session"]
QUESTION_TYPES: tuple[str, ...] = get_args(QuestionType)
ABSTENTION_SUFFIX = "_abs"
WHAT = "a LongMemEval file (a JSON list of questions, as longmemeval_s_cleaned.json)"
_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2}) \((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\) (\d{1,2}):(\d{2})")


def parse_date(text: str) -> datetime:
    """A LongMemEval date ("2023/05/30 (Tue) 23:40") as a UTC datetime; ValueError when it is not one."""
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text[:40]!r} is not a date like '2023/05/30 (Tue) 23:40'")
    year, month, day, hour, minute = map(int, match.groups())
    return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)  # ValueError for 2023/02/30


class LMETurn(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    role: Literal["user", "assistant"]
    content: str
    has_answer: bool = False  # this turn states (part of) the evidence


class LMESession(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    date: datetime
    date_text: str  # as the file writes it
    turns: list[LMETurn]


class LMEQuestion(BaseModel):
    model_config = ConfigDict(frozen=True)

    question_id: str
    question_type: QuestionType
    question: str
    answer: str  # for an abstention question, why it cannot be answered; ints in the file become text
    question_date: datetime
    question_date_text: str
    sessions: list[LMESession]  # the haystack, by date
    answer_session_ids: list[str]

    @property
    def is_abstention(self) -> bool:
        """Abstention is told by the id's `_abs` suffix, not by the type (it keeps its type)."""
        return self.question_id.endswith(ABSTENTION_SUFFIX)

    @property
    def evidence_sessions(self) -> list[LMESession]:
        """The haystack's sessions named in `answer_session_ids`, by date."""
        wanted = set(self.answer_session_ids)
        return [s for s in self.sessions if s.id in wanted]


class _FileQuestion(BaseModel):
    """A question as the file holds it (field names as there, so errors name them)."""

    model_config = ConfigDict(extra="ignore")

    question_id: str = Field(min_length=1)
    question_type: QuestionType
    question: str
    answer: str
    question_date: str
    haystack_session_ids: list[str]
    haystack_dates: list[str]
    haystack_sessions: list[list[LMETurn]]
    answer_session_ids: list[str]

    @field_validator("answer", mode="before")
    @classmethod
    def _int_answer(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    def to_question(self) -> LMEQuestion:
        """The zipped, dated, sorted question; ValueError naming the field when the lists disagree."""
        sessions, dates = len(self.haystack_sessions), len(self.haystack_dates)
        if not len(self.haystack_session_ids) == dates == sessions:
            raise ValueError(f"haystack_session_ids, haystack_dates and haystack_sessions differ in length "
                             f"({len(self.haystack_session_ids)}, {dates}, {sessions})")
        zipped = []
        for k, (sid, text, turns) in enumerate(zip(self.haystack_session_ids, self.haystack_dates,
                                                   self.haystack_sessions)):
            try:
                when = parse_date(text)
            except ValueError as exc:
                raise ValueError(f"haystack_dates[{k}]: {exc}") from None
            zipped.append(LMESession(id=sid, date=when, date_text=text, turns=turns))
        try:
            asked = parse_date(self.question_date)
        except ValueError as exc:
            raise ValueError(f"question_date: {exc}") from None
        zipped.sort(key=lambda s: s.date)
        return LMEQuestion(question_id=self.question_id, question_type=self.question_type, question=self.question,
                           answer=self.answer, question_date=asked, question_date_text=self.question_date,
                           sessions=zipped, answer_session_ids=self.answer_session_ids)


def _where(loc: tuple[int | str, ...]) -> str:
    """haystack_sessions[3][0].role from ('haystack_sessions', 3, 0, 'role')."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(the question)"


def _bad(path: Path, index: int, item: Any, problem: str) -> DefinitionError:
    qid = item.get("question_id") if isinstance(item, dict) else None
    named = f" ({qid!r})" if isinstance(qid, str) and qid else ""
    return DefinitionError(f"{path}: question {index}{named}: {problem}; it is not {WHAT}")


def _to_question(path: Path, index: int, item: Any) -> LMEQuestion:
    if not isinstance(item, dict):
        raise _bad(path, index, item, f"is {type(item).__name__}, not an object")
    try:
        return _FileQuestion.model_validate(item).to_question()
    except ValidationError as exc:
        err = exc.errors()[0]
        raise _bad(path, index, item, f"{_where(err['loc'])}: {err['msg']}") from None
    except ValueError as exc:
        raise _bad(path, index, item, str(exc)) from None


def iter_questions(path: Path, *, only: set[str] | None = None) -> Generator[LMEQuestion, None, None]:
    """The questions of a LongMemEval file, in file order, read incrementally with memory for one question.
    `only`: the ids to build (the others are skipped unbuilt). DefinitionError (one line) for a file that is
    missing, not JSON, cut, or not shaped as LongMemEval's (in the questions read: a question skipped by `only` is
    checked only as JSON)."""
    path = Path(path)
    seen = False
    wanted = None if only is None else (lambda qid: isinstance(qid, str) and qid in only)
    for index, item in list_items(path, what=WHAT, key="question_id", keep=wanted):
        seen = True
        if wanted is not None and not (isinstance(item, dict) and wanted(item.get("question_id"))):
            continue  # not an object, or one without an id: not asked for
        yield _to_question(path, index, item)
    if only is None and not seen:
        raise DefinitionError(f"{path}: holds no questions (an empty list); give {WHAT}")


def question_index(path: Path) -> list[tuple[str, str, bool]]:
    """(question_id, question_type, is_abstention) of every question of the file, in file order, each checked
    only for those two fields."""
    path = Path(path)
    out = []
    for index, item in list_items(path, what=WHAT, fields=frozenset(["question_id", "question_type"])):
        qid = item.get("question_id") if isinstance(item, dict) else None
        kind = item.get("question_type") if isinstance(item, dict) else None
        if not isinstance(qid, str) or not qid:
            raise _bad(path, index, item, "question_id: missing or not a text")
        if kind not in QUESTION_TYPES:
            known = ", ".join(QUESTION_TYPES)
            raise _bad(path, index, item, f"question_type: {str(kind)[:40]!r} is not one of {known}")
        out.append((qid, kind, qid.endswith(ABSTENTION_SUFFIX)))
    if not out:
        raise DefinitionError(f"{path}: holds no questions (an empty list); give {WHAT}")
    return out


def select_questions(path: Path, n: int | None, seed: int | str = 0) -> list[str]:
    """The ids of `n` questions of the file (all when None or at least as many as there are), in file order,
    stratified: the six types and abstention are seven groups (an abstention question counts in its group only),
    each given as even a share of `n` as its size allows; which questions of a group, and which groups get the
    remainder, is drawn from `seed`, so the same seed gives the same ids."""
    index = question_index(path)
    if n is None or n >= len(index):
        return [qid for qid, _, _ in index]
    if n < 0:
        raise ValueError(f"n must be at least 0, not {n}")
    groups: dict[str, list[int]] = {}
    for k, (_, kind, abstention) in enumerate(index):
        groups.setdefault("abstention" if abstention else kind, []).append(k)
    rng = random.Random(f"longmemeval-select:{seed}")
    quota = _even_shares(n, {name: len(members) for name, members in sorted(groups.items())}, rng)
    chosen: list[int] = []
    for name, members in sorted(groups.items()):
        chosen += rng.sample(members, quota[name])
    return [index[k][0] for k in sorted(chosen)]


def _even_shares(n: int, sizes: dict[str, int], rng: random.Random) -> dict[str, int]:
    """`n` split over groups as evenly as their sizes allow (a small group gives what it lacks to the others);
    the remainder of an uneven split goes to groups drawn by `rng`."""
    quota = dict.fromkeys(sizes, 0)
    left = n
    while left:
        open_groups = [g for g in sizes if quota[g] < sizes[g]]
        share, rest = divmod(left, len(open_groups))
        if share == 0:
            for g in rng.sample(open_groups, rest):
                quota[g] += 1
            break
        for g in open_groups:
            take = min(share, sizes[g] - quota[g])
            quota[g] += take
            left -= take
    return quota
