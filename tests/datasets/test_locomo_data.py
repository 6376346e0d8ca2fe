"""LoCoMo's reader on a small synthetic file in the published shape (tests/data/locomo/synthetic.json): samples,
sessions, dates, photos, questions of every category, each quirk mended or left out and counted; anything not
LoCoMo-shaped is one DefinitionError line naming the file and the first bad field."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import pytest

from ltm_harness._errors import DefinitionError
from ltm_harness._interop.locomo.data import (CATEGORY_NAMES, LocomoQuirks, LocomoTurn, parse_date, parse_locomo,
                                              render_turn)

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "locomo" / "synthetic.json"
RAW: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))


def parsed():
    return parse_locomo(copy.deepcopy(RAW), "synthetic.json")


def test_samples_sessions_and_turns_in_order():
    data = parsed()
    first, second = data.samples
    assert (first.sample_id, first.speaker_a, first.speaker_b) == ("synthetic-1", "Ada", "Bruno")
    assert [s.index for s in first.sessions] == [1, 2, 3]
    assert first.sessions[0].date_time == datetime(2023, 5, 8, 13, 56)
    assert first.sessions[1].date_time == datetime(2023, 6, 27, 10, 37)
    assert first.sessions[2].turns == [] and first.sessions[2].date_text == "4:10 pm on 26 October, 2023"
    assert [t.dia_id for t in first.turns()] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"]
    assert first.turn("D2:2").text.startswith("Tiring but great") and first.turn("D3:1") is None
    photo = first.turn("D1:2")
    assert photo.img_url == "https://example.invalid/sunset.jpg"  # the file's list of one URL
    assert photo.blip_caption == "a photo of a painting of a sunset over a lake"
    assert photo.query == "watercolor sunset lake"
    assert first.turn("D2:3").img_url is None and first.turn("D2:3").blip_caption is not None
    assert second.sessions[0].date_time is None and second.sessions[0].date_text == "sometime in spring 2023"
    assert second.sessions[1].date_text == "" and [t.dia_id for t in second.turns()] == ["D1:1", "D1:2", "D2:1"]


def test_questions_of_every_category_with_answers_as_text_and_evidence_mended():
    questions = {q.index: q for q in parsed().samples[0].questions}
    assert sorted(questions) == [0, 1, 2, 3, 4, 5, 6, 7, 8]  # qa[9] (category 4, no answer) is left out
    assert {q.category for q in questions.values()} == {1, 2, 3, 4, 5}
    assert questions[0].evidence == ["D1:1"] and questions[0].category_name == "single-hop"
    assert questions[1].evidence == ["D1:3"]  # "D:1:3"
    assert questions[2].evidence == ["D1:2", "D2:3"]  # "D1:2; D2:3"
    assert questions[3].evidence == [] and questions[3].answer.startswith("Likely yes;")
    assert questions[4].answer == "2" and questions[4].evidence == ["D2:2"]  # 2 -> "2"; "D" left out
    assert (questions[5].answer, questions[5].adversarial_answer) == (None, "Pepper")
    assert (questions[6].answer, questions[6].adversarial_answer) == ("No", "Yes")
    assert questions[7].evidence == ["D2:2", "D1:1"]  # "D2:02 D1:1": split, leading zero dropped
    assert questions[8].evidence == []  # "D9:9" names no turn


def test_quirks_are_counted_with_examples():
    quirks = parsed().quirks
    assert quirks.model_dump(exclude={"examples"}) == {
        "int_answers": 1, "evidence_fixed": 3, "evidence_dropped": 2, "questions_without_evidence": 2,
        "questions_without_answer": 1, "sessions_without_turns": 1, "sessions_without_date": 1, "dates_unread": 1,
        "captions_without_url": 1, "adversarial_without_answer": 2}
    examples = "\n".join(quirks.examples)
    for part in ("synthetic-1 qa[1]: evidence 'D:1:3' read as D1:3", "synthetic-1 qa[2]: evidence 'D1:2; D2:3' read "
                 "as D1:2, D2:3", "synthetic-1 qa[4]: evidence 'D' is not a turn id", "synthetic-1 qa[8]: evidence "
                 "'D9:9' names no turn", "synthetic-1 qa[4]: answer 2 written as a number", "synthetic-1 qa[9]: "
                 "category 4 with no answer, left out", "synthetic-1 session_3: a date (4:10 pm on 26 October, 2023) "
                 "and no turns", "synthetic-2 session_2: turns and no date", "synthetic-2 session_1: date 'sometime "
                 "in spring 2023' not understood"):
        assert part in examples
    assert quirks.summary().startswith("1 int answers, 3 evidence fixed, 2 evidence dropped")
    assert LocomoQuirks().summary() == "none"


def test_examples_are_kept_to_a_few_of_each_kind():
    raw = copy.deepcopy(RAW)
    raw[0]["qa"] = [{"question": f"q{i}", "answer": i, "evidence": ["D1:1"], "category": 4} for i in range(50)]
    quirks = parse_locomo(raw, "x.json").quirks
    assert quirks.int_answers == 50 and sum("written as a number" in e for e in quirks.examples) == 3


@pytest.mark.parametrize("text, expected", [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
    ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9)),
    ("12:30 pm on 1 January, 2024", datetime(2024, 1, 1, 12, 30)),
    ("9:05 AM on 3 Sept 2023", datetime(2023, 9, 3, 9, 5)),
    ("10:37 a.m. on 27 June, 2023", datetime(2023, 6, 27, 10, 37)),
    ("13:00 pm on 8 May, 2023", None), ("1:56 pm on 31 February, 2023", None), ("8 May 2023", None), ("", None),
    ("1:56 pm on 8 Maybe, 2023", None),
])
def test_session_dates_are_read_without_the_locale(text, expected):
    assert parse_date(text) == expected


def test_turns_are_rendered_as_the_agent_hears_them():
    data = parsed().samples[0]
    assert render_turn(data.turn("D1:1")) == "Ada: Hi Bruno! I finally adopted a cat last weekend. Her name is Pepper."
    assert render_turn(data.turn("D1:2")) == ("Bruno: Congrats! I started painting again, look at this. "
                                              "[shares a photo of a painting of a sunset over a lake]")
    assert render_turn(data.turn("D2:3")) == ("Bruno: Ha! I sold two paintings at the market. "
                                              "[shares a photo of a market stall with paintings]")
    assert "example.invalid" not in render_turn(data.turn("D1:2"))  # never the URL
    bare = LocomoTurn(dia_id="D1:1", speaker="Ada", text="  ", blip_caption="two cats on a sofa.")
    assert render_turn(bare) == "Ada: [shares a photo: two cats on a sofa]"


def test_category_names_follow_the_reference_evaluation_code():
    assert CATEGORY_NAMES == {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def _set(path: str, value: Any) -> Callable[[Any], Any]:
    """A change to the fixture: `path` like `0.conversation.session_1.1.text`; value DELETE removes the key."""
    def change(raw: Any) -> Any:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node = raw
        for p in parents:
            node = node[p]
        if value is DELETE:
            del node[last]
        else:
            node[last] = value
        return raw
    return change


DELETE = object()


@pytest.mark.parametrize("change, message", [
    (lambda raw: {"samples": raw}, "synthetic.json: the file holds an object, not a list of samples"),
    (lambda raw: [], "synthetic.json: the file holds no samples"),
    (lambda raw: ["conv-1"], "synthetic.json: [0]: a sample must be an object, not the text 'conv-1'"),
    (_set("1.sample_id", DELETE), "synthetic.json: [1]: 'sample_id' is missing"),
    (_set("1.sample_id", "synthetic-1"), "synthetic.json: [1].sample_id: 'synthetic-1' is given to two samples"),
    (_set("0.conversation", "text"), "synthetic.json: [0].conversation: must be an object, not the text 'text'"),
    (_set("0.qa", {}), "synthetic.json: [0].qa: must be a list, not an object"),
    (_set("0.conversation.speaker_b", DELETE), "synthetic.json: [0].conversation: 'speaker_b' is missing"),
    (_set("0.conversation.session_2.1.text", DELETE), "synthetic.json: [0].conversation.session_2[1]: 'text' is "
                                                       "missing"),
    (_set("0.conversation.session_2.1.text", 5), "synthetic.json: [0].conversation.session_2[1].text: input should "
                                                  "be a valid string (it is 5)"),
    (_set("0.conversation.session_2.1", "Ada: hi"), "[0].conversation.session_2[1]: must be an object, not the text"),
    (_set("0.conversation.session_1.1.img_url", 7), "[0].conversation.session_1[1].img_url: input should be a valid "
                                                     "string (it is 7)"),
    (_set("0.conversation.session_2", {"D2:1": "hi"}), "[0].conversation.session_2: must be a list of turns, not an "
                                                       "object"),
    (_set("0.conversation.session_2_date_time", 20230627), "[0].conversation.session_2_date_time: must be text, "
                                                           "not 20230627"),
    (lambda raw: [dict(raw[0], conversation={"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "x"})],
     "[0].conversation: has no session_N list of turns"),
    (_set("1.qa.0.category", 7), "synthetic.json: [1].qa[0].category: input should be less than or equal to 5 (it "
                                 "is 7)"),
    (_set("1.qa.0.category", "4"), "[1].qa[0].category: input should be a valid integer (it is the text '4')"),
    (_set("1.qa.0.question", DELETE), "synthetic.json: [1].qa[0]: 'question' is missing"),
    (_set("1.qa.0.evidence", "D1:1"), "[1].qa[0].evidence: input should be a valid list (it is the text 'D1:1')"),
    (_set("1.qa.0.evidence", ["D1:1", 3]), "[1].qa[0].evidence[1]: input should be a valid string (it is 3)"),
    (_set("1.qa.0.answer", ["Porto"]), "[1].qa[0].answer: input should be a valid string (it is a list)"),
])
def test_what_is_not_locomo_shaped_is_one_line_naming_the_field(change, message):
    with pytest.raises(DefinitionError) as err:
        parse_locomo(change(copy.deepcopy(RAW)), "synthetic.json")
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith("synthetic.json: ")
    assert text.endswith("this is not the LoCoMo file (data/locomo10.json of snap-research/locomo: a list of samples, "
                         "each with sample_id, conversation and qa)")
