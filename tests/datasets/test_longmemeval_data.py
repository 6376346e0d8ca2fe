"""LongMemEval's reader: questions built one at a time from files in the published schema (a tiny committed file,
and files written by benchmarks/longmemeval_data.py), `only` skipping the rest unbuilt, stratified selection, and
every file that is not LongMemEval-shaped refused in one line naming the file, the question and the field."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ltm_harness._errors import DefinitionError
from ltm_harness.testing import load_script
from ltm_harness._interop.longmemeval.data import (QUESTION_TYPES, LMEQuestion, iter_questions, parse_date,
                                                   question_index, select_questions)

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "data" / "longmemeval" / "tiny.json"
gen = load_script(ROOT / "benchmarks" / "longmemeval_data.py")


def raw_questions() -> list[dict[str, Any]]:
    return json.loads(TINY.read_text(encoding="utf-8"))


def write(tmp_path: Path, data: Any, name: str = "lme.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_the_committed_tiny_file_is_what_the_generator_writes():
    assert TINY.read_text(encoding="utf-8") == gen.tiny_json()
    assert TINY.stat().st_size < 16_000


def test_the_tiny_file_reads_into_typed_questions():
    questions = list(iter_questions(TINY))
    raw = raw_questions()
    assert [q.question_id for q in questions] == [r["question_id"] for r in raw]
    assert set(q.question_type for q in questions) == set(QUESTION_TYPES)
    assert {q.question_id for q in questions if q.is_abstention} == {r["question_id"] for r in raw
                                                                      if r["question_id"].endswith("_abs")}
    assert sum(q.is_abstention for q in questions) == 3
    counted = next(q for q, r in zip(questions, raw) if isinstance(r["answer"], int))
    assert counted.question_type == "multi-session" and counted.answer == str(next(
        r["answer"] for r in raw if isinstance(r["answer"], int)))
    for q, r in zip(questions, raw):
        assert q.question_date_text == r["question_date"] and q.question_date.tzinfo == timezone.utc
        assert [s.date for s in q.sessions] == sorted(s.date for s in q.sessions)  # the file's order is not sorted
        assert sorted(s.id for s in q.sessions) == sorted(r["haystack_session_ids"])
        for s in q.sessions:  # each session keeps its own date and turns through the sort
            k = r["haystack_session_ids"].index(s.id)
            assert s.date_text == r["haystack_dates"][k] and s.date == parse_date(s.date_text)
            assert [t.content for t in s.turns] == [t["content"] for t in r["haystack_sessions"][k]]
        assert [s.id for s in q.evidence_sessions] == [s.id for s in q.sessions if s.id in r["answer_session_ids"]]
        assert all(any(t.has_answer for t in s.turns) for s in q.evidence_sessions)
        assert not any(t.has_answer for s in q.sessions if s not in q.evidence_sessions for t in s.turns)
    assert any(r["haystack_session_ids"] != [s.id for s in q.sessions] for q, r in zip(questions, raw))


def test_the_sort_is_stable_and_dates_parse_strictly(tmp_path):
    raw = raw_questions()[0]
    raw["haystack_dates"] = ["2023/05/01 (Mon) 10:00"] * len(raw["haystack_dates"])
    q = next(iter_questions(write(tmp_path, [raw])))
    assert [s.id for s in q.sessions] == raw["haystack_session_ids"]
    assert parse_date("2023/05/30 (Tue) 23:40") == datetime(2023, 5, 30, 23, 40, tzinfo=timezone.utc)
    for bad in ("2023-05-30 23:40", "2023/05/30 23:40", "2023/02/30 (Thu) 10:00", "2023/05/30 (Tue) 25:00"):
        with pytest.raises(ValueError):
            parse_date(bad)


def test_only_builds_the_questions_asked_for_and_skips_the_rest_unbuilt(tmp_path):
    raw = raw_questions()
    wanted = {raw[1]["question_id"], raw[4]["question_id"]}
    assert [q.question_id for q in iter_questions(TINY, only=wanted)] == [raw[1]["question_id"], raw[4]["question_id"]]
    broken = [dict(raw[0], haystack_dates="not a list"), raw[1], {"question_id": ["unhashable"]}, 7]
    path = write(tmp_path, broken)
    assert [q.question_id for q in iter_questions(path, only={raw[1]["question_id"]})] == [raw[1]["question_id"]]
    with pytest.raises(DefinitionError, match=r"question 0 \('.*'\): haystack_dates: Input should be a valid list"):
        list(iter_questions(path))
    assert list(iter_questions(TINY, only=set())) == []


def _mutated(change) -> list[dict[str, Any]]:
    raw = raw_questions()
    change(raw)
    return raw


def _set(path: tuple[Any, ...], value: Any):
    def change(raw):
        node = raw
        for part in path[:-1]:
            node = node[part]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return change


@pytest.mark.parametrize("data, message", [
    ("", "lme.json: empty; give a LongMemEval file (a JSON list of questions"),
    ("   \n", "lme.json: empty"),
    ('{"question_id": "x"}', "lme.json: not a JSON list"),
    ("[]", "lme.json: holds no questions"),
    (TINY.read_text(encoding="utf-8")[:5000], "lme.json: the JSON ends early; the file is cut"),
    ('[{"question_id": x}]', "lme.json: not valid JSON (lexical error: invalid char in json text.)"),
    (f"[{json.dumps(raw_questions()[0])}] [2]", "lme.json: not valid JSON (parse error: trailing garbage)"),
    ("[" * 100_000 + "]" * 100_000, "lme.json: JSON nested more than 32 deep; give a LongMemEval file"),
    ([1], "lme.json: question 0: is int, not an object"),
    (_mutated(_set((2, "haystack_sessions", 1, 0, "role"), "system")),
     "question 2 ('e9cb0eb5_abs'): haystack_sessions[1][0].role: Input should be 'user' or 'assistant'"),
    (_mutated(_set((0, "question_type"), "open-domain")), "question 0 ('2dd272d1'): question_type: Input should be"),
    (_mutated(_set((1, "answer"), None)), "question 1 ('216fdaee'): answer: Input should be a valid string"),
    (_mutated(_set((1, "answer"), True)), "question 1 ('216fdaee'): answer: Input should be a valid string"),
    (_mutated(_set((3, "answer_session_ids"), KeyError)), "question 3 ('ba41eccc_abs'): answer_session_ids: Field required"),
    (_mutated(_set((0, "haystack_sessions", 0, 1, "content"), 5)),
     "question 0 ('2dd272d1'): haystack_sessions[0][1].content: Input should be a valid string"),
    (_mutated(lambda raw: raw[5]["haystack_dates"].pop()),
     "question 5 ('008f86be'): haystack_session_ids, haystack_dates and haystack_sessions differ in length (4, 3, 4)"),
    (_mutated(_set((6, "haystack_dates", 2), "May 3rd")),
     "question 6 ('1bed440e'): haystack_dates[2]: 'May 3rd' is not a date like '2023/05/30 (Tue) 23:40'"),
    (_mutated(_set((7, "question_date"), "2023/13/01 (Mon) 10:00")), "question 7 ('e02ea68e'): question_date: "),
    (_mutated(_set((0, "question_id"), "")), "question 0: question_id: String should have at least 1 character"),
])
def test_a_file_not_shaped_as_longmemeval_is_one_line(tmp_path, data, message):
    path = write(tmp_path, data)
    with pytest.raises(DefinitionError) as err:
        list(iter_questions(path))
    text = str(err.value)
    assert str(path) in text and message in text and "\n" not in text


def test_a_missing_file_or_a_folder_is_one_line(tmp_path):
    for path, message in ((tmp_path / "nope.json", "does not exist"), (tmp_path, "cannot be read (it is a folder")):
        with pytest.raises(DefinitionError, match="cannot be read|does not exist") as err:
            list(iter_questions(path))
        assert message in str(err.value) and "\n" not in str(err.value)


def test_extra_fields_in_the_file_are_ignored(tmp_path):
    raw = raw_questions()[:1]
    raw[0]["original_answer"] = "kept aside"
    raw[0]["haystack_sessions"][0][0]["extra"] = 1
    assert next(iter_questions(write(tmp_path, raw))).question_id == raw[0]["question_id"]


# -- stratified selection -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s_index(tmp_path_factory) -> tuple[Path, list[tuple[str, str, bool]]]:
    """An S-shaped file of 500 questions with tiny haystacks: the published type counts and 30 abstentions."""
    path = tmp_path_factory.mktemp("lme") / "s.json"
    gen.write_file(path, questions=500, sessions=2, session_tokens=30)
    return path, question_index(path)


def test_the_generator_writes_the_published_counts(s_index):
    _, index = s_index
    assert Counter(kind for _, kind, _ in index) == Counter(gen.QUESTION_COUNTS)
    assert sum(abstention for _, _, abstention in index) == 30
    assert len({qid for qid, _, _ in index}) == 500


def test_selection_is_stratified_deterministic_and_in_file_order(s_index):
    path, index = s_index
    order = {qid: k for k, (qid, _, _) in enumerate(index)}
    group = {qid: ("abstention" if abstention else kind) for qid, kind, abstention in index}
    picked = select_questions(path, 70, seed=1)
    assert picked == select_questions(path, 70, seed=1) and picked != select_questions(path, 70, seed=2)
    assert picked == sorted(picked, key=order.__getitem__) and len(set(picked)) == 70
    assert set(Counter(group[q] for q in picked).values()) == {10}  # seven groups, ten each
    uneven = Counter(group[q] for q in select_questions(path, 10, seed=3))
    assert len(uneven) == 7 and sorted(uneven.values()) == [1, 1, 1, 1, 2, 2, 2]
    big = Counter(group[q] for q in select_questions(path, 300, seed=0))  # preference and abstention give all
    assert big["single-session-preference"] == 30 and big["abstention"] == 30
    assert sum(big.values()) == 300 and max(big.values()) - min(v for k, v in big.items()
                                                                if k not in ("single-session-preference", "abstention")) <= 1
    assert select_questions(path, None, 0) == [qid for qid, _, _ in index] == select_questions(path, 900, 0)
    assert select_questions(path, 0, 0) == []


def test_selection_reads_a_bad_file_in_one_line(tmp_path):
    path = write(tmp_path, [{"question_id": "a", "question_type": "single-session-user"}, {"question_type": "x"}])
    with pytest.raises(DefinitionError, match=r"question 1: question_id: missing or not a text"):
        select_questions(path, 1, 0)


# -- the generator's questions agree with their evidence ------------------------------------------------------------


def test_generated_answers_agree_with_the_evidence(tmp_path):
    path = tmp_path / "small.json"
    gen.write_file(path, questions=60, sessions=6, session_tokens=60, seed=5)
    seen = Counter()
    for q in iter_questions(path):
        assert q.evidence_sessions and len(q.sessions) >= 6
        assert all(s.date < q.question_date for s in q.sessions)
        said = [t.content for s in q.evidence_sessions for t in s.turns if t.has_answer]
        assert len(said) == len(q.evidence_sessions)
        seen[(q.question_type, q.is_abstention)] += 1
        if q.is_abstention:
            continue
        if q.question_type == "temporal-reasoning":
            first, second = q.evidence_sessions
            days = (second.date.date() - first.date.date()).days
            if "last Thursday" in said[0]:
                days += (first.date.weekday() - 3) % 7 or 7
            assert q.answer == f"{days} days"
        elif q.question_type == "knowledge-update":
            assert q.answer in said[-1] and q.answer not in said[0]
        elif q.question_type == "multi-session":
            assert q.answer == str(len(q.evidence_sessions))
        elif q.question_type != "single-session-preference":
            assert q.answer in said[0]
    assert {kind for kind, _ in seen} == set(QUESTION_TYPES)


def test_relative_dates_are_counted_from_the_thursday_before(tmp_path):
    relative = [q for q in iter_questions(TINY) if q.question_type == "temporal-reasoning" and not q.is_abstention]
    assert relative
    for q in relative:
        first, second = q.evidence_sessions
        assert "last Thursday" in first.turns[0].content
        thursday = first.date.date() - timedelta(days=(first.date.weekday() - 3) % 7 or 7)
        assert thursday.weekday() == 3 and q.answer == f"{(second.date.date() - thursday).days} days"


def test_a_question_is_a_frozen_model():
    q = next(iter_questions(TINY))
    assert isinstance(q, LMEQuestion)
    with pytest.raises(Exception):
        q.answer = "changed"  # type: ignore[misc]
