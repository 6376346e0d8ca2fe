"""BEAM's probing questions (`chats/<scale>/<n>/probing_questions/probing_questions.json`) read into typed models,
their evidence read from every shape `source_chat_ids` takes, the quirks counted.

The file is an object with one key per ability (the ten in `ABILITIES`), each a list of questions. Every question
has `question` and `rubric` (the nuggets a judge scores; for event ordering, the gold events in order); the gold
answer is in a field named per ability (`GOLD_FIELDS`; instruction and preference following have none). The
evidence is `source_chat_ids`: message ids of the same chat (for 10M the global ids of the assembled chat), as

* a list of ids; for event ordering also a list of lists (one list per event);
* an object of two lists (`first_statement`/`second_statement`, `original_info`/`updated_info`,
  `first_event`/`second_event`), one of them sometimes empty;
* missing (abstention questions by design; 9 others), an empty list, or a stray non-id entry (`"--"`).

Ids given as digit strings are read as ids; anything else is left out and counted. What does not fit this shape
is one `DefinitionError` naming the file, the question and the field.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from ltm_harness._errors import DefinitionError

ABILITIES: tuple[str, ...] = (
    "abstention", "contradiction_resolution", "event_ordering", "information_extraction", "instruction_following",
    "knowledge_update", "multi_session_reasoning", "preference_following", "summarization", "temporal_reasoning")
ABILITY_NAMES = {a: a.replace("_", " ") for a in ABILITIES}
GOLD_FIELDS = {"abstention": "ideal_response", "contradiction_resolution": "ideal_answer",
               "summarization": "ideal_summary", "instruction_following": None, "preference_following": None}
# the kinds of data slip counted in a run's summary (as LoCoMo's)
QUIRKS = ("evidence_missing", "evidence_empty", "evidence_half_empty", "evidence_nested", "evidence_not_ids",
          "evidence_unknown", "evidence_duplicates", "event_ids_unordered", "event_ids_vs_rubric", "rubric_empty",
          "dates_unread")
NOT_BEAM = "it is not a BEAM probing_questions.json"


class BeamQuestion(BaseModel):
    """One probing question, as a test needs it."""

    model_config = ConfigDict(frozen=True)

    ability: str
    index: int  # within its ability, as in the file
    question: str
    rubric: list[str]
    gold: str | None  # the ideal answer/summary/response; None for instruction and preference following
    evidence: list[int]  # message ids, each once, in the order given (event ordering: first id of each event first)
    difficulty: str = ""

    @property
    def key(self) -> str:
        return f"{self.ability}.{self.index}"


class Quirks(BaseModel):
    counts: dict[str, int] = Field(default_factory=dict)

    def note(self, kind: str, n: int = 1) -> None:
        if n:
            self.counts[kind] = self.counts.get(kind, 0) + n


_DIGITS = re.compile(r"[0-9]{1,18}")  # a message number written as text: ASCII digits ("²" is a digit to str.isdigit)


def message_id(value: Any) -> int | None:
    """A message number: an int, or text of ASCII digits (None for anything else)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return int(value.strip())
    return None


_id = message_id


def read_evidence(raw: Any, ability: str, quirks: Quirks) -> list[int]:
    """The message ids of `source_chat_ids` in any of its shapes (module docstring); slips counted in `quirks`."""
    if raw is None:
        if ability != "abstention":
            quirks.note("evidence_missing")
        return []
    groups: list[Any]
    if isinstance(raw, dict):
        halves = list(raw.values())
        if halves and any(_empty(h) for h in halves) and not all(_empty(h) for h in halves):
            quirks.note("evidence_half_empty")
        groups = halves
    elif isinstance(raw, list):
        groups = raw
    else:
        groups = [raw]
    flat: list[Any] = []
    nested = False
    for item in groups:
        if isinstance(item, list):
            nested = nested or not isinstance(raw, dict)
            flat += item
        else:
            flat.append(item)
    if nested:
        quirks.note("evidence_nested")
    ids: list[int] = []
    for item in flat:
        value = _id(item)
        if value is None:
            quirks.note("evidence_not_ids")
            continue
        ids.append(value)
    if not ids:
        quirks.note("evidence_empty")
    unique = list(dict.fromkeys(ids))
    quirks.note("evidence_duplicates", int(len(unique) != len(ids)))
    return unique


def _empty(value: Any) -> bool:
    return value is None or value == [] or value == ""


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return None


def parse_probing(data: Any, source: str, quirks: Quirks | None = None) -> list[BeamQuestion]:
    """The questions of a probing file, ability by ability in `ABILITIES` order (as the reference asks them), each
    ability's in file order. DefinitionError (one line) when the file is not shaped as BEAM's."""
    quirks = quirks if quirks is not None else Quirks()
    if not isinstance(data, dict):
        raise DefinitionError(f"{source}: is {type(data).__name__}, not an object of abilities; {NOT_BEAM}")
    unknown = [k for k in data if k not in ABILITIES]
    if unknown:
        raise DefinitionError(f"{source}: {unknown[0]!r} is not one of BEAM's ten abilities; {NOT_BEAM}")
    out: list[BeamQuestion] = []
    for ability in ABILITIES:
        items = data.get(ability, [])
        if not isinstance(items, list):
            raise DefinitionError(f"{source}: {ability}: must be a list of questions; {NOT_BEAM}")
        for k, item in enumerate(items):
            out.append(_question(item, ability, k, f"{source}: {ability}[{k}]", quirks))
    return out


def _question(item: Any, ability: str, k: int, where: str, quirks: Quirks) -> BeamQuestion:
    if not isinstance(item, dict):
        raise DefinitionError(f"{where}: must be an object, not {type(item).__name__}; {NOT_BEAM}")
    question = item.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DefinitionError(f"{where}.question: missing or not text; {NOT_BEAM}")
    rubric_raw = item.get("rubric", [])
    if isinstance(rubric_raw, str):
        rubric_raw = [rubric_raw]
    if not isinstance(rubric_raw, list):
        raise DefinitionError(f"{where}.rubric: must be a list of texts; {NOT_BEAM}")
    rubric = [str(r) for r in rubric_raw if _text(r) and str(r).strip()]
    if not rubric:
        quirks.note("rubric_empty")
    field = GOLD_FIELDS.get(ability, "answer")
    gold = _text(item.get(field)) if field else None
    evidence = read_evidence(item.get("source_chat_ids"), ability, quirks)
    if ability == "event_ordering" and evidence:
        raw = item.get("source_chat_ids")
        firsts = [f for f in (_first_id(e) for e in (raw if isinstance(raw, list) else [])) if f is not None]
        quirks.note("event_ids_unordered", int(firsts != sorted(firsts)))
        quirks.note("event_ids_vs_rubric", int(len(item["source_chat_ids"]) != len(rubric)
                                                if isinstance(item.get("source_chat_ids"), list) else 0))
    difficulty = item.get("difficulty")
    return BeamQuestion(ability=ability, index=k, question=question, rubric=rubric, gold=gold, evidence=evidence,
                        difficulty=difficulty if isinstance(difficulty, str) else "")


def _first_id(entry: Any) -> int | None:
    if isinstance(entry, list):
        return next((v for v in map(_id, entry) if v is not None), None)
    return _id(entry)


def drop_unknown(questions: Iterable[BeamQuestion], known: set[int] | range, quirks: Quirks) -> list[BeamQuestion]:
    """The questions with evidence ids that name no message of the chat as played left out (counted)."""
    out = []
    for q in questions:
        kept = [i for i in q.evidence if i in known]
        quirks.note("evidence_unknown", len(q.evidence) - len(kept))
        out.append(q if len(kept) == len(q.evidence) else q.model_copy(update={"evidence": kept}))
    return out


def ability_counts(questions: Iterable[BeamQuestion]) -> Counter[str]:
    return Counter(q.ability for q in questions)
